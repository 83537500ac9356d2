// RedisClient when hiredis was not found at build time: every connection
// attempt says so, and the driver runs the other systems.
#include "bench/driver/redis_client.h"

namespace feedcore::bench {

struct RedisClient::Connection {};

bool RedisClient::Compiled() { return false; }

RedisClient::RedisClient(std::unique_ptr<Connection> connection)
    : connection_(std::move(connection)) {}

RedisClient::~RedisClient() = default;

absl::StatusOr<std::unique_ptr<RedisClient>> RedisClient::Connect(
    const std::string&, int) {
  return absl::UnavailableError(
      "feedcore-bench was built without hiredis (pkg-config found no "
      "'hiredis'; scripts/install-deps installs libhiredis-dev)");
}

void RedisClient::Append(absl::Span<const std::string_view>) { ++pending_; }

absl::Status RedisClient::Flush(std::vector<RedisReply>*) {
  pending_ = 0;
  return absl::UnavailableError("built without hiredis");
}

absl::StatusOr<RedisReply> RedisClient::Command(
    absl::Span<const std::string_view>) {
  return absl::UnavailableError("built without hiredis");
}

}  // namespace feedcore::bench
