// FeedEngineImpl: the in-memory FeedEngine.
//
// S shards (shard.h), each on its own cache lines: everything about an
// entity lives in shard XXH3_64bits(entity) % S. Activities are stored
// once in the ActivityStore, sharded by activity id with locks of its own.
// This class routes each call to its shards and orders the steps of calls
// that span several; each concern is in a file of its own:
//   feed_writes.cc         Insert, InsertFanout, InsertBatch, Remove
//   feed_reads.cc          timeline, own, world and grouped reads (the
//                          merge itself is page_merger.h)
//   feed_graph.cc          Follow, Unfollow, the switch of an
//                          actor to merge-at-read, follower lists
//   feed_graph_batch.cc    the phases of Follow and Unfollow, for one pair
//                          or many (FollowMany, UnfollowMany)
//   feed_relations.cc      mute and block
//   feed_markers.cc        read markers
//   feed_ranked.cc         activity counters and ranked reads
//   feed_edits.cc          edits and pins
//   delivery_hub.cc        delivery subscriptions (publish feeds them)
//   feed_inactive.cc       inactive readers: made dormant, rebuilt
//   feed_publish.cc        Publish, its fan-out, Retract
//   feed_notifications.cc  notification feeds and grouped paging
//   feed_eviction.cc       EvictExpired
//   feed_stats.cc          Stats
//   feed_replay.cc         ApplyChange
//   feed_snapshot.cc       SerializeDomain, LoadDomain
//   feed_write_gate.cc     every public write: its XInMemory inside the
//                          change log's write gate (a DurableStore's)
//
// Thread safety
// -------------
// Every public method is thread-safe.
//
// Lock order (shard.h, docs/architecture.md):
//   follow stripe (per follower; Follow/Unfollow only)
//     -> at most one shard lock at a time
//          -> leaf locks: activity store shard, change log, fan-out pool,
//             tracker stripe, delivery hub (delivery_hub.h)
// No call ever holds two shard locks. Work that spans shards (fan-out,
// purges, merged reads) snapshots what it needs under one shard's lock,
// releases it, and then visits the other shards one at a time. Callbacks
// run with no lock held.
#ifndef FEEDCORE_SRC_FEED_FEED_ENGINE_IMPL_H_
#define FEEDCORE_SRC_FEED_FEED_ENGINE_IMPL_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "feed/activity_store.h"
#include "feed/delivery_hub.h"
#include "feed/fanout_pool.h"
#include "feed/fanout_tracker.h"
#include "feed/shard.h"
#include "feed/sweeper.h"
#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "stream/change_log.h"
#include "timeline/timeline.h"

namespace feedcore::internal {

class FeedEngineImpl final : public InProcessFeedEngine {
 public:
  // REQUIRES: options resolved by ResolveEngineOptions.
  explicit FeedEngineImpl(EngineOptions options);
  ~FeedEngineImpl() override;

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
  absl::StatusOr<ReactionResult> React(EntityId user, ActivityId activity_id,
                                       ReactionKind kind,
                                       const ReactOptions& options) override;
  absl::StatusOr<ReactionResult> Unreact(EntityId user, ActivityId activity_id,
                                         ReactionKind kind) override;
  absl::StatusOr<std::vector<ReactionKinds>> GetOwnReactions(
      EntityId user, absl::Span<const ActivityId> activity_ids) const override;
  absl::StatusOr<ReactorPage> ReadReactors(
      ActivityId activity_id, ReactionKind kind,
      const ListOptions& options) const override;
  absl::StatusOr<Micros> EditActivity(EntityId actor, ActivityId activity_id,
                                      std::string_view payload) override;
  absl::StatusOr<bool> Pin(EntityId owner, ActivityId activity_id) override;
  absl::StatusOr<bool> Unpin(EntityId owner, ActivityId activity_id) override;
  absl::StatusOr<std::vector<StoredEntry>> ReadPinned(
      EntityId owner, bool hydrate) const override;
  absl::StatusOr<bool> SetList(EntityId owner, ListId list,
                               const ListSettings& settings) override;
  absl::StatusOr<bool> DeleteList(EntityId owner, ListId list) override;
  absl::StatusOr<bool> AddToList(EntityId owner, ListId list,
                                 EntityId member) override;
  absl::StatusOr<bool> RemoveFromList(EntityId owner, ListId list,
                                      EntityId member) override;
  absl::StatusOr<std::vector<AccountList>> Lists(EntityId owner) const override;
  absl::StatusOr<EntityPage> ListMembers(
      EntityId owner, ListId list, const ListOptions& options) const override;
  absl::StatusOr<Page> ReadList(EntityId owner, ListId list,
                                const ReadOptions& options) const override;
  absl::StatusOr<EntityPage> Followers(
      EntityId entity, const ListOptions& options) const override;
  absl::StatusOr<EntityPage> Following(
      EntityId entity, const ListOptions& options) const override;
  absl::StatusOr<size_t> FollowerCount(EntityId entity) const override;
  absl::StatusOr<size_t> FollowingCount(EntityId entity) const override;
  absl::StatusOr<PublishResult> Publish(const Activity& activity,
                                        const PublishOptions& options) override;
  void WaitForFanout() override;
  absl::Status Retract(ActivityId activity_id) override;
  absl::StatusOr<SubscriptionId> Subscribe(
      SubscriptionOptions options) override {
    return deliveries_.Subscribe(std::move(options));
  }
  absl::Status Unsubscribe(SubscriptionId id) override {
    return deliveries_.Unsubscribe(id);
  }
  absl::StatusOr<bool> Watch(SubscriptionId id,
                             const WatchedFeed& feed) override {
    return deliveries_.Watch(id, feed);
  }
  absl::StatusOr<bool> Unwatch(SubscriptionId id,
                               const WatchedFeed& feed) override {
    return deliveries_.Unwatch(id, feed);
  }
  absl::StatusOr<SubscriptionStats> GetSubscriptionStats(
      SubscriptionId id) const override {
    return deliveries_.Stats(id);
  }
  absl::StatusOr<size_t> DispatchDeliveries() override {
    return deliveries_.Dispatch();
  }
  absl::StatusOr<size_t> EvictExpired(size_t budget) override;
  absl::StatusOr<size_t> ReleaseInactiveReaders(size_t budget) override;
  absl::StatusOr<EngineStats> Stats() const override;
  const EngineOptions& options() const override { return options_; }

  // --- Change stream and snapshots (feed_replay.cc, feed_snapshot.cc) ---

  // Domains (see ChangeRecord::domain): shard s is domain s, activity store
  // shard s is domain shards + s.
  size_t domain_count() const { return 2 * options_.shards; }
  ChangeLog* change_log() const { return log_; }

  // Makes the change `record` describes, exactly as the source engine made
  // it (records of one domain must come in sequence order). Also records it
  // in this engine's own stream. InvalidArgument for a malformed record.
  absl::Status ApplyChange(const ChangeRecord& record);
  // ApplyChange of the records of one feature: kBlock*/kMute*
  // (feed_relations.cc), kReadMarkerSet and kMentionAdd (feed_markers.cc),
  // kCountersSet (feed_ranked.cc). REQUIRES: `record.domain` checked against
  // its kind.
  absl::Status ApplyRelationChange(const ChangeRecord& record);
  absl::Status ApplyMarkerChange(const ChangeRecord& record);
  absl::Status ApplyCountersChange(const ChangeRecord& record);
  // kDormantFollowee and kDormantFollower (feed_inactive.cc).
  absl::Status ApplyInactiveChange(const ChangeRecord& record);
  // kActivityEdit, kPinAdd and kPinRemove (feed_edits.cc).
  absl::Status ApplyEditChange(const ChangeRecord& record);
  // kReactionAdd and kReactionRemove (feed_reactions.cc).
  absl::Status ApplyReactionChange(const ChangeRecord& record);

  // Appends domain `domain`'s state to `out`, copied under its lock held
  // shared, and returns the change log's next sequence number read under
  // that lock (0 without a stream): the cut between the records the copy
  // holds and those it does not.
  uint64_t SerializeDomain(size_t domain, std::string* out) const;
  // Loads what SerializeDomain wrote (of any domain of a source with the
  // same number of shards) in a source whose timelines of each FeedType
  // kept at most `saved_caps` entries. A timeline over this engine's cap
  // keeps its newest entries, as a cap does at insert. DataLoss naming what
  // is wrong if `bytes` is malformed; the engine may then hold part of it.
  absl::Status LoadDomain(size_t domain, std::string_view bytes,
                          const FeedCaps& saved_caps);

 private:
  // --- The writes themselves (feed_write_gate.cc gates each) ---
  // Each is the public write of the same name without the write gate; the
  // engine's own callers (Block's unfollow, the sweeper) call these.

  absl::StatusOr<InsertResult> InsertFanoutInMemory(
      absl::Span<const EntityId> owners, const TimelineEntry& entry,
      const InsertOptions& options);
  absl::StatusOr<InsertResult> InsertBatchInMemory(
      absl::Span<const OwnedEntry> entries, const InsertOptions& options);
  absl::Status RemoveInMemory(EntityId owner, const EntryKey& key);
  absl::StatusOr<NotificationCounts> MarkSeenInMemory(EntityId user);
  absl::StatusOr<NotificationCounts> MarkReadInMemory(EntityId user,
                                                      const EntryKey& key);
  absl::StatusOr<NotificationCounts> MarkAllReadInMemory(EntityId user);
  absl::StatusOr<FollowResult> FollowInMemory(EntityId follower,
                                              EntityId followee,
                                              const FollowOptions& options);
  absl::StatusOr<UnfollowResult> UnfollowInMemory(
      EntityId follower, EntityId followee, const UnfollowOptions& options);
  absl::StatusOr<std::vector<FollowResult>> FollowManyInMemory(
      absl::Span<const FollowPair> pairs, const FollowOptions& options);
  absl::StatusOr<std::vector<UnfollowResult>> UnfollowManyInMemory(
      absl::Span<const FollowPair> pairs, const UnfollowOptions& options);
  absl::StatusOr<RelationResult> BlockInMemory(EntityId blocker,
                                               EntityId blocked);
  absl::StatusOr<RelationResult> UnblockInMemory(EntityId blocker,
                                                 EntityId blocked,
                                                 const RestoreOptions& options);
  absl::StatusOr<RelationResult> MuteInMemory(EntityId muter, EntityId muted,
                                              const MuteOptions& options);
  absl::StatusOr<RelationResult> UnmuteInMemory(EntityId muter, EntityId muted,
                                                const RestoreOptions& options);
  // Puts the mention of `user` by `key` in `channel`'s own feed, unless
  // the user's marker there is at or past it, and records it; false when
  // nothing changed. REQUIRES: `shard` is the user's, locked exclusively.
  bool AddMentionLocked(Shard& shard, EntityId user, EntityId channel,
                        const EntryKey& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu());
  // A publish's mentions (PublishOptions::mentions), one lock per shard.
  void DeliverMentions(const FollowerSnapshot& mentioned,
                       const StoredEntry& entry);
  // The unread count of `*marker` in `feed`, an own feed (a channel; null
  // when it holds nothing), and how many of `mentions` (ascending) it holds
  // visible. REQUIRES: the feed's shard locked, at least shared.
  static void CountOwnFeedLocked(const Timeline* feed,
                                 absl::Span<const EntryKey> mentions,
                                 size_t max_unread, Micros now,
                                 ReadMarker* marker);
  // The first key a marker leaves unread (every key for none); nullopt
  // when it is at the very last key.
  static std::optional<EntryKey> FirstUnread(const ReadMarker& marker);
  // Counts the visible entries of `feed` after `marker->key`, at most
  // `max_unread` (setting more_unread past it), into `marker`.
  void CountUnread(const MarkedFeed& feed, size_t max_unread, Micros now,
                   ReadMarker* marker) const;
  absl::StatusOr<bool> SetReadMarkerInMemory(EntityId user,
                                             const MarkedFeed& feed,
                                             const EntryKey& key,
                                             const SetMarkerOptions& options);
  absl::StatusOr<ActivityCounters> IncrementCounterInMemory(
      ActivityId activity_id, size_t counter, int64_t delta);
  absl::StatusOr<ReactionResult> ReactInMemory(EntityId user,
                                               ActivityId activity_id,
                                               ReactionKind kind,
                                               const ReactOptions& options);
  absl::StatusOr<ReactionResult> UnreactInMemory(EntityId user,
                                                 ActivityId activity_id,
                                                 ReactionKind kind);
  // Stores `notice` (ReactOptions::notice_id) for the reaction that made
  // it and delivers it to `actor`'s notification feed only; false when
  // `actor` refuses it (a block or a mute of notifications).
  absl::StatusOr<bool> PublishNotice(ActivityId notice_id,
                                     const ReactOptions& options,
                                     EntityId reactor, ActivityId reacted,
                                     const ActivityFacts& facts, Micros now);
  absl::StatusOr<Micros> EditActivityInMemory(EntityId actor,
                                              ActivityId activity_id,
                                              std::string_view payload);
  absl::StatusOr<bool> PinInMemory(EntityId owner, ActivityId activity_id);
  // Lists (feed_lists.cc).
  absl::StatusOr<bool> SetListInMemory(EntityId owner, ListId list,
                                       const ListSettings& settings);
  absl::StatusOr<bool> DeleteListInMemory(EntityId owner, ListId list);
  absl::StatusOr<bool> ChangeListMemberInMemory(EntityId owner, ListId list,
                                                EntityId member, bool add);
  // Replays a kListSet, kListDelete, kListMemberAdd or kListMemberRemove.
  absl::Status ApplyListChange(const ChangeRecord& record);
  absl::StatusOr<bool> UnpinInMemory(EntityId owner, ActivityId activity_id);
  absl::StatusOr<PublishResult> PublishInMemory(const Activity& activity,
                                                const PublishOptions& options);
  absl::Status RetractInMemory(ActivityId activity_id);
  absl::StatusOr<size_t> EvictExpiredInMemory(size_t budget);
  absl::StatusOr<size_t> ReleaseInactiveReadersInMemory(size_t budget);

  struct FanoutJob;
  // How Publish delivers: decided, and queue room reserved, before
  // anything changes.
  struct FanoutPlan {
    bool hybrid = false;  // merged at read: no copies to deliver
    size_t workers = 0;   // pool tasks that may help deliver
    bool async = false;   // return before the fan-out completes
    size_t reserved = 0;  // queue slots reserved for `async`
  };

  size_t ShardIndex(EntityId entity) const;
  Shard& ShardOf(EntityId entity) { return shards_[ShardIndex(entity)]; }
  const Shard& ShardOf(EntityId entity) const {
    return shards_[ShardIndex(entity)];
  }
  GroupKey KeptGroup(GroupKey group, FeedType kind) const {
    return internal::KeptGroup(group, kind, options_.aggregation.enabled);
  }

  // --- Reads (feed_reads.cc) ---

  // The visible entries of `kind`/`owner` (merged with hybrid followees
  // for home feeds) within [lo, hi], at most `want`, in `order`, of the
  // activity kinds `kinds` keeps (KindFilter::kinds); of a home feed, its
  // home view (feed_home_view.cc). `out` starts empty.
  void CollectFeed(FeedType kind, EntityId owner, ReadOrder order, EntryKey lo,
                   EntryKey hi, Micros now, size_t want,
                   std::vector<StoredEntry>* out,
                   uint64_t kinds = KindFilter::kEveryKind) const;
  // The same without a home view's rules: what the copies and merged
  // followees deliver. For a home feed, `excluded` (if not null) gets the
  // accounts of the owner's exclusive lists.
  void CollectDelivered(FeedType kind, EntityId owner, ReadOrder order,
                        EntryKey lo, EntryKey hi, Micros now, size_t want,
                        std::vector<StoredEntry>* out,
                        uint64_t kinds = KindFilter::kEveryKind,
                        std::vector<EntityId>* excluded = nullptr) const;
  // `owner`'s home view as CollectFeed returns it, the repost window
  // applied only with `hide_reposts`. Costs CollectDelivered's work alone
  // when the owner has no exclusive list and nothing is hidden.
  void CollectHome(EntityId owner, ReadOrder order, EntryKey lo, EntryKey hi,
                   Micros now, size_t want, std::vector<StoredEntry>* out,
                   uint64_t kinds, bool hide_reposts) const;
  // Removes from `batch` (entries of `owner`'s home view at `now`) the
  // reposts that EngineOptions::reposts hides; returns how many. Looks at
  // the view from the batch's newest repost to `window` entries past its
  // oldest one, so it costs nothing more for a batch without an entry of a
  // repost kind.
  size_t HideShownReposts(EntityId owner, Micros now,
                          std::vector<StoredEntry>* batch) const;
  absl::StatusOr<Page> ReadFeed(FeedType kind, EntityId owner,
                                const ReadOptions& options) const;
  // The oldest key `owner`'s merged timeline (its `home_size` entries and
  // the own feeds of `merged` from their boundaries, of the kinds
  // `merged_kinds` keeps for each) shows: the newest max_timeline_length of
  // them, expired ones counted as a timeline's cap counts them; nullopt
  // when they all fit. O(cap x log(merged)).
  std::optional<EntryKey> MergedCapFloor(
      EntityId owner, size_t home_size, absl::Span<const MergedFollowee> merged,
      absl::Span<const uint64_t> merged_kinds) const;

  // --- Follow graph (feed_graph.cc) ---

  // Whether `a` blocks `b` or `b` blocks `a` (feed_relations.cc): Follow
  // between them is refused.
  bool EitherBlocks(EntityId a, EntityId b) const;

  absl::StatusOr<EntityPage> ReadFollowList(bool followers, EntityId entity,
                                            const ListOptions& options) const;
  // The follow stripe that serializes Follow/Unfollow of `follower`.
  std::mutex& FollowStripe(EntityId follower);
  // Marks `actor` merged-at-read: tells its followers, then stops copying.
  void BecomeHybrid(EntityId actor);
  // Follow and FollowMany (feed_graph_batch.cc): every pair of `pairs`
  // followed with back-fill `backfill`, each shard's lock held once per
  // phase for all the pairs whose edge lives there; a new edge delivers
  // `kinds` (KindFilter::kinds), an existing one keeps its own, and
  // FailedPrecondition (nothing changed) when `kinds` is set and differs
  // from an existing edge's. REQUIRES: pairs validated.
  absl::StatusOr<std::vector<FollowResult>> FollowPairs(
      absl::Span<const FollowPair> pairs, size_t backfill,
      std::optional<uint64_t> kinds);
  // Back-fill of Follow, FollowMany, Unblock and Unmute: copies into the
  // follower of each pair `i` with `wanted[i]` the `backfill` newest
  // visible entries of the followee's own feed of the kinds the follow
  // delivers, unless the follower hides the followee then. Returns the
  // count copied per pair.
  std::vector<size_t> BackfillPairs(absl::Span<const FollowPair> pairs,
                                    const std::vector<bool>& wanted,
                                    size_t backfill);
  // Unfollow and UnfollowMany, as FollowPairs.
  std::vector<UnfollowResult> UnfollowPairs(absl::Span<const FollowPair> pairs,
                                            bool keep_history);
  // Copies into each follower of `pairs` with a `merged_from` boundary the
  // entries of the followee's own feed from that boundary, of the kinds
  // `merged_kinds` keeps for it: Unfollow keeping the history of a merged
  // followee.
  void KeepMergedHistory(absl::Span<const FollowPair> pairs,
                         absl::Span<const std::optional<EntryKey>> merged_from,
                         absl::Span<const uint64_t> merged_kinds);
  // The back-fill count a Follow with `options` copies. InvalidArgument
  // for one out of range.
  absl::StatusOr<size_t> BackfillCount(const FollowOptions& options) const;
  // Where a follower starting to merge `actor` now begins: the oldest of
  // the `count` newest visible entries of its own feed of `kinds` (what
  // back-fill would copy), or just above everything it published when that
  // is none.
  EntryKey FollowBoundary(const Shard& shard, const GraphNode& actor_node,
                          EntityId actor, size_t count, uint64_t kinds,
                          Micros now) const
      ABSL_SHARED_LOCKS_REQUIRED(shard.mu());

  // --- Publish, fan-out, retract (feed_publish.cc) ---

  // The activity's expiry, or why it cannot be published.
  absl::StatusOr<Micros> ValidatePublish(const Activity& activity,
                                         const PublishOptions& options) const;
  // Reads the actor's mode and follower count and reserves queue room for
  // an asynchronous fan-out. ResourceExhausted when the queue is full.
  absl::StatusOr<FanoutPlan> PlanFanout(EntityId actor,
                                        const PublishOptions& options);
  // Puts the entry into the actor's own feed and its shard's world feed
  // and, unless the actor is merged at read, snapshots its followers into
  // the job, all under one hold of the actor's shard lock.
  void WriteOwnAndWorld(const Activity& activity, FanoutJob& job,
                        PublishResult* result);
  // The watched timelines (FeedDeliveries) among `actor`'s followers that
  // see its new entry through their merge of it: every follower of a
  // merged-at-read actor (`all`), else the dormant ones; not those muting
  // it, nor those whose follow filters out `kind`. Sorted. REQUIRES: the
  // actor's shard lock held, `node` its node.
  void MergedWatchers(const GraphNode& node, bool all, Micros now,
                      ActivityKind kind, std::vector<EntityId>* watchers) const;
  // Delivers the job's follower groups: handed to pool tasks and returned
  // at once for an asynchronous plan, else delivered by this thread (with
  // any workers free right now) before returning.
  void RunFanout(const std::shared_ptr<FanoutJob>& job, const FanoutPlan& plan,
                 PublishResult* result);
  // Pulls groups from the job until none is left.
  void DeliverGroups(FanoutJob& job);
  // Puts the job's entry into the home timelines of one shard group of
  // its followers (one lock); with FanoutJob::below_boundaries, skipping
  // the followers that see it through their merge of the actor.
  void DeliverGroup(const FanoutJob& job, size_t group);
  // Removes `key` from the `kind` timelines of every entity in `snapshot`.
  void PurgeKey(const FollowerSnapshot& snapshot, FeedType kind, EntryKey key);
  // `ids` (deduplicated) grouped by the shard they live in.
  FollowerSnapshot GroupByShard(absl::Span<const EntityId> ids) const;
  // Puts `entry` into the notification feed of every entity in
  // `recipients` that does not hide its actor (Block, Mute), one lock per
  // shard group, then calls on_notify and tells the watched ones
  // (FeedDeliveries). Returns how many feeds got it.
  size_t DeliverNotifications(const FollowerSnapshot& recipients,
                              const StoredEntry& entry);

  // --- Mute and block (feed_relations.cc) ---

  // `owners` (all of `shard`), less those whose notification feed refuses
  // `actor` now: `owners` itself when none does, else `*kept`.
  absl::Span<const EntityId> NotificationAudience(
      const Shard& shard, absl::Span<const EntityId> owners, EntityId actor,
      std::vector<EntityId>* kept) const ABSL_SHARED_LOCKS_REQUIRED(shard.mu());
  // Removes `actor`'s entries from `user`'s timeline and, with
  // `notifications`, its notification feed, once the deliveries of `actor`
  // that began earlier are done; records it. Returns how many.
  size_t PurgeHidden(EntityId user, EntityId actor, bool notifications);
  // Whether `user` blocks `actor`.
  bool Blocks(EntityId user, EntityId actor) const;
  // `user`'s mute of `actor`, expired or not, if it has one.
  std::optional<MuteState> MuteOf(EntityId user, EntityId actor) const;
  // Makes the mute change `r` (kMuteAdd/kMuteRemove) on both sides, each
  // under its shard's lock, and records each side in its shard.
  void ChangeBothSides(const ChangeRecord& r);
  // RestoreOptions::backfill of Unblock and Unmute: back-fills `count`
  // entries if `user` follows `actor` and copies it; if `user` merges it
  // at read, moves the merge to begin where that back-fill would (so what
  // was published or removed while hidden stays hidden).
  size_t RestoreBackfill(EntityId user, EntityId actor, size_t count);
  // A page of the actors `entity` blocks (`muted` false) or mutes.
  absl::StatusOr<MutedPage> ReadRelationList(bool muted, EntityId entity,
                                             const ListOptions& options) const;

  // --- Inactive readers (feed_inactive.cc) ---

  // Notes a read of `reader`'s timeline and, if the reader is dormant,
  // rebuilds its copies first, unless a Follow, Unfollow or sweep of it
  // holds its follow stripe (the merge answers exactly meanwhile; a read
  // never waits for those). No-op without EngineOptions::inactive_after.
  // Const because reads are: what any reader sees does not change.
  void NoteTimelineRead(EntityId reader) const;
  // Makes `reader` dormant if it has not read since `cutoff`: each copied
  // followee it does not hide merged from the oldest copy it holds (or,
  // where the copies do not match the followee's own feed, from just above
  // what the followee had published), those copies dropped, and the
  // followee's in-order publishes no longer copied to it. True if it did.
  bool MakeDormant(EntityId reader, Micros cutoff);
  // Turns `reader`'s dormant merges back into copies (the newest
  // max_timeline_length of what they show) and its followees' publishes
  // back into deliveries. False if its follow stripe was busy.
  bool RebuildReader(EntityId reader);
  // RebuildReader with the stripe held by the caller; false if `reader`
  // was not dormant. Unfollow, Mute and Block run it on the reader first:
  // at a full timeline copies keep out for good what the cap pushed out,
  // while a merge that loses entries shows the next older ones again.
  // REQUIRES: FollowStripe(reader) held.
  bool RebuildDormant(EntityId reader);

  // --- Edits and pins (feed_edits.cc) ---

  // Ends `owner`'s pin of `activity_id` and records it; false if there is
  // none.
  bool DropPinLocked(Shard& shard, EntityId owner, ActivityId activity_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu());

  // --- Notifications (feed_notifications.cc) ---

  // CutGroupPage (group_pages.h), then hydrates the page if asked.
  void FinishGroupPage(EntityId owner, const GroupReadOptions& options,
                       bool notifications, GroupPage* page) const;
  // The counts of a notification feed (nullptr: an empty one).
  static NotificationCounts CountsOf(const Timeline* feed);
  // Calls `fn` with `user`'s notification feed (nullptr if it holds
  // nothing) and returns what it returns: under the shard lock held shared
  // when nothing in the feed has expired (reading the badge is the common
  // call), else held exclusively after reclaiming what expired.
  template <typename Fn>
  auto WithNotifications(EntityId user, Fn&& fn);
  // Marks `user`'s notification feed seen (`read` false) or read (one
  // group if `key` is given, else all); nullopt if `key` is not in it.
  std::optional<NotificationCounts> MarkNotifications(EntityId user, bool read,
                                                      const EntryKey* key);

  const EngineOptions options_;
  // Null when changes are not recorded.
  ChangeLog* const log_;
  ShardSet shards_;
  ActivityStore store_;
  FanoutTracker tracker_;
  // Stopped first on destruction; destroyed after the pool, whose queued
  // fan-outs still deliver into it.
  DeliveryHub deliveries_;
  // Serializes Follow/Unfollow per follower (by stripe).
  static constexpr size_t kFollowStripes = 64;
  std::array<std::mutex, kFollowStripes> follow_stripes_;
  // Shard where the next eviction pass starts, so a budget that runs out
  // does not always favour the first shards.
  std::atomic<size_t> next_eviction_shard_{0};
  // The same for ReleaseInactiveReaders.
  std::atomic<size_t> next_release_shard_{0};
  // Destroyed before everything above: queued tasks drain into live shards.
  std::unique_ptr<FanoutPool> pool_;
  // Last: stopped and joined first on destruction.
  std::unique_ptr<Sweeper> sweeper_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_FEED_FEED_ENGINE_IMPL_H_
