// FeedEngineImpl's mute and block.
#include "absl/strings/str_cat.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {
namespace {

absl::Status Lacks(absl::string_view call) {
  return absl::UnimplementedError(
      absl::StrCat(call,
                   ": the in-process engine has no mute and block "
                   "(FeedCapability::kMuteBlock)"));
}

}  // namespace

bool FeedEngineImpl::EitherBlocks(EntityId, EntityId) const { return false; }

absl::StatusOr<RelationResult> FeedEngineImpl::Block(EntityId, EntityId) {
  return Lacks("Block");
}
absl::StatusOr<RelationResult> FeedEngineImpl::Unblock(EntityId, EntityId,
                                                       const RestoreOptions&) {
  return Lacks("Unblock");
}
absl::StatusOr<RelationResult> FeedEngineImpl::Mute(EntityId, EntityId,
                                                    const MuteOptions&) {
  return Lacks("Mute");
}
absl::StatusOr<RelationResult> FeedEngineImpl::Unmute(EntityId, EntityId,
                                                      const RestoreOptions&) {
  return Lacks("Unmute");
}
absl::StatusOr<EntityPage> FeedEngineImpl::Blocked(EntityId,
                                                   const ListOptions&) const {
  return Lacks("Blocked");
}
absl::StatusOr<MutedPage> FeedEngineImpl::Muted(EntityId,
                                                const ListOptions&) const {
  return Lacks("Muted");
}

absl::Status FeedEngineImpl::ApplyRelationChange(const ChangeRecord& record) {
  return absl::InvalidArgumentError(absl::StrCat(
      "change record ", record.sequence,
      " is a mute or block, which this engine does not keep (kMuteBlock)"));
}

}  // namespace feedcore::internal
