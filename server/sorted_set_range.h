// The range queries of ZRANGE and its relatives (ZREVRANGE,
// ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX,
// ZRANGESTORE, and the BY... removals): parsing Redis 7's syntax and
// running the query in Redis's order (sorted_set_order.h).
//
// Score bounds: "-inf", "+inf", a number, "(" and one of those for an
// exclusive bound; scores are integers, so a bound that is not one is
// rounded inward, selecting the same members. Lex bounds: "-", "+", "[x"
// or "(x". Errors: "min or max is not a float", "min or max not valid
// string range item", Redis's syntax errors.
//
// Thread-safe; costs as sorted_set_order.h.
#ifndef FEEDCORE_SERVER_SORTED_SET_RANGE_H_
#define FEEDCORE_SERVER_SORTED_SET_RANGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "command_table.h"
#include "feedcore/leaderboard.h"
#include "leaderboard_store.h"
#include "sorted_set_order.h"

namespace feedcore::server {

// A score range taken to int64 scores. `empty`: no int64 can be in it.
struct ScoreBounds {
  ScoreRange range;
  bool empty = false;
};
absl::StatusOr<ScoreBounds> ParseScoreBounds(absl::string_view min,
                                             absl::string_view max);

// A lexicographic range: each end "-" (before every name), "+" (after
// every name) or a name, inclusive or not.
struct LexBound {
  enum class Kind {
    kMinusInfinity,
    kPlusInfinity,
    kName
  } kind = Kind::kMinusInfinity;
  std::string name;
  bool exclusive = false;
};
struct LexBounds {
  LexBound min, max;
  // Whether `name` is on the range's side of each bound.
  bool AtOrAboveMin(absl::string_view name) const;
  bool AtOrBelowMax(absl::string_view name) const;
  // Whether no name can be in it.
  bool IsEmpty() const;
};
absl::StatusOr<LexBounds> ParseLexBounds(absl::string_view min,
                                         absl::string_view max);

enum class RangeKind { kRank, kScore, kLex };

struct RangeQuery {
  RangeKind kind = RangeKind::kRank;
  bool rev = false;
  bool with_scores = false;
  bool limit = false;
  int64_t offset = 0;
  int64_t count = -1;           // negative: every entry after the offset
  int64_t start = 0, stop = 0;  // kRank
  ScoreBounds scores;           // kScore
  LexBounds lex;                // kLex
};

// Which words a command takes after its two bounds.
struct RangeSyntax {
  bool by_words = false;    // BYSCORE, BYLEX, REV (ZRANGE, ZRANGESTORE)
  bool with_scores = true;  // WITHSCORES (all but ZRANGESTORE and BYLEX)
  RangeKind kind = RangeKind::kRank;  // without BY... words
  bool rev = false;                   // without REV
};

// Parses args[first] and args[first + 1] (the bounds, larger first when
// reversed) and the options after them. Replies with the error and
// returns false if they are invalid.
bool ParseRangeQuery(CommandCall& call, size_t first, const RangeSyntax& syntax,
                     RangeQuery& query);

// The query's members of `set` (null: a missing key, an empty reply) in
// the reply's order (with kCutGroupsOnly, see ReadOrdered, for rank and
// score ranges; lexicographic ranges are named whole).
absl::StatusOr<std::vector<NamedEntry>> RunRangeQuery(
    const SortedSet* set, const RangeQuery& query,
    Naming naming = Naming::kAll);

// Replies with `entries` as Redis's range replies do: names, or names and
// scores (RESP2 flat, RESP3 pairs).
void ReplyEntries(CommandCall& call, const std::vector<NamedEntry>& entries,
                  bool with_scores);

// Replies with the query's members of `set` (null: a missing key) as
// ReplyEntries does. Rank and score ranges whose members have distinct
// scores are written with their names straight from the dictionary
// (VisitOrdered), with no copy of a name.
void ReplyRangeQuery(CommandCall& call, const SortedSet* set,
                     const RangeQuery& query);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SORTED_SET_RANGE_H_
