// Calls of LeaderboardImpl not written yet. Each moves to the file of its
// concern when it is implemented; this file goes when it is empty.
#include "absl/status/status.h"
#include "leaderboard/leaderboard_impl.h"

namespace feedcore::internal {
namespace {
absl::Status Pending(const char* call) {
  return absl::UnimplementedError(call);
}
}  // namespace

absl::StatusOr<std::vector<LeaderboardEntry>> LeaderboardImpl::TopKAmong(
    absl::Span<const MemberId>, size_t) const {
  return Pending("TopKAmong");
}
absl::StatusOr<uint64_t> LeaderboardImpl::RankAmong(
    MemberId, absl::Span<const MemberId>) const {
  return Pending("RankAmong");
}
absl::StatusOr<std::vector<LeaderboardEntry>> LeaderboardImpl::AroundAmong(
    MemberId, absl::Span<const MemberId>, size_t, size_t) const {
  return Pending("AroundAmong");
}

}  // namespace feedcore::internal
