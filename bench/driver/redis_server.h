// A private redis-server for one run of feedcore-bench: started on a free
// loopback port with persistence off (unless the caller's extra arguments
// turn it on), stopped when this object goes away.
//
// The server is the driver's child process. It is asked to stop (SIGTERM,
// then SIGKILL after a bounded wait) by the destructor, so every return
// path, errors included, stops it; and it is started with a parent-death
// signal, so it also dies if the driver itself is killed or crashes.
#ifndef FEEDCORE_BENCH_DRIVER_REDIS_SERVER_H_
#define FEEDCORE_BENCH_DRIVER_REDIS_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace feedcore::bench {

class RedisServer {
 public:
  // Starts `binary` (looked up in PATH when it has no slash) listening on
  // 127.0.0.1 only, at a port that was free a moment before, with
  // `--save "" --appendonly no`, its working directory in a fresh
  // temporary directory, then `extra_args` (which override those: e.g.
  // `--appendonly yes --appendfsync always` puts the append-only file in
  // that directory). Tries a few ports if one is taken meanwhile.
  // Returns once the server answers PING. Unavailable, with the reason,
  // when the binary is missing or the server does not come up.
  static absl::StatusOr<std::unique_ptr<RedisServer>> Start(
      const std::string& binary,
      const std::vector<std::string>& extra_args = {});

  // The server's working directory (where an append-only file goes).
  const std::string& dir() const { return dir_; }

  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  const std::string& host() const { return host_; }

 private:
  RedisServer(pid_t pid, int port, std::string dir)
      : pid_(pid), port_(port), dir_(std::move(dir)) {}

  pid_t pid_;  // -1 once the child has been reaped
  const int port_;
  const std::string host_ = "127.0.0.1";
  const std::string dir_;  // temporary working directory, removed at stop
};

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_REDIS_SERVER_H_
