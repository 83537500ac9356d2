// Timeline's eviction of expired entries (timeline.h, "Expiry"): from the
// oldest end while the list is in expiry order, else through the expiry
// index.
#include <cassert>
#include <vector>

#include "timeline/timeline.h"

namespace feedcore::internal {

size_t Timeline::EvictExpired(Micros now, size_t budget,
                              std::vector<EntryKey>* keys) {
  if (budget == 0 || size_ == 0) return 0;
  if (inversions_ == 0) {
    expiry_index_.reset();  // sorted again: the list order is the index
    return EvictSortedSuffix(now, budget, keys);
  }
  const size_t evicted = EvictByIndex(now, budget, keys);
  if (inversions_ == 0) expiry_index_.reset();
  return evicted;
}

// With expiries non-increasing from newest to oldest, the expired entries
// are the oldest ones: drop them from the oldest end.
size_t Timeline::EvictSortedSuffix(Micros now, size_t budget,
                                   std::vector<EntryKey>* keys) {
  size_t evicted = 0;
  while (evicted < budget && size_ > 0 &&
         tail_->expires_at(tail_->begin) <= now) {
    if (keys != nullptr) keys->push_back(tail_->oldest());
    RemoveOldest();
    ++evicted;
  }
  return evicted;
}

size_t Timeline::EvictByIndex(Micros now, size_t budget,
                              std::vector<EntryKey>* keys) {
  size_t evicted = 0;
  while (evicted < budget && !expiry_index_->empty() &&
         expiry_index_->begin()->first <= now) {
    const EntryKey key = expiry_index_->begin()->second;
    if (keys != nullptr) keys->push_back(key);
    const bool removed = Remove(key);
    assert(removed);
    (void)removed;
    ++evicted;
  }
  return evicted;
}

}  // namespace feedcore::internal
