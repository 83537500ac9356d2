// Opens a scenario's connection to the driver's Redis, on an empty
// database, or notes why Redis is left out of the scenario.
#ifndef FEEDCORE_BENCH_DRIVER_SCENARIO_REDIS_H_
#define FEEDCORE_BENCH_DRIVER_SCENARIO_REDIS_H_

#include <memory>
#include <string_view>

#include "bench/driver/redis_client.h"
#include "bench/driver/scenario.h"

namespace feedcore::bench {

// Null when Redis does not run in this driver run, or when connecting or
// FLUSHALL fails (which is reported as a failure of the run).
std::unique_ptr<RedisClient> ConnectRedis(RunContext& context,
                                          std::string_view scenario);

// Redis's INFO memory `used_memory`, in bytes.
absl::StatusOr<int64_t> RedisUsedMemory(RedisClient& client);

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_SCENARIO_REDIS_H_
