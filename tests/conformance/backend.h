// Which backend a conformance test runs against, so that one test source
// checks both: the in-process engine and the Redis Cluster backend.
//
// FEEDCORE_TEST_BACKEND=redis_cluster selects the cluster (ctest sets it,
// with the seed file of the cluster its fixture started; see
// tests/redis/CMakeLists.txt); unset or "memory" selects the
// in-process backend. Each engine or board made here on the cluster gets a
// key prefix of its own, so tests never see each other's data.
#ifndef FEEDCORE_TESTS_CONFORMANCE_BACKEND_H_
#define FEEDCORE_TESTS_CONFORMANCE_BACKEND_H_

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/options.h"
#include "feedcore/redis_cluster.h"
#include "redis/redis_cluster_seeds.h"

namespace feedcore::testing {

enum class Backend { kMemory, kRedisCluster };

inline Backend SelectedBackend() {
  const char* name = std::getenv("FEEDCORE_TEST_BACKEND");
  if (name == nullptr || std::string_view(name) == "memory") {
    return Backend::kMemory;
  }
  if (std::string_view(name) == "redis_cluster") return Backend::kRedisCluster;
  std::fprintf(stderr,
               "FEEDCORE_TEST_BACKEND is '%s'; expected 'memory' or "
               "'redis_cluster'\n",
               name);
  std::abort();
}

inline bool OnCluster() { return SelectedBackend() == Backend::kRedisCluster; }

inline RedisClusterOptions TestClusterOptions(std::string_view test_name) {
  RedisClusterOptions cluster;
  cluster.seed_nodes = RedisClusterSeeds();
  cluster.key_prefix = UniqueKeyPrefix(test_name);
  return cluster;
}

// A fresh, empty engine on the selected backend.
inline absl::StatusOr<std::unique_ptr<FeedEngine>> MakeEngine(
    EngineOptions options, std::string_view test_name = "feed") {
  if (OnCluster()) {
    return CreateRedisClusterFeedEngine(TestClusterOptions(test_name),
                                        std::move(options));
  }
  return FeedEngine::Create(std::move(options));
}

// A fresh, empty board on the selected backend.
inline absl::StatusOr<std::unique_ptr<Leaderboard>> MakeBoard(
    const LeaderboardOptions& options, std::string_view test_name = "board") {
  if (OnCluster()) {
    return CreateRedisClusterLeaderboard(TestClusterOptions(test_name), "board",
                                         options);
  }
  return Leaderboard::Create(options);
}

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_CONFORMANCE_BACKEND_H_
