// Unit cases of the Leaderboard interface's writes and scores that every
// backend must pass alike (see backend.h for how the backend is chosen); the
// reads are in leaderboard_conformance_read_test.cc. Expected boards are
// computed with the reference model from plain member -> score maps, never
// read back from the board under test, so a backend that is consistently
// wrong still fails.
//
// The shared cases use TieBreak::kLowerMemberFirst, except the one of
// kEarlierUpdateFirst, which both backends keep (the model test runs both
// rules at length). Where the backends differ by design (the score range,
// boards shared by name) each side's documented behaviour is checked behind
// OnCluster().
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/backend.h"
#include "conformance/leaderboard_conformance_util.h"
#include "feedcore/leaderboard.h"
#include "feedcore/redis_cluster.h"
#include "support/leaderboard_test_util.h"
// Where the cluster board puts a member, to crowd one of its partitions.
#include "redis/redis_leaderboard.h"

namespace feedcore {
namespace {

using testing::All;
using testing::CheckInvalid;
using testing::Contains;
using testing::DescribeResults;
using testing::Entries;
using testing::Fill;
using testing::kExact;
using testing::kMax;
using testing::kMin;
using testing::MakeBoard;
using testing::NewBackendBoard;
using testing::OnCluster;
using testing::Options;
using testing::Ranked;
using testing::ReadAllPages;
using testing::Reversed;
using testing::Scores;
using testing::Slice;

TEST_CASE("options are validated and each bad one is named") {
  struct Case {
    LeaderboardOptions options;
    const char* field;
  };
  LeaderboardOptions bad_tie = Options(4);
  bad_tie.tie_break = static_cast<TieBreak>(7);
  const Case cases[] = {
      {Options(0), "LeaderboardOptions.partitions is 0"},
      {Options(kMaxLeaderboardPartitions + 1),
       "LeaderboardOptions.partitions is 1025"},
      {Options(4, 0), "LeaderboardOptions.max_page_size is 0"},
      {Options(4, kMaxLeaderboardPageSizeLimit + 1),
       "LeaderboardOptions.max_page_size is 100001"},
      {bad_tie, "LeaderboardOptions.tie_break is 7"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.field);
    absl::StatusOr<std::unique_ptr<Leaderboard>> board =
        MakeBoard(c.options, "lb-unit");
    REQUIRE_FALSE(board.ok());
    CheckInvalid(board.status(), c.field);
  }

  // The extremes are accepted and work.
  for (const LeaderboardOptions& options :
       {Options(1, 1),
        Options(kMaxLeaderboardPartitions, kMaxLeaderboardPageSizeLimit)}) {
    CAPTURE(options.partitions);
    auto board = NewBackendBoard(options);
    CHECK(board->options() == options);
    REQUIRE(board->Set(5, 10).ok());
    REQUIRE(board->Set(6, 20).ok());
    CHECK(board->TopK(1).value() == Entries{{6, 20, 0}});
    CHECK(board->Rank(5).value() == 1);
    CHECK(board->Size().value() == 2);
  }
}

TEST_CASE("earlier-update-first ties: the member who got there first leads") {
  absl::StatusOr<std::unique_ptr<Leaderboard>> created = MakeBoard(
      {.partitions = 3, .tie_break = TieBreak::kEarlierUpdateFirst}, "lb-unit");
  REQUIRE_MESSAGE(created.ok(), created.status());
  Leaderboard& board = **created;
  CHECK(board.Supports(LeaderboardCapability::kEarlierUpdateFirst));
  REQUIRE(board.Set(30, 1).ok());
  REQUIRE(board.Set(20, 1).ok());
  REQUIRE(board.Set(10, 1).ok());
  CHECK(All(board) == Entries{{30, 1, 0}, {20, 1, 1}, {10, 1, 2}});
  // The same score, an increment by 0, a metadata-free conditional write
  // that keeps the score: no change, no move.
  REQUIRE(board.Set(30, 1).ok());
  REQUIRE(board.Increment(30, 0).value() == 1);
  REQUIRE(board.Write({.member = 30, .value = 1}).value().outcome ==
          WriteOutcome::kUnchanged);
  CHECK(board.Rank(30).value() == 0);
  // Away and back: behind those who stayed.
  REQUIRE(board.Increment(30, 5).value() == 6);
  REQUIRE(board.Increment(30, -5).value() == 1);
  CHECK(All(board) == Entries{{20, 1, 0}, {10, 1, 1}, {30, 1, 2}});
  // Removed and added again: last.
  REQUIRE(board.Remove(20).ok());
  REQUIRE(board.Set(20, 1).ok());
  CHECK(All(board) == Entries{{10, 1, 0}, {30, 1, 1}, {20, 1, 2}});
  // A batch numbers its elements in the order given.
  const std::vector<absl::StatusOr<int64_t>> results =
      board.IncrementMany({{7, 4}, {5, 4}, {6, 4}, {5, 0}});
  for (const auto& result : results) REQUIRE(result.ok());
  CHECK(board.TopK(3).value() == Entries{{7, 4, 0}, {5, 4, 1}, {6, 4, 2}});
  CHECK(board.Around(5, 1, 1).value() ==
        Entries{{7, 4, 0}, {5, 4, 1}, {6, 4, 2}});
  const std::vector<MemberId> among = {6, 20, 5};
  CHECK(board.TopKAmong(among, 3).value() ==
        Entries{{5, 4, 0}, {6, 4, 1}, {20, 1, 2}});
  // Pages of one entry step through the ties by their cursors.
  CHECK(
      ReadAllPages(board, LeaderboardOrder::kBestFirst, 1) ==
      Entries{
          {7, 4, 0}, {5, 4, 1}, {6, 4, 2}, {10, 1, 3}, {30, 1, 4}, {20, 1, 5}});
  CHECK(
      ReadAllPages(board, LeaderboardOrder::kWorstFirst, 2) ==
      Entries{
          {20, 1, 5}, {30, 1, 4}, {10, 1, 3}, {6, 4, 2}, {5, 4, 1}, {7, 4, 0}});
}

TEST_CASE("earlier-update-first ties on a lower-first board") {
  absl::StatusOr<std::unique_ptr<Leaderboard>> created =
      MakeBoard({.partitions = 3,
                 .tie_break = TieBreak::kEarlierUpdateFirst,
                 .score_order = ScoreOrder::kLowerFirst},
                "lb-unit");
  REQUIRE_MESSAGE(created.ok(), created.status());
  Leaderboard& board = **created;
  REQUIRE(board.Set(30, 5).ok());
  REQUIRE(board.Set(20, 5).ok());
  REQUIRE(board.Set(10, 3).ok());
  CHECK(All(board) == Entries{{10, 3, 0}, {30, 5, 1}, {20, 5, 2}});
  // Keep-best (lower) writes: 20 gets to 4 first, then 30.
  REQUIRE(board
              .Write({.member = 20,
                      .value = 4,
                      .condition = WriteCondition::kIfBetter})
              .value()
              .outcome == WriteOutcome::kChanged);
  REQUIRE(board
              .Write({.member = 30,
                      .value = 6,
                      .condition = WriteCondition::kIfBetter})
              .value()
              .outcome == WriteOutcome::kNotApplied);
  REQUIRE(board.Increment(30, -1).value() == 4);
  CHECK(All(board) == Entries{{10, 3, 0}, {20, 4, 1}, {30, 4, 2}});
  CHECK(board.Rank(30).value() == 2);
  CHECK(ReadAllPages(board, LeaderboardOrder::kWorstFirst, 1) ==
        Entries{{30, 4, 2}, {20, 4, 1}, {10, 3, 0}});
}

TEST_CASE("an empty board") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBackendBoard(Options(partitions));
    CHECK(board->Size().value() == 0);
    CHECK(board->TopK(1).value().empty());
    CHECK(board->TopK(1000).value().empty());
    for (LeaderboardOrder order :
         {LeaderboardOrder::kBestFirst, LeaderboardOrder::kWorstFirst}) {
      LeaderboardReadOptions read;
      read.order = order;
      absl::StatusOr<LeaderboardPage> page = board->ReadPage(read);
      REQUIRE_MESSAGE(page.ok(), page.status());
      CHECK(page->entries.empty());
      CHECK(page->next_cursor.empty());
    }
    REQUIRE(board->Clear().ok());
    CHECK(board->Size().value() == 0);
  }
}

TEST_CASE("Set, Score, Remove, Size, Clear") {
  auto board = NewBackendBoard(Options(3));
  CHECK(board->Set(10, 500).ok());
  CHECK(board->Set(11, -20).ok());
  CHECK(board->Set(12, 0).ok());
  CHECK(board->Score(10).value() == 500);
  CHECK(board->Score(11).value() == -20);
  CHECK(board->Score(12).value() == 0);
  CHECK(board->Size().value() == 3);

  CHECK(board->Set(10, 7).ok());  // overwrite, lower
  CHECK(board->Score(10).value() == 7);
  CHECK(board->Set(10, 7).ok());  // the same score again
  CHECK(board->Size().value() == 3);
  CHECK(All(*board) == Entries{{10, 7, 0}, {12, 0, 1}, {11, -20, 2}});

  CHECK(board->Remove(11).ok());
  CHECK(board->Score(11).status().code() == absl::StatusCode::kNotFound);
  CHECK(board->Remove(11).code() == absl::StatusCode::kNotFound);
  CHECK(board->Size().value() == 2);
  CHECK(All(*board) == Entries{{10, 7, 0}, {12, 0, 1}});

  // A removed member comes back as new.
  CHECK(board->Set(11, 100).ok());
  CHECK(board->Rank(11).value() == 0);
  CHECK(board->Size().value() == 3);

  REQUIRE(board->Clear().ok());
  CHECK(board->Size().value() == 0);
  CHECK(All(*board).empty());
  CHECK(board->Score(10).status().code() == absl::StatusCode::kNotFound);
  // The board is usable after a reset.
  CHECK(board->Set(10, 1).ok());
  CHECK(All(*board) == Entries{{10, 1, 0}});
}

TEST_CASE("Increment creates at delta and returns the new score") {
  auto board = NewBackendBoard(Options(4));
  CHECK(board->Increment(1, 5).value() == 5);
  CHECK(board->Increment(1, 5).value() == 10);
  CHECK(board->Increment(1, -25).value() == -15);
  CHECK(board->Increment(1, 0).value() == -15);
  CHECK(board->Increment(2, -3).value() == -3);
  CHECK(board->Increment(3, 0).value() == 0);  // created at 0
  CHECK(board->Increment(4, 1'000'000'000'000).value() == 1'000'000'000'000);
  // Deltas that need more than 32 bits, both signs, crossing zero.
  CHECK(board->Increment(4, -3'000'000'000'000).value() == -2'000'000'000'000);
  CHECK(board->Increment(4, 2'000'000'000'007).value() == 7);
  CHECK(board->Score(1).value() == -15);
  CHECK(board->Size().value() == 4);
  CHECK(All(*board) == Entries{{4, 7, 0}, {3, 0, 1}, {2, -3, 2}, {1, -15, 3}});
}

TEST_CASE("negative and large scores sort as integers") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBackendBoard(Options(partitions));
    // Round values beyond 2^52 are the ones Redis prints in exponent form.
    const Scores scores = {
        {1, 0},
        {2, -1},
        {3, 1},
        {4, -kExact},
        {5, kExact},
        {6, -1000},
        {7, 1000},
        {8, -kExact + 1},
        {9, 6'000'000'000'000'000},
        {10, -6'000'000'000'000'000},
        {11, (int64_t{1} << 52) + 1},
        {12, -(int64_t{1} << 52) - 1},
        {13, kExact - 1},
        {14, -1},
    };
    Fill(*board, scores);
    CHECK(All(*board) == Ranked(scores));
    for (const auto& [member, score] : scores) {
      CHECK(board->Score(member).value() == score);
    }
    CHECK(board->Rank(5).value() == 0);
    CHECK(board->Rank(4).value() == scores.size() - 1);
    // Cursors, ranks and neighbours are positioned by these scores too.
    const Entries all = Ranked(scores);
    for (size_t limit : {1, 3}) {
      CHECK(ReadAllPages(*board, LeaderboardOrder::kBestFirst, limit) == all);
      CHECK(ReadAllPages(*board, LeaderboardOrder::kWorstFirst, limit) ==
            Reversed(all));
    }
    for (const LeaderboardEntry& e : all) {
      CAPTURE(e);
      CHECK(board->Rank(e.member).value() == e.rank);
      CHECK(board->Around(e.member, 1, 1).value() ==
            Slice(all, e.rank == 0 ? 0 : e.rank - 1, e.rank + 2));
    }
    CHECK(board->Increment(9, -6'000'000'000'000'001).value() == -1);
    Scores moved = scores;
    moved[9] = -1;
    CHECK(All(*board) == Ranked(moved));
    CHECK(board->Rank(9).value() == 7);  // below 1; tied with 2 and 14
  }
}

TEST_CASE("the score range of each backend") {
  auto board = NewBackendBoard(Options(2));
  if (OnCluster()) {
    // Within +-2^53 every integer is exact; beyond it Set and Increment are
    // OutOfRange and change nothing.
    REQUIRE(board->Set(1, kExact).ok());
    REQUIRE(board->Set(2, -kExact).ok());
    REQUIRE(board->Set(3, kExact - 5).ok());
    const Entries before = All(*board);
    REQUIRE(before ==
            Entries{{1, kExact, 0}, {3, kExact - 5, 1}, {2, -kExact, 2}});
    for (int64_t score : {kExact + 1, -kExact - 1, kMax, kMin}) {
      CAPTURE(score);
      const absl::Status set = board->Set(3, score);
      CHECK(set.code() == absl::StatusCode::kOutOfRange);
      CHECK(board->Set(4, score).code() == absl::StatusCode::kOutOfRange);
    }
    absl::StatusOr<int64_t> up = board->Increment(3, 6);
    CHECK(up.status().code() == absl::StatusCode::kOutOfRange);
    CHECK_MESSAGE(Contains(up.status(), "Increment(member 3, delta 6)"),
                  up.status());
    CHECK(board->Increment(1, 1).status().code() ==
          absl::StatusCode::kOutOfRange);
    CHECK(board->Increment(2, -1).status().code() ==
          absl::StatusCode::kOutOfRange);
    CHECK(board->Increment(1, kMin).status().code() ==
          absl::StatusCode::kOutOfRange);
    CHECK(board->Increment(2, kMax).status().code() ==
          absl::StatusCode::kOutOfRange);
    // An absent member is created at the delta, so the delta is checked.
    CHECK(board->Increment(4, kExact + 1).status().code() ==
          absl::StatusCode::kOutOfRange);
    CHECK(board->Increment(4, kMin).status().code() ==
          absl::StatusCode::kOutOfRange);
    CHECK(board->Score(4).status().code() == absl::StatusCode::kNotFound);
    CHECK(All(*board) == before);

    // Up to the limits exactly is fine, from either side.
    CHECK(board->Increment(3, 5).value() == kExact);
    CHECK(board->Increment(2, 2 * kExact).value() == kExact);
    CHECK(board->Increment(1, -2 * kExact).value() == -kExact);
    CHECK(board->Increment(4, -kExact).value() == -kExact);
    CHECK(board->Increment(5, kExact).value() == kExact);
    CHECK(All(*board) == Entries{{2, kExact, 0},
                                 {3, kExact, 1},
                                 {5, kExact, 2},
                                 {1, -kExact, 3},
                                 {4, -kExact, 4}});
  } else {
    // Every int64 is a score; an Increment past the int64 range is
    // OutOfRange and changes nothing.
    REQUIRE(board->Set(1, kMax - 5).ok());
    REQUIRE(board->Set(2, kMin + 5).ok());
    REQUIRE(board->Set(3, kMax - 5).ok());
    const Entries before = All(*board);
    REQUIRE(before ==
            Entries{{1, kMax - 5, 0}, {3, kMax - 5, 1}, {2, kMin + 5, 2}});
    absl::StatusOr<int64_t> up = board->Increment(1, 6);
    CHECK(up.status().code() == absl::StatusCode::kOutOfRange);
    CHECK_MESSAGE(Contains(up.status(), "Increment(member 1, delta 6)"),
                  up.status());
    CHECK(board->Increment(1, kMax).status().code() ==
          absl::StatusCode::kOutOfRange);
    CHECK(board->Increment(2, -6).status().code() ==
          absl::StatusCode::kOutOfRange);
    CHECK(board->Increment(2, kMin).status().code() ==
          absl::StatusCode::kOutOfRange);
    CHECK(All(*board) == before);

    CHECK(board->Increment(1, 5).value() == kMax);
    CHECK(board->Increment(2, -5).value() == kMin);
    CHECK(board->Increment(4, kMin).value() == kMin);
    CHECK(board->Increment(4, kMax).value() == -1);
    CHECK(board->Set(5, kExact + 1).ok());
    CHECK(board->Score(5).value() == kExact + 1);
    CHECK(All(*board) == Entries{{1, kMax, 0},
                                 {3, kMax - 5, 1},
                                 {5, kExact + 1, 2},
                                 {4, -1, 3},
                                 {2, kMin, 4}});
  }
}

TEST_CASE("IncrementMany returns what Increment would, element by element") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBackendBoard(Options(partitions));
    REQUIRE(board->Set(1, 100).ok());
    const std::vector<absl::StatusOr<int64_t>> results = board->IncrementMany({
        {1, 5},                   // existing member
        {2, -3},                  // new member, created at delta
        {1, 5},                   // the same member again: the running sum
        {3, 0},                   // new member at 0
        {2, 0},                   // no change
        {1, -20},                 // negative
        {4, 3'000'000'000'000},   // more than 32 bits
        {4, -3'000'000'000'007},  // crossing zero
        {2, -3},
    });
    CHECK(DescribeResults(results) ==
          std::vector<std::string>{"105", "-3", "110", "0", "-3", "90",
                                   "3000000000000", "-7", "-6"});
    const Entries after{{1, 90, 0}, {3, 0, 1}, {2, -6, 2}, {4, -7, 3}};
    CHECK(All(*board) == after);
    CHECK(board->Score(2).value() == -6);
    CHECK(board->Rank(4).value() == 3);

    CHECK(board->IncrementMany({}).empty());
    CHECK(board->Size().value() == 4);
    CHECK(All(*board) == after);
  }
}

TEST_CASE("IncrementMany: an overflowing element fails alone") {
  const int64_t high = OnCluster() ? kExact : kMax;
  const int64_t low = OnCluster() ? -kExact : kMin;
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBackendBoard(Options(partitions));
    REQUIRE(board->Set(1, high - 5).ok());
    REQUIRE(board->Set(3, high - 5).ok());  // tied with 1, below it
    REQUIRE(board->Set(5, low + 5).ok());
    const std::vector<absl::StatusOr<int64_t>> results = board->IncrementMany(
        {{1, 6}, {2, 7}, {5, -6}, {1, -10}, {1, 6}, {2, 1}, {3, 5}, {5, -5}});
    REQUIRE(results.size() == 8);
    CHECK(results[0].status().code() == absl::StatusCode::kOutOfRange);
    CHECK_MESSAGE(Contains(results[0].status(), "Increment(member 1, delta 6)"),
                  results[0].status());
    CHECK(results[1].value() == 7);
    CHECK(results[2].status().code() == absl::StatusCode::kOutOfRange);
    CHECK_MESSAGE(
        Contains(results[2].status(), "Increment(member 5, delta -6)"),
        results[2].status());
    CHECK(results[3].value() == high - 15);
    CHECK(results[4].value() == high - 9);  // after the element before it
    CHECK(results[5].value() == 8);
    CHECK(results[6].value() == high);
    CHECK(results[7].value() == low);
    CHECK(All(*board) == Ranked({{1, high - 9}, {2, 8}, {3, high}, {5, low}}));

    // The failed elements changed nothing: their members keep their scores
    // and ranks while the others move around them.
    auto tied = NewBackendBoard(Options(partitions));
    const Scores scores = {{1, high - 5}, {3, high - 5}, {5, low + 5}, {6, 0}};
    Fill(*tied, scores);
    const std::vector<absl::StatusOr<int64_t>> failed = tied->IncrementMany(
        {{1, 6}, {6, 10}, {5, -6}, {3, -1}, {1, kMax}, {7, -1}, {5, kMin}});
    CHECK(DescribeResults(failed) ==
          std::vector<std::string>{"OUT_OF_RANGE", "10", "OUT_OF_RANGE",
                                   std::to_string(high - 6), "OUT_OF_RANGE",
                                   "-1", "OUT_OF_RANGE"});
    REQUIRE(failed.size() == 7);
    CHECK_MESSAGE(Contains(failed[0].status(), "Increment(member 1, delta 6)"),
                  failed[0].status());
    CHECK_MESSAGE(Contains(failed[4].status(), "Increment(member 1, delta " +
                                                   std::to_string(kMax) + ")"),
                  failed[4].status());
    CHECK_MESSAGE(Contains(failed[6].status(), "Increment(member 5, delta " +
                                                   std::to_string(kMin) + ")"),
                  failed[6].status());
    CHECK(tied->Score(1).value() == high - 5);
    CHECK(tied->Rank(1).value() == 0);
    CHECK(tied->Score(5).value() == low + 5);
    CHECK(tied->Rank(5).value() == 4);
    CHECK(
        All(*tied) ==
        Ranked({{1, high - 5}, {3, high - 6}, {5, low + 5}, {6, 10}, {7, -1}}));
  }
}

TEST_CASE("IncrementMany equals one Increment per element, over every node") {
  // Thousands of elements over a few hundred members in 16 partitions,
  // which the cluster spreads over all of its masters: long pipelines on
  // every node, hot members repeated dozens of times in one call, and now
  // and then a delta that overflows wherever the member's score is above
  // zero (or below, for a negative one).
  const LeaderboardOptions options = Options(16, 100);
  auto batched = NewBackendBoard(options);
  auto one_by_one = NewBackendBoard(options);
  const int64_t high = OnCluster() ? kExact : kMax;
  std::mt19937_64 rng(2024);
  std::vector<size_t> elements_per_partition(options.partitions);
  for (int call = 0; call < 3; ++call) {
    CAPTURE(call);
    std::vector<ScoreIncrement> batch(2000 + rng() % 2000);
    for (ScoreIncrement& increment : batch) {
      increment.member =
          rng() % 4 == 0 ? rng() % 10 : (rng() % 400) * 0x9E3779B97F4A7C15ull;
      increment.delta = rng() % 100 == 0
                            ? (rng() % 2 == 0 ? high : -high)
                            : static_cast<int64_t>(rng() % 41) - 20;
      ++elements_per_partition[redis::LeaderboardPartitionOf(
          increment.member, options.partitions)];
    }
    const std::vector<absl::StatusOr<int64_t>> results =
        batched->IncrementMany(batch);
    REQUIRE(results.size() == batch.size());
    size_t failures = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      CAPTURE(i);
      const absl::StatusOr<int64_t> want =
          one_by_one->Increment(batch[i].member, batch[i].delta);
      REQUIRE_MESSAGE(results[i].ok() == want.ok(), results[i].status());
      if (want.ok()) {
        CHECK(*results[i] == *want);
      } else {
        ++failures;
        CHECK(want.status().code() == absl::StatusCode::kOutOfRange);
        CHECK(results[i].status() == want.status());
      }
    }
    CHECK(failures > 0);
  }
  for (size_t count : elements_per_partition) CHECK(count > 100);
  const Entries expected =
      ReadAllPages(*one_by_one, LeaderboardOrder::kBestFirst, 100);
  CHECK(expected.size() > 300);
  CHECK(ReadAllPages(*batched, LeaderboardOrder::kBestFirst, 100) == expected);
  CHECK(ReadAllPages(*batched, LeaderboardOrder::kWorstFirst, 100) ==
        Reversed(expected));
  CHECK(batched->Size().value() == expected.size());
}

TEST_CASE(
    "ties are ordered by the lower member id, whatever the update order") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBackendBoard(Options(partitions));
    REQUIRE(board->Set(30, 100).ok());
    REQUIRE(board->Set(20, 100).ok());
    REQUIRE(board->Increment(10, 100).ok());
    REQUIRE(board->Set(5, 99).ok());
    CHECK(All(*board) ==
          Entries{{10, 100, 0}, {20, 100, 1}, {30, 100, 2}, {5, 99, 3}});
    // Leaving the score and coming back does not move a member behind
    // those who stayed.
    REQUIRE(board->Increment(10, 1).ok());
    REQUIRE(board->Increment(10, -1).ok());
    REQUIRE(board->Set(20, 0).ok());
    REQUIRE(board->Set(20, 100).ok());
    CHECK(All(*board) ==
          Entries{{10, 100, 0}, {20, 100, 1}, {30, 100, 2}, {5, 99, 3}});

    // Ids compare as unsigned 64-bit numbers, not as bytes of a shorter
    // encoding and not as signed.
    REQUIRE(board->Clear().ok());
    const MemberId top = std::numeric_limits<MemberId>::max();
    const MemberId half = MemberId{1} << 63;
    const Scores scores = {{0, 7},    {1, 7},       {255, 7},
                           {256, 7},  {65536, 7},   {half - 1, 7},
                           {half, 7}, {top - 1, 7}, {top, 7}};
    Fill(*board, scores);
    CHECK(All(*board) == Ranked(scores));
    CHECK(board->Rank(top).value() == 8);
    CHECK(board->Rank(half).value() == 6);
    CHECK(board->Rank(0).value() == 0);
  }
}

TEST_CASE("each board capability works where reported") {
  const std::unique_ptr<Leaderboard> board = NewBackendBoard(Options(3));
  for (LeaderboardCapability capability : kAllLeaderboardCapabilities) {
    const bool present = board->Supports(capability);
    const std::string name = LeaderboardCapabilityName(capability);
    INFO(name << (present ? " (reported present)" : " (reported missing)"));
    CHECK(present ==
          (!OnCluster() ||
           capability == LeaderboardCapability::kEarlierUpdateFirst));
    switch (capability) {
      case LeaderboardCapability::kEarlierUpdateFirst: {
        absl::StatusOr<std::unique_ptr<Leaderboard>> ordered = MakeBoard(
            {.partitions = 3, .tie_break = TieBreak::kEarlierUpdateFirst},
            "lb-capability");
        if (!present) {
          REQUIRE_FALSE(ordered.ok());
          CHECK(absl::IsUnimplemented(ordered.status()));
          CHECK(Contains(ordered.status(), name));
          break;
        }
        REQUIRE_MESSAGE(ordered.ok(), ordered.status());
        REQUIRE((*ordered)->Set(30, 1).ok());
        REQUIRE((*ordered)->Set(20, 1).ok());
        CHECK(All(**ordered) == Entries{{30, 1, 0}, {20, 1, 1}});
        break;
      }
      case LeaderboardCapability::kBoardSnapshotReads: {
        // Atomic or per partition, a Clear that returns OK has cleared
        // every partition.
        for (MemberId m = 1; m <= 12; ++m) REQUIRE(board->Set(m, 5).ok());
        CHECK(board->Size().value() == 12);
        REQUIRE(board->Clear().ok());
        CHECK(board->Size().value() == 0);
        break;
      }
      case LeaderboardCapability::kDenseRanks: {
        LeaderboardOptions dense = Options(3);
        dense.rank_style = RankStyle::kDense;
        absl::StatusOr<std::unique_ptr<Leaderboard>> ranked =
            MakeBoard(dense, "lb-capability");
        if (!present) {
          REQUIRE_FALSE(ranked.ok());
          CHECK(absl::IsUnimplemented(ranked.status()));
          CHECK(Contains(ranked.status(), name));
          break;
        }
        REQUIRE_MESSAGE(ranked.ok(), ranked.status());
        Fill(**ranked, {{1, 900}, {2, 900}, {3, 800}});
        CHECK(All(**ranked) == Entries{{1, 900, 0}, {2, 900, 0}, {3, 800, 1}});
        break;
      }
    }
  }
}
}  // namespace
}  // namespace feedcore
