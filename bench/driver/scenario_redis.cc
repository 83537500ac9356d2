#include "bench/driver/scenario_redis.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace feedcore::bench {

std::unique_ptr<RedisClient> ConnectRedis(RunContext& context,
                                          std::string_view scenario) {
  if (!context.redis.has_value()) return nullptr;
  absl::StatusOr<std::unique_ptr<RedisClient>> client =
      RedisClient::Connect(context.redis->host, context.redis->port);
  if (!client.ok()) {
    context.answers.Fail(scenario, kRedis, client.status());
    return nullptr;
  }
  absl::StatusOr<RedisReply> flushed = (*client)->Command({"FLUSHALL"});
  if (!flushed.ok()) {
    context.answers.Fail(scenario, kRedis, flushed.status());
    return nullptr;
  }
  return *std::move(client);
}

absl::StatusOr<int64_t> RedisUsedMemory(RedisClient& client) {
  absl::StatusOr<RedisReply> info = client.Command({"INFO", "memory"});
  if (!info.ok()) return info.status();
  constexpr std::string_view kField = "used_memory:";
  const size_t at = info->text.find(kField);
  if (at == std::string::npos) {
    return absl::InternalError("INFO memory has no used_memory");
  }
  const size_t begin = at + kField.size();
  const size_t end = info->text.find_first_of("\r\n", begin);
  int64_t bytes = 0;
  if (!absl::SimpleAtoi(info->text.substr(begin, end - begin), &bytes)) {
    return absl::InternalError("INFO memory: unreadable used_memory");
  }
  return bytes;
}

}  // namespace feedcore::bench
