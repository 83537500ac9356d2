#include "connection_commands.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "config_commands.h"
#include "server_config.h"
#include "server_version.h"

namespace feedcore::server {
namespace {

void Ping(CommandCall& call) {
  if (call.args.size() <= 2 && call.session->protocol == 2 &&
      call.session->pubsub.count() > 0) {
    // A RESP2 subscriber's PING answers in the pushes' form, as in Redis.
    call.reply->ArrayHeader(2);
    call.reply->Bulk("pong");
    call.reply->Bulk(call.args.size() == 2 ? call.args[1] : "");
  } else if (call.args.size() == 1) {
    call.reply->SimpleString("PONG");
  } else if (call.args.size() == 2) {
    call.reply->Bulk(call.args[1]);
  } else {
    call.reply->Error("ERR wrong number of arguments for 'ping' command");
  }
}

void Echo(CommandCall& call) { call.reply->Bulk(call.args[1]); }

// Redis's replies, which clients and their users recognize.
constexpr char kWrongPass[] =
    "WRONGPASS invalid username-password pair or user is disabled.";
constexpr char kNoPasswordConfigured[] =
    "ERR AUTH <password> called without any password configured for the "
    "default user. Are you sure your configuration is correct?";

// Compares in time that depends only on the length of `expected`, never on
// how much of `given` matches, so response times reveal nothing of the
// password. (The loop always runs over the whole password; `given` is read
// modulo its length so a short guess takes the same path.)
bool PasswordMatches(absl::string_view given, absl::string_view expected) {
  unsigned char difference = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g =
        given.empty() ? 0 : static_cast<unsigned char>(given[i % given.size()]);
    difference |= g ^ static_cast<unsigned char>(expected[i]);
  }
  // Through a volatile so the compiler cannot stop at the first mismatch.
  volatile unsigned char result = difference;
  return result == 0;
}

// Whether `user` with `password` may log in. There is one user, "default",
// as in Redis without ACLs: with no requirepass it takes any password.
bool CredentialsValid(const CommandCall& call, absl::string_view user,
                      absl::string_view password) {
  const std::string required = call.server->config->requirepass();
  const bool password_ok =
      required.empty() || PasswordMatches(password, required);
  return password_ok && user == "default";
}

// AUTH password | AUTH username password
void Auth(CommandCall& call) {
  if (call.args.size() > 3) {
    call.reply->Error("ERR syntax error");
    return;
  }
  if (call.args.size() == 2 && !call.server->config->password_required()) {
    call.reply->Error(kNoPasswordConfigured);
    return;
  }
  const absl::string_view user =
      call.args.size() == 3 ? absl::string_view(call.args[1]) : "default";
  if (!CredentialsValid(call, user, call.args.back())) {
    call.reply->Error(kWrongPass);
    return;
  }
  call.session->authenticated = true;
  call.reply->SimpleString("OK");
}

void Quit(CommandCall& call) {
  call.session->close_after_reply = true;
  call.reply->SimpleString("OK");
}

// HELLO [protover [AUTH username password] [SETNAME clientname]]
void Hello(CommandCall& call) {
  int protocol = call.session->protocol;
  std::string name = call.session->client_name;
  bool authenticated = call.session->authenticated;
  if (call.args.size() >= 2) {
    absl::StatusOr<int64_t> version = ParseInt64InRange(
        call.args[1], "protocol version", INT64_MIN, INT64_MAX);
    if (!version.ok() || (*version != 2 && *version != 3)) {
      call.reply->Error(absl::StrCat("NOPROTO unsupported protocol version ",
                                     Quote(call.args[1]),
                                     "; this server speaks 2 and 3"));
      return;
    }
    protocol = static_cast<int>(*version);
  }
  for (size_t i = 2; i < call.args.size(); ++i) {
    if (IsKeyword(call.args[i], "AUTH") && i + 2 < call.args.size()) {
      if (!CredentialsValid(call, call.args[i + 1], call.args[i + 2])) {
        call.reply->Error(kWrongPass);
        return;
      }
      authenticated = true;
      i += 2;
    } else if (IsKeyword(call.args[i], "SETNAME") && i + 1 < call.args.size()) {
      name = call.args[++i];
    } else {
      ReplySyntaxError(call, call.args[i]);
      return;
    }
  }
  if (!authenticated) {
    call.reply->Error(
        "NOAUTH HELLO must be called with the client already authenticated, "
        "otherwise the HELLO <proto> AUTH <user> <pass> option can be used to "
        "authenticate the client and select the RESP protocol version at the "
        "same time");
    return;
  }
  // Switch only once the whole command is valid, and reply in the new
  // protocol, as Redis does.
  call.session->authenticated = true;
  call.session->protocol = protocol;
  call.session->client_name = std::move(name);
  if (ClientRegistry* registry = call.session->registration.registry()) {
    registry->Update(call.session->client_id, [&](ClientRecord& record) {
      record.name = call.session->client_name;
      record.protocol = protocol;
    });
  }
  RespWriter& reply = *call.reply;
  reply.set_protocol(protocol);
  // "redis" and the Redis version followed, as clients decide by them what
  // they may send; feedcore's own version beside.
  reply.MapHeader(8);
  reply.Bulk("server");
  reply.Bulk("redis");
  reply.Bulk("version");
  reply.Bulk(kRedisCompatibleVersion);
  reply.Bulk("feedcore_version");
  reply.Bulk(kFeedcoreVersion);
  reply.Bulk("proto");
  reply.Integer(protocol);
  reply.Bulk("id");
  reply.Integer(call.session->client_id);
  reply.Bulk("mode");
  reply.Bulk("standalone");
  reply.Bulk("role");
  reply.Bulk("master");
  reply.Bulk("modules");
  reply.ArrayHeader(0);
}

// One COMMAND entry in the Redis 7 layout: name, arity, flags, first key,
// last key, step, ACL categories, tips, key specs, subcommands.
void WriteCommandInfo(RespWriter& reply, const CommandSpec& spec) {
  reply.ArrayHeader(10);
  reply.Bulk(absl::AsciiStrToLower(spec.name));
  reply.Integer(spec.arity);
  reply.ArrayHeader(spec.flags.size());
  for (const std::string& flag : spec.flags) reply.SimpleString(flag);
  reply.Integer(spec.first_key);
  reply.Integer(spec.last_key);
  reply.Integer(spec.key_step);
  reply.ArrayHeader(0);
  reply.ArrayHeader(0);
  reply.ArrayHeader(0);
  reply.ArrayHeader(0);
}

// COMMAND, COMMAND COUNT, COMMAND LIST, COMMAND INFO name..., COMMAND DOCS.
void Command(CommandCall& call) {
  const CommandTable& table = *call.server->commands;
  RespWriter& reply = *call.reply;
  if (call.args.size() == 1) {
    reply.ArrayHeader(table.all().size());
    for (const CommandSpec& spec : table.all()) WriteCommandInfo(reply, spec);
    return;
  }
  const std::string& sub = call.args[1];
  if (IsKeyword(sub, "COUNT") && call.args.size() == 2) {
    reply.Integer(static_cast<int64_t>(table.all().size()));
  } else if (IsKeyword(sub, "LIST") && call.args.size() == 2) {
    reply.ArrayHeader(table.all().size());
    for (const CommandSpec& spec : table.all()) {
      reply.Bulk(absl::AsciiStrToLower(spec.name));
    }
  } else if (IsKeyword(sub, "INFO")) {
    reply.ArrayHeader(call.args.size() - 2);
    for (size_t i = 2; i < call.args.size(); ++i) {
      if (const CommandSpec* spec = table.Find(call.args[i])) {
        WriteCommandInfo(reply, *spec);
      } else {
        reply.Null();
      }
    }
  } else if (IsKeyword(sub, "DOCS")) {
    // No per-command documentation over the wire (docs/server.md has it);
    // an empty answer makes redis-cli fall back to its built-in help.
    reply.MapHeader(0);
  } else {
    reply.Error(absl::StrCat("ERR unknown subcommand ", Quote(sub),
                             " for 'command'; try COUNT, LIST, INFO or DOCS"));
  }
}

}  // namespace

absl::Status AddConnectionCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"PING", -1, {"fast", "stale"}, 0, 0, 0, Ping},
      {"ECHO", 2, {"fast"}, 0, 0, 0, Echo},
      {"AUTH",
       -2,
       {"noscript", "loading", "stale", "fast", "no_auth"},
       0,
       0,
       0,
       Auth},
      {"HELLO", -1, {"noscript", "fast", "no_auth"}, 0, 0, 0, Hello},
      {"QUIT", -1, {"fast", "no_auth"}, 0, 0, 0, Quit},
      {"COMMAND", -1, {"loading", "stale"}, 0, 0, 0, Command},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return AddConfigCommands(table);
}

}  // namespace feedcore::server
