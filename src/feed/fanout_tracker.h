// FanoutTracker: which deliveries of an actor's activities are in flight.
//
// A delivery (a publish's fan-out, a follow's back-fill) takes a ticket
// before it reads the set of timelines it will write, and returns it after
// its last write. Unfollow and Retract first change the graph or the
// activity, then wait for every delivery of that actor that began before,
// and only then purge copies: a delivery that read the old state can no
// longer write a copy after the purge.
//
// Thread safety
// -------------
// Every method is thread-safe. Stripe mutexes are leaves: no other lock is
// taken while one is held, and none is held while waiting.
#ifndef FEEDCORE_SRC_FEED_FANOUT_TRACKER_H_
#define FEEDCORE_SRC_FEED_FANOUT_TRACKER_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "feedcore/types.h"

namespace feedcore::internal {

class FanoutTracker {
 public:
  FanoutTracker();
  FanoutTracker(const FanoutTracker&) = delete;
  FanoutTracker& operator=(const FanoutTracker&) = delete;

  // Starts a delivery of `actor`'s activities; returns its ticket.
  uint64_t Begin(EntityId actor);
  // Ends the delivery holding `ticket`.
  void End(EntityId actor, uint64_t ticket);
  // Returns once every delivery of `actor` begun before this call ended.
  // Deliveries begun later are not waited for, so a busy actor cannot
  // starve the caller.
  void WaitForEarlier(EntityId actor);

 private:
  static constexpr size_t kStripes = 64;
  struct alignas(64) Stripe {
    std::mutex mu;
    std::condition_variable ended;
    // Tickets only grow, per stripe, so "begun before" is a comparison.
    uint64_t next_ticket = 0;  // guarded by mu
    // Tickets in flight per actor; an actor with none has no entry.
    absl::flat_hash_map<EntityId, absl::btree_set<uint64_t>> in_flight;
  };
  Stripe& StripeFor(EntityId actor);

  std::unique_ptr<Stripe[]> stripes_;
};

// Ends a delivery when it goes out of scope.
class FanoutTicket {
 public:
  FanoutTicket(FanoutTracker* tracker, EntityId actor)
      : tracker_(tracker), actor_(actor), ticket_(tracker->Begin(actor)) {}
  ~FanoutTicket() { tracker_->End(actor_, ticket_); }
  FanoutTicket(const FanoutTicket&) = delete;
  FanoutTicket& operator=(const FanoutTicket&) = delete;

 private:
  FanoutTracker* const tracker_;
  const EntityId actor_;
  const uint64_t ticket_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_FEED_FANOUT_TRACKER_H_
