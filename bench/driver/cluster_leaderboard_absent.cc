// OpenClusterBoard when feedcore::redis_cluster was not built.
#include "bench/driver/cluster_leaderboard.h"

namespace feedcore::bench {

absl::StatusOr<std::unique_ptr<Leaderboard>> OpenClusterBoard(
    const RedisClusterEndpoint&, const std::string&, std::string_view,
    const LeaderboardOptions&) {
  return absl::UnavailableError(
      "feedcore-bench was built without feedcore::redis_cluster");
}

}  // namespace feedcore::bench
