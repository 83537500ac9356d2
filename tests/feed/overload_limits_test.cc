// Requests far beyond the read limits: a k, limit or batch in the millions
// must be refused at once with InvalidArgument naming the argument, before
// any work or allocation in proportion to it, while the largest allowed
// value still works on a board of a million members.
#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/options.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

constexpr size_t kMillions = 5'000'000;
constexpr MemberId kMembers = 1'000'000;

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

  const auto start = std::chrono::steady_clock::now();
  CheckRefused(board->TopK(kMillions).status(), "k");
  LeaderboardReadOptions read;
  read.limit = kMillions;
  CheckRefused(board->ReadPage(read).status(), "limit");
  CheckRefused(board->Around(1, kMillions, 0).status(), "before");
  CheckRefused(board->Around(1, 0, kMillions).status(), "after");
  // Refused before any work: far less time than reading a million entries.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));

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
  ReadOptions read;
  read.limit = kMillions;
  CheckRefused(engine->ReadTimeline(1, read).status(), "limit");
  CheckRefused(engine->ReadOwn(1, read).status(), "limit");
  CheckRefused(engine->ReadWorld(read).status(), "limit");
  ListOptions list;
  list.limit = kMillions;
  CheckRefused(engine->Followers(1, list).status(), "limit");
  CheckRefused(engine->Following(1, list).status(), "limit");
  CheckRefused(engine->CountNewer(1, 0, 0, kMillions).status(), "max_count");

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
