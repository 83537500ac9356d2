// Counters describing an engine's contents and memory.
#ifndef FEEDCORE_STATS_H_
#define FEEDCORE_STATS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace feedcore {

struct ShardStats {
  size_t timelines = 0;
  size_t entries = 0;
  size_t bytes_used = 0;
  size_t bytes_reserved = 0;
};

// A sum over shards, each read under its own lock: every per-shard figure is
// exact at some instant, the totals are not one global instant when writers
// are running. `bytes_used` and `bytes_reserved` totals also include the
// activity store, which belongs to no timeline shard, so they exceed the
// sum of the per-shard figures once anything is published.
struct EngineStats {
  size_t timelines = 0;  // timelines holding at least one entry
  // Entries held, including expired ones that eviction has not reclaimed.
  size_t entries = 0;
  // Bytes of live data structures: timeline nodes, timeline headers, the
  // hash-table slots holding them, the expiry indexes, the group indexes of
  // grouped and notification feeds, the follow graph (estimated per edge)
  // and the activity store with its payloads.
  size_t bytes_used = 0;
  // Bytes held from the system allocator or the OS for the above, including
  // free space inside node blocks. Falls when eviction empties node blocks.
  size_t bytes_reserved = 0;
  uint64_t evicted = 0;  // expired entries reclaimed since creation
  // Entries dropped by `max_timeline_length` to make room. Inserts rejected
  // because they were older than a full timeline are not counted here
  // (see InsertResult::rejected_by_cap).
  uint64_t trimmed = 0;

  // Activity store: activities stored once (including retracted ones kept
  // as tombstones until they expire), their payload bytes, and how many
  // expired ones eviction dropped.
  size_t activities = 0;
  size_t retracted_activities = 0;
  size_t payload_bytes = 0;
  uint64_t activities_evicted = 0;
  // Follow relations.
  size_t follow_edges = 0;

  std::vector<ShardStats> shards;
};

}  // namespace feedcore

#endif  // FEEDCORE_STATS_H_
