// The Redis Cluster client under the cluster backend: slot hashing,
// option checks, routing and pipelining across nodes, scripts that a node
// lost, commands that must run in order, the redirections of a slot
// that migrates while the client holds the old slot map (ASK during the
// migration, MOVED after it), also under a leaderboard's IncrementMany, and
// WAIT behind writes (RedisClusterOptions::wait_replicas).
// Runs on a private cluster, because migrating a slot or dropping the
// scripts would disturb other tests.
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "doctest/doctest.h"
#include "feedcore/leaderboard.h"
#include "feedcore/redis_cluster.h"
#include "redis/cluster_client.h"
#include "redis/key_slot.h"
#include "redis/node_connection.h"
#include "redis/private_redis_cluster.h"
#include "redis/redis_leaderboard.h"

namespace feedcore::redis {
namespace {

TEST_CASE("key slots follow the Redis Cluster specification") {
  // The CRC16 (XMODEM) check value.
  CHECK(Crc16("123456789") == 0x31C3);
  CHECK(KeySlot("123456789") == 0x31C3 % kSlotCount);
  // Hash tags: the first {...} with something inside decides.
  CHECK(KeySlot("{user1000}.following") == KeySlot("{user1000}.followers"));
  CHECK(KeySlot("{user1000}.following") == KeySlot("user1000"));
  CHECK(KeySlot("foo{}{bar}") == Crc16("foo{}{bar}") % kSlotCount);
  CHECK(KeySlot("foo{{bar}}zap") == KeySlot("{bar"));
  CHECK(KeySlot("foo{bar}{zap}") == KeySlot("bar"));
  CHECK(KeySlot("") == 0);
}

TEST_CASE("positions ordered by slot: adjacent per slot, stable within one") {
  const std::vector<uint16_t> slots = {9, 0, 16383, 9, 0, 9, 7};
  const std::vector<uint32_t> order = OrderBySlot(slots);
  CHECK(order == std::vector<uint32_t>{1, 4, 6, 0, 3, 5, 2});
  CHECK(OrderBySlot({}).empty());
}

RedisClusterOptions Valid() {
  RedisClusterOptions options;
  options.seed_nodes = {"127.0.0.1:1"};
  return options;
}

TEST_CASE("bad options are refused before connecting, naming the option") {
  struct Case {
    const char* name;
    RedisClusterOptions options;
  };
  std::vector<Case> cases;
  cases.push_back({"seed_nodes", Valid()});
  cases.back().options.seed_nodes.clear();
  cases.push_back({"seed_nodes", Valid()});
  cases.back().options.seed_nodes = {"localhost"};
  cases.push_back({"seed_nodes", Valid()});
  cases.back().options.seed_nodes = {"localhost:70000"};
  cases.push_back({"key_prefix", Valid()});
  cases.back().options.key_prefix = "";
  cases.push_back({"key_prefix", Valid()});
  cases.back().options.key_prefix = "a{b}";
  cases.push_back({"key_prefix", Valid()});
  cases.back().options.key_prefix = std::string(65, 'k');
  cases.push_back({"connect_timeout", Valid()});
  cases.back().options.connect_timeout = 0;
  cases.push_back({"command_timeout", Valid()});
  cases.back().options.command_timeout = 11 * kMicrosPerMinute;
  cases.push_back({"connections_per_node", Valid()});
  cases.back().options.connections_per_node = 0;
  cases.push_back({"max_attempts", Valid()});
  cases.back().options.max_attempts = 0;
  cases.push_back({"max_retry_backoff", Valid()});
  cases.back().options.max_retry_backoff = 0;
  cases.push_back({"pipeline_depth", Valid()});
  cases.back().options.pipeline_depth = 0;
  cases.push_back({"wait_replicas", Valid()});
  cases.back().options.wait_replicas = 65;
  cases.push_back({"wait_timeout", Valid()});
  cases.back().options.wait_replicas = 1;
  cases.back().options.wait_timeout = 0;
  cases.push_back({"wait_timeout", Valid()});
  cases.back().options.wait_replicas = 1;
  cases.back().options.wait_timeout = cases.back().options.command_timeout;
  for (const Case& c : cases) {
    absl::StatusOr<std::unique_ptr<ClusterClient>> client =
        ClusterClient::Connect(c.options);
    INFO(c.name, ": ", client.status().ToString());
    REQUIRE_FALSE(client.ok());
    CHECK(client.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(client.status().message().find(c.name) != absl::string_view::npos);
  }
}

TEST_CASE("no seed answers: Unavailable naming the node") {
  RedisClusterOptions options = Valid();
  options.connect_timeout = 100 * kMicrosPerMillisecond;
  absl::StatusOr<std::unique_ptr<ClusterClient>> client =
      ClusterClient::Connect(options);
  REQUIRE_FALSE(client.ok());
  CHECK(client.status().code() == absl::StatusCode::kUnavailable);
  CHECK(client.status().message().find("127.0.0.1:1") !=
        absl::string_view::npos);
}

Command On(std::vector<std::string> args) {
  Command command;
  command.slot = KeySlot(args[1]);
  command.args = std::move(args);
  return command;
}

// One command to a single node, outside the client.
Reply Admin(const std::string& node, std::vector<std::string> args) {
  const size_t colon = node.rfind(':');
  absl::StatusOr<std::unique_ptr<NodeConnection>> connection =
      NodeConnection::Open(node.substr(0, colon),
                           std::stoi(node.substr(colon + 1)), kMicrosPerSecond,
                           5 * kMicrosPerSecond);
  REQUIRE(connection.ok());
  (*connection)->Append(absl::MakeConstSpan(args));
  absl::StatusOr<Reply> reply = (*connection)->Read();
  REQUIRE(reply.ok());
  INFO(args[0], " on ", node, ": ", reply->str);
  REQUIRE_FALSE(reply->is_error());
  return *reply;
}

// A slot being moved from the node that serves it to another seed node.
class SlotMigration {
 public:
  // Marks the slot IMPORTING on the target and MIGRATING on the source.
  SlotMigration(const std::vector<std::string>& seeds,
                const std::string& source, uint16_t slot)
      : seeds_(seeds), source_(source), slot_text_(absl::StrCat(slot)) {
    for (const std::string& node : seeds) {
      if (node != source) target_ = node;
    }
    REQUIRE_FALSE(target_.empty());
    const std::string source_id = Admin(source_, {"CLUSTER", "MYID"}).str;
    target_id_ = Admin(target_, {"CLUSTER", "MYID"}).str;
    Admin(target_, {"CLUSTER", "SETSLOT", slot_text_, "IMPORTING", source_id});
    Admin(source_, {"CLUSTER", "SETSLOT", slot_text_, "MIGRATING", target_id_});
  }

  const std::string& target() const { return target_; }

  // Moves `key` from the source to the target.
  void MoveKey(const std::string& key) const {
    const size_t colon = target_.rfind(':');
    Admin(source_, {"MIGRATE", target_.substr(0, colon),
                    target_.substr(colon + 1), "", "0", "5000", "KEYS", key});
  }

  // Hands the slot over to the target on every node.
  void Finish() const {
    for (const std::string& node : seeds_) {
      Admin(node, {"CLUSTER", "SETSLOT", slot_text_, "NODE", target_id_});
    }
  }

 private:
  const std::vector<std::string> seeds_;
  const std::string source_;
  const std::string slot_text_;
  std::string target_;
  std::string target_id_;
};

TEST_CASE("routing, pipelining, scripts and redirections on a live cluster") {
  testing::PrivateRedisCluster cluster("client");
  RedisClusterOptions options;
  options.seed_nodes = {cluster.seeds().front()};
  // Small, so a call is several rounds of pipelines per node.
  options.pipeline_depth = 7;
  absl::StatusOr<std::unique_ptr<ClusterClient>> connected =
      ClusterClient::Connect(options);
  REQUIRE(connected.ok());
  ClusterClient& client = **connected;

  SUBCASE("replies come back in call order from every node") {
    std::vector<Command> writes;
    std::vector<Command> reads;
    for (int i = 0; i < 300; ++i) {
      writes.push_back(On({"SET", absl::StrCat("k", i), absl::StrCat(i)}));
      reads.push_back(On({"GET", absl::StrCat("k", i)}));
    }
    // Error replies are answers, not failures of the call.
    reads.push_back(On({"INCR", "k7x"}));
    reads.push_back(On({"HGET", "k7", "field"}));
    REQUIRE(client.Run(std::move(writes)).ok());
    absl::StatusOr<std::vector<Reply>> replies = client.Run(std::move(reads));
    REQUIRE(replies.ok());
    REQUIRE(replies->size() == 302);
    for (int i = 0; i < 300; ++i) CHECK((*replies)[i].str == absl::StrCat(i));
    CHECK((*replies)[300].type == Reply::Type::kInteger);
    CHECK((*replies)[301].is_error());
    CHECK((*replies)[301].str.find("WRONGTYPE") != std::string::npos);
  }

  SUBCASE("a script a node lost is loaded again") {
    absl::StatusOr<Script> script =
        client.LoadScript("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    REQUIRE(script.ok());
    absl::StatusOr<Reply> first =
        client.RunOne(ClusterClient::ScriptCommand(*script, "counter", {"5"}));
    REQUIRE(first.ok());
    CHECK(first->integer == 5);
    for (const std::string& node : cluster.seeds()) {
      Admin(node, {"SCRIPT", "FLUSH"});
    }
    absl::StatusOr<Reply> second =
        client.RunOne(ClusterClient::ScriptCommand(*script, "counter", {"2"}));
    REQUIRE(second.ok());
    CHECK(second->integer == 7);
  }

  SUBCASE("commands of one order run in the order given, or fail") {
    absl::StatusOr<Script> push =
        client.LoadScript("return redis.call('RPUSH', KEYS[1], ARGV[1])");
    REQUIRE(push.ok());
    const auto pushed = [&client](const std::string& key) {
      absl::StatusOr<Reply> list =
          client.RunOne(On({"LRANGE", key, "0", "-1"}));
      REQUIRE(list.ok());
      std::vector<std::string> values;
      for (const Reply& value : list->elements) values.push_back(value.str);
      return values;
    };
    const auto flush_scripts = [&cluster] {
      for (const std::string& node : cluster.seeds()) {
        Admin(node, {"SCRIPT", "FLUSH"});
      }
    };

    // Every node lost the script: every push is refused, and each order's
    // pushes are sent again in their order, over several pipelines.
    flush_scripts();
    std::vector<Command> commands;
    for (int i = 0; i < 30; ++i) {
      commands.push_back(ClusterClient::ScriptCommand(
          *push, absl::StrCat("{order", i % 3, "}list"), {absl::StrCat(i)},
          /*idempotent=*/false));
      commands.back().order = i % 3;
    }
    std::vector<absl::StatusOr<Reply>> replies =
        client.RunEach(std::move(commands));
    REQUIRE(replies.size() == 30);
    for (int i = 0; i < 30; ++i) {
      CAPTURE(i);
      REQUIRE_MESSAGE(replies[i].ok(), replies[i].status());
      CHECK(replies[i]->integer == i / 3 + 1);
    }
    CHECK(pushed("{order1}list") ==
          std::vector<std::string>{"1", "4", "7", "10", "13", "16", "19", "22",
                                   "25", "28"});

    // The node refuses the scripted push but runs the plain one behind it.
    // Sending the refused push again would run it second: with an order it
    // fails instead, alone under RunEach, for the whole call under Run.
    const auto race = [&](const std::string& key,
                          std::optional<uint64_t> order) {
      std::vector<Command> sent;
      sent.push_back(ClusterClient::ScriptCommand(*push, key, {"first"},
                                                  /*idempotent=*/false));
      sent.push_back(On({"RPUSH", key, "second"}));
      for (Command& command : sent) command.order = order;
      sent.push_back(On({"SET", "unordered", "ok"}));
      return sent;
    };
    flush_scripts();
    replies = client.RunEach(race("{ordered}list", 7));
    REQUIRE(replies.size() == 3);
    REQUIRE_FALSE(replies[0].ok());
    CHECK(replies[0].status().code() == absl::StatusCode::kUnavailable);
    CHECK_MESSAGE(
        replies[0].status().message().find("NOSCRIPT") != std::string::npos,
        replies[0].status());
    CHECK_MESSAGE(
        replies[0].status().message().find(
            "a later command of its order has run") != std::string::npos,
        replies[0].status());
    REQUIRE(replies[1].ok());
    CHECK(replies[1]->integer == 1);
    REQUIRE(replies[2].ok());
    CHECK(replies[2]->str == "OK");
    CHECK(pushed("{ordered}list") == std::vector<std::string>{"second"});
    absl::StatusOr<std::vector<Reply>> all =
        client.Run(race("{ordered}list", 7));
    REQUIRE_FALSE(all.ok());
    CHECK(all.status() == replies[0].status());
    CHECK(pushed("{ordered}list") ==
          std::vector<std::string>{"second", "second"});
    // Without an order the refused push is sent again, and runs second.
    replies = client.RunEach(race("{unordered}list", std::nullopt));
    for (const absl::StatusOr<Reply>& reply : replies) {
      CHECK_MESSAGE(reply.ok(), reply.status());
    }
    CHECK(pushed("{unordered}list") ==
          std::vector<std::string>{"second", "first"});
  }

  SUBCASE("IncrementMany through a migrating slot and lost scripts") {
    absl::StatusOr<std::unique_ptr<Leaderboard>> created =
        CreateRedisClusterLeaderboard(
            options, "moving",
            {.partitions = 1, .tie_break = TieBreak::kLowerMemberFirst});
    REQUIRE_MESSAGE(created.ok(), created.status());
    Leaderboard& board = **created;
    // Each member three times: its results are running sums only if its
    // elements run in the order given.
    const std::vector<ScoreIncrement> batch = {{1, 5},  {2, 1}, {1, 5},
                                               {3, -2}, {2, 1}, {1, -1},
                                               {3, -2}, {2, 1}, {3, 10}};
    std::map<MemberId, int64_t> scores;
    const auto apply_batch = [&] {
      const std::vector<absl::StatusOr<int64_t>> results =
          board.IncrementMany(batch);
      REQUIRE(results.size() == batch.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        CAPTURE(i);
        REQUIRE_MESSAGE(results[i].ok(), results[i].status());
        scores[batch[i].member] += batch[i].delta;
        CHECK(*results[i] == scores[batch[i].member]);
      }
    };
    apply_batch();

    const std::string key =
        MakeLeaderboardKeys(options.key_prefix, "moving", 1).partitions[0];
    const uint16_t slot = KeySlot(key);
    const SlotMigration migration(cluster.seeds(), client.NodeOf(slot), slot);
    migration.MoveKey(key);
    // The source answers ASK, the target NOSCRIPT to the first attempt.
    for (const std::string& node : cluster.seeds()) {
      Admin(node, {"SCRIPT", "FLUSH"});
    }
    apply_batch();
    // The slot handed over: the source answers MOVED.
    migration.Finish();
    apply_batch();
    for (const auto& entry : scores) {
      const MemberId member = entry.first;
      CAPTURE(member);
      CHECK(board.Score(member).value() == entry.second);
    }
    CHECK(board.Size().value() == 3);
  }

  SUBCASE("a slot migrating away: ASK during, MOVED after") {
    const std::string moving_key = "{migrating}stays";
    const std::string new_key = "{migrating}arrives";
    const uint16_t slot = KeySlot(moving_key);
    REQUIRE(client.RunOne(On({"SET", moving_key, "before"})).ok());
    const std::string source = client.NodeOf(slot);
    const SlotMigration migration(cluster.seeds(), source, slot);

    // A key the source does not hold: it answers ASK, and the client asks
    // the target (with ASKING) without changing its slot map.
    absl::StatusOr<Reply> asked = client.RunOne(On({"SET", new_key, "new"}));
    REQUIRE(asked.ok());
    CHECK(asked->str == "OK");
    CHECK(client.NodeOf(slot) == source);
    // A key still on the source is served there.
    absl::StatusOr<Reply> still = client.RunOne(On({"GET", moving_key}));
    REQUIRE(still.ok());
    CHECK(still->str == "before");

    // Move the key, then hand the slot over.
    migration.MoveKey(moving_key);
    absl::StatusOr<Reply> moved_key = client.RunOne(On({"GET", moving_key}));
    REQUIRE(moved_key.ok());
    CHECK(moved_key->str == "before");  // through ASK, from the target
    migration.Finish();
    // The client still routes the slot to the source, which now answers
    // MOVED: the client follows it and learns the new owner.
    absl::StatusOr<Reply> after = client.RunOne(On({"GET", new_key}));
    REQUIRE(after.ok());
    CHECK(after->str == "new");
    CHECK(client.NodeOf(slot) == migration.target());
  }
}

// How many times `node` ran WAIT since its statistics were last reset.
int64_t WaitCalls(const std::string& node) {
  const std::string stats = Admin(node, {"INFO", "commandstats"}).str;
  const std::string field = "cmdstat_wait:calls=";
  const size_t at = stats.find(field);
  if (at == std::string::npos) return 0;
  return std::stoll(stats.substr(at + field.size()));
}

int64_t WaitCallsOnAll(const std::vector<std::string>& nodes) {
  int64_t calls = 0;
  for (const std::string& node : nodes) calls += WaitCalls(node);
  return calls;
}

TEST_CASE("wait_replicas: WAIT behind writes only, Unavailable when short") {
  // No replicas: every WAIT for one times out with 0 acknowledgements.
  testing::PrivateRedisCluster cluster("wait");
  RedisClusterOptions options;
  options.seed_nodes = cluster.seeds();
  options.wait_replicas = 1;
  options.wait_timeout = 20 * kMicrosPerMillisecond;
  absl::StatusOr<std::unique_ptr<ClusterClient>> connected =
      ClusterClient::Connect(options);
  REQUIRE(connected.ok());
  ClusterClient& client = **connected;
  for (const std::string& node : cluster.seeds()) {
    Admin(node, {"CONFIG", "RESETSTAT"});
  }

  // Reads, plain or scripted, never wait.
  absl::StatusOr<Script> read_script =
      client.LoadScript("return redis.call('GET', KEYS[1])");
  REQUIRE(read_script.ok());
  Command scripted_read = ClusterClient::ScriptCommand(*read_script, "k", {});
  scripted_read.write = false;
  std::vector<Command> reads;
  reads.push_back(On({"GET", "k"}));
  reads.push_back(On({"ZRANGE", "z", "0", "-1"}));
  reads.push_back(std::move(scripted_read));
  REQUIRE(client.Run(std::move(reads)).ok());
  CHECK(WaitCallsOnAll(cluster.seeds()) == 0);

  // A write: applied on the master, then Unavailable naming the node.
  absl::StatusOr<Reply> written = client.RunOne(On({"SET", "k", "v"}));
  REQUIRE_FALSE(written.ok());
  CHECK(written.status().code() == absl::StatusCode::kUnavailable);
  const std::string message(written.status().message());
  CHECK_MESSAGE(message.find(client.NodeOf(KeySlot("k"))) != std::string::npos,
                message);
  CHECK_MESSAGE(
      message.find("reached only 0 of the 1 replicas") != std::string::npos,
      message);
  CHECK_MESSAGE(message.find("safe to retry") != std::string::npos, message);
  CHECK(WaitCallsOnAll(cluster.seeds()) == 1);
  CHECK(Admin(client.NodeOf(KeySlot("k")), {"GET", "k"}).str == "v");

  // Writes to every node in one call: one WAIT per node, not per write;
  // each write fails on its own under RunEach.
  std::vector<Command> writes;
  std::set<std::string> nodes;
  for (int i = 0; i < 60; ++i) {
    writes.push_back(On({"SET", absl::StrCat("w", i), "x"}));
    nodes.insert(client.NodeOf(writes.back().slot));
  }
  REQUIRE(nodes.size() == 3);
  const std::vector<absl::StatusOr<Reply>> each =
      client.RunEach(std::move(writes));
  for (const absl::StatusOr<Reply>& reply : each) {
    CHECK(reply.status().code() == absl::StatusCode::kUnavailable);
  }
  CHECK(WaitCallsOnAll(cluster.seeds()) == 1 + 3);

  // Without wait_replicas the same write succeeds and sends no WAIT.
  options.wait_replicas = 0;
  absl::StatusOr<std::unique_ptr<ClusterClient>> plain =
      ClusterClient::Connect(options);
  REQUIRE(plain.ok());
  REQUIRE((*plain)->RunOne(On({"SET", "k", "v2"})).ok());
  CHECK(WaitCallsOnAll(cluster.seeds()) == 1 + 3);
}

}  // namespace
}  // namespace feedcore::redis
