// A Redis Cluster client over blocking hiredis connections: routes each
// command to the node that serves its key's slot, pipelines the commands of
// one call per node, follows MOVED and ASK redirections, refreshes the slot
// map when the cluster changes, retries what can safely be retried without
// reordering commands that must run in order, and reloads Lua scripts on
// nodes that lost them.
//
// Thread safety: every method may be called from any number of threads at
// once. Lock order: `slots_mu_` and a node pool's mutex are never held
// together, and neither is held during network I/O except while the slot
// map is refreshed (`refresh_mu_`, outermost, serializes refreshes only).
#ifndef FEEDCORE_REDIS_CLUSTER_CLIENT_H_
#define FEEDCORE_REDIS_CLUSTER_CLIENT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/mutex.h"
#include "feedcore/redis_cluster.h"
#include "redis/key_slot.h"
#include "redis/node_connection.h"
#include "redis/reply.h"

namespace feedcore::redis {

// One command and the slot of the key(s) it touches.
struct Command {
  std::vector<std::string> args;
  uint16_t slot = 0;
  // True when running the command twice leaves the same state as running
  // it once. Only such commands are sent again after a failure that leaves
  // it unknown whether they ran (a lost connection, a timeout).
  bool idempotent = true;
  // Commands of one call with the same `order` (which must share a slot)
  // run in the order given, even when some are redirected or retried; see
  // Run. Unset: no order beyond Run's.
  std::optional<uint64_t> order = std::nullopt;
  // False for a command that changes nothing a caller relies on: a read,
  // or a read script that also drops expired entries (a later read drops
  // them again). Only writes are followed by WAIT
  // (RedisClusterOptions::wait_replicas). A command named like a Redis
  // read (GET, HGET, HMGET, ZRANGE, ZCARD, ZSCORE, ZCOUNT, ...) counts as
  // a read whatever this says, so plain reads need not set it; a script
  // that only reads must.
  bool write = true;
};

// A loaded Lua script: run it with ClusterClient::ScriptCommand.
struct Script {
  std::string sha;  // SHA1 of the body, as Redis names it
};

class ClusterClient {
 public:
  // Validates `options`, connects to the first seed node that answers and
  // reads the slot map. InvalidArgument for bad options; Unavailable when
  // no seed answers or some slot has no node.
  static absl::StatusOr<std::unique_ptr<ClusterClient>> Connect(
      const RedisClusterOptions& options);

  ~ClusterClient();
  ClusterClient(const ClusterClient&) = delete;
  ClusterClient& operator=(const ClusterClient&) = delete;

  // Runs every command and returns their replies in the same order.
  // Commands for the same node are sent in the order given, pipelined
  // `pipeline_depth` at a time; the nodes work at once. A command that is
  // redirected or retried is sent again after the others of its round, in
  // the order given. Redis error replies come back as replies
  // (Reply::is_error) except those the client handles itself: MOVED, ASK,
  // TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN, NOSCRIPT. Unavailable,
  // naming the node and the reason, when a command could not be run within
  // `max_attempts`; the other commands of the call may have run.
  //
  // Failover: a node that cannot be reached (refused, timed out, the
  // connection lost) costs an attempt, drops the idle connections kept to
  // it, and makes the client reread the slot map from the other known
  // nodes first (the unreachable ones last), so once the cluster has
  // promoted a replica the next attempt goes to it. While the cluster
  // decides (the node timeout, then the replica's election) the nodes
  // answer CLUSTERDOWN or stay unreachable, and each attempt waits the
  // backoff first: a call survives a failover when `max_attempts` with
  // its backoff (plus the timeouts of attempts at an unresponsive node)
  // outlasts it.
  //
  // With `wait_replicas` above 0, each round that sent writes to a node
  // sends WAIT behind them on the same connection (one per node and
  // round, whatever the number of writes); when fewer replicas acknowledge
  // than asked, the writes of that round on that node fail with
  // Unavailable (they were applied on the master) and are not sent again.
  //
  // Commands with the same `order` go out on one connection, each behind
  // the ones before it, so Redis runs them in the order given. A node that
  // refuses one of them (a redirection, NOSCRIPT, a cluster that is
  // reconfiguring) normally refuses those behind it too, and all are sent
  // again in order. Should a later one have run all the same (the node's
  // state changed between the two), the refused one is not sent again,
  // which would run it out of order: it fails with Unavailable instead.
  absl::StatusOr<std::vector<Reply>> Run(std::vector<Command> commands);
  absl::StatusOr<Reply> RunOne(Command command);

  // As Run, but a command that fails does not end the call: each command
  // gets its reply or its own error (the one Run would have returned for
  // it), and the others still run. For a command that is not idempotent,
  // every error other than "may or may not have been applied" and "was
  // applied on the master" (too few replicas acknowledged) means it did
  // not run.
  std::vector<absl::StatusOr<Reply>> RunEach(std::vector<Command> commands);

  // Loads `body` on every node (and again on any node that later answers
  // NOSCRIPT). Unavailable as Run; Internal if Redis rejects the script.
  absl::StatusOr<Script> LoadScript(const std::string& body);

  // EVALSHA of `script` with one key and `args`.
  static Command ScriptCommand(const Script& script, std::string key,
                               std::vector<std::string> args,
                               bool idempotent = true);
  // EVALSHA of `script` with several keys, which must share one slot (one
  // hash tag); the slot is the first key's.
  static Command ScriptCommand(const Script& script,
                               std::vector<std::string> keys,
                               std::vector<std::string> args,
                               bool idempotent = true);

  // EVALSHA calls of `script` over many keys, one call per slot: `keys`
  // holds groups of `keys_per_group` keys that share a slot (the first
  // decides it), and each call gets the groups of one slot, up to
  // `max_groups_per_call`, as its KEYS, with `args` as ARGV. A fan-out
  // thus pays the cost of a call once per slot instead of once per key.
  static std::vector<Command> ScriptCommandsBySlot(
      const Script& script, std::vector<std::string> keys,
      size_t keys_per_group, size_t max_groups_per_call,
      const std::vector<std::string>& args);

  // The node that serves `slot` now ("host:port"), or empty if none.
  std::string NodeOf(uint16_t slot) const;

  const RedisClusterOptions& options() const { return options_; }

 private:
  struct NodePool;
  struct Pending;

  explicit ClusterClient(RedisClusterOptions options);

  // Reads CLUSTER SLOTS from the first known node that answers and
  // replaces the slot map. Nodes in `unreachable` are asked last.
  absl::Status RefreshSlots(const std::set<std::string>& unreachable = {});
  // Closes the idle connections kept to `address` (after one of them, or a
  // new one, failed: the others are likely broken too).
  void DropIdle(const std::string& address);
  NodePool& PoolFor(const std::string& address);
  absl::StatusOr<std::unique_ptr<NodeConnection>> Acquire(
      const std::string& address);
  void Release(std::unique_ptr<NodeConnection> connection);
  // Runs the rounds of one call until every command is done or has failed
  // for good (its Pending's `gave_up` and `error`); with `stop_at_failure`,
  // returns the first such failure at once instead.
  absl::Status RunRounds(std::vector<Pending>& pendings, bool stop_at_failure);
  // Runs one round: at most pipeline_depth commands per node at a time.
  // Adds the nodes that could not be reached to `unreachable`.
  void RunRound(std::vector<Pending*>& round,
                std::set<std::string>& unreachable);
  // Reads the reply to the WAIT sent behind `writes` on `connection` (null:
  // it could not be sent) and fails those of them that ran when too few
  // replicas acknowledged, or when it is unknown how many did.
  void CheckReplicas(NodeConnection* connection, const std::string& node,
                     const std::vector<Pending*>& writes);
  std::vector<std::string> KnownNodes() const;
  std::string ScriptBody(const std::string& sha) const;

  const RedisClusterOptions options_;

  std::mutex refresh_mu_;  // serializes RefreshSlots; outermost

  mutable internal::SharedMutex slots_mu_;
  // slot -> index in nodes_, or -1 when no node serves it.
  std::array<int16_t, kSlotCount> slot_node_ ABSL_GUARDED_BY(slots_mu_);
  std::vector<std::string> nodes_ ABSL_GUARDED_BY(slots_mu_);

  mutable internal::SharedMutex pools_mu_;
  std::map<std::string, std::unique_ptr<NodePool>> pools_
      ABSL_GUARDED_BY(pools_mu_);

  mutable internal::SharedMutex scripts_mu_;
  std::map<std::string, std::string> scripts_ ABSL_GUARDED_BY(scripts_mu_);
};

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_CLUSTER_CLIENT_H_
