#include "sorted_set_range.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"

namespace feedcore::server {
namespace {

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

// One lex bound: "-", "+", "[name" or "(name".
bool ParseLexBound(absl::string_view text, LexBound& bound) {
  if (text == "-" || text == "+") {
    bound.kind = text == "-" ? LexBound::Kind::kMinusInfinity
                             : LexBound::Kind::kPlusInfinity;
    return true;
  }
  if (text.empty() || (text[0] != '[' && text[0] != '(')) return false;
  bound.kind = LexBound::Kind::kName;
  bound.exclusive = text[0] == '(';
  bound.name = std::string(text.substr(1));
  return true;
}

int CompareBytes(absl::string_view a, absl::string_view b) {
  const int c = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
  if (c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

}  // namespace

absl::StatusOr<ScoreBounds> ParseScoreBounds(absl::string_view min,
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

absl::StatusOr<LexBounds> ParseLexBounds(absl::string_view min,
                                         absl::string_view max) {
  LexBounds bounds;
  if (!ParseLexBound(min, bounds.min) || !ParseLexBound(max, bounds.max)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "min or max not valid string range item: each of ", Quote(min), " and ",
        Quote(max),
        " must be -, +, or a name after [ (inclusive) or ( (exclusive)"));
  }
  return bounds;
}

namespace {

// Whether `name` is on the inner side of `bound` (above a minimum, below a
// maximum).
bool Within(const LexBound& bound, absl::string_view name, bool is_min) {
  switch (bound.kind) {
    case LexBound::Kind::kMinusInfinity:
      return is_min;
    case LexBound::Kind::kPlusInfinity:
      return !is_min;
    case LexBound::Kind::kName: {
      const int c = CompareBytes(name, bound.name);
      if (is_min) return bound.exclusive ? c > 0 : c >= 0;
      return bound.exclusive ? c < 0 : c <= 0;
    }
  }
  return false;
}

}  // namespace

bool LexBounds::AtOrAboveMin(absl::string_view name) const {
  return Within(min, name, /*is_min=*/true);
}
bool LexBounds::AtOrBelowMax(absl::string_view name) const {
  return Within(max, name, /*is_min=*/false);
}

bool LexBounds::IsEmpty() const {
  using Kind = LexBound::Kind;
  if (min.kind == Kind::kPlusInfinity || max.kind == Kind::kMinusInfinity) {
    return true;
  }
  if (min.kind != Kind::kName || max.kind != Kind::kName) return false;
  const int c = CompareBytes(min.name, max.name);
  return c > 0 || (c == 0 && (min.exclusive || max.exclusive));
}

bool ParseRangeQuery(CommandCall& call, size_t first, const RangeSyntax& syntax,
                     RangeQuery& query) {
  query.kind = syntax.kind;
  query.rev = syntax.rev;
  // REV, BYSCORE and BYLEX once each, and not both BY words: Redis's
  // syntax errors.
  bool saw_rev = false;
  for (size_t i = first + 2; i < call.args.size(); ++i) {
    const std::string& word = call.args[i];
    if (syntax.with_scores && IsKeyword(word, "WITHSCORES")) {
      query.with_scores = true;
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
      query.limit = true;
      query.offset = *offset;
      query.count = *count;
      i += 2;
    } else if (syntax.by_words && IsKeyword(word, "REV") && !saw_rev) {
      saw_rev = true;
      query.rev = true;
    } else if (syntax.by_words && IsKeyword(word, "BYSCORE") &&
               query.kind == RangeKind::kRank) {
      query.kind = RangeKind::kScore;
    } else if (syntax.by_words && IsKeyword(word, "BYLEX") &&
               query.kind == RangeKind::kRank) {
      query.kind = RangeKind::kLex;
    } else {
      ReplySyntaxError(call, word);
      return false;
    }
  }
  if (query.limit && query.kind == RangeKind::kRank) {
    call.reply->Error(
        "ERR syntax error, LIMIT is only supported in combination with "
        "either BYSCORE or BYLEX");
    return false;
  }
  if (query.with_scores && query.kind == RangeKind::kLex) {
    call.reply->Error(
        "ERR syntax error, WITHSCORES not supported in combination with "
        "BYLEX");
    return false;
  }
  // Reversed ranges name the larger bound first.
  const std::string& low = call.args[first + (query.rev ? 1 : 0)];
  const std::string& high = call.args[first + (query.rev ? 0 : 1)];
  switch (query.kind) {
    case RangeKind::kRank: {
      absl::StatusOr<int64_t> start = ParseInt64(call.args[first], "start");
      if (!start.ok()) {
        ReplyError(call, start.status());
        return false;
      }
      absl::StatusOr<int64_t> stop = ParseInt64(call.args[first + 1], "stop");
      if (!stop.ok()) {
        ReplyError(call, stop.status());
        return false;
      }
      query.start = *start;
      query.stop = *stop;
      return true;
    }
    case RangeKind::kScore: {
      absl::StatusOr<ScoreBounds> bounds = ParseScoreBounds(low, high);
      if (!bounds.ok()) {
        ReplyError(call, bounds.status());
        return false;
      }
      query.scores = *bounds;
      return true;
    }
    case RangeKind::kLex: {
      absl::StatusOr<LexBounds> bounds = ParseLexBounds(low, high);
      if (!bounds.ok()) {
        ReplyError(call, bounds.status());
        return false;
      }
      query.lex = *std::move(bounds);
      return true;
    }
  }
  return true;
}

namespace {

// The positions of a score or lex query's LIMIT: nullopt when it selects
// nothing.
struct Limit {
  uint64_t offset = 0;
  std::optional<uint64_t> count;
};
std::optional<Limit> LimitOf(const RangeQuery& query) {
  // A negative offset selects nothing, as in Redis; so does a count of 0.
  if (query.offset < 0 || (query.limit && query.count == 0)) {
    return std::nullopt;
  }
  Limit limit{static_cast<uint64_t>(query.offset), std::nullopt};
  if (query.count >= 0) limit.count = static_cast<uint64_t>(query.count);
  return limit;
}

}  // namespace

absl::StatusOr<std::vector<NamedEntry>> RunRangeQuery(const SortedSet* set,
                                                      const RangeQuery& query,
                                                      Naming naming) {
  if (set == nullptr) return std::vector<NamedEntry>();
  if (query.kind == RangeKind::kRank) {
    return ReadRankRange(*set, query.start, query.stop, query.rev, naming);
  }
  const std::optional<Limit> limit = LimitOf(query);
  if (!limit.has_value()) return std::vector<NamedEntry>();
  const uint64_t offset = limit->offset;
  const std::optional<uint64_t> count = limit->count;
  if (query.kind == RangeKind::kScore) {
    if (query.scores.empty) return std::vector<NamedEntry>();
    return ReadOrdered(*set, query.scores.range, query.rev, offset, count,
                       naming);
  }
  if (query.lex.IsEmpty()) return std::vector<NamedEntry>();
  // Lexicographic: the set's ordered copy (see sorted_set_order.h,
  // "Cost"), walked as Redis walks it: from the first member at or
  // past the near bound, while members are within the far one. With every
  // score equal that is exactly the names of the range; with mixed scores
  // it is what Redis replies for a set of up to 128 members.
  absl::StatusOr<std::shared_ptr<const std::vector<NamedEntry>>> copy =
      OrderedCopy(*set);
  if (!copy.ok()) return copy.status();
  const std::vector<NamedEntry>& members = **copy;
  std::vector<NamedEntry> selected;
  if (members.empty() || !query.lex.AtOrAboveMin(members.back().name) ||
      !query.lex.AtOrBelowMax(members.front().name)) {
    return selected;
  }
  const size_t n = members.size();
  // Positions walked from the near end: forward, or back from the last.
  auto at = [&](size_t i) -> const NamedEntry& {
    return members[query.rev ? n - 1 - i : i];
  };
  auto near_ok = [&](const NamedEntry& e) {
    return query.rev ? query.lex.AtOrBelowMax(e.name)
                     : query.lex.AtOrAboveMin(e.name);
  };
  auto far_ok = [&](const NamedEntry& e) {
    return query.rev ? query.lex.AtOrAboveMin(e.name)
                     : query.lex.AtOrBelowMax(e.name);
  };
  size_t i = 0;
  if (members.front().score == members.back().score) {
    // One score: names ascend, so the walk's start is a binary search.
    size_t low = 0, high = n;
    while (low < high) {
      const size_t mid = low + (high - low) / 2;
      if (near_ok(at(mid))) {
        high = mid;
      } else {
        low = mid + 1;
      }
    }
    i = low;
  } else {
    while (i < n && !near_ok(at(i))) ++i;
  }
  if (i == n || !far_ok(at(i))) return selected;
  i += std::min<uint64_t>(offset, n - i);
  for (; i < n && (!count.has_value() || selected.size() < *count); ++i) {
    if (!far_ok(at(i))) break;
    selected.push_back(at(i));
  }
  return selected;
}

namespace {

// Writes a range reply: the member count first, then each member.
class RangeReply {
 public:
  RangeReply(RespWriter& reply, bool with_scores)
      : reply_(reply),
        with_scores_(with_scores),
        // RESP3 pairs each member with its score, as Redis 7 does; RESP2
        // alternates them in one flat array.
        pairs_(with_scores && reply.resp3()) {}
  void Count(size_t members) {
    reply_.ArrayHeader(with_scores_ && !pairs_ ? members * 2 : members);
  }
  void Member(absl::string_view name, int64_t score) {
    if (pairs_) reply_.ArrayHeader(2);
    reply_.Bulk(name);
    if (with_scores_) reply_.Score(score);
  }

 private:
  RespWriter& reply_;
  const bool with_scores_;
  const bool pairs_;
};

}  // namespace

void ReplyEntries(CommandCall& call, const std::vector<NamedEntry>& entries,
                  bool with_scores) {
  RangeReply reply(*call.reply, with_scores);
  reply.Count(entries.size());
  for (const NamedEntry& entry : entries) reply.Member(entry.name, entry.score);
}

void ReplyRangeQuery(CommandCall& call, const SortedSet* set,
                     const RangeQuery& query) {
  RangeReply reply(*call.reply, query.with_scores);
  const auto count = [&reply](size_t members) { reply.Count(members); };
  const auto member = [&reply](absl::string_view name, int64_t score) {
    reply.Member(name, score);
  };
  // Rank and score ranges are visited, their names written as read; the
  // visits fail, if at all, before writing anything.
  absl::Status visited = absl::OkStatus();
  if (set != nullptr && query.kind == RangeKind::kRank) {
    visited =
        VisitRankRange(*set, query.start, query.stop, query.rev, count, member);
  } else if (set != nullptr && query.kind == RangeKind::kScore &&
             !query.scores.empty) {
    const std::optional<Limit> limit = LimitOf(query);
    if (!limit.has_value()) return reply.Count(0);
    visited = VisitOrdered(*set, query.scores.range, query.rev, limit->offset,
                           limit->count, count, member);
  } else {
    absl::StatusOr<std::vector<NamedEntry>> entries = RunRangeQuery(set, query);
    if (!entries.ok()) return ReplyError(call, entries.status());
    return ReplyEntries(call, *entries, query.with_scores);
  }
  if (!visited.ok()) ReplyError(call, visited);
}

}  // namespace feedcore::server
