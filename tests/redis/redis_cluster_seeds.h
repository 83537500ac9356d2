// For tests of the Redis Cluster backend: where the shared local cluster
// is (its seed addresses) and key prefixes that keep the tests sharing it
// apart. ctest starts the cluster through the redis_cluster fixture
// (tests/redis/CMakeLists.txt) and names its seed file in
// FEEDCORE_REDIS_CLUSTER_SEEDS.
#ifndef FEEDCORE_TESTS_REDIS_CLUSTER_SEEDS_H_
#define FEEDCORE_TESTS_REDIS_CLUSTER_SEEDS_H_

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace feedcore::testing {

// The seeds, "127.0.0.1:PORT" each. Aborts when there are none: a test of
// the cluster backend that passed without a cluster would prove nothing.
inline std::vector<std::string> RedisClusterSeeds() {
  constexpr const char* kVar = "FEEDCORE_REDIS_CLUSTER_SEEDS";
  const char* path = std::getenv(kVar);
  std::vector<std::string> seeds;
  if (path != nullptr && *path != '\0') {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      while (!line.empty() &&
             std::isspace(static_cast<unsigned char>(line.back()))) {
        line.pop_back();
      }
      if (!line.empty()) seeds.push_back(line);
    }
  }
  if (seeds.empty()) {
    const std::string problem =
        path == nullptr || *path == '\0'
            ? std::string("is not set")
            : "names a missing or empty file, " + std::string(path);
    std::fprintf(
        stderr,
        "No Redis Cluster: %s %s. ctest starts a local cluster through the "
        "redis_cluster fixture and sets %s for the tests that require it; "
        "to run a test by hand, run `scripts/redis-cluster start DIR` and "
        "set %s=DIR/seeds.\n",
        kVar, problem.c_str(), kVar, kVar);
    std::abort();
  }
  return seeds;
}

// "t:<test_name>:<pid>:<counter>:<random hex>", different on every call,
// in every process and every run, so that tests sharing the cluster (and
// reruns against one left running) never see each other's keys.
inline std::string UniqueKeyPrefix(std::string_view test_name) {
  static std::atomic<std::uint64_t> counter{0};
  char salt[9];
  std::snprintf(salt, sizeof(salt), "%08x",
                static_cast<unsigned>(std::random_device{}()));
  return "t:" + std::string(test_name) + ":" + std::to_string(::getpid()) +
         ":" + std::to_string(counter.fetch_add(1)) + ":" + salt;
}

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_REDIS_CLUSTER_SEEDS_H_
