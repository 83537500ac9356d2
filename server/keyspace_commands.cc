#include "keyspace_commands.h"

#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "glob_match.h"
#include "leaderboard_store.h"

namespace feedcore::server {
namespace {

// Redis's wording for a bad number, which clients recognize.
constexpr char kNotAnInteger[] = "ERR value is not an integer or out of range";
constexpr char kSyntaxError[] = "ERR syntax error";

// DEL and UNLINK: UNLINK's memory is freed at once too (dropping a board
// is cheap next to the command's round trip).
void Del(CommandCall& call) {
  int64_t deleted = 0;
  for (size_t i = 1; i < call.args.size(); ++i) {
    absl::StatusOr<bool> existed = call.server->boards->Delete(call.args[i]);
    if (!existed.ok()) return ReplyError(call, existed.status());
    if (*existed) ++deleted;
  }
  call.changed_nothing = deleted == 0;
  call.reply->Integer(deleted);
}

void Exists(CommandCall& call) {
  int64_t found = 0;
  for (size_t i = 1; i < call.args.size(); ++i) {
    if (call.server->boards->Exists(call.args[i])) ++found;
  }
  call.reply->Integer(found);
}

void Type(CommandCall& call) {
  call.reply->SimpleString(call.server->boards->Exists(call.args[1]) ? "zset"
                                                                     : "none");
}

void Dbsize(CommandCall& call) {
  call.reply->Integer(
      static_cast<int64_t>(call.server->boards->KeyNames().size()));
}

void Keys(CommandCall& call) {
  std::vector<std::string> names = call.server->boards->KeyNames();
  std::vector<std::string> matched;
  for (std::string& name : names) {
    if (GlobMatch(call.args[1], name)) matched.push_back(std::move(name));
  }
  call.reply->ArrayHeader(matched.size());
  for (const std::string& name : matched) call.reply->Bulk(name);
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
void Scan(CommandCall& call) {
  const std::string& text = call.args[1];
  uint64_t cursor = 0;
  const std::from_chars_result parsed =
      std::from_chars(text.data(), text.data() + text.size(), cursor);
  if (text.empty() || parsed.ec != std::errc() ||
      parsed.ptr != text.data() + text.size()) {
    call.reply->Error("ERR invalid cursor");
    return;
  }
  const std::string* pattern = nullptr;
  const std::string* type = nullptr;
  int64_t count = 10;
  for (size_t i = 2; i < call.args.size(); i += 2) {
    if (i + 1 >= call.args.size()) {
      call.reply->Error(kSyntaxError);
      return;
    }
    const std::string& value = call.args[i + 1];
    if (IsKeyword(call.args[i], "MATCH")) {
      pattern = &value;
    } else if (IsKeyword(call.args[i], "COUNT")) {
      absl::StatusOr<int64_t> n = ParseInt64(value, "COUNT");
      if (!n.ok()) {
        call.reply->Error(kNotAnInteger);
        return;
      }
      if (*n < 1) {
        call.reply->Error(kSyntaxError);
        return;
      }
      count = *n;
    } else if (IsKeyword(call.args[i], "TYPE")) {
      type = &value;
    } else {
      call.reply->Error(kSyntaxError);
      return;
    }
  }
  // Every key is a sorted set; any other type matches none (Redis, too,
  // answers an empty page for a type it has no key of).
  const bool type_matches = type == nullptr || IsKeyword(*type, "zset");
  std::vector<std::string> page;
  const uint64_t next = call.server->boards->Scan(
      cursor, static_cast<size_t>(count), [&](const std::string& key) {
        if (type_matches && (pattern == nullptr || GlobMatch(*pattern, key))) {
          page.push_back(key);
        }
      });
  call.reply->ArrayHeader(2);
  call.reply->Bulk(absl::StrCat(next));
  call.reply->ArrayHeader(page.size());
  for (const std::string& key : page) call.reply->Bulk(key);
}

// FLUSHDB [ASYNC|SYNC], FLUSHALL [ASYNC|SYNC]: both drop every sorted-set
// key (there is one database), synchronously either way.
void Flush(CommandCall& call) {
  if (call.args.size() > 2 ||
      (call.args.size() == 2 && !IsKeyword(call.args[1], "ASYNC") &&
       !IsKeyword(call.args[1], "SYNC"))) {
    call.reply->Error(kSyntaxError);
    return;
  }
  absl::StatusOr<size_t> deleted = call.server->boards->DeleteAll();
  // Even a partial flush changed keys.
  call.server->watched_keys->TouchAll();
  if (!deleted.ok()) return ReplyError(call, deleted.status());
  call.reply->SimpleString("OK");
}

void Select(CommandCall& call) {
  absl::StatusOr<int64_t> index = ParseInt64(call.args[1], "index");
  if (!index.ok()) {
    call.reply->Error(kNotAnInteger);
    return;
  }
  if (*index != 0) {
    call.reply->Error(
        "ERR DB index is out of range (feedcore-server has one database, 0)");
    return;
  }
  call.reply->SimpleString("OK");
}

// TIME: the engine's clock, which is also what FEED.PUBLISH's '*' takes.
void Time(CommandCall& call) {
  const Micros now = call.server->feeds->options().clock->Now();
  call.reply->ArrayHeader(2);
  call.reply->Bulk(absl::StrCat(now / 1'000'000));
  call.reply->Bulk(absl::StrCat(now % 1'000'000));
}

// WAIT numreplicas timeout: no replicas, so none acknowledges.
void Wait(CommandCall& call) {
  absl::StatusOr<int64_t> replicas = ParseInt64(call.args[1], "numreplicas");
  absl::StatusOr<int64_t> timeout = ParseInt64(call.args[2], "timeout");
  if (!replicas.ok() || !timeout.ok()) {
    call.reply->Error(kNotAnInteger);
    return;
  }
  if (*timeout < 0) {
    call.reply->Error("ERR timeout is negative");
    return;
  }
  call.reply->Integer(0);
}

}  // namespace

absl::Status AddKeyspaceCommands(CommandTable& table) {
  std::vector<CommandSpec> specs = {
      {"DEL", -2, {"write"}, 1, -1, 1, Del},
      {"UNLINK", -2, {"write", "fast"}, 1, -1, 1, Del},
      {"EXISTS", -2, {"readonly", "fast"}, 1, -1, 1, Exists},
      {"TYPE", 2, {"readonly", "fast"}, 1, 1, 1, Type},
      {"DBSIZE", 1, {"readonly", "fast"}, 0, 0, 0, Dbsize},
      {"KEYS", 2, {"readonly"}, 0, 0, 0, Keys},
      {"SCAN", -2, {"readonly"}, 0, 0, 0, Scan},
      {"FLUSHDB", -1, {"write"}, 0, 0, 0, Flush, /*exclusive=*/true},
      {"FLUSHALL", -1, {"write"}, 0, 0, 0, Flush, /*exclusive=*/true},
      {"SELECT", 2, {"loading", "stale", "fast"}, 0, 0, 0, Select},
      {"TIME", 1, {"loading", "stale", "fast"}, 0, 0, 0, Time},
      {"WAIT", 3, {"noscript"}, 0, 0, 0, Wait},
  };
  for (CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(std::move(spec)); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
