// FeedEngineImpl's FollowMany and UnfollowMany.
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

absl::StatusOr<std::vector<FollowResult>> FeedEngineImpl::FollowMany(
    absl::Span<const FollowPair>, const FollowOptions&) {
  return absl::UnimplementedError("FollowMany");
}
absl::StatusOr<std::vector<UnfollowResult>> FeedEngineImpl::UnfollowMany(
    absl::Span<const FollowPair>, const UnfollowOptions&) {
  return absl::UnimplementedError("UnfollowMany");
}

}  // namespace feedcore::internal
