// FeedEngineImpl's read markers.
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

absl::StatusOr<bool> FeedEngineImpl::SetReadMarker(EntityId, const MarkedFeed&,
                                                   const EntryKey&,
                                                   const SetMarkerOptions&) {
  return absl::UnimplementedError("SetReadMarker");
}
absl::StatusOr<ReadMarker> FeedEngineImpl::GetReadMarker(EntityId,
                                                         const MarkedFeed&,
                                                         size_t) const {
  return absl::UnimplementedError("GetReadMarker");
}

absl::Status FeedEngineImpl::ApplyMarkerChange(const ChangeRecord&) {
  return absl::UnimplementedError("ApplyMarkerChange");
}

}  // namespace feedcore::internal
