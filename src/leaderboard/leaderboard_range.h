// What the range reads of LeaderboardImpl (leaderboard_range_reads.cc)
// build on: a ScoreRange as bounds on tree keys, the selection of the entry
// at a given position among windows of several trees that deep pages start
// from, and the count of the work a read did.
//
// A tree holds rank scores (score_order.h), best first, so the entries whose
// scores lie in a range are one run of consecutive positions in every
// partition: those from the lower bound of `first` (the best key the range
// admits) to the upper bound of `last` (its worst). On a kLowerFirst board
// the rank score is ~score, which reverses the order: the range's maximum
// gives `last` and its minimum `first`.
//
// Thread safety: pure functions; SelectAmong reads the trees, whose
// partitions' locks the caller holds.
#ifndef FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_RANGE_H_
#define FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_RANGE_H_

#include <cstddef>
#include <cstdint>
#include <limits>

#include "contract/score_order.h"
#include "feedcore/leaderboard.h"
#include "leaderboard/ranked_btree.h"

namespace feedcore::internal {

struct TreeKeyRange {
  // No score lies in the range (min > max once the exclusive ends are
  // moved in, or an exclusive end at an int64 limit that leaves nothing).
  bool empty = false;
  // Entries before the range: LowerBound(first)'s index. Below every
  // RankKey of rank score `first.score` (sequence and member 0), so ties
  // at the range's edge are all inside.
  RankKey first{std::numeric_limits<int64_t>::max(), 0, 0};
  // Entries up to the range's end: UpperBound(last)'s index. At or above
  // every key of its rank score.
  RankKey last{std::numeric_limits<int64_t>::min(),
               std::numeric_limits<uint64_t>::max(),
               std::numeric_limits<uint64_t>::max()};

  // Whether the range starts at the best key there can be, so that no
  // entry lies before it and no descent is needed to find its start.
  bool open_start() const {
    return first.score == std::numeric_limits<int64_t>::max();
  }
  // Whether it ends at the worst key there can be.
  bool open_end() const {
    return last.score == std::numeric_limits<int64_t>::min();
  }
};

// The tree-key bounds of `range` on a board of `order`.
inline TreeKeyRange TreeKeyRangeOf(const ScoreRange& range, ScoreOrder order) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  TreeKeyRange out;
  // Inclusive score bounds first: an exclusive end moves in by one, and an
  // exclusive end at the far limit admits nothing.
  int64_t low = range.min;
  int64_t high = range.max;
  if (range.min_exclusive) {
    if (low == kMax) {
      out.empty = true;
    } else {
      ++low;
    }
  }
  if (range.max_exclusive) {
    if (high == kMin) {
      out.empty = true;
    } else {
      --high;
    }
  }
  if (out.empty || low > high) {
    out.empty = true;
    return out;
  }
  // The best rank score of the range comes from its best score: the
  // highest on a kHigherFirst board, the lowest on a kLowerFirst one.
  const bool higher_first = order == ScoreOrder::kHigherFirst;
  out.first.score = RankScoreOf(higher_first ? high : low, order);
  out.last.score = RankScoreOf(higher_first ? low : high, order);
  return out;
}

// The work of one read, for the tests and benchmarks that check that it
// does not grow with an offset or a range: entries read from the trees
// (merged, or looked at as a pivot), and descents from a root (each
// O(log n), one per partition for a bound).
struct ReadWork {
  size_t entries_read = 0;
  size_t descents = 0;
};

// The key of the entry at 0-based position `index`, best first, of the
// union of the windows [lo[p], hi[p]) of positions of trees[p], p < count:
// the global selection that lets a page start at any offset without
// walking to it. lo and hi are scratch: they are narrowed on the way.
//
// Each round picks a pivot entry, counts with one interleaved bound per
// tree (BoundMany) how many window entries rank above it, and narrows every
// window to the side of the pivot where the wanted entry lies, until the
// pivot is the entry or the windows hold at most max(64, 4 x count)
// entries, which are then read and sorted. The pivot is interpolated in
// the largest window, at the position there proportional to `index` among
// all windows: members are spread over partitions by a hash of their id,
// independently of their scores, so every partition samples the board
// alike and the pivot falls near the entry; a few rounds suffice. A round
// that shrinks the windows by less than a quarter is followed by one whose
// pivot is the weighted median of the windows' medians, which always
// removes at least a quarter of what is left, so the rounds are
// O(log total) whatever the distribution. Cost: O(rounds x count x log n)
// for the descents, plus at most max(64, 4 x count) entries read at the
// end; never in proportion to `index`. Adds what it read to `*work`.
// REQUIRES: lo[p] <= hi[p] <= trees[p]->size(); index < the sum of
// hi[p] - lo[p].
RankKey SelectAmong(const RankedBtree* const* trees, size_t count, size_t* lo,
                    size_t* hi, uint64_t index, ReadWork* work);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_RANGE_H_
