#include "admin_commands.h"

#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "slow_log.h"
#include "snapshot_saver.h"

namespace feedcore::server {
namespace {

void ReplyWrongArity(CommandCall& call, absl::string_view sub) {
  call.reply->Error(absl::StrCat("ERR wrong number of arguments for 'slowlog|",
                                 absl::AsciiStrToLower(sub), "' command"));
}

void WriteEntry(RespWriter& reply, const SlowLogEntry& entry) {
  reply.ArrayHeader(6);
  reply.Integer(static_cast<int64_t>(entry.id));
  reply.Integer(entry.unix_seconds);
  reply.Integer(entry.micros);
  reply.ArrayHeader(entry.args.size());
  for (const std::string& arg : entry.args) reply.Bulk(arg);
  reply.Bulk(entry.client_address);
  reply.Bulk(entry.client_name);
}

void Slowlog(CommandCall& call) {
  SlowLog& log = *call.server->slow_log;
  const std::string& sub = call.args[1];
  const size_t count = call.args.size();
  if (IsKeyword(sub, "GET")) {
    if (count > 3) return ReplyWrongArity(call, sub);
    int64_t wanted = 10;
    if (count == 3) {
      absl::StatusOr<int64_t> n = ParseInt64(call.args[2], "count");
      if (!n.ok() || *n < -1) {
        call.reply->Error("ERR count should be greater than or equal to -1");
        return;
      }
      wanted = *n;
    }
    const std::vector<SlowLogEntry> entries = log.Newest(wanted);
    call.reply->ArrayHeader(entries.size());
    for (const SlowLogEntry& entry : entries) WriteEntry(*call.reply, entry);
  } else if (IsKeyword(sub, "LEN")) {
    if (count != 2) return ReplyWrongArity(call, sub);
    call.reply->Integer(static_cast<int64_t>(log.size()));
  } else if (IsKeyword(sub, "RESET")) {
    if (count != 2) return ReplyWrongArity(call, sub);
    log.Reset();
    call.reply->SimpleString("OK");
  } else if (IsKeyword(sub, "HELP")) {
    const char* const lines[] = {
        "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 "
        "mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client "
        "IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        "HELP",
        "    Print this help.",
    };
    call.reply->ArrayHeader(std::size(lines));
    for (const char* line : lines) call.reply->SimpleString(line);
  } else {
    call.reply->Error(
        absl::StrCat("ERR unknown subcommand '", sub, "'. Try SLOWLOG HELP."));
  }
}

void Shutdown(CommandCall& call) {
  ShutdownKind kind = ShutdownKind::kDefault;
  int save_options = 0;
  for (size_t i = 1; i < call.args.size(); ++i) {
    const std::string& option = call.args[i];
    if (IsKeyword(option, "NOSAVE")) {
      kind = ShutdownKind::kNoSave;
      ++save_options;
    } else if (IsKeyword(option, "SAVE")) {
      kind = ShutdownKind::kSave;
      ++save_options;
    } else if (IsKeyword(option, "ABORT")) {
      // A shutdown here is never pending: it begins at once.
      call.reply->Error("ERR No shutdown in progress.");
      return;
    } else if (!IsKeyword(option, "NOW") && !IsKeyword(option, "FORCE")) {
      call.reply->Error("ERR syntax error");
      return;
    }
  }
  if (save_options > 1) {
    call.reply->Error("ERR syntax error");
    return;
  }
  if (kind == ShutdownKind::kSave && (call.server->snapshots == nullptr ||
                                      !call.server->snapshots->enabled())) {
    call.reply->Error(
        "ERR Errors trying to SHUTDOWN: SAVE needs --snapshot_file");
    return;
  }
  if (!*call.server->shutdown) {
    call.reply->Error(
        "ERR Errors trying to SHUTDOWN: this server cannot be stopped by a "
        "command");
    return;
  }
  (*call.server->shutdown)(kind);
  call.session->close_after_reply = true;
  // No reply: the closing connection is the answer.
}

}  // namespace

absl::Status AddAdminCommands(CommandTable& table) {
  std::vector<CommandSpec> specs = {
      {"SLOWLOG",
       -2,
       {"admin", "random", "loading", "stale"},
       0,
       0,
       0,
       Slowlog},
      {"SHUTDOWN",
       -1,
       {"admin", "noscript", "loading", "stale", "no_multi"},
       0,
       0,
       0,
       Shutdown},
  };
  for (CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(std::move(spec)); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
