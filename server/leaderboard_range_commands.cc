// The sorted-set range reads: ZRANGE (by rank or BYSCORE, REV, LIMIT),
// ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE and ZCOUNT, with Redis 7's
// syntax. Each is served by LeaderboardReadOptions::offset and ::range, so
// a page deep in the board costs what a page at the top does.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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
#include "feedcore/leaderboard.h"
#include "leaderboard_commands.h"
#include "leaderboard_store.h"

namespace feedcore::server {
namespace {

// A score range as the client wrote it, taken to the board's int64 scores.
// `empty`: no int64 score can be in it (a minimum above the int64 range,
// "(+inf"...), so the board need not be asked.
struct ScoreBounds {
  ScoreRange range;
  bool empty = false;
};

// One bound: "-inf", "+inf", "inf", a number, or "(" and one of those for
// an exclusive bound. Scores are integers, so a bound that is not one is
// rounded inward, which selects exactly the same scores: "(5.5" and "5.5"
// as a minimum are both [6, as a maximum both 5]. Sets `empty` when no
// int64 is on the right side of it.
absl::Status ParseBound(absl::string_view text, absl::string_view what,
                        bool is_min, ScoreBounds& bounds) {
  const bool exclusive = !text.empty() && text[0] == '(';
  const absl::string_view number = exclusive ? text.substr(1) : text;
  int64_t value = 0;
  // Exact first: a double cannot hold every int64.
  if (absl::SimpleAtoi(number, &value) && !number.empty() &&
      number.find_first_of(" \t\n\r\v\f") == absl::string_view::npos) {
    (is_min ? bounds.range.min : bounds.range.max) = value;
    (is_min ? bounds.range.min_exclusive : bounds.range.max_exclusive) =
        exclusive;
    return absl::OkStatus();
  }
  double d = 0;
  if (number.empty() ||
      number.find_first_of(" \t\n\r\v\f") != absl::string_view::npos ||
      !absl::SimpleAtod(number, &d) || std::isnan(d)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "min or max is not a float: ", what,
        " must be a number, -inf or +inf, optionally after '(' for an "
        "exclusive bound, got ",
        Quote(text)));
  }
  // The integer bound selecting the same integers, inclusive.
  const double inward = is_min ? (exclusive ? std::floor(d) + 1 : std::ceil(d))
                               : (exclusive ? std::ceil(d) - 1 : std::floor(d));
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (is_min) {
    bounds.range.min_exclusive = false;
    if (inward >= kTwoTo63) {
      bounds.empty = true;
    } else {
      bounds.range.min = inward < -kTwoTo63
                             ? std::numeric_limits<int64_t>::min()
                             : static_cast<int64_t>(inward);
    }
  } else {
    bounds.range.max_exclusive = false;
    if (inward < -kTwoTo63) {
      bounds.empty = true;
    } else {
      bounds.range.max = inward >= kTwoTo63
                             ? std::numeric_limits<int64_t>::max()
                             : static_cast<int64_t>(inward);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ScoreBounds> ParseBounds(absl::string_view min,
                                        absl::string_view max) {
  ScoreBounds bounds;
  if (absl::Status s = ParseBound(min, "min", /*is_min=*/true, bounds);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ParseBound(max, "max", /*is_min=*/false, bounds);
      !s.ok()) {
    return s;
  }
  return bounds;
}

// Up to `count` entries of `board` (all with nullopt) in `order`, within
// `range`, after skipping `offset` of them. One ReadPage of up to
// max_page_size entries, then further pages from its cursor: a range of at
// most max_page_size entries is one snapshot of the board, a longer one a
// snapshot per page.
absl::StatusOr<std::vector<LeaderboardEntry>> ReadEntries(
    const Leaderboard& board, LeaderboardOrder order, const ScoreRange& range,
    uint64_t offset, std::optional<uint64_t> count) {
  std::vector<LeaderboardEntry> entries;
  uint64_t remaining = count.value_or(std::numeric_limits<uint64_t>::max());
  const size_t page_size = board.options().max_page_size;
  LeaderboardReadOptions read;
  read.order = order;
  read.range = range;
  read.offset = offset;
  while (remaining > 0) {
    read.limit = static_cast<size_t>(std::min<uint64_t>(page_size, remaining));
    absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
    if (!page.ok()) return page.status();
    remaining -= std::min<uint64_t>(remaining, page->entries.size());
    if (entries.empty()) {
      entries = std::move(page->entries);
    } else {
      entries.insert(entries.end(), page->entries.begin(), page->entries.end());
    }
    if (page->next_cursor.empty()) break;
    read.cursor = std::move(page->next_cursor);
    read.offset = 0;
  }
  return entries;
}

// Ranks [start, stop] (0 = first in `order`) with Redis's index rules:
// negative indices count from the end, out-of-range ends are clamped, an
// empty range gives nothing. The page starts at `start` by the board's
// offset, never by reading the ranks before it.
absl::StatusOr<std::vector<LeaderboardEntry>> ReadRanks(
    const Leaderboard& board, int64_t start, int64_t stop,
    LeaderboardOrder order) {
  // Only negative indices need the size (a read of every partition, a
  // snapshot of its own); the end of the board clamps the others by itself.
  if (start < 0 || stop < 0) {
    absl::StatusOr<size_t> size = board.Size();
    if (!size.ok()) return size.status();
    if (start < 0) start += static_cast<int64_t>(*size);
    if (stop < 0) stop += static_cast<int64_t>(*size);
  }
  start = std::max<int64_t>(start, 0);
  if (start > stop) return std::vector<LeaderboardEntry>();
  const uint64_t count =
      static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) + 1;
  return ReadEntries(board, order, ScoreRange{}, static_cast<uint64_t>(start),
                     count);
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

// What a range command asks for, once its words are parsed.
struct RangeRequest {
  bool by_score = false;
  bool rev = false;
  bool with_scores = false;
  bool limit = false;
  int64_t offset = 0;
  int64_t count = -1;  // negative: every entry after the offset
};

// The words after a range command's two bounds. `zrange`: ZRANGE, which
// also takes BYSCORE, BYLEX and REV.
bool ParseRangeOptions(CommandCall& call, bool zrange, RangeRequest& request) {
  for (size_t i = 4; i < call.args.size(); ++i) {
    const std::string& word = call.args[i];
    if (IsKeyword(word, "WITHSCORES")) {
      request.with_scores = true;
    } else if (IsKeyword(word, "LIMIT") && i + 2 < call.args.size()) {
      absl::StatusOr<int64_t> offset =
          ParseInt64(call.args[i + 1], "LIMIT offset");
      if (!offset.ok()) {
        ReplyError(call, offset.status());
        return false;
      }
      absl::StatusOr<int64_t> count =
          ParseInt64(call.args[i + 2], "LIMIT count");
      if (!count.ok()) {
        ReplyError(call, count.status());
        return false;
      }
      request.limit = true;
      request.offset = *offset;
      request.count = *count;
      i += 2;
    } else if (zrange && IsKeyword(word, "REV") && !request.rev) {
      request.rev = true;
    } else if (zrange && IsKeyword(word, "BYSCORE") && !request.by_score) {
      request.by_score = true;
    } else if (zrange && IsKeyword(word, "BYLEX")) {
      call.reply->Error(
          "ERR BYLEX is not supported: feedcore leaderboards order members "
          "by score, not by name (use BYSCORE or ranks)");
      return false;
    } else {
      ReplySyntaxError(call, word);
      return false;
    }
  }
  if (request.limit && !request.by_score) {
    call.reply->Error(
        "ERR syntax error, LIMIT is only supported in combination with "
        "either BYSCORE or BYLEX");
    return false;
  }
  return true;
}

// The score range part: `low` and `high` are the words of the smaller and
// the larger bound (ZRANGE ... BYSCORE REV and ZREVRANGEBYSCORE take the
// larger first).
void ReplyScoreRange(CommandCall& call, const std::string& low,
                     const std::string& high, const RangeRequest& request) {
  absl::StatusOr<ScoreBounds> bounds = ParseBounds(low, high);
  if (!bounds.ok()) return ReplyError(call, bounds.status());
  std::shared_ptr<SortedSet> set = call.server->boards->Find(call.args[1]);
  // A negative offset selects nothing, as in Redis; so does a LIMIT count
  // of 0.
  if (set == nullptr || bounds->empty || request.offset < 0 ||
      request.count == 0) {
    return call.reply->ArrayHeader(0);
  }
  std::optional<uint64_t> count;
  if (request.count > 0) count = static_cast<uint64_t>(request.count);
  absl::StatusOr<std::vector<LeaderboardEntry>> entries =
      ReadEntries(*set->board,
                  request.rev ? LeaderboardOrder::kBestFirst
                              : LeaderboardOrder::kWorstFirst,
                  bounds->range, static_cast<uint64_t>(request.offset), count);
  if (!entries.ok()) return ReplyError(call, entries.status());
  WriteRange(call, set.get(), *entries, request.with_scores);
}

// ZRANGE key start stop [BYSCORE] [REV] [LIMIT offset count] [WITHSCORES]
// and ZREVRANGE key start stop [WITHSCORES].
void RangeCommand(CommandCall& call, bool zrevrange) {
  RangeRequest request;
  request.rev = zrevrange;
  if (!ParseRangeOptions(call, /*zrange=*/!zrevrange, request)) return;
  if (request.by_score) {
    return request.rev
               ? ReplyScoreRange(call, call.args[3], call.args[2], request)
               : ReplyScoreRange(call, call.args[2], call.args[3], request);
  }
  absl::StatusOr<int64_t> start = ParseInt64(call.args[2], "start");
  if (!start.ok()) return ReplyError(call, start.status());
  absl::StatusOr<int64_t> stop = ParseInt64(call.args[3], "stop");
  if (!stop.ok()) return ReplyError(call, stop.status());
  std::shared_ptr<SortedSet> set = call.server->boards->Find(call.args[1]);
  if (set == nullptr) return call.reply->ArrayHeader(0);
  absl::StatusOr<std::vector<LeaderboardEntry>> entries =
      ReadRanks(*set->board, *start, *stop,
                request.rev ? LeaderboardOrder::kBestFirst
                            : LeaderboardOrder::kWorstFirst);
  if (!entries.ok()) return ReplyError(call, entries.status());
  WriteRange(call, set.get(), *entries, request.with_scores);
}

void Zrange(CommandCall& call) { RangeCommand(call, /*zrevrange=*/false); }
void Zrevrange(CommandCall& call) { RangeCommand(call, /*zrevrange=*/true); }

// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count] and
// ZREVRANGEBYSCORE key max min [...].
void RangeByScoreCommand(CommandCall& call, bool rev) {
  RangeRequest request;
  request.by_score = true;
  request.rev = rev;
  if (!ParseRangeOptions(call, /*zrange=*/false, request)) return;
  if (rev) return ReplyScoreRange(call, call.args[3], call.args[2], request);
  ReplyScoreRange(call, call.args[2], call.args[3], request);
}

void Zrangebyscore(CommandCall& call) { RangeByScoreCommand(call, false); }
void Zrevrangebyscore(CommandCall& call) { RangeByScoreCommand(call, true); }

// ZCOUNT key min max
void Zcount(CommandCall& call) {
  absl::StatusOr<ScoreBounds> bounds = ParseBounds(call.args[2], call.args[3]);
  if (!bounds.ok()) return ReplyError(call, bounds.status());
  std::shared_ptr<SortedSet> set = call.server->boards->Find(call.args[1]);
  if (set == nullptr || bounds->empty) return call.reply->Integer(0);
  absl::StatusOr<uint64_t> count = set->board->CountInRange(bounds->range);
  if (!count.ok()) return ReplyError(call, count.status());
  call.reply->Integer(static_cast<int64_t>(*count));
}

}  // namespace

absl::Status AddLeaderboardRangeCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"ZRANGE", -4, {"readonly"}, 1, 1, 1, Zrange},
      {"ZREVRANGE", -4, {"readonly"}, 1, 1, 1, Zrevrange},
      {"ZRANGEBYSCORE", -4, {"readonly"}, 1, 1, 1, Zrangebyscore},
      {"ZREVRANGEBYSCORE", -4, {"readonly"}, 1, 1, 1, Zrevrangebyscore},
      {"ZCOUNT", 4, {"readonly", "fast"}, 1, 1, 1, Zcount},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
