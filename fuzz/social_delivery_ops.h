// The social sequence fuzz target's operations on delivery subscriptions
// (FeedDeliveries), on an engine whose deliveries run only when the host
// dispatches them: Subscribe with queues of any capacity (so that full
// queues drop and count), Watch and Unwatch of timelines and notification
// feeds, repeats and unknown subscriptions included, Unsubscribe, refused
// options, and DispatchDeliveries. Every publish tells these operations
// what the reference model's watched feeds gained (Published), and each
// dispatch compares what the callbacks were given with that: every entry a
// watched feed gained is delivered or counted as missed, and nothing else
// is delivered but a notification its feed no longer holds.
#ifndef FEEDCORE_FUZZ_SOCIAL_DELIVERY_OPS_H_
#define FEEDCORE_FUZZ_SOCIAL_DELIVERY_OPS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "feedcore/feed_facets.h"
#include "feedcore/types.h"
#include "social_fuzz_context.h"

namespace feedcore::fuzz {

class DeliveryOps {
 public:
  explicit DeliveryOps(SocialFuzzContext& c)
      : c_(c), api_(*c.engine->deliveries()) {}

  void Subscribe();
  void Unsubscribe();
  void Watch();
  void Unwatch();
  // Runs the queued callbacks and compares them with the model.
  void Dispatch();
  // Subscribe with a capacity out of range or no callback, Watch of an
  // unknown subscription: refused, nothing recorded.
  void Invalid();
  // After a publish of `key` that created an activity: what each watched
  // feed gained in the model is now due.
  void Published(const testing::FeedModel::Key& key);
  // Whether any subscription watches a notification feed: a publish then
  // counts each recipient's notifications for its delivery, reclaiming
  // what has expired there, as GetNotificationCounts does.
  bool WatchingNotifications() const;

 private:
  using Told = std::pair<WatchedFeed, testing::FeedModel::Key>;
  struct Subscription {
    std::set<WatchedFeed, bool (*)(const WatchedFeed&, const WatchedFeed&)>
        watched{Before};
    std::multiset<Told, bool (*)(const Told&, const Told&)> due{ToldBefore};
    // Filled by the callback.
    std::shared_ptr<std::multiset<Told, bool (*)(const Told&, const Told&)>>
        delivered;
    uint64_t missed_seen = 0;  // SubscriptionStats::missed at the last check
  };
  static bool Before(const WatchedFeed& a, const WatchedFeed& b) {
    return std::pair(a.feed, a.owner) < std::pair(b.feed, b.owner);
  }
  static bool ToldBefore(const Told& a, const Told& b) {
    return Before(a.first, b.first) ||
           (!Before(b.first, a.first) && a.second < b.second);
  }
  WatchedFeed AnyFeed();
  // A subscription made here (most of the time) or an id never handed
  // out; 0 when none.
  SubscriptionId AnyId();
  // Whether the model's `feed` holds `key` now.
  bool Holds(const WatchedFeed& feed, const testing::FeedModel::Key& key) const;

  SocialFuzzContext& c_;
  FeedDeliveries& api_;
  std::map<SubscriptionId, Subscription> subscriptions_;
};

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_SOCIAL_DELIVERY_OPS_H_
