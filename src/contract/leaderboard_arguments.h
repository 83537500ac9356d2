// Validation of LeaderboardOptions and of the size arguments of leaderboard
// reads. Every check names the offending field or argument in its message.
#ifndef FEEDCORE_SRC_CONTRACT_LEADERBOARD_ARGUMENTS_H_
#define FEEDCORE_SRC_CONTRACT_LEADERBOARD_ARGUMENTS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "feedcore/leaderboard.h"

// Exported from the shared libfeedcore for the Redis backend's library,
// which calls this one copy (CMakeLists.txt, feedcore_contract).
#pragma GCC visibility push(default)
namespace feedcore::internal {

absl::Status ValidateLeaderboardOptions(const LeaderboardOptions& options);

// Every option, for messages: "{partitions=16, tie_break=..., ...}".
std::string DescribeLeaderboardOptions(const LeaderboardOptions& options);

// Checks that `value`, the argument named `what`, lies in
// `min`..max_page_size.
absl::Status ValidateReadSize(absl::string_view what, size_t value, size_t min,
                              size_t max_page_size);

// Checks a registry name: 1..kMaxLeaderboardNameLength bytes.
absl::Status ValidateLeaderboardName(absl::string_view name);

}  // namespace feedcore::internal
#pragma GCC visibility pop

#endif  // FEEDCORE_SRC_CONTRACT_LEADERBOARD_ARGUMENTS_H_
