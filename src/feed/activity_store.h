// ActivityStore: every published activity, stored once, sharded by id.
//
// Timelines hold only keys `(ts, activity_id, actor)`; the body (opaque
// payload bytes) lives here once, however many timelines reference it.
// A retracted activity stays as a tombstone (no payload) until it expires,
// so that re-publishing its id cannot bring it back.
//
// Thread safety
// -------------
// Every method is thread-safe. Each call holds at most one store shard lock
// and takes no other lock while holding it (a leaf in the engine's lock
// order).
#ifndef FEEDCORE_SRC_FEED_ACTIVITY_STORE_H_
#define FEEDCORE_SRC_FEED_ACTIVITY_STORE_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/mutex.h"
#include "contract/rank_formula.h"
#include "feed/reaction_table.h"
#include "feed/shard.h"
#include "feedcore/clock.h"
#include "feedcore/social.h"
#include "feedcore/types.h"
#include "stream/change_log.h"

namespace feedcore::internal {

struct StoredActivity {
  EntityId actor = 0;
  Micros ts = 0;
  Micros expires_at = 0;
  std::string payload;
  // True when its key was copied into followers' timelines (not merged at
  // read time), so retraction must purge those copies.
  bool copied = false;
  bool retracted = false;
  // Entities whose notification feed got the activity
  // (PublishOptions::notify), so that retraction can reach them; ordered
  // by (shard, id), each once. Emptied by retraction.
  std::vector<EntityId> notified;
  // FeedEngine::IncrementCounter's counters, and the engine clock's time
  // of their last change (kNeverCounted: never), which ranked reads
  // compare with a walk's start.
  ActivityCounters counters = {};
  Micros counters_changed_at = kNeverCounted;
  // When EditsAndPins::EditActivity last replaced the payload, by the
  // engine clock; 0 if never.
  Micros edited_at = 0;
  ActivityKind kind = 0;     // Activity::kind
  ActivityId repost_of = 0;  // Activity::repost_of
};

// What Pin needs to know of an activity.
struct ActivityFacts {
  EntityId actor = 0;
  Micros ts = 0;
  Micros expires_at = 0;
};

struct ActivityStoreStats {
  size_t activities = 0;  // live and retracted
  size_t retracted = 0;
  size_t payload_bytes = 0;
  size_t bytes_used = 0;
  uint64_t evicted = 0;
};

class ActivityStore {
 public:
  // Records its changes in `log` (if not null), shard s as domain
  // `domain_base + s`.
  ActivityStore(size_t shards, ChangeLog* log, uint32_t domain_base);
  ActivityStore(const ActivityStore&) = delete;
  ActivityStore& operator=(const ActivityStore&) = delete;

  // Stores `activity` under `id`. Returns true if it was new, false if the
  // same activity (actor, ts, kind and payload; once edited, not payload) is
  // already stored. AlreadyExists when the id is taken by a different
  // activity; FailedPrecondition when the id was retracted.
  absl::StatusOr<bool> Put(ActivityId id, const StoredActivity& activity);

  // Marks `id` retracted and frees its payload, recipient list and
  // reactions (appending their notice ids to `notices`, if not null);
  // returns the activity as it was. NotFound if the id is unknown (never
  // stored, or evicted). `already` is set when it was retracted before
  // (nothing changes then).
  absl::StatusOr<StoredActivity> Retract(
      ActivityId id, bool* already, std::vector<ActivityId>* notices = nullptr);

  // Sets the payload and edited_at of every entry whose activity is stored
  // and not retracted (with `payloads`) and, with `kinds`, the kind of
  // every entry whose activity is stored (for entries that keep no kind:
  // pins). Takes each shard's lock once.
  void Hydrate(std::vector<StoredEntry>* entries, bool payloads = true,
               bool kinds = false) const;

  // Sets `reposted[i]` to the Activity::repost_of of `entries[i]`'s stored
  // activity when the entry's kind is in `repost_kinds` (KindFilter::kinds),
  // else 0. Takes each shard's lock once.
  void RepostsOf(absl::Span<const StoredEntry> entries, uint64_t repost_kinds,
                 std::vector<ActivityId>* reposted) const;

  // Keeps only the entries whose activity is stored, not retracted, and
  // was copied to followers at publish time (the others reach followers
  // through the read-time merge, or not at all). For back-fill.
  void KeepCopyable(std::vector<StoredEntry>* entries) const;
  // Keeps only the entries whose activity is stored and not retracted:
  // what a Follow's back-fill copies, whatever the actor's fan-out mode.
  void KeepLive(std::vector<StoredEntry>* entries) const;

  // Adds `delta` to counter `counter` (< kActivityCounterCount) of `id`
  // and returns the counters after it; the clock is read under the shard's
  // lock, so a reader that looked at the counters before the change took
  // its time before the change's time (ranked walks rely on it). NotFound
  // for an unknown, retracted or expired (by `clock`) activity;
  // InvalidArgument for a sum out of int64_t's range (nothing changes).
  absl::StatusOr<ActivityCounters> IncrementCounter(ActivityId id,
                                                    size_t counter,
                                                    int64_t delta,
                                                    const Clock& clock);
  // The counters of `id`; NotFound as IncrementCounter.
  absl::StatusOr<ActivityCounters> Counters(ActivityId id, Micros now) const;
  // Sets the counters of `id` as they are and records it (replaying
  // kCountersSet); false if `id` is not stored.
  bool RestoreCounters(ActivityId id, const ActivityCounters& counters,
                       Micros changed_at);
  // The counters of each entry's activity (`out[i]` for `entries[i]`;
  // zero for an activity not stored, retracted and expired ones included:
  // their counters stay until eviction, so that an entry's score does not
  // move without its change time moving too). Takes each shard's lock once
  // and prefetches the table slots of a shard's entries before reading
  // them.
  void LookupCounters(absl::Span<const StoredEntry> entries,
                      std::vector<CounterState>* out) const;

  // Replaces the payload of `actor`'s activity `id`, stamped edited at
  // `clock`'s time (read under the shard's lock), and records it; returns
  // that time. NotFound for an unknown, retracted or expired activity;
  // PermissionDenied when `actor` is not its actor.
  absl::StatusOr<Micros> Edit(ActivityId id, EntityId actor,
                              std::string_view payload, const Clock& clock);
  // Makes the edit a kActivityEdit record describes and records it; false
  // if `id` is not stored or is retracted.
  bool RestoreEdit(ActivityId id, std::string_view payload, Micros edited_at);
  // Whether `id` is stored (live, expired or retracted).
  bool Holds(ActivityId id) const;
  // The facts of `id` if it is stored, not retracted and visible at `now`.
  std::optional<ActivityFacts> FindLive(ActivityId id, Micros now) const;

  // Reactions (reaction_table.h; the engine's side is feed_reactions.cc).
  //
  // Adds `user`'s reaction `kind` to `id` at `clock`'s time (read under the
  // shard's lock) with `notice_id` (0: none; kept only if `user` is not the
  // actor) and 1 to counter `kind`, and records both; `changed` false when
  // the reaction is there (nothing changes). NotFound as IncrementCounter;
  // InvalidArgument when the counter is at int64's maximum.
  struct ReactionChange {
    bool changed = false;
    ActivityCounters counters = {};
    ActivityFacts facts;       // of the reacted activity
    ActivityId notice_id = 0;  // React: kept; Unreact: to retract
  };
  absl::StatusOr<ReactionChange> React(ActivityId id, EntityId user,
                                       ReactionKind kind, ActivityId notice_id,
                                       const Clock& clock);
  // Takes the reaction back and 1 from counter `kind`, and records both;
  // `changed` false when there was none. Errors as React (InvalidArgument at
  // int64's minimum).
  absl::StatusOr<ReactionChange> Unreact(ActivityId id, EntityId user,
                                         ReactionKind kind, const Clock& clock);
  // `out[i]`: the kinds `user` reacted to `ids[i]` with (0 for an activity
  // unknown, retracted or expired at `now`). Each shard's lock once, one
  // prefetched probe per id.
  void LookupReactions(EntityId user, absl::Span<const ActivityId> ids,
                       Micros now, std::vector<ReactionKinds>* out) const;
  // Whether `user`'s reaction `kind` to `id` is there with notice
  // `notice_id`.
  bool HoldsNotice(ActivityId id, EntityId user, ReactionKind kind,
                   ActivityId notice_id) const;
  // Up to `limit` reactors of (`id`, `kind`) below `after`, the most recent
  // first. NotFound as React.
  absl::StatusOr<std::vector<Reactor>> Reactors(
      ActivityId id, ReactionKind kind, const std::optional<Reactor>& after,
      size_t limit, Micros now) const;
  // Makes the change a kReactionAdd (`add`) or kReactionRemove record
  // describes, and records it; false if `id` is not stored or is
  // retracted. Counters are restored by their own record.
  bool RestoreReaction(const ReactionFacts& reaction, bool add);
  // As RestoreReaction(add), but records nothing (loading a snapshot);
  // false when the activity is not in this store, or is retracted.
  bool LoadReaction(const ReactionFacts& reaction);
  // Drops up to `budget` activities (and tombstones) with expires_at <= now.
  size_t EvictExpired(Micros now, size_t budget);

  ActivityStoreStats Stats() const;

  size_t shard_count() const { return shard_count_; }

  // Calls `fn(activities, reactions)` with shard `s`'s map and
  // ReactionTable while holding its lock shared (for snapshots: the log's
  // next sequence read inside `fn` splits the shard's records into those
  // `fn` sees and those it does not).
  template <typename Fn>
  void VisitShard(size_t s, Fn&& fn) const {
    const Shard& shard = shards_[s];
    ReaderLock lock(&shard.mu);
    fn(shard.activities, shard.reactions);
  }

  // Puts `activity` under `id` as it is, replacing what is there, and
  // records it (replaying kActivityStore records).
  void Restore(ActivityId id, const StoredActivity& activity);
  // As Restore, but records nothing (loading a snapshot).
  void Load(ActivityId id, const StoredActivity& activity);
  // The shard that holds `id`.
  size_t ShardOf(ActivityId id) const { return ShardIndex(id); }
  // Drops `id` if stored (replaying kActivityExpire).
  void Drop(ActivityId id);

 private:
  struct alignas(64) Shard {
    // The lock order of docs/architecture.md, checked by clang
    // (-Wthread-safety-beta): an engine shard's lock may be held while
    // this one is taken, never the other way round.
    mutable SharedMutex mu
        ABSL_ACQUIRED_AFTER(::feedcore::internal::Shard::mu_);
    absl::flat_hash_map<ActivityId, StoredActivity> activities
        ABSL_GUARDED_BY(mu);
    absl::btree_set<std::pair<Micros, ActivityId>> expiry ABSL_GUARDED_BY(mu);
    size_t retracted ABSL_GUARDED_BY(mu) = 0;
    size_t payload_bytes ABSL_GUARDED_BY(mu) = 0;
    // Recipients held in `notified` lists.
    size_t notified ABSL_GUARDED_BY(mu) = 0;
    uint64_t evicted ABSL_GUARDED_BY(mu) = 0;
    ReactionTable reactions ABSL_GUARDED_BY(mu);
  };

  size_t ShardIndex(ActivityId id) const;
  // The indexes 0..n-1 of the ids `id_of` gives, grouped by shard: shard
  // s's are order[run_end[s]..run_end[s + 1]), so that a lookup of many
  // takes each shard's lock once.
  // Inline room for a page's ids and a default engine's shards: no heap.
  using ShardOrder = absl::InlinedVector<uint32_t, 64>;
  void OrderByShard(size_t n, absl::FunctionRef<ActivityId(size_t)> id_of,
                    ShardOrder* order, ShardOrder* run_end) const;
  void LogStoreLocked(size_t s, ActivityId id,
                      const StoredActivity& activity) const;
  void LogCountersLocked(size_t s, ActivityId id,
                         const StoredActivity& activity) const;
  void LogEditLocked(size_t s, ActivityId id,
                     const StoredActivity& activity) const;
  void LogReactionLocked(size_t s, const ReactionFacts& reaction,
                         bool add) const;
  // Gives `activity` of `shard` (number `s`) `payload` edited at
  // `edited_at`, and records it.
  void EditLocked(Shard& shard, size_t s, ActivityId id,
                  StoredActivity& activity, std::string_view payload,
                  Micros edited_at) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  void ReplaceLocked(Shard& shard, ActivityId id,
                     const StoredActivity& activity)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  void EraseLocked(Shard& shard,
                   absl::flat_hash_map<ActivityId, StoredActivity>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);

  const size_t shard_count_;
  ChangeLog* const log_;
  const uint32_t domain_base_;
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_FEED_ACTIVITY_STORE_H_
