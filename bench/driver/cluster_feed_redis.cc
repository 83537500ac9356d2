// ClusterFeed over feedcore::redis_cluster (built when that library is).
// Key clean-up and the cluster's description go through the driver's own
// single-node RedisClient, node by node: the backend has no call for
// either, and neither is measured.
#include <cstdio>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "bench/driver/cluster_feed.h"
#include "bench/driver/redis_client.h"
#include "bench/driver/scenario_redis.h"
#include "feedcore/redis_cluster.h"

namespace feedcore::bench {
namespace {

// Keys deleted per round trip.
constexpr size_t kUnlinkBatch = 1000;

struct Node {
  std::string host;
  int port = 0;
};

absl::StatusOr<Node> ParseNode(absl::string_view address) {
  const size_t colon = address.rfind(':');
  Node node;
  if (colon == absl::string_view::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &node.port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", address, "' is not host:port"));
  }
  node.host = std::string(address.substr(0, colon));
  return node;
}

// Every master, from the CLUSTER SLOTS of the first seed that answers.
absl::StatusOr<std::vector<Node>> Masters(
    const std::vector<std::string>& seeds) {
  absl::Status last = absl::InvalidArgumentError("no seed nodes");
  for (const std::string& seed : seeds) {
    absl::StatusOr<Node> node = ParseNode(seed);
    if (!node.ok()) return node.status();
    absl::StatusOr<std::unique_ptr<RedisClient>> client =
        RedisClient::Connect(node->host, node->port);
    if (!client.ok()) {
      last = client.status();
      continue;
    }
    absl::StatusOr<RedisReply> slots = (*client)->Command({"CLUSTER", "SLOTS"});
    if (!slots.ok()) {
      last = slots.status();
      continue;
    }
    std::set<std::pair<std::string, int64_t>> unique;
    for (const RedisReply& range : slots->elements) {
      if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) {
        continue;
      }
      const RedisReply& master = range.elements[2];
      // An empty host means "the node you asked".
      unique.emplace(master.elements[0].text.empty() ? node->host
                                                     : master.elements[0].text,
                     master.elements[1].integer);
    }
    std::vector<Node> masters;
    for (const auto& [host, port] : unique) {
      masters.push_back(Node{host, static_cast<int>(port)});
    }
    if (masters.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(seed, " reports no slots: not a cluster node?"));
    }
    return masters;
  }
  return last;
}

// Deletes the keys matching `pattern` on one node; returns how many.
absl::StatusOr<size_t> DeleteKeys(const Node& node,
                                  const std::string& pattern) {
  absl::StatusOr<std::unique_ptr<RedisClient>> client =
      RedisClient::Connect(node.host, node.port);
  if (!client.ok()) return client.status();
  size_t deleted = 0;
  std::string cursor = "0";
  do {
    absl::StatusOr<RedisReply> page =
        (*client)->Command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
    if (!page.ok()) return page.status();
    if (page->elements.size() != 2) {
      return absl::InternalError("unexpected reply to SCAN");
    }
    cursor = page->elements[0].text;
    // One key per UNLINK: the keys of one node span many slots, and a
    // cluster refuses a multi-key command across slots.
    for (const RedisReply& key : page->elements[1].elements) {
      (*client)->Append({"UNLINK", key.text});
      ++deleted;
      if ((*client)->pending() >= kUnlinkBatch) {
        if (absl::Status s = (*client)->Flush(); !s.ok()) return s;
      }
    }
    if (absl::Status s = (*client)->Flush(); !s.ok()) return s;
  } while (cursor != "0");
  return deleted;
}

}  // namespace

bool ClusterFeed::Compiled() { return true; }

absl::StatusOr<std::unique_ptr<ClusterFeed>> ClusterFeed::Open(
    const RedisClusterEndpoint& cluster, std::string_view scenario,
    EngineOptions options) {
  RedisClusterOptions connection;
  connection.seed_nodes = cluster.seeds;
  connection.key_prefix =
      absl::StrCat(cluster.key_prefix, "-", std::string(scenario));
  connection.wait_replicas = cluster.wait_replicas;
  absl::StatusOr<std::unique_ptr<FeedEngine>> engine =
      CreateRedisClusterFeedEngine(connection, std::move(options));
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<ClusterFeed>(new ClusterFeed(
      cluster.seeds, connection.key_prefix, *std::move(engine)));
}

ClusterFeed::~ClusterFeed() {
  engine_.reset();
  absl::StatusOr<std::vector<Node>> masters = Masters(seeds_);
  absl::Status status = masters.status();
  if (masters.ok()) {
    // The prefix is letters, digits and '-': nothing SCAN's pattern
    // language would read as a wildcard.
    const std::string pattern = absl::StrCat(key_prefix_, ":*");
    for (const Node& node : *masters) {
      absl::StatusOr<size_t> deleted = DeleteKeys(node, pattern);
      if (!deleted.ok()) status = deleted.status();
    }
  }
  if (!status.ok()) {
    std::fprintf(stderr,
                 "feedcore-bench: could not delete the keys %s:* from the "
                 "Redis Cluster: %s\n",
                 key_prefix_.c_str(), std::string(status.message()).c_str());
  }
}

absl::StatusOr<double> ClusterFeed::MastersCpuSeconds() const {
  absl::StatusOr<std::vector<Node>> masters = Masters(seeds_);
  if (!masters.ok()) return masters.status();
  double total = 0;
  for (const Node& node : *masters) {
    absl::StatusOr<std::unique_ptr<RedisClient>> client =
        RedisClient::Connect(node.host, node.port);
    if (!client.ok()) return client.status();
    absl::StatusOr<double> seconds = RedisCpuSeconds(**client);
    if (!seconds.ok()) return seconds.status();
    total += *seconds;
  }
  return total;
}

absl::StatusOr<std::string> ClusterFeed::Describe(
    const std::vector<std::string>& seeds) {
  absl::StatusOr<std::vector<Node>> masters = Masters(seeds);
  if (!masters.ok()) return masters.status();
  std::string version = "unknown version";
  absl::StatusOr<std::unique_ptr<RedisClient>> client =
      RedisClient::Connect(masters->front().host, masters->front().port);
  if (client.ok()) {
    absl::StatusOr<RedisReply> info = (*client)->Command({"INFO", "server"});
    if (info.ok()) {
      const size_t at = info->text.find("redis_version:");
      if (at != std::string::npos) {
        const size_t begin = at + 14;
        version = absl::StrCat(
            "redis-server ",
            info->text.substr(begin,
                              info->text.find_first_of("\r\n", begin) - begin));
      }
    }
  }
  return absl::StrCat(masters->size(), " masters, ", version);
}

}  // namespace feedcore::bench
