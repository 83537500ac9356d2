#include "config_commands.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "server_config.h"
#include "server_stats.h"

namespace feedcore::server {
namespace {

void WrongArity(CommandCall& call, absl::string_view sub) {
  call.reply->Error(absl::StrCat("ERR wrong number of arguments for 'config|",
                                 sub, "' command"));
}

void ConfigGet(CommandCall& call) {
  if (call.args.size() < 3) {
    WrongArity(call, "get");
    return;
  }
  const std::vector<std::pair<std::string, std::string>> matches =
      call.server->config->Get(call.args.subspan(2));
  call.reply->MapHeader(matches.size());
  for (const auto& [name, value] : matches) {
    call.reply->Bulk(name);
    call.reply->Bulk(value);
  }
}

void ConfigSet(CommandCall& call) {
  if (call.args.size() < 4) {
    WrongArity(call, "set");
    return;
  }
  if (absl::Status status = call.server->config->Set(call.args.subspan(2));
      !status.ok()) {
    call.reply->Error(status.message());
    return;
  }
  call.reply->SimpleString("OK");
}

// Zeroes what INFO counts (stats and commandstats), as Redis's RESETSTAT;
// what describes the present (connected clients, buffered bytes, the
// port) stays.
void ConfigResetStat(CommandCall& call) {
  if (call.args.size() != 2) {
    WrongArity(call, "resetstat");
    return;
  }
  call.server->stats->ResetCounters();
  for (const CommandSpec& spec : call.server->commands->all()) {
    spec.counters->calls.store(0, std::memory_order_relaxed);
    spec.counters->micros.store(0, std::memory_order_relaxed);
    spec.counters->failed_calls.store(0, std::memory_order_relaxed);
    spec.counters->rejected_calls.store(0, std::memory_order_relaxed);
  }
  call.reply->SimpleString("OK");
}

void ConfigHelp(CommandCall& call) {
  static constexpr const char* kLines[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern> [<pattern> ...]",
      "    Return the settings matching the glob-like patterns and their "
      "values.",
      "SET <name> <value> [<name> <value> ...]",
      "    Change settings: timeout, maxclients, requirepass and the client "
      "buffer limits.",
      "RESETSTAT",
      "    Reset the statistics INFO reports.",
      "HELP",
      "    Print this help."};
  call.reply->ArrayHeader(std::size(kLines));
  for (const char* line : kLines) call.reply->SimpleString(line);
}

void Config(CommandCall& call) {
  const std::string& sub = call.args[1];
  if (IsKeyword(sub, "GET")) {
    ConfigGet(call);
  } else if (IsKeyword(sub, "SET")) {
    ConfigSet(call);
  } else if (IsKeyword(sub, "RESETSTAT")) {
    ConfigResetStat(call);
  } else if (IsKeyword(sub, "HELP") && call.args.size() == 2) {
    ConfigHelp(call);
  } else {
    call.reply->Error(absl::StrCat("ERR unknown subcommand ", Quote(sub),
                                   ". Try CONFIG HELP."));
  }
}

}  // namespace

absl::Status AddConfigCommands(CommandTable& table) {
  return table.Add({"CONFIG", -2, {"admin", "noscript"}, 0, 0, 0, Config});
}

}  // namespace feedcore::server
