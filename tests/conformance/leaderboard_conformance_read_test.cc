// Unit cases of the Leaderboard interface's reads that every backend must
// pass alike (see backend.h for how the backend is chosen): Rank, TopK and
// Around across partitions, ReadPage and its cursors, NotFound, failed calls
// that change nothing, and the cluster's boards shared by name. Expected
// boards are computed here with the reference model from plain
// member -> score maps, never read back from the board under test.
//
// Every case here uses TieBreak::kLowerMemberFirst; kEarlierUpdateFirst is
// checked by leaderboard_conformance_test.cc and, at length, by the model
// test.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
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
using testing::Entries;
using testing::Fill;
using testing::kExact;
using testing::kMax;
using testing::kMin;
using testing::NewBackendBoard;
using testing::OnCluster;
using testing::Options;
using testing::Ranked;
using testing::ReadAllPages;
using testing::Reversed;
using testing::Scores;
using testing::Slice;
using testing::TiedScores;

TEST_CASE("Rank is exact across partitions") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBackendBoard(Options(partitions));
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
    auto board = NewBackendBoard(Options(partitions, 50));
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
    auto board = NewBackendBoard(Options(partitions, 200));
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
    auto board = NewBackendBoard(Options(partitions, 10));
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
    auto board = NewBackendBoard(Options(partitions));
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
    auto board = NewBackendBoard(Options(partitions, 500));
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
    auto board = NewBackendBoard(Options(2));
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

TEST_CASE("a page read without a next cursor has the same entries") {
  for (size_t partitions : {1, 3}) {
    CAPTURE(partitions);
    auto board = NewBackendBoard(Options(partitions));
    const Scores scores = TiedScores(40, 7);
    Fill(*board, scores);
    for (LeaderboardOrder order :
         {LeaderboardOrder::kBestFirst, LeaderboardOrder::kWorstFirst}) {
      LeaderboardReadOptions read;
      read.order = order;
      read.limit = 5;
      read.offset = OnCluster() ? 0 : 3;  // the cluster refuses offsets
      read.range = ScoreRange{-2, 2};
      absl::StatusOr<LeaderboardPage> with_cursor = board->ReadPage(read);
      REQUIRE(with_cursor.ok());
      REQUIRE_FALSE(with_cursor->next_cursor.empty());
      read.with_next_cursor = false;
      absl::StatusOr<LeaderboardPage> without = board->ReadPage(read);
      REQUIRE(without.ok());
      CHECK(without->entries == with_cursor->entries);
      CHECK(without->next_cursor.empty());
    }
  }
}

TEST_CASE("paging is keyset-based: unchanged members once each") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBackendBoard(Options(partitions));
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
  auto board = NewBackendBoard(Options(2, 20));
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
  auto board = NewBackendBoard(Options(3));
  auto other = NewBackendBoard(Options(3));
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
  auto board = NewBackendBoard(Options(4));
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
  auto board = NewBackendBoard(Options(3));
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
    absl::StatusOr<std::optional<int64_t>> absent =
        board->ScoreIfPresent(member);
    REQUIRE(absent.ok());
    CHECK_FALSE(absent->has_value());
  }
  CHECK(All(*board) == before);
  absl::StatusOr<std::optional<int64_t>> present = board->ScoreIfPresent(1);
  REQUIRE(present.ok());
  CHECK(*present == std::optional<int64_t>(10));
  REQUIRE(board->Clear().ok());
  CHECK(board->Score(1).status().code() == absl::StatusCode::kNotFound);
  CHECK(board->ScoreIfPresent(1)->has_value() == false);
  CHECK(board->Remove(1).code() == absl::StatusCode::kNotFound);
  CHECK(board->Around(1, 1, 1).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("every failed call changes nothing") {
  for (size_t partitions : {1, 3, 16}) {
    CAPTURE(partitions);
    auto board = NewBackendBoard(Options(partitions, 20));
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

}  // namespace
}  // namespace feedcore
