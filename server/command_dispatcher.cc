#include "command_dispatcher.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "append_only.h"
#include "arguments.h"
#include "connection_commands.h"
#include "feed_commands.h"
#include "feed_relation_commands.h"
#include "feed_graph_commands.h"
#include "feed_marker_commands.h"
#include "feed_ranked_commands.h"
#include "info_command.h"
#include "leaderboard_commands.h"
#include "persistence_commands.h"
#include "resp_writer.h"
#include "snapshot_commands.h"

namespace feedcore::server {

absl::StatusOr<std::unique_ptr<CommandDispatcher>> CommandDispatcher::Create(
    InProcessFeedEngine* feeds, LeaderboardStore* boards, SnapshotSaver* snapshots,
    AppendOnlyFiles* append_only, const DispatcherOptions& options) {
  if (feeds == nullptr || boards == nullptr) {
    return absl::InvalidArgumentError(
        "CommandDispatcher needs a feed engine and a leaderboard store");
  }
  std::unique_ptr<CommandDispatcher> dispatcher(
      new CommandDispatcher(feeds, boards, snapshots, append_only, options));
  CommandTable& table = dispatcher->table_;
  // The saving commands come after the data commands they capture.
  for (auto add : {AddConnectionCommands, AddInfoCommand, AddFeedCommands,
                   AddFeedRelationCommands, AddFeedGraphCommands,
                   AddFeedMarkerCommands, AddFeedRankedCommands,
                   AddLeaderboardCommands,
                   AddSnapshotCommands, AddPersistenceCommands}) {
    if (absl::Status status = add(table); !status.ok()) return status;
  }
  return dispatcher;
}

CommandDispatcher::CommandDispatcher(InProcessFeedEngine* feeds,
                                     LeaderboardStore* boards,
                                     SnapshotSaver* snapshots,
                                     AppendOnlyFiles* append_only,
                                     const DispatcherOptions& options) {
  context_.feeds = feeds;
  context_.boards = boards;
  context_.snapshots = snapshots;
  context_.append_only = append_only;
  context_.commands = &table_;
  context_.stats = &stats_;
  context_.requirepass = options.requirepass;
}

SessionState CommandDispatcher::NewSession() const {
  SessionState session;
  session.client_id = next_client_id_.fetch_add(1, std::memory_order_relaxed);
  session.authenticated = context_.requirepass.empty();
  return session;
}

void CommandDispatcher::Execute(absl::Span<const std::string> args,
                                SessionState& session, std::string& out) const {
  RespWriter reply(&out, session.protocol);
  if (args.empty()) {
    reply.Error("ERR empty command");
    return;
  }
  const CommandSpec* spec = table_.Find(args[0]);
  // Before anything else, even the unknown-command error: a client without
  // the password learns nothing about the server.
  if (!session.authenticated &&
      (spec == nullptr || std::find(spec->flags.begin(), spec->flags.end(),
                                    "no_auth") == spec->flags.end())) {
    reply.Error("NOAUTH Authentication required.");
    return;
  }
  if (spec == nullptr) {
    // Redis's wording, which client libraries and people recognize.
    std::string message = absl::StrCat("ERR unknown command ", Quote(args[0]),
                                       ", with args beginning with:");
    for (size_t i = 1; i < args.size() && i <= 3; ++i) {
      absl::StrAppend(&message, " ", Quote(args[i]));
    }
    reply.Error(message);
    return;
  }
  const int count = static_cast<int>(std::min<size_t>(args.size(), 1 << 30));
  if ((spec->arity > 0 && count != spec->arity) ||
      (spec->arity < 0 && count < -spec->arity)) {
    reply.Error(absl::StrCat("ERR wrong number of arguments for '",
                             absl::AsciiStrToLower(spec->name), "' command"));
    return;
  }
  CommandCall call{args, &session, &reply, &context_};
  const size_t reply_start = out.size();
  try {
    spec->handler(call);
  } catch (const std::exception& e) {
    // Out of memory, typically: this command fails, the server goes on.
    out.resize(reply_start);
    reply.Error(absl::StrCat("ERR internal error: ", e.what()));
  }
  // A write the append-only files refused gets Redis's MISCONF error, so
  // that clients tell "the data is not persisted" from a bad command.
  // Only failed writes pay for the check.
  if (context_.append_only != nullptr && out.size() > reply_start &&
      out[reply_start] == '-' && IsWriteCommand(*spec)) {
    if (absl::Status refused = context_.append_only->WriteError();
        !refused.ok()) {
      out.resize(reply_start);
      reply.Error(MisconfMessage(refused));
    }
  }
}

}  // namespace feedcore::server
