// Shard: one slice of the in-memory FeedEngine, with the lock that guards
// it.
//
// Everything about an entity lives in shard XXH3_64bits(entity) % S: its
// home, own and notification timelines and its graph node (followers,
// grouped by the follower's shard; followees; the hybrid followees merged
// into its reads). Each shard also holds a slice of the world feed (owner
// 0): the activities of the actors routed to it. A shard owns
//   * `mu()`, a reader/writer lock guarding everything below;
//   * a node arena, from which its timelines allocate;
//   * the map of its timelines, each boxed so that it never moves;
//   * the expiry index: (expiry key, timeline) of every non-empty
//     timeline, which eviction walks in order. A timeline's key is at most
//     its earliest expiry: a change that makes the earliest expiry earlier
//     re-keys it, one that only makes it later (a trim at the cap, a
//     removal) leaves the key, so a put into a full timeline does not touch
//     the index. Eviction makes the key exact again when it visits;
//   * the graph nodes of its entities;
//   * counters for Stats (entries, index bytes, follow edges, evicted and
//     trimmed entries).
// Activities are not here: they live once in the ActivityStore.
//
// Thread safety
// -------------
// Methods marked ABSL_EXCLUSIVE_LOCKS_REQUIRED / ABSL_SHARED_LOCKS_REQUIRED
// run under `mu()` held by the caller, so that one hold can cover several
// of them and the change records that go with them. Methods marked
// ABSL_LOCKS_EXCLUDED take the lock themselves. The const configuration
// needs no lock.
//
// Lock order (docs/architecture.md):
//   follow stripe (FeedEngineImpl, per follower; Follow/Unfollow only)
//     -> one shard's `mu()`: no thread ever holds two shard locks
//          -> activity store shard lock (a leaf but for the change log)
//          -> leaf locks, never held while taking another: the change
//             log's mutex (every Log* call below appends under `mu()`),
//             fan-out pool mutex, fan-out tracker stripe
// Work that spans shards (fan-out, purges, merged reads) snapshots what it
// needs under one shard's lock, releases it, and then visits the other
// shards one at a time. No callback runs under `mu()`.
#ifndef FEEDCORE_SRC_FEED_SHARD_H_
#define FEEDCORE_SRC_FEED_SHARD_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/types/span.h"
#include "base/mutex.h"
#include "feed/account_lists.h"
#include "feed/relations.h"
#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "feedcore/stats.h"
#include "memory/node_arena.h"
#include "stream/change_log.h"
#include "timeline/timeline.h"

namespace feedcore::internal {

// Names one timeline in a shard: an entity's home, own or notification
// feed, or the shard's slice of the world feed (id 0).
struct TimelineId {
  EntityId id = 0;
  FeedType kind = FeedType::kHome;

  friend bool operator==(const TimelineId&, const TimelineId&) = default;
  friend auto operator<=>(const TimelineId&, const TimelineId&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const TimelineId& t) {
    return H::combine(std::move(h), t.id, static_cast<uint8_t>(t.kind));
  }
};

// Whether timelines of `kind` index group keys: notification feeds always,
// the others when the engine aggregates (`aggregation`).
inline bool KeepsGroups(FeedType kind, bool aggregation) {
  return kind == FeedType::kNotification || aggregation;
}
// `group` where timelines of `kind` index groups, else 0: group keys are
// kept only where they are used.
inline GroupKey KeptGroup(GroupKey group, FeedType kind, bool aggregation) {
  return KeepsGroups(kind, aggregation) ? group : 0;
}

// (shard of the follower, follower): sets of these, iterated in order,
// yield followers already grouped by the shard their timeline lives in.
using FollowerEdge = std::pair<uint32_t, EntityId>;

// Followers of an actor, grouped by shard: ids[starts[g]..starts[g+1])
// all live in shard shard_of_group[g].
struct FollowerSnapshot {
  std::vector<EntityId> ids;
  std::vector<size_t> starts;
  std::vector<uint32_t> shard_of_group;
  size_t groups() const { return shard_of_group.size(); }
};

// A followee merged into a follower's reads, and the oldest key of it the
// follower sees through the merge: what back-fill would have copied when it
// followed, or everything the actor published after it became merged.
// Older activities the actor publishes later (out-of-order timestamps)
// reach the follower as copies instead (feed_publish.cc).
//
// A dormant merge is one of a reader that stopped reading
// (EngineOptions::inactive_after) of an actor it was copying: its next
// read turns it back into copies (feed_inactive.cc).
struct MergedFollowee {
  EntityId actor = 0;
  EntryKey boundary;
  bool dormant = false;

  friend bool operator==(const MergedFollowee&,
                         const MergedFollowee&) = default;
};

// A time that readers write under a shard lock held shared, hence atomic;
// copyable so that a GraphNode stays a plain value.
class RelaxedMicros {
 public:
  RelaxedMicros() = default;
  RelaxedMicros(const RelaxedMicros& other) : value_(other.Load()) {}
  RelaxedMicros& operator=(const RelaxedMicros& other) {
    Store(other.Load());
    return *this;
  }
  Micros Load() const { return value_.load(std::memory_order_relaxed); }
  void Store(Micros t) const { value_.store(t, std::memory_order_relaxed); }

 private:
  mutable std::atomic<Micros> value_{0};
};

// An entry of an entity's own feed pinned to its top (EditsAndPins::Pin);
// the actor is the entity.
struct PinnedEntry {
  EntryKey key;
  Micros expires_at = 0;

  friend bool operator==(const PinnedEntry&, const PinnedEntry&) = default;
};

// The feed a read marker is kept for: (feed type, owner), ordered so that
// a node's markers are listed the same way every time (snapshots).
using MarkerFeedKey = std::pair<FeedType, EntityId>;

// One entity's place in the follow graph, and what it keeps about its own
// reading.
struct GraphNode {
  // Followers but the dormant ones (`dormant_followers`).
  absl::btree_set<FollowerEdge> followers;
  absl::btree_set<EntityId> following;
  // Followers whose Unfollow is still removing this entity's entries from
  // their timeline; Retract purges them too.
  absl::btree_set<FollowerEdge> unfollowing;
  // Former followers that kept the copies they had (Unfollow with
  // UnfollowOptions::keep_history); Retract purges them too. One that
  // follows again leaves this set.
  absl::btree_set<FollowerEdge> history_kept;
  // Followees that are merged at read time rather than copied.
  std::vector<MergedFollowee> hybrid_following;
  // How many of `hybrid_following` are dormant merges.
  uint32_t dormant_merges = 0;
  // As a reader: when it last read its timeline or followed, by the
  // engine's clock (kept with EngineOptions::inactive_after only).
  RelaxedMicros last_read;
  // As an actor: the followers whose merge of it is dormant, kept apart
  // from `followers` (which holds the others) so that its publishes in
  // timestamp order, which skip them, cost nothing per dormant follower.
  absl::btree_set<FollowerEdge> dormant_followers;
  // As an actor: the newest key it put into its own feed while this node
  // existed (and the own feed's newest when the node was made by a
  // follow). Every boundary its followers hold is at most just above it,
  // so a publish newer than it needs no copies even while merged.
  std::optional<EntryKey> newest_published;
  // Set while this actor's followers are being told to merge it; copies
  // continue until `hybrid` is set.
  bool becoming_hybrid = false;
  bool hybrid = false;
  // The entity's read markers (SetReadMarker): the key of the last item it
  // read, per feed. A node that holds only markers is kept.
  absl::btree_map<MarkerFeedKey, EntryKey> read_markers;
  // The entity's mentions (PublishOptions::mentions) newer than its marker
  // in each channel: channel (own feed owner) -> keys, ascending, at most
  // kMaxMentionsPerFeed. Retracted, expired and trimmed ones stay until a
  // marker passes them; counts are of those the channel's own feed holds.
  absl::btree_map<EntityId, std::vector<EntryKey>> mentions;
  // Mute and block, both sides (relations.h).
  Relations relations;
  // As an actor: its pins, the most recently pinned first, at most
  // kMaxPinnedEntries visible ones (expired ones stay until its next Pin).
  std::vector<PinnedEntry> pinned;
  // Its lists of accounts (FeedLists); null until it makes one, and again
  // once it has none.
  std::unique_ptr<OwnerLists> lists;

  size_t follower_count() const {
    return followers.size() + dormant_followers.size();
  }
  bool HasFollower(FollowerEdge edge) const {
    return followers.contains(edge) || dormant_followers.contains(edge);
  }
  // Moves `edge` between `followers` and `dormant_followers`; false if it
  // is not a follower or is there already.
  bool SetDormantFollower(FollowerEdge edge, bool dormant) {
    absl::btree_set<FollowerEdge>& from =
        dormant ? followers : dormant_followers;
    absl::btree_set<FollowerEdge>& to = dormant ? dormant_followers : followers;
    if (from.erase(edge) == 0) return false;
    to.insert(edge);
    return true;
  }

  // The merged-at-read entry for `actor`, or nullptr.
  const MergedFollowee* FindMerged(EntityId actor) const {
    for (const MergedFollowee& m : hybrid_following) {
      if (m.actor == actor) return &m;
    }
    return nullptr;
  }
  MergedFollowee* FindMerged(EntityId actor) {
    for (MergedFollowee& m : hybrid_following) {
      if (m.actor == actor) return &m;
    }
    return nullptr;
  }
  // Adds `actor` merged from `boundary` (a dormant merge if `dormant`)
  // unless it is merged already; true if added.
  bool AddMerged(EntityId actor, EntryKey boundary, bool dormant = false) {
    if (FindMerged(actor) != nullptr) return false;
    hybrid_following.push_back({actor, boundary, dormant});
    dormant_merges += dormant ? 1 : 0;
    return true;
  }
  // Makes the merge of `actor` an ordinary one (the actor is merged at
  // read for every follower now); true if it was dormant.
  bool EndDormantMerge(EntityId actor) {
    MergedFollowee* m = FindMerged(actor);
    if (m == nullptr || !m->dormant) return false;
    m->dormant = false;
    --dormant_merges;
    return true;
  }
  // Moves the merge of `actor` to begin at `boundary`; true if merged.
  bool SetMergedBoundary(EntityId actor, EntryKey boundary) {
    for (MergedFollowee& m : hybrid_following) {
      if (m.actor == actor) {
        m.boundary = boundary;
        return true;
      }
    }
    return false;
  }
  void EraseMerged(EntityId actor) {
    std::erase_if(hybrid_following, [&](const MergedFollowee& m) {
      if (m.actor != actor) return false;
      dormant_merges -= m.dormant ? 1 : 0;
      return true;
    });
  }
  // Where followers that start merging this actor now begin: just above
  // everything it has published.
  EntryKey MergeBoundaryNow() const;
  void NotePublished(EntryKey key) {
    if (!newest_published.has_value() || *newest_published < key) {
      newest_published = key;
    }
  }

  bool Unused() const {
    return followers.empty() && following.empty() && unfollowing.empty() &&
           history_kept.empty() && hybrid_following.empty() &&
           dormant_followers.empty() && !becoming_hybrid && !hybrid &&
           read_markers.empty() && mentions.empty() && relations.empty() &&
           pinned.empty() && lists == nullptr;
  }
  // Appends the followers to `snapshot`, grouped by shard: `followers`,
  // with `with_dormant` also `dormant_followers`, and with
  // `with_unfollowing` also the followers whose Unfollow is in progress and
  // those that kept their history. O(the sets walked).
  void SnapshotFollowers(FollowerSnapshot* snapshot,
                         bool with_unfollowing = false,
                         bool with_dormant = true) const;
};

// Calls that touch many entities visit their shards in runs:
// positions 0..n-1 ordered by `shard_of(position)`, call order within a
// shard, and the runs of equal shards: each run is one lock hold.
template <typename ShardOf>
std::vector<std::pair<uint32_t, std::vector<size_t>>> RunsByShard(
    size_t n, ShardOf shard_of) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return shard_of(a) < shard_of(b);
  });
  std::vector<std::pair<uint32_t, std::vector<size_t>>> runs;
  for (const size_t i : order) {
    if (runs.empty() || runs.back().first != shard_of(i)) {
      runs.push_back({shard_of(i), {}});
    }
    runs.back().second.push_back(i);
  }
  return runs;
}

// What every shard of an engine shares; fixed at construction.
// Entries a timeline keeps, by FeedType (FeedCapsOf).
using FeedCaps = std::array<size_t, 4>;

// The caps of an engine with these EngineOptions: max_timeline_length for
// home and own feeds, world_timeline_length for the world feed's slices,
// notifications.max_length for notification feeds.
FeedCaps FeedCapsOf(size_t max_timeline_length, size_t world_timeline_length,
                    size_t notification_length);

struct ShardConfig {
  // Null when changes are not recorded.
  ChangeLog* log = nullptr;
  // Decides skiplist node heights; fixed so that runs are reproducible.
  uint64_t height_seed = 0;
  FeedCaps caps = {};
  // EngineOptions::aggregation.enabled: home, own and world timelines keep
  // group keys too.
  bool aggregation = false;
};

class alignas(64) Shard {
 public:
  // Records its changes as domain `domain` (its index in the engine).
  Shard(const ShardConfig& config, uint32_t domain);
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  // The lock guarding all of this shard's state.
  SharedMutex& mu() const ABSL_LOCK_RETURNED(mu_) { return mu_; }

  uint32_t domain() const { return domain_; }
  // Entries a timeline of `kind` keeps.
  size_t Cap(FeedType kind) const {
    return config_.caps[static_cast<size_t>(kind)];
  }
  bool KeepsGroups(FeedType kind) const {
    return internal::KeepsGroups(kind, config_.aggregation);
  }

  // --- Timelines ---

  // Puts one entry into a timeline, creating it if needed, and adds the
  // outcome to `result`. O(log n).
  void Put(TimelineId id, const StoredEntry& entry, InsertResult* result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts `entry` into the `kind` timeline of every owner (all of this
  // shard), prefetching hash slots and records a few owners ahead so that
  // the cache misses of consecutive owners overlap.
  void PutMany(absl::Span<const EntityId> owners, FeedType kind,
               const StoredEntry& entry, InsertResult* result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes one key from a timeline; false if absent.
  bool RemoveKey(TimelineId id, EntryKey key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes every entry of `actor` from `owner`'s `kind` timeline (home
  // by default), or those at or above `from`; returns how many.
  // O(entries of the timeline).
  size_t RemoveActor(EntityId owner, EntityId actor,
                     FeedType kind = FeedType::kHome,
                     EntryKey from = EntryKey::Min())
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The timeline `id`, or nullptr if it holds nothing.
  const Timeline* FindTimeline(TimelineId id) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    auto it = timelines_.find(id);
    return it == timelines_.end() ? nullptr : &it->second->timeline;
  }
  Timeline* FindTimeline(TimelineId id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = timelines_.find(id);
    return it == timelines_.end() ? nullptr : &it->second->timeline;
  }
  // Appends to `out` up to `want` visible entries of the timeline `id`
  // within [lo, hi], in `order` (Timeline::Collect), under the lock held
  // shared; only the `kinds` kept (KindFilter::kinds).
  void Collect(TimelineId id, ReadOrder order, EntryKey lo, EntryKey hi,
               Micros now, size_t want, std::vector<StoredEntry>* out,
               uint64_t kinds = KindFilter::kEveryKind) const
      ABSL_LOCKS_EXCLUDED(mu_);

  size_t timeline_count() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return timelines_.size();
  }
  size_t entry_count() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return entries_;
  }
  // Calls fn(TimelineId, const Timeline&) for every timeline, in the
  // map's order.
  template <typename Fn>
  void ForEachTimeline(Fn&& fn) const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    for (const auto& [id, record] : timelines_) fn(id, record->timeline);
  }

  // --- Notification feeds ---

  // `user`'s notification feed after reclaiming (and recording) its
  // expired entries, or nullptr if it holds nothing. O(1) when nothing in
  // it has expired.
  Timeline* Notifications(EntityId user, Micros now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks `user`'s notification feed `feed` seen (`read` false) or read:
  // one group if `key` is given, else every group; records it. False if
  // `key` is not in the feed (nothing changes).
  bool Mark(Timeline& feed, EntityId user, bool read, const EntryKey* key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- Follow graph ---

  const GraphNode* FindNode(EntityId entity) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    auto it = graph_.find(entity);
    return it == graph_.end() ? nullptr : &it->second;
  }
  GraphNode* FindNode(EntityId entity) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = graph_.find(entity);
    return it == graph_.end() ? nullptr : &it->second;
  }
  // `entity`'s node, created empty if it has none. Nodes never move.
  GraphNode& Node(EntityId entity) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return graph_[entity];
  }
  // The newest key of `actor`'s own feed, expired entries included.
  std::optional<EntryKey> NewestOwnKey(EntityId actor) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Adds `edge` to the followers of `followee` (creating its node; its
  // newest_published takes in the own feed's newest key) and counts it. Returns
  // the node, or nullptr if the edge was there (dormant or not).
  GraphNode* AddFollower(EntityId followee, FollowerEdge edge)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes `edge` from the followers of `followee`, dormant or not.
  // Returns the node, or nullptr if the edge was not there.
  GraphNode* RemoveFollower(EntityId followee, FollowerEdge edge)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops `entity`'s node if it no longer holds anything.
  void MaybeEraseNode(EntityId entity) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  size_t node_count() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return graph_.size();
  }
  // Calls fn(EntityId, const GraphNode&) for every node.
  template <typename Fn>
  void ForEachNode(Fn&& fn) const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    for (const auto& [entity, node] : graph_) fn(entity, node);
  }

  // --- Expiry ---

  // Evicts up to `budget` entries expired at `now`, taking the lock once
  // per kEvictionChunk entries; returns how many. Returns the arena's spare
  // blocks when done.
  size_t Evict(Micros now, size_t budget) ABSL_LOCKS_EXCLUDED(mu_);
  // Entries evicted per hold of the lock (a few microseconds of work):
  // readers and writers of a shard being swept wait for one chunk at most.
  // In the soak run, 256 left read p99 at about 0.3 ms, 64 at about 0.1 ms.
  static constexpr size_t kEvictionChunk = 64;

  // --- Change records ---
  // Each appends one record to the change log. REQUIRES: a change log.

  // `kind` of `entry` in the `feed` timelines of `owners`.
  void LogEntries(ChangeKind kind, FeedType feed,
                  absl::Span<const EntityId> owners,
                  const StoredEntry& entry) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A graph edge (or kTimelineRemoveActor) between `entity` and `other`.
  void LogEdge(ChangeKind kind, EntityId entity, EntityId other,
               bool merged = false) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LogMode(EntityId actor, ActorMode mode) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Appends `record` as this shard's.
  void Log(ChangeRecord&& record) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- Statistics ---

  // Fills `out` with this shard's figures and adds them, with the evicted
  // and trimmed entries and follow edges, to `totals`. Takes the lock
  // shared.
  void AddStats(ShardStats* out, EngineStats* totals) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct TimelineRecord {
    TimelineRecord(NodeArena* arena, uint64_t seed) : timeline(arena, seed) {}
    Timeline timeline;
    // The key this timeline has in `expiry_` (at most its MinExpiry), or
    // Micros max if none.
    Micros indexed_expiry = std::numeric_limits<Micros>::max();
  };
  // Records are boxed so that a Timeline never moves, and the key sits in
  // the slot so a lookup touches the record only when it is needed (the
  // fan-out loop prefetches slots and records ahead). The slot also keeps
  // where the timeline's newest chunk was after its last change, so that a
  // put fetches the record and that chunk together once it has read the
  // slot: in a large engine each is a cache miss, and the chunk's address
  // would otherwise be known only after the record arrived. The address is
  // only ever prefetched, never dereferenced, so a stale one costs nothing
  // but the prefetch.
  struct RecordSlot {
    std::unique_ptr<TimelineRecord> record;
    const void* newest_chunk = nullptr;

    TimelineRecord* operator->() const { return record.get(); }
    TimelineRecord& operator*() const { return *record; }
  };
  using TimelineMap = absl::flat_hash_map<TimelineId, RecordSlot>;

  // Prefetches the record of `slot` and its newest chunk for writing.
  static void PrefetchRecord(const RecordSlot& slot);
  // Put without fetching the hash slot first (the caller did, or PutMany
  // fetched it ahead), and without fetching the record when
  // `record_fetched`.
  void PutFetched(TimelineId id, const StoredEntry& entry, InsertResult* result,
                  bool record_fetched) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Call after any change to a timeline: lowers its expiry key when its
  // earliest expiry went below it (or sets it to exactly its earliest
  // expiry with `exact_key`, as eviction does) and drops the timeline when
  // empty. `it` is invalid afterwards.
  void AfterChange(TimelineMap::iterator it, size_t index_bytes_before,
                   size_t size_before, bool exact_key = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Evicts expired entries until `*evicted_so_far` reaches `chunk_end`,
  // adding to it; false once the shard holds nothing expired.
  bool EvictChunk(Micros now, size_t chunk_end, size_t* evicted_so_far)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reclaims up to `budget` expired entries of the timeline `it` and
  // records them; returns how many. `it` is invalid afterwards.
  size_t EvictTimeline(TimelineMap::iterator it, Micros now, size_t budget)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ShardConfig config_;
  const uint32_t domain_;

  // ActivityStore names mu_ to order its own shard locks after it.
  friend class ActivityStore;
  mutable SharedMutex mu_;
  NodeArena arena_ ABSL_GUARDED_BY(mu_);
  TimelineMap timelines_ ABSL_GUARDED_BY(mu_);
  absl::btree_set<std::pair<Micros, TimelineId>> expiry_ ABSL_GUARDED_BY(mu_);
  absl::node_hash_map<EntityId, GraphNode> graph_ ABSL_GUARDED_BY(mu_);
  size_t follow_edges_ ABSL_GUARDED_BY(mu_) = 0;
  size_t entries_ ABSL_GUARDED_BY(mu_) = 0;
  size_t index_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t evicted_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t trimmed_ ABSL_GUARDED_BY(mu_) = 0;
};

// An engine's shards, built in place in one allocation (a Shard cannot
// move: it holds its mutex), each on its own cache lines.
class ShardSet {
 public:
  // Shard s records its changes as domain s.
  ShardSet(size_t count, const ShardConfig& config);
  ~ShardSet();
  ShardSet(const ShardSet&) = delete;
  ShardSet& operator=(const ShardSet&) = delete;

  Shard& operator[](size_t i) { return shards_[i]; }
  const Shard& operator[](size_t i) const { return shards_[i]; }
  size_t size() const { return count_; }

 private:
  const size_t count_;
  Shard* const shards_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_FEED_SHARD_H_
