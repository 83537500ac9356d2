#include "command_dispatcher.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "admin_commands.h"
#include "append_only.h"
#include "arguments.h"
#include "connection_commands.h"
#include "feed_commands.h"
#include "feed_edit_commands.h"
#include "feed_graph_commands.h"
#include "feed_list_commands.h"
#include "feed_marker_commands.h"
#include "feed_ranked_commands.h"
#include "feed_reaction_commands.h"
#include "feed_relation_commands.h"
#include "info_command.h"
#include "keyspace_commands.h"
#include "leaderboard_commands.h"
#include "other_type_commands.h"
#include "persistence_commands.h"
#include "pubsub_commands.h"
#include "resp_writer.h"
#include "session_commands.h"
#include "snapshot_commands.h"
#include "transaction_commands.h"

namespace feedcore::server {

absl::StatusOr<std::unique_ptr<CommandDispatcher>> CommandDispatcher::Create(
    InProcessFeedEngine* feeds, LeaderboardStore* boards,
    SnapshotSaver* snapshots, AppendOnlyFiles* append_only,
    const DispatcherOptions& options) {
  if (feeds == nullptr || boards == nullptr) {
    return absl::InvalidArgumentError(
        "CommandDispatcher needs a feed engine and a leaderboard store");
  }
  std::unique_ptr<CommandDispatcher> dispatcher(
      new CommandDispatcher(feeds, boards, snapshots, append_only, options));
  CommandTable& table = dispatcher->table_;
  // The saving commands come after the data commands they capture.
  for (auto add : {AddConnectionCommands,  AddInfoCommand,
                   AddFeedCommands,        AddFeedRelationCommands,
                   AddFeedGraphCommands,   AddFeedMarkerCommands,
                   AddFeedRankedCommands,  AddFeedReactionCommands,
                   AddFeedEditCommands,    AddFeedListCommands,
                   AddLeaderboardCommands, AddKeyspaceCommands,
                   AddOtherTypeCommands,   AddFeedNotificationCommands,
                   AddSessionCommands,     AddAdminCommands,
                   AddTransactionCommands, AddSnapshotCommands,
                   AddPersistenceCommands, AddPubSubCommands}) {
    if (absl::Status status = add(table); !status.ok()) return status;
  }
  return dispatcher;
}

namespace {

// INFO's run_id: 40 random hex digits, new for every server, as Redis's.
std::string NewRunId() {
  std::random_device device;
  std::string id;
  while (id.size() < 40) {
    absl::StrAppend(&id, absl::Hex(device(), absl::kZeroPad8));
  }
  id.resize(40);
  return id;
}

}  // namespace

CommandDispatcher::CommandDispatcher(InProcessFeedEngine* feeds,
                                     LeaderboardStore* boards,
                                     SnapshotSaver* snapshots,
                                     AppendOnlyFiles* append_only,
                                     const DispatcherOptions& options)
    : max_transaction_bytes_(options.max_transaction_bytes) {
  context_.feeds = feeds;
  context_.boards = boards;
  boards->UseClock(feeds->options().clock);
  context_.snapshots = snapshots;
  context_.append_only = append_only;
  context_.commands = &table_;
  context_.stats = &stats_;
  if (options.config == nullptr) {
    ServerOptions server_options;
    server_options.requirepass = options.requirepass;
    own_config_ = std::make_unique<ServerConfig>(server_options);
  }
  context_.config =
      options.config != nullptr ? options.config : own_config_.get();
  context_.watched_keys = &watched_keys_;
  context_.started_at = feeds->options().clock->Now();
  context_.run_id = NewRunId();
  context_.slow_log = &slow_log_;
  context_.shutdown = &shutdown_handler_;
  context_.dispatcher = this;
  context_.names = options.names;
  if (options.pubsub == nullptr) own_pubsub_ = std::make_unique<PubSubHub>();
  context_.pubsub =
      options.pubsub != nullptr ? options.pubsub : own_pubsub_.get();
}

SessionState CommandDispatcher::NewSession(
    std::shared_ptr<PushSink> push_sink) const {
  SessionState session;
  if (push_sink != nullptr) {
    session.pubsub = PubSubMembership(context_.pubsub, std::move(push_sink));
  }
  session.client_id = next_client_id_.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<ClientActivity> activity =
      clients_.Add(session.client_id, context_.feeds->options().clock->Now());
  session.registration = ClientRegistration(&clients_, session.client_id);
  session.registration.set_activity(std::move(activity));
  session.authenticated = !context_.config->password_required();
  return session;
}

namespace {

// The commands a RESP2 connection with subscriptions may send, as in Redis.
bool RunsWhileSubscribed(const CommandSpec& spec) {
  return spec.name == "SUBSCRIBE" || spec.name == "UNSUBSCRIBE" ||
         spec.name == "PSUBSCRIBE" || spec.name == "PUNSUBSCRIBE" ||
         spec.name == "PING" || spec.name == "QUIT" || spec.name == "RESET";
}

// What a queued argument costs beyond its bytes (its string), counted
// against DispatcherOptions::max_transaction_bytes.
constexpr size_t kQueuedArgumentOverhead = sizeof(std::string);

bool HasFlag(const CommandSpec& spec, absl::string_view flag) {
  return std::find(spec.flags.begin(), spec.flags.end(), flag) !=
         spec.flags.end();
}

}  // namespace

absl::Status CommandDispatcher::DeleteExpiredKeys(size_t budget) const {
  // As a command: never beside an EXEC, whose write group a drop's sync
  // would otherwise wait for while holding the store's lock.
  internal::ReaderLock lock(&exclusive_mutex_);
  absl::StatusOr<size_t> deleted = context_.boards->DeleteExpired(budget);
  if (!deleted.ok()) return deleted.status();
  if (*deleted > 0) watched_keys_.TouchAll();
  return absl::OkStatus();
}

void CommandDispatcher::Execute(absl::Span<const std::string> args,
                                SessionState& session, std::string& out) const {
  const size_t reply_start = out.size();
  if (ClientActivity* activity = session.registration.activity()) {
    activity->last_command_at.store(context_.feeds->options().clock->Now(),
                                    std::memory_order_relaxed);
    activity->commands.fetch_add(1, std::memory_order_relaxed);
  }
  Dispatch(args, session, out);
  // CLIENT REPLY OFF or SKIP: the command ran, its reply goes nowhere.
  if (session.skip_replies > 0) {
    --session.skip_replies;
    out.resize(reply_start);
  } else if (session.replies_off) {
    out.resize(reply_start);
  }
}

void CommandDispatcher::Dispatch(absl::Span<const std::string> args,
                                 SessionState& session,
                                 std::string& out) const {
  RespWriter reply(&out, session.protocol);
  TransactionState& transaction = session.transaction;
  if (args.empty()) {
    reply.Error("ERR empty command");
    transaction.refused |= transaction.active;
    return;
  }
  const CommandSpec* spec = table_.Find(args[0]);
  // Before anything else, even the unknown-command error: a client without
  // the password learns nothing about the server.
  if (!session.authenticated &&
      (spec == nullptr || !HasFlag(*spec, "no_auth"))) {
    reply.Error("NOAUTH Authentication required.");
    if (spec != nullptr) {
      spec->counters->rejected_calls.fetch_add(1, std::memory_order_relaxed);
    }
    transaction.refused |= transaction.active;
    return;
  }
  if (spec == nullptr) {
    // Redis's wording and shortening, byte for byte, which client
    // libraries and people recognize (the writer turns CR and LF into
    // spaces).
    std::string message =
        absl::StrCat("ERR unknown command '", args[0].substr(0, 128),
                     "', with args beginning with: ");
    std::string shown;
    for (size_t i = 1; i < args.size() && shown.size() < 128; ++i) {
      absl::StrAppend(&shown, "'", args[i].substr(0, 128 - shown.size()), "' ");
    }
    message += shown;
    reply.Error(message);
    transaction.refused |= transaction.active;
    return;
  }
  const int count = static_cast<int>(std::min<size_t>(args.size(), 1 << 30));
  if ((spec->arity > 0 && count != spec->arity) ||
      (spec->arity < 0 && count < -spec->arity)) {
    reply.Error(absl::StrCat("ERR wrong number of arguments for '",
                             absl::AsciiStrToLower(spec->name), "' command"));
    spec->counters->rejected_calls.fetch_add(1, std::memory_order_relaxed);
    transaction.refused |= transaction.active;
    return;
  }
  if (session.protocol == 2 && session.pubsub.count() > 0 &&
      !RunsWhileSubscribed(*spec)) {
    // Redis's wording: a RESP2 subscriber's connection carries pushes.
    reply.Error(absl::StrCat(
        "ERR Can't execute '", absl::AsciiStrToLower(spec->name),
        "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
        "allowed in this context"));
    spec->counters->rejected_calls.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (transaction.active && !RunsInsideMulti(*spec)) {
    if (HasFlag(*spec, "no_multi")) {
      reply.Error("ERR Command not allowed inside a transaction");
      transaction.refused = true;
      return;
    }
    Queue(args, transaction, reply);
    return;
  }
  if (spec->exclusive) {
    internal::WriterLock lock(&exclusive_mutex_);
    RunOne(*spec, args, session, reply);
  } else {
    internal::ReaderLock lock(&exclusive_mutex_);
    RunOne(*spec, args, session, reply);
  }
}

void CommandDispatcher::Queue(absl::Span<const std::string> args,
                              TransactionState& transaction,
                              RespWriter& reply) const {
  size_t bytes = 0;
  for (const std::string& arg : args)
    bytes += arg.size() + kQueuedArgumentOverhead;
  if (transaction.queued_bytes + bytes > max_transaction_bytes_) {
    reply.Error(absl::StrCat(
        "ERR the transaction's queued commands would hold more than ",
        max_transaction_bytes_, " bytes; it will be discarded at EXEC"));
    transaction.refused = true;
    return;
  }
  transaction.queued.emplace_back(args.begin(), args.end());
  transaction.queued_bytes += bytes;
  reply.SimpleString("QUEUED");
}

void CommandDispatcher::RunQueued(absl::Span<const std::string> args,
                                  SessionState& session,
                                  RespWriter& reply) const {
  // exclusive_mutex_ is held alone by EXEC, the only caller.
  // The table does not change while serving, so a command found when it
  // was queued is found now.
  const CommandSpec* spec = table_.Find(args[0]);
  if (spec == nullptr) {
    reply.Error(absl::StrCat("ERR unknown command ", Quote(args[0])));
    return;
  }
  RunOne(*spec, args, session, reply);
}

void CommandDispatcher::RunOne(const CommandSpec& spec,
                               absl::Span<const std::string> args,
                               SessionState& session, RespWriter& reply) const {
  std::string& out = reply.buffer();
  CommandCall call{args, &session, &reply, &context_};
  const size_t reply_start = out.size();
  // A duration, not a time of day: the steady clock, not the engine's.
  const auto started = std::chrono::steady_clock::now();
  try {
    spec.handler(call);
  } catch (const std::exception& e) {
    // Out of memory, typically: this command fails, the server goes on.
    out.resize(reply_start);
    reply.Error(absl::StrCat("ERR internal error: ", e.what()));
  }
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - started);
  const bool failed = out.size() > reply_start && out[reply_start] == '-';
  CommandCounters& counters = *spec.counters;
  counters.calls.fetch_add(1, std::memory_order_relaxed);
  counters.micros.fetch_add(static_cast<uint64_t>(micros.count()),
                            std::memory_order_relaxed);
  if (failed) counters.failed_calls.fetch_add(1, std::memory_order_relaxed);
  if (slow_log_.IsSlow(micros.count()) && !HasFlag(spec, "skip_slowlog")) {
    const Micros now = context_.feeds->options().clock->Now();
    slow_log_.Add(args, (now - micros.count()) / 1'000'000, micros.count(),
                  clients_.Find(session.client_id).address,
                  session.client_name);
  }
  // A write the append-only files refused gets Redis's MISCONF error, so
  // that clients tell "the data is not persisted" from a bad command.
  // Only failed writes pay for the check.
  if (failed && context_.append_only != nullptr && IsWriteCommand(spec)) {
    if (absl::Status refused = context_.append_only->WriteError();
        !refused.ok()) {
      out.resize(reply_start);
      reply.Error(MisconfMessage(refused));
    }
  }
  if (!failed && !call.changed_nothing && watched_keys_.AnyWatched() &&
      IsWriteCommand(spec)) {
    TouchKeys(spec, args);
  }
}

void CommandDispatcher::TouchKeys(const CommandSpec& spec,
                                  absl::Span<const std::string> args) const {
  // A command whose written keys' positions depend on its arguments
  // (ZMPOP's numkeys) declares none: every watch counts as touched, which
  // may abort an EXEC Redis would run, never the other way round. (The
  // *STOREs declare their destination, the one key they write.)
  if (spec.first_key <= 0) {
    if (HasFlag(spec, "movablekeys")) watched_keys_.TouchAll();
    return;
  }
  const int size = static_cast<int>(std::min<size_t>(args.size(), 1 << 30));
  const int last = spec.last_key < 0 ? size + spec.last_key : spec.last_key;
  const int step = std::max(spec.key_step, 1);
  for (int i = spec.first_key; i <= last && i < size; i += step) {
    watched_keys_.Touch(args[i]);
  }
}

}  // namespace feedcore::server
