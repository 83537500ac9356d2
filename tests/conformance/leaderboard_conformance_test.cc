// Unit cases of the Leaderboard interface that every backend must pass alike
// (see backend.h for how the backend is chosen). Expected boards are computed
// here from plain member -> score maps, never read back from the board under
// test, so a backend that is consistently wrong still fails.
//
// Every shared case uses TieBreak::kLowerMemberFirst, the only rule the
// cluster keeps. Where the backends differ by design (the score range, the
// tie rules accepted, boards shared by name) each side's documented behaviour
// is checked behind OnCluster().
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
#include "feedcore/leaderboard.h"
#include "feedcore/redis_cluster.h"
#include "support/leaderboard_test_util.h"
// Where the cluster board puts a member, to crowd one of its partitions.
#include "redis/redis_leaderboard.h"

namespace feedcore {
namespace {

using testing::DescribeResults;
using testing::MakeBoard;
using testing::OnCluster;
using testing::ReadAllPages;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
// The cluster keeps scores as doubles, exact up to this magnitude.
constexpr int64_t kExact = int64_t{1} << 53;

using Scores = std::map<MemberId, int64_t>;
using Entries = std::vector<LeaderboardEntry>;

bool Contains(const absl::Status& status, const std::string& text) {
  return std::string(status.message()).find(text) != std::string::npos;
}

LeaderboardOptions Options(size_t partitions, size_t max_page_size = 1000) {
  return {.partitions = partitions,
          .tie_break = TieBreak::kLowerMemberFirst,
          .max_page_size = max_page_size};
}

std::unique_ptr<Leaderboard> NewBoard(const LeaderboardOptions& options) {
  absl::StatusOr<std::unique_ptr<Leaderboard>> board =
      MakeBoard(options, "lb-unit");
  REQUIRE_MESSAGE(board.ok(), board.status());
  return *std::move(board);
}

// The board `scores` describes, best first: higher score, then lower id.
Entries Ranked(const Scores& scores) {
  Entries out;
  for (const auto& [member, score] : scores) out.push_back({member, score, 0});
  std::sort(out.begin(), out.end(),
            [](const LeaderboardEntry& a, const LeaderboardEntry& b) {
              return a.score != b.score ? a.score > b.score
                                        : a.member < b.member;
            });
  for (size_t i = 0; i < out.size(); ++i) out[i].rank = i;
  return out;
}

Entries Slice(const Entries& all, size_t from, size_t to) {
  to = std::min(to, all.size());
  return Entries(all.begin() + static_cast<ptrdiff_t>(std::min(from, to)),
                 all.begin() + static_cast<ptrdiff_t>(to));
}

Entries Reversed(Entries entries) {
  std::reverse(entries.begin(), entries.end());
  return entries;
}

// The whole board best-first, in pages as large as the board allows.
Entries All(const Leaderboard& board) {
  return ReadAllPages(board, LeaderboardOrder::kBestFirst,
                      board.options().max_page_size);
}

void Fill(Leaderboard& board, const Scores& scores) {
  for (const auto& entry : scores) {
    REQUIRE_MESSAGE(board.Set(entry.first, entry.second).ok(),
                    "member " << entry.first);
  }
}

// `count` members 1..count whose scores repeat every `spread` members, so
// that most scores are shared; the ids are spread over the id range to land
// in every partition.
Scores TiedScores(size_t count, int64_t spread) {
  Scores scores;
  for (size_t i = 1; i <= count; ++i) {
    const MemberId member = i * 0x9E3779B97F4A7C15ull;
    scores[member] = static_cast<int64_t>(i) % spread - spread / 2;
  }
  return scores;
}

void CheckInvalid(const absl::Status& status, const std::string& text) {
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(status, text), status);
}

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
    auto board = NewBoard(options);
    CHECK(board->options() == options);
    REQUIRE(board->Set(5, 10).ok());
    REQUIRE(board->Set(6, 20).ok());
    CHECK(board->TopK(1).value() == Entries{{6, 20, 0}});
    CHECK(board->Rank(5).value() == 1);
    CHECK(board->Size().value() == 2);
  }
}

TEST_CASE("earlier-update-first ties: memory keeps them, the cluster refuses") {
  absl::StatusOr<std::unique_ptr<Leaderboard>> board = MakeBoard(
      {.partitions = 3, .tie_break = TieBreak::kEarlierUpdateFirst}, "lb-unit");
  if (OnCluster()) {
    REQUIRE_FALSE(board.ok());
    CHECK_MESSAGE(absl::IsUnimplemented(board.status()), board.status());
    CHECK_MESSAGE(Contains(board.status(), "LeaderboardOptions.tie_break"),
                  board.status());
    CHECK_MESSAGE(Contains(board.status(), "kEarlierUpdateFirst"),
                  board.status());
  } else {
    REQUIRE(board.ok());
    REQUIRE((*board)->Set(30, 1).ok());
    REQUIRE((*board)->Set(20, 1).ok());
    CHECK(All(**board) == Entries{{30, 1, 0}, {20, 1, 1}});
  }
}

TEST_CASE("an empty board") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBoard(Options(partitions));
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
  auto board = NewBoard(Options(3));
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
  auto board = NewBoard(Options(4));
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
    auto board = NewBoard(Options(partitions));
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
  auto board = NewBoard(Options(2));
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
    auto board = NewBoard(Options(partitions));
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
    auto board = NewBoard(Options(partitions));
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
    auto tied = NewBoard(Options(partitions));
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
  auto batched = NewBoard(options);
  auto one_by_one = NewBoard(options);
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
    auto board = NewBoard(Options(partitions));
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

TEST_CASE("Rank is exact across partitions") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBoard(Options(partitions));
    const Scores scores = TiedScores(200, 11);
    Fill(*board, scores);
    const Entries expected = Ranked(scores);
    CHECK(All(*board) == expected);
    for (const LeaderboardEntry& e : expected) {
      CAPTURE(e);
      CHECK(board->Rank(e.member).value() == e.rank);
    }
    const absl::Status missing = board->Rank(1000).status();
    CHECK(missing.code() == absl::StatusCode::kNotFound);
    CHECK_MESSAGE(Contains(missing, "member 1000"), missing);
  }
}

TEST_CASE("TopK: exact, k larger than the board, bounds on k") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBoard(Options(partitions, 50));
    const Scores scores = TiedScores(40, 9);
    Fill(*board, scores);
    const Entries expected = Ranked(scores);
    for (size_t k : {1, 2, 7, 16, 17, 39, 40, 41, 50}) {
      CAPTURE(k);
      CHECK(board->TopK(k).value() == Slice(expected, 0, k));
    }
    const Entries before = All(*board);
    for (size_t k :
         {size_t{0}, size_t{51}, std::numeric_limits<size_t>::max()}) {
      CAPTURE(k);
      absl::StatusOr<Entries> top = board->TopK(k);
      REQUIRE_FALSE(top.ok());
      CheckInvalid(top.status(), "TopK k is");
      CHECK_MESSAGE(Contains(top.status(), "LeaderboardOptions.max_page_size"),
                    top.status());
    }
    CHECK(All(*board) == before);
  }
}

TEST_CASE("reads that need many entries of one partition") {
  // Members that share one partition of the cluster board hold both ends
  // of the board, so that every merge (which first reads a share of the
  // entries from each partition) must go back to that partition for more.
  // The memory board merges entry by entry; for it these are just ids.
  for (size_t partitions : {2, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBoard(Options(partitions, 200));
    std::vector<MemberId> crowded;
    for (MemberId m = 1; crowded.size() < 80; ++m) {
      if (redis::LeaderboardPartitionOf(m, partitions) == 0) {
        crowded.push_back(m);
      }
    }
    Scores scores;
    for (size_t i = 0; i < crowded.size(); ++i) {
      const int64_t tie = static_cast<int64_t>(i % 7);
      scores[crowded[i]] = i < 40 ? 1000 + tie : -1000 - tie;
    }
    for (MemberId m = 100'000; m < 100'048; ++m) {
      scores[m] = static_cast<int64_t>(m % 5);
    }
    Fill(*board, scores);
    const Entries all = Ranked(scores);
    REQUIRE(all.size() == 128);
    for (size_t k : {1, 5, 10, 39, 40, 41, 100, 128, 200}) {
      CAPTURE(k);
      CHECK(board->TopK(k).value() == Slice(all, 0, k));
    }
    for (size_t limit : {1, 7, 50, 200}) {
      CAPTURE(limit);
      CHECK(ReadAllPages(*board, LeaderboardOrder::kBestFirst, limit) == all);
      CHECK(ReadAllPages(*board, LeaderboardOrder::kWorstFirst, limit) ==
            Reversed(all));
    }
    for (size_t at : {size_t{0}, size_t{39}, size_t{40}, size_t{60}, size_t{87},
                      size_t{88}, size_t{127}}) {
      CAPTURE(at);
      CHECK(board->Around(all[at].member, 60, 60).value() ==
            Slice(all, at >= 60 ? at - 60 : 0, at + 61));
      CHECK(board->Rank(all[at].member).value() == at);
    }
  }
}

TEST_CASE("Around: neighbours across partitions, clipped at both ends") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBoard(Options(partitions, 10));
    Scores scores;
    for (MemberId m = 1; m <= 30; ++m) scores[m] = static_cast<int64_t>(m) * 3;
    Fill(*board, scores);
    const Entries all = Ranked(scores);  // member 30 first
    // Member m has rank 30 - m.
    CHECK(board->Around(15, 2, 3).value() == Slice(all, 13, 19));
    CHECK(board->Around(15, 0, 0).value() == Slice(all, 15, 16));
    CHECK(board->Around(15, 10, 0).value() == Slice(all, 5, 16));
    CHECK(board->Around(15, 0, 10).value() == Slice(all, 15, 26));
    CHECK(board->Around(30, 5, 2).value() == Slice(all, 0, 3));  // the leader
    CHECK(board->Around(30, 0, 0).value() == Slice(all, 0, 1));
    CHECK(board->Around(29, 5, 0).value() == Slice(all, 0, 2));
    CHECK(board->Around(1, 3, 10).value() == Slice(all, 26, 30));  // the last
    CHECK(board->Around(1, 0, 10).value() == Slice(all, 29, 30));
    CHECK(board->Around(2, 0, 10).value() == Slice(all, 28, 30));
    CHECK(board->Around(2, 10, 10).value() == Slice(all, 18, 30));

    const Entries before = All(*board);
    absl::StatusOr<Entries> bad = board->Around(15, 11, 0);
    CheckInvalid(bad.status(), "Around before is 11");
    bad = board->Around(15, 0, 11);
    CheckInvalid(bad.status(), "Around after is 11");
    // Arguments are checked before the member is looked for.
    bad = board->Around(99, 11, 0);
    CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
    bad = board->Around(99, 1, 1);
    CHECK(bad.status().code() == absl::StatusCode::kNotFound);
    CHECK_MESSAGE(Contains(bad.status(), "member 99"), bad.status());
    CHECK(All(*board) == before);
  }
}

TEST_CASE("Around with ties on the member's score and around it") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBoard(Options(partitions));
    const Scores scores = TiedScores(60, 3);
    Fill(*board, scores);
    const Entries all = Ranked(scores);
    for (size_t at : {size_t{0}, size_t{1}, size_t{19}, size_t{20}, size_t{30},
                      size_t{58}, size_t{59}}) {
      CAPTURE(at);
      const MemberId member = all[at].member;
      CHECK(board->Around(member, 4, 4).value() ==
            Slice(all, at >= 4 ? at - 4 : 0, at + 5));
      CHECK(board->Around(member, 25, 0).value() ==
            Slice(all, at >= 25 ? at - 25 : 0, at + 1));
      CHECK(board->Around(member, 0, 25).value() == Slice(all, at, at + 26));
    }
  }
}

TEST_CASE("ReadPage walks the board in both orders with exact ranks") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBoard(Options(partitions, 500));
    const Scores scores = TiedScores(101, 13);
    Fill(*board, scores);
    const Entries best = Ranked(scores);
    for (size_t limit : {1, 2, 3, 10, 16, 100, 101, 500}) {
      CAPTURE(limit);
      size_t pages = 0;
      CHECK(ReadAllPages(*board, LeaderboardOrder::kBestFirst, limit, &pages) ==
            best);
      CHECK(pages == (101 + limit - 1) / limit);
      CHECK(ReadAllPages(*board, LeaderboardOrder::kWorstFirst, limit,
                         &pages) == Reversed(best));
      CHECK(pages == (101 + limit - 1) / limit);
    }
  }
}

TEST_CASE("a page ending exactly at the end has no cursor") {
  for (LeaderboardOrder order :
       {LeaderboardOrder::kBestFirst, LeaderboardOrder::kWorstFirst}) {
    auto board = NewBoard(Options(2));
    for (MemberId m = 0; m < 4; ++m) REQUIRE(board->Set(m, 1).ok());
    LeaderboardReadOptions read;
    read.order = order;
    read.limit = 4;
    absl::StatusOr<LeaderboardPage> page = board->ReadPage(read);
    REQUIRE(page.ok());
    CHECK(page->entries.size() == 4);
    CHECK(page->next_cursor.empty());
    read.limit = 2;
    page = board->ReadPage(read);
    REQUIRE(page.ok());
    REQUIRE_FALSE(page->next_cursor.empty());
    read.cursor = page->next_cursor;
    page = board->ReadPage(read);
    REQUIRE(page.ok());
    CHECK(page->entries.size() == 2);
    CHECK(page->next_cursor.empty());
  }
}

TEST_CASE("paging is keyset-based: unchanged members once each") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBoard(Options(partitions));
    for (MemberId m = 0; m < 30; ++m) {
      REQUIRE(board->Set(m, static_cast<int64_t>(m) * 10).ok());
    }
    LeaderboardReadOptions read;
    read.limit = 10;
    const LeaderboardPage first = board->ReadPage(read).value();
    CHECK(first.entries.front().member == 29);
    CHECK(first.entries.back().member == 20);
    // Between pages: new members above and below the cursor, a removal of
    // one already read and one not yet read, a member ahead that moves to
    // the part already read, and one tied with the cursor's entry on each
    // side of it.
    REQUIRE(board->Set(100, 1000).ok());  // above: not returned
    REQUIRE(board->Set(101, 155).ok());   // below: returned once
    REQUIRE(board->Remove(25).ok());      // already read
    REQUIRE(board->Remove(12).ok());      // ahead: skipped
    REQUIRE(board->Set(5, 999).ok());     // moves above the cursor
    REQUIRE(board->Set(19, 200).ok());    // ties 20, lower id: above it
    REQUIRE(board->Set(21, 200).ok());    // was read; now ties 20, below it
    read.cursor = first.next_cursor;
    std::vector<LeaderboardEntry> rest;
    for (int pages = 0;; ++pages) {
      REQUIRE(pages < 100);
      const LeaderboardPage page = board->ReadPage(read).value();
      rest.insert(rest.end(), page.entries.begin(), page.entries.end());
      if (page.next_cursor.empty()) break;
      read.cursor = page.next_cursor;
    }
    std::vector<MemberId> members;
    for (const LeaderboardEntry& e : rest) members.push_back(e.member);
    const std::vector<MemberId> expected = {
        21, 18, 17, 16, 101, 15, 14, 13, 11, 10, 9, 8, 7, 6, 4, 3, 2, 1, 0};
    CHECK(members == expected);
    // Ranks are those of the board when each page was read: above 21 are
    // 100, 5, 29..26, 24..22, 19 and 20.
    CHECK(rest.front() == LeaderboardEntry{21, 200, 11});
    CHECK(rest.back() == LeaderboardEntry{0, 0, board->Size().value() - 1});
  }
}

TEST_CASE("ReadPage validates limit and order") {
  auto board = NewBoard(Options(2, 20));
  REQUIRE(board->Set(1, 1).ok());
  LeaderboardReadOptions read;
  read.limit = 0;
  absl::StatusOr<LeaderboardPage> page = board->ReadPage(read);
  CheckInvalid(page.status(), "LeaderboardReadOptions.limit is 0");
  read.limit = 21;
  page = board->ReadPage(read);
  CheckInvalid(page.status(), "LeaderboardReadOptions.limit is 21");
  CHECK_MESSAGE(Contains(page.status(), "must be 1..20"), page.status());
  read.limit = std::numeric_limits<size_t>::max();
  page = board->ReadPage(read);
  CHECK(page.status().code() == absl::StatusCode::kInvalidArgument);
  read.limit = 20;
  read.order = static_cast<LeaderboardOrder>(9);
  page = board->ReadPage(read);
  CheckInvalid(page.status(), "LeaderboardReadOptions.order is 9");
  read.order = LeaderboardOrder::kWorstFirst;
  CHECK(board->ReadPage(read).value().entries == Entries{{1, 1, 0}});
}

TEST_CASE("bad cursors are rejected with a reason and change nothing") {
  auto board = NewBoard(Options(3));
  auto other = NewBoard(Options(3));
  for (MemberId m = 0; m < 10; ++m) {
    REQUIRE(board->Set(m, static_cast<int64_t>(m)).ok());
    REQUIRE(other->Set(m, static_cast<int64_t>(m)).ok());
  }
  LeaderboardReadOptions read;
  read.limit = 3;
  const std::string cursor = board->ReadPage(read).value().next_cursor;
  REQUIRE_FALSE(cursor.empty());
  read.order = LeaderboardOrder::kWorstFirst;
  const std::string worst_cursor = board->ReadPage(read).value().next_cursor;
  REQUIRE_FALSE(worst_cursor.empty());
  const Entries before = All(*board);

  std::string damaged = cursor;
  damaged[5] = damaged[5] == 'A' ? 'B' : 'A';
  struct Case {
    std::string text;
    LeaderboardOrder order;
    const char* why;
  };
  const Case cases[] = {
      {"x", LeaderboardOrder::kBestFirst, "length 1"},
      {std::string(100'000, 'A'), LeaderboardOrder::kBestFirst, "length"},
      {cursor.substr(0, cursor.size() - 1), LeaderboardOrder::kBestFirst,
       "length"},
      {cursor + "A", LeaderboardOrder::kBestFirst, "length"},
      {std::string(cursor.size(), '*'), LeaderboardOrder::kBestFirst, "base64"},
      {damaged, LeaderboardOrder::kBestFirst, "checksum"},
      {cursor, LeaderboardOrder::kWorstFirst, "best-first order"},
      {worst_cursor, LeaderboardOrder::kBestFirst, "worst-first order"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.why);
    LeaderboardReadOptions bad;
    bad.cursor = c.text;
    bad.order = c.order;
    absl::StatusOr<LeaderboardPage> page = board->ReadPage(bad);
    REQUIRE_FALSE(page.ok());
    CheckInvalid(page.status(), "invalid leaderboard cursor");
    CHECK_MESSAGE(Contains(page.status(), c.why), page.status());
  }
  // A cursor of another board of the same backend, with the same members
  // and options, in either direction.
  LeaderboardReadOptions foreign;
  foreign.cursor = cursor;
  absl::StatusOr<LeaderboardPage> page = other->ReadPage(foreign);
  CheckInvalid(page.status(), "another leaderboard");
  LeaderboardReadOptions first_page;
  first_page.limit = 3;
  foreign.cursor = other->ReadPage(first_page).value().next_cursor;
  page = board->ReadPage(foreign);
  CheckInvalid(page.status(), "another leaderboard");

  // The board is unchanged and the good cursors still work.
  CHECK(All(*board) == before);
  foreign.cursor = cursor;
  foreign.limit = 100;
  CHECK(board->ReadPage(foreign).value().entries == Slice(before, 3, 10));
  foreign.cursor = worst_cursor;
  foreign.order = LeaderboardOrder::kWorstFirst;
  CHECK(board->ReadPage(foreign).value().entries ==
        Reversed(Slice(before, 0, 7)));
}

TEST_CASE("Clear empties the board; cursors continue from their key") {
  auto board = NewBoard(Options(4));
  for (MemberId m = 0; m < 50; ++m) {
    REQUIRE(board->Set(m, static_cast<int64_t>(m)).ok());
  }
  LeaderboardReadOptions read;
  read.limit = 10;
  const std::string cursor = board->ReadPage(read).value().next_cursor;
  REQUIRE(board->Clear().ok());
  CHECK(board->Size().value() == 0);
  CHECK(board->TopK(5).value().empty());
  CHECK(board->Score(3).status().code() == absl::StatusCode::kNotFound);
  CHECK(board->Rank(3).status().code() == absl::StatusCode::kNotFound);
  // A new season.
  REQUIRE(board->Set(7, 100).ok());
  REQUIRE(board->Set(8, 30).ok());
  CHECK(board->Increment(9, 5).value() == 5);
  CHECK(board->Increment(40, 0).value() == 0);
  read.cursor = cursor;  // was after score 40, member 40
  const LeaderboardPage page = board->ReadPage(read).value();
  CHECK(page.entries == Entries{{8, 30, 1}, {9, 5, 2}, {40, 0, 3}});
  CHECK(page.next_cursor.empty());
  CHECK(board->Size().value() == 4);
}

TEST_CASE("NotFound for absent members, with the member named") {
  auto board = NewBoard(Options(3));
  REQUIRE(board->Set(1, 10).ok());
  REQUIRE(board->Set(2, 20).ok());
  REQUIRE(board->Remove(2).ok());
  const Entries before = All(*board);
  for (MemberId member : {MemberId{2}, MemberId{3}, MemberId{0},
                          std::numeric_limits<MemberId>::max()}) {
    CAPTURE(member);
    const std::string name = "member " + std::to_string(member);
    const absl::Status checks[] = {
        board->Score(member).status(), board->Rank(member).status(),
        board->Around(member, 0, 0).status(),
        board->Around(member, 5, 5).status(), board->Remove(member)};
    for (const absl::Status& status : checks) {
      CHECK(status.code() == absl::StatusCode::kNotFound);
      CHECK_MESSAGE(Contains(status, name), status);
    }
  }
  CHECK(All(*board) == before);
  REQUIRE(board->Clear().ok());
  CHECK(board->Score(1).status().code() == absl::StatusCode::kNotFound);
  CHECK(board->Remove(1).code() == absl::StatusCode::kNotFound);
  CHECK(board->Around(1, 1, 1).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("every failed call changes nothing") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBoard(Options(partitions, 20));
    const Scores scores = TiedScores(30, 5);
    Fill(*board, scores);
    REQUIRE(board->Set(7, OnCluster() ? kExact : kMax).ok());
    REQUIRE(board->Set(8, OnCluster() ? -kExact : kMin).ok());
    const Entries before = All(*board);
    REQUIRE(before.size() == 32);

    std::vector<absl::Status> failed;
    failed.push_back(board->Increment(7, 1).status());
    failed.push_back(board->Increment(8, -1).status());
    failed.push_back(board->Increment(7, kMax).status());
    failed.push_back(board->Remove(999));
    failed.push_back(board->TopK(0).status());
    failed.push_back(board->TopK(21).status());
    failed.push_back(board->Around(7, 21, 0).status());
    failed.push_back(board->Around(999, 1, 1).status());
    failed.push_back(board->Score(999).status());
    failed.push_back(board->Rank(999).status());
    LeaderboardReadOptions read;
    read.limit = 0;
    failed.push_back(board->ReadPage(read).status());
    read.limit = 3;
    read.cursor = "bogus";
    failed.push_back(board->ReadPage(read).status());
    if (OnCluster()) {
      failed.push_back(board->Set(9, kExact + 1));
      failed.push_back(board->Set(999, kMin));
      failed.push_back(board->Increment(999, -kExact - 1).status());
    }
    for (size_t i = 0; i < failed.size(); ++i) {
      CAPTURE(i);
      CHECK_FALSE(failed[i].ok());
    }
    CHECK(All(*board) == before);
    CHECK(board->Size().value() == 32);
    CHECK(board->Score(999).status().code() == absl::StatusCode::kNotFound);
  }
}

TEST_CASE("the cluster: boards are shared by name and keep their partitions") {
  if (!OnCluster()) return;  // boards of the memory backend have no names
  const RedisClusterOptions cluster =
      testing::TestClusterOptions("lb-unit-shared");
  auto first = CreateRedisClusterLeaderboard(cluster, "season", Options(5));
  REQUIRE_MESSAGE(first.ok(), first.status());
  auto second = CreateRedisClusterLeaderboard(cluster, "season", Options(5));
  REQUIRE_MESSAGE(second.ok(), second.status());
  REQUIRE((*first)->Set(1, 10).ok());
  REQUIRE((*second)->Set(2, 20).ok());
  CHECK(All(**first) == Entries{{2, 20, 0}, {1, 10, 1}});
  CHECK(All(**second) == Entries{{2, 20, 0}, {1, 10, 1}});
  // A cursor names the board, not the handle.
  LeaderboardReadOptions read;
  read.limit = 1;
  read.cursor = (*first)->ReadPage(read).value().next_cursor;
  CHECK((*second)->ReadPage(read).value().entries == Entries{{1, 10, 1}});

  auto other_count =
      CreateRedisClusterLeaderboard(cluster, "season", Options(6));
  REQUIRE_FALSE(other_count.ok());
  CHECK(other_count.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_MESSAGE(Contains(other_count.status(), "5 partitions"),
                other_count.status());
  // Another name under the same prefix is another board.
  auto other_name =
      CreateRedisClusterLeaderboard(cluster, "season-2", Options(6));
  REQUIRE_MESSAGE(other_name.ok(), other_name.status());
  CHECK((*other_name)->Size().value() == 0);
  CHECK((*other_name)->ReadPage(read).status().code() ==
        absl::StatusCode::kInvalidArgument);
  // Names are any bytes: braces (which would pick a key's hash slot) and
  // names differing only after them still name boards of their own.
  const std::string odd_names[] = {"{season}", "{season}x", "}{",
                                   std::string("a\0b", 3),
                                   std::string(kMaxLeaderboardNameLength, 'n')};
  for (size_t i = 0; i < std::size(odd_names); ++i) {
    CAPTURE(i);
    auto board =
        CreateRedisClusterLeaderboard(cluster, odd_names[i], Options(3));
    REQUIRE_MESSAGE(board.ok(), board.status());
    CHECK((*board)->Size().value() == 0);
    REQUIRE((*board)->Set(i, static_cast<int64_t>(i)).ok());
    CHECK(All(**board) == Entries{{i, static_cast<int64_t>(i), 0}});
  }
  for (const std::string& name :
       {std::string(), std::string(kMaxLeaderboardNameLength + 1, 'n')}) {
    CHECK(CreateRedisClusterLeaderboard(cluster, name, Options(5))
              .status()
              .code() == absl::StatusCode::kInvalidArgument);
  }
}

// Each capability a board reports present works; each it reports missing is
// refused with Unimplemented naming it, or (a guarantee rather than a call)
// changes what holds but fails nothing.
TEST_CASE("each board capability works where reported") {
  const std::unique_ptr<Leaderboard> board = NewBoard(Options(3));
  for (LeaderboardCapability capability : kAllLeaderboardCapabilities) {
    const bool present = board->Supports(capability);
    const std::string name = LeaderboardCapabilityName(capability);
    INFO(name << (present ? " (reported present)" : " (reported missing)"));
    CHECK(present == !OnCluster());
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
    }
  }
}

}  // namespace
}  // namespace feedcore
