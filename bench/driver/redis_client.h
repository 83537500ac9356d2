// A small Redis client for the driver: pipelined commands over one
// connection (hiredis underneath). Without hiredis at build time the same
// class compiles, and Connect says that the Redis system is not built in.
#ifndef FEEDCORE_BENCH_DRIVER_REDIS_CLIENT_H_
#define FEEDCORE_BENCH_DRIVER_REDIS_CLIENT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace feedcore::bench {

struct RedisReply {
  enum class Type { kNil, kInteger, kString, kStatus, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;
  std::string text;  // strings and statuses
  std::vector<RedisReply> elements;
};

class RedisClient {
 public:
  // True when the driver was built with hiredis.
  static bool Compiled();

  // Connects to host:port. Unavailable if it cannot, or if the driver was
  // built without hiredis.
  static absl::StatusOr<std::unique_ptr<RedisClient>> Connect(
      const std::string& host, int port);

  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Queues one command (arguments are binary-safe) without waiting for it:
  // pipelining. Nothing is sent until Flush.
  void Append(absl::Span<const std::string_view> args);
  size_t pending() const { return pending_; }

  // Sends every queued command and reads all their replies, in order,
  // into `replies` when it is not null. Every reply is read even after an
  // error reply; the first error (I/O or an error reply) is returned.
  absl::Status Flush(std::vector<RedisReply>* replies = nullptr);

  // One command, one round trip.
  absl::StatusOr<RedisReply> Command(absl::Span<const std::string_view> args);

 private:
  struct Connection;  // hiredis context, or nothing without hiredis
  explicit RedisClient(std::unique_ptr<Connection> connection);

  std::unique_ptr<Connection> connection_;
  size_t pending_ = 0;
};

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_REDIS_CLIENT_H_
