#include "feed/fanout_tracker.h"

#include <xxhash.h>

namespace feedcore::internal {

FanoutTracker::FanoutTracker() : stripes_(new Stripe[kStripes]) {}

FanoutTracker::Stripe& FanoutTracker::StripeFor(EntityId actor) {
  return stripes_[XXH3_64bits(&actor, sizeof(actor)) % kStripes];
}

uint64_t FanoutTracker::Begin(EntityId actor) {
  Stripe& stripe = StripeFor(actor);
  std::lock_guard<std::mutex> lock(stripe.mu);
  const uint64_t ticket = stripe.next_ticket++;
  stripe.in_flight[actor].insert(ticket);
  return ticket;
}

void FanoutTracker::End(EntityId actor, uint64_t ticket) {
  Stripe& stripe = StripeFor(actor);
  {
    std::lock_guard<std::mutex> lock(stripe.mu);
    auto it = stripe.in_flight.find(actor);
    it->second.erase(ticket);
    if (it->second.empty()) stripe.in_flight.erase(it);
  }
  stripe.ended.notify_all();
}

void FanoutTracker::WaitForEarlier(EntityId actor) {
  Stripe& stripe = StripeFor(actor);
  std::unique_lock<std::mutex> lock(stripe.mu);
  const uint64_t before = stripe.next_ticket;
  stripe.ended.wait(lock, [&] {
    auto it = stripe.in_flight.find(actor);
    return it == stripe.in_flight.end() || *it->second.begin() >= before;
  });
}

}  // namespace feedcore::internal
