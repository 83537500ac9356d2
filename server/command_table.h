// The commands the server knows: name, arity and key positions (what
// COMMAND reports to clients such as redis-cli), and the function that
// runs each one.
#ifndef FEEDCORE_SERVER_COMMAND_TABLE_H_
#define FEEDCORE_SERVER_COMMAND_TABLE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "client_registry.h"
#include "feedcore/feed_engine.h"
#include "feedcore/name_registry.h"
#include "leaderboard_store.h"
#include "publish_ledger.h"
#include "pubsub_hub.h"
#include "resp_writer.h"
#include "slow_log.h"
#include "watched_keys.h"

namespace feedcore::server {

class AppendOnlyFiles;
class CommandDispatcher;
class CommandTable;
class ServerConfig;
class ServerStats;
class SnapshotSaver;

// A connection's MULTI ... EXEC in progress, and its WATCHed keys.
struct TransactionState {
  bool active = false;  // between MULTI and EXEC or DISCARD
  // A command was refused while queueing (unknown, wrong arity, too
  // large): EXEC answers EXECABORT and runs nothing.
  bool refused = false;
  std::vector<std::vector<std::string>> queued;
  size_t queued_bytes = 0;  // argument bytes of `queued`
  WatchList watched;

  // Ends the transaction and unwatches every key (EXEC, DISCARD, RESET).
  void Reset() {
    active = false;
    refused = false;
    queued.clear();
    queued_bytes = 0;
    watched.Clear();
  }
};

// What a connection remembers between its commands. Move-only (it owns
// its watches).
struct SessionState {
  int protocol = 2;                // 2 or 3, set by HELLO
  bool close_after_reply = false;  // set by QUIT
  std::string client_name;         // HELLO ... SETNAME
  int64_t client_id = 0;
  // False until AUTH or HELLO ... AUTH succeeds, when the server has a
  // password; until then only commands flagged "no_auth" run.
  bool authenticated = true;
  TransactionState transaction;
  // CLIENT REPLY: OFF drops every reply; SKIP drops its own and the next
  // command's (a count of replies still to drop).
  bool replies_off = false;
  int skip_replies = 0;
  ClientRegistration registration;  // in the dispatcher's ClientRegistry
  // SUBSCRIBE's channels and patterns; without a sink (set by the
  // connection) the session cannot subscribe.
  PubSubMembership pubsub;
};

// What SHUTDOWN asks of the program (admin_commands.h).
enum class ShutdownKind {
  kDefault,  // save on the way out if the program does so on signals
  kSave,     // save on the way out, whatever the program's setting
  kNoSave,   // do not save on the way out
};

// What every command may use.
struct ServerContext {
  InProcessFeedEngine* feeds = nullptr;
  LeaderboardStore* boards = nullptr;
  SnapshotSaver* snapshots = nullptr;      // null: snapshots are off
  AppendOnlyFiles* append_only = nullptr;  // null: --appendonly no
  const CommandTable* commands = nullptr;
  // The names of entities (feed_entities.h); null: ids only.
  NameRegistry* names = nullptr;
  // FEED.PUBLISH's memory of recent publishes, one per dispatcher.
  std::shared_ptr<PublishLedger> publishes = std::make_shared<PublishLedger>();
  ServerStats* stats = nullptr;  // never null in a dispatcher's context
  // The settings CONFIG reads and changes, and the password; never null
  // in a dispatcher's context.
  ServerConfig* config = nullptr;
  WatchedKeys* watched_keys = nullptr;  // never null, as stats
  PubSubHub* pubsub = nullptr;          // never null, as stats
  Micros started_at = 0;  // when the dispatcher was made, on the engine clock
  std::string run_id;     // INFO's run_id
  SlowLog* slow_log = nullptr;  // never null, as stats
  // Empty until the program sets it (CommandDispatcher::SetShutdownHandler).
  const std::function<void(ShutdownKind)>* shutdown = nullptr;
  const CommandDispatcher* dispatcher = nullptr;  // runs EXEC's commands
};

// One command being run: its arguments (args[0] is the name as sent), the
// connection's state and where its reply goes. A handler writes exactly
// one reply.
struct CommandCall {
  absl::Span<const std::string> args;
  SessionState* session = nullptr;
  RespWriter* reply = nullptr;
  const ServerContext* server = nullptr;
  // Set by a write command that knows it changed nothing (ZADD XX of an
  // absent member, DEL of a missing key), so that WATCHes of its keys stay
  // valid, as in Redis. Left false, a write that did not fail counts as a
  // change of each of its keys.
  bool changed_nothing = false;
};

using CommandHandler = void (*)(CommandCall& call);

// What INFO commandstats reports of one command. Relaxed atomics, as
// ServerStats' counters.
struct CommandCounters {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> micros{0};
  std::atomic<uint64_t> failed_calls{0};    // ran and replied an error
  std::atomic<uint64_t> rejected_calls{0};  // refused before running
};

struct CommandSpec {
  std::string name;  // upper case, e.g. "ZADD", "FEED.READ"
  // Redis convention: N > 0 means exactly N arguments (name included),
  // -N means at least N.
  int arity = 1;
  std::vector<std::string> flags;  // "write", "readonly", "fast"...
  int first_key = 0;               // 0: the command takes no key
  int last_key = 0;
  int key_step = 0;
  CommandHandler handler = nullptr;
  // Runs while no other command runs (EXEC, so that its commands are one
  // step for every other client; FLUSHALL).
  bool exclusive = false;
  // Set by CommandTable::Add; shared by the copies of the spec.
  std::shared_ptr<CommandCounters> counters = nullptr;
};

class CommandTable {
 public:
  // Adds a command. InvalidArgument for an empty or lower-case name, a
  // zero arity, a missing handler or a name already taken.
  absl::Status Add(CommandSpec spec);

  // The command named `name` (any case), or null.
  const CommandSpec* Find(absl::string_view name) const;

  // Every command, in the order added.
  const std::vector<CommandSpec>& all() const { return specs_; }

 private:
  std::vector<CommandSpec> specs_;
  absl::flat_hash_map<std::string, size_t> index_;
};

// Replies with `status` as a RESP error: "ERR <message>".
void ReplyError(CommandCall& call, const absl::Status& status);

// Replies "ERR syntax error ..." naming the offending argument.
void ReplySyntaxError(CommandCall& call, absl::string_view argument);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_COMMAND_TABLE_H_
