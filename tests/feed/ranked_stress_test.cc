// Ranked walks racing counter increments: threads raise and lower the
// counters of a reader's activities (and move the clock) while other
// threads walk the reader's ranked timeline page by page. No walk may
// show an entry twice, every page is in (score, key) order, and each page
// starts below where the previous one ended. The ThreadSanitizer job runs
// it (label stress); FEEDCORE_STRESS_SCALE scales the iteration counts.

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/social.h"
#include "support/social_test_util.h"
#include "support/test_util.h"
#include "support/thread_failures.h"

namespace feedcore {
namespace {

constexpr Micros kStart = 1000 * kMicrosPerHour;
constexpr ActivityId kActivities = 300;

TEST_CASE("ranked walks never repeat an entry while counters change") {
  const uint64_t scale = testing::EnvU64("FEEDCORE_STRESS_SCALE", 1);
  auto clock = std::make_shared<ManualClock>(kStart);
  EngineOptions options;
  options.shards = 4;
  options.fanout_threads = 0;
  std::unique_ptr<InProcessFeedEngine> engine = testing::NewManualEngine(clock, options);
  REQUIRE(engine->Follow(1, 2).ok());
  for (ActivityId id = 1; id <= kActivities; ++id) {
    REQUIRE(engine
                ->Publish(testing::MakeActivity(
                    id, 2, kStart - static_cast<Micros>(id) * 60'000'000))
                .ok());
  }

  testing::Failures failures;
  std::atomic<bool> writing{true};
  std::atomic<uint64_t> increments{0};
  auto writer = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    while (writing.load(std::memory_order_relaxed)) {
      const ActivityId id = 1 + rng() % kActivities;
      const int64_t delta = static_cast<int64_t>(rng() % 201) - 100;
      if (delta == 0) continue;
      if (!engine->IncrementCounter(id, rng() % kActivityCounterCount, delta)
               .ok()) {
        failures.Add("IncrementCounter failed");
      }
      increments.fetch_add(1, std::memory_order_relaxed);
      if (rng() % 8 == 0) clock->Advance(1);
    }
  };
  std::atomic<uint64_t> left_out{0};
  auto reader = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (uint64_t walk = 0; walk < 60 * scale; ++walk) {
      RankedReadOptions read;
      read.window = kActivities;
      read.formula.gravity = 0.5;
      std::set<ActivityId> shown;
      std::tuple<double, Micros, ActivityId> floor{0, 0, 0};
      bool first = true;
      for (;;) {
        read.limit = 1 + rng() % 12;
        const absl::StatusOr<RankedPage> page = engine->ReadRanked(1, read);
        if (!page.ok()) {
          failures.Add("ReadRanked failed");
          return;
        }
        for (const RankedEntry& e : page->entries) {
          const std::tuple<double, Micros, ActivityId> place{
              e.score, e.entry.ts, e.entry.activity_id};
          if (!first && !(place < floor)) failures.Add("out of order");
          floor = place;
          first = false;
          if (!shown.insert(e.entry.activity_id).second) {
            failures.Add("an entry shown twice in one walk");
          }
        }
        if (page->next_cursor.empty()) break;
        read.cursor = page->next_cursor;
      }
      left_out.fetch_add(kActivities - shown.size(), std::memory_order_relaxed);
    }
  };
  std::vector<std::thread> writers;
  for (uint64_t t = 0; t < 2; ++t) writers.emplace_back(writer, 100 + t);
  std::vector<std::thread> readers;
  for (uint64_t t = 0; t < 2; ++t) readers.emplace_back(reader, 200 + t);
  for (std::thread& t : readers) t.join();
  writing.store(false);
  for (std::thread& t : writers) t.join();
  failures.Report();
  // The race happened: counters moved during walks, which then left
  // entries out.
  CHECK(increments.load() > 0);
  CHECK(left_out.load() > 0);
}

}  // namespace
}  // namespace feedcore
