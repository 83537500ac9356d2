// RedisFeedEngine: FeedEngine on a Redis Cluster (see redis_cluster.h for
// what it does differently, docs/scale-out.md for the key layout). The
// writes, with the ordering that keeps copies right, are in
// redis_feed_engine.cc; the reads in redis_feed_reads.cc.
//
// Thread safety: as FeedEngine; the state is in Redis and the client's
// connection pool is thread-safe.
#ifndef FEEDCORE_REDIS_REDIS_FEED_ENGINE_H_
#define FEEDCORE_REDIS_REDIS_FEED_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/redis_cluster.h"
#include "feedcore/types.h"
#include "redis/cluster_client.h"
#include "redis/entry_codec.h"
#include "redis/key_slot.h"
#include "redis/reply.h"

namespace feedcore::redis {

// An Internal status for a reply to `what` that does not have the shape
// it expects.
absl::Status UnexpectedReply(absl::string_view what, const Reply& reply);
// Unimplemented: `what` (an activity kind other than 0, a filter by kind)
// is not available on this backend, whose members carry no kind.
absl::Status NoActivityKinds(absl::string_view what);

// The first `n` elements of an array reply to `what`, which must be
// integers; UnexpectedReply otherwise.
absl::StatusOr<std::vector<int64_t>> LeadingIntegers(const Reply& reply,
                                                     size_t n,
                                                     absl::string_view what);

class RedisFeedEngine final : public RedisClusterFeedEngine {
 public:
  RedisFeedEngine(std::unique_ptr<ClusterClient> client, EngineOptions options)
      : client_(std::move(client)), options_(std::move(options)) {}

  // Loads the scripts of feed_scripts.h and the other *_scripts.h into
  // every node (once per engine).
  absl::Status LoadScripts();

  // The core here and in redis_feed_reads.cc; the facets: read markers
  // (redis_feed_social.cc), grouped reads and notification feeds
  // (redis_feed_groups.cc), counters and ranked reads
  // (redis_feed_ranked.cc), mute and block (redis_feed_relations.cc),
  // edits and pins (redis_feed_edits.cc).
  absl::StatusOr<InsertResult> InsertFanout(
      absl::Span<const EntityId> owners, const TimelineEntry& entry,
      const InsertOptions& options) override;
  absl::StatusOr<InsertResult> InsertBatch(
      absl::Span<const OwnedEntry> entries,
      const InsertOptions& options) override;
  absl::Status Remove(EntityId owner, const EntryKey& key) override;
  absl::StatusOr<Page> ReadTimeline(EntityId owner,
                                    const ReadOptions& options) const override;
  absl::StatusOr<Page> ReadOwn(EntityId actor,
                               const ReadOptions& options) const override;
  absl::StatusOr<Page> ReadWorld(const ReadOptions& options) const override;
  absl::StatusOr<size_t> CountNewer(EntityId reader, const EntryKey& after,
                                    size_t max_count) const override;
  absl::StatusOr<GroupPage> ReadGroups(
      EntityId owner, const GroupReadOptions& options) const override;
  absl::StatusOr<GroupPage> ReadNotifications(
      EntityId user, const GroupReadOptions& options) override;
  absl::StatusOr<NotificationCounts> GetNotificationCounts(
      EntityId user) override;
  absl::StatusOr<NotificationCounts> MarkSeen(EntityId user) override;
  absl::StatusOr<NotificationCounts> MarkRead(EntityId user,
                                              const EntryKey& key) override;
  absl::StatusOr<NotificationCounts> MarkAllRead(EntityId user) override;
  absl::StatusOr<FollowResult> Follow(EntityId follower, EntityId followee,
                                      const FollowOptions& options) override;
  absl::StatusOr<UnfollowResult> Unfollow(
      EntityId follower, EntityId followee,
      const UnfollowOptions& options) override;
  absl::StatusOr<std::vector<FollowResult>> FollowMany(
      absl::Span<const FollowPair> pairs,
      const FollowOptions& options) override;
  absl::StatusOr<std::vector<UnfollowResult>> UnfollowMany(
      absl::Span<const FollowPair> pairs,
      const UnfollowOptions& options) override;
  absl::StatusOr<RelationResult> Block(EntityId blocker,
                                       EntityId blocked) override;
  absl::StatusOr<RelationResult> Unblock(
      EntityId blocker, EntityId blocked,
      const RestoreOptions& options) override;
  absl::StatusOr<RelationResult> Mute(EntityId muter, EntityId muted,
                                      const MuteOptions& options) override;
  absl::StatusOr<RelationResult> Unmute(EntityId muter, EntityId muted,
                                        const RestoreOptions& options) override;
  absl::StatusOr<EntityPage> Blocked(EntityId entity,
                                     const ListOptions& options) const override;
  absl::StatusOr<MutedPage> Muted(EntityId entity,
                                  const ListOptions& options) const override;
  absl::StatusOr<bool> SetReadMarker(EntityId user, const MarkedFeed& feed,
                                     const EntryKey& key,
                                     const SetMarkerOptions& options) override;
  absl::StatusOr<ReadMarker> GetReadMarker(EntityId user,
                                           const MarkedFeed& feed,
                                           size_t max_unread) const override;
  absl::StatusOr<ReadStatePage> ListReadMarkers(
      EntityId user, const ReadStateOptions& options) const override;
  absl::StatusOr<ActivityCounters> IncrementCounter(ActivityId activity_id,
                                                    size_t counter,
                                                    int64_t delta) override;
  absl::StatusOr<ActivityCounters> GetCounters(
      ActivityId activity_id) const override;
  absl::StatusOr<RankedPage> ReadRanked(
      EntityId owner, const RankedReadOptions& options) const override;
  absl::StatusOr<Micros> EditActivity(EntityId actor, ActivityId activity_id,
                                      std::string_view payload) override;
  absl::StatusOr<bool> Pin(EntityId owner, ActivityId activity_id) override;
  absl::StatusOr<bool> Unpin(EntityId owner, ActivityId activity_id) override;
  absl::StatusOr<std::vector<StoredEntry>> ReadPinned(
      EntityId owner, bool hydrate) const override;
  absl::StatusOr<EntityPage> Followers(
      EntityId entity, const ListOptions& options) const override;
  absl::StatusOr<EntityPage> Following(
      EntityId entity, const ListOptions& options) const override;
  absl::StatusOr<size_t> FollowerCount(EntityId entity) const override;
  absl::StatusOr<size_t> FollowingCount(EntityId entity) const override;
  absl::StatusOr<PublishResult> Publish(const Activity& activity,
                                        const PublishOptions& options) override;
  // The fan-out always completes inside Publish: nothing to wait for.
  void WaitForFanout() override {}
  absl::Status Retract(ActivityId activity_id) override;
  const EngineOptions& options() const override { return options_; }

 private:
  Micros Now() const { return options_.clock->Now(); }
  // An inserted entry's group key, kept only when the engine aggregates.
  GroupKey KeptGroup(GroupKey group) const {
    return options_.aggregation.enabled ? group : 0;
  }

  std::string Key(EntityId entity, absl::string_view kind) const {
    return absl::StrCat(client_->options().key_prefix, ":{", entity,
                        "}:", kind);
  }
  std::string WorldKey() const {
    return absl::StrCat(client_->options().key_prefix, ":{world}:tl");
  }
  std::string ActivityKey(ActivityId id) const {
    return absl::StrCat(client_->options().key_prefix, ":{a", id, "}:act");
  }
  // The set of the users an activity notified, beside its activity key.
  std::string RecipientsKey(ActivityId id) const {
    return absl::StrCat(client_->options().key_prefix, ":{a", id, "}:nr");
  }
  // `owner`'s pin list (edit_scripts.h), in its slot beside its own feed,
  // so that the removal of a retracted activity's copies ends its pin in
  // the same pipeline.
  std::string PinKey(EntityId owner) const { return Key(owner, "pn"); }
  // The key of `owner`'s feed of type `feed`: kHome, kOwn or kWorld (the
  // only ones this backend keeps).
  std::string FeedKey(FeedType feed, EntityId owner) const;

  static Command PlainCommand(std::vector<std::string> args) {
    Command command;
    command.slot = KeySlot(args[1]);
    command.args = std::move(args);
    return command;
  }

  // The key expiry that keeps a feed until its entry expiring at
  // `expires_at` has, plus a margin for the clocks (kKeyExpiryMargin).
  static int64_t KeyTtlMillis(Micros expires_at, Micros now);
  // Insert script calls putting `entry` into timelines, one call per slot
  // (ClusterClient::ScriptCommandsBySlot): `keys` holds, for each
  // timeline, its key and the key of its owner's following set. With
  // `only_if_following`, the entry goes into a timeline only while its
  // owner follows that actor.
  std::vector<Command> InsertCommands(
      std::vector<std::string> keys, const StoredEntry& entry, size_t cap,
      Micros now, std::optional<EntityId> only_if_following) const;
  // The insert script's ARGV for `entry`.
  static std::vector<std::string> InsertArgs(
      const StoredEntry& entry, size_t cap, Micros now,
      std::optional<EntityId> only_if_following);
  // The insert script call putting `entry` into the one timeline at
  // `timeline` (its owner's following set at `following`), as
  // InsertCommands.
  Command InsertCommand(std::string timeline, std::string following,
                        const StoredEntry& entry, size_t cap, Micros now,
                        std::optional<EntityId> only_if_following) const;
  // The keys of the home timelines of `owners`, as InsertCommands takes
  // them.
  std::vector<std::string> HomeTimelineKeys(
      absl::Span<const EntityId> owners) const;
  // Runs insert commands (pipelined per node) and sums what they did;
  // adds to `skipped` the timelines whose owner did not take the actor's
  // entry (not following it, or muting it).
  absl::StatusOr<InsertResult> RunInserts(std::vector<Command> commands,
                                          size_t* skipped = nullptr);
  // As RunInserts, with what each command did.
  absl::StatusOr<std::vector<InsertResult>> RunInsertsEach(
      std::vector<Command> commands, size_t* skipped = nullptr);

  // Timelines (or readers) one script call serves at most: bounds how
  // long the call holds its node, which runs nothing else meanwhile.
  static constexpr size_t kTimelinesPerCall = 64;

  // --- Hybrid fan-out (redis_feed_hybrid.cc) ---
  bool hybrid() const { return options_.hybrid_fanout_threshold > 0; }
  // How long the Follow that walks an actor's followers to switch it to
  // merged holds the walk without renewing it (after each chunk of
  // followers) before another Follow of the actor takes it over.
  static constexpr Micros kSwitchLease = 30 * kMicrosPerSecond;
  // The end of a lease taken or renewed at `now`, as hybrid_scripts.h
  // keeps it.
  static std::string SwitchLeaseUntil(Micros now) {
    const Micros until = now > std::numeric_limits<Micros>::max() - kSwitchLease
                             ? std::numeric_limits<Micros>::max()
                             : now + kSwitchLease;
    return BigEndian(static_cast<uint64_t>(until));
  }
  // The 16-byte key just above `newest` (a key's bytes, or "" for none:
  // then the least key), from which a reader merges what is published
  // after it.
  static std::string JustAbove(absl::string_view newest);
  // Where a new follower of merged `actor` merges it from: the oldest of
  // the newest `backfill` entries of its own feed, as back-fill would have
  // copied, or just above `newest` when that is none.
  absl::StatusOr<std::string> FollowBoundary(EntityId actor, size_t backfill,
                                             absl::string_view newest) const;
  // Makes each of `readers` that follows `actor` merge it from `boundary`;
  // with `keep_set`, a boundary already set stays.
  absl::Status MergeFor(absl::Span<const EntityId> readers, EntityId actor,
                        const std::string& boundary, bool keep_set);
  // Ends an actor's switch to merged: every follower merges it from just
  // above `newest` (unless it already does), then its publishes stop
  // copying.
  absl::Status MergeAllFollowers(EntityId actor, absl::string_view newest);
  // Up to `want` visible entries of `owner`'s home timeline in the key
  // range, merged with the own feeds of the actors it merges (each from
  // its boundary), without duplicate keys, within the newest
  // max_timeline_length of them all, as in process.
  // Counts the visible entries of `feed` after `marker->key`, at most
  // `max_unread` (setting more_unread past it), into `marker`.
  absl::Status CountUnread(const MarkedFeed& feed, size_t max_unread,
                           ReadMarker* marker) const;
  absl::StatusOr<std::vector<StoredEntry>> CollectHome(EntityId owner,
                                                       ReadOrder order,
                                                       EntryKey lo, EntryKey hi,
                                                       size_t want) const;
  // The oldest key a merged view keeps under the cap, when the timeline
  // and the merged own feeds together hold more than max_timeline_length
  // entries.
  absl::StatusOr<std::optional<EntryKey>> MergedCapFloor(
      const std::string& timeline,
      absl::Span<const std::pair<EntityId, EntryKey>> merged) const;

  // The back-fill a Follow asks for, capped at the timeline's length;
  // InvalidArgument when out of range.
  absl::StatusOr<size_t> BackfillCount(const FollowOptions& options) const;
  // Follow and FollowMany once their arguments are checked: each step of
  // Follow (redis_feed_engine.cc says why in that order) is one pipelined
  // call for all the pairs.
  absl::StatusOr<std::vector<FollowResult>> FollowPairs(
      absl::Span<const FollowPair> pairs, size_t backfill);
  // FollowPairs' part for hybrid fan-out, after the edges are in: pairs
  // whose followee is merged (`modes` not empty) merge it instead of
  // copying; switches to merged that these pairs started (or must finish)
  // tell every follower; copied pairs whose followee began switching
  // meanwhile merge what comes next.
  absl::Status FollowMerged(absl::Span<const FollowPair> pairs, size_t backfill,
                            absl::Span<const std::string> modes,
                            absl::Span<const std::string> newest,
                            absl::Span<const FollowResult> results);
  // Copies the newest `backfill` entries of each followee into its
  // follower's timeline, for the pairs `copy` marks (while the follower
  // follows it and does not mute it: the insert script checks); returns
  // how many each pair got (inserted + replaced).
  absl::StatusOr<std::vector<size_t>> CopyRecent(
      absl::Span<const FollowPair> pairs, const std::vector<bool>& copy,
      size_t backfill);
  // What Unmute and Unblock restore once `user` shows `actor` again:
  // nothing unless it follows the actor; a merged actor's merge moves to
  // where a back-fill of `backfill` would begin (0 is returned, as
  // Follow reports a merged followee); a copied one gets its back-fill.
  absl::StatusOr<size_t> Restore(EntityId user, EntityId actor, bool follows,
                                 bool merged, size_t backfill);
  // Blocked and Muted: one page of `entity`'s blocked (`muted` false) or
  // muted actors, expired mutes left out.
  absl::StatusOr<MutedPage> ReadRelationList(bool muted, EntityId entity,
                                             const ListOptions& options) const;
  // Unfollow and UnfollowMany once their arguments are checked.
  absl::StatusOr<std::vector<UnfollowResult>> UnfollowPairs(
      absl::Span<const FollowPair> pairs, bool keep_history);
  // Unfollow with keep_history: copies into each follower's timeline what
  // its merge of the followee showed, from `merged_from` (16-byte keys, ""
  // for a pair that merged nothing), as copying would have left it.
  absl::Status KeepMergedHistory(absl::Span<const FollowPair> pairs,
                                 absl::Span<const std::string> merged_from);

  // Up to `want` visible entries of the feed at `key` whose keys lie in
  // [lo, hi], in `order`.
  absl::StatusOr<std::vector<StoredEntry>> Collect(std::string key,
                                                   ReadOrder order, EntryKey lo,
                                                   EntryKey hi,
                                                   size_t want) const;
  // The common case without a script: one ZRANGE BYSCORE of a few more
  // members than wanted, filtered here. Returns true when that settles the
  // answer: `want` visible entries in the key range, or the score range
  // exhausted with nothing expired met. False when an expired member was
  // met (the script must reclaim it) or too many members fell outside the
  // key range (a cursor's or window's bound inside a timestamp shared by
  // several entries); `entries` is then to be discarded.
  absl::StatusOr<bool> CollectPlain(const std::string& key, ReadOrder order,
                                    EntryKey lo, EntryKey hi, size_t want,
                                    Micros now,
                                    std::vector<StoredEntry>* entries) const;
  static absl::Status ForeignMember();
  // One page of a feed, as ReadTimeline describes.
  absl::StatusOr<Page> ReadFeed(FeedType feed, EntityId owner,
                                const ReadOptions& options) const;
  // Marks a publish delivered, and removes its copies again when a
  // Retract ran meanwhile; returns `result`.
  absl::StatusOr<PublishResult> FinishPublish(const StoredEntry& entry,
                                              const PublishResult& result);
  // Fills in each entry's payload and edit time (StoredEntry::edited_at)
  // from its activity.
  absl::Status Hydrate(std::vector<StoredEntry>* entries) const;

  // One page of `entity`'s followers (or followees).
  absl::StatusOr<EntityPage> ReadList(bool followers, EntityId entity,
                                      const ListOptions& options) const;
  // Up to `count` ids of the set at `key` from the lexical bound `start`
  // on; ids are 8-byte big-endian members of score 0, so lexical order is
  // id order. A following set's parked edges (lua_relations.h) are the id
  // and 9 more bytes, and list as the id.
  absl::StatusOr<std::vector<EntityId>> ListIds(const std::string& key,
                                                const std::string& start,
                                                size_t count) const;
  // The lexical bound just above every member that starts with `id`.
  static std::string ListStartAfter(EntityId id) {
    return absl::StrCat("(", BigEndian(id), "\xff");
  }

  // Calls `visit` with `actor`'s followers, up to kFollowerChunk at a time
  // in id order, until it fails or they run out.
  absl::Status ForEachFollowerChunk(
      EntityId actor,
      absl::FunctionRef<absl::Status(const std::vector<EntityId>&)> visit)
      const;
  // As ForEachFollowerChunk, over the ids of the set at `key`.
  absl::Status ForEachIdChunk(
      const std::string& key,
      absl::FunctionRef<absl::Status(const std::vector<EntityId>&)> visit)
      const;
  // Removes the entry with `entry`'s key from its actor's own feed, the
  // world feed and the timelines of the actor's followers and of its
  // former followers that kept their copies, and ends the actor's pin of
  // it. By key, not by
  // member: a follower's copy may since have been overwritten by an Insert
  // with the same key (another actor or expiry), and it is still the
  // activity's entry, as the in-process engine sees it.
  absl::Status RemoveCopies(const StoredEntry& entry);
  // --- Grouped reads and notification feeds (redis_feed_groups.cc) ---

  // Fills in the payloads of every group's entries, in one pipeline.
  absl::Status HydrateGroups(GroupPage* page) const;
  // Runs the mark script (notification_scripts.h) on `user`'s feed with
  // `what` as its arguments after now; nullopt when "one" finds no
  // visible entry with the key.
  absl::StatusOr<std::optional<NotificationCounts>> MarkNotifications(
      EntityId user, std::vector<std::string> what);
  // Delivers `entry` to the notification feeds of `recipients` (distinct,
  // already recorded with the activity for Retract) but those who block
  // or mute its actor, one script call per slot, and calls
  // NotificationOptions::on_notify for each feed that took it. Returns
  // how many did.
  absl::StatusOr<size_t> Notify(absl::Span<const EntityId> recipients,
                                const StoredEntry& entry, Micros now);
  // Removes `entry`'s key from the notification feed of every recipient
  // of its activity.
  absl::Status RemoveNotifications(const StoredEntry& entry);

  // The size of the sorted set at `key`.
  absl::StatusOr<size_t> Count(const std::string& key) const;

  const std::unique_ptr<ClusterClient> client_;
  const EngineOptions options_;
  redis::Script insert_;
  redis::Script read_;
  redis::Script remove_;
  redis::Script unfollow_;
  redis::Script store_activity_;
  redis::Script finish_publish_;
  redis::Script retract_;
  redis::Script finish_retract_;
  redis::Script set_marker_;
  redis::Script note_publish_;
  redis::Script add_follower_;
  redis::Script merge_followee_;
  redis::Script notify_;
  redis::Script unnotify_;
  redis::Script read_notifications_;
  redis::Script mark_notifications_;
  redis::Script increment_counter_;
  redis::Script date_counters_;
  redis::Script follow_edge_;
  redis::Script block_;
  redis::Script mute_;
  redis::Script unmute_;
  redis::Script merged_followees_;
  redis::Script edit_activity_;
  redis::Script pin_;
  redis::Script unpin_;
};

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_REDIS_FEED_ENGINE_H_
