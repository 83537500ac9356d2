#include "leaderboard_commands.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "feedcore/leaderboard.h"
#include "leaderboard_store.h"

namespace feedcore::server {
namespace {

absl::StatusOr<int64_t> ParseScore(absl::string_view text,
                                   absl::string_view what) {
  absl::StatusOr<int64_t> score = ParseInt64(text, what);
  if (!score.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(score.status().message(),
                     " (feedcore leaderboards hold int64 scores)"));
  }
  return score;
}

std::shared_ptr<SortedSet> FindSet(CommandCall& call) {
  return call.server->boards->Find(call.args[1]);
}

// The key's set, created if absent; replies with the error and returns null
// if the key is not acceptable.
std::shared_ptr<SortedSet> GetOrCreateSet(CommandCall& call) {
  absl::StatusOr<std::shared_ptr<SortedSet>> set =
      call.server->boards->GetOrCreate(call.args[1]);
  if (!set.ok()) {
    ReplyError(call, set.status());
    return nullptr;
  }
  return *set;
}

struct ZaddFlags {
  bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
};

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
void Zadd(CommandCall& call) {
  ZaddFlags flags;
  size_t i = 2;
  for (; i < call.args.size(); ++i) {
    const std::string& word = call.args[i];
    if (IsKeyword(word, "NX")) {
      flags.nx = true;
    } else if (IsKeyword(word, "XX")) {
      flags.xx = true;
    } else if (IsKeyword(word, "GT")) {
      flags.gt = true;
    } else if (IsKeyword(word, "LT")) {
      flags.lt = true;
    } else if (IsKeyword(word, "CH")) {
      flags.ch = true;
    } else if (IsKeyword(word, "INCR")) {
      flags.incr = true;
    } else {
      break;
    }
  }
  const size_t pairs_start = i;
  const size_t rest = call.args.size() - pairs_start;
  if (rest == 0 || rest % 2 != 0) {
    call.reply->Error(
        "ERR syntax error: ZADD needs score member pairs after its options");
    return;
  }
  if (flags.nx && flags.xx) {
    call.reply->Error(
        "ERR XX and NX options at the same time are not compatible");
    return;
  }
  if ((flags.gt && flags.lt) || (flags.gt && flags.nx) ||
      (flags.lt && flags.nx)) {
    call.reply->Error(
        "ERR GT, LT, and/or NX options at the same time are not compatible");
    return;
  }
  if (flags.incr && rest != 2) {
    call.reply->Error(
        "ERR INCR option supports a single increment-element pair");
    return;
  }
  // Every score is checked before anything changes.
  std::vector<int64_t> scores;
  scores.reserve(rest / 2);
  for (size_t p = pairs_start; p < call.args.size(); p += 2) {
    absl::StatusOr<int64_t> score = ParseScore(call.args[p], "score");
    if (!score.ok()) return ReplyError(call, score.status());
    scores.push_back(*score);
  }
  std::shared_ptr<SortedSet> set = GetOrCreateSet(call);
  if (set == nullptr) return;
  Leaderboard& board = *set->board;

  int64_t added = 0;
  int64_t changed = 0;
  std::optional<int64_t> incr_result;
  for (size_t n = 0; n < scores.size(); ++n) {
    const std::string& name = call.args[pairs_start + 2 * n + 1];
    std::lock_guard lock(set->LockFor(name));
    // XX never adds, so it must not grow the dictionary either.
    std::optional<MemberId> id;
    if (flags.xx) {
      id = set->members.Find(name);
    } else {
      absl::StatusOr<MemberId> interned = set->members.Intern(name);
      if (!interned.ok()) return ReplyError(call, interned.status());
      id = *interned;
    }
    std::optional<int64_t> current;
    if (id.has_value()) {
      if (absl::StatusOr<int64_t> s = board.Score(*id); s.ok()) current = *s;
    }
    if ((flags.nx && current.has_value()) ||
        (flags.xx && !current.has_value())) {
      continue;
    }
    // Every path below that does not put a new member on the board frees
    // the name it was just given; only members on the board keep names.
    int64_t target = scores[n];
    if (flags.incr && current.has_value() &&
        __builtin_add_overflow(*current, scores[n], &target)) {
      call.reply->Error(
          absl::StrCat("ERR increment would overflow the int64 score of ",
                       Quote(name), " (", *current, " + ", scores[n], ")"));
      return;
    }
    if (current.has_value() && ((flags.gt && target <= *current) ||
                                (flags.lt && target >= *current))) {
      continue;
    }
    if (current.has_value() && target == *current) {
      if (flags.incr) incr_result = target;
      continue;
    }
    if (absl::Status s = board.Set(*id, target); !s.ok()) {
      if (!current.has_value()) set->members.Release(name);
      return ReplyError(call, s);
    }
    if (current.has_value()) {
      ++changed;
    } else {
      ++added;
    }
    if (flags.incr) incr_result = target;
  }
  if (flags.incr) {
    if (incr_result.has_value()) {
      call.reply->Score(*incr_result);
    } else {
      call.reply->Null();  // NX/XX/GT/LT stopped the increment
    }
    return;
  }
  call.reply->Integer(flags.ch ? added + changed : added);
}

// ZINCRBY key increment member
void Zincrby(CommandCall& call) {
  absl::StatusOr<int64_t> delta = ParseScore(call.args[2], "increment");
  if (!delta.ok()) return ReplyError(call, delta.status());
  std::shared_ptr<SortedSet> set = GetOrCreateSet(call);
  if (set == nullptr) return;
  const std::string& name = call.args[3];
  std::lock_guard lock(set->LockFor(name));
  absl::StatusOr<MemberId> id = set->members.Intern(name);
  if (!id.ok()) return ReplyError(call, id.status());
  absl::StatusOr<int64_t> score = set->board->Increment(*id, *delta);
  if (!score.ok()) {
    // A failed call changed nothing: if the member is not on the board, it
    // was new here, and only members keep names.
    if (!set->board->Score(*id).ok()) set->members.Release(name);
    return ReplyError(call, score.status());
  }
  call.reply->Score(*score);
}

// The id of the member named args[2] of the key args[1], if both exist.
std::optional<MemberId> FindMember(const SortedSet* set,
                                   const std::string& name) {
  if (set == nullptr) return std::nullopt;
  return set->members.Find(name);
}

// ZSCORE key member
void Zscore(CommandCall& call) {
  std::shared_ptr<SortedSet> set = FindSet(call);
  std::optional<MemberId> id = FindMember(set.get(), call.args[2]);
  if (!id.has_value()) return call.reply->Null();
  absl::StatusOr<int64_t> score = set->board->Score(*id);
  if (!score.ok()) return call.reply->Null();
  call.reply->Score(*score);
}

// ZREVRANK key member: 0 is the highest score, which is the board's rank.
void Zrevrank(CommandCall& call) {
  std::shared_ptr<SortedSet> set = FindSet(call);
  std::optional<MemberId> id = FindMember(set.get(), call.args[2]);
  if (!id.has_value()) return call.reply->Null();
  absl::StatusOr<uint64_t> rank = set->board->Rank(*id);
  if (!rank.ok()) return call.reply->Null();
  call.reply->Integer(static_cast<int64_t>(*rank));
}

// ZRANK key member: 0 is the lowest score. The board ranks from the top,
// so this is size - 1 - rank, from two reads (a concurrent write between
// them can shift the answer by the members it added or removed).
void Zrank(CommandCall& call) {
  std::shared_ptr<SortedSet> set = FindSet(call);
  std::optional<MemberId> id = FindMember(set.get(), call.args[2]);
  if (!id.has_value()) return call.reply->Null();
  absl::StatusOr<uint64_t> rank = set->board->Rank(*id);
  if (!rank.ok()) return call.reply->Null();
  absl::StatusOr<size_t> size = set->board->Size();
  if (!size.ok()) return ReplyError(call, size.status());
  call.reply->Integer(
      static_cast<int64_t>(*size > *rank ? *size - 1 - *rank : 0));
}

// ZREM key member [member ...]
void Zrem(CommandCall& call) {
  std::shared_ptr<SortedSet> set = FindSet(call);
  int64_t removed = 0;
  for (size_t i = 2; set != nullptr && i < call.args.size(); ++i) {
    std::lock_guard lock(set->LockFor(call.args[i]));
    std::optional<MemberId> id = set->members.Find(call.args[i]);
    if (id.has_value() && set->board->Remove(*id).ok()) {
      // Off the board, so the name goes too: the dictionary holds only
      // members, and its memory follows them.
      set->members.Release(call.args[i]);
      ++removed;
    }
  }
  call.reply->Integer(removed);
}

// ZCARD key
void Zcard(CommandCall& call) {
  std::shared_ptr<SortedSet> set = FindSet(call);
  if (set == nullptr) return call.reply->Integer(0);
  absl::StatusOr<size_t> size = set->board->Size();
  if (!size.ok()) return ReplyError(call, size.status());
  call.reply->Integer(static_cast<int64_t>(*size));
}

// Ranks [start, stop] (0 = first in `order`) of the board, with Redis's
// index rules: negative indices count from the end, out-of-range ends are
// clamped, an empty range gives nothing. Fails only when the board cannot
// tell its size.
absl::StatusOr<std::vector<LeaderboardEntry>> ReadRange(
    const Leaderboard& board, int64_t start, int64_t stop,
    LeaderboardOrder order) {
  std::vector<LeaderboardEntry> entries;
  // Only negative indices need the size (a read of every partition); the
  // end of the board clamps the others by itself.
  if (start < 0 || stop < 0) {
    absl::StatusOr<size_t> size = board.Size();
    if (!size.ok()) return size.status();
    if (start < 0) start += static_cast<int64_t>(*size);
    if (stop < 0) stop += static_cast<int64_t>(*size);
  }
  start = std::max<int64_t>(start, 0);
  if (start > stop) return entries;
  const uint64_t end = static_cast<uint64_t>(stop) + 1;  // exclusive rank
  const size_t page_size = board.options().max_page_size;
  // The top of the board is one TopK call: one consistent snapshot.
  if (order == LeaderboardOrder::kBestFirst && end <= page_size) {
    absl::StatusOr<std::vector<LeaderboardEntry>> top =
        board.TopK(static_cast<size_t>(end));
    if (top.ok() && static_cast<size_t>(start) < top->size()) {
      entries.assign(top->begin() + start, top->end());
    }
    return entries;
  }
  // Elsewhere the board has no seek by rank: walk pages from the chosen end
  // and skip the first `start` entries. Each page is its own snapshot.
  LeaderboardReadOptions read;
  read.order = order;
  uint64_t rank = 0;  // of the next entry read
  while (rank < end) {
    read.limit = static_cast<size_t>(std::min<uint64_t>(page_size, end - rank));
    absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
    if (!page.ok()) break;
    for (const LeaderboardEntry& entry : page->entries) {
      if (rank >= static_cast<uint64_t>(start)) entries.push_back(entry);
      ++rank;
    }
    if (page->next_cursor.empty() || page->entries.empty()) break;
    read.cursor = std::move(page->next_cursor);
  }
  return entries;
}

void WriteRange(CommandCall& call, const SortedSet* set,
                const std::vector<LeaderboardEntry>& entries,
                bool with_scores) {
  RespWriter& reply = *call.reply;
  // RESP3 pairs each member with its score, as Redis 7 does; RESP2
  // alternates them in one flat array.
  const bool pairs = with_scores && reply.resp3();
  // A member removed between the board read and this lookup has no name
  // any more: it is left out, as if the read came after the removal.
  const std::vector<std::optional<std::string>> names =
      set->members.NamesOf(entries);
  size_t count = 0;
  for (const std::optional<std::string>& name : names) {
    if (name.has_value()) ++count;
  }
  reply.ArrayHeader(with_scores && !pairs ? count * 2 : count);
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!names[i].has_value()) continue;
    if (pairs) reply.ArrayHeader(2);
    reply.Bulk(*names[i]);
    if (with_scores) reply.Score(entries[i].score);
  }
}

// ZRANGE key start stop [REV] [WITHSCORES] and
// ZREVRANGE key start stop [WITHSCORES].
void RangeCommand(CommandCall& call, bool rev) {
  absl::StatusOr<int64_t> start = ParseInt64(call.args[2], "start");
  if (!start.ok()) return ReplyError(call, start.status());
  absl::StatusOr<int64_t> stop = ParseInt64(call.args[3], "stop");
  if (!stop.ok()) return ReplyError(call, stop.status());
  bool with_scores = false;
  for (size_t i = 4; i < call.args.size(); ++i) {
    const std::string& word = call.args[i];
    if (IsKeyword(word, "WITHSCORES")) {
      with_scores = true;
    } else if (IsKeyword(word, "REV") &&
               !IsKeyword(call.args[0], "ZREVRANGE")) {
      rev = true;
    } else if (IsKeyword(word, "BYSCORE") || IsKeyword(word, "BYLEX") ||
               IsKeyword(word, "LIMIT")) {
      call.reply->Error(absl::StrCat(
          "ERR ", AsciiUpper(word),
          " is not supported: feedcore leaderboards are read by rank "
          "(ZRANGE key start stop [REV] [WITHSCORES])"));
      return;
    } else {
      return ReplySyntaxError(call, word);
    }
  }
  std::shared_ptr<SortedSet> set = FindSet(call);
  if (set == nullptr) {
    call.reply->ArrayHeader(0);
    return;
  }
  absl::StatusOr<std::vector<LeaderboardEntry>> entries = ReadRange(
      *set->board, *start, *stop,
      rev ? LeaderboardOrder::kBestFirst : LeaderboardOrder::kWorstFirst);
  if (!entries.ok()) return ReplyError(call, entries.status());
  WriteRange(call, set.get(), *entries, with_scores);
}

void Zrange(CommandCall& call) { RangeCommand(call, /*rev=*/false); }
void Zrevrange(CommandCall& call) { RangeCommand(call, /*rev=*/true); }

// DEL key [key ...]: keys are sorted sets only.
void Del(CommandCall& call) {
  int64_t deleted = 0;
  for (size_t i = 1; i < call.args.size(); ++i) {
    absl::StatusOr<bool> existed = call.server->boards->Delete(call.args[i]);
    if (!existed.ok()) return ReplyError(call, existed.status());
    if (*existed) ++deleted;
  }
  call.reply->Integer(deleted);
}

}  // namespace

absl::Status AddLeaderboardCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"ZADD", -4, {"write", "denyoom", "fast"}, 1, 1, 1, Zadd},
      {"ZINCRBY", 4, {"write", "denyoom", "fast"}, 1, 1, 1, Zincrby},
      {"ZSCORE", 3, {"readonly", "fast"}, 1, 1, 1, Zscore},
      {"ZRANK", 3, {"readonly", "fast"}, 1, 1, 1, Zrank},
      {"ZREVRANK", 3, {"readonly", "fast"}, 1, 1, 1, Zrevrank},
      {"ZRANGE", -4, {"readonly"}, 1, 1, 1, Zrange},
      {"ZREVRANGE", -4, {"readonly"}, 1, 1, 1, Zrevrange},
      {"ZREM", -3, {"write", "fast"}, 1, 1, 1, Zrem},
      {"ZCARD", 2, {"readonly", "fast"}, 1, 1, 1, Zcard},
      {"DEL", -2, {"write"}, 1, -1, 1, Del},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
