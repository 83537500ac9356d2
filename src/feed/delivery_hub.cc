#include "feed/delivery_hub.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace feedcore::internal {

void DeliveryHub::Stop() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stopped_.store(true, std::memory_order_release);
  }
  ready_cv_.notify_all();
  std::thread thread;
  {
    WriterLock lock(&watch_mu_);
    thread.swap(thread_);
  }
  if (thread.joinable()) thread.join();
}

absl::StatusOr<SubscriptionId> DeliveryHub::Subscribe(
    SubscriptionOptions options) {
  if (options.queue_capacity == 0 ||
      options.queue_capacity > kMaxDeliveryQueueCapacity) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SubscriptionOptions.queue_capacity is ", options.queue_capacity,
        "; it must be 1..", kMaxDeliveryQueueCapacity));
  }
  if (!options.callback) {
    return absl::InvalidArgumentError(
        "SubscriptionOptions.callback is empty; a subscription needs one");
  }
  auto subscription = std::make_shared<Subscription>();
  subscription->capacity = options.queue_capacity;
  subscription->callback = std::move(options.callback);
  WriterLock lock(&watch_mu_);
  if (stopped_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError(
        "the engine is shutting down: no new subscriptions");
  }
  subscription->id = next_id_++;
  subscriptions_.emplace(subscription->id, subscription);
  if (background_ && !thread_.joinable())
    thread_ = std::thread([this] { Run(); });
  return subscription->id;
}

absl::Status DeliveryHub::Unsubscribe(SubscriptionId id) {
  std::shared_ptr<Subscription> subscription;
  {
    WriterLock lock(&watch_mu_);
    auto it = subscriptions_.find(id);
    if (it == subscriptions_.end()) {
      return absl::NotFoundError(
          absl::StrCat("no subscription ", id, " (never made, or ended)"));
    }
    subscription = std::move(it->second);
    subscriptions_.erase(it);
    for (const WatchedFeed& feed : subscription->watching) {
      RemoveWatcherLocked(feed, subscription);
    }
    subscription->watching.clear();
  }
  std::unique_lock<std::mutex> lock(queue_mu_);
  subscription->ended.store(true, std::memory_order_release);
  subscription->queue.clear();
  // From its own callback the call cannot wait for that callback.
  if (subscription->running_on != std::this_thread::get_id()) {
    done_cv_.wait(lock, [&] { return !subscription->running; });
  }
  return absl::OkStatus();
}

DeliveryHub::Subscription* DeliveryHub::Find(SubscriptionId id) const {
  auto it = subscriptions_.find(id);
  return it == subscriptions_.end() ? nullptr : it->second.get();
}

namespace {

absl::Status CheckFeed(const WatchedFeed& feed) {
  if (feed.feed != DeliveryFeed::kTimeline &&
      feed.feed != DeliveryFeed::kNotifications) {
    return absl::InvalidArgumentError(
        absl::StrCat("WatchedFeed.feed is ", static_cast<int>(feed.feed),
                     "; it must be kTimeline or kNotifications"));
  }
  return absl::OkStatus();
}

absl::Status UnknownSubscription(SubscriptionId id) {
  return absl::NotFoundError(
      absl::StrCat("no subscription ", id, " (never made, or ended)"));
}

}  // namespace

absl::StatusOr<bool> DeliveryHub::Watch(SubscriptionId id,
                                        const WatchedFeed& feed) {
  if (absl::Status status = CheckFeed(feed); !status.ok()) return status;
  WriterLock lock(&watch_mu_);
  auto it = subscriptions_.find(id);
  if (it == subscriptions_.end()) return UnknownSubscription(id);
  Subscription& subscription = *it->second;
  if (subscription.watching.contains(feed)) return false;
  if (subscription.watching.size() >= kMaxWatchedFeeds) {
    return absl::ResourceExhaustedError(
        absl::StrCat("subscription ", id, " already watches ", kMaxWatchedFeeds,
                     " feeds (kMaxWatchedFeeds)"));
  }
  subscription.watching.insert(feed);
  auto& owners = watchers_[Index(feed.feed)];
  owners[feed.owner].push_back(it->second);
  watched_[Index(feed.feed)].store(owners.size(), std::memory_order_relaxed);
  return true;
}

absl::StatusOr<bool> DeliveryHub::Unwatch(SubscriptionId id,
                                          const WatchedFeed& feed) {
  if (absl::Status status = CheckFeed(feed); !status.ok()) return status;
  WriterLock lock(&watch_mu_);
  auto it = subscriptions_.find(id);
  if (it == subscriptions_.end()) return UnknownSubscription(id);
  if (it->second->watching.erase(feed) == 0) return false;
  RemoveWatcherLocked(feed, it->second);
  return true;
}

void DeliveryHub::RemoveWatcherLocked(const WatchedFeed& feed,
                                      const std::shared_ptr<Subscription>& s) {
  auto& owners = watchers_[Index(feed.feed)];
  auto found = owners.find(feed.owner);
  Watchers& list = found->second;
  list.erase(std::find(list.begin(), list.end(), s));
  if (list.empty()) owners.erase(found);
  watched_[Index(feed.feed)].store(owners.size(), std::memory_order_relaxed);
}

absl::StatusOr<SubscriptionStats> DeliveryHub::Stats(SubscriptionId id) const {
  ReaderLock lock(&watch_mu_);
  const Subscription* subscription = Find(id);
  if (subscription == nullptr) return UnknownSubscription(id);
  SubscriptionStats stats;
  stats.watched = subscription->watching.size();
  stats.delivered = subscription->delivered.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> queue_lock(queue_mu_);
  stats.queued = subscription->queue.size();
  stats.missed = subscription->missed;
  return stats;
}

bool DeliveryHub::Watched(DeliveryFeed feed, EntityId owner) const {
  ReaderLock lock(&watch_mu_);
  return watchers_[Index(feed)].contains(owner);
}

size_t DeliveryHub::WatchedCount(DeliveryFeed feed) const {
  ReaderLock lock(&watch_mu_);
  return watchers_[Index(feed)].size();
}

void DeliveryHub::WatchedOwners(DeliveryFeed feed,
                                std::vector<EntityId>* owners) const {
  ReaderLock lock(&watch_mu_);
  for (const auto& [owner, list] : watchers_[Index(feed)]) {
    owners->push_back(owner);
  }
}

bool DeliveryHub::QueueLocked(const std::shared_ptr<Subscription>& s,
                              const WatchedFeed& where,
                              const TimelineEntry& entry,
                              const NotificationCounts& counts) {
  if (s->queue.size() >= s->capacity) {
    ++s->missed_since_last;
    ++s->missed;
    return false;
  }
  s->queue.push_back(Delivery{where, entry, counts, s->missed_since_last});
  s->missed_since_last = 0;
  if (s->scheduled) return false;
  s->scheduled = true;
  ready_.push_back(s);
  return true;
}

void DeliveryHub::Deliver(DeliveryFeed feed, absl::Span<const EntityId> owners,
                          const TimelineEntry& entry,
                          absl::Span<const NotificationCounts> counts) {
  ReaderLock lock(&watch_mu_);
  const auto& watched = watchers_[Index(feed)];
  if (watched.empty() || owners.empty()) return;
  absl::InlinedVector<std::pair<const Watchers*, size_t>, 4> hits;
  // A fan-out to many followers with few watched timelines walks the
  // watched ones and searches the (sorted) followers instead.
  if (watched.size() * 16 < owners.size() &&
      std::is_sorted(owners.begin(), owners.end())) {
    for (const auto& [owner, list] : watched) {
      auto at = std::lower_bound(owners.begin(), owners.end(), owner);
      if (at != owners.end() && *at == owner) {
        hits.emplace_back(&list, static_cast<size_t>(at - owners.begin()));
      }
    }
  } else {
    for (size_t i = 0; i < owners.size(); ++i) {
      auto found = watched.find(owners[i]);
      if (found != watched.end()) hits.emplace_back(&found->second, i);
    }
  }
  if (hits.empty()) return;
  bool woke = false;
  {
    std::lock_guard<std::mutex> queue_lock(queue_mu_);
    for (const auto& [list, i] : hits) {
      const NotificationCounts none;
      for (const std::shared_ptr<Subscription>& s : *list) {
        woke |= QueueLocked(s, WatchedFeed{feed, owners[i]}, entry,
                            counts.empty() ? none : counts[i]);
      }
    }
  }
  if (woke && background_) ready_cv_.notify_one();
}

bool DeliveryHub::DispatchOne(size_t* ran) {
  std::shared_ptr<Subscription> s;
  std::deque<Delivery> batch;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (stopped_.load(std::memory_order_relaxed) || ready_.empty()) {
      return false;
    }
    s = std::move(ready_.front());
    ready_.pop_front();
    batch.swap(s->queue);
    s->running = true;
    s->running_on = std::this_thread::get_id();
  }
  for (const Delivery& delivery : batch) {
    if (s->ended.load(std::memory_order_acquire) ||
        stopped_.load(std::memory_order_acquire)) {
      break;
    }
    s->callback(delivery);
    s->delivered.fetch_add(1, std::memory_order_relaxed);
    ++*ran;
  }
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    s->running = false;
    s->running_on = std::thread::id();
    if (!s->queue.empty() && !s->ended.load(std::memory_order_relaxed)) {
      ready_.push_back(s);  // stays scheduled: queued during its callbacks
    } else {
      s->scheduled = false;
    }
  }
  done_cv_.notify_all();
  return true;
}

absl::StatusOr<size_t> DeliveryHub::Dispatch() {
  if (background_) {
    return absl::FailedPreconditionError(
        "this engine runs subscription callbacks on its own delivery thread "
        "(EngineOptions.background_deliveries); DispatchDeliveries is for "
        "engines without one");
  }
  size_t ran = 0;
  while (DispatchOne(&ran)) {
  }
  return ran;
}

void DeliveryHub::Run() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      ready_cv_.wait(lock, [&] {
        return stopped_.load(std::memory_order_relaxed) || !ready_.empty();
      });
      if (stopped_.load(std::memory_order_relaxed)) return;
    }
    size_t ran = 0;
    DispatchOne(&ran);
  }
}

}  // namespace feedcore::internal
