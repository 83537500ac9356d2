// Benchmarks of notification feeds (results in docs/benchmark-results.md):
//
//   BM_Publish/notify:<n>/<mode>   Publish of an activity that notifies n
//                                  users (0, 1 or 10) and has no followers,
//                                  every recipient's feed already at its
//                                  100-entry cap, so every delivery also
//                                  trims. <mode>: `aggregated` or `flat`
//                                  (NotificationOptions::aggregated).
//   BM_Counts/<mode>               GetNotificationCounts of a user with a
//                                  full feed: O(1) whatever the feed holds.
//   BM_ReadNotifications/<mode>    The first page (25 groups) of that feed.
//   BM_MarkSeen/<mode>             MarkSeen of that feed: O(groups).
//
// Activities take a verb of 3 and an object of 20, so that an aggregated
// feed of 100 entries holds a few dozen groups. Engines run without a
// sweeper or fan-out thread and read a ManualClock; random choices come
// from fixed-seed generators drawn before the timed loops. By default each
// benchmark reports the aggregates of 5 repetitions.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/benchmark_main.h"
#include "feedcore/feedcore.h"

namespace feedcore::bench {
namespace {

constexpr Micros kStart = 1'000'000'000'000;
constexpr size_t kUsers = 1000;
constexpr size_t kFeedLength = 100;
constexpr EntityId kFirstActor = 1'000'000;

struct Fixture {
  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<InProcessFeedEngine> engine;
  std::mt19937_64 rng{42};
  ActivityId next_id = 1;

  explicit Fixture(bool aggregated)
      : clock(std::make_shared<ManualClock>(kStart)) {
    EngineOptions options;
    options.shards = 16;
    options.sweep_interval = 0;
    options.fanout_threads = 0;
    options.clock = clock;
    options.notifications.aggregated = aggregated;
    options.notifications.max_length = kFeedLength;
    engine = FeedEngine::Create(std::move(options)).value();
  }

  Activity Next() {
    Activity a;
    a.id = next_id++;
    a.actor = kFirstActor + rng() % 500;
    a.ts = clock->Now();
    a.verb = 1 + rng() % 3;
    a.object = 1 + rng() % 20;
    clock->Advance(1);
    return a;
  }

  void Publish(const Activity& activity, const PublishOptions& options) {
    if (!engine->Publish(activity, options).ok()) Die("publish failed");
  }

  // Fills every user's notification feed to its cap.
  void Fill() {
    PublishOptions to_one;
    to_one.notify.resize(1);
    for (size_t round = 0; round < kFeedLength; ++round) {
      for (EntityId user = 1; user <= kUsers; ++user) {
        to_one.notify[0] = user;
        Publish(Next(), to_one);
      }
    }
  }
};

const char* ModeName(bool aggregated) {
  return aggregated ? "aggregated" : "flat";
}

void BM_Publish(benchmark::State& state, size_t recipients, bool aggregated) {
  Fixture f(aggregated);
  f.Fill();
  // Recipients drawn before the loop, a different set for each publish.
  std::vector<PublishOptions> draws(4096);
  for (PublishOptions& o : draws) {
    for (size_t i = 0; i < recipients; ++i) {
      o.notify.push_back(1 + f.rng() % kUsers);
    }
  }
  size_t i = 0;
  for (auto _ : state) {
    f.Publish(f.Next(), draws[i++ % draws.size()]);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Counts(benchmark::State& state, bool aggregated) {
  Fixture f(aggregated);
  f.Fill();
  const NotificationCounts counts = f.engine->GetNotificationCounts(7).value();
  if (counts.groups == 0) Die("an empty notification feed");
  EntityId user = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.engine->GetNotificationCounts(user).value());
    user = user % kUsers + 1;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["groups"] = static_cast<double>(counts.groups);
}

void BM_ReadNotifications(benchmark::State& state, bool aggregated) {
  Fixture f(aggregated);
  f.Fill();
  GroupReadOptions read;
  read.limit = 25;
  EntityId user = 1;
  for (auto _ : state) {
    absl::StatusOr<GroupPage> page = f.engine->ReadNotifications(user, read);
    if (!page.ok() || page->groups.size() != 25) Die("a short page");
    benchmark::DoNotOptimize(page->groups.data());
    user = user % kUsers + 1;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_MarkSeen(benchmark::State& state, bool aggregated) {
  Fixture f(aggregated);
  f.Fill();
  EntityId user = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.engine->MarkSeen(user).value());
    user = user % kUsers + 1;
  }
  state.SetItemsProcessed(state.iterations());
}

void RegisterAll() {
  for (const bool aggregated : {true, false}) {
    const std::string mode = ModeName(aggregated);
    for (const size_t recipients : {0, 1, 10}) {
      benchmark::RegisterBenchmark(
          ("BM_Publish/notify:" + std::to_string(recipients) + "/" + mode)
              .c_str(),
          [recipients, aggregated](benchmark::State& state) {
            BM_Publish(state, recipients, aggregated);
          });
    }
    benchmark::RegisterBenchmark(("BM_Counts/" + mode).c_str(),
                                 [aggregated](benchmark::State& state) {
                                   BM_Counts(state, aggregated);
                                 });
    benchmark::RegisterBenchmark(("BM_ReadNotifications/" + mode).c_str(),
                                 [aggregated](benchmark::State& state) {
                                   BM_ReadNotifications(state, aggregated);
                                 });
    benchmark::RegisterBenchmark(("BM_MarkSeen/" + mode).c_str(),
                                 [aggregated](benchmark::State& state) {
                                   BM_MarkSeen(state, aggregated);
                                 });
  }
}

}  // namespace
}  // namespace feedcore::bench

int main(int argc, char** argv) {
  if (!feedcore::bench::InitializeWithDefaults(argc, argv)) return 1;
  feedcore::bench::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
