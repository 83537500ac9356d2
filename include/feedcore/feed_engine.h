// FeedEngine: activity feeds in memory: a social graph, fan-out on write,
// per-entity timelines sharded by lock.
//
// Three kinds of feed are read with the same paging:
//   * an entity's timeline (home feed): what it follows, ReadTimeline;
//   * an actor's own feed: what it published, ReadOwn;
//   * the world feed: everything published, ReadWorld.
// Publish stores an activity once and puts its key into the actor's own
// feed, the world feed and every follower's timeline (fan-out on write).
// Follow copies the followee's recent activities into the follower's
// timeline (back-fill); Unfollow removes them again; Retract removes an
// activity from every feed.
//
// Hybrid fan-out (EngineOptions::hybrid_fanout_threshold): actors with
// very many followers are not copied; their followers' reads merge their
// own feeds in, and show what copies would have shown, so that a reader's
// pages do not depend on the threshold:
//   * a follower merges a followee from a boundary key: the oldest entry
//     back-fill would have copied when it followed (just above everything
//     the actor had published if that is none), or, for a follower from
//     before the actor became merged, just above everything it had
//     published then (those activities were copied);
//   * an activity the actor publishes later with a key older than a
//     follower's boundary (an out-of-order timestamp) is copied to that
//     follower, as it would have been (O(followers) for such a publish);
//   * a merged timeline shows the newest `max_timeline_length` entries of
//     its copies and merged entries together, counted as a timeline's cap
//     counts them (expired entries not yet reclaimed included);
//   * Unfollow with `keep_history` keeps what the merge showed, as copies.
// Pages (either order, windows, cursors), CountNewer and ReadGroups are
// then those of an engine that copies everything, except in this sequence:
// a reader's merged view is over `max_timeline_length`, and then entries
// leave it (Unfollow, Retract, Remove, expiry), or the reader follows an
// actor merged at read whose own feed holds entries expired but not yet
// reclaimed above the boundary. With copies, entries pushed out by the cap
// never come back and expired entries a back-fill skipped never count;
// the merge recomputes the newest `max_timeline_length` of what it holds
// now, so older entries may show again, or fewer show. Making that exact
// would cost work per follower at every publish, which hybrid fan-out
// exists to avoid. Remove of an entry a merged actor published finds no
// copy (NotFound). Results that count copies (FollowResult::backfilled,
// UnfollowResult::removed, PublishResult::fanned_out, EvictExpired, Stats)
// count the copies this engine holds, which merged actors do not have.
//
// Inactive readers (EngineOptions::inactive_after): a reader that has
// neither read its timeline (ReadTimeline, ReadGroups, ReadRanked,
// CountNewer) nor followed anyone for that long is made dormant by the sweeper
// or ReleaseInactiveReaders: each followee it was copying is merged at read
// from the oldest copy it held (as a follower of a hybrid actor merges it),
// those copies are dropped, and publishes in timestamp order skip it, so a
// publish costs work in proportion to the active followers. A followee it
// mutes (the mute in force) stays copied: what that one publishes during
// the mute never shows, also once the mute expires, as for a reader that
// stayed materialized. Its next read first rebuilds the copies (the newest
// `max_timeline_length` of what the merge shows, one lock per shard of its
// followees) and then answers, so its pages are those it would have had
// had it stayed materialized, with the same exception as hybrid fan-out
// (above) at a full timeline, but for Unfollow, Mute and Block of the
// reader: these rebuild it first, so what the cap pushed out stays out. A
// read that meets a Follow, Unfollow or release of the same reader in
// progress answers from the merge (the same pages) and leaves the rebuild
// to a later read, so that a read never waits for them. A followee whose
// copies did not match its own feed (a Remove, a mute, a delivery still in
// flight) keeps its copies and merges only what is published after.
//
// Reposts (EngineOptions::reposts): with a window of w, a home timeline
// leaves out a repost (Activity::repost_of set) while the activity it
// reposts, or an older repost of it, is among the w visible entries just
// older than it in the timeline, every kind counted, hidden reposts too.
// Every read of the timeline (pages, CountNewer, ReadGroups, ReadRanked,
// a home read marker's unread count) leaves the same reposts out, before
// its own kind filter, whether the entries are copied, merged or rebuilt.
// As a repost's place depends only on older entries, a newer publish
// never changes what a page showed; an original that leaves (Retract,
// expiry, the cap) lets its reposts show. Costs nothing for a timeline
// read whose entries include none of the repost kinds; otherwise one more
// read of up to w entries and a lookup per repost. Deliveries
// (on_delivery, FeedDeliveries) tell of every entry delivered, hidden
// reposts too: deciding at delivery would cost a read per follower.
// Exclusive lists (ListSettings::exclusive, feed_facets.h) leave their
// members' entries out of the same reads, before the repost window looks.
//
// A feed is an ordered set of entries keyed by `(ts, activity_id)`, read
// newest-first (or oldest-first) a page at a time with opaque cursors.
// Every entry expires; expired entries are never returned and their memory
// is reclaimed by `EvictExpired` or by a background sweeper. Each timeline
// holds at most `EngineOptions::max_timeline_length` entries; inserting
// beyond that drops the oldest.
//
//   auto engine = feedcore::FeedEngine::Create({}).value();
//   engine->Insert(/*owner=*/42, {.ts = now, .activity_id = 7, .actor = 9});
//   feedcore::ReadOptions read;
//   do {
//     auto page = engine->ReadTimeline(42, read).value();
//     ...use page.entries...
//     read.cursor = page.next_cursor;
//   } while (!read.cursor.empty());
//
// `Create` builds the in-process engine described here. The same interface
// is also implemented on a Redis Cluster (redis_cluster.h), for feeds
// larger than one process or shared by several; what that backend does
// differently is listed there.
//
// Core and facets
// ---------------
// FeedEngine is the core every backend implements: inserts, the three
// reads, grouped reads, the follow graph and publishing (20 pure virtuals;
// a fake for a program's tests implements those). What a backend offers
// beyond it comes in facets (feed_facets.h): notification feeds, mute and
// block, read markers, counters with ranked reads, edits and pins, and the
// maintenance of
// an in-process engine's memory. FeedEngine's accessors return the facets
// an engine has, nullptr for the others; the concrete types say it too:
// `Create` returns an InProcessFeedEngine, which is every facet, and the
// Redis Cluster backend's RedisClusterFeedEngine (redis_cluster.h) is
// every facet but FeedMaintenance. The library never casts an engine to a
// backend of its own: what it does with a FeedEngine goes through these
// virtuals, and snapshots (snapshot.h) take the in-process type.
//
// Paging is keyset-based: a cursor names the last key returned, so entries
// inserted while a reader pages never cause a duplicate, and no entry older
// (for newest-first) than the cursor is skipped.
//
// Errors
// ------
// Every call validates all of its arguments before changing anything: a call
// that returns an error has changed nothing. Errors are
// `InvalidArgument` (bad option, malformed or foreign cursor, timestamp
// below zero, expiry in the past) or `NotFound` (removing an absent entry),
// with a message naming the offending argument. A backend on a server adds
// its own failures to every call (redis_cluster.h: `Unavailable`,
// `Internal`); that is why counts and other answers read from the server
// are `StatusOr`.
//
// Consistency of the social calls
// -------------------------------
// Publish, Follow, Unfollow and Retract are linearizable per actor with
// respect to the copies they leave: after Unfollow(r, a) returns, r's
// timeline holds none of a's activities, even if a publish of a's was
// fanning out concurrently (Unfollow waits for deliveries of a that began
// before it); after Retract(id) returns, no feed returns id. Follow and
// Unfollow calls of the same follower are serialized.
//
// Thread safety
// -------------
// Every method may be called from any number of threads at once. Writes to
// timelines in different shards never contend; reads of one shard share its
// lock. Each call is atomic per shard: a reader sees a batch insert into
// its own timeline either entirely or not at all, but a batch that spans
// shards becomes visible shard by shard. The engine must outlive every call
// in progress; destroying it stops and joins the background sweeper.
#ifndef FEEDCORE_FEED_ENGINE_H_
#define FEEDCORE_FEED_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "feedcore/export.h"
#include "feedcore/feed_facets.h"
#include "feedcore/options.h"
#include "feedcore/social.h"
#include "feedcore/stats.h"
#include "feedcore/types.h"

namespace feedcore {
namespace internal {
class FeedEngineImpl;
}  // namespace internal

class InProcessFeedEngine;

// What an insert did. `inserted + replaced + rejected_by_cap` equals the
// number of (owner, entry) pairs in the call.
struct InsertResult {
  size_t inserted = 0;  // new keys stored
  size_t replaced = 0;  // existing keys overwritten (idempotent put)
  // Entries older than a full timeline's oldest: dropped at once, as if
  // inserted and immediately trimmed.
  size_t rejected_by_cap = 0;
  size_t trimmed = 0;  // older entries dropped to make room
};

struct FollowResult {
  bool created = false;  // false: already following (nothing changed)
  // Entries copied into the follower's timeline; 0 for a followee merged
  // at read (its entries show through the merge, from the same place).
  size_t backfilled = 0;
  // FollowMany only: refused, because one of the two blocks the other
  // (nothing changed for this pair).
  bool blocked = false;
};

struct UnfollowResult {
  bool was_following = false;  // false: nothing to undo (nothing changed)
  size_t removed = 0;          // entries removed from the follower's timeline
};

struct PublishResult {
  // False when this exact activity was already published (idempotent
  // re-publish: nothing changed).
  bool created = false;
  // Follower timelines that received (or, asynchronously, will receive)
  // the entry; 0 when `merged_at_read` (even if an activity published out
  // of order is copied to the followers whose merge begins above it).
  size_t fanned_out = 0;
  // True when the actor is past the hybrid threshold: followers merge it at
  // read time instead.
  bool merged_at_read = false;
  // True when part of the fan-out was queued and may still be running.
  bool pending = false;
  // Notification feeds that received the entry (PublishOptions::notify,
  // each recipient once).
  size_t notified = 0;
};

class FEEDCORE_EXPORT FeedEngine {
 public:
  // Creates an engine. Fails with `InvalidArgument` naming the option when
  // one is out of range. Starts the background sweeper unless
  // `options.sweep_interval` is 0.
  static absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> Create(
      EngineOptions options);

  virtual ~FeedEngine() = default;
  FeedEngine(const FeedEngine&) = delete;
  FeedEngine& operator=(const FeedEngine&) = delete;

  // The facets this engine has (feed_facets.h), each part of this engine
  // and valid while it lives; nullptr for a facet it lacks. Constant for
  // the engine's lifetime; O(1), never blocks.
  virtual NotificationFeeds* notifications() { return nullptr; }
  virtual FeedRelations* relations() { return nullptr; }
  virtual ReadMarkers* read_markers() { return nullptr; }
  virtual RankedFeeds* ranked() { return nullptr; }
  virtual FeedReactions* reactions() { return nullptr; }
  virtual EditsAndPins* edits_and_pins() { return nullptr; }
  virtual FeedDeliveries* deliveries() { return nullptr; }
  virtual FeedLists* lists() { return nullptr; }
  virtual FeedMaintenance* maintenance() { return nullptr; }
  // The same for a const engine, whose facets are const too.
  const NotificationFeeds* notifications() const {
    return const_cast<FeedEngine*>(this)->notifications();
  }
  const FeedRelations* relations() const {
    return const_cast<FeedEngine*>(this)->relations();
  }
  const ReadMarkers* read_markers() const {
    return const_cast<FeedEngine*>(this)->read_markers();
  }
  const RankedFeeds* ranked() const {
    return const_cast<FeedEngine*>(this)->ranked();
  }
  const FeedReactions* reactions() const {
    return const_cast<FeedEngine*>(this)->reactions();
  }
  const EditsAndPins* edits_and_pins() const {
    return const_cast<FeedEngine*>(this)->edits_and_pins();
  }
  const FeedLists* lists() const {
    return const_cast<FeedEngine*>(this)->lists();
  }
  const FeedDeliveries* deliveries() const {
    return const_cast<FeedEngine*>(this)->deliveries();
  }
  const FeedMaintenance* maintenance() const {
    return const_cast<FeedEngine*>(this)->maintenance();
  }

  // Puts `entry` into `owner`'s timeline. An existing entry with the same
  // `(ts, activity_id)` is overwritten (actor, kind and expiry), never
  // duplicated. InvalidArgument for ts < 0 or a kind above kMaxActivityKind.
  // O(1) expected when the entry is newer than everything in a timeline
  // below its cap, O(log n) otherwise. InsertFanout with one owner.
  absl::StatusOr<InsertResult> Insert(EntityId owner,
                                      const TimelineEntry& entry,
                                      const InsertOptions& options = {}) {
    return InsertFanout(absl::MakeConstSpan(&owner, 1), entry, options);
  }

  // Puts the same `entry` into every timeline in `owners` (fan-out). Takes
  // each shard's lock once for all the owners that live there. Duplicate
  // owners are harmless.
  virtual absl::StatusOr<InsertResult> InsertFanout(
      absl::Span<const EntityId> owners, const TimelineEntry& entry,
      const InsertOptions& options = {}) = 0;

  // Puts many (owner, entry) pairs, taking each shard's lock once per call.
  // `options` applies to every pair. Pairs for the same owner are applied
  // in the order given.
  virtual absl::StatusOr<InsertResult> InsertBatch(
      absl::Span<const OwnedEntry> entries,
      const InsertOptions& options = {}) = 0;

  // Removes the entry with `key` from `owner`'s timeline. `NotFound` if
  // there is no such entry (expired entries that are not yet reclaimed are
  // still found and removed); `InvalidArgument` if key.ts < 0.
  virtual absl::Status Remove(EntityId owner, const EntryKey& key) = 0;

  // One page of `owner`'s timeline: its materialized entries merged with
  // the own feeds of the hybrid (merged-at-read) actors it follows. An
  // unknown owner reads as empty. `InvalidArgument` for a limit of 0 or
  // above `max_page_size`, an inverted time window, a kind filter that
  // keeps no kind or names one above kMaxActivityKind, or a cursor that is
  // malformed, or was made by another feed, for the other order or for
  // other kinds.
  virtual absl::StatusOr<Page> ReadTimeline(
      EntityId owner, const ReadOptions& options) const = 0;

  // One page of what `actor` published (its own feed, capped at
  // `max_timeline_length`). Errors as ReadTimeline.
  virtual absl::StatusOr<Page> ReadOwn(EntityId actor,
                                       const ReadOptions& options) const = 0;

  // One page of everything published (the world feed). Errors as
  // ReadTimeline.
  virtual absl::StatusOr<Page> ReadWorld(const ReadOptions& options) const = 0;

  // How many visible entries of `reader`'s timeline (merged as in
  // ReadTimeline) are newer than `after`, counting at most `max_count`
  // (1..max_page_size): the "new since I last looked" badge.
  // InvalidArgument for after.ts < 0 or max_count out of range.
  virtual absl::StatusOr<size_t> CountNewer(EntityId reader,
                                            const EntryKey& after,
                                            size_t max_count) const = 0;

  // --- Grouped (aggregated) reads ---

  // One page of `owner`'s timeline (merged as in ReadTimeline) as groups:
  // visible entries with the same non-zero group key collapse into one
  // FeedGroup with exact counts; an entry with group key 0 is a group of
  // its own. Groups come newest first by their newest visible entry, so a
  // group moves to the top when an activity joins it. Paging is keyset-
  // based on that place: a reader paging down never sees a group twice
  // and misses none that stays where it was; a group that gains an
  // activity meanwhile moves above the cursor, where a read from the top
  // finds it. (A group can move down, and so show again on a later page,
  // only when its newest entry is removed: retract, unfollow, expiry.)
  // Retract, Unfollow, the length cap and expiry act on the entries inside
  // groups; a group whose last entry goes is gone.
  // With GroupReadOptions::kinds, groups of the entries of those kinds.
  // Cost: O(log n + page) from the timeline's group index; when the
  // owner follows merged-at-read actors, its timeline holds expired
  // entries not yet reclaimed, the read filters kinds, the engine has a
  // repost window, or the owner an exclusive list, O(entries of the merged
  // feed) instead.
  // FailedPrecondition unless EngineOptions::aggregation.enabled;
  // InvalidArgument for a limit of 0 or above max_page_size, a bad kind
  // filter, or a cursor that is malformed or belongs to another owner or
  // filter.
  virtual absl::StatusOr<GroupPage> ReadGroups(
      EntityId owner, const GroupReadOptions& options) const = 0;

  // --- Social graph ---

  // `follower` follows `followee` and gets the followee's most recent
  // activities (FollowOptions::backfill) in its timeline. Following again
  // is a no-op (`created` false). InvalidArgument when follower ==
  // followee or the back-fill is out of range; FailedPrecondition when
  // either blocks the other (Block).
  virtual absl::StatusOr<FollowResult> Follow(
      EntityId follower, EntityId followee,
      const FollowOptions& options = {}) = 0;

  // Stops following and removes the followee's entries from the follower's
  // timeline (unless `options.keep_history`: then they stay, and what a
  // merged-at-read followee showed becomes copies, O(max_timeline_length)).
  // Unfollowing what is not followed is a no-op that says so
  // (`was_following` false); InvalidArgument when follower == followee.
  // Removal walks the follower's timeline once: O(timeline length), no
  // searches.
  virtual absl::StatusOr<UnfollowResult> Unfollow(
      EntityId follower, EntityId followee,
      const UnfollowOptions& options = {}) = 0;

  // Follow for every pair, in order, with the same result per pair as
  // Follow would give (a pair repeated is followed once; the second says
  // `created` false). Validates every pair first (InvalidArgument naming
  // the index of a self-follow, more than kMaxFollowBatch pairs, or a bad
  // back-fill) and then changes each shard under one hold of its lock for
  // all the pairs whose edge lives there, rather than once per pair. A pair
  // refused because one entity blocked the other (FailedPrecondition from
  // Follow) is reported in its result (`blocked`) and the others go on.
  // Pairs become visible shard by shard, as InsertBatch's entries do.
  virtual absl::StatusOr<std::vector<FollowResult>> FollowMany(
      absl::Span<const FollowPair> pairs,
      const FollowOptions& options = {}) = 0;

  // Unfollow for every pair, as FollowMany does for Follow.
  virtual absl::StatusOr<std::vector<UnfollowResult>> UnfollowMany(
      absl::Span<const FollowPair> pairs,
      const UnfollowOptions& options = {}) = 0;

  // A page of `entity`'s followers, in a stable order, keyset-paged like
  // timelines: by shard, then id, in process; by id on the Redis Cluster
  // backend (redis_cluster.h). InvalidArgument for a bad limit or cursor.
  virtual absl::StatusOr<EntityPage> Followers(
      EntityId entity, const ListOptions& options) const = 0;
  // A page of what `entity` follows, by ascending id. As Followers.
  virtual absl::StatusOr<EntityPage> Following(
      EntityId entity, const ListOptions& options) const = 0;
  // How many entities follow `entity`, and how many it follows. O(1) in
  // process, where they never fail; one round trip on a server backend,
  // which fails with that backend's errors (e.g. `Unavailable`), never with
  // a count of 0 it does not know to be true.
  virtual absl::StatusOr<size_t> FollowerCount(EntityId entity) const = 0;
  virtual absl::StatusOr<size_t> FollowingCount(EntityId entity) const = 0;

  // --- Publishing ---

  // Stores `activity` once and delivers its key to the actor's own feed,
  // the world feed, every follower's timeline and the notification feed of
  // every entity in `options.notify`, taking each target shard's lock once
  // for its whole group of followers. Re-publishing the same activity (same
  // id, actor, ts, kind, repost_of and payload; the ttl is not compared) is
  // a no-op
  // (`created` false), `notify` included. Followers of a merged-at-read
  // actor get no copy and no `on_delivery` call; they see it through the
  // merge (an activity older than a follower's merge boundary is copied to
  // that follower: see the top of this file). Errors, all before anything
  // changes: InvalidArgument (ts < 0, ttl out of range, kind above
  // kMaxActivityKind, a repost of itself, or, with a repost window, of a
  // kind not in EngineOptions::reposts.kinds, payload too large, more than
  // kMaxNotifyRecipients in `notify`), Unimplemented (a non-empty `notify`
  // on an engine without notifications()), AlreadyExists (the id belongs to a
  // different activity), FailedPrecondition (the id was retracted),
  // ResourceExhausted (asynchronous fan-out, queue full, and
  // `wait_when_queue_full` false).
  virtual absl::StatusOr<PublishResult> Publish(
      const Activity& activity, const PublishOptions& options = {}) = 0;

  // Returns once every fan-out queued before the call has completed. A
  // backend whose fan-out always completes inside Publish returns at once.
  virtual void WaitForFanout() = 0;

  // Removes the activity from every feed before returning (its copies'
  // memory comes back at once) and drops its payload; the id stays
  // reserved until the activity expires and eviction drops it. NotFound for an
  // unknown (or already evicted) id; retracting twice is a no-op.
  virtual absl::Status Retract(ActivityId activity_id) = 0;

  // The options the engine runs with, with 0 ("pick for me") values
  // resolved and `clock` set.
  virtual const EngineOptions& options() const = 0;

 protected:
  FeedEngine() = default;
};

// The in-process engine `FeedEngine::Create` builds: the core and every
// facet, in this process's memory. Programs hold it as what Create
// returns and call every method directly; SaveSnapshot (snapshot.h) and
// DurableStore (durable_store.h) take and hand out this type.
class FEEDCORE_EXPORT InProcessFeedEngine : public FeedEngine,
                                            public NotificationFeeds,
                                            public FeedRelations,
                                            public ReadMarkers,
                                            public RankedFeeds,
                                            public FeedReactions,
                                            public EditsAndPins,
                                            public FeedDeliveries,
                                            public FeedLists,
                                            public FeedMaintenance {
 public:
  using FeedEngine::deliveries;
  using FeedEngine::edits_and_pins;
  using FeedEngine::lists;
  using FeedEngine::maintenance;
  using FeedEngine::notifications;
  using FeedEngine::ranked;
  using FeedEngine::reactions;
  using FeedEngine::read_markers;
  using FeedEngine::relations;
  NotificationFeeds* notifications() final { return this; }
  FeedRelations* relations() final { return this; }
  ReadMarkers* read_markers() final { return this; }
  RankedFeeds* ranked() final { return this; }
  FeedReactions* reactions() final { return this; }
  EditsAndPins* edits_and_pins() final { return this; }
  FeedDeliveries* deliveries() final { return this; }
  FeedLists* lists() final { return this; }
  FeedMaintenance* maintenance() final { return this; }

 private:
  // Only the library's engine derives from it.
  friend class internal::FeedEngineImpl;
  InProcessFeedEngine() = default;
};

}  // namespace feedcore

#endif  // FEEDCORE_FEED_ENGINE_H_
