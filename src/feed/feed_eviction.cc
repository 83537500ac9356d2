// FeedEngineImpl::EvictExpired: reclaiming expired entries, shard by shard
// (each shard walks its expiry index under its own lock, a chunk at a
// time; see Shard::Evict), then expired activities from the store.
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

absl::StatusOr<size_t> FeedEngineImpl::EvictExpiredInMemory(size_t budget) {
  const Micros now = options_.clock->Now();
  const size_t shard_count = options_.shards;
  const size_t first =
      next_eviction_shard_.fetch_add(1, std::memory_order_relaxed) %
      shard_count;
  size_t evicted = 0;
  for (size_t k = 0; k < shard_count && evicted < budget; ++k) {
    evicted += shards_[(first + k) % shard_count].Evict(now, budget - evicted);
  }
  if (evicted < budget) store_.EvictExpired(now, budget - evicted);
  return evicted;
}

}  // namespace feedcore::internal
