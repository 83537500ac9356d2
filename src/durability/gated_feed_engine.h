// GatedFeedEngine: the engine a DurableStore hands out. It forwards every
// call to the engine it wraps and brackets each write with a WriteCall
// (stream/change_log.h): admitted before (a write the log cannot take fails
// having changed nothing), ended after (the call returns once its records
// are as durable as the policy promises, and they reach the disk together).
//
// Reads, and the reads that reclaim expired entries on the way
// (ReadNotifications, GetNotificationCounts), are not gated: they go on
// when the log refuses writes, and losing a reclaim in a crash only means
// reclaiming it again.
//
// Thread safety: as the wrapped engine's.
#ifndef FEEDCORE_SRC_DURABILITY_GATED_FEED_ENGINE_H_
#define FEEDCORE_SRC_DURABILITY_GATED_FEED_ENGINE_H_

#include <string>

#include "feedcore/feed_engine.h"
#include "stream/change_log.h"

namespace feedcore::internal {

class GatedFeedEngine final : public FeedEngine {
 public:
  // REQUIRES: `engine` records into `log`; both outlive this.
  GatedFeedEngine(FeedEngine& engine, ChangeLog& log)
      : engine_(engine), log_(log) {}

  bool Supports(FeedCapability capability) const override {
    return engine_.Supports(capability);
  }
  absl::StatusOr<InsertResult> Insert(EntityId owner,
                                      const TimelineEntry& entry,
                                      const InsertOptions& options) override;
  absl::StatusOr<InsertResult> InsertFanout(
      absl::Span<const EntityId> owners, const TimelineEntry& entry,
      const InsertOptions& options) override;
  absl::StatusOr<InsertResult> InsertBatch(
      absl::Span<const OwnedEntry> entries,
      const InsertOptions& options) override;
  absl::Status Remove(EntityId owner, const EntryKey& key) override;
  absl::StatusOr<Page> ReadTimeline(EntityId owner,
                                    const ReadOptions& options) const override {
    return engine_.ReadTimeline(owner, options);
  }
  absl::StatusOr<Page> ReadOwn(EntityId actor,
                               const ReadOptions& options) const override {
    return engine_.ReadOwn(actor, options);
  }
  absl::StatusOr<Page> ReadWorld(const ReadOptions& options) const override {
    return engine_.ReadWorld(options);
  }
  absl::StatusOr<size_t> CountNewer(EntityId reader, const EntryKey& after,
                                    size_t max_count) const override {
    return engine_.CountNewer(reader, after, max_count);
  }
  absl::StatusOr<GroupPage> ReadGroups(
      EntityId owner, const GroupReadOptions& options) const override {
    return engine_.ReadGroups(owner, options);
  }
  absl::StatusOr<GroupPage> ReadNotifications(
      EntityId user, const GroupReadOptions& options) override {
    return engine_.ReadNotifications(user, options);
  }
  absl::StatusOr<NotificationCounts> GetNotificationCounts(
      EntityId user) override {
    return engine_.GetNotificationCounts(user);
  }
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
  absl::StatusOr<bool> SetReadMarker(EntityId user, const MarkedFeed& feed,
                                     const EntryKey& key,
                                     const SetMarkerOptions& options) override;
  absl::StatusOr<ActivityCounters> IncrementCounter(ActivityId activity_id,
                                                    size_t counter,
                                                    int64_t delta) override;
  absl::StatusOr<EntityPage> Blocked(
      EntityId entity, const ListOptions& options) const override {
    return engine_.Blocked(entity, options);
  }
  absl::StatusOr<MutedPage> Muted(EntityId entity,
                                  const ListOptions& options) const override {
    return engine_.Muted(entity, options);
  }
  absl::StatusOr<ReadMarker> GetReadMarker(EntityId user,
                                           const MarkedFeed& feed,
                                           size_t max_unread) const override {
    return engine_.GetReadMarker(user, feed, max_unread);
  }
  absl::StatusOr<ActivityCounters> GetCounters(
      ActivityId activity_id) const override {
    return engine_.GetCounters(activity_id);
  }
  absl::StatusOr<RankedPage> ReadRanked(
      EntityId owner, const RankedReadOptions& options) const override {
    return engine_.ReadRanked(owner, options);
  }
  absl::StatusOr<EntityPage> Followers(
      EntityId entity, const ListOptions& options) const override {
    return engine_.Followers(entity, options);
  }
  absl::StatusOr<EntityPage> Following(
      EntityId entity, const ListOptions& options) const override {
    return engine_.Following(entity, options);
  }
  absl::StatusOr<size_t> FollowerCount(EntityId entity) const override {
    return engine_.FollowerCount(entity);
  }
  absl::StatusOr<size_t> FollowingCount(EntityId entity) const override {
    return engine_.FollowingCount(entity);
  }
  absl::StatusOr<PublishResult> Publish(const Activity& activity,
                                        const PublishOptions& options) override;
  void WaitForFanout() override { engine_.WaitForFanout(); }
  absl::Status Retract(ActivityId activity_id) override;
  absl::StatusOr<size_t> EvictExpired(size_t budget) override;
  absl::StatusOr<size_t> ReleaseInactiveReaders(size_t budget) override;
  absl::StatusOr<EngineStats> Stats() const override { return engine_.Stats(); }
  absl::StatusOr<SnapshotInfo> SaveSnapshot(
      const std::string& path,
      const LeaderboardRegistry* boards) const override {
    return engine_.SaveSnapshot(path, boards);
  }
  const EngineOptions& options() const override { return engine_.options(); }

 private:
  // `write()` inside a WriteCall.
  template <typename Write>
  auto Gated(Write&& write) -> decltype(write());

  FeedEngine& engine_;
  ChangeLog& log_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_DURABILITY_GATED_FEED_ENGINE_H_
