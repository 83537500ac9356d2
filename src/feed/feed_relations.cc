// FeedEngineImpl's mute and block.
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

bool FeedEngineImpl::EitherBlocks(EntityId, EntityId) const { return false; }

absl::StatusOr<RelationResult> FeedEngineImpl::Block(EntityId, EntityId) {
  return absl::UnimplementedError("Block");
}
absl::StatusOr<RelationResult> FeedEngineImpl::Unblock(EntityId, EntityId,
                                                       const RestoreOptions&) {
  return absl::UnimplementedError("Unblock");
}
absl::StatusOr<RelationResult> FeedEngineImpl::Mute(EntityId, EntityId,
                                                    const MuteOptions&) {
  return absl::UnimplementedError("Mute");
}
absl::StatusOr<RelationResult> FeedEngineImpl::Unmute(EntityId, EntityId,
                                                      const RestoreOptions&) {
  return absl::UnimplementedError("Unmute");
}
absl::StatusOr<EntityPage> FeedEngineImpl::Blocked(EntityId,
                                                   const ListOptions&) const {
  return absl::UnimplementedError("Blocked");
}
absl::StatusOr<MutedPage> FeedEngineImpl::Muted(EntityId,
                                                const ListOptions&) const {
  return absl::UnimplementedError("Muted");
}

absl::Status FeedEngineImpl::ApplyRelationChange(const ChangeRecord&) {
  return absl::UnimplementedError("ApplyRelationChange");
}

}  // namespace feedcore::internal
