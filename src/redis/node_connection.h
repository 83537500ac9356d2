// One blocking connection to one Redis node, for pipelining: commands are
// queued with Append, sent with Send, and their replies read one by one.
// Not thread-safe: one thread uses a connection at a time (the client's
// pool hands each to one call).
#ifndef FEEDCORE_REDIS_NODE_CONNECTION_H_
#define FEEDCORE_REDIS_NODE_CONNECTION_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "feedcore/types.h"
#include "redis/reply.h"

struct redisContext;

namespace feedcore::redis {

class NodeConnection {
 public:
  // Connects to `host`:`port` within `connect_timeout`; each later read or
  // write waits at most `command_timeout`. Unavailable, naming the node,
  // when it cannot connect.
  static absl::StatusOr<std::unique_ptr<NodeConnection>> Open(
      const std::string& host, int port, Micros connect_timeout,
      Micros command_timeout);

  ~NodeConnection();
  NodeConnection(const NodeConnection&) = delete;
  NodeConnection& operator=(const NodeConnection&) = delete;

  // Queues one command; its arguments are binary-safe.
  void Append(absl::Span<const std::string> args);
  void Append(absl::Span<const absl::string_view> args);
  // Writes everything queued. Unavailable on an I/O error or timeout, after
  // which the connection is broken.
  absl::Status Send();
  // Reads the next reply (sending whatever is still queued first).
  // Unavailable on an I/O error or timeout, after which the connection is
  // broken.
  absl::StatusOr<Reply> Read();

  // False after any I/O error: the connection must be dropped.
  bool healthy() const { return healthy_; }
  const std::string& address() const { return address_; }

 private:
  NodeConnection(redisContext* context, std::string address)
      : context_(context), address_(std::move(address)) {}
  absl::Status Broken(absl::string_view during);

  redisContext* context_;
  const std::string address_;
  bool healthy_ = true;
};

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_NODE_CONNECTION_H_
