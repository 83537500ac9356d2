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

absl::StatusOr<WriteResult> LeaderboardImpl::Write(const ScoreWrite&) {
  return Pending("Write");
}
std::vector<absl::StatusOr<WriteResult>> LeaderboardImpl::WriteMany(
    absl::Span<const ScoreWrite> writes) {
  return std::vector<absl::StatusOr<WriteResult>>(writes.size(),
                                                  Pending("WriteMany"));
}
absl::Status LeaderboardImpl::SetMetadata(MemberId, absl::string_view) {
  return Pending("SetMetadata");
}
absl::StatusOr<std::string> LeaderboardImpl::Metadata(MemberId) const {
  return Pending("Metadata");
}
absl::StatusOr<uint64_t> LeaderboardImpl::CountInRange(
    const ScoreRange&) const {
  return Pending("CountInRange");
}
absl::StatusOr<double> LeaderboardImpl::Percentile(MemberId) const {
  return Pending("Percentile");
}

}  // namespace feedcore::internal
