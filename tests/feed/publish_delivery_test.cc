// Tests of how Publish delivers its fan-out: the on_delivery callback,
// asynchronous fan-out with WaitForFanout, fan-outs that run on the
// publisher, and a full fan-out queue that rejects or makes a publish wait.
#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::Async;
using testing::Contains;
using testing::IdsOf;
using testing::MakeActivity;
using testing::Own;
using testing::Social;
using testing::Timeline;
using testing::World;

using Fixture = testing::SocialFixture;

struct DeliveryLog {
  std::mutex mu;
  std::vector<std::pair<std::vector<EntityId>, TimelineEntry>> calls;

  std::function<void(absl::Span<const EntityId>, const TimelineEntry&)>
  Callback() {
    return [this](absl::Span<const EntityId> timelines,
                  const TimelineEntry& entry) {
      std::lock_guard<std::mutex> lock(mu);
      calls.emplace_back(
          std::vector<EntityId>(timelines.begin(), timelines.end()), entry);
    };
  }
  // (activity, timeline) -> how many times it was reported.
  std::map<std::pair<ActivityId, EntityId>, int> Counts() {
    std::lock_guard<std::mutex> lock(mu);
    std::map<std::pair<ActivityId, EntityId>, int> counts;
    for (const auto& [timelines, entry] : calls) {
      for (const EntityId t : timelines) ++counts[{entry.activity_id, t}];
    }
    return counts;
  }
  size_t CallsFor(ActivityId id) {
    std::lock_guard<std::mutex> lock(mu);
    size_t n = 0;
    for (const auto& call : calls) n += call.second.activity_id == id;
    return n;
  }
};

TEST_CASE("on_delivery reports each follower exactly once per publish") {
  auto log = std::make_shared<DeliveryLog>();
  EngineOptions o = Fixture::Defaults();
  o.on_delivery = log->Callback();
  SUBCASE("inline fan-out") { o.fanout_threads = 0; }
  SUBCASE("fan-out shared with workers") {
    o.fanout_threads = 2;
    o.parallel_fanout_min_followers = 1;
  }
  Fixture f(o);
  constexpr EntityId kActor = 100'000;
  constexpr EntityId kFollowers = 300;
  for (EntityId id = 1; id <= kFollowers; ++id) f.Fol(id, kActor);
  f.Fol(kFollowers + 1, 200'000);  // a non-follower of kActor

  for (ActivityId id = 1; id <= 5; ++id) {
    const PublishResult r = f.Pub(id, kActor, static_cast<Micros>(id));
    CHECK(r.fanned_out == kFollowers);
    // One call per shard group at most.
    CHECK(log->CallsFor(id) <= f.engine->options().shards);
  }
  // A re-publish and a publish without followers report nothing.
  f.Pub(1, kActor, 1);
  f.Pub(6, 300'000, 6);
  f.engine->WaitForFanout();

  const auto counts = log->Counts();
  CHECK(counts.size() == 5 * kFollowers);
  for (ActivityId id = 1; id <= 5; ++id) {
    for (EntityId t = 1; t <= kFollowers; ++t) {
      const auto it = counts.find({id, t});
      INFO("activity " << id << " follower " << t);
      REQUIRE(it != counts.end());
      CHECK(it->second == 1);
    }
  }
  std::lock_guard<std::mutex> lock(log->mu);
  for (const auto& [timelines, entry] : log->calls) {
    CHECK_FALSE(timelines.empty());
    CHECK(entry == TimelineEntry{static_cast<Micros>(entry.activity_id),
                                 entry.activity_id, kActor});
  }
}

TEST_CASE("on_delivery runs after the entry is readable in its timelines") {
  struct Shared {
    std::mutex mu;
    const InProcessFeedEngine* engine = nullptr;
    std::vector<std::string> failures;
    size_t checked = 0;
  };
  auto shared = std::make_shared<Shared>();
  EngineOptions o = Fixture::Defaults();
  o.fanout_threads = 2;
  o.parallel_fanout_min_followers = 4;
  o.on_delivery = [shared](absl::Span<const EntityId> timelines,
                           const TimelineEntry& entry) {
    const InProcessFeedEngine* engine;
    {
      std::lock_guard<std::mutex> lock(shared->mu);
      engine = shared->engine;
    }
    std::vector<std::string> failures;
    for (const EntityId t : timelines) {
      ReadOptions r;
      r.min_ts = entry.ts;
      r.max_ts = entry.ts;
      const absl::StatusOr<Page> page = engine->ReadTimeline(t, r);
      if (!page.ok() || !Contains(page->entries, entry.activity_id)) {
        failures.push_back("activity " + std::to_string(entry.activity_id) +
                           " not yet in timeline " + std::to_string(t));
      }
    }
    std::lock_guard<std::mutex> lock(shared->mu);
    shared->checked += timelines.size();
    for (std::string& s : failures) shared->failures.push_back(std::move(s));
  };
  Fixture f(o);
  {
    std::lock_guard<std::mutex> lock(shared->mu);
    shared->engine = f.engine.get();
  }
  for (EntityId id = 1; id <= 64; ++id) f.Fol(id, 1000);
  for (ActivityId id = 1; id <= 6; ++id) {
    f.Pub(MakeActivity(id, 1000, static_cast<Micros>(id)),
          id % 2 == 0 ? Async() : PublishOptions{});
  }
  f.engine->WaitForFanout();
  std::lock_guard<std::mutex> lock(shared->mu);
  CHECK(shared->checked == 6 * 64);
  for (const std::string& failure : shared->failures) FAIL_CHECK(failure);
}

TEST_CASE("asynchronous fan-out delivers everything by WaitForFanout") {
  EngineOptions o = Fixture::Defaults();
  o.fanout_threads = 2;
  o.parallel_fanout_min_followers = 8;
  o.fanout_queue_capacity = 2;  // publishers often wait for room
  Fixture f(o);
  constexpr EntityId kActor = 100'000;
  constexpr EntityId kFollowers = 200;
  for (EntityId id = 1; id <= kFollowers; ++id) f.Fol(id, kActor);
  size_t pending = 0;
  for (ActivityId id = 1; id <= 30; ++id) {
    const PublishResult r =
        f.Pub(MakeActivity(id, kActor, static_cast<Micros>(id)), Async());
    CHECK(r.created);
    CHECK(r.fanned_out == kFollowers);
    CHECK_FALSE(r.merged_at_read);
    pending += r.pending;
  }
  CHECK(pending > 0);
  // The own and world feeds have every activity when Publish returns.
  CHECK(Own(*f.engine, kActor).size() == 30);
  CHECK(World(*f.engine).size() == 30);
  f.engine->WaitForFanout();
  std::vector<ActivityId> want;
  for (ActivityId id = 30; id >= 1; --id) want.push_back(id);
  for (EntityId id = 1; id <= kFollowers; ++id) {
    INFO("follower " << id);
    CHECK(IdsOf(Timeline(*f.engine, id)) == want);
  }
  CHECK(f.engine->Stats().value().entries == 30 * (kFollowers + 2));
}

TEST_CASE("fan-outs that run on the publisher are complete when it returns") {
  EngineOptions o = Fixture::Defaults();
  PublishOptions options;
  SUBCASE("synchronous, shared with workers") {
    o.fanout_threads = 2;
    o.parallel_fanout_min_followers = 8;
  }
  SUBCASE("asynchronous with no worker threads") {
    o.fanout_threads = 0;
    o.parallel_fanout_min_followers = 8;
    options = Async();
  }
  SUBCASE("asynchronous below parallel_fanout_min_followers") {
    o.fanout_threads = 2;
    o.parallel_fanout_min_followers = 1000;
    options = Async();
  }
  Fixture f(o);
  for (EntityId id = 1; id <= 100; ++id) f.Fol(id, 100'000);
  for (ActivityId id = 1; id <= 10; ++id) {
    const PublishResult r =
        f.Pub(MakeActivity(id, 100'000, static_cast<Micros>(id)), options);
    CHECK_FALSE(r.pending);
    CHECK(r.fanned_out == 100);
    for (EntityId follower = 1; follower <= 100; follower += 9) {
      CHECK(Timeline(*f.engine, follower).front().activity_id == id);
    }
  }
}

// Holds the fan-out worker inside on_delivery for one activity until the
// test lets it go.
struct Gate {
  explicit Gate(ActivityId blocked) : blocked(blocked) {}
  const ActivityId blocked;
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false;
  bool released = false;

  void OnDelivery(const TimelineEntry& entry) {
    if (entry.activity_id != blocked) return;
    std::unique_lock<std::mutex> lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [this] { return released; });
  }
  // Bounded only as a guard against a hang; true once the worker is held.
  bool WaitEntered() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(60),
                       [this] { return entered; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
    cv.notify_all();
  }
};

// Lets the gate go when the test leaves early, before the engine (declared
// earlier) drains its queue on destruction.
struct ReleaseOnExit {
  std::shared_ptr<Gate> gate;
  ~ReleaseOnExit() { gate->Release(); }
};

TEST_CASE("a full fan-out queue rejects an asynchronous publish cleanly") {
  constexpr ActivityId kBlocked = 1, kQueued = 2, kRejected = 3;
  auto gate = std::make_shared<Gate>(kBlocked);
  EngineOptions o = Fixture::Defaults();
  o.shards = 4;
  o.fanout_threads = 1;
  o.fanout_queue_capacity = 1;
  o.parallel_fanout_min_followers = 2;
  o.on_delivery = [gate](absl::Span<const EntityId>,
                         const TimelineEntry& entry) {
    gate->OnDelivery(entry);
  };
  Fixture f(o);
  const ReleaseOnExit release{gate};
  constexpr EntityId kActor = 100;
  for (EntityId id = 1; id <= 10; ++id) f.Fol(id, kActor);
  f.Fol(50, 200);  // a small fan-out that runs inline

  // The only worker takes the first fan-out and is held in its callback;
  // the second fills the queue.
  const PublishResult blocked =
      f.Pub(MakeActivity(kBlocked, kActor, 10), Async(false));
  CHECK(blocked.pending);
  REQUIRE(gate->WaitEntered());
  const PublishResult queued =
      f.Pub(MakeActivity(kQueued, kActor, 20), Async(false));
  CHECK(queued.created);
  CHECK(queued.pending);

  const auto before = testing::Social(f.engine->Stats().value());
  const absl::StatusOr<PublishResult> rejected =
      f.engine->Publish(MakeActivity(kRejected, kActor, 30), Async(false));
  CHECK(absl::IsResourceExhausted(rejected.status()));
  CHECK_FALSE(rejected.status().message().empty());
  // Nothing changed: not stored, in no feed.
  CHECK(testing::Social(f.engine->Stats().value()) == before);
  CHECK_FALSE(Contains(Own(*f.engine, kActor), kRejected));
  CHECK_FALSE(Contains(World(*f.engine), kRejected));
  for (EntityId id = 1; id <= 10; ++id) {
    CHECK_FALSE(Contains(Timeline(*f.engine, id), kRejected));
  }
  // Fan-outs that do not need the queue still go through.
  CHECK(f.Pub(MakeActivity(4, 200, 40), Async(false)).created);
  CHECK(IdsOf(Timeline(*f.engine, 50)) == std::vector<ActivityId>{4});

  gate->Release();
  f.engine->WaitForFanout();
  for (EntityId id = 1; id <= 10; ++id) {
    INFO("follower " << id);
    CHECK(IdsOf(Timeline(*f.engine, id)) ==
          std::vector<ActivityId>{kQueued, kBlocked});
  }
  // The rejected id was never taken: publishing it now creates it.
  const PublishResult retried =
      f.Pub(MakeActivity(kRejected, kActor, 30), Async(false));
  CHECK(retried.created);
  f.engine->WaitForFanout();
  for (EntityId id = 1; id <= 10; ++id) {
    CHECK(IdsOf(Timeline(*f.engine, id)) ==
          std::vector<ActivityId>{kRejected, kQueued, kBlocked});
  }
  CHECK(f.engine->Stats().value().activities == 4);
}

TEST_CASE("a full queue makes a waiting asynchronous publish wait, not fail") {
  constexpr ActivityId kBlocked = 1;
  auto gate = std::make_shared<Gate>(kBlocked);
  EngineOptions o = Fixture::Defaults();
  o.shards = 4;
  o.fanout_threads = 1;
  o.fanout_queue_capacity = 1;
  o.parallel_fanout_min_followers = 2;
  o.on_delivery = [gate](absl::Span<const EntityId>,
                         const TimelineEntry& entry) {
    gate->OnDelivery(entry);
  };
  Fixture f(o);
  const ReleaseOnExit release{gate};
  for (EntityId id = 1; id <= 10; ++id) f.Fol(id, 100);
  f.Pub(MakeActivity(kBlocked, 100, 10), Async());
  REQUIRE(gate->WaitEntered());
  f.Pub(MakeActivity(2, 100, 20), Async());  // fills the queue
  // This publish must wait for room: run it on another thread, and let the
  // worker go only after it has started.
  std::latch started(1);
  absl::Status waited;
  std::thread publisher([&] {
    started.count_down();
    waited = f.engine->Publish(MakeActivity(3, 100, 30), Async()).status();
  });
  started.wait();
  gate->Release();
  publisher.join();
  CHECK_MESSAGE(waited.ok(), waited);
  f.engine->WaitForFanout();
  for (EntityId id = 1; id <= 10; ++id) {
    CHECK(IdsOf(Timeline(*f.engine, id)) == std::vector<ActivityId>{3, 2, 1});
  }
}

}  // namespace
}  // namespace feedcore
