#include "session_commands.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "client_registry.h"
#include "server_config.h"

namespace feedcore::server {
namespace {

constexpr char kSyntaxError[] = "ERR syntax error";

// Redis's rule for names and library attributes: printable, no spaces.
bool PrintableWithoutSpaces(absl::string_view text) {
  for (const char c : text) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

ClientRegistry* Registry(const CommandCall& call) {
  return call.session->registration.registry();
}

void UpdateRecord(CommandCall& call,
                  absl::FunctionRef<void(ClientRecord&)> change) {
  if (ClientRegistry* registry = Registry(call)) {
    registry->Update(call.session->client_id, change);
  }
}

// One line of CLIENT LIST / CLIENT INFO, in Redis's field order, with the
// fields this server measures: qbuf is the unfinished command held,
// omem the replies not yet written (no fixed reply buffer: obl and oll
// are 0), argv-mem the running command's arguments and multi-mem the
// queued ones (the caller's own), tot-mem their sum. Fields Redis has for
// what this server lacks (fd, rbs, redir...) are left out.
std::string ClientLine(const CommandCall& call, const ClientRecord& record,
                       bool self) {
  const Micros now = call.server->feeds->options().clock->Now();
  const SessionState& session = *call.session;
  const int64_t multi =
      self && session.transaction.active
          ? static_cast<int64_t>(session.transaction.queued.size())
          : -1;
  uint64_t argv_bytes = 0;
  if (self) {
    for (const std::string& arg : call.args) argv_bytes += arg.size();
  }
  const uint64_t multi_bytes = self ? session.transaction.queued_bytes : 0;
  const ClientActivity* activity = record.activity.get();
  const int64_t last_command =
      activity != nullptr
          ? activity->last_command_at.load(std::memory_order_relaxed)
          : now;
  const uint64_t query_bytes =
      activity != nullptr
          ? activity->query_bytes.load(std::memory_order_relaxed)
          : 0;
  const uint64_t output_bytes =
      activity != nullptr
          ? activity->output_bytes.load(std::memory_order_relaxed)
          : 0;
  return absl::StrCat(
      "id=", record.id, " addr=", record.address,
      " laddr=", record.local_address, " name=", record.name,
      " age=", (now - record.connected_at) / 1'000'000,
      " idle=", std::max<int64_t>(now - last_command, 0) / 1'000'000,
      " flags=N db=0 sub=0 psub=0 ssub=0 multi=", multi, " qbuf=", query_bytes,
      " qbuf-free=0 argv-mem=", argv_bytes, " multi-mem=", multi_bytes,
      " obl=0 oll=0 omem=", output_bytes,
      " tot-mem=", query_bytes + output_bytes + argv_bytes + multi_bytes,
      " user=default resp=", record.protocol, " lib-name=", record.library_name,
      " lib-ver=", record.library_version, "\n");
}

ClientRecord SelfRecord(const CommandCall& call) {
  if (ClientRegistry* registry = Registry(call)) {
    ClientRecord record = registry->Find(call.session->client_id);
    if (record.id != 0) return record;
  }
  ClientRecord record;
  record.id = call.session->client_id;
  record.name = call.session->client_name;
  record.protocol = call.session->protocol;
  return record;
}

void ReplyWrongArity(CommandCall& call, absl::string_view sub) {
  call.reply->Error(absl::StrCat("ERR wrong number of arguments for 'client|",
                                 absl::AsciiStrToLower(sub), "' command"));
}

void List(CommandCall& call) {
  // CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id [id ...]]
  std::vector<int64_t> ids;
  bool normal = true;
  for (size_t i = 2; i < call.args.size(); ++i) {
    if (IsKeyword(call.args[i], "TYPE") && i + 1 < call.args.size()) {
      const std::string& type = call.args[++i];
      if (!IsKeyword(type, "normal") && !IsKeyword(type, "master") &&
          !IsKeyword(type, "replica") && !IsKeyword(type, "slave") &&
          !IsKeyword(type, "pubsub")) {
        call.reply->Error(absl::StrCat("ERR Unknown client type '", type, "'"));
        return;
      }
      normal = IsKeyword(type, "normal");
    } else if (IsKeyword(call.args[i], "ID") && i + 1 < call.args.size()) {
      for (++i; i < call.args.size(); ++i) {
        absl::StatusOr<int64_t> id = ParseInt64(call.args[i], "id");
        if (!id.ok() || *id <= 0) {
          call.reply->Error(absl::StrCat("ERR Invalid client ID"));
          return;
        }
        ids.push_back(*id);
      }
    } else {
      call.reply->Error(kSyntaxError);
      return;
    }
  }
  std::string lines;
  // Every client here is a normal one: no replicas, no subscribers yet.
  if (normal) {
    ClientRegistry* registry = Registry(call);
    std::vector<ClientRecord> records =
        registry != nullptr ? registry->List()
                            : std::vector<ClientRecord>{SelfRecord(call)};
    for (const ClientRecord& record : records) {
      if (!ids.empty() &&
          std::find(ids.begin(), ids.end(), record.id) == ids.end()) {
        continue;
      }
      lines += ClientLine(call, record, record.id == call.session->client_id);
    }
  }
  call.reply->VerbatimText(lines);
}

void Kill(CommandCall& call) {
  ClientRegistry* registry = Registry(call);
  std::vector<ClientRecord> records =
      registry != nullptr ? registry->List() : std::vector<ClientRecord>{};
  const int64_t self = call.session->client_id;
  // The old form, CLIENT KILL addr:port: OK or an error.
  if (call.args.size() == 3) {
    for (const ClientRecord& record : records) {
      if (record.address != call.args[2]) continue;
      if (record.id == self) {
        call.session->close_after_reply = true;
      } else if (record.close) {
        record.close();
      }
      call.reply->SimpleString("OK");
      return;
    }
    call.reply->Error("ERR No such client");
    return;
  }
  // The filter form: CLIENT KILL <filter> <value> ..., answering a count.
  int64_t id = 0;
  int64_t max_age = -1;
  const std::string* address = nullptr;
  const std::string* local_address = nullptr;
  bool skip_me = true, normal = true;
  for (size_t i = 2; i < call.args.size(); i += 2) {
    if (i + 1 >= call.args.size()) {
      call.reply->Error(kSyntaxError);
      return;
    }
    const std::string& filter = call.args[i];
    const std::string& value = call.args[i + 1];
    if (IsKeyword(filter, "ID")) {
      absl::StatusOr<int64_t> parsed = ParseInt64(value, "id");
      if (!parsed.ok() || *parsed <= 0) {
        call.reply->Error("ERR client-id should be greater than 0");
        return;
      }
      id = *parsed;
    } else if (IsKeyword(filter, "ADDR")) {
      address = &value;
    } else if (IsKeyword(filter, "LADDR")) {
      local_address = &value;
    } else if (IsKeyword(filter, "SKIPME")) {
      if (!IsKeyword(value, "yes") && !IsKeyword(value, "no")) {
        call.reply->Error(kSyntaxError);
        return;
      }
      skip_me = IsKeyword(value, "yes");
    } else if (IsKeyword(filter, "USER")) {
      if (value != "default") {
        call.reply->Error(absl::StrCat("ERR No such user '", value, "'"));
        return;
      }
    } else if (IsKeyword(filter, "TYPE")) {
      normal = IsKeyword(value, "normal");
    } else if (IsKeyword(filter, "MAXAGE")) {
      absl::StatusOr<int64_t> parsed = ParseInt64(value, "maxage");
      if (!parsed.ok()) {
        call.reply->Error(kSyntaxError);
        return;
      }
      max_age = *parsed;
    } else {
      call.reply->Error(kSyntaxError);
      return;
    }
  }
  const Micros now = call.server->feeds->options().clock->Now();
  int64_t killed = 0;
  for (const ClientRecord& record : records) {
    if (!normal || (id != 0 && record.id != id) ||
        (address != nullptr && record.address != *address) ||
        (local_address != nullptr && record.local_address != *local_address) ||
        (max_age >= 0 && (now - record.connected_at) / 1'000'000 < max_age) ||
        (skip_me && record.id == self)) {
      continue;
    }
    if (record.id == self) {
      call.session->close_after_reply = true;
    } else if (record.close) {
      record.close();
    }
    ++killed;
  }
  call.reply->Integer(killed);
}

void Help(CommandCall& call) {
  const char* const lines[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options: ID ADDR LADDR SKIPME USER TYPE MAXAGE",
      "LIST [TYPE <type>] [ID <id> [<id> ...]]",
      "    Return information about client connections.",
      "NO-EVICT (ON|OFF)",
      "    Accepted; this server evicts nothing.",
      "NO-TOUCH (ON|OFF)",
      "    Accepted; this server keeps no LRU data.",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "SETINFO <LIB-NAME|LIB-VER> <value>",
      "    Set client library name or version.",
      "HELP",
      "    Print this help.",
  };
  call.reply->ArrayHeader(std::size(lines));
  for (const char* line : lines) call.reply->SimpleString(line);
}

bool OnOrOff(CommandCall& call, bool& on) {
  if (IsKeyword(call.args[2], "ON")) {
    on = true;
  } else if (IsKeyword(call.args[2], "OFF")) {
    on = false;
  } else {
    call.reply->Error(kSyntaxError);
    return false;
  }
  return true;
}

void Client(CommandCall& call) {
  const std::string& sub = call.args[1];
  const size_t count = call.args.size();
  SessionState& session = *call.session;
  if (IsKeyword(sub, "ID") || IsKeyword(sub, "GETNAME") ||
      IsKeyword(sub, "INFO") || IsKeyword(sub, "HELP")) {
    if (count != 2) return ReplyWrongArity(call, sub);
    if (IsKeyword(sub, "ID")) {
      call.reply->Integer(session.client_id);
    } else if (IsKeyword(sub, "GETNAME")) {
      if (session.client_name.empty()) {
        call.reply->Null();
      } else {
        call.reply->Bulk(session.client_name);
      }
    } else if (IsKeyword(sub, "INFO")) {
      call.reply->VerbatimText(
          ClientLine(call, SelfRecord(call), /*self=*/true));
    } else {
      Help(call);
    }
  } else if (IsKeyword(sub, "SETNAME")) {
    if (count != 3) return ReplyWrongArity(call, sub);
    const std::string& name = call.args[2];
    if (!PrintableWithoutSpaces(name)) {
      call.reply->Error(
          "ERR Client names cannot contain spaces, newlines or special "
          "characters.");
      return;
    }
    session.client_name = name;
    UpdateRecord(call, [&](ClientRecord& record) { record.name = name; });
    call.reply->SimpleString("OK");
  } else if (IsKeyword(sub, "SETINFO")) {
    if (count != 4) return ReplyWrongArity(call, sub);
    const std::string& attribute = call.args[2];
    const std::string& value = call.args[3];
    const bool is_name = IsKeyword(attribute, "LIB-NAME");
    if (!is_name && !IsKeyword(attribute, "LIB-VER")) {
      call.reply->Error(
          absl::StrCat("ERR Unrecognized option '", attribute, "'"));
      return;
    }
    if (!PrintableWithoutSpaces(value)) {
      call.reply->Error(absl::StrCat(
          "ERR ", is_name ? "lib-name" : "lib-ver",
          " cannot contain spaces, newlines or special characters."));
      return;
    }
    UpdateRecord(call, [&](ClientRecord& record) {
      (is_name ? record.library_name : record.library_version) = value;
    });
    call.reply->SimpleString("OK");
  } else if (IsKeyword(sub, "LIST")) {
    List(call);
  } else if (IsKeyword(sub, "KILL")) {
    if (count < 3) return ReplyWrongArity(call, sub);
    Kill(call);
  } else if (IsKeyword(sub, "REPLY")) {
    if (count != 3) return ReplyWrongArity(call, sub);
    // The dispatcher drops the replies (SessionState::replies_off and
    // skip_replies); OFF and SKIP have none of their own either.
    if (IsKeyword(call.args[2], "ON")) {
      session.replies_off = false;
      call.reply->SimpleString("OK");
    } else if (IsKeyword(call.args[2], "OFF")) {
      session.replies_off = true;
      call.reply->SimpleString("OK");
    } else if (IsKeyword(call.args[2], "SKIP")) {
      session.skip_replies = 2;  // this one and the next command's
      call.reply->SimpleString("OK");
    } else {
      call.reply->Error(kSyntaxError);
    }
  } else if (IsKeyword(sub, "NO-EVICT") || IsKeyword(sub, "NO-TOUCH")) {
    if (count != 3) return ReplyWrongArity(call, sub);
    bool on = false;
    if (OnOrOff(call, on)) call.reply->SimpleString("OK");
  } else {
    call.reply->Error(
        absl::StrCat("ERR unknown subcommand '", sub, "'. Try CLIENT HELP."));
  }
}

// RESET: the connection as new, but still connected: no transaction or
// watches, RESP2, no name, replies on, and not authenticated if the
// server has a password.
void Reset(CommandCall& call) {
  SessionState& session = *call.session;
  session.transaction.Reset();
  session.protocol = 2;
  call.reply->set_protocol(2);
  session.client_name.clear();
  session.replies_off = false;
  session.skip_replies = 0;
  session.authenticated = !call.server->config->password_required();
  session.pubsub.Clear();
  UpdateRecord(call, [](ClientRecord& record) {
    record.name.clear();
    record.protocol = 2;
  });
  call.reply->SimpleString("RESET");
}

}  // namespace

absl::Status AddSessionCommands(CommandTable& table) {
  std::vector<CommandSpec> specs = {
      {"CLIENT",
       -2,
       {"admin", "noscript", "loading", "stale"},
       0,
       0,
       0,
       Client},
      {"RESET",
       1,
       {"noscript", "loading", "stale", "fast", "no_auth"},
       0,
       0,
       0,
       Reset},
  };
  for (CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(std::move(spec)); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
