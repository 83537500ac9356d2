// FeedEngineImpl's activity counters and ranked reads.
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

absl::StatusOr<ActivityCounters> FeedEngineImpl::IncrementCounter(ActivityId,
                                                                  size_t,
                                                                  int64_t) {
  return absl::UnimplementedError("IncrementCounter");
}
absl::StatusOr<ActivityCounters> FeedEngineImpl::GetCounters(ActivityId) const {
  return absl::UnimplementedError("GetCounters");
}
absl::StatusOr<RankedPage> FeedEngineImpl::ReadRanked(
    EntityId, const RankedReadOptions&) const {
  return absl::UnimplementedError("ReadRanked");
}

absl::Status FeedEngineImpl::ApplyCountersChange(const ChangeRecord&) {
  return absl::UnimplementedError("ApplyCountersChange");
}

}  // namespace feedcore::internal
