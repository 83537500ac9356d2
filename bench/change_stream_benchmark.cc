// What recording changes costs on the write path: the same inserts and
// publishes with no change stream (the default) and with one.
//
//   feedcore_change_stream_benchmarks [--benchmark_filter=...]
//
// BM_Insert puts one entry into the timeline of a random one of 1 million
// users, on 1 and 2 threads (items_per_second is the total, wall time);
// BM_Publish publishes to an actor with 100 followers (one record
// for the activity, two for the actor's own and world feeds, and one per
// shard group of followers). With a stream, retention is bounded at 1
// million records, so the stream's memory stays flat over the run.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "feedcore/feedcore.h"

namespace feedcore::bench {
namespace {

constexpr size_t kUsers = 1'000'000;
constexpr size_t kOwnerDraws = 1 << 20;
constexpr Micros kStart = 1'700'000'000'000'000;

std::unique_ptr<InProcessFeedEngine> NewEngine(bool with_stream) {
  EngineOptions options;
  options.sweep_interval = 0;
  options.fanout_threads = 0;
  if (with_stream) {
    ChangeStreamOptions stream_options;
    stream_options.max_records = 1'000'000;
    options.change_stream = ChangeStream::Create(stream_options).value();
  }
  return FeedEngine::Create(options).value();
}

const std::vector<EntityId>& Owners() {
  static const std::vector<EntityId> owners = [] {
    std::mt19937_64 rng(42);
    std::vector<EntityId> drawn(kOwnerDraws);
    for (EntityId& id : drawn) id = 1 + rng() % kUsers;
    return drawn;
  }();
  return owners;
}

// One engine per configuration, shared by the threads of a run and kept
// for the repetitions (so later repetitions insert into fuller timelines,
// with and without a stream alike).
InProcessFeedEngine& SharedEngine(bool with_stream) {
  static InProcessFeedEngine* const engines[2] = {NewEngine(false).release(),
                                         NewEngine(true).release()};
  return *engines[with_stream ? 1 : 0];
}

void BM_Insert(benchmark::State& state) {
  const bool with_stream = state.range(0) != 0;
  InProcessFeedEngine& engine = SharedEngine(with_stream);
  const std::vector<EntityId>& owners = Owners();
  // Threads start at different places of the drawn owners, and their
  // activity ids never collide.
  size_t pos =
      (static_cast<size_t>(state.thread_index()) * 524'287) & (kOwnerDraws - 1);
  Micros ts = kStart;
  ActivityId id = static_cast<ActivityId>(state.thread_index()) << 40;
  for (auto _ : state) {
    const TimelineEntry entry{ts, ++id, 7};
    benchmark::DoNotOptimize(engine.Insert(owners[pos], entry));
    ++ts;
    pos = (pos + 1) & (kOwnerDraws - 1);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Insert)
    ->ArgName("stream")
    ->Arg(0)
    ->Arg(1)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

void BM_Publish(benchmark::State& state) {
  const bool with_stream = state.range(0) != 0;
  std::unique_ptr<InProcessFeedEngine> engine = NewEngine(with_stream);
  constexpr EntityId kActor = 1;
  for (EntityId follower = 2; follower < 102; ++follower) {
    engine->Follow(follower, kActor).IgnoreError();
  }
  Activity activity;
  activity.actor = kActor;
  activity.payload = std::string(64, 'p');
  ActivityId id = 0;
  for (auto _ : state) {
    activity.id = ++id;
    activity.ts = kStart + static_cast<Micros>(id);
    benchmark::DoNotOptimize(engine->Publish(activity));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Publish)->ArgName("stream")->Arg(0)->Arg(1);

}  // namespace
}  // namespace feedcore::bench

BENCHMARK_MAIN();
