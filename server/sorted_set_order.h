// Redis's order of a sorted set over a feedcore board: score, then, among
// equal scores, the member names compared as bytes (memcmp, a shorter
// prefix first); REV reverses both. Every rank, range, ZRANK and LIMIT
// reply of the sorted-set commands is computed here.
//
// Design. A board orders ties by its TieBreak on MemberIds, which says
// nothing of names, and keeping a second, name-ordered index per key would
// double the memory of every member. The board's order agrees with
// Redis's everywhere except inside a group of members with one score, so
// a read asks the board for the positions it wants, with one entry on
// either side, and only a tie group that reaches past the page's first or
// last position (its neighbour has the same score) is read whole, sorted
// by name and cut at the page's positions, which the group's start
// (CountInRange of the scores before it) gives. Groups wholly inside the
// page are just sorted by name. ZRANK is (members with a better score) +
// (members of its score with a smaller name): two counts, plus a read of
// its tie group when it has one.
//
// Cost: what the board's page costs plus two entries, plus
// O(g log g) name comparisons and a page read of g entries for each tie
// group of size g cut by the page's first or last position (at most two
// per read); a board without ties costs what it did before (no group is
// ever read). Lexicographic reads (BYLEX) need the whole set in order:
// Redis defines them only when every member has the same score, where
// that is one tie group. They share a copy of it (OrderedCopy), made once
// per version of the set, so a read of a set unchanged since the last one
// is a binary search, O(log n + offset + members returned).
//
// Consistency: a read is a few board reads, each one snapshot of the
// board; a write between them can shift a reply by the members it moved,
// as Redis's replies never are. Members removed between the board read and
// the name lookup are left out.
//
// Thread-safe (the board and the dictionary are).
#ifndef FEEDCORE_SERVER_SORTED_SET_ORDER_H_
#define FEEDCORE_SERVER_SORTED_SET_ORDER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "feedcore/leaderboard.h"
#include "leaderboard_store.h"

namespace feedcore::server {

// Redis's order: score ascending, then name bytes ascending (or both
// descending when `rev`).
bool RedisOrderLess(const NamedEntry& a, const NamedEntry& b, bool rev);

// Which members a read names.
enum class Naming {
  kAll,
  // For removals, which need the members, not their order: only the
  // members of a tie group the read cuts are named (to tell which of
  // them are in); the others have an empty name and keep the board's
  // order within their score.
  kCutGroupsOnly,
};

// Up to `count` members (all with nullopt) of `range` in Redis's order
// (reversed when `rev`), starting at position `start` of that order
// within the range. See "Design" for the cost.
absl::StatusOr<std::vector<NamedEntry>> ReadOrdered(
    const SortedSet& set, const ScoreRange& range, bool rev, uint64_t start,
    std::optional<uint64_t> count, Naming naming = Naming::kAll);

// ReadOrdered's members (Naming::kAll) handed out rather than returned:
// `on_count` with their number, then `visit` with each name and score.
// When no two of them, nor a neighbour, share a score, the board's order
// is Redis's and the names come straight from the dictionary, visited
// under its lock (neither callback may call into it) and never copied.
absl::Status VisitOrdered(
    const SortedSet& set, const ScoreRange& range, bool rev, uint64_t start,
    std::optional<uint64_t> count, absl::FunctionRef<void(size_t)> on_count,
    absl::FunctionRef<void(absl::string_view, int64_t)> visit);

// Every member in Redis's order.
absl::StatusOr<std::vector<NamedEntry>> ReadAllOrdered(const SortedSet& set,
                                                       bool rev);

// Every member in no particular order (for ZUNION and friends): one pass
// over the board, no sorting.
absl::StatusOr<std::vector<NamedEntry>> ReadAllUnordered(const SortedSet& set);

// Every member in Redis's order (not reversed), shared: the copy a read
// of the same set made at its current version (SortedSet::version), or a
// new one, kept for the next read when the set has at most
// kMaxOrderedCopyMembers members. The copy costs the memory of the set's
// names once more, until a read after the next write replaces it.
inline constexpr size_t kMaxOrderedCopyMembers = 100'000;
absl::StatusOr<std::shared_ptr<const std::vector<NamedEntry>>> OrderedCopy(
    const SortedSet& set);

// The member's position in Redis's order (ZRANK; ZREVRANK when `rev`)
// with its score, or nullopt if it is not in the set.
struct RankedMember {
  uint64_t rank = 0;
  int64_t score = 0;
};
absl::StatusOr<std::optional<RankedMember>> RedisRank(const SortedSet& set,
                                                      absl::string_view name,
                                                      bool rev);

// Ranks [start, stop] with Redis's index rules (negative counts from the
// end, clamped, empty when start > stop), in Redis's order.
absl::StatusOr<std::vector<NamedEntry>> ReadRankRange(
    const SortedSet& set, int64_t start, int64_t stop, bool rev,
    Naming naming = Naming::kAll);
// ReadRankRange's members handed out as VisitOrdered hands them.
absl::Status VisitRankRange(
    const SortedSet& set, int64_t start, int64_t stop, bool rev,
    absl::FunctionRef<void(size_t)> on_count,
    absl::FunctionRef<void(absl::string_view, int64_t)> visit);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SORTED_SET_ORDER_H_
