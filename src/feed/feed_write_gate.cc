// FeedEngineImpl's public writes: each is its in-memory write inside a
// WriteCall (stream/change_log.h), as LeaderboardImpl's are. Without a
// write gate on the change log (no DurableStore) the call costs one
// pointer test. With one, a write the log cannot take fails having changed
// nothing, and the call returns once its records are as durable as the
// policy promises.
//
// Reads are not gated, nor are the reads that reclaim expired entries on
// the way (ReadNotifications, GetNotificationCounts), nor the sweeper's
// passes (it calls the in-memory writes): they go on when the log refuses
// writes, and a reclaim lost in a crash is made again.
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

absl::StatusOr<InsertResult> FeedEngineImpl::InsertFanout(
    absl::Span<const EntityId> owners, const TimelineEntry& entry,
    const InsertOptions& options) {
  return InWriteCall(
      log_, [&] { return InsertFanoutInMemory(owners, entry, options); });
}

absl::StatusOr<InsertResult> FeedEngineImpl::InsertBatch(
    absl::Span<const OwnedEntry> entries, const InsertOptions& options) {
  return InWriteCall(log_,
                     [&] { return InsertBatchInMemory(entries, options); });
}

absl::Status FeedEngineImpl::Remove(EntityId owner, const EntryKey& key) {
  return InWriteCall(log_, [&] { return RemoveInMemory(owner, key); });
}

absl::StatusOr<NotificationCounts> FeedEngineImpl::MarkSeen(EntityId user) {
  return InWriteCall(log_, [&] { return MarkSeenInMemory(user); });
}

absl::StatusOr<NotificationCounts> FeedEngineImpl::MarkRead(
    EntityId user, const EntryKey& key) {
  return InWriteCall(log_, [&] { return MarkReadInMemory(user, key); });
}

absl::StatusOr<NotificationCounts> FeedEngineImpl::MarkAllRead(EntityId user) {
  return InWriteCall(log_, [&] { return MarkAllReadInMemory(user); });
}

absl::StatusOr<FollowResult> FeedEngineImpl::Follow(
    EntityId follower, EntityId followee, const FollowOptions& options) {
  return InWriteCall(
      log_, [&] { return FollowInMemory(follower, followee, options); });
}

absl::StatusOr<UnfollowResult> FeedEngineImpl::Unfollow(
    EntityId follower, EntityId followee, const UnfollowOptions& options) {
  return InWriteCall(
      log_, [&] { return UnfollowInMemory(follower, followee, options); });
}

absl::StatusOr<std::vector<FollowResult>> FeedEngineImpl::FollowMany(
    absl::Span<const FollowPair> pairs, const FollowOptions& options) {
  return InWriteCall(log_, [&] { return FollowManyInMemory(pairs, options); });
}

absl::StatusOr<std::vector<UnfollowResult>> FeedEngineImpl::UnfollowMany(
    absl::Span<const FollowPair> pairs, const UnfollowOptions& options) {
  return InWriteCall(log_,
                     [&] { return UnfollowManyInMemory(pairs, options); });
}

absl::StatusOr<RelationResult> FeedEngineImpl::Block(EntityId blocker,
                                                     EntityId blocked) {
  return InWriteCall(log_, [&] { return BlockInMemory(blocker, blocked); });
}

absl::StatusOr<RelationResult> FeedEngineImpl::Unblock(
    EntityId blocker, EntityId blocked, const RestoreOptions& options) {
  return InWriteCall(
      log_, [&] { return UnblockInMemory(blocker, blocked, options); });
}

absl::StatusOr<RelationResult> FeedEngineImpl::Mute(
    EntityId muter, EntityId muted, const MuteOptions& options) {
  return InWriteCall(log_, [&] { return MuteInMemory(muter, muted, options); });
}

absl::StatusOr<RelationResult> FeedEngineImpl::Unmute(
    EntityId muter, EntityId muted, const RestoreOptions& options) {
  return InWriteCall(log_,
                     [&] { return UnmuteInMemory(muter, muted, options); });
}

absl::StatusOr<bool> FeedEngineImpl::SetReadMarker(
    EntityId user, const MarkedFeed& feed, const EntryKey& key,
    const SetMarkerOptions& options) {
  return InWriteCall(
      log_, [&] { return SetReadMarkerInMemory(user, feed, key, options); });
}

absl::StatusOr<ActivityCounters> FeedEngineImpl::IncrementCounter(
    ActivityId activity_id, size_t counter, int64_t delta) {
  return InWriteCall(log_, [&] {
    return IncrementCounterInMemory(activity_id, counter, delta);
  });
}

absl::StatusOr<ReactionResult> FeedEngineImpl::React(
    EntityId user, ActivityId activity_id, ReactionKind kind,
    const ReactOptions& options) {
  return InWriteCall(
      log_, [&] { return ReactInMemory(user, activity_id, kind, options); });
}

absl::StatusOr<ReactionResult> FeedEngineImpl::Unreact(EntityId user,
                                                       ActivityId activity_id,
                                                       ReactionKind kind) {
  return InWriteCall(log_,
                     [&] { return UnreactInMemory(user, activity_id, kind); });
}

absl::StatusOr<Micros> FeedEngineImpl::EditActivity(EntityId actor,
                                                    ActivityId activity_id,
                                                    std::string_view payload) {
  return InWriteCall(
      log_, [&] { return EditActivityInMemory(actor, activity_id, payload); });
}

absl::StatusOr<bool> FeedEngineImpl::Pin(EntityId owner,
                                         ActivityId activity_id) {
  return InWriteCall(log_, [&] { return PinInMemory(owner, activity_id); });
}

absl::StatusOr<bool> FeedEngineImpl::Unpin(EntityId owner,
                                           ActivityId activity_id) {
  return InWriteCall(log_, [&] { return UnpinInMemory(owner, activity_id); });
}

absl::StatusOr<bool> FeedEngineImpl::SetList(EntityId owner, ListId list,
                                             const ListSettings& settings) {
  return InWriteCall(log_,
                     [&] { return SetListInMemory(owner, list, settings); });
}

absl::StatusOr<bool> FeedEngineImpl::DeleteList(EntityId owner, ListId list) {
  return InWriteCall(log_, [&] { return DeleteListInMemory(owner, list); });
}

absl::StatusOr<bool> FeedEngineImpl::AddToList(EntityId owner, ListId list,
                                               EntityId member) {
  return InWriteCall(log_, [&] {
    return ChangeListMemberInMemory(owner, list, member, /*add=*/true);
  });
}

absl::StatusOr<bool> FeedEngineImpl::RemoveFromList(EntityId owner, ListId list,
                                                    EntityId member) {
  return InWriteCall(log_, [&] {
    return ChangeListMemberInMemory(owner, list, member, /*add=*/false);
  });
}

absl::StatusOr<PublishResult> FeedEngineImpl::Publish(
    const Activity& activity, const PublishOptions& options) {
  return InWriteCall(log_, [&] { return PublishInMemory(activity, options); });
}

absl::Status FeedEngineImpl::Retract(ActivityId activity_id) {
  return InWriteCall(log_, [&] { return RetractInMemory(activity_id); });
}

absl::StatusOr<size_t> FeedEngineImpl::EvictExpired(size_t budget) {
  return InWriteCall(log_, [&] { return EvictExpiredInMemory(budget); });
}

absl::StatusOr<size_t> FeedEngineImpl::ReleaseInactiveReaders(size_t budget) {
  return InWriteCall(log_,
                     [&] { return ReleaseInactiveReadersInMemory(budget); });
}

}  // namespace feedcore::internal
