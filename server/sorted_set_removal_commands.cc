// The sorted-set commands that take members out or pick them: ZPOPMIN,
// ZPOPMAX, ZMPOP, ZREMRANGEBYSCORE, ZREMRANGEBYRANK, ZREMRANGEBYLEX, and
// the reads ZRANDMEMBER and ZSCAN, with Redis 7's syntax and replies.
// Removals free names through the dictionary's pins (RemoveMembers); a
// member another client removed first is not reported as removed here.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "glob_match.h"
#include "leaderboard_commands.h"
#include "leaderboard_store.h"
#include "sorted_set_order.h"
#include "sorted_set_range.h"

namespace feedcore::server {
namespace {

// Sets of up to this many members, with names of up to
// kSmallNameBytes, are scanned whole by ZSCAN, as Redis scans its
// listpack-encoded sets (zset-max-listpack-entries and -value).
constexpr size_t kSmallSetMembers = 128;
constexpr size_t kSmallNameBytes = 64;

// Removes `entries` from `set` and returns those this call removed, in
// their order.
std::vector<NamedEntry> Remove(SortedSet& set, std::vector<NamedEntry> entries)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(set.choose_and_remove_mutex) {
  const std::vector<size_t> removed = RemoveEntries(set, entries);
  std::vector<NamedEntry> out;
  out.reserve(removed.size());
  for (size_t i : removed) out.push_back(std::move(entries[i]));
  return out;
}

// Pops up to `count` members from the low end (the high end when `max`).
absl::StatusOr<std::vector<NamedEntry>> Pop(SortedSet& set, uint64_t count,
                                            bool max) {
  internal::WriterLock choosing(&set.choose_and_remove_mutex);
  absl::StatusOr<std::vector<NamedEntry>> first =
      ReadOrdered(set, ScoreRange{}, max, 0, count);
  if (!first.ok()) return first.status();
  return Remove(set, *std::move(first));
}

// ZPOPMIN key [count] and ZPOPMAX.
void PopCommand(CommandCall& call, bool max) {
  if (call.args.size() > 3) return ReplySyntaxError(call, call.args[3]);
  uint64_t count = 1;
  const bool has_count = call.args.size() == 3;
  if (has_count) {
    absl::StatusOr<int64_t> parsed = ParseInt64(call.args[2], "count");
    if (!parsed.ok()) return ReplyError(call, parsed.status());
    if (*parsed < 0) {
      return call.reply->Error(absl::StrCat(
          "ERR value is out of range, must be positive: count ", *parsed));
    }
    count = static_cast<uint64_t>(*parsed);
  }
  std::shared_ptr<SortedSet> set = call.server->boards->Find(call.args[1]);
  if (set == nullptr || count == 0) {
    call.changed_nothing = true;
    return call.reply->ArrayHeader(0);
  }
  absl::StatusOr<std::vector<NamedEntry>> popped = Pop(*set, count, max);
  if (!popped.ok()) return ReplyError(call, popped.status());
  if (popped->empty()) call.changed_nothing = true;
  // RESP3 pairs member and score when a count was given, as Redis 7.
  if (has_count && call.reply->resp3()) {
    return ReplyEntries(call, *popped, /*with_scores=*/true);
  }
  call.reply->ArrayHeader(popped->size() * 2);
  for (const NamedEntry& entry : *popped) {
    call.reply->Bulk(entry.name);
    call.reply->Score(entry.score);
  }
}

void Zpopmin(CommandCall& call) { PopCommand(call, /*max=*/false); }
void Zpopmax(CommandCall& call) { PopCommand(call, /*max=*/true); }

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
void Zmpop(CommandCall& call) {
  absl::StatusOr<int64_t> numkeys = ParseInt64(call.args[1], "numkeys");
  if (!numkeys.ok()) return ReplyError(call, numkeys.status());
  if (*numkeys <= 0) {
    return call.reply->Error("ERR numkeys should be greater than 0");
  }
  // The keys, then MIN or MAX.
  if (static_cast<uint64_t>(*numkeys) > call.args.size() - 3) {
    return call.reply->Error(absl::StrCat(
        "ERR syntax error: numkeys is ", *numkeys, " but only ",
        call.args.size() - 3, " keys can follow before MIN or MAX"));
  }
  const size_t where = 2 + static_cast<size_t>(*numkeys);
  bool max = false;
  if (IsKeyword(call.args[where], "MAX")) {
    max = true;
  } else if (!IsKeyword(call.args[where], "MIN")) {
    return ReplySyntaxError(call, call.args[where]);
  }
  uint64_t count = 1;
  bool has_count = false;
  for (size_t i = where + 1; i < call.args.size(); ++i) {
    if (!has_count && IsKeyword(call.args[i], "COUNT") &&
        i + 1 < call.args.size()) {
      absl::StatusOr<int64_t> parsed = ParseInt64(call.args[i + 1], "count");
      if (!parsed.ok()) return ReplyError(call, parsed.status());
      if (*parsed <= 0) {
        return call.reply->Error("ERR count should be greater than 0");
      }
      count = static_cast<uint64_t>(*parsed);
      has_count = true;
      ++i;
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  for (size_t k = 2; k < where; ++k) {
    std::shared_ptr<SortedSet> set = call.server->boards->Find(call.args[k]);
    if (set == nullptr) continue;
    absl::StatusOr<std::vector<NamedEntry>> popped = Pop(*set, count, max);
    if (!popped.ok()) return ReplyError(call, popped.status());
    if (popped->empty()) continue;
    call.reply->ArrayHeader(2);
    call.reply->Bulk(call.args[k]);
    call.reply->ArrayHeader(popped->size());
    for (const NamedEntry& entry : *popped) {
      call.reply->ArrayHeader(2);
      call.reply->Bulk(entry.name);
      call.reply->Score(entry.score);
    }
    return;
  }
  call.changed_nothing = true;
  call.reply->NullArray();
}

// ZREMRANGEBYSCORE, ZREMRANGEBYRANK and ZREMRANGEBYLEX key min max.
void RemoveRange(CommandCall& call, RangeKind kind) {
  RangeQuery query;
  if (!ParseRangeQuery(call, 2, {.with_scores = false, .kind = kind}, query)) {
    return;
  }
  std::shared_ptr<SortedSet> set = call.server->boards->Find(call.args[1]);
  if (set == nullptr) {
    call.changed_nothing = true;
    return call.reply->Integer(0);
  }
  internal::WriterLock choosing(&set->choose_and_remove_mutex);
  // The members, not their order: names only where a tie group is cut.
  absl::StatusOr<std::vector<NamedEntry>> entries =
      RunRangeQuery(set.get(), query, Naming::kCutGroupsOnly);
  if (!entries.ok()) return ReplyError(call, entries.status());
  if (entries->empty()) {
    call.changed_nothing = true;
    return call.reply->Integer(0);
  }
  call.reply->Integer(
      static_cast<int64_t>(RemoveEntries(*set, *entries).size()));
}

void Zremrangebyscore(CommandCall& call) {
  RemoveRange(call, RangeKind::kScore);
}
void Zremrangebyrank(CommandCall& call) { RemoveRange(call, RangeKind::kRank); }
void Zremrangebylex(CommandCall& call) { RemoveRange(call, RangeKind::kLex); }

// ZRANDMEMBER key [count [WITHSCORES]]
void Zrandmember(CommandCall& call) {
  if (call.args.size() > 4) return ReplySyntaxError(call, call.args[4]);
  const bool has_count = call.args.size() >= 3;
  int64_t count = 1;
  bool with_scores = false;
  if (has_count) {
    absl::StatusOr<int64_t> parsed = ParseInt64(call.args[2], "count");
    if (!parsed.ok()) return ReplyError(call, parsed.status());
    count = *parsed;
    if (call.args.size() == 4) {
      if (!IsKeyword(call.args[3], "WITHSCORES")) {
        return ReplySyntaxError(call, call.args[3]);
      }
      with_scores = true;
    }
    // As Redis: |count| * 2 replies must fit.
    if (count < -(INT64_MAX / 2) || count > INT64_MAX / 2) {
      return call.reply->Error(absl::StrCat(
          "ERR value is out of range: count ", count, " must be from ",
          -(INT64_MAX / 2), " to ", INT64_MAX / 2));
    }
  }
  LeaderboardStore& store = *call.server->boards;
  std::shared_ptr<SortedSet> set = store.Find(call.args[1]);
  absl::StatusOr<std::vector<NamedEntry>> all =
      set == nullptr ? std::vector<NamedEntry>() : ReadAllUnordered(*set);
  if (!all.ok()) return ReplyError(call, all.status());
  std::vector<NamedEntry>& members = *all;
  if (!has_count) {
    if (members.empty()) return call.reply->Null();
    return call.reply->Bulk(members[store.Random(members.size())].name);
  }
  std::vector<NamedEntry> picked;
  if (count < 0 && !members.empty()) {
    // Repeats allowed: each pick independent.
    picked.reserve(static_cast<size_t>(-count));
    for (int64_t i = 0; i < -count; ++i) {
      picked.push_back(members[store.Random(members.size())]);
    }
  } else if (count > 0) {
    // Distinct: the first `count` of a partial shuffle.
    const size_t n =
        std::min<size_t>(static_cast<size_t>(count), members.size());
    for (size_t i = 0; i < n; ++i) {
      std::swap(members[i], members[i + store.Random(members.size() - i)]);
    }
    members.resize(n);
    picked = std::move(members);
  }
  ReplyEntries(call, picked, with_scores);
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]
void Zscan(CommandCall& call) {
  uint64_t cursor = 0;
  if (!absl::SimpleAtoi(call.args[2], &cursor)) {
    return call.reply->Error(
        absl::StrCat("ERR invalid cursor: ", Quote(call.args[2]),
                     " is not an unsigned integer"));
  }
  std::shared_ptr<SortedSet> set = call.server->boards->Find(call.args[1]);
  // As Redis: a missing key replies an empty scan before the options are
  // read.
  if (set == nullptr) {
    call.reply->ArrayHeader(2);
    call.reply->Bulk("0");
    return call.reply->ArrayHeader(0);
  }
  std::optional<std::string> pattern;
  size_t count = 10;
  for (size_t i = 3; i < call.args.size(); i += 2) {
    if (i + 1 >= call.args.size()) return ReplySyntaxError(call, call.args[i]);
    if (IsKeyword(call.args[i], "MATCH")) {
      pattern = call.args[i + 1];
    } else if (IsKeyword(call.args[i], "COUNT")) {
      absl::StatusOr<int64_t> parsed = ParseInt64(call.args[i + 1], "COUNT");
      if (!parsed.ok()) return ReplyError(call, parsed.status());
      if (*parsed < 1) return ReplySyntaxError(call, call.args[i + 1]);
      count = static_cast<size_t>(*parsed);
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  std::vector<NamedEntry> found;
  uint64_t next = 0;
  if (set != nullptr) {
    absl::StatusOr<size_t> size = set->board->Size();
    if (!size.ok()) return ReplyError(call, size.status());
    bool small = *size <= kSmallSetMembers;
    std::vector<NamedEntry> all;
    if (small) {
      absl::StatusOr<std::vector<NamedEntry>> ordered =
          ReadAllOrdered(*set, /*rev=*/false);
      if (!ordered.ok()) return ReplyError(call, ordered.status());
      all = *std::move(ordered);
      for (const NamedEntry& entry : all) {
        if (entry.name.size() > kSmallNameBytes) small = false;
      }
    }
    if (small) {
      // Whole, in order, cursor 0: what Redis does for a set this small.
      found = std::move(all);
    } else {
      // Cursors are dictionary slots: a member keeps its slot while it is
      // in the set, so one present for the whole scan is returned.
      std::vector<MemberId> ids;
      std::vector<std::string> names;
      next = set->members.ScanSlots(cursor, count, ids, names);
      for (size_t i = 0; i < ids.size(); ++i) {
        absl::StatusOr<int64_t> score = set->board->Score(ids[i]);
        if (!score.ok()) continue;  // pinned by a writer, not on the board
        found.push_back({std::move(names[i]), *score, ids[i]});
      }
    }
  }
  size_t kept = 0;
  for (const NamedEntry& entry : found) {
    if (!pattern.has_value() || GlobMatch(*pattern, entry.name)) ++kept;
  }
  call.reply->ArrayHeader(2);
  call.reply->Bulk(absl::StrCat(next));
  call.reply->ArrayHeader(kept * 2);
  for (const NamedEntry& entry : found) {
    if (pattern.has_value() && !GlobMatch(*pattern, entry.name)) continue;
    call.reply->Bulk(entry.name);
    // Scores as bulk strings in both protocols, as Redis's SCAN replies.
    call.reply->Bulk(absl::StrCat(entry.score));
  }
}

}  // namespace

absl::Status AddSortedSetRemovalCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"ZPOPMIN", -2, {"write", "fast"}, 1, 1, 1, Zpopmin},
      {"ZPOPMAX", -2, {"write", "fast"}, 1, 1, 1, Zpopmax},
      {"ZMPOP", -4, {"write", "movablekeys"}, 0, 0, 0, Zmpop},
      {"ZREMRANGEBYSCORE", 4, {"write"}, 1, 1, 1, Zremrangebyscore},
      {"ZREMRANGEBYRANK", 4, {"write"}, 1, 1, 1, Zremrangebyrank},
      {"ZREMRANGEBYLEX", 4, {"write"}, 1, 1, 1, Zremrangebylex},
      {"ZRANDMEMBER", -2, {"readonly"}, 1, 1, 1, Zrandmember},
      {"ZSCAN", -3, {"readonly"}, 1, 1, 1, Zscan},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
