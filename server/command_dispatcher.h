// CommandDispatcher: runs one parsed command against the feed engine and
// the leaderboards and writes its RESP reply. Independent of the network:
// the server feeds it what RespParser produced, tests and the fuzz target
// call it directly.
//
// Every command checks its name and arity here, then validates all of its
// arguments before calling the library, so a rejected command changes
// nothing and its reply says what was wrong ("ERR ...").
//
// Thread-safe: connections on different threads share one dispatcher.
#ifndef FEEDCORE_SERVER_COMMAND_DISPATCHER_H_
#define FEEDCORE_SERVER_COMMAND_DISPATCHER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/mutex.h"
#include "command_table.h"
#include "feedcore/feed_engine.h"
#include "leaderboard_store.h"
#include "server_config.h"
#include "server_stats.h"
#include "snapshot_saver.h"

namespace feedcore::server {

struct DispatcherOptions {
  // The password of AUTH and HELLO ... AUTH (Redis's requirepass). Empty:
  // every connection is authenticated from the start.
  std::string requirepass;
  // Most bytes the commands one client queues after MULTI may hold (their
  // arguments, plus a string's size for each). A command that would go
  // past it is refused and EXEC answers EXECABORT.
  size_t max_transaction_bytes = size_t{64} << 20;
  // The server's entity names (ServerData::names()); null: ids only.
  NameRegistry* names = nullptr;
  // The settings of CONFIG GET and SET (server_config.h), which must
  // outlive the dispatcher and then hold the password instead of
  // `requirepass`; null: the dispatcher keeps its own, of default options
  // and `requirepass`.
  ServerConfig* config = nullptr;
  // Publish/subscribe, which the engine's delivery hooks also feed
  // (pubsub_hub.h); must outlive the dispatcher. Null: the dispatcher
  // keeps its own, which no hook feeds.
  PubSubHub* pubsub = nullptr;
};

class CommandDispatcher {
 public:
  // `feeds`, `boards`, `snapshots` and `append_only` must outlive the
  // dispatcher. InvalidArgument if `feeds` or `boards` is null. Without
  // `snapshots` the saving commands reply that snapshots are off; without
  // `append_only`, BGREWRITEAOF that the append-only files are off.
  static absl::StatusOr<std::unique_ptr<CommandDispatcher>> Create(
      InProcessFeedEngine* feeds, LeaderboardStore* boards,
      SnapshotSaver* snapshots = nullptr,
      AppendOnlyFiles* append_only = nullptr,
      const DispatcherOptions& options = {});

  // State for a new connection (RESP2, a fresh client id, authenticated
  // only if there is no password). With a `push_sink`, the session can
  // SUBSCRIBE, its pushes going there.
  SessionState NewSession(std::shared_ptr<PushSink> push_sink = nullptr) const;

  // Runs `args` (args[0] is the command name) and appends exactly one reply
  // to `out`, encoded in `session.protocol`. An empty `args` gets an error
  // reply. A session not yet authenticated gets "NOAUTH Authentication
  // required." for every command but AUTH, HELLO and QUIT. Inside MULTI,
  // queues the command instead (transaction_commands.h).
  //
  // Commands run side by side, each holding `exclusive_mutex_` shared;
  // an exclusive command (EXEC) holds it alone.
  void Execute(absl::Span<const std::string> args, SessionState& session,
               std::string& out) const;

  // Runs one command EXEC dequeued, replying through `reply`.
  // REQUIRES: called by EXEC's handler, which holds the exclusive lock.
  void RunQueued(absl::Span<const std::string> args, SessionState& session,
                 RespWriter& reply) const;

  const CommandTable& commands() const { return table_; }

  // What the connections count and INFO reports.
  ServerStats& stats() const { return stats_; }

  // What SHUTDOWN calls to stop the server (it sends no reply). Call
  // before serving; without it SHUTDOWN is refused.
  void SetShutdownHandler(std::function<void(ShutdownKind)> handler) {
    shutdown_handler_ = std::move(handler);
  }

  SlowLog& slow_log() const { return slow_log_; }

  // Drops up to `budget` sorted-set keys whose expiry has passed (the
  // server calls it every 100 ms); watches count them as written.
  // LeaderboardStore::DeleteExpired's errors.
  absl::Status DeleteExpiredKeys(size_t budget) const;

  // The settings CONFIG changes, which the connections read as they serve.
  ServerConfig& config() const { return *context_.config; }

  // The connected clients (CLIENT LIST); the network side attaches each
  // session's addresses to its record.
  ClientRegistry& clients() const { return clients_; }

 private:
  CommandDispatcher(InProcessFeedEngine* feeds, LeaderboardStore* boards,
                    SnapshotSaver* snapshots, AppendOnlyFiles* append_only,
                    const DispatcherOptions& options);

  // Execute but for CLIENT REPLY's dropping of replies.
  void Dispatch(absl::Span<const std::string> args, SessionState& session,
                std::string& out) const;
  void Queue(absl::Span<const std::string> args, TransactionState& transaction,
             RespWriter& reply) const;
  // Runs a command that passed the checks: its handler, then MISCONF for a
  // refused write, then WATCH's bookkeeping.
  void RunOne(const CommandSpec& spec, absl::Span<const std::string> args,
              SessionState& session, RespWriter& reply) const;
  // Gives every key `args` names at `spec`'s key positions a new version.
  void TouchKeys(const CommandSpec& spec,
                 absl::Span<const std::string> args) const;

  CommandTable table_;
  const size_t max_transaction_bytes_;
  // Held shared by every command, alone by an exclusive one.
  mutable internal::SharedMutex exclusive_mutex_;
  mutable WatchedKeys watched_keys_;
  mutable ClientRegistry clients_;
  mutable SlowLog slow_log_;
  std::function<void(ShutdownKind)> shutdown_handler_;
  mutable ServerStats stats_;
  std::unique_ptr<ServerConfig> own_config_;  // when options.config is null
  std::unique_ptr<PubSubHub> own_pubsub_;     // when options.pubsub is null
  ServerContext context_;
  mutable std::atomic<int64_t> next_client_id_{1};
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_COMMAND_DISPATCHER_H_
