// Ranked reads next to time-ordered reads of the same timelines, in the
// same run:
//
//   BM_TimelinePage           ReadTimeline, the first 50 entries of a
//                             reader's timeline (newest first)
//   BM_RankedPage/<window>    ReadRanked, the first 50 entries of the same
//                             timeline by RankFormula's default score over
//                             the newest <window> entries
//   BM_RankedNextPage/<window> the same walk's second page (the cursor's
//                             exclusion checks included)
//
// 2,000 readers each follow 10 of 200 actors; every actor published 150
// activities (1,500 entries per timeline before the cap of 1,000) spread
// over two days, and each activity has random counters. Readers are drawn
// from a fixed-seed generator before the timed loops. The target of the
// design: a ranked page of 50 with window 200 within 3x of a time-ordered
// page of 50.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/benchmark_main.h"
#include "feedcore/feedcore.h"

namespace feedcore::bench {
namespace {

constexpr Micros kStart = 1'700'000'000LL * kMicrosPerSecond;
constexpr EntityId kReaders = 2000;
constexpr EntityId kActors = 200;
constexpr EntityId kFollowsPerReader = 10;
constexpr int kPostsPerActor = 150;
constexpr size_t kPage = 50;
constexpr size_t kDraws = 4096;

struct World {
  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<InProcessFeedEngine> engine;
  std::vector<EntityId> draws;  // readers, in the order the loops read them
};

void Check(const absl::Status& status, const char* what) {
  if (!status.ok()) Die(absl::StrCat(what, ": ", status.ToString()));
}

const World& Shared() {
  static const World* const world = [] {
    auto* w = new World;
    w->clock = std::make_shared<ManualClock>(kStart);
    EngineOptions options;
    options.clock = w->clock;
    options.sweep_interval = 0;
    options.fanout_threads = 0;
    absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> engine =
        FeedEngine::Create(options);
    Check(engine.status(), "FeedEngine::Create");
    w->engine = *std::move(engine);
    std::mt19937_64 rng(20);
    const EntityId first_actor = kReaders + 1;
    for (EntityId reader = 1; reader <= kReaders; ++reader) {
      for (EntityId k = 0; k < kFollowsPerReader; ++k) {
        const EntityId actor = first_actor + rng() % kActors;
        Check(w->engine->Follow(reader, actor).status(), "Follow");
      }
    }
    const Micros span = 2 * kMicrosPerDay;
    ActivityId id = 1;
    for (int post = 0; post < kPostsPerActor; ++post) {
      for (EntityId a = 0; a < kActors; ++a, ++id) {
        Activity activity;
        activity.id = id;
        activity.actor = first_actor + a;
        activity.ts = kStart - span + static_cast<Micros>(rng() % span);
        activity.payload.assign(1, 'x');
        Check(w->engine->Publish(activity).status(), "Publish");
        for (size_t c = 0; c < kActivityCounterCount; ++c) {
          const int64_t n = static_cast<int64_t>(rng() % 50);
          if (n > 0)
            Check(w->engine->IncrementCounter(id, c, n).status(),
                  "IncrementCounter");
        }
      }
    }
    w->clock->Advance(kMicrosPerMinute);
    for (size_t i = 0; i < kDraws; ++i)
      w->draws.push_back(1 + rng() % kReaders);
    return w;
  }();
  return *world;
}

void BM_TimelinePage(benchmark::State& state) {
  const World& w = Shared();
  ReadOptions read;
  read.limit = kPage;
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<Page> page =
        w.engine->ReadTimeline(w.draws[i++ % kDraws], read);
    if (!page.ok() || page->entries.size() != kPage) Die("ReadTimeline");
    benchmark::DoNotOptimize(page);
  }
}

void BM_RankedPage(benchmark::State& state) {
  const World& w = Shared();
  RankedReadOptions read;
  read.limit = kPage;
  read.window = static_cast<size_t>(state.range(0));
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<RankedPage> page =
        w.engine->ReadRanked(w.draws[i++ % kDraws], read);
    if (!page.ok() || page->entries.size() != kPage) Die("ReadRanked");
    benchmark::DoNotOptimize(page);
  }
}

void BM_RankedNextPage(benchmark::State& state) {
  const World& w = Shared();
  RankedReadOptions read;
  read.limit = kPage;
  read.window = static_cast<size_t>(state.range(0));
  std::vector<std::string> cursors;
  for (size_t i = 0; i < kDraws; ++i) {
    absl::StatusOr<RankedPage> first = w.engine->ReadRanked(w.draws[i], read);
    if (!first.ok() || first->next_cursor.empty()) Die("first ranked page");
    cursors.push_back(first->next_cursor);
  }
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ % kDraws;
    read.cursor = cursors[k];
    absl::StatusOr<RankedPage> page = w.engine->ReadRanked(w.draws[k], read);
    if (!page.ok() || page->entries.size() != kPage) Die("ReadRanked next");
    benchmark::DoNotOptimize(page);
  }
}

BENCHMARK(BM_TimelinePage);
BENCHMARK(BM_RankedPage)->Arg(50)->Arg(200)->Arg(1000);
BENCHMARK(BM_RankedNextPage)->Arg(200);

}  // namespace
}  // namespace feedcore::bench

int main(int argc, char** argv) {
  if (!feedcore::bench::InitializeWithDefaults(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
