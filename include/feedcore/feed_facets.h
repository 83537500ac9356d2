// The facets of a FeedEngine: groups of calls a backend offers or not, each
// an interface of its own. An engine hands out the facets it has through
// FeedEngine's accessors (notifications(), relations(), read_markers(),
// ranked(), reactions(), edits_and_pins(), deliveries(), maintenance()),
// which return nullptr for a facet it lacks; a program that needs one asks
// once, when it starts:
//
//   feedcore::FeedRelations* relations = engine->relations();
//   if (relations == nullptr) return absl::FailedPreconditionError(...);
//   relations->Mute(user, actor);
//
// The concrete engine types say what they have: InProcessFeedEngine
// (feed_engine.h) is every facet, RedisClusterFeedEngine (redis_cluster.h)
// every facet but FeedReactions, FeedDeliveries and FeedMaintenance, so code
// holding one calls the facets' methods directly. A facet is part of the engine
// object that offers it: it lives and dies with that engine, and it is never
// deleted through a facet pointer.
//
// What the calls here share with the core interface (errors that change
// nothing, thread safety, a server backend's own failures) is in
// feed_engine.h.
#ifndef FEEDCORE_FEED_FACETS_H_
#define FEEDCORE_FEED_FACETS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "feedcore/export.h"
#include "feedcore/options.h"
#include "feedcore/social.h"
#include "feedcore/stats.h"
#include "feedcore/types.h"

namespace feedcore {

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
class FEEDCORE_EXPORT NotificationFeeds {
 public:
  // One page of `user`'s notification groups, newest first (the place of a
  // group is its newest notification), each with its `seen` and `read`
  // flags. Paging and kinds as ReadGroups. InvalidArgument for a limit of
  // 0 or above max_page_size, a bad kind filter, or a cursor that is
  // malformed or belongs to another feed or filter. An entity that never
  // got a notification reads as empty.
  virtual absl::StatusOr<GroupPage> ReadNotifications(
      EntityId user, const GroupReadOptions& options) = 0;

  // `user`'s unseen and unread counts. O(1) plus the expired entries it
  // reclaims. Never fails in process.
  virtual absl::StatusOr<NotificationCounts> GetNotificationCounts(
      EntityId user) = 0;

  // Marks every group of `user`'s notification feed seen (opening the
  // bell); returns the counts after it. O(groups). Never fails in process.
  virtual absl::StatusOr<NotificationCounts> MarkSeen(EntityId user) = 0;

  // Marks read (and seen) the group that holds the notification with
  // `key`: any entry of the group names it, as FeedGroup::recent does.
  // Returns the counts after it. NotFound when the feed holds no visible
  // notification with that key (nothing changes); InvalidArgument for
  // key.ts < 0.
  virtual absl::StatusOr<NotificationCounts> MarkRead(EntityId user,
                                                      const EntryKey& key) = 0;

  // Marks every group of `user`'s notification feed read (and seen) and
  // returns the counts after it. O(groups). Never fails in process.
  virtual absl::StatusOr<NotificationCounts> MarkAllRead(EntityId user) = 0;

 protected:
  NotificationFeeds() = default;
  ~NotificationFeeds() = default;
  NotificationFeeds(const NotificationFeeds&) = delete;
  NotificationFeeds& operator=(const NotificationFeeds&) = delete;
};

// Mute and block: a user hides an actor from itself. Both are kept in the
// user's graph node and take effect for every read that starts after the call
// returns, even while a publish of the actor is fanning out (the call
// waits for deliveries of the actor that began before it, as Unfollow
// does). Each fails with InvalidArgument when user == actor.
class FEEDCORE_EXPORT FeedRelations {
 public:
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
  // see "Inactive readers" in feed_engine.h). An expiry is read from the
  // engine clock by every publish and read, nothing is swept: once it
  // passes, what `muted` publishes arrives again; of a copied actor (every
  // followee of a dormant reader but the merged-at-read ones), what it
  // published during the mute never arrives, while a merged-at-read
  // actor's own feed is read again from the follower's merge boundary, so
  // what it published during the mute, and what the mute removed, shows
  // again. An expiring mute of a merged actor is thus not exact in the
  // sense of hybrid fan-out (the top of feed_engine.h): nothing runs when it
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

 protected:
  FeedRelations() = default;
  ~FeedRelations() = default;
  FeedRelations(const FeedRelations&) = delete;
  FeedRelations& operator=(const FeedRelations&) = delete;
};

// Where a user stopped reading a feed, kept per (user, feed) and recorded
// in the change stream and snapshots, with the user's mentions in each
// channel (PublishOptions::mentions) newer than it.
class FEEDCORE_EXPORT ReadMarkers {
 public:
  // Sets `user`'s marker in `feed` to `key`. A marker only moves forward
  // unless `options.force`: returns true when it moved, false when `key`
  // is not newer than the marker (forced: when it is the marker; nothing
  // changed). A marker may name a key no feed holds. The user's mentions
  // in the feed up to `key` are cleared (a marker forced back does not
  // bring them back). InvalidArgument for key.ts < 0, a notification feed,
  // a home feed of another user, or a world feed whose owner is not 0.
  // O(log of the user's markers + mentions there), under the user's shard
  // lock.
  virtual absl::StatusOr<bool> SetReadMarker(
      EntityId user, const MarkedFeed& feed, const EntryKey& key,
      const SetMarkerOptions& options = {}) = 0;
  // `user`'s marker in `feed` and the count of visible entries newer than
  // it, at most `max_unread` (1..max_page_size), counted as CountNewer
  // counts (a home feed merged with its merged-at-read followees). Errors
  // as SetReadMarker, and for `max_unread` out of range. Costs what
  // CountNewer costs with max_count = max_unread + 1; of an own feed, one
  // shared lock of its shard, no copies, and O(log) per mention counted.
  virtual absl::StatusOr<ReadMarker> GetReadMarker(EntityId user,
                                                   const MarkedFeed& feed,
                                                   size_t max_unread) const = 0;
  // Every feed where `user` set a marker or is mentioned, a page at a
  // time, each as GetReadMarker answers it (unread and mention counts):
  // what a chat client shows for all of its channels when it opens.
  // Counted as of this call, feed by feed.
  // InvalidArgument for a limit or `max_unread` out of range, or a cursor
  // that is malformed or another user's. In process: the page copied under
  // the user's shard lock held shared, then one shared lock per shard of
  // the marked own feeds (channels) for all of theirs, and what
  // GetReadMarker costs for a home or world feed. On the Redis Cluster
  // backend: one HGETALL of the user's markers, then a count per feed.
  virtual absl::StatusOr<ReadStatePage> ListReadMarkers(
      EntityId user, const ReadStateOptions& options) const = 0;

 protected:
  ReadMarkers() = default;
  ~ReadMarkers() = default;
  ReadMarkers(const ReadMarkers&) = delete;
  ReadMarkers& operator=(const ReadMarkers&) = delete;
};

// Counters per activity and the timeline read ranked by them.
class FEEDCORE_EXPORT RankedFeeds {
 public:
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

 protected:
  RankedFeeds() = default;
  ~RankedFeeds() = default;
  RankedFeeds(const RankedFeeds&) = delete;
  RankedFeeds& operator=(const RankedFeeds&) = delete;
};

// Who reacted to what: each (user, activity, kind) is there or not, so a
// second like of one user changes nothing, and the counter of a kind
// (RankedFeeds) counts its reactions exactly, as long as the program does
// not also IncrementCounter that counter. Reactions live with their
// activity in the activity store, go when it is retracted or evicted, and
// are recorded in the change stream and kept by snapshots.
class FEEDCORE_EXPORT FeedReactions {
 public:
  // `user` reacts to the published activity `activity_id` with `kind`;
  // once, however often it is called (`changed` false the next times).
  // Records the engine clock's time, adds 1 to counter `kind`, and with
  // `options.notice_id` tells the actor (ReactOptions). O(1) under the
  // activity's store shard lock, plus a notice's delivery. NotFound for an
  // unknown, retracted or expired activity; InvalidArgument for a kind out
  // of range, a notice payload above EngineOptions::max_payload_bytes, or
  // a notice id equal to the activity's; AlreadyExists for a notice id
  // another activity has (nothing changes).
  virtual absl::StatusOr<ReactionResult> React(
      EntityId user, ActivityId activity_id, ReactionKind kind,
      const ReactOptions& options = {}) = 0;
  // Takes `user`'s reaction `kind` back: counter `kind` loses 1 and its
  // notice is retracted. `changed` false when there was none. Errors as
  // React.
  virtual absl::StatusOr<ReactionResult> Unreact(EntityId user,
                                                 ActivityId activity_id,
                                                 ReactionKind kind) = 0;
  // Which kinds `user` reacted with to each of `activity_ids` (`out[i]`
  // for `activity_ids[i]`; 0 for none, or for an activity unknown,
  // retracted or expired): the "did I like these" of a page, in one call.
  // InvalidArgument for more than kMaxReactionLookup ids. One shared lock
  // per store shard the ids fall in and one hash probe per id, with the
  // probes of a shard prefetched.
  virtual absl::StatusOr<std::vector<ReactionKinds>> GetOwnReactions(
      EntityId user, absl::Span<const ActivityId> activity_ids) const = 0;
  // The users who reacted to `activity_id` with `kind`, the most recent
  // first, a page at a time (keyset-paged: a reaction made or taken back
  // between pages neither repeats nor hides another). NotFound as React;
  // InvalidArgument for a kind out of range, a bad limit, or a cursor that
  // is malformed or belongs to another activity or kind. O(log reactions
  // of the activity + limit), one shared lock of its store shard.
  virtual absl::StatusOr<ReactorPage> ReadReactors(
      ActivityId activity_id, ReactionKind kind,
      const ListOptions& options) const = 0;

 protected:
  FeedReactions() = default;
  ~FeedReactions() = default;
  FeedReactions(const FeedReactions&) = delete;
  FeedReactions& operator=(const FeedReactions&) = delete;
};

// Pins an own feed keeps, at most (Discord's pins of a channel, a profile's
// pinned posts).
inline constexpr size_t kMaxPinnedEntries = 50;

// What an actor changes about what it already published: its payload
// corrected in place, and entries pinned to the top of its own feed (a
// profile, or a chat channel: MarkedFeed::Own). Neither delivers anything:
// every feed holds an activity by key and reads its one payload.
class FEEDCORE_EXPORT EditsAndPins {
 public:
  // Replaces the payload of `actor`'s published activity `activity_id` and
  // stamps it edited at the engine clock's time, which it returns: every
  // hydrated read from then on, of every feed that holds it, returns the
  // new payload with StoredEntry::edited_at. Its key, place, expiry,
  // counters, groups and notifications stay; nothing is delivered again.
  // Once edited, a re-publish with the same id, actor and ts is a no-op
  // whatever its payload (the edit stands). O(1): one lookup under the
  // activity's store shard lock, however many feeds hold it. NotFound for
  // an unknown, retracted or expired activity; PermissionDenied when
  // `actor` did not publish it; InvalidArgument for a payload above
  // EngineOptions::max_payload_bytes.
  virtual absl::StatusOr<Micros> EditActivity(EntityId actor,
                                              ActivityId activity_id,
                                              std::string_view payload) = 0;

  // Pins `owner`'s published activity `activity_id` to the top of its own
  // feed: ReadPinned lists it, the most recently pinned first, while
  // ReadOwn's pages keep it in its place as well (read the pins, then the
  // pages). A pin ends with Unpin, or when the activity is retracted or
  // expires. Returns false if it is pinned already (its place among the
  // pins stays). Either way, pins of activities that have expired since
  // are dropped, each recorded as an Unpin would be.
  // NotFound unless `owner` published it and it is still visible (the own
  // feed's cap does not matter: an activity pushed out of the feed can be
  // pinned while it lives); FailedPrecondition when `owner` already has
  // kMaxPinnedEntries visible pins. O(kMaxPinnedEntries) under the owner's
  // shard lock, plus one store lookup.
  virtual absl::StatusOr<bool> Pin(EntityId owner, ActivityId activity_id) = 0;
  // Ends a pin; false if `activity_id` is not pinned by `owner` (nothing
  // changes).
  virtual absl::StatusOr<bool> Unpin(EntityId owner,
                                     ActivityId activity_id) = 0;
  // `owner`'s visible pinned entries, the most recently pinned first, at
  // most kMaxPinnedEntries (group 0; payloads with `hydrate`). An owner
  // with no pins reads as empty. O(pins), one shard lock held shared.
  virtual absl::StatusOr<std::vector<StoredEntry>> ReadPinned(
      EntityId owner, bool hydrate) const = 0;

 protected:
  EditsAndPins() = default;
  ~EditsAndPins() = default;
  EditsAndPins(const EditsAndPins&) = delete;
  EditsAndPins& operator=(const EditsAndPins&) = delete;
};

// Deliveries pushed to the program: a subscription watches chosen home
// timelines and notification feeds, and its callback is given each new
// entry that a publish brings into one of them, soon after the entry is
// readable there. That includes the entries of actors read by merge
// (hybrid fan-out) and those a dormant reader will see on its next read:
// a watched timeline is told of every entry its reads will show, however
// it gets there. Not told: back-fill by Follow, Unblock or Unmute, the
// program's own Insert calls, and removals.
//
// Each subscription has a queue of at most `queue_capacity` deliveries.
// A publish only appends to it, and when it is full drops the delivery
// and counts it, so a slow callback never holds up a publish or a
// fan-out; the next delivery says how many were missed (re-read the
// watched feeds then). Callbacks run on the engine's delivery thread
// (EngineOptions::background_deliveries), or on whichever thread calls
// DispatchDeliveries; one subscription's callback never runs twice at
// once, and gets one feed's deliveries in the order they were queued. A
// callback may call anything on the engine, this facet included.
//
// Subscriptions live in memory only: the change stream, snapshots and
// DurableStore do not record them. Thread-safe.
enum class DeliveryFeed : uint8_t {
  kTimeline = 0,       // an entity's home timeline
  kNotifications = 1,  // an entity's notification feed
};

// A feed a subscription watches.
struct WatchedFeed {
  DeliveryFeed feed = DeliveryFeed::kTimeline;
  EntityId owner = 0;

  friend bool operator==(const WatchedFeed&, const WatchedFeed&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const WatchedFeed& f) {
    return H::combine(std::move(h), f.feed, f.owner);
  }
};

// One new entry in a watched feed.
struct Delivery {
  WatchedFeed where;
  TimelineEntry entry;
  // kNotifications: the feed's counts right after the delivery.
  NotificationCounts counts;
  // Deliveries to this subscription dropped, its queue being full, since
  // the one before this.
  uint64_t missed_before = 0;
};

inline constexpr size_t kMaxDeliveryQueueCapacity = size_t{1} << 20;
inline constexpr size_t kMaxWatchedFeeds = size_t{1} << 20;

struct SubscriptionOptions {
  // Deliveries queued at most, 1..kMaxDeliveryQueueCapacity.
  size_t queue_capacity = 1024;
  // Called once per delivery; required.
  std::function<void(const Delivery&)> callback;
};

using SubscriptionId = uint64_t;

// What a subscription has been through.
struct SubscriptionStats {
  size_t watched = 0;      // feeds it watches
  size_t queued = 0;       // deliveries waiting for its callback
  uint64_t delivered = 0;  // callbacks that returned
  uint64_t missed = 0;     // deliveries dropped, its queue being full
};

class FEEDCORE_EXPORT FeedDeliveries {
 public:
  // A new subscription watching nothing yet. InvalidArgument for a
  // capacity out of range or no callback. O(1).
  virtual absl::StatusOr<SubscriptionId> Subscribe(
      SubscriptionOptions options) = 0;
  // Ends a subscription and drops what its queue holds. Once it returns
  // the callback is not running (unless Unsubscribe was called from it:
  // then once that call returns) and is not called again. NotFound for an
  // unknown (or ended) id.
  virtual absl::Status Unsubscribe(SubscriptionId id) = 0;

  // Starts and stops watching a feed; true when that changed something
  // (watching twice is a no-op). A timeline is watched whether or not its
  // owner follows anyone yet. NotFound for an unknown subscription;
  // ResourceExhausted past kMaxWatchedFeeds feeds. O(1) expected.
  virtual absl::StatusOr<bool> Watch(SubscriptionId id,
                                     const WatchedFeed& feed) = 0;
  virtual absl::StatusOr<bool> Unwatch(SubscriptionId id,
                                       const WatchedFeed& feed) = 0;

  // NotFound for an unknown subscription. O(1).
  virtual absl::StatusOr<SubscriptionStats> GetSubscriptionStats(
      SubscriptionId id) const = 0;

  // Runs the callbacks of every delivery queued so far, on this thread,
  // and returns how many ran. For an engine without a delivery thread
  // (EngineOptions::background_deliveries false); FailedPrecondition on
  // one that has it.
  virtual absl::StatusOr<size_t> DispatchDeliveries() = 0;

 protected:
  FeedDeliveries() = default;
  ~FeedDeliveries() = default;
  FeedDeliveries(const FeedDeliveries&) = delete;
  FeedDeliveries& operator=(const FeedDeliveries&) = delete;
};

// A user's named lists of accounts (Twitter and Mastodon lists), each read
// as a feed of what its members publish: the visible entries of the
// members' own feeds merged at read, with ReadTimeline's windows, kinds,
// hydration and cursors, and without the members the owner blocks or
// mutes (a mute in force) or that block the owner. Nothing is copied, so a
// list shows the same whatever the owner follows, and an account added
// shows its whole own feed at once. Lists live with their owner's graph
// node, are recorded in the change stream and kept by snapshots. Every
// call refuses the list id 0 with InvalidArgument, changing nothing.
// Thread-safe; each call takes the owner's shard lock, ReadList also a
// shared lock of each member's shard in turn.
class FEEDCORE_EXPORT FeedLists {
 public:
  // Creates `owner`'s list `list` with `settings`, or changes the settings
  // of the list it has (its members stay); true when created, false when it
  // existed (whether or not the settings changed). InvalidArgument for a
  // list id of 0 or a name empty or above kMaxListNameBytes;
  // ResourceExhausted for a new list past kMaxListsPerOwner. O(log lists),
  // plus O(members) when `exclusive` changes.
  virtual absl::StatusOr<bool> SetList(EntityId owner, ListId list,
                                       const ListSettings& settings) = 0;
  // Deletes the list with its members; false when there was none.
  virtual absl::StatusOr<bool> DeleteList(EntityId owner, ListId list) = 0;
  // Adds `member` to the list (true), or finds it there (false). NotFound
  // for a list `owner` does not have; ResourceExhausted for a new member
  // past kMaxListMembers. An owner may list itself. O(log members).
  virtual absl::StatusOr<bool> AddToList(EntityId owner, ListId list,
                                         EntityId member) = 0;
  // Removes `member` from the list; false when it was not there. NotFound
  // as AddToList.
  virtual absl::StatusOr<bool> RemoveFromList(EntityId owner, ListId list,
                                              EntityId member) = 0;
  // Every list of `owner`, by ascending id; empty for an entity without.
  virtual absl::StatusOr<std::vector<AccountList>> Lists(
      EntityId owner) const = 0;
  // The list's members, ascending, a page at a time (ListOptions, as
  // Followers). NotFound as AddToList; InvalidArgument for a bad limit or a
  // cursor of another list.
  virtual absl::StatusOr<EntityPage> ListMembers(
      EntityId owner, ListId list, const ListOptions& options) const = 0;
  // One page of the list's feed (see the class comment): newest first, or
  // oldest first, within ReadOptions' window, of its kinds. NotFound as
  // AddToList; InvalidArgument as ReadTimeline, and for a cursor made by
  // another list. O(members x log n + page x log members).
  virtual absl::StatusOr<Page> ReadList(EntityId owner, ListId list,
                                        const ReadOptions& options) const = 0;

 protected:
  FeedLists() = default;
  ~FeedLists() = default;
  FeedLists(const FeedLists&) = delete;
  FeedLists& operator=(const FeedLists&) = delete;
};

// The memory an in-process engine holds: expired entries reclaimed on
// demand, inactive readers released, counters of what it holds. A backend
// whose memory is a server's (the Redis Cluster backend: keys expire on
// their own, INFO counts them) lacks this facet.
class FEEDCORE_EXPORT FeedMaintenance {
 public:
  // Reclaims min(budget, expired entries held) expired timeline entries and
  // returns how many it reclaimed (expired activities in the store are
  // dropped too, within what is left of the budget); costs time in proportion
  // to that number (plus a logarithmic term per timeline touched), never to the
  // number of stored entries. Takes each shard's lock it reclaims from
  // exclusively, one at a time.
  virtual absl::StatusOr<size_t> EvictExpired(size_t budget) = 0;

  // Makes dormant up to `budget` readers that have not read their timeline
  // for EngineOptions::inactive_after (see "Inactive readers" in feed_engine.h)
  // and returns how many it made dormant; 0 when there are none (or `budget` is
  // 0). The sweeper calls it at every pass. Costs a scan of the graph nodes of
  // the shards it visits, plus, per reader made dormant, work in proportion to
  // its timeline and one lock per shard of its followees. FailedPrecondition
  // when EngineOptions::inactive_after is 0.
  virtual absl::StatusOr<size_t> ReleaseInactiveReaders(size_t budget) = 0;

  // Counters of the engine's contents and memory (see stats.h), each shard
  // read under its lock: O(shards).
  virtual absl::StatusOr<EngineStats> Stats() const = 0;

 protected:
  FeedMaintenance() = default;
  ~FeedMaintenance() = default;
  FeedMaintenance(const FeedMaintenance&) = delete;
  FeedMaintenance& operator=(const FeedMaintenance&) = delete;
};

}  // namespace feedcore

#endif  // FEEDCORE_FEED_FACETS_H_
