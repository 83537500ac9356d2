// feedcore on Redis Cluster as a system of the feed scenarios: the
// FeedEngine of include/feedcore/redis_cluster.h, driven through the same
// interface calls as the in-process engine. Without the feedcore::redis_cluster
// library at build time the same class compiles, and Open says that this
// system is not built in.
#ifndef FEEDCORE_BENCH_DRIVER_CLUSTER_FEED_H_
#define FEEDCORE_BENCH_DRIVER_CLUSTER_FEED_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/driver/scenario.h"
#include "feedcore/feedcore.h"

namespace feedcore::bench {

class ClusterFeed {
 public:
  // True when the driver was built with feedcore::redis_cluster.
  static bool Compiled();

  // An engine on `cluster` whose keys start with the run's prefix and the
  // scenario's name, so a scenario never sees another's data (or anyone
  // else's, on a shared cluster). `options` must be ones the backend
  // accepts (see ClusterEngineOptions).
  static absl::StatusOr<std::unique_ptr<ClusterFeed>> Open(
      const RedisClusterEndpoint& cluster, std::string_view scenario,
      EngineOptions options);

  // Deletes every key under the prefix: nothing of a scenario is left in
  // a cluster that outlives the run, and a private cluster's memory is
  // free again for the next scenario.
  ~ClusterFeed();
  ClusterFeed(const ClusterFeed&) = delete;
  ClusterFeed& operator=(const ClusterFeed&) = delete;

  FeedEngine& engine() { return *engine_; }
  const std::string& key_prefix() const { return key_prefix_; }

  // The CPU time the cluster's masters have used so far, together, in
  // seconds (RedisCpuSeconds of each).
  absl::StatusOr<double> MastersCpuSeconds() const;

  // "3 masters, redis-server 7.0.15": what the seeds lead to, for the
  // report.
  static absl::StatusOr<std::string> Describe(
      const std::vector<std::string>& seeds);

 private:
  ClusterFeed(std::vector<std::string> seeds, std::string key_prefix,
              std::unique_ptr<FeedEngine> engine)
      : seeds_(std::move(seeds)),
        key_prefix_(std::move(key_prefix)),
        engine_(std::move(engine)) {}

  const std::vector<std::string> seeds_;
  const std::string key_prefix_;
  std::unique_ptr<FeedEngine> engine_;
};

// The in-process system's options less what the cluster backend refuses
// (a change stream): the closest configuration the backend runs.
inline EngineOptions ClusterEngineOptions(EngineOptions options) {
  options.change_stream = nullptr;
  return options;
}

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_CLUSTER_FEED_H_
