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
// FeedEngine is an interface: the library never casts one to a backend of
// its own, so a program may implement it too (a fake for its tests, a
// proxy). Everything the library does with an engine goes through these
// virtuals, snapshots included (SaveSnapshot); what an implementation
// cannot do it reports through `Supports` and `Unimplemented`, as the
// Redis Cluster backend does.
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
// with a message naming the offending argument.
// A call that needs a capability the engine lacks (FeedCapability) fails
// with `Unimplemented`. A backend on a server adds its own failures to
// every call (redis_cluster.h: `Unavailable`, `Internal`); that is why
// counts and other answers read from the server are `StatusOr`.
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
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "feedcore/export.h"
#include "feedcore/options.h"
#include "feedcore/social.h"
#include "feedcore/stats.h"
#include "feedcore/types.h"

namespace feedcore {

class LeaderboardRegistry;

// What a backend can do beyond what every FeedEngine does. A call that
// needs a capability the engine lacks fails with `Unimplemented`, naming
// the capability and the backend, and changes nothing; it never answers
// with an empty result or a zero. Ask `Supports` before relying on one.
enum class FeedCapability : uint8_t {
  // Notification feeds: `PublishOptions::notify`, ReadNotifications,
  // GetNotificationCounts, MarkSeen, MarkRead, MarkAllRead.
  kNotifications = 0,
  // ReadGroups. The engine must also be created with
  // `EngineOptions::aggregation.enabled` (FailedPrecondition otherwise).
  kGroupedReads = 1,
  // EvictExpired: reclaiming expired entries on demand. The Redis Cluster
  // backend lacks it: its keys expire on their own and every read skips
  // what has expired.
  kEviction = 2,
  // Stats: counters of the engine's contents and memory. The Redis Cluster
  // backend lacks it (the memory is the cluster's; ask Redis INFO).
  kStats = 3,
  // SaveSnapshot: the engine's whole state in one file (snapshot.h). The
  // Redis Cluster backend lacks it (use Redis persistence).
  kSnapshots = 4,
  // Mute, Unmute, Block, Unblock, Muted, Blocked.
  kMuteBlock = 5,
  // SetReadMarker, GetReadMarker.
  kReadMarkers = 6,
  // IncrementCounter, GetCounters, ReadRanked.
  kRankedReads = 7,
  // EngineOptions::inactive_after and ReleaseInactiveReaders. The Redis
  // Cluster backend lacks it: its timelines are Redis keys, which
  // Redis evicts by its own policies.
  kInactiveReaders = 8,
};
inline constexpr FeedCapability kAllFeedCapabilities[] = {
    FeedCapability::kNotifications,  FeedCapability::kGroupedReads,
    FeedCapability::kEviction,       FeedCapability::kStats,
    FeedCapability::kSnapshots,      FeedCapability::kMuteBlock,
    FeedCapability::kReadMarkers,    FeedCapability::kRankedReads,
    FeedCapability::kInactiveReaders};

// The capability's name as written in this header, e.g. "kStats".
FEEDCORE_EXPORT const char* FeedCapabilityName(FeedCapability capability);

// What SaveSnapshot wrote.
struct SnapshotInfo {
  // Replay the source's stream from AtSequence(sequence); 0 when the engine
  // records no changes.
  uint64_t sequence = 0;
  uint64_t file_bytes = 0;
};

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
  static absl::StatusOr<std::unique_ptr<FeedEngine>> Create(
      EngineOptions options);

  virtual ~FeedEngine() = default;
  FeedEngine(const FeedEngine&) = delete;
  FeedEngine& operator=(const FeedEngine&) = delete;

  // Whether this engine has `capability` (see FeedCapability). Constant
  // for the engine's lifetime; O(1), never blocks.
  virtual bool Supports(FeedCapability capability) const = 0;

  // Puts `entry` into `owner`'s timeline. An existing entry with the same
  // `(ts, activity_id)` is overwritten (actor and expiry), never duplicated.
  // O(1) expected when the entry is newer than everything in a timeline
  // below its cap, O(log n) otherwise.
  virtual absl::StatusOr<InsertResult> Insert(
      EntityId owner, const TimelineEntry& entry,
      const InsertOptions& options = {}) = 0;

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
  // above `max_page_size`, an inverted time window, or a cursor that is
  // malformed, or was made by another feed or for the other order.
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
  // Cost: O(log n + page) from the timeline's group index; when the
  // owner follows merged-at-read actors, or its timeline holds expired
  // entries not yet reclaimed, O(entries of the merged feed) instead.
  // Unimplemented without FeedCapability::kGroupedReads;
  // FailedPrecondition unless EngineOptions::aggregation.enabled;
  // InvalidArgument for a limit of 0 or above max_page_size, or a cursor
  // that is malformed or belongs to another owner.
  virtual absl::StatusOr<GroupPage> ReadGroups(
      EntityId owner, const GroupReadOptions& options) const = 0;

  // --- Notification feeds ---
  //
  // Every entity has a notification feed, filled by the `notify` list of
  // Publish (not by following): "Alice liked your photo" goes to the
  // photo's owner only. Notifications are grouped as NotificationOptions
  // says (or flat, each its own group), bounded by
  // NotificationOptions::max_length, expire with their activity and leave
  // every feed when it is retracted. Each group is seen or not and read or
  // not; an activity joining a group makes it unseen and unread again.
  // The counts of unseen and unread groups are kept as the feed changes,
  // so reading them is O(1) (after reclaiming what expired in that feed).
  // Seen and read state is recorded in the change stream and kept by
  // snapshots like any other state.
  //
  // These calls reclaim the expired entries of the feed they touch before
  // answering (as a read of an expired Redis key deletes it), recorded as
  // expired like the sweeper's. Reading a feed where nothing has expired
  // shares its shard lock with other readers; a reclaim, and every mark,
  // takes it exclusively.
  //
  // Each of these calls fails with `Unimplemented`, changing nothing, on an
  // engine without FeedCapability::kNotifications.

  // One page of `user`'s notification groups, newest first (the place of a
  // group is its newest notification), each with its `seen` and `read`
  // flags. Paging as ReadGroups. InvalidArgument for a limit of 0 or above
  // max_page_size, or a cursor that is malformed or belongs to another
  // feed. An entity that never got a notification reads as empty.
  virtual absl::StatusOr<GroupPage> ReadNotifications(
      EntityId user, const GroupReadOptions& options) = 0;

  // `user`'s unseen and unread counts. O(1) plus the expired entries it
  // reclaims. Fails only with `Unimplemented` (see above).
  virtual absl::StatusOr<NotificationCounts> GetNotificationCounts(
      EntityId user) = 0;

  // Marks every group of `user`'s notification feed seen (opening the
  // bell); returns the counts after it. O(groups). Fails only with
  // `Unimplemented`.
  virtual absl::StatusOr<NotificationCounts> MarkSeen(EntityId user) = 0;

  // Marks read (and seen) the group that holds the notification with
  // `key`: any entry of the group names it, as FeedGroup::recent does.
  // Returns the counts after it. NotFound when the feed holds no visible
  // notification with that key (nothing changes); InvalidArgument for
  // key.ts < 0.
  virtual absl::StatusOr<NotificationCounts> MarkRead(EntityId user,
                                                      const EntryKey& key) = 0;

  // Marks every group of `user`'s notification feed read (and seen) and
  // returns the counts after it. O(groups). Fails only with
  // `Unimplemented`.
  virtual absl::StatusOr<NotificationCounts> MarkAllRead(EntityId user) = 0;

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

  // --- Mute and block ---
  //
  // A user hides an actor from itself. Both are kept in the user's graph
  // node and take effect for every read that starts after the call
  // returns, even while a publish of the actor is fanning out (the call
  // waits for deliveries of the actor that began before it, as Unfollow
  // does). Each fails with `Unimplemented`, changing nothing, without
  // FeedCapability::kMuteBlock; with InvalidArgument when user == actor.

  // `blocker` blocks `blocked`: each stops following the other (as
  // Unfollow), `blocked`'s entries leave `blocker`'s timeline and
  // notification feed, and from then on none of `blocked`'s activities
  // reaches `blocker` (neither by fan-out, nor by a merged read, nor by
  // PublishOptions::notify). While it lasts, Follow between the two fails
  // with FailedPrecondition in either direction. Blocking again is a no-op
  // (`changed` false). O(timeline + notification feed).
  virtual absl::StatusOr<RelationResult> Block(EntityId blocker,
                                               EntityId blocked) = 0;
  // Ends a block. Nothing comes back by itself (the follows stay ended);
  // `options.backfill` applies only if the blocker follows the actor again.
  virtual absl::StatusOr<RelationResult> Unblock(
      EntityId blocker, EntityId blocked,
      const RestoreOptions& options = {}) = 0;

  // `muter` mutes `muted`: following stays, but `muted`'s entries leave
  // `muter`'s timeline (and, with `options.notifications`, its
  // notification feed) and new ones do not arrive there until the mute is
  // lifted or expires. InvalidArgument for an expiry not in
  // (now, now + kMaxTtl]. O(timeline; a dormant reader is rebuilt first,
  // see "Inactive readers" above). An expiry is read from the engine
  // clock by every publish and read, nothing is swept: once it passes,
  // what `muted` publishes arrives again; of a copied actor (every
  // followee of a dormant reader but the merged-at-read ones), what it
  // published during the mute never arrives, while a merged-at-read
  // actor's own feed is read again from the follower's merge boundary, so
  // what it published during the mute, and what the mute removed, shows
  // again. An expiring mute of a merged actor is thus not exact in the
  // sense of hybrid fan-out (the top of this file): nothing runs when it
  // expires that could move the boundary; Unmute (and Unblock then
  // Follow) is, since it moves the boundary to where its back-fill
  // begins. Insert, InsertFanout and
  // InsertBatch are the program's own writes and are not filtered (nor by
  // Block). A publish of an actor nobody mutes costs nothing more; one
  // with muters costs a hash probe per follower.
  virtual absl::StatusOr<RelationResult> Mute(
      EntityId muter, EntityId muted, const MuteOptions& options = {}) = 0;
  // Lifts a mute: what `muted` publishes from then on arrives again, and
  // `options.backfill` recent activities are copied back if `muter`
  // follows it; of a merged-at-read actor, the follower's merge then
  // begins at the oldest of those (just above everything it published for
  // none), as the copies would, and `backfilled` is 0. Unmuting what is not
  // muted (or whose mute expired) says so
  // (`changed` false).
  virtual absl::StatusOr<RelationResult> Unmute(
      EntityId muter, EntityId muted, const RestoreOptions& options = {}) = 0;

  // A page of the actors `entity` blocks, by ascending id, keyset-paged as
  // Following. InvalidArgument for a bad limit or cursor.
  virtual absl::StatusOr<EntityPage> Blocked(
      EntityId entity, const ListOptions& options) const = 0;
  // A page of the actors `entity` mutes (expired mutes are not listed), by
  // ascending id. As Blocked.
  virtual absl::StatusOr<MutedPage> Muted(EntityId entity,
                                          const ListOptions& options) const = 0;

  // --- Read markers ---
  //
  // Where a user stopped reading a feed, kept per (user, feed) and recorded
  // in the change stream and snapshots. Unimplemented without
  // FeedCapability::kReadMarkers.

  // Sets `user`'s marker in `feed` to `key`. A marker only moves forward
  // unless `options.force`: returns true when it moved, false when `key`
  // is not newer than the marker (forced: when it is the marker; nothing
  // changed). A marker may name a key no feed holds. InvalidArgument for
  // key.ts < 0, a notification feed, a home feed of another user, or a
  // world feed whose owner is not 0. O(log of the user's markers), under
  // the user's shard lock.
  virtual absl::StatusOr<bool> SetReadMarker(
      EntityId user, const MarkedFeed& feed, const EntryKey& key,
      const SetMarkerOptions& options = {}) = 0;
  // `user`'s marker in `feed` and the count of visible entries newer than
  // it, at most `max_unread` (1..max_page_size), counted as CountNewer
  // counts (a home feed merged with its merged-at-read followees). Errors
  // as SetReadMarker, and for `max_unread` out of range. Costs what
  // CountNewer costs with max_count = max_unread + 1.
  virtual absl::StatusOr<ReadMarker> GetReadMarker(EntityId user,
                                                   const MarkedFeed& feed,
                                                   size_t max_unread) const = 0;

  // --- Counters and ranked reads ---
  //
  // Unimplemented without FeedCapability::kRankedReads.

  // Adds `delta` to counter `counter` (0..kActivityCounterCount-1) of the
  // published activity `activity_id` and returns all its counters after
  // it, recording the engine clock's time of the change. O(1): one lookup
  // under the lock of the activity's store shard. NotFound for an unknown,
  // retracted or expired activity; InvalidArgument for a counter out of
  // range, a zero delta or a sum that would overflow (nothing changes).
  virtual absl::StatusOr<ActivityCounters> IncrementCounter(
      ActivityId activity_id, size_t counter, int64_t delta) = 0;
  // The counters of a published activity. NotFound as IncrementCounter.
  virtual absl::StatusOr<ActivityCounters> GetCounters(
      ActivityId activity_id) const = 0;

  // One page of `owner`'s timeline (merged as ReadTimeline merges) by
  // descending RankFormula score, ties by descending key. The first page
  // fixes the walk's start time (the engine clock then), which ages every
  // entry on every page of the walk, so time alone never reorders it. Each
  // page ranks the newest `window` visible entries; later pages only those
  // dated at or before the start, so an entry that left the timeline
  // meanwhile lets an older one into the window. Within one walk no entry
  // shows twice, even when counters change meanwhile. What a reader may
  // miss: an entry whose counters changed at or after the walk's start is
  // left out of the later pages of that walk (it may have shown already),
  // and so is an entry dated after the start (published since, or dated in
  // the future and ranked at age 0 on the first page); a new walk shows
  // both. The guarantee assumes an engine clock that does not go
  // backwards. The page size may change from page to page. Costs
  // O(window) counter lookups (one shared lock per activity-store shard),
  // the merged read of `window` entries and a partial sort. Thread-safe.
  // InvalidArgument for a bad limit, window or formula, or a cursor that is
  // malformed, belongs to another owner or was made with another formula
  // or window.
  virtual absl::StatusOr<RankedPage> ReadRanked(
      EntityId owner, const RankedReadOptions& options) const = 0;

  // --- Publishing ---

  // Stores `activity` once and delivers its key to the actor's own feed,
  // the world feed, every follower's timeline and the notification feed of
  // every entity in `options.notify`, taking each target shard's lock once
  // for its whole group of followers. Re-publishing the same activity (same
  // id, actor, ts and payload; the ttl is not compared) is a no-op
  // (`created` false), `notify` included. Followers of a merged-at-read
  // actor get no copy and no `on_delivery` call; they see it through the
  // merge (an activity older than a follower's merge boundary is copied to
  // that follower: see the top of this file). Errors, all before anything
  // changes: InvalidArgument (ts < 0, ttl out of range, payload too large, more
  // than kMaxNotifyRecipients in `notify`), Unimplemented (a non-empty `notify`
  // without FeedCapability::kNotifications), AlreadyExists (the id belongs to a
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

  // Reclaims min(budget, expired entries held) expired timeline entries and
  // returns how many it reclaimed (expired activities in the store are
  // dropped too, within what is left of the budget); costs time in proportion
  // to that number (plus a logarithmic term per timeline touched), never to the
  // number of stored entries. Takes each shard's lock it reclaims from
  // exclusively, one at a time. Unimplemented without
  // FeedCapability::kEviction.
  virtual absl::StatusOr<size_t> EvictExpired(size_t budget) = 0;

  // Makes dormant up to `budget` readers that have not read their timeline
  // for EngineOptions::inactive_after (see "Inactive readers" above) and
  // returns how many it made dormant; 0 when there are none (or `budget`
  // is 0). The sweeper calls it at every pass. Costs a scan of the graph
  // nodes of the shards it visits, plus, per reader made dormant, work in
  // proportion to its timeline and one lock per shard of its followees.
  // FailedPrecondition when EngineOptions::inactive_after is 0;
  // Unimplemented without FeedCapability::kInactiveReaders.
  virtual absl::StatusOr<size_t> ReleaseInactiveReaders(size_t budget) = 0;

  // Counters of the engine's contents and memory (see stats.h), each shard
  // read under its lock: O(shards). Unimplemented without
  // FeedCapability::kStats.
  virtual absl::StatusOr<EngineStats> Stats() const = 0;

  // Writes the engine's whole state, and with `boards` every board of that
  // registry, to the file `path`; see snapshot.h for the format, the
  // consistency it gives and the errors. Runs while other threads use the
  // engine. Unimplemented without FeedCapability::kSnapshots. Programs
  // usually call the free function SaveSnapshot, which calls this.
  virtual absl::StatusOr<SnapshotInfo> SaveSnapshot(
      const std::string& path, const LeaderboardRegistry* boards) const = 0;

  // The options the engine runs with, with 0 ("pick for me") values
  // resolved and `clock` set.
  virtual const EngineOptions& options() const = 0;

 protected:
  FeedEngine() = default;
};

}  // namespace feedcore

#endif  // FEEDCORE_FEED_ENGINE_H_
