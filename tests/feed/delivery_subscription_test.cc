// FeedDeliveries: subscriptions told of the entries that land in the
// timelines and notification feeds they watch (copied, merged at read, or
// for a dormant reader), bounded queues that drop and count instead of
// waiting, unsubscribing (from the callback too), the delivery thread, and
// every error path.
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/feed_engine.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using Fixture = testing::SocialFixture;

EngineOptions HostDispatched() {
  EngineOptions o = Fixture::Defaults();
  o.background_deliveries = false;
  return o;
}

// A subscription whose callback records what it is told.
struct Recorder {
  std::shared_ptr<std::vector<Delivery>> told =
      std::make_shared<std::vector<Delivery>>();
  SubscriptionId id = 0;

  Recorder(InProcessFeedEngine& engine, size_t capacity = 1024) {
    SubscriptionOptions o;
    o.queue_capacity = capacity;
    o.callback = [told = told](const Delivery& d) { told->push_back(d); };
    absl::StatusOr<SubscriptionId> made = engine.Subscribe(std::move(o));
    REQUIRE_MESSAGE(made.ok(), made.status());
    id = *made;
  }
};

void Watch(InProcessFeedEngine& engine, SubscriptionId id, DeliveryFeed feed,
           EntityId owner) {
  absl::StatusOr<bool> watched = engine.Watch(id, {feed, owner});
  REQUIRE_MESSAGE(watched.ok(), watched.status());
  CHECK(*watched);
}

size_t Dispatch(InProcessFeedEngine& engine) {
  absl::StatusOr<size_t> ran = engine.DispatchDeliveries();
  REQUIRE_MESSAGE(ran.ok(), ran.status());
  return *ran;
}

TEST_CASE("a watched timeline is told of each publish that reaches it") {
  Fixture f(HostDispatched());
  Recorder r(*f.engine);
  Watch(*f.engine, r.id, DeliveryFeed::kTimeline, 1);
  f.Fol(1, 10);
  f.Fol(2, 10);  // not watched
  f.Pub(100, 10, 5);
  CHECK(r.told->empty());  // nothing runs until dispatched
  CHECK(Dispatch(*f.engine) == 1);
  REQUIRE(r.told->size() == 1);
  const Delivery& d = r.told->front();
  CHECK(d.where == WatchedFeed{DeliveryFeed::kTimeline, 1});
  CHECK(d.entry.activity_id == 100);
  CHECK(d.entry.actor == 10);
  CHECK(d.entry.ts == 5);
  CHECK(d.missed_before == 0);

  f.Pub(100, 10, 5);  // the same again: nothing new
  CHECK(Dispatch(*f.engine) == 0);
  CHECK(*f.engine->Unwatch(r.id, {DeliveryFeed::kTimeline, 1}));
  CHECK_FALSE(*f.engine->Unwatch(r.id, {DeliveryFeed::kTimeline, 1}));
  f.Pub(101, 10, 6);
  CHECK(Dispatch(*f.engine) == 0);
  const SubscriptionStats stats = *f.engine->GetSubscriptionStats(r.id);
  CHECK(stats.watched == 0);
  CHECK(stats.delivered == 1);
  CHECK(stats.missed == 0);
}

TEST_CASE("readers of a merged-at-read actor are told, but not one muting it") {
  EngineOptions o = HostDispatched();
  o.hybrid_fanout_threshold = 1;
  Fixture f(o);
  Recorder r(*f.engine);
  for (EntityId reader = 1; reader <= 3; ++reader) {
    f.Fol(reader, 10);
    Watch(*f.engine, r.id, DeliveryFeed::kTimeline, reader);
  }
  REQUIRE(f.engine->Mute(3, 10).ok());
  const PublishResult published = f.Pub(100, 10, 5);
  REQUIRE(published.merged_at_read);
  CHECK(published.fanned_out == 0);
  Dispatch(*f.engine);
  std::vector<EntityId> told;
  for (const Delivery& d : *r.told) told.push_back(d.where.owner);
  std::sort(told.begin(), told.end());
  CHECK(told == std::vector<EntityId>{1, 2});
  // An older activity reaches them too, once each (copied or merged).
  r.told->clear();
  f.Pub(101, 10, 2);
  Dispatch(*f.engine);
  CHECK(r.told->size() == 2);
}

TEST_CASE("a dormant reader is told of what its next read will show") {
  EngineOptions o = HostDispatched();
  o.inactive_after = 100;
  Fixture f(o);
  Recorder r(*f.engine);
  f.Fol(1, 10);
  Watch(*f.engine, r.id, DeliveryFeed::kTimeline, 1);
  f.clock->Advance(1000);
  REQUIRE(*f.engine->ReleaseInactiveReaders(10) == 1);
  const PublishResult published = f.Pub(100, 10, 5);
  CHECK(published.fanned_out == 0);  // no copy for the dormant reader
  Dispatch(*f.engine);
  REQUIRE(r.told->size() == 1);
  CHECK(r.told->front().where.owner == 1);
  const std::vector<StoredEntry> read = testing::ReadAll(*f.engine, 1);
  REQUIRE(read.size() == 1);
  CHECK(read.front().activity_id == 100);
}

TEST_CASE("a watched notification feed is told with its counts") {
  Fixture f(HostDispatched());
  Recorder r(*f.engine);
  Watch(*f.engine, r.id, DeliveryFeed::kNotifications, 7);
  Watch(*f.engine, r.id, DeliveryFeed::kNotifications, 8);
  REQUIRE(f.engine->Block(8, 10).ok());  // 8 gets nothing from 10
  PublishOptions notify;
  notify.notify = {7, 8, 9};
  CHECK(f.Pub(testing::MakeActivity(100, 10, 5), notify).notified == 2);
  Dispatch(*f.engine);
  REQUIRE(r.told->size() == 1);
  const Delivery& d = r.told->front();
  CHECK(d.where == WatchedFeed{DeliveryFeed::kNotifications, 7});
  CHECK(d.entry.activity_id == 100);
  CHECK(d.counts == NotificationCounts{1, 1, 1});
}

TEST_CASE("a full queue drops deliveries, counts them and says so next") {
  Fixture f(HostDispatched());
  Recorder r(*f.engine, /*capacity=*/2);
  Watch(*f.engine, r.id, DeliveryFeed::kTimeline, 1);
  f.Fol(1, 10);
  for (ActivityId id = 100; id < 105; ++id) {
    f.Pub(id, 10, static_cast<Micros>(id));
  }
  SubscriptionStats stats = *f.engine->GetSubscriptionStats(r.id);
  CHECK(stats.queued == 2);
  CHECK(stats.missed == 3);
  CHECK(Dispatch(*f.engine) == 2);
  f.Pub(105, 10, 105);
  CHECK(Dispatch(*f.engine) == 1);
  REQUIRE(r.told->size() == 3);
  CHECK((*r.told)[0].entry.activity_id == 100);
  CHECK((*r.told)[1].entry.activity_id == 101);
  CHECK((*r.told)[2].entry.activity_id == 105);
  CHECK((*r.told)[2].missed_before == 3);
  stats = *f.engine->GetSubscriptionStats(r.id);
  CHECK(stats.queued == 0);
  CHECK(stats.delivered == 3);
  CHECK(stats.missed == 3);
}

TEST_CASE("a subscription that ends is never called again") {
  Fixture f(HostDispatched());
  InProcessFeedEngine& engine = *f.engine;
  auto calls = std::make_shared<int>(0);
  auto id = std::make_shared<SubscriptionId>(0);
  SubscriptionOptions o;
  // Ends itself from its first call: the second delivery queued with it
  // never runs.
  o.callback = [&engine, calls, id](const Delivery&) {
    ++*calls;
    CHECK(engine.Unsubscribe(*id).ok());
  };
  *id = *engine.Subscribe(std::move(o));
  Watch(engine, *id, DeliveryFeed::kTimeline, 1);
  f.Fol(1, 10);
  f.Pub(100, 10, 1);
  f.Pub(101, 10, 2);
  CHECK(Dispatch(engine) == 1);
  CHECK(*calls == 1);
  CHECK(absl::IsNotFound(engine.Unsubscribe(*id)));
  CHECK(absl::IsNotFound(engine.GetSubscriptionStats(*id).status()));
  f.Pub(102, 10, 3);
  CHECK(Dispatch(engine) == 0);

  Recorder other(engine);
  Watch(engine, other.id, DeliveryFeed::kTimeline, 1);
  f.Pub(103, 10, 4);
  REQUIRE(engine.Unsubscribe(other.id).ok());  // drops what was queued
  CHECK(Dispatch(engine) == 0);
  CHECK(other.told->empty());
}

TEST_CASE("bad arguments are refused and change nothing") {
  Fixture f(HostDispatched());
  InProcessFeedEngine& engine = *f.engine;
  SubscriptionOptions o;
  o.callback = [](const Delivery&) {};
  o.queue_capacity = 0;
  CHECK(absl::IsInvalidArgument(engine.Subscribe(o).status()));
  o.queue_capacity = kMaxDeliveryQueueCapacity + 1;
  CHECK(absl::IsInvalidArgument(engine.Subscribe(o).status()));
  o.queue_capacity = 1;
  o.callback = nullptr;
  CHECK(absl::IsInvalidArgument(engine.Subscribe(o).status()));

  Recorder r(engine);
  const WatchedFeed bad{static_cast<DeliveryFeed>(2), 1};
  CHECK(absl::IsInvalidArgument(engine.Watch(r.id, bad).status()));
  CHECK(absl::IsInvalidArgument(engine.Unwatch(r.id, bad).status()));
  const SubscriptionId unknown = r.id + 100;
  CHECK(absl::IsNotFound(
      engine.Watch(unknown, {DeliveryFeed::kTimeline, 1}).status()));
  CHECK(absl::IsNotFound(
      engine.Unwatch(unknown, {DeliveryFeed::kTimeline, 1}).status()));
  CHECK(absl::IsNotFound(engine.Unsubscribe(unknown)));
  CHECK(absl::IsNotFound(engine.GetSubscriptionStats(unknown).status()));
  CHECK(engine.GetSubscriptionStats(r.id)->watched == 0);

  Watch(engine, r.id, DeliveryFeed::kTimeline, 1);
  CHECK_FALSE(*engine.Watch(r.id, {DeliveryFeed::kTimeline, 1}));
  CHECK(engine.GetSubscriptionStats(r.id)->watched == 1);
}

TEST_CASE("the delivery thread runs callbacks that may publish again") {
  Fixture f;  // background deliveries
  InProcessFeedEngine& engine = *f.engine;
  CHECK(absl::IsFailedPrecondition(engine.DispatchDeliveries().status()));
  f.Fol(1, 10);
  f.Fol(2, 1);
  auto seen = std::make_shared<std::atomic<int>>(0);
  SubscriptionOptions o;
  // 1 reposts what reaches it; 2 follows 1 and is told of the repost.
  o.callback = [&engine, seen](const Delivery& d) {
    if (d.where.owner == 1) {
      CHECK(engine
                .Publish(testing::MakeActivity(d.entry.activity_id + 1000, 1,
                                               d.entry.ts + 1))
                .ok());
    }
    seen->fetch_add(1);
    seen->notify_all();
  };
  const SubscriptionId id = *engine.Subscribe(std::move(o));
  Watch(engine, id, DeliveryFeed::kTimeline, 1);
  Watch(engine, id, DeliveryFeed::kTimeline, 2);
  f.Pub(100, 10, 5);
  for (int now = seen->load(); now < 2; now = seen->load()) seen->wait(now);
  REQUIRE(engine.Unsubscribe(id).ok());
  CHECK(seen->load() == 2);
  CHECK(testing::ReadAll(engine, 2).front().activity_id == 1100);
}

}  // namespace
}  // namespace feedcore
