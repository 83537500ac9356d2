// Overload of the change stream: consumers far slower than the writers.
// Writers must never wait for a reader or a subscriber (retention drops
// what nobody read in time), and a consumer that retention has passed must
// learn it with OutOfRange instead of silently skipping records.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "feedcore/change_stream.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

constexpr size_t kRetained = 1000;
constexpr int kWriters = 4;
constexpr int kInsertsPerWriter = 20'000;

struct StreamedEngine {
  StreamedEngine() {
    ChangeStreamOptions o;
    o.max_records = kRetained;
    stream = ChangeStream::Create(o).value();
    EngineOptions e;
    e.shards = 16;
    e.change_stream = stream;
    engine = testing::NewManualEngine(std::make_shared<ManualClock>(1'000), e);
  }

  // kWriters threads insert kInsertsPerWriter entries each; true when every
  // insert succeeded.
  bool WriteConcurrently() {
    std::atomic<int> failures{0};
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        for (int i = 0; i < kInsertsPerWriter; ++i) {
          const TimelineEntry entry{i, static_cast<ActivityId>(w), 1};
          if (!engine->Insert(static_cast<EntityId>(w * 1000 + i % 100), entry)
                   .ok()) {
            failures.fetch_add(1);
          }
        }
      });
    }
    for (std::thread& t : writers) t.join();
    return failures.load() == 0;
  }

  std::shared_ptr<ChangeStream> stream;
  std::unique_ptr<InProcessFeedEngine> engine;
};

TEST_CASE("a reader that stops reading never blocks writers") {
  StreamedEngine f;
  absl::StatusOr<std::unique_ptr<ChangeReader>> reader =
      f.stream->NewReader(StreamPosition::TrimHorizon());
  REQUIRE(reader.ok());
  REQUIRE((*reader)->Read(10).ok());  // it read a little, then stalled
  const uint64_t stalled_at = (*reader)->position();

  REQUIRE(f.WriteConcurrently());
  const ChangeStreamStats stats = f.stream->Stats();
  CHECK(stats.records == kRetained);
  CHECK(stats.next_sequence == 1 + kWriters * kInsertsPerWriter);
  CHECK(stats.dropped == kWriters * kInsertsPerWriter - kRetained);

  // Retention passed the reader: OutOfRange naming the oldest retained
  // sequence, and the reader stays where it was.
  const absl::StatusOr<std::vector<ChangeRecordPtr>> late = (*reader)->Read(10);
  CHECK(absl::IsOutOfRange(late.status()));
  CHECK(std::string(late.status().message())
            .find(std::to_string(stats.oldest_sequence)) != std::string::npos);
  CHECK((*reader)->position() == stalled_at);
  // Still out of range on every later try: records are never skipped.
  CHECK(absl::IsOutOfRange((*reader)->Read(1).status()));
  // A consumer that resynchronizes starts again at the trim horizon.
  absl::StatusOr<std::unique_ptr<ChangeReader>> fresh =
      f.stream->NewReader(StreamPosition::TrimHorizon());
  REQUIRE(fresh.ok());
  const absl::StatusOr<std::vector<ChangeRecordPtr>> records =
      (*fresh)->Read(kRetained + 1);
  REQUIRE(records.ok());
  CHECK(records->size() == kRetained);
  CHECK(records->front()->sequence == stats.oldest_sequence);
}

TEST_CASE("a subscriber stuck in its callback never blocks writers") {
  StreamedEngine f;
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  std::atomic<int> batches{0};
  std::atomic<bool> failed{false};
  absl::Status error;
  absl::StatusOr<std::unique_ptr<Subscription>> subscription =
      f.stream->Subscribe(
          StreamPosition::TrimHorizon(), 100,
          [&](absl::Span<const ChangeRecordPtr>) {
            batches.fetch_add(1);
            std::unique_lock<std::mutex> lock(mu);
            cv.wait_for(lock, std::chrono::seconds(120),
                        [&] { return released; });
          },
          [&](const absl::Status& status) {
            std::lock_guard<std::mutex> lock(mu);
            error = status;
            failed.store(true);
          });
  REQUIRE(subscription.ok());
  // The first record puts the subscriber into its callback, where it stays
  // while the writers run.
  REQUIRE(f.engine->Insert(999'999, {0, 0, 1}).ok());
  for (int i = 0; i < 60'000 && batches.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(batches.load() == 1);

  // Every write completes while the callback is still held.
  REQUIRE(f.WriteConcurrently());
  CHECK(batches.load() == 1);
  CHECK(f.stream->Stats().records == kRetained);

  {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
    cv.notify_all();
  }
  for (int i = 0; i < 60'000 && !failed.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(failed.load());
  std::lock_guard<std::mutex> lock(mu);
  CHECK(absl::IsOutOfRange(error));
  // It stopped where retention overtook it, after the first batch.
  CHECK((*subscription)->position() == 2);
}

}  // namespace
}  // namespace feedcore
