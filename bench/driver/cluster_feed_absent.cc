// ClusterFeed when feedcore::redis_cluster was not built: opening it says
// so, and the driver runs the other systems.
#include "bench/driver/cluster_feed.h"

namespace feedcore::bench {

bool ClusterFeed::Compiled() { return false; }

absl::StatusOr<std::unique_ptr<ClusterFeed>> ClusterFeed::Open(
    const RedisClusterEndpoint&, std::string_view, EngineOptions) {
  return absl::UnavailableError(
      "feedcore-bench was built without feedcore::redis_cluster");
}

ClusterFeed::~ClusterFeed() = default;

absl::StatusOr<double> ClusterFeed::MastersCpuSeconds() const {
  return absl::UnavailableError(
      "feedcore-bench was built without feedcore::redis_cluster");
}

absl::StatusOr<std::string> ClusterFeed::Describe(
    const std::vector<std::string>&) {
  return absl::UnavailableError(
      "feedcore-bench was built without feedcore::redis_cluster");
}

}  // namespace feedcore::bench
