// A Redis Cluster of a test's own, for tests that break or reshape it
// (kill a master, migrate a slot) and so must not share the cluster of the
// `redis_cluster` ctest fixture. Started with scripts/redis-cluster, whose
// path ctest passes in FEEDCORE_REDIS_CLUSTER_SCRIPT; stopped however the
// test ends. Three masters, each with the replicas the test asks for.
#ifndef FEEDCORE_TESTS_PRIVATE_REDIS_CLUSTER_H_
#define FEEDCORE_TESTS_PRIVATE_REDIS_CLUSTER_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "doctest/doctest.h"

namespace feedcore::testing {

class PrivateRedisCluster {
 public:
  // Three masters with `replicas_per_master` replicas each (0..5), all
  // attached and in sync; `name` tells the directories apart.
  explicit PrivateRedisCluster(const std::string& name,
                               size_t replicas_per_master = 0)
      : dir_(absl::StrCat(std::filesystem::temp_directory_path().string(),
                          "/feedcore-", name, "-", getpid())) {
    REQUIRE_MESSAGE(Run(absl::StrCat("start ", dir_, " 3 --replicas ",
                                     replicas_per_master)) == 0,
                    "scripts/redis-cluster could not start a cluster");
    std::ifstream in(dir_ + "/seeds");
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) seeds_.push_back(line);
    }
    REQUIRE(seeds_.size() == 3);
    if (replicas_per_master == 0) return;
    // "127.0.0.1:PORT 127.0.0.1:MASTER_PORT" a line.
    std::ifstream replicas(dir_ + "/replicas");
    for (std::string line; std::getline(replicas, line);) {
      const size_t space = line.find(' ');
      if (space == std::string::npos) continue;
      replicas_.push_back(line.substr(0, space));
      master_of_[replicas_.back()] = line.substr(space + 1);
    }
    REQUIRE(replicas_.size() == 3 * replicas_per_master);
  }
  ~PrivateRedisCluster() { Run("stop " + dir_); }
  PrivateRedisCluster(const PrivateRedisCluster&) = delete;
  PrivateRedisCluster& operator=(const PrivateRedisCluster&) = delete;

  // "127.0.0.1:PORT" of each master, as started.
  const std::vector<std::string>& seeds() const { return seeds_; }
  // "127.0.0.1:PORT" of each replica, as started; empty without replicas.
  const std::vector<std::string>& replicas() const { return replicas_; }
  // The replicas that `master` was started with.
  std::vector<std::string> ReplicasOf(const std::string& master) const {
    std::vector<std::string> found;
    for (const std::string& replica : replicas_) {
      if (master_of_.at(replica) == master) found.push_back(replica);
    }
    return found;
  }

  // Stops the node at `node` abruptly (SIGKILL).
  void Kill(const std::string& node) {
    REQUIRE(Run(absl::StrCat("kill ", dir_, " ", Port(node))) == 0);
  }
  // Starts it again and waits until the cluster is ok and, with replicas,
  // every master has its replicas in sync (a master that was failed over
  // comes back as a replica).
  void Restart(const std::string& node) {
    REQUIRE(Run(absl::StrCat("restart ", dir_, " ", Port(node))) == 0);
  }

  // Stops the node's process (SIGSTOP) without closing its connections,
  // and lets it go on (SIGCONT). What is sent to a paused node waits in
  // the socket buffers, then in the sender's output buffer.
  void Pause(const std::string& node) { Signal(node, SIGSTOP); }
  void Resume(const std::string& node) { Signal(node, SIGCONT); }

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

  void Signal(const std::string& node, int signal) {
    std::ifstream in(absl::StrCat(dir_, "/", Port(node), "/redis.pid"));
    pid_t pid = 0;
    REQUIRE_MESSAGE(static_cast<bool>(in >> pid), "no pid file for ", node);
    REQUIRE(pid > 0);
    REQUIRE(kill(pid, signal) == 0);
  }

  const std::string dir_;
  std::vector<std::string> seeds_;
  std::vector<std::string> replicas_;
  std::map<std::string, std::string> master_of_;  // replica -> master
};

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_PRIVATE_REDIS_CLUSTER_H_
