// Validation of LeaderboardOptions and of the size arguments of leaderboard
// reads. Every check names the offending field or argument in its message.
#ifndef FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_OPTIONS_H_
#define FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "feedcore/leaderboard.h"

namespace feedcore::internal {

absl::Status ValidateLeaderboardOptions(const LeaderboardOptions& options);

// Every option, for messages: "{partitions=16, tie_break=..., ...}".
std::string DescribeLeaderboardOptions(const LeaderboardOptions& options);

// Checks that `value`, the argument named `what`, lies in
// `min`..max_page_size.
absl::Status ValidateReadSize(absl::string_view what, size_t value, size_t min,
                              size_t max_page_size);

// The byte in which snapshots and change records keep a board's ordering
// options: bit 0 the tie-break (0 kEarlierUpdateFirst, 1
// kLowerMemberFirst), bits 1-2 the rank style (0 kUnique, 1 kCompetition,
// 2 kDense). A board of the default rank style writes the byte older files
// hold.
uint8_t EncodeBoardOrdering(const LeaderboardOptions& options);
// Sets `options`' tie_break and rank_style from `byte`; false, changing
// nothing, when the byte holds no valid combination.
bool DecodeBoardOrdering(uint8_t byte, LeaderboardOptions* options);

// Checks a registry name: 1..kMaxLeaderboardNameLength bytes.
absl::Status ValidateLeaderboardName(absl::string_view name);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_OPTIONS_H_
