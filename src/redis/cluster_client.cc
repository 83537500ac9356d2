#include "redis/cluster_client.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace feedcore::redis {
namespace {

// A command redirected more often than this is reported instead of being
// chased forever (a slot migrating back and forth, a misconfigured
// cluster).
constexpr size_t kMaxRedirects = 16;

constexpr Micros kMaxTimeout = 10 * kMicrosPerMinute;

constexpr size_t kMaxWaitReplicas = 64;

struct HostPort {
  std::string host;
  int port = 0;
};

absl::StatusOr<HostPort> ParseAddress(absl::string_view address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 1 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("redis node address '", address,
                     "' is not host:port with a port in 1..65535"));
  }
  return HostPort{std::string(address.substr(0, colon)), port};
}

absl::Status ValidateOptions(const RedisClusterOptions& options) {
  if (options.seed_nodes.empty()) {
    return absl::InvalidArgumentError(
        "RedisClusterOptions::seed_nodes is empty: name at least one node");
  }
  for (const std::string& seed : options.seed_nodes) {
    absl::StatusOr<HostPort> parsed = ParseAddress(seed);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RedisClusterOptions::seed_nodes: ", parsed.status().message()));
    }
  }
  if (options.key_prefix.empty() || options.key_prefix.size() > 64 ||
      options.key_prefix.find_first_of("{}") != std::string::npos) {
    return absl::InvalidArgumentError(
        "RedisClusterOptions::key_prefix must be 1..64 bytes without '{' or "
        "'}'");
  }
  auto check_duration = [](Micros value, Micros low, absl::string_view name) {
    if (value < low || value > kMaxTimeout) {
      return absl::InvalidArgumentError(
          absl::StrCat("RedisClusterOptions::", name, " is ", value,
                       " us; it must be in ", low, "..", kMaxTimeout, " us"));
    }
    return absl::OkStatus();
  };
  if (absl::Status s = check_duration(options.connect_timeout,
                                      kMicrosPerMillisecond, "connect_timeout");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = check_duration(options.command_timeout,
                                      kMicrosPerMillisecond, "command_timeout");
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          check_duration(options.retry_backoff, 0, "retry_backoff");
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          check_duration(options.max_retry_backoff, 0, "max_retry_backoff");
      !s.ok()) {
    return s;
  }
  if (options.max_retry_backoff < options.retry_backoff) {
    return absl::InvalidArgumentError(
        "RedisClusterOptions::max_retry_backoff is below retry_backoff");
  }
  if (options.connections_per_node < 1 || options.connections_per_node > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("RedisClusterOptions::connections_per_node is ",
                     options.connections_per_node, "; it must be 1..1024"));
  }
  if (options.max_attempts < 1 || options.max_attempts > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat("RedisClusterOptions::max_attempts is ",
                     options.max_attempts, "; it must be 1..100"));
  }
  if (options.pipeline_depth < 1 || options.pipeline_depth > 100'000) {
    return absl::InvalidArgumentError(
        absl::StrCat("RedisClusterOptions::pipeline_depth is ",
                     options.pipeline_depth, "; it must be 1..100000"));
  }
  if (options.wait_replicas > kMaxWaitReplicas) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RedisClusterOptions::wait_replicas is ", options.wait_replicas,
        "; it must be 0..", kMaxWaitReplicas));
  }
  if (options.wait_replicas > 0 &&
      (options.wait_timeout < kMicrosPerMillisecond ||
       options.wait_timeout >= options.command_timeout)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RedisClusterOptions::wait_timeout is ", options.wait_timeout,
        " us; with wait_replicas above 0 it must be at least ",
        kMicrosPerMillisecond, " us and below command_timeout (",
        options.command_timeout, " us), which bounds the wait for its reply"));
  }
  return absl::OkStatus();
}

// WAIT's timeout in milliseconds: rounded up, never 0 (forever).
int64_t WaitMillis(const RedisClusterOptions& options) {
  return (options.wait_timeout + kMicrosPerMillisecond - 1) /
         kMicrosPerMillisecond;
}

// Redis reads, by name: never followed by WAIT.
constexpr absl::string_view kReadCommands[] = {"EVALSHA_RO",
                                               "EXISTS",
                                               "GET",
                                               "HEXISTS",
                                               "HGET",
                                               "HGETALL",
                                               "HLEN",
                                               "HMGET",
                                               "MGET",
                                               "PTTL",
                                               "SCARD",
                                               "SISMEMBER",
                                               "SMEMBERS",
                                               "TTL",
                                               "TYPE",
                                               "ZCARD",
                                               "ZCOUNT",
                                               "ZLEXCOUNT",
                                               "ZMSCORE",
                                               "ZRANGE",
                                               "ZRANGEBYLEX",
                                               "ZRANGEBYSCORE",
                                               "ZRANK",
                                               "ZREVRANGE",
                                               "ZREVRANGEBYLEX",
                                               "ZREVRANGEBYSCORE",
                                               "ZREVRANK",
                                               "ZSCORE"};

bool IsReadCommand(absl::string_view name) {
  for (absl::string_view read : kReadCommands) {
    if (absl::EqualsIgnoreCase(name, read)) return true;
  }
  return false;
}

bool IsWrite(const Command& command) {
  return command.write && !command.args.empty() &&
         !IsReadCommand(command.args.front());
}

// The first word of an error reply, which Redis uses as its code.
absl::string_view ErrorCode(const Reply& reply) {
  absl::string_view text = reply.str;
  return text.substr(0, text.find(' '));
}

// "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381": the target.
std::string RedirectTarget(const Reply& reply) {
  std::vector<absl::string_view> parts = absl::StrSplit(reply.str, ' ');
  return parts.size() == 3 ? std::string(parts[2]) : std::string();
}

}  // namespace

struct ClusterClient::NodePool {
  HostPort address;
  internal::SharedMutex mu;
  std::vector<std::unique_ptr<NodeConnection>> idle ABSL_GUARDED_BY(mu);
};

struct ClusterClient::Pending {
  Command* command = nullptr;
  Reply* reply = nullptr;
  std::string node;      // where the next attempt goes
  bool asking = false;   // send ASKING first (an ASK redirection)
  size_t attempts = 0;   // failed attempts
  size_t redirects = 0;  // MOVED, ASK and NOSCRIPT resends
  bool done = false;
  bool held = false;  // kept back this round behind its order's earlier ones
  bool failed_this_round = false;
  bool gave_up = false;          // cannot be retried: `error` is final
  std::string reload_script_on;  // NOSCRIPT: the node to load it on
  absl::Status error;
};

ClusterClient::ClusterClient(RedisClusterOptions options)
    : options_(std::move(options)) {
  internal::WriterLock lock(&slots_mu_);
  slot_node_.fill(-1);
}

ClusterClient::~ClusterClient() = default;

absl::StatusOr<std::unique_ptr<ClusterClient>> ClusterClient::Connect(
    const RedisClusterOptions& options) {
  if (absl::Status status = ValidateOptions(options); !status.ok()) {
    return status;
  }
  std::unique_ptr<ClusterClient> client(new ClusterClient(options));
  if (absl::Status status = client->RefreshSlots(); !status.ok()) {
    return status;
  }
  internal::ReaderLock lock(&client->slots_mu_);
  for (uint16_t slot = 0; slot < kSlotCount; ++slot) {
    if (client->slot_node_[slot] < 0) {
      return absl::UnavailableError(
          absl::StrCat("the redis cluster does not serve slot ", slot,
                       " (not every slot is assigned to a node; is the cluster "
                       "created?)"));
    }
  }
  return client;
}

std::vector<std::string> ClusterClient::KnownNodes() const {
  std::vector<std::string> nodes;
  {
    internal::ReaderLock lock(&slots_mu_);
    nodes = nodes_;
  }
  for (const std::string& seed : options_.seed_nodes) {
    if (std::find(nodes.begin(), nodes.end(), seed) == nodes.end()) {
      nodes.push_back(seed);
    }
  }
  return nodes;
}

absl::Status ClusterClient::RefreshSlots(
    const std::set<std::string>& unreachable) {
  std::lock_guard refresh_lock(refresh_mu_);
  absl::Status last_error =
      absl::UnavailableError("no redis cluster node is known");
  // A node that just failed is most likely still down (a crashed master
  // before its replica takes over): ask the others first, so a refresh
  // neither waits on it nor reads its stale map when another answers.
  std::vector<std::string> candidates = KnownNodes();
  std::stable_partition(
      candidates.begin(), candidates.end(),
      [&](const std::string& node) { return !unreachable.contains(node); });
  for (const std::string& candidate : candidates) {
    absl::StatusOr<std::unique_ptr<NodeConnection>> connection =
        Acquire(candidate);
    if (!connection.ok()) {
      last_error = connection.status();
      continue;
    }
    const std::string slots_command[] = {"CLUSTER", "SLOTS"};
    (*connection)->Append(absl::MakeConstSpan(slots_command));
    absl::StatusOr<Reply> reply = (*connection)->Read();
    Release(std::move(*connection));
    if (!reply.ok()) {
      DropIdle(candidate);
      last_error = reply.status();
      continue;
    }
    if (reply->type != Reply::Type::kArray) {
      last_error = absl::UnavailableError(absl::StrCat(
          "redis node ", candidate,
          " did not answer CLUSTER SLOTS with a "
          "slot map",
          reply->is_error() ? absl::StrCat(": ", reply->str) : std::string()));
      continue;
    }
    const std::string candidate_host =
        ParseAddress(candidate).value_or(HostPort{}).host;
    std::array<int16_t, kSlotCount> slot_node;
    slot_node.fill(-1);
    std::vector<std::string> nodes;
    for (const Reply& range : reply->elements) {
      if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) {
        continue;
      }
      const int64_t first = range.elements[0].integer;
      const int64_t last = range.elements[1].integer;
      const Reply& master = range.elements[2];
      std::string host = master.elements[0].str;
      if (host.empty() || host == "?") host = candidate_host;
      std::string address = absl::StrCat(host, ":", master.elements[1].integer);
      auto found = std::find(nodes.begin(), nodes.end(), address);
      const int16_t index = static_cast<int16_t>(found - nodes.begin());
      if (found == nodes.end()) nodes.push_back(address);
      for (int64_t slot = std::max<int64_t>(first, 0);
           slot <= std::min<int64_t>(last, kSlotCount - 1); ++slot) {
        slot_node[slot] = index;
      }
    }
    internal::WriterLock lock(&slots_mu_);
    slot_node_ = slot_node;
    nodes_ = std::move(nodes);
    return absl::OkStatus();
  }
  return absl::UnavailableError(
      absl::StrCat("no redis cluster node answers: ", last_error.message()));
}

std::string ClusterClient::NodeOf(uint16_t slot) const {
  internal::ReaderLock lock(&slots_mu_);
  const int16_t index = slot_node_[slot % kSlotCount];
  return index < 0 ? std::string() : nodes_[index];
}

ClusterClient::NodePool& ClusterClient::PoolFor(const std::string& address) {
  internal::WriterLock lock(&pools_mu_);
  std::unique_ptr<NodePool>& pool = pools_[address];
  if (pool == nullptr) {
    pool = std::make_unique<NodePool>();
    pool->address = ParseAddress(address).value_or(HostPort{});
  }
  return *pool;
}

absl::StatusOr<std::unique_ptr<NodeConnection>> ClusterClient::Acquire(
    const std::string& address) {
  NodePool& pool = PoolFor(address);
  {
    internal::WriterLock lock(&pool.mu);
    if (!pool.idle.empty()) {
      std::unique_ptr<NodeConnection> connection = std::move(pool.idle.back());
      pool.idle.pop_back();
      return connection;
    }
  }
  if (pool.address.port == 0) {
    return absl::UnavailableError(
        absl::StrCat("redis node address '", address, "' is not host:port"));
  }
  return NodeConnection::Open(pool.address.host, pool.address.port,
                              options_.connect_timeout,
                              options_.command_timeout);
}

void ClusterClient::DropIdle(const std::string& address) {
  NodePool* pool = nullptr;
  {
    internal::ReaderLock lock(&pools_mu_);
    auto it = pools_.find(address);
    if (it == pools_.end()) return;
    pool = it->second.get();  // pools are never removed
  }
  // Before the lock: the connections close once it is released.
  std::vector<std::unique_ptr<NodeConnection>> dropped;
  internal::WriterLock lock(&pool->mu);
  dropped.swap(pool->idle);
}

void ClusterClient::Release(std::unique_ptr<NodeConnection> connection) {
  if (!connection->healthy()) return;
  NodePool& pool = PoolFor(connection->address());
  internal::WriterLock lock(&pool.mu);
  if (pool.idle.size() < options_.connections_per_node) {
    pool.idle.push_back(std::move(connection));
  }
}

std::string ClusterClient::ScriptBody(const std::string& sha) const {
  internal::ReaderLock lock(&scripts_mu_);
  auto it = scripts_.find(sha);
  return it == scripts_.end() ? std::string() : it->second;
}

void ClusterClient::RunRound(std::vector<Pending*>& round,
                             std::set<std::string>& unreachable) {
  // Group by node, keeping the order of the call within each node. A
  // command of an order goes out only right behind the earlier ones of its
  // order, on their connection: after an ASK they may be bound for
  // different nodes, which would run them in either order.
  std::map<std::string, std::vector<Pending*>> by_node;
  std::map<uint64_t, std::string> order_node;  // order -> its first's node
  std::set<uint64_t> order_held;
  for (Pending* pending : round) {
    if (!pending->asking) {
      pending->node = NodeOf(pending->command->slot);
    }
    if (pending->command->order.has_value()) {
      const uint64_t order = *pending->command->order;
      const auto [first, inserted] = order_node.emplace(order, pending->node);
      if (!inserted &&
          (order_held.contains(order) || first->second != pending->node)) {
        order_held.insert(order);
        pending->held = true;
        continue;
      }
    }
    if (pending->node.empty()) {
      pending->failed_this_round = true;
      pending->error = absl::UnavailableError(absl::StrCat(
          "no redis cluster node serves slot ", pending->command->slot));
      continue;
    }
    by_node[pending->node].push_back(pending);
  }

  struct NodeBatch {
    std::string node;
    std::vector<Pending*>* commands;
    size_t next = 0;  // first command not yet sent
    std::unique_ptr<NodeConnection> connection;
    // The writes of the batch, when WAIT follows its last chunk.
    std::vector<Pending*> writes;
    bool wait_sent = false;
    bool wait_read = false;
  };
  std::vector<NodeBatch> batches;
  for (auto& [node, commands] : by_node) {
    batches.push_back(NodeBatch{node, &commands, 0, nullptr, {}, false, false});
    if (options_.wait_replicas == 0) continue;
    for (Pending* pending : commands) {
      if (IsWrite(*pending->command)) batches.back().writes.push_back(pending);
    }
  }
  const std::string wait[] = {"WAIT", absl::StrCat(options_.wait_replicas),
                              absl::StrCat(WaitMillis(options_))};

  const std::string asking[] = {"ASKING"};
  bool more = true;
  while (more) {
    more = false;
    // Send one chunk to every node before reading any reply, so the nodes
    // work at the same time.
    std::vector<std::pair<size_t, size_t>> sent(batches.size(), {0, 0});
    for (size_t b = 0; b < batches.size(); ++b) {
      NodeBatch& batch = batches[b];
      const size_t begin = batch.next;
      const size_t end =
          std::min(batch.commands->size(), begin + options_.pipeline_depth);
      if (begin == end) continue;
      batch.next = end;
      sent[b] = {begin, end};
      if (batch.connection == nullptr) {
        absl::StatusOr<std::unique_ptr<NodeConnection>> connection =
            Acquire(batch.node);
        if (!connection.ok()) {
          unreachable.insert(batch.node);
          DropIdle(batch.node);
          // Nothing was sent: every command may be tried again.
          for (size_t i = begin; i < batch.commands->size(); ++i) {
            (*batch.commands)[i]->failed_this_round = true;
            (*batch.commands)[i]->error = connection.status();
          }
          batch.next = batch.commands->size();
          sent[b] = {0, 0};
          continue;
        }
        batch.connection = std::move(*connection);
      } else if (!batch.connection->healthy()) {
        // An earlier chunk broke the connection; this one was never sent.
        for (size_t i = begin; i < batch.commands->size(); ++i) {
          (*batch.commands)[i]->failed_this_round = true;
          (*batch.commands)[i]->error = absl::UnavailableError(
              absl::StrCat("redis node ", batch.node, ": connection lost"));
        }
        batch.next = batch.commands->size();
        sent[b] = {0, 0};
        continue;
      }
      for (size_t i = begin; i < end; ++i) {
        Pending* pending = (*batch.commands)[i];
        if (pending->asking)
          batch.connection->Append(absl::MakeConstSpan(asking));
        batch.connection->Append(absl::MakeConstSpan(pending->command->args));
      }
      if (end == batch.commands->size() && !batch.writes.empty()) {
        // Behind every write of the batch on this connection: WAIT covers
        // all the writes the connection made so far.
        batch.connection->Append(absl::MakeConstSpan(wait));
        batch.wait_sent = true;
      }
      // A failed send breaks the connection; the read loop then reports it
      // for each command of the chunk.
      (void)batch.connection->Send();
    }
    for (size_t b = 0; b < batches.size(); ++b) {
      NodeBatch& batch = batches[b];
      const auto [begin, end] = sent[b];
      if (begin == end) continue;
      if (batch.next < batch.commands->size()) more = true;
      for (size_t i = begin; i < end; ++i) {
        Pending* pending = (*batch.commands)[i];
        const bool was_asking = pending->asking;
        pending->asking = false;
        absl::StatusOr<Reply> reply = batch.connection->Read();
        if (was_asking && reply.ok()) reply = batch.connection->Read();
        if (!reply.ok()) {
          unreachable.insert(batch.node);
          // It is unknown whether the command ran.
          pending->failed_this_round = true;
          pending->error = reply.status();
          if (!pending->command->idempotent) {
            pending->gave_up = true;
            pending->error = absl::UnavailableError(
                absl::StrCat(reply.status().message(),
                             "; the command may or may not have been applied"));
          }
          continue;
        }
        if (!reply->is_error()) {
          *pending->reply = std::move(*reply);
          pending->done = true;
          continue;
        }
        const absl::string_view code = ErrorCode(*reply);
        // Kept for the order rule of Run, should the command not be sent
        // again.
        pending->error = absl::UnavailableError(
            absl::StrCat("redis node ", batch.node, ": ", reply->str));
        if (code == "MOVED" || code == "ASK") {
          ++pending->redirects;
          pending->node = RedirectTarget(*reply);
          pending->asking = code == "ASK";
          if (code == "MOVED") {
            // The slot map is stale: use the new owner at once, and have
            // the caller reread the whole map after this round.
            internal::WriterLock lock(&slots_mu_);
            auto found = std::find(nodes_.begin(), nodes_.end(), pending->node);
            if (found == nodes_.end()) {
              nodes_.push_back(pending->node);
              found = nodes_.end() - 1;
            }
            slot_node_[pending->command->slot] =
                static_cast<int16_t>(found - nodes_.begin());
          }
        } else if (code == "NOSCRIPT") {
          ++pending->redirects;
          pending->reload_script_on = batch.node;
        } else if (code == "TRYAGAIN" || code == "CLUSTERDOWN" ||
                   code == "LOADING" || code == "MASTERDOWN") {
          // Refused before running: safe to retry, idempotent or not.
          pending->failed_this_round = true;
        } else {
          *pending->reply = std::move(*reply);
          pending->done = true;
        }
      }
      if (end == batch.commands->size() && batch.wait_sent) {
        CheckReplicas(batch.connection.get(), batch.node, batch.writes);
        batch.wait_read = true;
      }
    }
  }
  for (NodeBatch& batch : batches) {
    // The connection broke before WAIT went out: the writes of earlier
    // chunks that ran are unconfirmed.
    if (!batch.writes.empty() && !batch.wait_read) {
      CheckReplicas(nullptr, batch.node, batch.writes);
    }
    if (batch.connection == nullptr) continue;
    if (!batch.connection->healthy()) DropIdle(batch.node);
    Release(std::move(batch.connection));
  }
}

void ClusterClient::CheckReplicas(NodeConnection* connection,
                                  const std::string& node,
                                  const std::vector<Pending*>& writes) {
  absl::StatusOr<Reply> reply =
      connection != nullptr
          ? connection->Read()
          : absl::UnavailableError("the connection broke before it was sent");
  std::string shortfall;
  if (!reply.ok()) {
    shortfall = absl::StrCat(
        "it is unknown how many of the ", options_.wait_replicas,
        " replicas asked for acknowledged it (WAIT: ", reply.status().message(),
        ")");
  } else if (reply->type != Reply::Type::kInteger) {
    shortfall = absl::StrCat("WAIT failed: ", reply->str);
  } else if (reply->integer < 0 ||
             static_cast<size_t>(reply->integer) < options_.wait_replicas) {
    shortfall = absl::StrCat(
        "it reached only ", reply->integer, " of the ", options_.wait_replicas,
        " replicas asked for (RedisClusterOptions::wait_replicas) within ",
        WaitMillis(options_), " ms, so a failover of the node may lose it");
  }
  if (shortfall.empty()) return;
  for (Pending* pending : writes) {
    // Only the writes that ran: a refused one (redirected, CLUSTERDOWN)
    // is sent again as usual.
    if (!pending->done) continue;
    pending->done = false;
    pending->gave_up = true;
    pending->error = absl::UnavailableError(absl::StrCat(
        "redis node ", node, ": the write was applied on the master, but ",
        shortfall,
        pending->command->idempotent ? "; it is safe to retry"
                                     : "; retrying it would apply it again"));
  }
}

absl::Status ClusterClient::RunRounds(std::vector<Pending>& pendings,
                                      bool stop_at_failure) {
  std::vector<Pending*> outstanding;
  outstanding.reserve(pendings.size());
  for (Pending& pending : pendings) outstanding.push_back(&pending);
  Micros backoff = options_.retry_backoff;
  while (!outstanding.empty()) {
    std::set<std::string> unreachable;
    RunRound(outstanding, unreachable);
    // The order rule (see Run): walking back from the end, a command that
    // did not run while a later one of its order ran, or may have, fails.
    std::set<uint64_t> ran_later;
    for (auto it = outstanding.rbegin(); it != outstanding.rend(); ++it) {
      Pending* pending = *it;
      const std::optional<uint64_t>& order = pending->command->order;
      if (!order.has_value()) continue;
      if (pending->done || pending->gave_up) {
        ran_later.insert(*order);
      } else if (ran_later.contains(*order)) {
        pending->gave_up = true;
        pending->error = absl::UnavailableError(
            absl::StrCat(pending->error.message(),
                         "; not sent again: a later command of its order has "
                         "run, and this one must not run after it"));
      }
    }
    std::vector<Pending*> again;
    bool failures = false;
    bool redirected = false;
    std::set<std::pair<std::string, std::string>> reloads;
    for (Pending* pending : outstanding) {
      if (pending->done) continue;
      if (pending->held) {
        pending->held = false;
        again.push_back(pending);
        continue;
      }
      absl::Status failure;
      if (pending->gave_up) {
        failure = pending->error;
      } else if (pending->failed_this_round) {
        pending->failed_this_round = false;
        failures = true;
        if (++pending->attempts >= options_.max_attempts) {
          failure = absl::UnavailableError(
              absl::StrCat(pending->error.message(), " (after ",
                           pending->attempts, " attempts)"));
        }
      } else {
        redirected = true;
        if (pending->redirects > kMaxRedirects) {
          failure = absl::UnavailableError(absl::StrCat(
              "redis cluster: slot ", pending->command->slot,
              " was redirected more than ", kMaxRedirects, " times"));
        }
      }
      if (!failure.ok()) {
        if (stop_at_failure) return failure;
        pending->gave_up = true;
        pending->error = std::move(failure);
        continue;
      }
      if (!pending->reload_script_on.empty()) {
        reloads.emplace(pending->reload_script_on, pending->command->args[1]);
        pending->reload_script_on.clear();
      }
      again.push_back(pending);
    }
    for (const auto& [node, sha] : reloads) {
      const std::string body = ScriptBody(sha);
      absl::StatusOr<std::unique_ptr<NodeConnection>> connection =
          Acquire(node);
      if (!connection.ok() || body.empty()) continue;
      const std::string load[] = {"SCRIPT", "LOAD", body};
      (*connection)->Append(absl::MakeConstSpan(load));
      (void)(*connection)->Read();
      Release(std::move(*connection));
    }
    if (failures || redirected) {
      // A failed node or a redirection means the map may be stale. A
      // refresh that fails leaves the old map: the next round fails again
      // and counts an attempt.
      (void)RefreshSlots(unreachable);
    }
    if (failures && backoff > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(backoff));
      backoff = std::min(options_.max_retry_backoff, backoff * 2);
    }
    outstanding = std::move(again);
  }
  return absl::OkStatus();
}

namespace {

// One Pending per command, each pointing at the command and its reply.
template <typename Pending>
std::vector<Pending> PendingsFor(std::vector<Command>& commands,
                                 std::vector<Reply>& replies) {
  std::vector<Pending> pendings(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    pendings[i].command = &commands[i];
    pendings[i].reply = &replies[i];
  }
  return pendings;
}

}  // namespace

absl::StatusOr<std::vector<Reply>> ClusterClient::Run(
    std::vector<Command> commands) {
  std::vector<Reply> replies(commands.size());
  std::vector<Pending> pendings = PendingsFor<Pending>(commands, replies);
  if (absl::Status status = RunRounds(pendings, /*stop_at_failure=*/true);
      !status.ok()) {
    return status;
  }
  return replies;
}

std::vector<absl::StatusOr<Reply>> ClusterClient::RunEach(
    std::vector<Command> commands) {
  std::vector<Reply> replies(commands.size());
  std::vector<Pending> pendings = PendingsFor<Pending>(commands, replies);
  (void)RunRounds(pendings, /*stop_at_failure=*/false);
  std::vector<absl::StatusOr<Reply>> results;
  results.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    if (pendings[i].done) {
      results.push_back(std::move(replies[i]));
    } else {
      results.push_back(pendings[i].error);
    }
  }
  return results;
}

absl::StatusOr<Reply> ClusterClient::RunOne(Command command) {
  std::vector<Command> commands;
  commands.push_back(std::move(command));
  absl::StatusOr<std::vector<Reply>> replies = Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  return std::move(replies->front());
}

absl::StatusOr<Script> ClusterClient::LoadScript(const std::string& body) {
  std::vector<std::string> nodes;
  {
    internal::ReaderLock lock(&slots_mu_);
    nodes = nodes_;
  }
  Script script;
  absl::Status last_error = absl::UnavailableError("no redis node is known");
  for (const std::string& node : nodes) {
    absl::StatusOr<std::unique_ptr<NodeConnection>> connection = Acquire(node);
    if (!connection.ok()) {
      last_error = connection.status();
      continue;
    }
    const std::string load[] = {"SCRIPT", "LOAD", body};
    (*connection)->Append(absl::MakeConstSpan(load));
    absl::StatusOr<Reply> reply = (*connection)->Read();
    Release(std::move(*connection));
    if (!reply.ok()) {
      last_error = reply.status();
      continue;
    }
    if (reply->type != Reply::Type::kString) {
      const absl::string_view code = ErrorCode(*reply);
      if (code == "LOADING" || code == "BUSY" || code == "MASTERDOWN") {
        // The node cannot take it now; it gets the script again on its
        // first NOSCRIPT.
        last_error = absl::UnavailableError(
            absl::StrCat("redis node ", node, ": ", reply->str));
        continue;
      }
      return absl::InternalError(absl::StrCat(
          "redis node ", node, " rejected a script: ", reply->str));
    }
    script.sha = reply->str;
  }
  if (script.sha.empty()) return last_error;
  internal::WriterLock lock(&scripts_mu_);
  scripts_[script.sha] = body;
  return script;
}

}  // namespace feedcore::redis
