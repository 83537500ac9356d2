// FeedEngineImpl: the in-memory FeedEngine.
//
// Layout. S shards, each aligned to its own cache lines. An owner's
// timeline lives in shard XXH3_64bits(owner) % S. Each shard has a mutex,
// a node arena, a hash map owner -> timeline, and an expiry index: the set
// of (earliest expiry, owner) of its timelines, so that eviction visits
// only timelines holding something expired.
//
// Lock order. A call holds at most one shard lock at a time (batched
// inserts take the shards one after another), so there is no order to
// respect between shards. The sweeper's own mutex is never held while a
// shard lock is taken.
#ifndef FEEDCORE_SRC_FEED_ENGINE_IMPL_H_
#define FEEDCORE_SRC_FEED_ENGINE_IMPL_H_

#include <atomic>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_set.h"
#include "absl/container/node_hash_map.h"
#include "feedcore/feed_engine.h"
#include "mutex.h"
#include "node_arena.h"
#include "sweeper.h"
#include "timeline.h"

namespace feedcore::internal {

class FeedEngineImpl final : public FeedEngine {
 public:
  // REQUIRES: options resolved by ResolveEngineOptions.
  explicit FeedEngineImpl(EngineOptions options);
  ~FeedEngineImpl() override;

  absl::StatusOr<InsertResult> Insert(EntityId owner,
                                      const TimelineEntry& entry,
                                      const InsertOptions& options) override;
  absl::StatusOr<InsertResult> InsertFanout(
      absl::Span<const EntityId> owners, const TimelineEntry& entry,
      const InsertOptions& options) override;
  absl::StatusOr<InsertResult> InsertBatch(
      absl::Span<const OwnedEntry> entries,
      const InsertOptions& options) override;
  absl::Status Remove(EntityId owner, Micros ts,
                      ActivityId activity_id) override;
  absl::StatusOr<Page> ReadTimeline(EntityId owner,
                                    const ReadOptions& options) const override;
  size_t EvictExpired(size_t budget) override;
  EngineStats Stats() const override;
  const EngineOptions& options() const override { return options_; }

 private:
  struct TimelineRecord {
    TimelineRecord(NodeArena* arena, uint64_t seed) : timeline(arena, seed) {}
    Timeline timeline;
    // The key this timeline has in Shard::expiry, or Micros max if none.
    Micros indexed_expiry = std::numeric_limits<Micros>::max();
  };

  struct alignas(64) Shard {
    mutable SharedMutex mu;
    NodeArena arena ABSL_GUARDED_BY(mu);
    absl::node_hash_map<EntityId, TimelineRecord> timelines ABSL_GUARDED_BY(mu);
    // (earliest expiry, owner) of every non-empty timeline.
    absl::btree_set<std::pair<Micros, EntityId>> expiry ABSL_GUARDED_BY(mu);
    size_t entries ABSL_GUARDED_BY(mu) = 0;
    size_t index_bytes ABSL_GUARDED_BY(mu) = 0;
    uint64_t evicted ABSL_GUARDED_BY(mu) = 0;
    uint64_t trimmed ABSL_GUARDED_BY(mu) = 0;
  };

  size_t ShardIndex(EntityId owner) const;
  // Puts one entry into `owner`'s timeline, creating it if needed, and
  // keeps the shard's counters and expiry index current.
  void PutLocked(Shard& shard, EntityId owner, const StoredEntry& entry,
                 InsertResult* result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  // Call after any change to `record`'s timeline: re-keys it in the expiry
  // index, and drops the timeline when it became empty. `it` is invalid
  // afterwards.
  void AfterChangeLocked(
      Shard& shard, absl::node_hash_map<EntityId, TimelineRecord>::iterator it,
      size_t index_bytes_before) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  // Evicts up to `budget` from one shard; returns how many.
  size_t EvictShard(Shard& shard, Micros now, size_t budget);

  const EngineOptions options_;
  const uint64_t height_seed_;
  std::unique_ptr<Shard[]> shards_;
  // Shard where the next eviction pass starts, so a budget that runs out
  // does not always favour the first shards.
  std::atomic<size_t> next_eviction_shard_{0};
  // Last: stopped and joined first on destruction, before the shards go.
  std::unique_ptr<Sweeper> sweeper_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_FEED_ENGINE_IMPL_H_
