// Reads by score range and from any offset: a ScoreRange as tree-key bounds
// (int64 limits, exclusive ends, empty ranges, kLowerFirst's reversed
// order), CountInRange, ReadPage with range and offset in both orders with
// and without cursors, Percentile in each rank style, the selection among
// partitions that deep pages start from, and the work a deep page does,
// counted in entries and descents rather than timed.
#include "leaderboard/leaderboard_range.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/leaderboard.h"
#include "leaderboard/leaderboard_impl.h"
#include "leaderboard/ranked_btree.h"
#include "model/leaderboard_model.h"
#include "support/leaderboard_test_util.h"

namespace feedcore {
namespace {

using internal::RankedBtree;
using internal::RankKey;
using internal::ReadWork;
using internal::TreeKeyRange;
using internal::TreeKeyRangeOf;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr uint64_t kNoEnd = std::numeric_limits<uint64_t>::max();

ScoreRange Closed(int64_t min, int64_t max) { return {min, max, false, false}; }

LeaderboardReadOptions Read(
    size_t limit, LeaderboardOrder order = LeaderboardOrder::kBestFirst,
    uint64_t offset = 0) {
  LeaderboardReadOptions read;
  read.limit = limit;
  read.order = order;
  read.offset = offset;
  return read;
}

// The number of entries of `tree` in `range`, from its tree-key bounds.
size_t CountByBounds(const RankedBtree& tree, const TreeKeyRange& range) {
  if (range.empty) return 0;
  size_t before = 0;
  size_t through = 0;
  tree.LowerBound(range.first, &before);
  tree.UpperBound(range.last, &through);
  return through - before;
}

// Every page of `board` in `read`'s order, range and offset (applied to
// the first page only), following cursors.
std::vector<LeaderboardEntry> ReadRange(const Leaderboard& board,
                                        LeaderboardReadOptions read) {
  std::vector<LeaderboardEntry> out;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 100'000);
    const absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    out.insert(out.end(), page->entries.begin(), page->entries.end());
    if (page->next_cursor.empty()) return out;
    REQUIRE(page->entries.size() == read.limit);
    read.cursor = page->next_cursor;
    read.offset = 0;
  }
}

TEST_CASE("a ScoreRange as tree-key bounds: limits, exclusive ends, empty") {
  for (const ScoreOrder order :
       {ScoreOrder::kHigherFirst, ScoreOrder::kLowerFirst}) {
    INFO("lower first: " << (order == ScoreOrder::kLowerFirst));
    const TreeKeyRange all = TreeKeyRangeOf(ScoreRange{}, order);
    CHECK_FALSE(all.empty);
    CHECK(all.open_start());
    CHECK(all.open_end());
    // Nothing lies above the maximum or below the minimum.
    CHECK(TreeKeyRangeOf({kMax, kMax, true, false}, order).empty);
    CHECK(TreeKeyRangeOf({kMin, kMin, false, true}, order).empty);
    CHECK(TreeKeyRangeOf({kMin, kMax, true, true}, order).empty == false);
    // min > max, and min == max with either end exclusive.
    CHECK(TreeKeyRangeOf(Closed(5, 4), order).empty);
    CHECK(TreeKeyRangeOf({5, 5, true, false}, order).empty);
    CHECK(TreeKeyRangeOf({5, 5, false, true}, order).empty);
    CHECK_FALSE(TreeKeyRangeOf(Closed(5, 5), order).empty);
    // (4, 6) is [5, 5].
    CHECK(TreeKeyRangeOf({4, 6, true, true}, order).first.score ==
          TreeKeyRangeOf(Closed(5, 5), order).first.score);
    CHECK(TreeKeyRangeOf({4, 6, true, true}, order).last.score ==
          TreeKeyRangeOf(Closed(5, 5), order).last.score);
    CHECK(TreeKeyRangeOf({4, 5, true, true}, order).empty);
    CHECK(TreeKeyRangeOf(Closed(kMax, kMin), order).empty);
  }
  // The best end of a range is its maximum on a higher-first board and its
  // minimum, complemented, on a lower-first one.
  const TreeKeyRange high =
      TreeKeyRangeOf(Closed(10, 20), ScoreOrder::kHigherFirst);
  CHECK(high.first == RankKey{20, 0, 0});
  CHECK(high.last == RankKey{10, kNoEnd, kNoEnd});
  const TreeKeyRange low =
      TreeKeyRangeOf(Closed(10, 20), ScoreOrder::kLowerFirst);
  CHECK(low.first == RankKey{~int64_t{10}, 0, 0});
  CHECK(low.last == RankKey{~int64_t{20}, kNoEnd, kNoEnd});
  // Ranges open at one end on each order.
  CHECK(TreeKeyRangeOf(Closed(0, kMax), ScoreOrder::kHigherFirst).open_start());
  CHECK(TreeKeyRangeOf(Closed(kMin, 0), ScoreOrder::kLowerFirst).open_start());
  CHECK(TreeKeyRangeOf(Closed(kMin, 0), ScoreOrder::kHigherFirst).open_end());
  CHECK(TreeKeyRangeOf(Closed(0, kMax), ScoreOrder::kLowerFirst).open_end());
}

TEST_CASE("tree-key bounds count a range on trees of either order") {
  // A tree of rank scores, as a board of each order keeps them, and random
  // ranges with ties and limits at their edges, against a plain count.
  std::mt19937_64 rng(7);
  const std::vector<int64_t> specials = {kMin, kMin + 1, -1,  0,
                                         1,    kMax - 1, kMax};
  const auto random_score = [&]() -> int64_t {
    if (rng() % 4 == 0) return specials[rng() % specials.size()];
    return static_cast<int64_t>(rng() % 41) - 20;
  };
  for (const ScoreOrder order :
       {ScoreOrder::kHigherFirst, ScoreOrder::kLowerFirst}) {
    INFO("lower first: " << (order == ScoreOrder::kLowerFirst));
    RankedBtree tree;
    std::vector<int64_t> scores;
    for (uint64_t m = 0; m < 3'000; ++m) {
      scores.push_back(random_score());
      tree.Insert({internal::RankScoreOf(scores.back(), order), rng() % 5, m});
    }
    for (int i = 0; i < 2'000; ++i) {
      ScoreRange range{random_score(), random_score(), rng() % 3 == 0,
                       rng() % 3 == 0};
      if (range.min > range.max && rng() % 4 != 0) {
        std::swap(range.min, range.max);
      }
      INFO("range [" << range.min << ", " << range.max << "] exclusive "
                     << range.min_exclusive << range.max_exclusive);
      const auto expected = static_cast<size_t>(std::count_if(
          scores.begin(), scores.end(),
          [&](int64_t s) { return testing::ModelInRange(s, range); }));
      CHECK(CountByBounds(tree, TreeKeyRangeOf(range, order)) == expected);
    }
  }
}

TEST_CASE("CountInRange: limits, exclusive ends, ties, empty ranges") {
  const std::unique_ptr<Leaderboard> board =
      testing::NewBoard({.partitions = 4});
  CHECK(board->CountInRange({}).value() == 0);
  CHECK(board->CountInRange(Closed(kMin, kMax)).value() == 0);
  // Two members at each of these scores.
  const std::vector<int64_t> scores = {kMin, kMin + 1, -1,  0,
                                       1,    kMax - 1, kMax};
  MemberId member = 0;
  for (const int64_t score : scores) {
    for (int tie = 0; tie < 2; ++tie) REQUIRE(board->Set(member++, score).ok());
  }
  CHECK(board->CountInRange({}).value() == 14);
  CHECK(board->CountInRange(Closed(kMin, kMin)).value() == 2);
  CHECK(board->CountInRange(Closed(kMax, kMax)).value() == 2);
  CHECK(board->CountInRange({kMin, kMax, true, true}).value() == 10);
  CHECK(board->CountInRange({kMin, kMax, true, false}).value() == 12);
  CHECK(board->CountInRange(Closed(-1, 1)).value() == 6);
  CHECK(board->CountInRange({-1, 1, true, false}).value() == 4);
  CHECK(board->CountInRange({-1, 1, false, true}).value() == 4);
  CHECK(board->CountInRange({-1, 1, true, true}).value() == 2);
  CHECK(board->CountInRange(Closed(2, kMax - 2)).value() == 0);
  // Empty ranges are not errors.
  CHECK(board->CountInRange(Closed(1, -1)).value() == 0);
  CHECK(board->CountInRange({0, 0, true, false}).value() == 0);
  CHECK(board->CountInRange({0, 0, false, true}).value() == 0);
  CHECK(board->CountInRange({kMax, kMax, true, false}).value() == 0);
  CHECK(board->CountInRange({kMin, kMin, false, true}).value() == 0);
  CHECK(board->CountInRange(Closed(kMax, kMin)).value() == 0);
}

TEST_CASE("ReadPage in a range: ties at the edges, both orders, cursors") {
  for (const size_t partitions : {size_t{1}, size_t{3}, size_t{16}}) {
    INFO("partitions = " << partitions);
    const std::unique_ptr<Leaderboard> board = testing::NewBoard(
        {.partitions = partitions, .tie_break = TieBreak::kLowerMemberFirst});
    testing::LeaderboardModel model(TieBreak::kLowerMemberFirst);
    // Scores 0..9, ten members each: every range edge falls on ties.
    for (MemberId m = 0; m < 100; ++m) {
      const int64_t score = static_cast<int64_t>(m % 10);
      REQUIRE(board->Set(m, score).ok());
      model.Set(m, score);
    }
    const std::vector<RankKey> sorted = model.Sorted();
    for (const LeaderboardOrder order :
         {LeaderboardOrder::kBestFirst, LeaderboardOrder::kWorstFirst}) {
      for (const ScoreRange range :
           {Closed(3, 5), ScoreRange{3, 5, true, false},
            ScoreRange{3, 5, false, true}, ScoreRange{3, 5, true, true},
            Closed(9, 9), Closed(0, 0), Closed(kMin, 2), Closed(7, kMax),
            Closed(5, 3), ScoreRange{}}) {
        for (const size_t limit : {size_t{1}, size_t{7}, size_t{10}}) {
          INFO("order " << static_cast<int>(order) << " range [" << range.min
                        << ", " << range.max << "] exclusive "
                        << range.min_exclusive << range.max_exclusive
                        << " limit " << limit);
          LeaderboardReadOptions read;
          read.order = order;
          read.range = range;
          read.limit = 1000;
          bool more = false;
          RankKey last;
          const std::vector<LeaderboardEntry> expected =
              testing::ModelRangePage(sorted, read, std::nullopt, &more, &last);
          CHECK_FALSE(more);
          CHECK(expected.size() == model.CountInRange(range));
          read.limit = limit;
          // Page by page along cursors within the range...
          CHECK(ReadRange(*board, read) == expected);
          // ...and from every offset.
          for (uint64_t offset = 0; offset <= expected.size() + 1; ++offset) {
            CAPTURE(offset);
            read.offset = offset;
            const std::vector<LeaderboardEntry> rest = ReadRange(*board, read);
            CHECK(rest == std::vector<LeaderboardEntry>(
                              expected.begin() +
                                  static_cast<ptrdiff_t>(std::min<uint64_t>(
                                      offset, expected.size())),
                              expected.end()));
          }
        }
      }
    }
  }
}

TEST_CASE("offsets: 0, the last entry, past the end, and after a cursor") {
  const std::unique_ptr<Leaderboard> board =
      testing::NewBoard({.partitions = 5});
  CHECK(board->ReadPage(Read(50, LeaderboardOrder::kBestFirst, 3))
            .value()
            .entries.empty());
  for (MemberId m = 0; m < 40; ++m) {
    REQUIRE(board->Set(m, static_cast<int64_t>(m)).ok());
  }
  // Best-first: member 39 has rank 0.
  LeaderboardReadOptions read = Read(3);
  read.offset = 0;
  CHECK(board->ReadPage(read).value().entries.front() ==
        LeaderboardEntry{39, 39, 0});
  read.offset = 39;
  LeaderboardPage page = board->ReadPage(read).value();
  CHECK(page.entries == std::vector<LeaderboardEntry>{{0, 0, 39}});
  CHECK(page.next_cursor.empty());
  read.offset = 37;
  page = board->ReadPage(read).value();
  CHECK(page.entries.size() == 3);
  CHECK(page.next_cursor.empty());  // exactly the last three
  for (const uint64_t past : {uint64_t{40}, uint64_t{41}, kNoEnd}) {
    read.offset = past;
    const absl::StatusOr<LeaderboardPage> beyond = board->ReadPage(read);
    REQUIRE(beyond.ok());
    CHECK(beyond->entries.empty());
    CHECK(beyond->next_cursor.empty());
  }
  // Worst-first at offset 5 in [10, 30): scores 15, 16, 17.
  read = Read(3, LeaderboardOrder::kWorstFirst);
  read.range = {10, 30, false, true};
  read.offset = 5;
  page = board->ReadPage(read).value();
  CHECK(page.entries == std::vector<LeaderboardEntry>{
                            {15, 15, 24}, {16, 16, 23}, {17, 17, 22}});
  // The cursor continues after 17; the offset skips 18 and 19 there.
  read.cursor = page.next_cursor;
  read.offset = 2;
  page = board->ReadPage(read).value();
  CHECK(page.entries == std::vector<LeaderboardEntry>{
                            {20, 20, 19}, {21, 21, 18}, {22, 22, 17}});
  // From the cursor after 22, offsets reach the range's end and stop there.
  read.cursor = page.next_cursor;
  read.offset = 6;
  page = board->ReadPage(read).value();
  CHECK(page.entries == std::vector<LeaderboardEntry>{{29, 29, 10}});
  CHECK(page.next_cursor.empty());
  read.offset = 7;
  page = board->ReadPage(read).value();
  CHECK(page.entries.empty());
  CHECK(page.next_cursor.empty());
  // A cursor past the range's end: nothing remains.
  read = Read(3, LeaderboardOrder::kWorstFirst);
  page = board->ReadPage(read).value();  // 0, 1, 2
  read.cursor = page.next_cursor;
  read.range = Closed(0, 1);
  CHECK(board->ReadPage(read).value().entries.empty());
  // Validation: the limit as always; no range or offset is invalid.
  read = Read(0);
  CHECK(board->ReadPage(read).status().code() ==
        absl::StatusCode::kInvalidArgument);
  read = Read(1, LeaderboardOrder::kBestFirst, kNoEnd);
  read.range = Closed(kMax, kMin);
  CHECK(board->ReadPage(read).ok());
}

TEST_CASE("deep offsets on a large board match the model in both orders") {
  // Scores with many ties, so that partitions interleave finely.
  for (const size_t partitions : {size_t{1}, size_t{2}, size_t{16}}) {
    INFO("partitions = " << partitions);
    internal::LeaderboardImpl board({.partitions = partitions});
    testing::LeaderboardModel model(TieBreak::kEarlierUpdateFirst);
    std::mt19937_64 rng(partitions);
    for (MemberId m = 0; m < 30'000; ++m) {
      const auto score = static_cast<int64_t>(rng() % 5'000);
      REQUIRE(board.Set(m, score).ok());
      model.Set(m, score);
    }
    const std::vector<RankKey> sorted = model.Sorted();
    for (int i = 0; i < 300; ++i) {
      LeaderboardReadOptions read;
      read.order = rng() % 2 == 0 ? LeaderboardOrder::kBestFirst
                                  : LeaderboardOrder::kWorstFirst;
      read.limit = 1 + rng() % 20;
      if (rng() % 2 == 0) {
        read.range = Closed(static_cast<int64_t>(rng() % 2'500),
                            static_cast<int64_t>(2'500 + rng() % 2'500));
      }
      read.offset = rng() % 31'000;
      INFO("offset " << read.offset << " order "
                     << static_cast<int>(read.order));
      bool more = false;
      RankKey last;
      const std::vector<LeaderboardEntry> expected =
          testing::ModelRangePage(sorted, read, std::nullopt, &more, &last);
      const LeaderboardPage page = board.ReadPage(read).value();
      CHECK(page.entries == expected);
      CHECK(page.next_cursor.empty() == !more);
    }
  }
}

TEST_CASE("SelectAmong: any position of skewed and disjoint windows") {
  // Trees whose scores do not interleave at all (tree t holds the block t
  // of scores: 8 trees of growing sizes, or 64 equal ones, where a pivot
  // interpolated in one tree lands far from the entry and removes little
  // but that tree's half, so median rounds must take over), interleave
  // unevenly, or are empty.
  std::mt19937_64 rng(99);
  for (const int shape : {0, 1, 2, 3}) {
    INFO("shape " << shape);
    const size_t kTrees = shape == 3 ? 64 : 8;
    std::vector<std::unique_ptr<RankedBtree>> owned;
    std::vector<const RankedBtree*> trees;
    std::vector<std::vector<RankKey>> keys(kTrees);
    for (size_t t = 0; t < kTrees; ++t) {
      owned.push_back(std::make_unique<RankedBtree>());
      trees.push_back(owned.back().get());
      const uint64_t count = shape == 3                 ? 1000
                             : shape == 2 && t % 3 == 0 ? 0
                                                        : 500 + 997 * t;
      for (uint64_t i = 0; i < count; ++i) {
        const int64_t score =
            shape == 0 || shape == 3
                ? static_cast<int64_t>(t * 1'000'000 + i)
                : static_cast<int64_t>(rng() % (1000 * (t + 1)));
        const RankKey key{score, 0, t * 1'000'000 + i};
        owned.back()->Insert(key);
        keys[t].push_back(key);
      }
      std::sort(keys[t].begin(), keys[t].end(), internal::RanksAbove);
    }
    for (int trial = 0; trial < 200; ++trial) {
      // Random windows; the union sorted is the reference.
      std::vector<size_t> lo(kTrees);
      std::vector<size_t> hi(kTrees);
      std::vector<RankKey> all;
      for (size_t t = 0; t < kTrees; ++t) {
        const size_t n = keys[t].size();
        lo[t] = n == 0 ? 0 : rng() % (n / 2 + 1);
        hi[t] = trial % 4 == 0 ? n : lo[t] + rng() % (n - lo[t] + 1);
        all.insert(all.end(), keys[t].begin() + static_cast<ptrdiff_t>(lo[t]),
                   keys[t].begin() + static_cast<ptrdiff_t>(hi[t]));
      }
      if (all.empty()) continue;
      std::sort(all.begin(), all.end(), internal::RanksAbove);
      const uint64_t index = trial % 5 == 0   ? all.size() - 1
                             : trial % 5 == 1 ? 0
                                              : rng() % all.size();
      INFO("trial " << trial << " index " << index << " of " << all.size());
      std::vector<size_t> scratch_lo = lo;
      std::vector<size_t> scratch_hi = hi;
      ReadWork work;
      CHECK(internal::SelectAmong(trees.data(), kTrees, scratch_lo.data(),
                                  scratch_hi.data(), index,
                                  &work) == all[index]);
      // Rounds: O(log total), each at most kTrees + 1 descents and
      // kTrees pivots; then at most max(64, 4 x kTrees) entries.
      const double rounds =
          2 * std::log(static_cast<double>(all.size())) / std::log(4.0 / 3.0) +
          2;
      CHECK(static_cast<double>(work.descents) <= rounds * (2 * kTrees + 1));
      CHECK(static_cast<double>(work.entries_read) <= rounds * kTrees + 64);
    }
  }
}

TEST_CASE("a deep page reads O(partitions x log n) entries, not the offset") {
  constexpr size_t kPartitions = 16;
  constexpr uint64_t kMembers = 200'000;
  internal::LeaderboardImpl board({.partitions = kPartitions});
  std::mt19937_64 rng(5);
  for (MemberId m = 0; m < kMembers; ++m) {
    REQUIRE(board.Set(m, static_cast<int64_t>(rng() % kMembers)).ok());
  }
  // log2 of the entries, rounded up: 18.
  const size_t log_n = 18;
  for (const LeaderboardOrder order :
       {LeaderboardOrder::kBestFirst, LeaderboardOrder::kWorstFirst}) {
    for (const uint64_t offset :
         {uint64_t{1}, uint64_t{1'000}, kMembers / 2, kMembers - 10}) {
      INFO("order " << static_cast<int>(order) << " offset " << offset);
      LeaderboardReadOptions read = Read(10, order);
      read.offset = offset;
      ReadWork work;
      const LeaderboardPage page = board.ReadPageCounted(read, &work).value();
      REQUIRE(page.entries.size() == 10);
      const uint64_t rank = order == LeaderboardOrder::kBestFirst
                                ? offset
                                : kMembers - 1 - offset;
      CHECK(page.entries.front().rank == rank);
      MESSAGE("entries_read " << work.entries_read << " descents "
                              << work.descents);
      CHECK(work.entries_read <= 10 + kPartitions + 4 * kPartitions * log_n);
      CHECK(work.descents <= 4 * kPartitions * log_n);
    }
  }
  // CountInRange and Percentile: counts, no walk.
  CHECK(board.CountInRange(Closed(0, kMax)).value() == kMembers);
}

TEST_CASE("Percentile: alone, the leader, ties in each rank style") {
  for (const RankStyle style :
       {RankStyle::kUnique, RankStyle::kCompetition, RankStyle::kDense}) {
    INFO("style " << static_cast<int>(style));
    const std::unique_ptr<Leaderboard> board =
        testing::NewBoard({.partitions = 4,
                           .tie_break = TieBreak::kLowerMemberFirst,
                           .rank_style = style});
    CHECK(board->Percentile(1).status().code() == absl::StatusCode::kNotFound);
    REQUIRE(board->Set(1, 5).ok());
    CHECK(board->Percentile(1).value() == 0.0);
    for (MemberId m = 2; m <= 100; ++m) {
      REQUIRE(board->Set(m, static_cast<int64_t>(m) + 5).ok());
    }
    CHECK(board->Percentile(100).value() == 99.0);  // the leader of 100
    CHECK(board->Percentile(1).value() == 0.0);
    // Ties: 101 and 102 at the top score with 100; 103 at the minimum.
    REQUIRE(board->Set(101, 105).ok());
    REQUIRE(board->Set(102, 105).ok());
    REQUIRE(board->Set(103, kMin).ok());
    // 103 members: member 100 ranks first of its tie (lower member id).
    const double unique_top = 100.0 * 102 / 103;
    const double tied_top = 100.0 * 100 / 103;
    if (style == RankStyle::kUnique) {
      CHECK(board->Percentile(100).value() == unique_top);
      CHECK(board->Percentile(102).value() == tied_top);
    } else {
      for (const MemberId m : {100, 101, 102}) {
        CHECK(board->Percentile(m).value() == tied_top);
      }
    }
    CHECK(board->Percentile(103).value() == 0.0);
    CHECK(board->Percentile(104).status().code() ==
          absl::StatusCode::kNotFound);
  }
}

}  // namespace
}  // namespace feedcore
