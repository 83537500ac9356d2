// A Redis Cluster of a test's own, for tests that break or reshape it
// (kill a master, migrate a slot) and so must not share the cluster of the
// `redis_cluster` ctest fixture. Started with scripts/redis-cluster, whose
// path ctest passes in FEEDCORE_REDIS_CLUSTER_SCRIPT; stopped however the
// test ends.
#ifndef FEEDCORE_TESTS_PRIVATE_REDIS_CLUSTER_H_
#define FEEDCORE_TESTS_PRIVATE_REDIS_CLUSTER_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "doctest/doctest.h"

namespace feedcore::testing {

class PrivateRedisCluster {
 public:
  // Three masters, no replicas; `name` tells the directories apart.
  explicit PrivateRedisCluster(const std::string& name)
      : dir_(absl::StrCat(std::filesystem::temp_directory_path().string(),
                          "/feedcore-", name, "-", getpid())) {
    REQUIRE_MESSAGE(Run("start " + dir_) == 0,
                    "scripts/redis-cluster could not start a cluster");
    std::ifstream in(dir_ + "/seeds");
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) seeds_.push_back(line);
    }
    REQUIRE(seeds_.size() == 3);
  }
  ~PrivateRedisCluster() { Run("stop " + dir_); }
  PrivateRedisCluster(const PrivateRedisCluster&) = delete;
  PrivateRedisCluster& operator=(const PrivateRedisCluster&) = delete;

  // "127.0.0.1:PORT" of each master.
  const std::vector<std::string>& seeds() const { return seeds_; }

  // Stops the master at `node` abruptly (SIGKILL).
  void Kill(const std::string& node) {
    REQUIRE(Run(absl::StrCat("kill ", dir_, " ", Port(node))) == 0);
  }
  // Starts it again and waits until the cluster is ok.
  void Restart(const std::string& node) {
    REQUIRE(Run(absl::StrCat("restart ", dir_, " ", Port(node))) == 0);
  }

  static std::string Port(const std::string& node) {
    return node.substr(node.rfind(':') + 1);
  }

 private:
  static int Run(const std::string& args) {
    const char* script = std::getenv("FEEDCORE_REDIS_CLUSTER_SCRIPT");
    REQUIRE_MESSAGE(script != nullptr,
                    "FEEDCORE_REDIS_CLUSTER_SCRIPT is not set (ctest sets it "
                    "to scripts/redis-cluster)");
    const int status = std::system(absl::StrCat(script, " ", args).c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  const std::string dir_;
  std::vector<std::string> seeds_;
};

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_PRIVATE_REDIS_CLUSTER_H_
