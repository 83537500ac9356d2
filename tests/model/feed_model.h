// The reference model of FeedEngine: timelines and the low-level calls
// (Insert, InsertFanout, InsertBatch, Remove), the social graph, Publish and
// Retract, the own and world feeds, reads with windows and cursors, grouped
// reads, notification feeds and EvictExpired. Plain containers, every
// question answered by brute force, so that it is obviously right.
//
// Shared by the model-based tests (tests/feed/model_test.cc,
// social_model_test.cc, notification_model_test.cc), the conformance model
// test (tests/conformance/feed_conformance_model_test.cc) and the
// API-sequence fuzz targets (fuzz/api_sequence_fuzzer.cc,
// fuzz/social_sequence_fuzzer.cc), so all of them
// hold every backend to one reading of the contract in feed_engine.h. Free
// of any test framework.
//
// What it keeps:
//   * a feed is a map (ts, activity id) -> (actor, expiry, group key). A put
//     of a key the feed holds replaces its value; a put into a feed at its
//     cap drops the oldest entry, or the new one if it is older than all.
//     Timelines and own feeds are capped at max_timeline_length, the world
//     feed at world_timeline_length;
//   * expired entries stay in their feeds, invisible but counting towards
//     the cap, until EvictExpired reclaims them, as the engine keeps them
//     until its sweeper or an eviction passes;
//   * Publish stores the activity and puts its entry into the actor's own
//     feed, the world feed and every current follower's timeline;
//   * Follow back-fills the newest visible entries of the followee's own
//     feed; Unfollow removes every entry of the followee from the
//     follower's timeline, low-level inserts included (unless it keeps the
//     history);
//   * a reader's timeline is what these copies leave, whatever
//     hybrid_fanout_threshold and inactive_after say: the engine's merge at
//     read, and its rebuild of a dormant reader, show exactly that
//     (feed_engine.h). The model only tracks which actors are merged
//     (an actor becomes so, for good, when a Follow leaves it with more
//     followers than the threshold, 0: never) for what the calls report:
//     PublishResult::merged_at_read and fanned_out, FollowResult's
//     back-fill count (0 for a merged followee), and how ReadGroups
//     answers;
//   * mute and block: a user's blocked actors and mutes (notifications
//     flag, expiry or none). Block ends both follows (as Unfollow) and
//     removes the actor's entries from the user's timeline and
//     notification feed; Mute removes them from the timeline (and the
//     notification feed with the flag). While a block or an unexpired mute
//     lasts, Publish copies nothing to the user (nor counts it in
//     fanned_out), Follow back-fills nothing, and notifications (blocks, or
//     mutes with the flag) skip the user; Follow between a blocking pair
//     changes nothing (the engine says FailedPrecondition). Unmute and
//     Unblock back-fill as Follow does if the user follows the actor (and
//     report it as Follow does: 0 for a merged actor);
//   * Retract drops the activity's key from its own feed, the world feed,
//     the timeline of every current follower and of every former one that
//     kept its history, and every recipient's notification feed, and keeps
//     the activity as a tombstone until it expires and is evicted;
//   * a notification feed per user holds at most notifications.max_length
//     entries, with the seen and read flags of each group it holds; a group
//     whose last entry leaves takes its flags with it;
//   * a read marker per (user, feed): a key that moves forward only, unless
//     forced; its unread count is the feed's visible entries newer than it;
//   * mentions per (user, channel) by a publish's PublishOptions::mentions
//     (not of a user whose notifications refuse the actor, nor at or
//     before its marker there), the newest kMaxMentionsPerFeed, dropped
//     when a marker passes them and counted while the channel's own feed
//     holds them visible;
//   * with reposts.window, a timeline read leaves out a repost (an entry of
//     a repost kind whose activity has repost_of) while its original or
//     an entry reposting the same is among the window's visible entries
//     just older than it, before the read's kind filter;
//   * lists per owner (settings, members); a list reads as the visible
//     entries of its members' own feeds but those the owner hides (block,
//     mute in force) or that block it; a timeline read leaves out the
//     entries of the members of the owner's exclusive lists, before the
//     repost window;
//   * an edit replaces an activity's payload and stamps it (edited_at); a
//     re-publish of an edited activity compares only actor and ts;
//   * an own feed's pins, most recent first: (key, expiry) of activities
//     the owner published, listed while visible, dropped by Unpin and
//     Retract, and at most kMaxPinnedEntries visible ones;
//   * each activity's counters and the time of their last change, kept
//     until the activity is evicted; a ranked page scores every entry of
//     the walk's window with RankFormula written out again here, sorts
//     them all and cuts the page after the cursor.
// Group keys come from aggregation.group_key, which must be set when the
// model is asked to group (aggregation.enabled or aggregated notifications):
// the engine's default key is private to it.
#ifndef FEEDCORE_TESTS_MODEL_FEED_MODEL_H_
#define FEEDCORE_TESTS_MODEL_FEED_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/social.h"
#include "feedcore/types.h"

namespace feedcore::testing {

// Which feed a read goes to.
enum class Feed { kTimeline, kOwn, kWorld };

// The groups of `entries` (a whole feed's visible entries, in any order),
// newest group first, listing at most `max_actors` actors and `max_entries`
// entries per group: what ReadGroups and ReadNotifications return, worked out
// from the flat entries with ordinary containers.
std::vector<FeedGroup> ReferenceGroups(std::vector<StoredEntry> entries,
                                       size_t max_actors, size_t max_entries);

class FeedModel {
 public:
  using Key = std::pair<Micros, ActivityId>;
  struct Value {
    EntityId actor = 0;
    Micros expires_at = 0;
    GroupKey group = 0;
    ActivityKind kind = 0;
  };
  // Oldest first.
  using FeedMap = std::map<Key, Value>;

  // A published activity, kept (retracted or not) until it is evicted.
  struct Activity {
    EntityId actor = 0;
    Micros ts = 0;
    Micros expires_at = 0;
    std::string payload;
    GroupKey group = 0;  // its timeline entries' key
    ActivityKind kind = 0;
    bool retracted = false;
    std::vector<EntityId> recipients;  // of its notifications, distinct
    ActivityCounters counters = {};
    std::optional<Micros> counters_changed_at;  // unset: never changed
    Micros edited_at = 0;                       // 0: never edited
    ActivityId repost_of = 0;                   // Activity::repost_of
    // (kind, user) -> when, and the reaction's notice id (0: none).
    std::map<std::pair<ReactionKind, EntityId>, std::pair<Micros, ActivityId>>
        reactions;
  };

  // Where a ranked walk stands: its start and the last entry shown.
  struct RankedPlace {
    Micros start = 0;
    double score = 0;
    Key key;
  };
  struct RankedResult {
    std::vector<RankedEntry> entries;
    std::optional<RankedPlace> next;  // unset at the end of the walk
  };

  // What the engine's Stats report, worked out from the model.
  struct Totals {
    size_t entries = 0, activities = 0, retracted = 0, payload_bytes = 0,
           follow_edges = 0;
    uint64_t activities_evicted = 0;
  };

  // How the engine groups a reader's timeline: from its group index unless
  // the reader follows an actor merged at read or holds an expired entry
  // (the index counts those).
  enum class GroupSource { kIndex, kMerged, kExpired };

  // What happened to notification feeds so far, for the tests' coverage
  // checks.
  struct NotificationTally {
    uint64_t trimmed = 0, rejected = 0, rejoined_seen = 0;
  };

  // The options of the engine under test: caps, default_ttl,
  // max_payload_bytes, hybrid_fanout_threshold, aggregation, notifications.
  explicit FeedModel(const EngineOptions& options);

  FeedModel(const FeedModel&) = delete;
  FeedModel& operator=(const FeedModel&) = delete;
  FeedModel(FeedModel&&) = default;
  FeedModel& operator=(FeedModel&&) = default;

  // --- Low-level timeline calls ---

  // The expiry an insert with `o` at time `now` gives its entries.
  Micros ExpiryFor(const InsertOptions& o, Micros now) const;

  // Puts `e` into `owner`'s timeline and counts what happened in `r`, as
  // Insert counts it.
  void Insert(EntityId owner, const TimelineEntry& e, Micros expires_at,
              InsertResult* r);

  // True when `owner`'s timeline held the key (and now does not).
  bool Remove(EntityId owner, Key key);

  // --- Social calls ---

  // The result Publish gives at `now`: InvalidArgument for an activity the
  // engine refuses, FailedPrecondition for a retracted id, AlreadyExists for
  // another activity under a stored id.
  absl::StatusOr<PublishResult> Publish(const feedcore::Activity& a,
                                        const PublishOptions& options,
                                        Micros now);
  absl::StatusOr<PublishResult> Publish(const feedcore::Activity& a,
                                        Micros now) {
    return Publish(a, PublishOptions(), now);
  }

  // NotFound for an id never published or evicted; OK otherwise.
  absl::StatusCode Retract(ActivityId id);

  // Changes nothing (`created` false) when EitherBlocks. A new edge
  // delivers `kinds` (KindFilter::kinds; unset: every kind).
  FollowResult Follow(EntityId follower, EntityId followee, size_t backfill,
                      Micros now, std::optional<uint64_t> kinds = std::nullopt);
  // Whether Follow with `kinds` is refused (FailedPrecondition): `follower`
  // follows `followee` with other kinds already.
  bool FollowsWithOtherKinds(EntityId follower, EntityId followee,
                             std::optional<uint64_t> kinds) const;
  // The kinds `follower`'s follow of `followee` delivers.
  uint64_t KindsFollowed(EntityId follower, EntityId followee) const;
  UnfollowResult Unfollow(EntityId follower, EntityId followee,
                          bool keep_history = false);

  // --- Mute and block ---

  RelationResult Block(EntityId blocker, EntityId blocked);
  RelationResult Unblock(EntityId blocker, EntityId blocked, size_t backfill,
                         Micros now);
  // REQUIRES: options valid at `now` (the engine refuses the others).
  RelationResult Mute(EntityId muter, EntityId muted,
                      const MuteOptions& options, Micros now);
  RelationResult Unmute(EntityId muter, EntityId muted, size_t backfill,
                        Micros now);
  bool EitherBlocks(EntityId a, EntityId b) const;
  // Ascending ids, as Blocked and Muted list them (unexpired mutes only).
  std::vector<EntityId> BlockedList(EntityId user) const;
  std::vector<MutedActor> MutedList(EntityId user, Micros now) const;

  // --- Reads ---

  // The visible entries of a feed at `now` in `order`, within the window,
  // strictly after `after` in that order, of the kinds `kinds` keeps
  // (KindFilter::kinds); with the payload when `hydrate`.
  std::vector<StoredEntry> Read(Feed feed, EntityId owner, ReadOrder order,
                                std::optional<Micros> min_ts,
                                std::optional<Micros> max_ts,
                                std::optional<Key> after, Micros now,
                                bool hydrate,
                                uint64_t kinds = KindFilter::kEveryKind) const;

  // Every visible entry of `owner`'s timeline, newest first.
  std::vector<StoredEntry> Timeline(EntityId owner, Micros now) const {
    return Read(Feed::kTimeline, owner, ReadOrder::kNewestFirst, std::nullopt,
                std::nullopt, std::nullopt, now, false);
  }
  // The same with the reposts a repost window hides and the accounts of
  // exclusive lists: what was delivered (what FeedDeliveries tells of).
  std::vector<StoredEntry> Delivered(EntityId owner, Micros now) const {
    return ReadFeed(Feed::kTimeline, owner, ReadOrder::kNewestFirst,
                    std::nullopt, std::nullopt, std::nullopt, now, false,
                    KindFilter::kEveryKind, /*home_view=*/false);
  }

  // Visible entries of `reader`'s timeline newer than `key`, at most
  // `max_count` (what CountNewer answers).
  size_t CountNewer(EntityId reader, Key key, size_t max_count,
                    Micros now) const;

  // Every group of `reader`'s timeline at `now`, newest first, made of
  // its entries of `kinds`.
  std::vector<FeedGroup> Groups(EntityId reader, Micros now,
                                uint64_t kinds = KindFilter::kEveryKind) const;
  GroupSource GroupsFrom(EntityId reader, Micros now) const;

  // The payload hydration gives the entry with id `id`: the activity's
  // while it is stored and not retracted, else nothing; and its edit time
  // (0 then, or never edited).
  std::string Payload(ActivityId id) const;
  Micros EditedAt(ActivityId id) const;

  // --- Edits and pins (feed_model_edits.cc) ---

  // What EditActivity answers at `now`: InvalidArgument for a payload too
  // large, NotFound for an activity not stored, retracted or expired,
  // PermissionDenied for another actor; else the edit's time.
  absl::StatusOr<Micros> EditActivity(EntityId actor, ActivityId id,
                                      const std::string& payload, Micros now);
  // What Pin and Unpin answer at `now`.
  absl::StatusOr<bool> Pin(EntityId owner, ActivityId id, Micros now);
  bool Unpin(EntityId owner, ActivityId id);
  // What ReadPinned answers at `now`.
  std::vector<StoredEntry> Pinned(EntityId owner, Micros now,
                                  bool hydrate) const;

  // --- Lists (feed_model_lists.cc) ---

  // What SetList, DeleteList, AddToList and RemoveFromList answer.
  absl::StatusOr<bool> SetList(EntityId owner, ListId list,
                               const ListSettings& settings);
  absl::StatusOr<bool> DeleteList(EntityId owner, ListId list);
  absl::StatusOr<bool> ChangeListMember(EntityId owner, ListId list,
                                        EntityId member, bool add);
  // What Lists answers.
  std::vector<AccountList> Lists(EntityId owner) const;
  // Every member ListMembers pages through, ascending; NotFound as the
  // engine says it.
  absl::StatusOr<std::vector<EntityId>> ListMembers(EntityId owner,
                                                    ListId list) const;
  // What ReadList pages through at `now`, as Read for a feed (its window,
  // `after`, kinds and hydration); NotFound as ListMembers.
  absl::StatusOr<std::vector<StoredEntry>> ReadList(
      EntityId owner, ListId list, ReadOrder order,
      std::optional<Micros> min_ts, std::optional<Micros> max_ts,
      std::optional<Key> after, Micros now, bool hydrate,
      uint64_t kinds = KindFilter::kEveryKind) const;
  // Whether `owner`'s home timeline leaves out `actor`: a member of one of
  // its exclusive lists.
  bool ExcludesFromHome(EntityId owner, EntityId actor) const;

  // --- Reactions (feed_model_reactions.cc) ---

  // What React answers at `now`, with a notice (stored, and put in the
  // actor's notification feed unless it refuses the reactor) for a new
  // reaction of another user than the actor.
  absl::StatusOr<ReactionResult> React(EntityId user, ActivityId id,
                                       ReactionKind kind,
                                       const ReactOptions& options, Micros now);
  // What Unreact answers at `now`; retracts the reaction's notice.
  absl::StatusOr<ReactionResult> Unreact(EntityId user, ActivityId id,
                                         ReactionKind kind, Micros now);
  // What GetOwnReactions answers at `now`.
  std::vector<ReactionKinds> OwnReactions(EntityId user,
                                          const std::vector<ActivityId>& ids,
                                          Micros now) const;
  // Every reactor ReadReactors pages through at `now`, most recent first;
  // NotFound as React.
  absl::StatusOr<std::vector<Reactor>> Reactors(ActivityId id,
                                                ReactionKind kind,
                                                Micros now) const;

  // --- Counters and ranked reads ---

  // IncrementCounter at `now`: NotFound for an activity not stored,
  // retracted or expired; InvalidArgument for a counter out of range, a
  // zero delta or an overflow.
  absl::StatusOr<ActivityCounters> IncrementCounter(ActivityId id,
                                                    size_t counter,
                                                    int64_t delta, Micros now);
  absl::StatusOr<ActivityCounters> Counters(ActivityId id, Micros now) const;
  // RankFormula's score, as feed_engine.h defines it.
  static double Score(const RankFormula& formula,
                      const ActivityCounters& counters, Micros start,
                      Micros ts);
  // A page of `owner`'s ranked walk read at `now`: the first one when
  // `after` is unset (the walk starts at `now`). The window is the newest
  // `window` visible entries, on later pages among those dated at or
  // before the start, leaving out entries whose counters changed at or
  // after the start, and entries of kinds `kinds` leaves out; the page
  // holds the best `limit` of the window below `after` by (score, key).
  RankedResult Ranked(EntityId owner, const RankFormula& formula, size_t window,
                      size_t limit, const std::optional<RankedPlace>& after,
                      Micros now, bool hydrate,
                      uint64_t kinds = KindFilter::kEveryKind) const;

  // --- Notifications ---

  // What every notification call of `user` does first: drops the expired
  // entries of its feed. Returns how many.
  size_t ReclaimNotifications(EntityId user, Micros now);
  // Whether `user`'s notification feed refuses `actor` now (a block, or a
  // mute of notifications).
  bool HidesInNotifications(EntityId user, EntityId actor, Micros now) const;
  void MarkSeen(EntityId user);
  void MarkAllRead(EntityId user);
  // False (NotFound) when `user`'s feed does not hold `key`.
  bool MarkRead(EntityId user, Key key);
  NotificationCounts Counts(EntityId user) const;
  // `user`'s notification groups of `kinds`, newest first, with their
  // flags.
  std::vector<FeedGroup> Notifications(
      EntityId user, uint64_t kinds = KindFilter::kEveryKind) const;
  const FeedMap& notifications(EntityId user) const;
  const NotificationTally& notification_tally() const { return tally_; }

  // --- Read markers ---

  // What SetReadMarker answers: InvalidArgument for the arguments the
  // engine refuses (and then nothing changes); else whether it moved.
  absl::StatusOr<bool> SetReadMarker(EntityId user, const MarkedFeed& feed,
                                     Key key, bool force);
  // What GetReadMarker answers at `now`.
  absl::StatusOr<ReadMarker> GetReadMarker(EntityId user,
                                           const MarkedFeed& feed,
                                           size_t max_unread, Micros now) const;
  // Every feed where `user` has a marker or a mention, as ListReadMarkers
  // pages them, all at once.
  std::vector<FeedReadState> ReadStates(EntityId user, size_t max_unread,
                                        Micros now) const;
  using MarkerKey = std::tuple<EntityId, FeedType, EntityId>;
  const std::map<MarkerKey, Key>& read_markers() const { return markers_; }

  // --- Expiry ---

  // Entries held that have expired at `now`: what an EvictExpired with an
  // unlimited budget reclaims (timelines, own and world feeds,
  // notifications).
  size_t CountExpired(Micros now) const;
  // Reclaims them and evicts the activities that expired; returns how many
  // entries that was.
  size_t EvictExpired(Micros now);

  // --- What the model holds ---

  const FeedMap& feed(Feed feed, EntityId owner) const;
  // A stored key of `owner`'s timeline picked by `index` modulo its size.
  std::optional<Key> KeyAt(EntityId owner, uint64_t index) const;
  std::optional<Key> AnyKey(EntityId owner, std::mt19937_64& rng) const {
    return KeyAt(owner, rng());
  }

  bool Follows(EntityId follower, EntityId followee) const;
  const std::set<EntityId>& Followers(EntityId e) const;
  const std::set<EntityId>& Following(EntityId e) const;
  size_t merged_count() const { return merged_.size(); }
  bool merged(EntityId actor) const { return merged_.contains(actor); }

  // Activities stored (until evicted) and ids evicted so far.
  const std::map<ActivityId, Activity>& activities() const {
    return activities_;
  }
  const std::set<ActivityId>& evicted() const { return evicted_; }

  // Entries held, expired ones included, in timelines, own and world feeds.
  size_t entries() const;
  // Timelines holding at least one entry.
  size_t timelines() const;
  size_t follow_edges() const;
  Totals Expected() const;

 private:
  struct Flags {
    bool seen = false;
    bool read = false;
  };
  // A group of a notification feed: its key, or for key 0 the entry's own.
  using Slot = std::pair<GroupKey, Key>;
  struct NotificationFeed {
    FeedMap notes;
    std::map<Slot, Flags> flags;
  };

  struct MuteEntry {
    bool notifications = false;
    Micros expires_at = 0;  // 0: none
    bool ActiveAt(Micros now) const {
      return expires_at == 0 || expires_at > now;
    }
  };
  // `user`'s mute of `actor` if it is in force at `now`, else nullptr.
  const MuteEntry* ActiveMute(EntityId user, EntityId actor, Micros now) const;
  bool Blocks(EntityId user, EntityId actor) const;
  bool HidesInTimeline(EntityId user, EntityId actor, Micros now) const;
  // Copies the newest `count` visible entries of `followee`'s own feed into
  // `follower`'s timeline; returns how many.
  size_t Backfill(EntityId follower, EntityId followee, size_t count,
                  Micros now);
  // Removes `actor`'s entries from `user`'s timeline and, with
  // `notifications`, its notification feed; returns how many.
  size_t PurgeActor(EntityId user, EntityId actor, bool notifications);

  static Slot SlotOf(const Key& key, const Value& value);
  static void Put(FeedMap& feed, size_t cap, const Key& key, const Value& value,
                  InsertResult* r);
  // An own feed's put: the cap holds per kind, each kind keeping its newest
  // `cap` entries.
  static void PutKeepingEachKind(FeedMap& feed, size_t cap, const Key& key,
                                 const Value& value);
  static void EraseNote(NotificationFeed& feed, const Key& key);
  void Notify(EntityId user, const Key& key, const Value& value);
  // PublishOptions::mentions: `user` mentioned by `key` in `channel`.
  void Mention(EntityId user, EntityId channel, const Key& key, Micros now);
  GroupKey TimelineGroupOf(const feedcore::Activity& a) const;
  // Read, applying a timeline's home view (exclusive lists, the repost
  // window) or not.
  std::vector<StoredEntry> ReadFeed(Feed feed, EntityId owner, ReadOrder order,
                                    std::optional<Micros> min_ts,
                                    std::optional<Micros> max_ts,
                                    std::optional<Key> after, Micros now,
                                    bool hydrate, uint64_t kinds,
                                    bool home_view) const;
  // What the entry reposts, as the engine sees it: its activity's
  // repost_of when its kind is a repost kind, else 0.
  ActivityId RepostOf(const Key& key, const Value& value) const;
  // The reposts of `owner`'s `timeline` that EngineOptions::reposts hides
  // at `now` (in the view without its exclusive lists' accounts).
  std::set<Key> HiddenReposts(EntityId owner, const FeedMap& timeline,
                              Micros now) const;

  size_t cap_;
  size_t world_cap_;
  Micros default_ttl_;
  size_t max_payload_bytes_;
  size_t max_page_size_;
  size_t hybrid_threshold_;
  AggregationOptions aggregation_;
  NotificationOptions notification_options_;
  RepostOptions reposts_;

  std::map<EntityId, FeedMap> timelines_;
  std::map<EntityId, FeedMap> own_;
  FeedMap world_;
  std::map<EntityId, std::set<EntityId>> followers_;
  std::map<EntityId, std::set<EntityId>> following_;
  // (follower, followee) -> the kinds of a follow of fewer than every kind.
  std::map<std::pair<EntityId, EntityId>, uint64_t> follow_kinds_;
  std::set<EntityId> merged_;
  // Former followers of an actor that kept their history.
  std::map<EntityId, std::set<EntityId>> history_kept_;
  std::map<ActivityId, Activity> activities_;
  std::set<ActivityId> evicted_;
  uint64_t activities_evicted_ = 0;
  std::map<EntityId, NotificationFeed> notification_feeds_;
  std::map<EntityId, std::set<EntityId>> blocking_;
  std::map<EntityId, std::map<EntityId, MuteEntry>> muting_;
  struct ModelList {
    ListSettings settings;
    std::set<EntityId> members;
  };
  // owner -> its lists.
  std::map<EntityId, std::map<ListId, ModelList>> lists_;
  NotificationTally tally_;
  std::map<MarkerKey, Key> markers_;
  // (user, channel) -> the keys that mention the user there, newer than
  // its marker, at most kMaxMentionsPerFeed.
  std::map<std::pair<EntityId, EntityId>, std::set<Key>> mentions_;
  struct PinnedKey {
    Key key;
    Micros expires_at = 0;
  };
  // Most recent first.
  std::map<EntityId, std::vector<PinnedKey>> pins_;
};

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_MODEL_FEED_MODEL_H_
