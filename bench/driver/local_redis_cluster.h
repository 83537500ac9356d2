// A private Redis Cluster for one run of feedcore-bench, started and
// stopped by scripts/redis-cluster in a fresh temporary directory.
//
// The nodes daemonize, so unlike the single redis-server of
// redis_server.h they cannot die with the driver by a parent-death
// signal. Two things stop them instead: the destructor, on every return
// path, and a guardian process forked before the cluster starts, which
// waits for the driver to go away and runs `scripts/redis-cluster stop`
// unless the destructor has already done it. The guardian is what stops
// the cluster when the driver is killed or crashes, or when an interrupt
// from the terminal ends it (the guardian is in a process group of its
// own and ignores the terminal's signals).
#ifndef FEEDCORE_BENCH_DRIVER_LOCAL_REDIS_CLUSTER_H_
#define FEEDCORE_BENCH_DRIVER_LOCAL_REDIS_CLUSTER_H_

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace feedcore::bench {

class LocalRedisCluster {
 public:
  // Runs `script start DIR --replicas N` (the script's default of 3
  // masters on free loopback ports, each with `replicas_per_master`
  // replicas) and returns once the script says every node serves every
  // slot and every replica is in sync. Unavailable, with the end of the
  // script's own messages, when the script cannot be run or fails; what it
  // started is stopped by then.
  static absl::StatusOr<std::unique_ptr<LocalRedisCluster>> Start(
      const std::string& script, size_t replicas_per_master = 0);

  ~LocalRedisCluster();
  LocalRedisCluster(const LocalRedisCluster&) = delete;
  LocalRedisCluster& operator=(const LocalRedisCluster&) = delete;

  // "127.0.0.1:PORT" of every master, from DIR/seeds.
  const std::vector<std::string>& seeds() const { return seeds_; }
  const std::string& dir() const { return dir_; }

 private:
  LocalRedisCluster(std::string script, std::string dir, pid_t guardian,
                    int guardian_pipe)
      : script_(std::move(script)),
        dir_(std::move(dir)),
        guardian_(guardian),
        guardian_pipe_(guardian_pipe) {}

  const std::string script_;
  const std::string dir_;
  std::vector<std::string> seeds_;
  pid_t guardian_;
  int guardian_pipe_;  // write end; a byte on it means "already stopped"
};

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_LOCAL_REDIS_CLUSTER_H_
