// Tests of Retract: once it returns the activity is in no timeline, own
// feed or world feed (hydrated or not), its copies' memory is back and
// Stats shows it; retracting twice, unknown ids, re-publishing a retracted
// id, the tombstone's lifetime, hybrid actors, followers that came and
// went, pending asynchronous fan-outs and open paging walks.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::Contains;
using testing::IdsOf;
using testing::Limit;
using testing::MakeActivity;
using testing::Own;
using testing::Social;
using testing::Timeline;
using testing::World;

using Fixture = testing::SocialFixture;
constexpr Micros kStart = Fixture::kStart;

ReadOptions Hydrated() {
  ReadOptions r;
  r.hydrate = true;
  return r;
}

// Checks that no feed of `readers`, `actor`'s own feed or the world feed
// returns `id`, read plain and hydrated, newest- and oldest-first, in pages
// of one.
void CheckGone(const InProcessFeedEngine& engine, ActivityId id,
               const std::vector<EntityId>& readers, EntityId actor) {
  for (const bool hydrate : {false, true}) {
    for (const ReadOrder order :
         {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
      for (const size_t limit : {size_t{1}, size_t{50}}) {
        ReadOptions r = Limit(limit);
        r.hydrate = hydrate;
        r.order = order;
        for (const EntityId reader : readers) {
          INFO("reader " << reader << " activity " << id);
          CHECK_FALSE(Contains(Timeline(engine, reader, r), id));
        }
        CHECK_FALSE(Contains(Own(engine, actor, r), id));
        CHECK_FALSE(Contains(World(engine, r), id));
      }
    }
  }
}

TEST_CASE("after Retract returns the activity is in no feed") {
  Fixture f;
  constexpr EntityId kActor = 100;
  const std::vector<EntityId> followers = {1, 2, 3, 4, 5, 6};
  for (const EntityId id : followers) f.Fol(id, kActor);
  f.Fol(1, 200);
  Activity big = MakeActivity(2, kActor, 20);
  big.payload = std::string(10'000, 'z');
  f.Pub(1, kActor, 10);
  f.Pub(big);
  f.Pub(3, kActor, 30);
  f.Pub(4, 200, 25);
  const EngineStats before = f.engine->Stats().value();
  REQUIRE(before.entries == 4 * 2 + 3 * 6 + 1);

  REQUIRE(f.engine->Retract(2).ok());
  CheckGone(*f.engine, 2, followers, kActor);
  for (const EntityId id : followers) {
    CHECK(IdsOf(Timeline(*f.engine, id)) ==
          (id == 1 ? std::vector<ActivityId>{3, 4, 1}
                   : std::vector<ActivityId>{3, 1}));
  }
  CHECK(IdsOf(Own(*f.engine, kActor)) == std::vector<ActivityId>{3, 1});
  CHECK(IdsOf(World(*f.engine)) == std::vector<ActivityId>{3, 4, 1});
  // The others keep their payloads.
  const std::vector<StoredEntry> hydrated = Own(*f.engine, kActor, Hydrated());
  CHECK(hydrated[0].payload == testing::PayloadOf(3));
  CHECK(hydrated[1].payload == testing::PayloadOf(1));
  // Nothing newer than the oldest counts the retracted one.
  CHECK(*f.engine->CountNewer(2, {10, 1}, 100) == 1);

  const EngineStats after = f.engine->Stats().value();
  CHECK(after.entries == before.entries - 6 - 2);
  CHECK(after.activities == before.activities);  // kept as a tombstone
  CHECK(after.retracted_activities == 1);
  CHECK(after.payload_bytes == before.payload_bytes - big.payload.size());
  CHECK(after.bytes_used + big.payload.size() <= before.bytes_used);
  CHECK(after.follow_edges == before.follow_edges);
}

TEST_CASE("retracting twice is a no-op; an unknown id is NotFound") {
  Fixture f;
  f.Fol(1, 100);
  f.Pub(1, 100, 10);
  f.Pub(2, 100, 20);
  // A host entry: its id was never published.
  REQUIRE(f.engine->Insert(1, {15, 77, 100}).ok());
  REQUIRE(f.engine->Retract(1).ok());
  const auto before = Social(f.engine->Stats().value());
  CHECK(f.engine->Retract(1).ok());
  CHECK(Social(f.engine->Stats().value()) == before);

  for (const ActivityId unknown :
       {ActivityId{3}, ActivityId{77}, ActivityId{0}, ~ActivityId{0}}) {
    const absl::Status s = f.engine->Retract(unknown);
    CHECK(absl::IsNotFound(s));
    CHECK_FALSE(s.message().empty());
  }
  CHECK(Social(f.engine->Stats().value()) == before);
  CHECK(IdsOf(Timeline(*f.engine, 1)) == std::vector<ActivityId>{2, 77});
}

TEST_CASE("a retracted id cannot be published again until it expired") {
  Fixture f;
  f.Fol(1, 100);
  const Activity a = MakeActivity(1, 100, 10, /*ttl=*/1000);
  f.Pub(a);
  REQUIRE(f.engine->Retract(1).ok());
  const auto before = Social(f.engine->Stats().value());

  Activity other = a;
  other.payload = "other";
  for (const Activity& again : {a, other}) {
    for (const bool async : {false, true}) {
      PublishOptions o;
      if (async) o.completion = FanoutCompletion::kAsynchronous;
      const absl::StatusOr<PublishResult> r = f.engine->Publish(again, o);
      CHECK(absl::IsFailedPrecondition(r.status()));
      CHECK_FALSE(r.status().message().empty());
    }
  }
  CHECK(Social(f.engine->Stats().value()) == before);
  CheckGone(*f.engine, 1, {1}, 100);

  // Once the activity would have expired and eviction dropped the
  // tombstone, the id is free again.
  f.clock->Advance(1000);
  f.engine->EvictExpired(1'000'000).value();
  const EngineStats evicted = f.engine->Stats().value();
  CHECK(evicted.activities == 0);
  CHECK(evicted.retracted_activities == 0);
  CHECK(evicted.activities_evicted == 1);
  CHECK(absl::IsNotFound(f.engine->Retract(1)));
  const PublishResult r = f.Pub(a);
  CHECK(r.created);
  CHECK(IdsOf(Timeline(*f.engine, 1)) == std::vector<ActivityId>{1});
}

TEST_CASE("retracting an expired activity that eviction has not reclaimed") {
  Fixture f;
  f.Fol(1, 100);
  f.Fol(2, 100);
  f.Pub(1, 100, 10, /*ttl=*/100);
  f.Pub(2, 100, 20);
  f.clock->Advance(100);
  const size_t entries = f.engine->Stats().value().entries;
  REQUIRE(entries == 2 * 4);
  REQUIRE(f.engine->Retract(1).ok());
  CHECK(f.engine->Stats().value().entries == 4);
  CHECK(f.engine->Stats().value().retracted_activities == 1);
  // Nothing of it is left for eviction but the tombstone.
  CHECK(f.engine->EvictExpired(1'000'000).value() == 0);
  CHECK(f.engine->Stats().value().activities == 1);
}

TEST_CASE("retract reaches followers that joined later and skips leavers") {
  Fixture f;
  constexpr EntityId kActor = 100;
  for (const EntityId id : {1, 2, 3}) f.Fol(id, kActor);
  f.Pub(1, kActor, 10);
  f.Pub(2, kActor, 20);
  CHECK(f.Unf(1, kActor).removed == 2);        // left
  CHECK(f.Fol(4, kActor).backfilled == 2);     // joined, back-filled
  CHECK(f.Fol(5, kActor, 0).backfilled == 0);  // joined, no back-fill
  CHECK(f.Fol(1, kActor, 0).created);          // came back, no back-fill
  f.Pub(3, kActor, 30);                        // reaches 1..5
  const size_t entries = f.engine->Stats().value().entries;

  REQUIRE(f.engine->Retract(1).ok());
  CheckGone(*f.engine, 1, {1, 2, 3, 4, 5}, kActor);
  // Copies at 2, 3 and 4, plus the own and world entries.
  CHECK(f.engine->Stats().value().entries == entries - 5);
  REQUIRE(f.engine->Retract(3).ok());
  CheckGone(*f.engine, 3, {1, 2, 3, 4, 5}, kActor);
  CHECK(f.engine->Stats().value().entries == entries - 5 - 7);
  for (const EntityId id : {2, 3, 4}) {
    CHECK(IdsOf(Timeline(*f.engine, id)) == std::vector<ActivityId>{2});
  }
  CHECK(Timeline(*f.engine, 1).empty());
  CHECK(Timeline(*f.engine, 5).empty());
}

TEST_CASE("retract of a hybrid actor's activities") {
  EngineOptions o = Fixture::Defaults();
  o.hybrid_fanout_threshold = 2;
  o.default_backfill = 100;
  Fixture f(o);
  constexpr EntityId kActor = 100;
  f.Fol(1, kActor);
  f.Fol(2, kActor);
  f.Pub(1, kActor, 10);  // copied to 1 and 2
  f.Fol(3, kActor);      // 3 followers > 2: merged at read from now on
  const PublishResult merged = f.Pub(2, kActor, 20);
  REQUIRE(merged.merged_at_read);
  f.Fol(4, kActor);
  const std::vector<EntityId> readers = {1, 2, 3, 4};
  for (const EntityId id : readers) {
    REQUIRE(IdsOf(Timeline(*f.engine, id)) == std::vector<ActivityId>{2, 1});
  }
  const size_t entries = f.engine->Stats().value().entries;
  REQUIRE(entries == 2 * 2 + 2);

  REQUIRE(f.engine->Retract(2).ok());
  CheckGone(*f.engine, 2, readers, kActor);
  CHECK(f.engine->Stats().value().entries == entries - 2);
  REQUIRE(f.engine->Retract(1).ok());
  CheckGone(*f.engine, 1, readers, kActor);
  CHECK(f.engine->Stats().value().entries == 0);
  CHECK(f.engine->Stats().value().retracted_activities == 2);
}

TEST_CASE("retract while an asynchronous fan-out of it may be running") {
  EngineOptions o = Fixture::Defaults();
  o.fanout_threads = 2;
  o.parallel_fanout_min_followers = 4;
  Fixture f(o);
  constexpr EntityId kActor = 100'000;
  std::vector<EntityId> followers;
  for (EntityId id = 1; id <= 400; ++id) {
    followers.push_back(id);
    f.Fol(id, kActor);
  }
  PublishOptions async;
  async.completion = FanoutCompletion::kAsynchronous;
  for (ActivityId id = 1; id <= 20; ++id) {
    f.Pub(MakeActivity(id, kActor, static_cast<Micros>(id)), async);
    if (id % 2 == 0) {
      REQUIRE(f.engine->Retract(id).ok());
      // Checked before WaitForFanout: Retract itself waited.
      for (const EntityId follower :
           {EntityId{1}, EntityId{200}, EntityId{400}}) {
        CHECK_FALSE(Contains(Timeline(*f.engine, follower), id));
      }
    }
  }
  f.engine->WaitForFanout();
  std::vector<ActivityId> want;
  for (int id = 19; id >= 1; id -= 2) {
    want.push_back(static_cast<ActivityId>(id));
  }
  for (const EntityId follower : followers) {
    INFO("follower " << follower);
    CHECK(IdsOf(Timeline(*f.engine, follower)) == want);
  }
  CHECK(f.engine->Stats().value().entries == want.size() * (400 + 2));
}

TEST_CASE("open paging walks continue past a retraction") {
  Fixture f;
  f.Fol(1, 100);
  for (ActivityId id = 1; id <= 10; ++id) {
    f.Pub(id, 100, static_cast<Micros>(id));
  }
  ReadOptions r = Limit(3);
  absl::StatusOr<Page> page = f.engine->ReadTimeline(1, r);
  REQUIRE(page.ok());
  CHECK(IdsOf(page->entries) == std::vector<ActivityId>{10, 9, 8});
  REQUIRE(f.engine->Retract(9).ok());  // already returned
  REQUIRE(f.engine->Retract(5).ok());  // not yet returned
  r.cursor = page->next_cursor;
  std::vector<ActivityId> rest;
  while (!r.cursor.empty()) {
    page = f.engine->ReadTimeline(1, r);
    REQUIRE_MESSAGE(page.ok(), page.status());
    for (const StoredEntry& e : page->entries) rest.push_back(e.activity_id);
    r.cursor = page->next_cursor;
  }
  CHECK(rest == std::vector<ActivityId>{7, 6, 4, 3, 2, 1});
}

// A manual clock that can hold one call of Now() on a chosen thread until
// released, to force an interleaving between two engine calls: the thread
// that sets `hold_next_now` stops in its next Now() call.
class HoldingClock final : public Clock {
 public:
  explicit HoldingClock(Micros now) : now_(now) {}
  static thread_local bool hold_next_now;

  Micros Now() const override {
    if (hold_next_now) {
      hold_next_now = false;
      std::unique_lock<std::mutex> lock(mu_);
      held_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
    }
    return now_.load();
  }
  // Bounded only as a guard against a hang; true once a call is held.
  bool WaitHeld() const {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(60),
                        [this] { return held_; });
  }
  void Release() const {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::atomic<Micros> now_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable bool held_ = false;
  mutable bool released_ = false;
};
thread_local bool HoldingClock::hold_next_now = false;

// A back-fill that started before its followee became hybrid copies an
// activity published after the transition; Retract then skips the purge of
// copies (the activity "was never copied") and the copy stays visible.
TEST_CASE("retract after a back-fill that overlapped the hybrid transition") {
  auto clock = std::make_shared<HoldingClock>(kStart);
  EngineOptions o = Fixture::Defaults();
  o.sweep_interval = 0;
  o.clock = clock;
  o.hybrid_fanout_threshold = 1;
  o.default_backfill = 100;
  o.fanout_threads = 0;
  absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> created =
      FeedEngine::Create(std::move(o));
  REQUIRE(created.ok());
  const std::unique_ptr<InProcessFeedEngine> engine = *std::move(created);
  constexpr EntityId kActor = 100, kReader = 1, kCrossing = 2;

  // The reader's Follow stops in its back-fill, before it reads the own
  // feed; the follow edge already exists and the actor is not hybrid.
  absl::StatusOr<FollowResult> reader_follow;
  std::thread follower([&] {
    HoldingClock::hold_next_now = true;
    reader_follow = engine->Follow(kReader, kActor);
  });
  struct JoinOnExit {
    const HoldingClock& clock;
    std::thread& thread;
    ~JoinOnExit() {
      clock.Release();
      if (thread.joinable()) thread.join();
    }
  } join{*clock, follower};
  REQUIRE(clock->WaitHeld());

  // A second follower takes the actor past the threshold; the next publish
  // is merged at read and not copied.
  REQUIRE(engine->Follow(kCrossing, kActor).ok());
  const absl::StatusOr<PublishResult> published =
      engine->Publish(MakeActivity(1, kActor, 10));
  REQUIRE(published.ok());
  REQUIRE(published->merged_at_read);

  clock->Release();
  follower.join();
  REQUIRE(reader_follow.ok());
  INFO("back-filled " << reader_follow->backfilled);

  REQUIRE(engine->Retract(1).ok());
  CHECK_FALSE(Contains(Timeline(*engine, kReader), 1));
  CHECK_FALSE(Contains(Timeline(*engine, kCrossing), 1));
  CHECK(engine->Stats().value().entries == 0);
}

// Holds fan-out deliveries of chosen activities inside on_delivery until
// released, one gate per activity.
class DeliveryGates {
 public:
  explicit DeliveryGates(std::vector<ActivityId> held) {
    for (const ActivityId id : held) gates_[id];
  }
  void OnDelivery(const TimelineEntry& entry) {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = gates_.find(entry.activity_id);
    if (it == gates_.end()) return;
    it->second.entered = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return it->second.released; });
  }
  // Bounded only as a guard against a hang; true once a delivery is held.
  bool WaitEntered(ActivityId id) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(60),
                        [&] { return gates_[id].entered; });
  }
  void Release(ActivityId id) {
    std::lock_guard<std::mutex> lock(mu_);
    gates_[id].released = true;
    cv_.notify_all();
  }
  void ReleaseAll() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, gate] : gates_) gate.released = true;
    cv_.notify_all();
  }

 private:
  struct Gate {
    bool entered = false;
    bool released = false;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<ActivityId, Gate> gates_;
};

// Spins (yielding) until `done` holds; bounded only as a guard.
template <typename Done>
bool Eventually(Done done) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Unfollow(r, a) takes r out of a's followers, then waits for a's earlier
// deliveries before removing r's copies. A Retract of a's activity that
// completes in that window must purge r's copy too, although r is no longer
// among a's followers.
TEST_CASE("retract while an unfollow of the actor waits for a delivery") {
  constexpr ActivityId kRetracted = 1, kFirstHeld = 10, kSecondHeld = 11;
  auto gates = std::make_shared<DeliveryGates>(
      std::vector<ActivityId>{kFirstHeld, kSecondHeld});
  EngineOptions o = Fixture::Defaults();
  o.shards = 4;
  o.fanout_threads = 1;
  o.parallel_fanout_min_followers = 1;
  o.on_delivery = [gates](absl::Span<const EntityId>,
                          const TimelineEntry& entry) {
    gates->OnDelivery(entry);
  };
  Fixture f(o);
  constexpr EntityId kActor = 100, kLeaving = 1, kStaying = 2;
  f.Fol(kLeaving, kActor);
  f.Fol(kStaying, kActor);
  f.Pub(kRetracted, kActor, 10);  // copied to both followers
  PublishOptions async;
  async.completion = FanoutCompletion::kAsynchronous;

  std::thread retractor, unfollower;
  std::atomic<bool> retract_returned{false};
  absl::Status retract_status;
  struct Cleanup {
    DeliveryGates& gates;
    std::thread& a;
    std::thread& b;
    ~Cleanup() {
      gates.ReleaseAll();
      if (a.joinable()) a.join();
      if (b.joinable()) b.join();
    }
  } cleanup{*gates, retractor, unfollower};

  // The only worker is held delivering the first activity.
  f.Pub(MakeActivity(kFirstHeld, kActor, 20), async);
  REQUIRE(gates->WaitEntered(kFirstHeld));
  // Retract starts: it marks the activity retracted (visible in Stats) and
  // waits for that delivery.
  retractor = std::thread([&] {
    retract_status = f.engine->Retract(kRetracted);
    retract_returned = true;
  });
  REQUIRE(Eventually(
      [&] { return f.engine->Stats().value().retracted_activities == 1; }));
  // A second delivery begins (queued behind the first).
  f.Pub(MakeActivity(kSecondHeld, kActor, 30), async);
  // Unfollow starts: the follower leaves the follower set, then the call
  // waits for both deliveries.
  unfollower = std::thread([&] {
    const absl::StatusOr<UnfollowResult> r =
        f.engine->Unfollow(kLeaving, kActor);
    (void)r;
  });
  REQUIRE(
      Eventually([&] { return f.engine->FollowerCount(kActor).value() == 1; }));
  // The first delivery ends: Retract completes; Unfollow still waits for
  // the second one.
  gates->Release(kFirstHeld);
  REQUIRE(Eventually([&] { return retract_returned.load(); }));
  retractor.join();
  REQUIRE(retract_status.ok());

  CHECK_FALSE(Contains(Timeline(*f.engine, kStaying), kRetracted));
  CHECK_FALSE(Contains(Timeline(*f.engine, kLeaving), kRetracted));

  gates->ReleaseAll();
  unfollower.join();
  f.engine->WaitForFanout();
  CHECK(Timeline(*f.engine, kLeaving).empty());
  CHECK(IdsOf(Timeline(*f.engine, kStaying)) ==
        std::vector<ActivityId>{kSecondHeld, kFirstHeld});
}

}  // namespace
}  // namespace feedcore
