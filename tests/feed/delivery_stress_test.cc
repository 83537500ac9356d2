// Concurrency test of FeedDeliveries: publishers (synchronous and
// asynchronous fan-out, on the pool's workers too) deliver while other
// threads watch and unwatch feeds and make and end subscriptions, with
// hybrid fan-out off and on, the callbacks running on the engine's
// delivery thread.
//
// Checked: a subscription with room for everything is told of each
// publish into each timeline it watches for the whole run exactly once
// (copied or merged at read); one whose queue is small and whose callback
// is slow accounts for every delivery, told or counted missed; no
// callback of a subscription runs after its Unsubscribe returned.
//
// Iteration counts are fixed (scaled by FEEDCORE_STRESS_SCALE, default 1)
// and every thread has a fixed seed; nothing waits on time.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/social_test_util.h"
#include "support/test_util.h"
#include "support/thread_failures.h"

namespace feedcore {
namespace {

constexpr EntityId kActors = 4;         // entities 1..4 publish
constexpr EntityId kFirstReader = 100;  // readers 100..131 follow them all
constexpr EntityId kReaders = 32;
constexpr EntityId kWatchedReaders = 8;  // watched by `all` for the whole run
constexpr int kPublishers = 2;

uint64_t Scale() { return testing::EnvU64("FEEDCORE_STRESS_SCALE", 1); }

using Told = std::pair<EntityId, ActivityId>;

// Counts what a subscription's callback is told, on the delivery thread.
struct Tally {
  std::mutex mu;
  std::multiset<Told> told;
  std::atomic<uint64_t> calls{0};
};

void RunStress(size_t hybrid_threshold) {
  EngineOptions o;
  o.shards = 8;
  o.sweep_interval = 0;
  o.fanout_threads = 2;
  o.parallel_fanout_min_followers = 4;  // the workers deliver too
  o.hybrid_fanout_threshold = hybrid_threshold;
  std::unique_ptr<InProcessFeedEngine> engine = *FeedEngine::Create(o);
  for (EntityId r = kFirstReader; r < kFirstReader + kReaders; ++r) {
    for (EntityId a = 1; a <= kActors; ++a) REQUIRE(engine->Follow(r, a).ok());
  }
  testing::Failures failures;

  auto all = std::make_shared<Tally>();
  SubscriptionOptions everything;
  everything.queue_capacity = kMaxDeliveryQueueCapacity;
  everything.callback = [all](const Delivery& d) {
    {
      std::lock_guard<std::mutex> lock(all->mu);
      all->told.insert({d.where.owner, d.entry.activity_id});
    }
    if (d.where.owner < kFirstReader + kWatchedReaders) {
      all->calls.fetch_add(1, std::memory_order_release);
      all->calls.notify_all();
    }
  };
  const SubscriptionId all_id = *engine->Subscribe(std::move(everything));
  auto slow = std::make_shared<Tally>();
  SubscriptionOptions small;
  small.queue_capacity = 4;
  small.callback = [slow](const Delivery&) {
    volatile uint64_t spin = 0;
    for (int i = 0; i < 2000; ++i) spin = spin + 1;
    slow->calls.fetch_add(1, std::memory_order_relaxed);
  };
  const SubscriptionId slow_id = *engine->Subscribe(std::move(small));
  for (EntityId r = kFirstReader; r < kFirstReader + kWatchedReaders; ++r) {
    REQUIRE(*engine->Watch(all_id, {DeliveryFeed::kTimeline, r}));
    REQUIRE(*engine->Watch(slow_id, {DeliveryFeed::kTimeline, r}));
  }

  const uint64_t per_publisher = 1000 * Scale();
  std::atomic<bool> publishing{true};
  std::vector<std::thread> threads;
  for (int p = 0; p < kPublishers; ++p) {
    threads.emplace_back([&, p] {
      std::mt19937_64 rng(p);
      for (uint64_t i = 0; i < per_publisher; ++i) {
        const ActivityId id = (static_cast<uint64_t>(p + 1) << 32) | i;
        Activity a = testing::MakeActivity(id, 1 + rng() % kActors,
                                           static_cast<Micros>(rng() % 10'000));
        PublishOptions options;
        if (rng() % 2 == 0)
          options.completion = FanoutCompletion::kAsynchronous;
        options.wait_when_queue_full = true;
        failures.Check(engine->Publish(a, options).status(), "Publish");
      }
    });
  }
  // Watches and unwatches the other readers' timelines on `all`: those
  // deliveries are not counted.
  threads.emplace_back([&] {
    std::mt19937_64 rng(7);
    while (publishing.load(std::memory_order_relaxed)) {
      const WatchedFeed feed{DeliveryFeed::kTimeline,
                             kFirstReader + kWatchedReaders +
                                 rng() % (kReaders - kWatchedReaders)};
      const absl::StatusOr<bool> changed = rng() % 2 == 0
                                               ? engine->Watch(all_id, feed)
                                               : engine->Unwatch(all_id, feed);
      failures.Check(changed.status(), "Watch/Unwatch");
    }
  });
  // Makes and ends subscriptions whose callbacks must never run late.
  threads.emplace_back([&] {
    std::mt19937_64 rng(8);
    while (publishing.load(std::memory_order_relaxed)) {
      auto ended = std::make_shared<std::atomic<bool>>(false);
      SubscriptionOptions brief;
      brief.queue_capacity = 1 + rng() % 8;
      brief.callback = [ended, &failures](const Delivery&) {
        if (ended->load(std::memory_order_acquire)) {
          failures.Add("a callback ran after its Unsubscribe returned");
        }
      };
      const absl::StatusOr<SubscriptionId> id =
          engine->Subscribe(std::move(brief));
      failures.Check(id.status(), "Subscribe");
      if (!id.ok()) return;
      for (int w = 0; w < 3; ++w) {
        const EntityId reader = kFirstReader + rng() % kReaders;
        failures.Check(
            engine->Watch(*id, {DeliveryFeed::kTimeline, reader}).status(),
            "Watch");
      }
      std::this_thread::yield();
      failures.Check(engine->Unsubscribe(*id), "Unsubscribe");
      ended->store(true, std::memory_order_release);
    }
  });
  for (int p = 0; p < kPublishers; ++p) threads[p].join();
  publishing.store(false);
  for (size_t t = kPublishers; t < threads.size(); ++t) threads[t].join();
  engine->WaitForFanout();
  failures.Report();

  // Every publish reached every watched reader (it follows every actor).
  const uint64_t expected = kPublishers * per_publisher * kWatchedReaders;
  for (uint64_t now = all->calls.load(std::memory_order_acquire);
       now < expected; now = all->calls.load(std::memory_order_acquire)) {
    all->calls.wait(now);
  }
  // The slow one's deliveries were told or counted missed, all of them.
  SubscriptionStats slow_stats = *engine->GetSubscriptionStats(slow_id);
  while (slow_stats.delivered + slow_stats.missed < expected) {
    std::this_thread::yield();
    slow_stats = *engine->GetSubscriptionStats(slow_id);
  }
  REQUIRE(engine->Unsubscribe(slow_id).ok());
  REQUIRE(engine->Unsubscribe(all_id).ok());
  CHECK(slow_stats.delivered + slow_stats.missed == expected);
  CHECK(slow->calls.load() == slow_stats.delivered);
  CHECK(slow_stats.missed > 0);  // its queue did fill

  std::lock_guard<std::mutex> lock(all->mu);
  std::map<EntityId, std::set<ActivityId>> per_reader;
  size_t counted = 0;
  for (const auto& [owner, id] : all->told) {
    if (owner >= kFirstReader + kWatchedReaders) continue;
    CHECK(all->told.count({owner, id}) == 1);
    per_reader[owner].insert(id);
    ++counted;
  }
  CHECK(counted == expected);
  CHECK(per_reader.size() == kWatchedReaders);
  for (const auto& [owner, ids] : per_reader) {
    CHECK(ids.size() == kPublishers * per_publisher);
  }
}

TEST_CASE("deliveries under concurrent publishes, watches and subscriptions") {
  SUBCASE("copied") { RunStress(0); }
  SUBCASE("merged at read") { RunStress(8); }
}

}  // namespace
}  // namespace feedcore
