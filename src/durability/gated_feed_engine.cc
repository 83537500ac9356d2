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

absl::Status GatedFeedEngine::Remove(EntityId owner, Micros ts,
                                     ActivityId activity_id) {
  return Gated([&] { return engine_.Remove(owner, ts, activity_id); });
}

absl::StatusOr<NotificationCounts> GatedFeedEngine::MarkSeen(EntityId user) {
  return Gated([&] { return engine_.MarkSeen(user); });
}

absl::StatusOr<NotificationCounts> GatedFeedEngine::MarkRead(
    EntityId user, Micros ts, ActivityId activity_id) {
  return Gated([&] { return engine_.MarkRead(user, ts, activity_id); });
}

absl::StatusOr<NotificationCounts> GatedFeedEngine::MarkAllRead(EntityId user) {
  return Gated([&] { return engine_.MarkAllRead(user); });
}

absl::StatusOr<FollowResult> GatedFeedEngine::Follow(
    EntityId follower, EntityId followee, const FollowOptions& options) {
  return Gated([&] { return engine_.Follow(follower, followee, options); });
}

absl::StatusOr<UnfollowResult> GatedFeedEngine::Unfollow(EntityId follower,
                                                         EntityId followee) {
  return Gated([&] { return engine_.Unfollow(follower, followee); });
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

}  // namespace feedcore::internal
