#include "keyspace_commands.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
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

// RENAME and RENAMENX: O(1) in the set's size (LeaderboardStore::Rename),
// run alone so that no command sees the key half moved. Renaming a key to
// itself touches no WATCH, as in Redis.
void RenameKey(CommandCall& call, bool only_if_absent) {
  absl::StatusOr<bool> renamed =
      call.server->boards->Rename(call.args[1], call.args[2], only_if_absent);
  if (!renamed.ok()) return ReplyError(call, renamed.status());
  call.changed_nothing = !*renamed || call.args[1] == call.args[2];
  if (only_if_absent) return call.reply->Integer(*renamed ? 1 : 0);
  call.reply->SimpleString("OK");
}

void Rename(CommandCall& call) { RenameKey(call, /*only_if_absent=*/false); }
void Renamenx(CommandCall& call) { RenameKey(call, /*only_if_absent=*/true); }

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

// Expiries are kept in engine-clock micros; the commands count in
// milliseconds, as Redis does, so that its rounding and its errors hold.
Micros NowMillis(const CommandCall& call) {
  return call.server->feeds->options().clock->Now() / 1000;
}

// EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT key time [NX|XX|GT|LT]:
// `unit_millis` is 1000 for seconds, `absolute` for the ...AT forms.
void ExpireGeneric(CommandCall& call, int64_t unit_millis, bool absolute) {
  absl::StatusOr<int64_t> value = ParseInt64(call.args[2], "time");
  if (!value.ok()) {
    call.reply->Error(kNotAnInteger);
    return;
  }
  bool nx = false, xx = false, gt = false, lt = false;
  for (size_t i = 3; i < call.args.size(); ++i) {
    const std::string& option = call.args[i];
    if (IsKeyword(option, "NX")) {
      nx = true;
    } else if (IsKeyword(option, "XX")) {
      xx = true;
    } else if (IsKeyword(option, "GT")) {
      gt = true;
    } else if (IsKeyword(option, "LT")) {
      lt = true;
    } else {
      call.reply->Error(absl::StrCat("ERR Unsupported option ", option));
      return;
    }
  }
  if (nx && (xx || gt || lt)) {
    call.reply->Error(
        "ERR NX and XX, GT or LT options at the same time are not "
        "compatible");
    return;
  }
  if (gt && lt) {
    call.reply->Error(
        "ERR GT and LT options at the same time are not compatible");
    return;
  }
  const Micros now_millis = NowMillis(call);
  int64_t when_millis = 0;
  int64_t deadline = 0;
  if (__builtin_mul_overflow(*value, unit_millis, &when_millis) ||
      (!absolute &&
       __builtin_add_overflow(when_millis, now_millis, &when_millis)) ||
      __builtin_mul_overflow(when_millis, int64_t{1000}, &deadline)) {
    call.reply->Error(absl::StrCat("ERR invalid expire time in '",
                                   absl::AsciiStrToLower(call.args[0]),
                                   "' command"));
    return;
  }
  LeaderboardStore& boards = *call.server->boards;
  const std::optional<Micros> current = boards.ExpiryOf(call.args[1]);
  const bool has_expiry = current.has_value() && *current > 0;
  // No expiry counts as an infinite one, as in Redis.
  if (!current.has_value() || (nx && has_expiry) || (xx && !has_expiry) ||
      (gt && (!has_expiry || deadline <= *current)) ||
      (lt && has_expiry && deadline >= *current)) {
    call.changed_nothing = true;
    call.reply->Integer(0);
    return;
  }
  // A time already past deletes the key, as in Redis.
  if (when_millis <= now_millis) {
    absl::StatusOr<bool> deleted = boards.Delete(call.args[1]);
    if (!deleted.ok()) return ReplyError(call, deleted.status());
    call.reply->Integer(1);
    return;
  }
  // Deadlines of 0 mean "none"; a time after the epoch is never 0.
  absl::StatusOr<bool> set = boards.SetExpiry(call.args[1], deadline);
  if (!set.ok()) return ReplyError(call, set.status());
  call.changed_nothing = !*set;
  call.reply->Integer(*set ? 1 : 0);
}

void Expire(CommandCall& call) { ExpireGeneric(call, 1000, false); }
void Pexpire(CommandCall& call) { ExpireGeneric(call, 1, false); }
void Expireat(CommandCall& call) { ExpireGeneric(call, 1000, true); }
void Pexpireat(CommandCall& call) { ExpireGeneric(call, 1, true); }

// TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 for a missing key, -1 for one
// without expiry.
void TimeToLive(CommandCall& call, bool millis, bool absolute) {
  const std::optional<Micros> at = call.server->boards->ExpiryOf(call.args[1]);
  if (!at.has_value()) return call.reply->Integer(-2);
  if (*at == 0) return call.reply->Integer(-1);
  const int64_t at_millis = *at / 1000;
  if (absolute) {
    return call.reply->Integer(millis ? at_millis : at_millis / 1000);
  }
  const int64_t left = std::max<int64_t>(at_millis - NowMillis(call), 0);
  call.reply->Integer(millis ? left : (left + 500) / 1000);
}

void Ttl(CommandCall& call) { TimeToLive(call, false, false); }
void Pttl(CommandCall& call) { TimeToLive(call, true, false); }
void Expiretime(CommandCall& call) { TimeToLive(call, false, true); }
void Pexpiretime(CommandCall& call) { TimeToLive(call, true, true); }

void Persist(CommandCall& call) {
  LeaderboardStore& boards = *call.server->boards;
  const std::optional<Micros> at = boards.ExpiryOf(call.args[1]);
  if (!at.has_value() || *at == 0) {
    call.changed_nothing = true;
    return call.reply->Integer(0);
  }
  absl::StatusOr<bool> cleared = boards.SetExpiry(call.args[1], 0);
  if (!cleared.ok()) return ReplyError(call, cleared.status());
  call.changed_nothing = !*cleared;
  call.reply->Integer(*cleared ? 1 : 0);
}

}  // namespace

absl::Status AddKeyspaceCommands(CommandTable& table) {
  std::vector<CommandSpec> specs = {
      {"DEL", -2, {"write"}, 1, -1, 1, Del},
      {"UNLINK", -2, {"write", "fast"}, 1, -1, 1, Del},
      {"EXISTS", -2, {"readonly", "fast"}, 1, -1, 1, Exists},
      {"TYPE", 2, {"readonly", "fast"}, 1, 1, 1, Type},
      {"RENAME", 3, {"write"}, 1, 2, 1, Rename, /*exclusive=*/true},
      {"RENAMENX", 3, {"write", "fast"}, 1, 2, 1, Renamenx, /*exclusive=*/true},
      {"DBSIZE", 1, {"readonly", "fast"}, 0, 0, 0, Dbsize},
      {"KEYS", 2, {"readonly"}, 0, 0, 0, Keys},
      {"SCAN", -2, {"readonly"}, 0, 0, 0, Scan},
      {"FLUSHDB", -1, {"write"}, 0, 0, 0, Flush, /*exclusive=*/true},
      {"FLUSHALL", -1, {"write"}, 0, 0, 0, Flush, /*exclusive=*/true},
      {"SELECT", 2, {"loading", "stale", "fast"}, 0, 0, 0, Select},
      {"TIME", 1, {"loading", "stale", "fast"}, 0, 0, 0, Time},
      {"WAIT", 3, {"noscript"}, 0, 0, 0, Wait},
      {"EXPIRE", -3, {"write", "fast"}, 1, 1, 1, Expire},
      {"PEXPIRE", -3, {"write", "fast"}, 1, 1, 1, Pexpire},
      {"EXPIREAT", -3, {"write", "fast"}, 1, 1, 1, Expireat},
      {"PEXPIREAT", -3, {"write", "fast"}, 1, 1, 1, Pexpireat},
      {"TTL", 2, {"readonly", "fast"}, 1, 1, 1, Ttl},
      {"PTTL", 2, {"readonly", "fast"}, 1, 1, 1, Pttl},
      {"EXPIRETIME", 2, {"readonly", "fast"}, 1, 1, 1, Expiretime},
      {"PEXPIRETIME", 2, {"readonly", "fast"}, 1, 1, 1, Pexpiretime},
      {"PERSIST", 2, {"write", "fast"}, 1, 1, 1, Persist},
  };
  for (CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(std::move(spec)); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
