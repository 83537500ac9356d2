// FeedEngineImpl::Stats: each shard's figures, read under its lock held
// shared (one shard at a time), and the activity store's.
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

absl::StatusOr<EngineStats> FeedEngineImpl::Stats() const {
  EngineStats stats;
  stats.shards.resize(options_.shards);
  for (size_t s = 0; s < options_.shards; ++s) {
    shards_[s].AddStats(&stats.shards[s], &stats);
  }
  const ActivityStoreStats store = store_.Stats();
  stats.activities = store.activities;
  stats.retracted_activities = store.retracted;
  stats.payload_bytes = store.payload_bytes;
  stats.activities_evicted = store.evicted;
  stats.bytes_used += store.bytes_used;
  stats.bytes_reserved += store.bytes_used;
  return stats;
}

}  // namespace feedcore::internal
