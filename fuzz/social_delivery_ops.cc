#include "social_delivery_ops.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <vector>

namespace feedcore::fuzz {

using Key = testing::FeedModel::Key;

namespace {

// Few subscriptions, each with a small queue now and then, so that the
// input reaches full queues.
constexpr size_t kMaxSubscriptions = 3;
constexpr uint64_t kSmallQueue = 4;

}  // namespace

WatchedFeed DeliveryOps::AnyFeed() {
  return {c_.in.Bool() ? DeliveryFeed::kTimeline : DeliveryFeed::kNotifications,
          c_.Entity()};
}

SubscriptionId DeliveryOps::AnyId() {
  if (subscriptions_.empty() || c_.in.Below(8) == 0) {
    return 1'000'000 + c_.in.Below(4);  // never handed out
  }
  auto it = subscriptions_.begin();
  std::advance(it, static_cast<long>(c_.in.Below(subscriptions_.size())));
  return it->first;
}

bool DeliveryOps::Holds(const WatchedFeed& feed, const Key& key) const {
  if (feed.feed == DeliveryFeed::kNotifications) {
    return c_.model.notifications(feed.owner).contains(key);
  }
  for (const StoredEntry& e : c_.model.Delivered(feed.owner, c_.Now())) {
    if (Key{e.ts, e.activity_id} == key) return true;
  }
  return false;
}

void DeliveryOps::Subscribe() {
  if (subscriptions_.size() >= kMaxSubscriptions) return Dispatch();
  Subscription s;
  s.delivered =
      std::make_shared<std::multiset<Told, bool (*)(const Told&, const Told&)>>(
          ToldBefore);
  SubscriptionOptions options;
  options.queue_capacity =
      c_.in.Bool() ? 1 + c_.in.Below(kSmallQueue) : kMaxDeliveryQueueCapacity;
  options.callback = [delivered = s.delivered](const Delivery& d) {
    delivered->insert({d.where, {d.entry.ts, d.entry.activity_id}});
  };
  const uint64_t records = c_.Records();
  const absl::StatusOr<SubscriptionId> id = api_.Subscribe(std::move(options));
  FUZZ_CHECK(id.ok() && !subscriptions_.contains(*id));
  FUZZ_CHECK(c_.Records() == records);  // subscriptions are not recorded
  subscriptions_.emplace(*id, std::move(s));
}

void DeliveryOps::Unsubscribe() {
  const SubscriptionId id = AnyId();
  const absl::Status status = api_.Unsubscribe(id);
  if (!subscriptions_.contains(id)) {
    FUZZ_CHECK(absl::IsNotFound(status));
    return;
  }
  FUZZ_CHECK(status.ok());
  subscriptions_.erase(id);
  // Gone: a second Unsubscribe and a Watch of it are refused.
  FUZZ_CHECK(absl::IsNotFound(api_.Unsubscribe(id)));
  FUZZ_CHECK(absl::IsNotFound(api_.Watch(id, AnyFeed()).status()));
}

void DeliveryOps::Watch() {
  const SubscriptionId id = AnyId();
  const WatchedFeed feed = AnyFeed();
  const absl::StatusOr<bool> changed = api_.Watch(id, feed);
  auto s = subscriptions_.find(id);
  if (s == subscriptions_.end()) {
    FUZZ_CHECK(absl::IsNotFound(changed.status()));
    return;
  }
  FUZZ_CHECK(changed.ok());
  FUZZ_CHECK(*changed == s->second.watched.insert(feed).second);
  const absl::StatusOr<SubscriptionStats> stats = api_.GetSubscriptionStats(id);
  FUZZ_CHECK(stats.ok() && stats->watched == s->second.watched.size());
}

void DeliveryOps::Unwatch() {
  const SubscriptionId id = AnyId();
  auto s = subscriptions_.find(id);
  WatchedFeed feed = AnyFeed();
  if (s != subscriptions_.end() && !s->second.watched.empty() && c_.in.Bool()) {
    auto it = s->second.watched.begin();
    std::advance(it, static_cast<long>(c_.in.Below(s->second.watched.size())));
    feed = *it;
  }
  const absl::StatusOr<bool> changed = api_.Unwatch(id, feed);
  if (s == subscriptions_.end()) {
    FUZZ_CHECK(absl::IsNotFound(changed.status()));
    return;
  }
  FUZZ_CHECK(changed.ok());
  FUZZ_CHECK(*changed == (s->second.watched.erase(feed) == 1));
}

void DeliveryOps::Published(const Key& key) {
  for (auto& [id, s] : subscriptions_) {
    for (const WatchedFeed& feed : s.watched) {
      if (Holds(feed, key)) s.due.insert({feed, key});
    }
  }
}

bool DeliveryOps::WatchingNotifications() const {
  for (const auto& [id, s] : subscriptions_) {
    for (const WatchedFeed& feed : s.watched) {
      if (feed.feed == DeliveryFeed::kNotifications) return true;
    }
  }
  return false;
}

void DeliveryOps::Dispatch() {
  const absl::StatusOr<size_t> ran = api_.DispatchDeliveries();
  FUZZ_CHECK(ran.ok());
  size_t told = 0;
  for (auto& [id, s] : subscriptions_) {
    const absl::StatusOr<SubscriptionStats> stats =
        api_.GetSubscriptionStats(id);
    FUZZ_CHECK(stats.ok() && stats->queued == 0);
    const uint64_t missed = stats->missed - s.missed_seen;
    s.missed_seen = stats->missed;
    told += s.delivered->size();
    // Due and not delivered: only as many as were dropped.
    size_t undelivered = 0;
    for (auto it = s.due.begin(); it != s.due.end();
         it = s.due.upper_bound(*it)) {
      if (it->first.feed == DeliveryFeed::kTimeline &&
          !c_.Comparable(it->first.owner)) {
        continue;  // the model's view of this reader differs
      }
      const size_t due = s.due.count(*it);
      const size_t got = s.delivered->count(*it);
      undelivered += due > got ? due - got : 0;
    }
    FUZZ_CHECK_DETAIL(
        undelivered <= missed,
        std::fprintf(stderr, "%zu due deliveries not made, %llu missed\n",
                     undelivered, static_cast<unsigned long long>(missed)));
    // Delivered and not due: a readers' view the model does not share
    // (c_.Comparable), or a notification its full feed did not keep.
    for (const Told& t : *s.delivered) {
      if (s.due.count(t) >= s.delivered->count(t)) continue;
      const bool excused = (t.first.feed == DeliveryFeed::kTimeline &&
                            !c_.Comparable(t.first.owner)) ||
                           (t.first.feed == DeliveryFeed::kNotifications &&
                            !Holds(t.first, t.second));
      FUZZ_CHECK_DETAIL(
          excused,
          std::fprintf(stderr, "told feed %d/%llu of %lld/%llu, not due\n",
                       static_cast<int>(t.first.feed),
                       static_cast<unsigned long long>(t.first.owner),
                       static_cast<long long>(t.second.first),
                       static_cast<unsigned long long>(t.second.second)));
    }
    s.delivered->clear();
    s.due.clear();
  }
  FUZZ_CHECK(*ran == told);
}

void DeliveryOps::Invalid() {
  const uint64_t records = c_.Records();
  SubscriptionOptions options;
  options.queue_capacity =
      c_.in.Bool() ? 0 : kMaxDeliveryQueueCapacity + 1 + c_.in.Below(3);
  if (c_.in.Bool()) {
    options.queue_capacity = 1;  // a good capacity, but no callback
  } else {
    options.callback = [](const Delivery&) {};
  }
  FUZZ_CHECK(absl::IsInvalidArgument(api_.Subscribe(options).status()));
  FUZZ_CHECK(absl::IsNotFound(
      api_.GetSubscriptionStats(1'000'000 + c_.in.Below(4)).status()));
  FUZZ_CHECK(c_.Records() == records);
}

}  // namespace feedcore::fuzz
