#include "other_type_commands.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "leaderboard_store.h"

namespace feedcore::server {
namespace {

// Redis's reply to a command on a key of another type.
constexpr char kWrongType[] =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

void Refuse(CommandCall& call, const char* type) {
  call.changed_nothing = true;
  if (call.server->boards->Exists(call.args[1])) {
    return call.reply->Error(kWrongType);
  }
  call.reply->Error(absl::StrCat(
      "ERR feedcore-server keeps sorted sets only: '",
      absl::AsciiStrToLower(call.args[0]), "' is a command of Redis ", type));
}

void String(CommandCall& call) { Refuse(call, "strings"); }
void List(CommandCall& call) { Refuse(call, "lists"); }
void Set(CommandCall& call) { Refuse(call, "sets"); }
void Stream(CommandCall& call) { Refuse(call, "streams"); }
void Hash(CommandCall& call) { Refuse(call, "hashes"); }

// HSET and HMSET take field-value pairs: an odd count of arguments is
// Redis's arity error, which it checks before the key's type.
void HashPairs(CommandCall& call) {
  if (call.args.size() % 2 == 1) {
    return call.reply->Error(absl::StrCat("ERR wrong number of arguments for '",
                                          absl::AsciiStrToLower(call.args[0]),
                                          "' command"));
  }
  Hash(call);
}

}  // namespace

absl::Status AddOtherTypeCommands(CommandTable& table) {
  const std::vector<std::string> write = {"write", "denyoom", "fast"};
  const std::vector<std::string> read = {"readonly", "fast"};
  std::vector<CommandSpec> specs = {
      {"GET", 2, read, 1, 1, 1, String},
      {"GETDEL", 2, {"write", "fast"}, 1, 1, 1, String},
      {"GETSET", 3, write, 1, 1, 1, String},
      {"STRLEN", 2, read, 1, 1, 1, String},
      {"APPEND", 3, write, 1, 1, 1, String},
      {"INCR", 2, write, 1, 1, 1, String},
      {"DECR", 2, write, 1, 1, 1, String},
      {"HGET", 3, read, 1, 1, 1, Hash},
      {"HMGET", -3, read, 1, 1, 1, Hash},
      {"HSET", -4, write, 1, 1, 1, HashPairs},
      {"HSETNX", 4, write, 1, 1, 1, Hash},
      {"HMSET", -4, write, 1, 1, 1, HashPairs},
      {"HDEL", -3, {"write", "fast"}, 1, 1, 1, Hash},
      {"HLEN", 2, read, 1, 1, 1, Hash},
      {"HEXISTS", 3, read, 1, 1, 1, Hash},
      {"HSTRLEN", 3, read, 1, 1, 1, Hash},
      {"HGETALL", 2, {"readonly"}, 1, 1, 1, Hash},
      {"HKEYS", 2, {"readonly"}, 1, 1, 1, Hash},
      {"HVALS", 2, {"readonly"}, 1, 1, 1, Hash},
      {"LPUSH", -3, write, 1, 1, 1, List},
      {"RPUSH", -3, write, 1, 1, 1, List},
      {"LPUSHX", -3, write, 1, 1, 1, List},
      {"RPUSHX", -3, write, 1, 1, 1, List},
      {"LLEN", 2, read, 1, 1, 1, List},
      {"SADD", -3, write, 1, 1, 1, Set},
      {"SREM", -3, {"write", "fast"}, 1, 1, 1, Set},
      {"SMEMBERS", 2, {"readonly"}, 1, 1, 1, Set},
      {"SISMEMBER", 3, read, 1, 1, 1, Set},
      {"SMISMEMBER", -3, read, 1, 1, 1, Set},
      {"SCARD", 2, read, 1, 1, 1, Set},
      {"XLEN", 2, read, 1, 1, 1, Stream},
  };
  for (CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(std::move(spec)); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
