// LeaderboardImpl's reads by score range and from any offset:
// CountInRange, Percentile, and where a ReadPage starts (StartPage), with
// the selection among partitions that finds a deep page's first entry.
#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "leaderboard/leaderboard_range.h"
#include "leaderboard/leaderboard_snapshot.h"

namespace feedcore::internal {
namespace {

constexpr uint64_t kMaxSeq = std::numeric_limits<uint64_t>::max();

// The windows of SelectAmong hold at most this many entries before they are
// read and sorted: few enough to read, enough that the last rounds, each a
// descent in every tree, are not spent on them.
uint64_t SmallWindows(size_t trees) {
  return std::max<uint64_t>(64, 4 * uint64_t{trees});
}

}  // namespace

RankKey SelectAmong(const RankedBtree* const* trees, size_t count, size_t* lo,
                    size_t* hi, uint64_t index, ReadWork* work) {
  uint64_t total = 0;
  for (size_t p = 0; p < count; ++p) total += hi[p] - lo[p];
  assert(index < total);
  PerPartition<size_t> bounds(count);
  bool interpolate = true;
  while (total > SmallWindows(count)) {
    RankKey pivot;
    size_t holder = 0;  // the tree the pivot is in
    if (interpolate) {
      for (size_t p = 1; p < count; ++p) {
        if (hi[p] - lo[p] > hi[holder] - lo[holder]) holder = p;
      }
      const uint64_t width = hi[holder] - lo[holder];
      // About index x width / total, which is below width; a double is
      // close enough for a pivot and cannot overflow.
      const uint64_t at = std::min(
          width - 1, static_cast<uint64_t>(static_cast<double>(index) /
                                           static_cast<double>(total) *
                                           static_cast<double>(width)));
      pivot = trees[holder]->Select(lo[holder] + at).key();
      ++work->entries_read;
      ++work->descents;
    } else {
      // The weighted median of the windows' medians: trees whose median
      // ranks at or above it hold at least half the entries, and at least
      // half of each of their windows ranks at or above it; likewise below.
      // So at least a quarter of the entries lie on either side.
      struct Median {
        RankKey key;
        uint64_t weight;
        size_t tree;
      };
      PerPartition<Median> medians(count);
      size_t n = 0;
      for (size_t p = 0; p < count; ++p) {
        const uint64_t width = hi[p] - lo[p];
        if (width == 0) continue;
        medians[n++] = {trees[p]->Select(lo[p] + width / 2).key(), width, p};
      }
      work->entries_read += n;
      work->descents += n;
      std::sort(medians.data(), medians.data() + n,
                [](const Median& a, const Median& b) {
                  return RanksAbove(a.key, b.key);
                });
      uint64_t above = 0;
      size_t m = 0;
      for (; m + 1 < n; ++m) {
        above += medians[m].weight;
        if (above >= total - above) break;
      }
      pivot = medians[m].key;
      holder = medians[m].tree;
    }
    RankedBtree::BoundMany(trees, count, pivot, /*upper=*/false, nullptr,
                           bounds.data(), holder);
    work->descents += count;
    // Window entries ranking above the pivot.
    uint64_t above = 0;
    for (size_t p = 0; p < count; ++p) {
      bounds[p] = std::clamp(bounds[p], lo[p], hi[p]);
      above += bounds[p] - lo[p];
    }
    if (above == index) return pivot;
    const uint64_t before = total;
    if (above < index) {
      // The entry ranks below the pivot: drop the pivot and all above it.
      for (size_t p = 0; p < count; ++p) lo[p] = bounds[p];
      ++lo[holder];
      index -= above + 1;
      total -= above + 1;
    } else {
      // It ranks above: drop the pivot and all below it.
      for (size_t p = 0; p < count; ++p) hi[p] = bounds[p];
      total = above;
    }
    // After an interpolation that removed less than a quarter, a median
    // round, which never does.
    interpolate = !interpolate || 4 * (before - total) >= before;
  }
  std::vector<RankKey> rest;
  rest.reserve(total);
  for (size_t p = 0; p < count; ++p) {
    if (lo[p] == hi[p]) continue;
    RankedBtree::Position at = trees[p]->Select(lo[p]);
    ++work->descents;
    for (size_t i = lo[p]; i < hi[p]; ++i, at = at.next()) {
      rest.push_back(at.key());
    }
  }
  work->entries_read += rest.size();
  std::nth_element(rest.begin(), rest.begin() + static_cast<ptrdiff_t>(index),
                   rest.end(), RanksAbove);
  return rest[index];
}

absl::StatusOr<uint64_t> LeaderboardImpl::CountInRange(
    const ScoreRange& range) const {
  const TreeKeyRange keys = TreeKeyRangeOf(range, options_.score_order);
  if (keys.empty) return 0;
  SharedSnapshot snapshot(*this);
  const size_t partitions = snapshot.partitions();
  // Per partition, the entries before the range and those up to its end.
  PerPartition<size_t> before(partitions);
  PerPartition<size_t> through(partitions);
  if (!keys.open_start()) {
    snapshot.Bounds(keys.first, /*upper=*/false, nullptr, before.data());
  }
  if (!keys.open_end()) {
    snapshot.Bounds(keys.last, /*upper=*/true, nullptr, through.data());
  } else {
    for (size_t p = 0; p < partitions; ++p) {
      through[p] = snapshot.data(p).tree.size();
    }
  }
  uint64_t count = 0;
  for (size_t p = 0; p < partitions; ++p) count += through[p] - before[p];
  return count;
}

absl::StatusOr<double> LeaderboardImpl::Percentile(MemberId member) const {
  const size_t home = PartitionOf(member);
  SharedSnapshot snapshot(*this);
  const std::optional<RankKey> key = snapshot.KeyOf(member, home);
  if (!key.has_value()) return MemberNotFound(member);
  const size_t partitions = snapshot.partitions();
  const uint64_t size = snapshot.members();
  PerPartition<size_t> counts(partitions);
  uint64_t ranked_below = 0;
  if (options_.rank_style == RankStyle::kUnique) {
    // Everyone but the members ranked above it and itself.
    snapshot.Bounds(*key, /*upper=*/false, nullptr, counts.data(), home);
    uint64_t rank = 0;
    for (size_t p = 0; p < partitions; ++p) rank += counts[p];
    ranked_below = size - 1 - rank;
  } else {
    // Members with a strictly worse score: those after every key of its
    // rank score.
    const RankKey last_of_score{key->score, kMaxSeq, kMaxSeq};
    snapshot.Bounds(last_of_score, /*upper=*/true, nullptr, counts.data());
    uint64_t at_or_above = 0;
    for (size_t p = 0; p < partitions; ++p) at_or_above += counts[p];
    ranked_below = size - at_or_above;
  }
  return 100.0 * static_cast<double>(ranked_below) / static_cast<double>(size);
}

LeaderboardImpl::PageStart LeaderboardImpl::StartPage(
    const SharedSnapshot& snapshot, const LeaderboardReadOptions& options,
    const std::optional<RankKey>& after, Position* runs, ReadWork* work) const {
  const bool best_first = options.order == LeaderboardOrder::kBestFirst;
  const size_t partitions = snapshot.partitions();
  PageStart start;
  const TreeKeyRange range =
      TreeKeyRangeOf(options.range, options_.score_order);
  if (range.empty) {
    for (size_t p = 0; p < partitions; ++p) runs[p] = Position();
    return start;
  }
  // Per partition, the window of positions [lo, hi) of the entries still
  // ahead of the read, in the range and past the cursor; lo_at and hi_at
  // are the entries at lo and hi (invalid past the last). lo is the number
  // of entries ranking above the window's first key (the range's start,
  // the cursor, or the page's first entry), hi of those up to its last;
  // hi < lo is an empty window, whose lo and hi still count the entries
  // above the union's first entry and through its last.
  PerPartition<size_t> lo(partitions);
  PerPartition<size_t> hi(partitions);
  PerPartition<Position> lo_at(partitions);
  PerPartition<Position> hi_at(partitions);
  for (size_t p = 0; p < partitions; ++p) {
    const RankedBtree& tree = snapshot.data(p).tree;
    lo_at[p] = tree.First();
    hi[p] = tree.size();
  }
  PerPartition<size_t> counts(partitions);
  PerPartition<Position> at(partitions);
  // Moves every window's start (from_start) or end to the bound of `key`
  // where that is tighter.
  const auto narrow = [&](const RankKey& key, bool upper, bool from_start) {
    snapshot.Bounds(key, upper, at.data(), counts.data());
    work->descents += partitions;
    for (size_t p = 0; p < partitions; ++p) {
      if (from_start && counts[p] > lo[p]) {
        lo[p] = counts[p];
        lo_at[p] = at[p];
      } else if (!from_start && counts[p] < hi[p]) {
        hi[p] = counts[p];
        hi_at[p] = at[p];
      }
    }
  };
  if (!range.open_start()) narrow(range.first, /*upper=*/false, true);
  if (!range.open_end()) narrow(range.last, /*upper=*/true, false);
  if (after.has_value()) {
    // Best-first, what follows the cursor ranks below it; worst-first,
    // above it.
    narrow(*after, /*upper=*/best_first, /*from_start=*/best_first);
  }
  uint64_t total = 0;
  for (size_t p = 0; p < partitions; ++p) {
    if (hi[p] > lo[p]) total += hi[p] - lo[p];
  }
  if (options.offset >= total) {
    for (size_t p = 0; p < partitions; ++p) runs[p] = Position();
    return start;
  }
  if (options.offset > 0 && partitions == 1) {
    // One tree: the page's first entry is at a known position, found in
    // one descent (the selection below would take several).
    const RankedBtree& tree = snapshot.data(0).tree;
    if (best_first) {
      lo[0] += static_cast<size_t>(options.offset);
      lo_at[0] = tree.Select(lo[0]);
    } else {
      hi[0] -= static_cast<size_t>(options.offset);
      hi_at[0] = tree.Select(hi[0]);
    }
    ++work->descents;
  } else if (options.offset > 0) {
    // The page's first entry, found by its position among the windows in
    // best-first order, becomes the windows' new start (best-first) or end
    // (worst-first).
    PerPartition<const RankedBtree*> trees(partitions);
    PerPartition<size_t> select_lo(partitions);
    PerPartition<size_t> select_hi(partitions);
    for (size_t p = 0; p < partitions; ++p) {
      trees[p] = &snapshot.data(p).tree;
      select_lo[p] = lo[p];
      select_hi[p] = std::max(lo[p], hi[p]);
    }
    const uint64_t index =
        best_first ? options.offset : total - 1 - options.offset;
    const RankKey first =
        SelectAmong(trees.data(), partitions, select_lo.data(),
                    select_hi.data(), index, work);
    narrow(first, /*upper=*/!best_first, /*from_start=*/best_first);
  }
  for (size_t p = 0; p < partitions; ++p) {
    if (hi[p] <= lo[p]) {
      runs[p] = Position();
    } else if (best_first) {
      runs[p] = lo_at[p];
    } else {
      runs[p] =
          hi_at[p].valid() ? hi_at[p].prev() : snapshot.data(p).tree.Last();
    }
    start.rank += best_first ? lo[p] : hi[p];
  }
  start.remaining = total - options.offset;
  return start;
}

}  // namespace feedcore::internal
