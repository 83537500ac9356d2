#include "durability/gated_feed_engine.h"

#include <utility>

namespace feedcore::internal {

template <typename Write>
auto GatedFeedEngine::Gated(Write&& write) -> decltype(write()) {
  return InWriteCall(&log_, std::forward<Write>(write));
}

absl::StatusOr<InsertResult> GatedFeedEngine::Insert(
    EntityId owner, const TimelineEntry& entry, const InsertOptions& options) {
  return Gated([&] { return engine_.Insert(owner, entry, options); });
}

absl::StatusOr<InsertResult> GatedFeedEngine::InsertFanout(
    absl::Span<const EntityId> owners, const TimelineEntry& entry,
    const InsertOptions& options) {
  return Gated([&] { return engine_.InsertFanout(owners, entry, options); });
}

absl::StatusOr<InsertResult> GatedFeedEngine::InsertBatch(
    absl::Span<const OwnedEntry> entries, const InsertOptions& options) {
  return Gated([&] { return engine_.InsertBatch(entries, options); });
}

absl::Status GatedFeedEngine::Remove(EntityId owner, const EntryKey& key) {
  return Gated([&] { return engine_.Remove(owner, key); });
}

absl::StatusOr<NotificationCounts> GatedFeedEngine::MarkSeen(EntityId user) {
  return Gated([&] { return engine_.MarkSeen(user); });
}

absl::StatusOr<NotificationCounts> GatedFeedEngine::MarkRead(
    EntityId user, const EntryKey& key) {
  return Gated([&] { return engine_.MarkRead(user, key); });
}

absl::StatusOr<NotificationCounts> GatedFeedEngine::MarkAllRead(EntityId user) {
  return Gated([&] { return engine_.MarkAllRead(user); });
}

absl::StatusOr<FollowResult> GatedFeedEngine::Follow(
    EntityId follower, EntityId followee, const FollowOptions& options) {
  return Gated([&] { return engine_.Follow(follower, followee, options); });
}

absl::StatusOr<UnfollowResult> GatedFeedEngine::Unfollow(
    EntityId follower, EntityId followee, const UnfollowOptions& options) {
  return Gated([&] { return engine_.Unfollow(follower, followee, options); });
}

absl::StatusOr<std::vector<FollowResult>> GatedFeedEngine::FollowMany(
    absl::Span<const FollowPair> pairs, const FollowOptions& options) {
  return Gated([&] { return engine_.FollowMany(pairs, options); });
}

absl::StatusOr<std::vector<UnfollowResult>> GatedFeedEngine::UnfollowMany(
    absl::Span<const FollowPair> pairs, const UnfollowOptions& options) {
  return Gated([&] { return engine_.UnfollowMany(pairs, options); });
}

absl::StatusOr<RelationResult> GatedFeedEngine::Block(EntityId blocker,
                                                      EntityId blocked) {
  return Gated([&] { return engine_.Block(blocker, blocked); });
}

absl::StatusOr<RelationResult> GatedFeedEngine::Unblock(
    EntityId blocker, EntityId blocked, const RestoreOptions& options) {
  return Gated([&] { return engine_.Unblock(blocker, blocked, options); });
}

absl::StatusOr<RelationResult> GatedFeedEngine::Mute(
    EntityId muter, EntityId muted, const MuteOptions& options) {
  return Gated([&] { return engine_.Mute(muter, muted, options); });
}

absl::StatusOr<RelationResult> GatedFeedEngine::Unmute(
    EntityId muter, EntityId muted, const RestoreOptions& options) {
  return Gated([&] { return engine_.Unmute(muter, muted, options); });
}

absl::StatusOr<bool> GatedFeedEngine::SetReadMarker(
    EntityId user, const MarkedFeed& feed, const EntryKey& key,
    const SetMarkerOptions& options) {
  return Gated([&] { return engine_.SetReadMarker(user, feed, key, options); });
}

absl::StatusOr<ActivityCounters> GatedFeedEngine::IncrementCounter(
    ActivityId activity_id, size_t counter, int64_t delta) {
  return Gated(
      [&] { return engine_.IncrementCounter(activity_id, counter, delta); });
}

absl::StatusOr<PublishResult> GatedFeedEngine::Publish(
    const Activity& activity, const PublishOptions& options) {
  return Gated([&] { return engine_.Publish(activity, options); });
}

absl::Status GatedFeedEngine::Retract(ActivityId activity_id) {
  return Gated([&] { return engine_.Retract(activity_id); });
}

absl::StatusOr<size_t> GatedFeedEngine::EvictExpired(size_t budget) {
  return Gated([&] { return engine_.EvictExpired(budget); });
}

absl::StatusOr<size_t> GatedFeedEngine::ReleaseInactiveReaders(size_t budget) {
  return Gated([&] { return engine_.ReleaseInactiveReaders(budget); });
}

}  // namespace feedcore::internal
