// Opens a scenario's connection to the driver's Redis, on an empty
// database, and its engine on the driver's Redis Cluster.
#ifndef FEEDCORE_BENCH_DRIVER_SCENARIO_REDIS_H_
#define FEEDCORE_BENCH_DRIVER_SCENARIO_REDIS_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>

#include "bench/driver/cluster_feed.h"
#include "bench/driver/redis_client.h"
#include "bench/driver/scenario.h"

namespace feedcore::bench {

// Null when Redis does not run in this driver run, or when connecting or
// FLUSHALL fails (which is reported as a failure of the run).
std::unique_ptr<RedisClient> ConnectRedis(RunContext& context,
                                          std::string_view scenario);

// Null when feedcore on Redis Cluster does not run in this driver run, or
// when its engine cannot be opened (reported as a failure of the run).
std::unique_ptr<ClusterFeed> OpenClusterFeed(RunContext& context,
                                             std::string_view scenario,
                                             EngineOptions options);

// Runs call(0) .. call(n - 1) on `threads` threads, reporting progress as
// `step`, and returns the first error (the remaining calls are skipped).
// For the untimed set-up of feedcore on Redis Cluster: each of its calls
// waits for a round trip or more, so one at a time 210,000 follows would
// take minutes. The calls must not depend on each other's order.
absl::Status RunConcurrently(RunContext& context, std::string_view scenario,
                             std::string_view step, size_t n, size_t threads,
                             const std::function<absl::Status(size_t)>& call);

// Redis's INFO memory `used_memory`, in bytes.
absl::StatusOr<int64_t> RedisUsedMemory(RedisClient& client);

// The CPU time the server has used so far (INFO cpu: `used_cpu_user` plus
// `used_cpu_sys`), in seconds: the difference over a step is the server's
// work for it, whatever else shares the machine's cores.
absl::StatusOr<double> RedisCpuSeconds(RedisClient& client);

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_SCENARIO_REDIS_H_
