// OpenClusterBoard over feedcore::redis_cluster (built when that library
// is).
#include "absl/strings/str_cat.h"
#include "bench/driver/cluster_leaderboard.h"
#include "feedcore/redis_cluster.h"

namespace feedcore::bench {

absl::StatusOr<std::unique_ptr<Leaderboard>> OpenClusterBoard(
    const RedisClusterEndpoint& cluster, const std::string& key_prefix,
    std::string_view name, const LeaderboardOptions& options) {
  RedisClusterOptions connection;
  connection.seed_nodes = cluster.seeds;
  connection.key_prefix = key_prefix;
  connection.wait_replicas = cluster.wait_replicas;
  return CreateRedisClusterLeaderboard(
      connection, absl::string_view(name.data(), name.size()), options);
}

}  // namespace feedcore::bench
