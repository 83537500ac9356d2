// The leaderboard scenario's part on Redis Cluster: the cost of
// TieBreak::kEarlierUpdateFirst, whose writes first take update sequences
// from the board's counter, against kLowerMemberFirst on the same cluster
// in the same run. Without the feedcore::redis_cluster library at build
// time OpenClusterBoard says that this system is not built in.
#ifndef FEEDCORE_BENCH_DRIVER_CLUSTER_LEADERBOARD_H_
#define FEEDCORE_BENCH_DRIVER_CLUSTER_LEADERBOARD_H_

#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "bench/driver/scenario.h"
#include "feedcore/leaderboard.h"

namespace feedcore::bench {

// The two systems of RunClusterTieBreaks: feedcore's Leaderboard on the
// Redis Cluster backend with each tie-break.
inline constexpr char kClusterMemberTies[] =
    "feedcore_redis_cluster_lower_member_first";
inline constexpr char kClusterUpdateTies[] =
    "feedcore_redis_cluster_earlier_update_first";

// Board `name` on `cluster`, its keys under `key_prefix`.
absl::StatusOr<std::unique_ptr<Leaderboard>> OpenClusterBoard(
    const RedisClusterEndpoint& cluster, const std::string& key_prefix,
    std::string_view name, const LeaderboardOptions& options);

// Two boards on context.redis_cluster, one per tie-break, filled alike;
// then, interleaved, the same Increment calls, IncrementMany batches and
// Rank calls on both. Figures per call (per element for batches) under
// the systems kClusterMemberTies and kClusterUpdateTies, with their ratio.
void RunClusterTieBreaks(RunContext& context, std::mt19937_64& rng);

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_CLUSTER_LEADERBOARD_H_
