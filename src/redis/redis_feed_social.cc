// RedisFeedEngine's calls for chat and social servers.
#include "absl/strings/str_cat.h"
#include "redis/redis_feed_engine.h"

namespace feedcore::redis {
namespace {

absl::Status Lacks(absl::string_view call, absl::string_view feature) {
  return absl::UnimplementedError(
      absl::StrCat(call, ": the Redis Cluster backend has no ", feature));
}
constexpr absl::string_view kMuteBlock =
    "mute and block (FeedCapability::kMuteBlock)";
constexpr absl::string_view kReadMarkers =
    "read markers (FeedCapability::kReadMarkers)";
constexpr absl::string_view kRankedReads =
    "counters and ranked reads (FeedCapability::kRankedReads)";

}  // namespace

absl::StatusOr<std::vector<FollowResult>> RedisFeedEngine::FollowMany(
    absl::Span<const FollowPair>, const FollowOptions&) {
  return Lacks("FollowMany", "batch follows");
}
absl::StatusOr<std::vector<UnfollowResult>> RedisFeedEngine::UnfollowMany(
    absl::Span<const FollowPair>, const UnfollowOptions&) {
  return Lacks("UnfollowMany", "batch follows");
}
absl::StatusOr<RelationResult> RedisFeedEngine::Block(EntityId, EntityId) {
  return Lacks("Block", kMuteBlock);
}
absl::StatusOr<RelationResult> RedisFeedEngine::Unblock(EntityId, EntityId,
                                                        const RestoreOptions&) {
  return Lacks("Unblock", kMuteBlock);
}
absl::StatusOr<RelationResult> RedisFeedEngine::Mute(EntityId, EntityId,
                                                     const MuteOptions&) {
  return Lacks("Mute", kMuteBlock);
}
absl::StatusOr<RelationResult> RedisFeedEngine::Unmute(EntityId, EntityId,
                                                       const RestoreOptions&) {
  return Lacks("Unmute", kMuteBlock);
}
absl::StatusOr<EntityPage> RedisFeedEngine::Blocked(EntityId,
                                                    const ListOptions&) const {
  return Lacks("Blocked", kMuteBlock);
}
absl::StatusOr<MutedPage> RedisFeedEngine::Muted(EntityId,
                                                 const ListOptions&) const {
  return Lacks("Muted", kMuteBlock);
}
absl::StatusOr<bool> RedisFeedEngine::SetReadMarker(EntityId, const MarkedFeed&,
                                                    const EntryKey&,
                                                    const SetMarkerOptions&) {
  return Lacks("SetReadMarker", kReadMarkers);
}
absl::StatusOr<ReadMarker> RedisFeedEngine::GetReadMarker(EntityId,
                                                          const MarkedFeed&,
                                                          size_t) const {
  return Lacks("GetReadMarker", kReadMarkers);
}
absl::StatusOr<ActivityCounters> RedisFeedEngine::IncrementCounter(ActivityId,
                                                                   size_t,
                                                                   int64_t) {
  return Lacks("IncrementCounter", kRankedReads);
}
absl::StatusOr<ActivityCounters> RedisFeedEngine::GetCounters(
    ActivityId) const {
  return Lacks("GetCounters", kRankedReads);
}
absl::StatusOr<RankedPage> RedisFeedEngine::ReadRanked(
    EntityId, const RankedReadOptions&) const {
  return Lacks("ReadRanked", kRankedReads);
}

}  // namespace feedcore::redis
