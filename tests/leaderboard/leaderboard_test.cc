// Unit tests of the public Leaderboard and LeaderboardRegistry API: every
// call, ties under both rules, negative and extreme scores, overflow, the
// empty board, k larger than the board, paging in both orders, bad cursors
// and every other error path (each checked to change nothing). Cursors of
// other kinds are tested with the codec in leaderboard_cursor_test.
#include "feedcore/leaderboard.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "support/leaderboard_test_util.h"

namespace feedcore {
namespace {

using testing::DescribeResults;
using testing::NewBoard;
using testing::ReadAllPages;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

bool Contains(const absl::Status& status, const std::string& text) {
  return std::string(status.message()).find(text) != std::string::npos;
}

// The whole board best-first, in pages as large as the board allows.
std::vector<LeaderboardEntry> All(const Leaderboard& board) {
  return ReadAllPages(board, LeaderboardOrder::kBestFirst,
                      board.options().max_page_size);
}

TEST_CASE("Create validates every option and names it") {
  struct Case {
    LeaderboardOptions options;
    const char* field;
  };
  LeaderboardOptions bad_tie;
  bad_tie.tie_break = static_cast<TieBreak>(7);
  const Case cases[] = {
      {{.partitions = 0}, "LeaderboardOptions.partitions is 0"},
      {{.partitions = kMaxLeaderboardPartitions + 1},
       "LeaderboardOptions.partitions is 1025"},
      {{.max_page_size = 0}, "LeaderboardOptions.max_page_size is 0"},
      {{.max_page_size = kMaxLeaderboardPageSizeLimit + 1},
       "LeaderboardOptions.max_page_size is 100001"},
      {bad_tie, "LeaderboardOptions.tie_break is 7"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::unique_ptr<Leaderboard>> board =
        Leaderboard::Create(c.options);
    REQUIRE_FALSE(board.ok());
    CHECK(board.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_MESSAGE(Contains(board.status(), c.field), board.status());
  }
  CHECK(Leaderboard::Create({.partitions = 1}).ok());
  CHECK(Leaderboard::Create({.partitions = kMaxLeaderboardPartitions,
                             .max_page_size = kMaxLeaderboardPageSizeLimit})
            .ok());
  auto board = NewBoard();
  CHECK(board->options() == LeaderboardOptions{});
  CHECK(board->options().partitions == 16);
}

TEST_CASE("an empty board") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBoard({.partitions = partitions});
    CHECK(board->Size().value() == 0);
    CHECK(board->TopK(10).value().empty());
    CHECK(board->TopK(1).value().empty());
    for (LeaderboardOrder order :
         {LeaderboardOrder::kBestFirst, LeaderboardOrder::kWorstFirst}) {
      LeaderboardReadOptions read;
      read.order = order;
      absl::StatusOr<LeaderboardPage> page = board->ReadPage(read);
      REQUIRE(page.ok());
      CHECK(page->entries.empty());
      CHECK(page->next_cursor.empty());
    }
    CHECK(board->Score(1).status().code() == absl::StatusCode::kNotFound);
    CHECK(board->Rank(1).status().code() == absl::StatusCode::kNotFound);
    CHECK(board->Around(1, 2, 2).status().code() ==
          absl::StatusCode::kNotFound);
    const absl::Status removed = board->Remove(1);
    CHECK(removed.code() == absl::StatusCode::kNotFound);
    CHECK_MESSAGE(Contains(removed, "member 1 is not on the leaderboard"),
                  removed);
    REQUIRE(board->Clear().ok());
    CHECK(board->Size().value() == 0);
  }
}

TEST_CASE("Set, Score, Remove") {
  auto board = NewBoard({.partitions = 3});
  CHECK(board->Set(10, 500).ok());
  CHECK(board->Set(11, -20).ok());
  CHECK(board->Set(12, 0).ok());
  CHECK(board->Score(10).value() == 500);
  CHECK(board->Score(11).value() == -20);
  CHECK(board->Score(12).value() == 0);
  CHECK(board->Size().value() == 3);

  CHECK(board->Set(10, 7).ok());  // overwrite, lower
  CHECK(board->Score(10).value() == 7);
  CHECK(board->Size().value() == 3);

  CHECK(board->Remove(11).ok());
  CHECK(board->Score(11).status().code() == absl::StatusCode::kNotFound);
  CHECK(board->Remove(11).code() == absl::StatusCode::kNotFound);
  CHECK(board->Size().value() == 2);
  CHECK(All(*board) == std::vector<LeaderboardEntry>{{10, 7, 0}, {12, 0, 1}});

  // A removed member comes back as new.
  CHECK(board->Set(11, 100).ok());
  CHECK(board->Rank(11).value() == 0);
}

TEST_CASE("Increment creates at delta and returns the new score") {
  auto board = NewBoard({.partitions = 4});
  CHECK(board->Increment(1, 5).value() == 5);
  CHECK(board->Increment(1, 5).value() == 10);
  CHECK(board->Increment(1, -25).value() == -15);
  CHECK(board->Increment(2, -3).value() == -3);
  CHECK(board->Increment(3, 0).value() == 0);
  CHECK(board->Score(1).value() == -15);
  CHECK(board->Size().value() == 3);
  CHECK(All(*board) ==
        std::vector<LeaderboardEntry>{{3, 0, 0}, {2, -3, 1}, {1, -15, 2}});
}

TEST_CASE("Increment overflow is OutOfRange and changes nothing") {
  auto board = NewBoard({.partitions = 2});
  REQUIRE(board->Set(1, kMax - 5).ok());
  REQUIRE(board->Set(2, kMin + 5).ok());
  REQUIRE(board->Set(3, kMax - 5).ok());  // tied with 1, updated later
  const std::vector<LeaderboardEntry> before = All(*board);

  absl::StatusOr<int64_t> up = board->Increment(1, 6);
  REQUIRE_FALSE(up.ok());
  CHECK(up.status().code() == absl::StatusCode::kOutOfRange);
  CHECK_MESSAGE(Contains(up.status(), "Increment(member 1, delta 6)"),
                up.status());
  CHECK(board->Increment(1, kMax).status().code() ==
        absl::StatusCode::kOutOfRange);
  absl::StatusOr<int64_t> down = board->Increment(2, -6);
  CHECK(down.status().code() == absl::StatusCode::kOutOfRange);
  CHECK(board->Increment(2, kMin).status().code() ==
        absl::StatusCode::kOutOfRange);
  CHECK(All(*board) == before);  // scores and the tie order unchanged

  // Up to the limits exactly is fine.
  CHECK(board->Increment(1, 5).value() == kMax);
  CHECK(board->Increment(2, -5).value() == kMin);
  CHECK(board->Increment(1, 0).value() == kMax);
  CHECK(board->Increment(4, kMin).value() == kMin);
  CHECK(board->Increment(4, kMax).value() == -1);
}

TEST_CASE("IncrementMany returns what Increment would, element by element") {
  auto board = NewBoard({.partitions = 4});
  REQUIRE(board->Set(1, 100).ok());
  const std::vector<absl::StatusOr<int64_t>> results = board->IncrementMany({
      {1, 5},    // existing member
      {2, -3},   // new member, created at delta
      {1, 5},    // the same member again: the running sum
      {3, 0},    // new member at 0
      {2, 0},    // no change
      {1, -20},  // negative
  });
  CHECK(DescribeResults(results) ==
        std::vector<std::string>{"105", "-3", "110", "0", "-3", "90"});
  CHECK(All(*board) ==
        std::vector<LeaderboardEntry>{{1, 90, 0}, {3, 0, 1}, {2, -3, 2}});
  CHECK(board->IncrementMany({}).empty());
  CHECK(board->Size().value() == 3);
}

TEST_CASE("IncrementMany: an overflowing element fails alone") {
  auto board = NewBoard({.partitions = 3});
  REQUIRE(board->Set(1, kMax - 5).ok());
  REQUIRE(board->Set(3, kMax - 5).ok());  // tied with 1, below it
  const std::vector<absl::StatusOr<int64_t>> results =
      board->IncrementMany({{1, 6}, {2, 7}, {1, kMin}, {1, 6}, {2, 1}});
  REQUIRE(results.size() == 5);
  CHECK(results[0].status().code() == absl::StatusCode::kOutOfRange);
  CHECK_MESSAGE(Contains(results[0].status(), "Increment(member 1, delta 6)"),
                results[0].status());
  CHECK(results[1].value() == 7);
  CHECK(results[2].value() == -6);  // kMax - 5 + kMin fits
  CHECK(results[3].value() == 0);   // after the element before it
  CHECK(results[4].value() == 8);

  // The failed element changed nothing: member 3 keeps its place when
  // member 1 fails without moving.
  auto tied = NewBoard({.partitions = 3});
  REQUIRE(tied->Set(1, kMax - 5).ok());
  REQUIRE(tied->Set(3, kMax - 5).ok());
  const std::vector<LeaderboardEntry> before = All(*tied);
  const std::vector<absl::StatusOr<int64_t>> failed =
      tied->IncrementMany({{1, 6}, {3, kMax}});
  CHECK(DescribeResults(failed) ==
        std::vector<std::string>{"OUT_OF_RANGE", "OUT_OF_RANGE"});
  CHECK(All(*tied) == before);
}

TEST_CASE("IncrementMany ties: numbered in the order given") {
  // Members in every partition reach 100 within one call: they rank in the
  // order of their elements, whatever their partitions and ids, and below
  // the member that was at 100 before the call.
  auto board = NewBoard({.partitions = 16});
  REQUIRE(board->Set(500, 100).ok());
  std::vector<ScoreIncrement> batch;
  std::vector<LeaderboardEntry> expected = {{500, 100, 0}};
  for (MemberId m = 40; m > 0; --m) {
    batch.push_back({m, 60});
    batch.push_back({m, 40});
    expected.push_back({m, 100, expected.size()});
  }
  for (const absl::StatusOr<int64_t>& r : board->IncrementMany(batch)) {
    REQUIRE(r.ok());
  }
  CHECK(All(*board) == expected);

  auto by_id =
      NewBoard({.partitions = 16, .tie_break = TieBreak::kLowerMemberFirst});
  for (const absl::StatusOr<int64_t>& r : by_id->IncrementMany(batch)) {
    REQUIRE(r.ok());
  }
  CHECK(by_id->TopK(3).value() ==
        std::vector<LeaderboardEntry>{{1, 100, 0}, {2, 100, 1}, {3, 100, 2}});
}

TEST_CASE("IncrementMany equals one Increment per element") {
  // Long runs per partition (past the 128 applied under one lock hold),
  // hot and cold members, a few partitions and many.
  for (size_t partitions : {1, 3, 16}) {
    for (TieBreak tie_break :
         {TieBreak::kEarlierUpdateFirst, TieBreak::kLowerMemberFirst}) {
      CAPTURE(partitions);
      const LeaderboardOptions options{.partitions = partitions,
                                       .tie_break = tie_break};
      auto batched = NewBoard(options);
      auto one_by_one = NewBoard(options);
      std::mt19937_64 rng(partitions * 7 + static_cast<int>(tie_break));
      for (int call = 0; call < 20; ++call) {
        std::vector<ScoreIncrement> batch(rng() % 2000);
        for (ScoreIncrement& increment : batch) {
          increment.member = rng() % 4 == 0 ? rng() % 10 : rng() % 3000;
          increment.delta = static_cast<int64_t>(rng() % 41) - 20;
        }
        const std::vector<absl::StatusOr<int64_t>> results =
            batched->IncrementMany(batch);
        REQUIRE(results.size() == batch.size());
        for (size_t i = 0; i < batch.size(); ++i) {
          const absl::StatusOr<int64_t> want =
              one_by_one->Increment(batch[i].member, batch[i].delta);
          REQUIRE(results[i].ok());
          REQUIRE(results[i].value() == want.value());
        }
      }
      CHECK(All(*batched) == All(*one_by_one));
    }
  }
}

TEST_CASE("ties: earlier update first, then lower member id") {
  auto board = NewBoard({.partitions = 3});
  REQUIRE(board->Set(30, 100).ok());
  REQUIRE(board->Set(20, 100).ok());
  REQUIRE(board->Increment(10, 100).ok());
  // Same score: in the order they reached it, whatever the ids.
  CHECK(All(*board) == std::vector<LeaderboardEntry>{
                           {30, 100, 0}, {20, 100, 1}, {10, 100, 2}});

  // No change of score keeps the place.
  REQUIRE(board->Set(30, 100).ok());
  REQUIRE(board->Increment(30, 0).ok());
  CHECK(board->Rank(30).value() == 0);

  // Leaving the score and coming back is a new arrival.
  REQUIRE(board->Increment(30, 1).ok());
  CHECK(board->Rank(30).value() == 0);
  REQUIRE(board->Increment(30, -1).ok());
  CHECK(All(*board) == std::vector<LeaderboardEntry>{
                           {20, 100, 0}, {10, 100, 1}, {30, 100, 2}});
}

TEST_CASE("ties: lower member id first") {
  auto board =
      NewBoard({.partitions = 3, .tie_break = TieBreak::kLowerMemberFirst});
  REQUIRE(board->Set(30, 100).ok());
  REQUIRE(board->Set(20, 100).ok());
  REQUIRE(board->Increment(10, 100).ok());
  REQUIRE(board->Set(5, 99).ok());
  CHECK(All(*board) ==
        std::vector<LeaderboardEntry>{
            {10, 100, 0}, {20, 100, 1}, {30, 100, 2}, {5, 99, 3}});
  REQUIRE(board->Increment(10, 1).ok());
  REQUIRE(board->Increment(10, -1).ok());
  CHECK(board->Rank(10).value() == 0);
}

TEST_CASE("negative and extreme scores sort as integers") {
  auto board = NewBoard({.partitions = 5});
  const int64_t scores[] = {0, -1, 1, kMin, kMax, -1000, 1000, kMin + 1};
  MemberId member = 1;
  for (int64_t s : scores) REQUIRE(board->Set(member++, s).ok());
  std::vector<int64_t> expected(std::begin(scores), std::end(scores));
  std::sort(expected.rbegin(), expected.rend());
  std::vector<int64_t> got;
  for (const LeaderboardEntry& e : All(*board)) got.push_back(e.score);
  CHECK(got == expected);
  CHECK(board->Rank(5).value() == 0);  // kMax
  CHECK(board->Rank(4).value() == 7);  // kMin
}

TEST_CASE("TopK: exact, k larger than the board, bounds on k") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBoard({.partitions = partitions, .max_page_size = 50});
    for (MemberId m = 1; m <= 40; ++m) {
      REQUIRE(board->Set(m, static_cast<int64_t>((m * 37) % 23)).ok());
    }
    const std::vector<LeaderboardEntry> all = All(*board);
    REQUIRE(all.size() == 40);
    for (size_t k : {1, 2, 7, 39, 40, 41, 50}) {
      CAPTURE(k);
      const std::vector<LeaderboardEntry> top = board->TopK(k).value();
      CHECK(top == std::vector<LeaderboardEntry>(
                       all.begin(), all.begin() + std::min<size_t>(k, 40)));
    }
    for (size_t k :
         {size_t{0}, size_t{51}, std::numeric_limits<size_t>::max()}) {
      absl::StatusOr<std::vector<LeaderboardEntry>> top = board->TopK(k);
      REQUIRE_FALSE(top.ok());
      CHECK(top.status().code() == absl::StatusCode::kInvalidArgument);
      CHECK_MESSAGE(Contains(top.status(), "TopK k is"), top.status());
      CHECK_MESSAGE(Contains(top.status(), "LeaderboardOptions.max_page_size"),
                    top.status());
    }
  }
}

TEST_CASE("Rank is the number of members above") {
  auto board = NewBoard({.partitions = 7});
  for (MemberId m = 0; m < 100; ++m) {
    REQUIRE(board->Set(m, static_cast<int64_t>(m % 10) * 10 - 45).ok());
  }
  const std::vector<LeaderboardEntry> all = All(*board);
  for (const LeaderboardEntry& e : all) {
    CHECK(board->Rank(e.member).value() == e.rank);
  }
  CHECK(all[0].score == 45);
  CHECK(all[99].score == -45);
  const absl::Status missing = board->Rank(1000).status();
  CHECK(missing.code() == absl::StatusCode::kNotFound);
  CHECK_MESSAGE(Contains(missing, "member 1000"), missing);
}

TEST_CASE("Around: neighbours across partitions, clipped at both ends") {
  auto board = NewBoard({.partitions = 4, .max_page_size = 10});
  for (MemberId m = 1; m <= 30; ++m) {
    REQUIRE(board->Set(m, static_cast<int64_t>(m) * 3).ok());
  }
  const std::vector<LeaderboardEntry> all = All(*board);  // 30 first
  auto slice = [&all](size_t from, size_t to) {
    return std::vector<LeaderboardEntry>(all.begin() + from, all.begin() + to);
  };
  // Member 15 has rank 15 (members 16..30 above it).
  CHECK(board->Around(15, 2, 3).value() == slice(13, 19));
  CHECK(board->Around(15, 0, 0).value() == slice(15, 16));
  CHECK(board->Around(15, 10, 0).value() == slice(5, 16));
  CHECK(board->Around(30, 5, 2).value() == slice(0, 3));  // the leader
  CHECK(board->Around(29, 5, 0).value() == slice(0, 2));
  CHECK(board->Around(1, 3, 10).value() == slice(26, 30));  // the last
  CHECK(board->Around(2, 0, 10).value() == slice(28, 30));

  absl::StatusOr<std::vector<LeaderboardEntry>> bad = board->Around(15, 11, 0);
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(bad.status(), "Around before is 11"), bad.status());
  bad = board->Around(15, 0, 11);
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(bad.status(), "Around after is 11"), bad.status());
  CHECK(board->Around(99, 1, 1).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("Around with ties on the member's score") {
  auto board = NewBoard({.partitions = 3});
  for (MemberId m = 1; m <= 9; ++m) REQUIRE(board->Set(m, 50).ok());
  const std::vector<LeaderboardEntry> all = All(*board);
  CHECK(all.front().member == 1);
  CHECK(all.back().member == 9);
  CHECK(board->Around(5, 2, 2).value() ==
        std::vector<LeaderboardEntry>(all.begin() + 2, all.begin() + 7));
}

TEST_CASE("ReadPage walks the board in both orders with exact ranks") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBoard({.partitions = partitions});
    for (MemberId m = 0; m < 101; ++m) {
      REQUIRE(board->Set(m, static_cast<int64_t>(m % 13) - 6).ok());
    }
    const std::vector<LeaderboardEntry> best = board->TopK(101).value();
    for (size_t limit : {1, 2, 10, 100, 101, 500}) {
      CAPTURE(limit);
      size_t pages = 0;
      CHECK(ReadAllPages(*board, LeaderboardOrder::kBestFirst, limit, &pages) ==
            best);
      CHECK(pages == (101 + limit - 1) / limit);
      const std::vector<LeaderboardEntry> worst =
          ReadAllPages(*board, LeaderboardOrder::kWorstFirst, limit);
      CHECK(worst == std::vector<LeaderboardEntry>(best.rbegin(), best.rend()));
    }
  }
}

TEST_CASE("a page ending exactly at the end has no cursor") {
  auto board = NewBoard({.partitions = 2});
  for (MemberId m = 0; m < 4; ++m) REQUIRE(board->Set(m, 1).ok());
  LeaderboardReadOptions read;
  read.limit = 4;
  absl::StatusOr<LeaderboardPage> page = board->ReadPage(read);
  REQUIRE(page.ok());
  CHECK(page->entries.size() == 4);
  CHECK(page->next_cursor.empty());
  read.limit = 3;
  page = board->ReadPage(read);
  REQUIRE(page.ok());
  CHECK_FALSE(page->next_cursor.empty());
}

TEST_CASE("paging is keyset-based: unchanged members once each") {
  auto board = NewBoard({.partitions = 3});
  for (MemberId m = 0; m < 30; ++m) {
    REQUIRE(board->Set(m, static_cast<int64_t>(m) * 10).ok());
  }
  LeaderboardReadOptions read;
  read.limit = 10;
  LeaderboardPage first = board->ReadPage(read).value();
  CHECK(first.entries.front().member == 29);
  CHECK(first.entries.back().member == 20);
  // Between pages: new members above and below the cursor, a removal of
  // one already read and one not yet read, and a member ahead that moves
  // to the part already read.
  REQUIRE(board->Set(100, 1000).ok());  // above: not returned
  REQUIRE(board->Set(101, 155).ok());   // below: returned once
  REQUIRE(board->Remove(25).ok());      // already read
  REQUIRE(board->Remove(12).ok());      // ahead: skipped
  REQUIRE(board->Set(5, 999).ok());     // moves above the cursor
  read.cursor = first.next_cursor;
  std::vector<LeaderboardEntry> rest;
  while (true) {
    LeaderboardPage page = board->ReadPage(read).value();
    rest.insert(rest.end(), page.entries.begin(), page.entries.end());
    if (page.next_cursor.empty()) break;
    read.cursor = page.next_cursor;
  }
  std::vector<MemberId> members;
  for (const LeaderboardEntry& e : rest) members.push_back(e.member);
  const std::vector<MemberId> expected = {
      19, 18, 17, 16, 101, 15, 14, 13, 11, 10, 9, 8, 7, 6, 4, 3, 2, 1, 0};
  CHECK(members == expected);
  // Ranks are those of the board at the time of each page: member 19 has
  // 100, 5, and 20..29 without 25 above it.
  CHECK(rest.front().rank == 11);
  CHECK(rest.back().rank == board->Size().value() - 1);
}

TEST_CASE("ReadPage validates limit and order") {
  auto board = NewBoard({.partitions = 2, .max_page_size = 20});
  REQUIRE(board->Set(1, 1).ok());
  LeaderboardReadOptions read;
  read.limit = 0;
  absl::StatusOr<LeaderboardPage> page = board->ReadPage(read);
  CHECK(page.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(page.status(), "LeaderboardReadOptions.limit is 0"),
                page.status());
  read.limit = 21;
  page = board->ReadPage(read);
  CHECK(page.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(page.status(), "must be 1..20"), page.status());
  read.limit = 20;
  read.order = static_cast<LeaderboardOrder>(9);
  page = board->ReadPage(read);
  CHECK(page.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(page.status(), "LeaderboardReadOptions.order is 9"),
                page.status());
}

TEST_CASE("bad cursors are rejected with a reason") {
  auto board = NewBoard({.partitions = 3});
  auto other = NewBoard({.partitions = 3});
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
    CHECK(page.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_MESSAGE(Contains(page.status(), "invalid leaderboard cursor"),
                  page.status());
    CHECK_MESSAGE(Contains(page.status(), c.why), page.status());
  }
  LeaderboardReadOptions foreign;
  foreign.cursor = cursor;
  absl::StatusOr<LeaderboardPage> page = other->ReadPage(foreign);
  CHECK(page.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(page.status(), "another leaderboard"), page.status());
  // The board is unchanged and the good cursor still works.
  foreign.limit = 100;
  CHECK(board->ReadPage(foreign).value().entries.size() == 7);
}

TEST_CASE("Clear empties the board; cursors continue from their key") {
  auto board = NewBoard({.partitions = 4});
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
  // A new season.
  REQUIRE(board->Set(7, 100).ok());
  REQUIRE(board->Set(8, 30).ok());
  CHECK(board->Increment(9, 5).value() == 5);
  read.cursor = cursor;  // was after score 40: only those below it
  const LeaderboardPage page = board->ReadPage(read).value();
  CHECK(page.entries == std::vector<LeaderboardEntry>{{8, 30, 1}, {9, 5, 2}});
  CHECK(board->Size().value() == 3);
}

TEST_CASE("registry: get, create, drop, names") {
  LeaderboardRegistry registry;
  CHECK(registry.size() == 0);
  CHECK(registry.Names().empty());
  auto duel = registry.GetOrCreate("duel", {.partitions = 4}).value();
  auto squad = registry.GetOrCreate("squad").value();
  CHECK(duel != squad);
  CHECK(registry.GetOrCreate("duel", {.partitions = 4}).value() == duel);
  CHECK(registry.Get("duel").value() == duel);
  CHECK(registry.Names() == std::vector<std::string>{"duel", "squad"});
  CHECK(registry.size() == 2);

  REQUIRE(duel->Set(1, 10).ok());
  CHECK(squad->Size().value() == 0);  // boards are independent

  absl::StatusOr<std::shared_ptr<Leaderboard>> clash =
      registry.GetOrCreate("duel", {.partitions = 8});
  CHECK(clash.status().code() == absl::StatusCode::kAlreadyExists);
  CHECK_MESSAGE(Contains(clash.status(), "partitions=4"), clash.status());
  CHECK_MESSAGE(Contains(clash.status(), "partitions=8"), clash.status());

  CHECK(registry.Get("solo").status().code() == absl::StatusCode::kNotFound);
  CHECK(registry.Drop("solo").code() == absl::StatusCode::kNotFound);
  CHECK(registry.GetOrCreate("").status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(registry.GetOrCreate(std::string(kMaxLeaderboardNameLength + 1, 'n'))
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
  CHECK(registry.GetOrCreate(std::string(kMaxLeaderboardNameLength, 'n')).ok());
  absl::StatusOr<std::shared_ptr<Leaderboard>> bad_options =
      registry.GetOrCreate("bad", {.partitions = 0});
  CHECK(bad_options.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(registry.Get("bad").status().code() == absl::StatusCode::kNotFound);
  CHECK(registry.size() == 3);

  // Dropping keeps the board alive for existing handles.
  LeaderboardReadOptions read;
  read.limit = 1;
  REQUIRE(duel->Set(2, 20).ok());
  const std::string cursor = duel->ReadPage(read).value().next_cursor;
  CHECK(registry.Drop("duel").ok());
  CHECK(registry.Get("duel").status().code() == absl::StatusCode::kNotFound);
  CHECK(duel->Score(1).value() == 10);
  // The same name again is a new, empty board that rejects old cursors.
  auto again = registry.GetOrCreate("duel", {.partitions = 4}).value();
  CHECK(again != duel);
  CHECK(again->Size().value() == 0);
  read.cursor = cursor;
  CHECK(again->ReadPage(read).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(duel->ReadPage(read).ok());
}

TEST_CASE("registry: rename moves a board, replacing the destination") {
  LeaderboardRegistry registry;
  auto weekly = registry.GetOrCreate("weekly", {.partitions = 4}).value();
  auto live = registry.GetOrCreate("live").value();
  REQUIRE(weekly->Set(1, 10).ok());
  REQUIRE(live->Set(2, 20).ok());

  // Bad input changes nothing.
  CHECK(registry.Rename("none", "x").code() == absl::StatusCode::kNotFound);
  CHECK(registry.Rename("weekly", "").code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(
      registry.Rename("weekly", std::string(kMaxLeaderboardNameLength + 1, 'n'))
          .code() == absl::StatusCode::kInvalidArgument);
  CHECK(registry.Names() == std::vector<std::string>{"live", "weekly"});

  // To its own name: nothing changes.
  const uint64_t generation = registry.Generation("weekly").value();
  CHECK(registry.Generation("live").value() != generation);
  CHECK(registry.Generation("none").status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(registry.Rename("weekly", "weekly").ok());
  CHECK(registry.Get("weekly").value() == weekly);

  // Over an existing board: the destination is dropped, handles keep
  // their boards.
  CHECK(registry.Rename("weekly", "live").ok());
  CHECK(registry.Names() == std::vector<std::string>{"live"});
  CHECK(registry.Get("live").value() == weekly);
  CHECK(registry.Generation("live").value() == generation);
  CHECK(registry.Get("weekly").status().code() == absl::StatusCode::kNotFound);
  CHECK(weekly->Score(1).value() == 10);
  CHECK(live->Score(2).value() == 20);  // the dropped board, still held
  REQUIRE(weekly->Set(3, 30).ok());
  CHECK(registry.Get("live").value()->Score(3).value() == 30);

  // The old name is free for a new board.
  auto fresh = registry.GetOrCreate("weekly").value();
  CHECK(fresh->Size().value() == 0);
  CHECK(registry.Rename("live", "archive").ok());
  CHECK(registry.Names() == std::vector<std::string>{"archive", "weekly"});
}

TEST_CASE("registry: thousands of boards are independent") {
  LeaderboardRegistry registry;
  constexpr int kBoards = 2000;
  for (int i = 0; i < kBoards; ++i) {
    auto board =
        registry.GetOrCreate("mode-" + std::to_string(i), {.partitions = 2})
            .value();
    REQUIRE(board->Set(static_cast<MemberId>(i), i).ok());
  }
  CHECK(registry.size() == kBoards);
  for (int i = 0; i < kBoards; i += 97) {
    auto board = registry.Get("mode-" + std::to_string(i)).value();
    CHECK(board->Size().value() == 1);
    CHECK(board->TopK(5).value() ==
          std::vector<LeaderboardEntry>{
              {static_cast<MemberId>(i), static_cast<int64_t>(i), 0}});
  }
  const std::vector<std::string> names = registry.Names();
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == kBoards);
}

}  // namespace
}  // namespace feedcore
