#include "bench/driver/scenario_redis.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

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

std::unique_ptr<ClusterFeed> OpenClusterFeed(RunContext& context,
                                             std::string_view scenario,
                                             EngineOptions options) {
  if (!context.redis_cluster.has_value()) return nullptr;
  absl::StatusOr<std::unique_ptr<ClusterFeed>> feed =
      ClusterFeed::Open(*context.redis_cluster, scenario,
                        ClusterEngineOptions(std::move(options)));
  if (!feed.ok()) {
    context.answers.Fail(scenario, kFeedcoreCluster, feed.status());
    return nullptr;
  }
  return *std::move(feed);
}

absl::Status RunConcurrently(RunContext& context, std::string_view scenario,
                             std::string_view step, size_t n, size_t threads,
                             const std::function<absl::Status(size_t)>& call) {
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  absl::Status first_error;
  auto work = [&] {
    for (size_t i = next++; i < n && !failed; i = next++) {
      if (absl::Status status = call(i); !status.ok()) {
        std::lock_guard lock(mu);
        if (first_error.ok()) first_error = status;
        failed = true;
      }
      ++done;
    }
  };
  std::vector<std::thread> workers;
  for (size_t t = 0; t < threads; ++t) workers.emplace_back(work);
  // Progress draws from this thread only: it is not thread-safe.
  while (done < n && !failed) {
    context.progress.Update(scenario, step, done, n);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (std::thread& worker : workers) worker.join();
  context.progress.Clear();
  return first_error;
}

namespace {

// The text of `field` in the INFO `section` of the server.
absl::StatusOr<std::string> InfoField(RedisClient& client,
                                      const std::string& section,
                                      const std::string& field) {
  absl::StatusOr<RedisReply> info = client.Command({"INFO", section});
  if (!info.ok()) return info.status();
  const std::string key = absl::StrCat("\n", field, ":");
  const size_t at = info->text.find(key);
  if (at == std::string::npos) {
    return absl::InternalError(
        absl::StrCat("INFO ", section, " has no ", field));
  }
  const size_t begin = at + key.size();
  return info->text.substr(begin,
                           info->text.find_first_of("\r\n", begin) - begin);
}

}  // namespace

absl::StatusOr<int64_t> RedisUsedMemory(RedisClient& client) {
  absl::StatusOr<std::string> text = InfoField(client, "memory", "used_memory");
  if (!text.ok()) return text.status();
  int64_t bytes = 0;
  if (!absl::SimpleAtoi(*text, &bytes)) {
    return absl::InternalError("INFO memory: unreadable used_memory");
  }
  return bytes;
}

absl::StatusOr<double> RedisCpuSeconds(RedisClient& client) {
  double total = 0;
  for (const char* field : {"used_cpu_user", "used_cpu_sys"}) {
    absl::StatusOr<std::string> text = InfoField(client, "cpu", field);
    if (!text.ok()) return text.status();
    double seconds = 0;
    if (!absl::SimpleAtod(*text, &seconds)) {
      return absl::InternalError(absl::StrCat("INFO cpu: unreadable ", field));
    }
    total += seconds;
  }
  return total;
}

}  // namespace feedcore::bench
