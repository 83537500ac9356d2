// DeliveryHub: the subscriptions of FeedDeliveries (feed_facets.h), their
// bounded queues and the thread that runs their callbacks.
//
// The publish path asks Watching() first (one relaxed load), so an engine
// nobody subscribes to pays nothing more; then it hands each group of
// timelines an entry reached to Deliver, which queues the entry for the
// subscriptions watching any of them and never waits for a callback.
//
// Thread safety
// -------------
// Every method is thread-safe. Lock order: watch_mu_ (which subscriptions
// watch which feeds) -> queue_mu_ (every queue and the ready list; a leaf).
// The engine calls in with at most one shard lock held (shard -> watch_mu_);
// no hub lock is held while a callback runs, so a callback may call the
// engine and the hub again.
#ifndef FEEDCORE_SRC_FEED_DELIVERY_HUB_H_
#define FEEDCORE_SRC_FEED_DELIVERY_HUB_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/mutex.h"
#include "feedcore/feed_facets.h"
#include "feedcore/types.h"

namespace feedcore::internal {

class DeliveryHub {
 public:
  // `background`: callbacks run on a thread of the hub's, started by the
  // first Subscribe; otherwise on the callers of Dispatch.
  explicit DeliveryHub(bool background) : background_(background) {}
  ~DeliveryHub() { Stop(); }
  DeliveryHub(const DeliveryHub&) = delete;
  DeliveryHub& operator=(const DeliveryHub&) = delete;

  // Joins the delivery thread; no callback runs after (what is queued
  // later stays queued). Called by the engine's destructor, when no
  // other thread may call the engine (or Dispatch), and not from a
  // callback.
  void Stop();

  absl::StatusOr<SubscriptionId> Subscribe(SubscriptionOptions options);
  absl::Status Unsubscribe(SubscriptionId id);
  absl::StatusOr<bool> Watch(SubscriptionId id, const WatchedFeed& feed);
  absl::StatusOr<bool> Unwatch(SubscriptionId id, const WatchedFeed& feed);
  absl::StatusOr<SubscriptionStats> Stats(SubscriptionId id) const;
  absl::StatusOr<size_t> Dispatch();

  // Whether some subscription watches a feed of this kind.
  bool Watching(DeliveryFeed feed) const {
    return watched_[Index(feed)].load(std::memory_order_relaxed) > 0;
  }
  // Whether `owner`'s feed of this kind is watched.
  bool Watched(DeliveryFeed feed, EntityId owner) const;
  // How many feeds of this kind are watched, and their owners (in no order).
  size_t WatchedCount(DeliveryFeed feed) const;
  void WatchedOwners(DeliveryFeed feed, std::vector<EntityId>* owners) const;

  // Queues `entry` for each subscription watching the feed of one of
  // `owners` (duplicates are not expected), with `counts[i]` for owners[i]
  // when `counts` is not empty. A full queue drops it and counts the miss.
  void Deliver(DeliveryFeed feed, absl::Span<const EntityId> owners,
               const TimelineEntry& entry,
               absl::Span<const NotificationCounts> counts = {});

 private:
  struct Subscription {
    SubscriptionId id = 0;
    size_t capacity = 0;
    std::function<void(const Delivery&)> callback;
    std::atomic<bool> ended{false};
    std::atomic<uint64_t> delivered{0};
    // Guarded by the hub's queue_mu_.
    std::deque<Delivery> queue;
    uint64_t missed_since_last = 0;
    uint64_t missed = 0;
    bool scheduled = false;  // in ready_, or its callbacks running
    bool running = false;
    std::thread::id running_on;
    // Guarded by the hub's watch_mu_.
    absl::flat_hash_set<WatchedFeed> watching;
  };
  using Watchers = absl::InlinedVector<std::shared_ptr<Subscription>, 1>;

  static size_t Index(DeliveryFeed feed) { return static_cast<size_t>(feed); }
  // The subscription `id`, or nullptr. REQUIRES: watch_mu_ held.
  Subscription* Find(SubscriptionId id) const
      ABSL_SHARED_LOCKS_REQUIRED(watch_mu_);
  // Drops `s` from the watchers of `feed`.
  void RemoveWatcherLocked(const WatchedFeed& feed,
                           const std::shared_ptr<Subscription>& s)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(watch_mu_);
  // Queues one delivery; true when that made `s` ready. REQUIRES:
  // queue_mu_ held (a std::mutex, which the analysis does not see).
  bool QueueLocked(const std::shared_ptr<Subscription>& s,
                   const WatchedFeed& where, const TimelineEntry& entry,
                   const NotificationCounts& counts);
  // Runs the callbacks of the first ready subscription's queue; false when
  // none is ready (or the hub stopped).
  bool DispatchOne(size_t* ran);
  void Run();

  const bool background_;

  mutable SharedMutex watch_mu_;
  SubscriptionId next_id_ ABSL_GUARDED_BY(watch_mu_) = 1;
  absl::flat_hash_map<SubscriptionId, std::shared_ptr<Subscription>>
      subscriptions_ ABSL_GUARDED_BY(watch_mu_);
  absl::flat_hash_map<EntityId, Watchers> watchers_[2] ABSL_GUARDED_BY(
      watch_mu_);
  std::atomic<size_t> watched_[2] = {0, 0};

  mutable std::mutex queue_mu_;
  std::condition_variable ready_cv_;  // the delivery thread waits here
  std::condition_variable done_cv_;   // Unsubscribe waits for a callback
  std::deque<std::shared_ptr<Subscription>> ready_;  // guarded by queue_mu_
  std::atomic<bool> stopped_{false};                 // set under queue_mu_
  std::thread thread_;  // started under watch_mu_ by the first Subscribe
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_FEED_DELIVERY_HUB_H_
