// Requests far beyond the read limits: a k, limit or batch in the millions
// must be refused at once with InvalidArgument naming the argument, before
// any work or allocation in proportion to it, while the largest allowed
// value still works on a board of a million members.
#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/options.h"
#include "support/test_util.h"

// Bytes allocated by this thread. Sanitizer runtimes define operator new
// themselves, so there their allocation hook counts instead.
thread_local size_t allocated_bytes = 0;

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FEEDCORE_TEST_SANITIZER_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FEEDCORE_TEST_SANITIZER_ALLOCATOR 1
#endif

#ifdef FEEDCORE_TEST_SANITIZER_ALLOCATOR
#include <sanitizer/allocator_interface.h>

namespace {
void CountMalloc(const volatile void*, size_t size) { allocated_bytes += size; }
void IgnoreFree(const volatile void*) {}
[[maybe_unused]] const int hooks_installed =
    __sanitizer_install_malloc_and_free_hooks(CountMalloc, IgnoreFree);
}  // namespace
#else
void* operator new(size_t size) {
  allocated_bytes += size;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
#endif

namespace feedcore {
namespace {

constexpr size_t kMillions = 5'000'000;
constexpr MemberId kMembers = 1'000'000;

// A refusal may allocate its error message, nothing in proportion to the
// millions asked for (a vector of that many entries would be megabytes).
constexpr size_t kRefusalBytes = 64 * 1024;

// Bytes this thread allocated while running `f`.
template <typename F>
size_t BytesAllocatedBy(F f) {
  const size_t before = allocated_bytes;
  f();
  return allocated_bytes - before;
}

// InvalidArgument whose message mentions `word`.
void CheckRefused(const absl::Status& status, const std::string& word) {
  INFO(status);
  CHECK(absl::IsInvalidArgument(status));
  CHECK(std::string(status.message()).find(word) != std::string::npos);
}

std::unique_ptr<Leaderboard> MillionMemberBoard() {
  std::unique_ptr<Leaderboard> board =
      Leaderboard::Create(
          {.partitions = 16, .max_page_size = kMaxLeaderboardPageSizeLimit})
          .value();
  for (MemberId m = 0; m < kMembers; ++m) {
    REQUIRE(board->Set(m, static_cast<int64_t>(m * 7919 % 100'003)).ok());
  }
  return board;
}

TEST_CASE("leaderboard: k and limits in the millions are refused") {
  const std::unique_ptr<Leaderboard> board = MillionMemberBoard();
  REQUIRE(board->Size().value() == kMembers);

  // Refused before any work: no allocation for the entries asked for.
  const size_t refusal_bytes = BytesAllocatedBy([&] {
    CheckRefused(board->TopK(kMillions).status(), "k");
    LeaderboardReadOptions read;
    read.limit = kMillions;
    CheckRefused(board->ReadPage(read).status(), "limit");
    CheckRefused(board->Around(1, kMillions, 0).status(), "before");
    CheckRefused(board->Around(1, 0, kMillions).status(), "after");
  });
  CHECK(refusal_bytes < kRefusalBytes);
  // The counter works: the largest page allowed does allocate its entries.
  CHECK(BytesAllocatedBy([&] {
          REQUIRE(board->TopK(kMaxLeaderboardPageSizeLimit).ok());
        }) >= kMaxLeaderboardPageSizeLimit * sizeof(LeaderboardEntry));

  // The largest k allowed works and is exact at the top.
  const absl::StatusOr<std::vector<LeaderboardEntry>> top =
      board->TopK(kMaxLeaderboardPageSizeLimit);
  REQUIRE(top.ok());
  REQUIRE(top->size() == kMaxLeaderboardPageSizeLimit);
  for (size_t i = 0; i < top->size(); ++i) {
    REQUIRE((*top)[i].rank == i);
    if (i > 0) REQUIRE((*top)[i - 1].score >= (*top)[i].score);
  }
  CHECK(board->Rank(top->back().member).value() ==
        kMaxLeaderboardPageSizeLimit - 1);

  // A board cannot be configured past the hard limit either.
  CheckRefused(Leaderboard::Create({.max_page_size = kMillions}).status(),
               "max_page_size");
}

TEST_CASE("engine: read limits in the millions are refused") {
  auto engine = testing::NewManualEngine(std::make_shared<ManualClock>(1'000));
  REQUIRE(engine->Insert(1, {10, 1, 2}).ok());
  const size_t refusal_bytes = BytesAllocatedBy([&] {
    ReadOptions read;
    read.limit = kMillions;
    CheckRefused(engine->ReadTimeline(1, read).status(), "limit");
    CheckRefused(engine->ReadOwn(1, read).status(), "limit");
    CheckRefused(engine->ReadWorld(read).status(), "limit");
    ListOptions list;
    list.limit = kMillions;
    CheckRefused(engine->Followers(1, list).status(), "limit");
    CheckRefused(engine->Following(1, list).status(), "limit");
    CheckRefused(engine->CountNewer(1, {0, 0}, kMillions).status(),
                 "max_count");
  });
  CHECK(refusal_bytes < kRefusalBytes);

  EngineOptions options;
  options.max_page_size = kMillions;
  CheckRefused(FeedEngine::Create(options).status(), "max_page_size");
}

TEST_CASE("change stream: batches in the millions are refused") {
  std::shared_ptr<ChangeStream> stream = ChangeStream::Create({}).value();
  absl::StatusOr<std::unique_ptr<ChangeReader>> reader =
      stream->NewReader(StreamPosition::TrimHorizon());
  REQUIRE(reader.ok());
  CHECK(absl::IsInvalidArgument((*reader)->Read(kMillions).status()));
  CHECK(absl::IsInvalidArgument(
      (*reader)->ReadWait(kMillions, std::chrono::microseconds(0)).status()));
  CHECK(absl::IsInvalidArgument(
      stream
          ->Subscribe(
              StreamPosition::TrimHorizon(), kMillions,
              [](absl::Span<const ChangeRecordPtr>) {}, nullptr)
          .status()));
  // The reader was not moved by the refused reads.
  CHECK((*reader)->position() == 1);
}

}  // namespace
}  // namespace feedcore
