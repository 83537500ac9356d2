// Conformance cases of the Leaderboard's reads by score range, percentiles,
// reads among given members and rank styles, on each backend (see
// backend.h). Expected answers are worked out from plain member -> score
// maps, never read back from the board under test. Where the backends
// differ by design (offsets, dense ranks: the cluster refuses them with
// Unimplemented) each side's documented behaviour is checked behind
// OnCluster().
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/backend.h"
#include "conformance/leaderboard_conformance_util.h"
#include "feedcore/leaderboard.h"
#include "support/leaderboard_test_util.h"

namespace feedcore {
namespace {

using testing::CheckInvalid;
using testing::Contains;
using testing::Entries;
using testing::kExact;
using testing::kMax;
using testing::kMin;
using testing::MakeBoard;
using testing::NewBackendBoard;
using testing::OnCluster;
using testing::Options;
using testing::Scores;

LeaderboardOptions StyledOptions(size_t partitions, ScoreOrder order,
                                 RankStyle style = RankStyle::kUnique) {
  LeaderboardOptions options = Options(partitions);
  options.score_order = order;
  options.rank_style = style;
  return options;
}

bool Better(int64_t a, int64_t b, ScoreOrder order) {
  return order == ScoreOrder::kHigherFirst ? a > b : a < b;
}

// `scores` best first on a board of `order`, with ranks in `style`
// (kUnique or kCompetition).
Entries Expected(const Scores& scores, ScoreOrder order, RankStyle style) {
  Entries out;
  for (const auto& [member, score] : scores) out.push_back({member, score, 0});
  std::sort(out.begin(), out.end(),
            [order](const LeaderboardEntry& a, const LeaderboardEntry& b) {
              if (a.score != b.score) return Better(a.score, b.score, order);
              return a.member < b.member;
            });
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].rank = style == RankStyle::kCompetition && i > 0 &&
                          out[i].score == out[i - 1].score
                      ? out[i - 1].rank
                      : i;
  }
  return out;
}

bool InRange(int64_t score, const ScoreRange& r) {
  return (r.min_exclusive ? score > r.min : score >= r.min) &&
         (r.max_exclusive ? score < r.max : score <= r.max);
}

Entries Within(const Entries& all, const ScoreRange& range) {
  Entries out;
  for (const LeaderboardEntry& e : all) {
    if (InRange(e.score, range)) out.push_back(e);
  }
  return out;
}

// Every entry within `read.range`, in pages of `read.limit`.
Entries ReadRange(const Leaderboard& board, LeaderboardReadOptions read) {
  Entries out;
  for (int pages = 0; pages < 10'000; ++pages) {
    const absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    out.insert(out.end(), page->entries.begin(), page->entries.end());
    if (page->next_cursor.empty()) break;
    read.cursor = page->next_cursor;
  }
  return out;
}

// Members spread over every partition, with scores repeating every
// `spread`, around 0, some at the ends of the cluster's range.
Scores BoardScores() {
  Scores scores = testing::TiedScores(60, 9);
  scores[1] = kExact;
  scores[2] = -kExact;
  scores[3] = kExact - 1;
  return scores;
}

std::vector<ScoreRange> Ranges() {
  return {
      {},
      {.min = -2, .max = 2},
      {.min = -2, .max = 2, .min_exclusive = true, .max_exclusive = true},
      {.min = -2, .max = -2},
      {.min = 3, .max = -3},
      {.min = 0, .max = 0, .min_exclusive = true},
      {.min = kMin, .max = 0},
      {.min = 1, .max = kMax, .min_exclusive = true},
      {.min = kMax, .max = kMax, .min_exclusive = true},
      {.min = kMin, .max = kMin, .max_exclusive = true},
      {.min = kExact - 1, .max = kMax},
      {.min = kMin, .max = -kExact, .max_exclusive = true},
      {.min = -kExact, .max = kExact, .min_exclusive = true},
  };
}

TEST_CASE("CountInRange: inclusive, exclusive, the int64 limits, empty") {
  for (ScoreOrder order : {ScoreOrder::kHigherFirst, ScoreOrder::kLowerFirst}) {
    CAPTURE(static_cast<int>(order));
    auto board = NewBackendBoard(StyledOptions(5, order));
    const Scores scores = BoardScores();
    testing::Fill(*board, scores);
    for (const ScoreRange& range : Ranges()) {
      CAPTURE(range.min);
      CAPTURE(range.max);
      CAPTURE(range.min_exclusive);
      CAPTURE(range.max_exclusive);
      size_t want = 0;
      for (const auto& [member, score] : scores) {
        want += InRange(score, range) ? 1 : 0;
      }
      CHECK(board->CountInRange(range).value() == want);
    }
  }
}

TEST_CASE("ReadPage within a score range, both orders, through cursors") {
  for (ScoreOrder order : {ScoreOrder::kHigherFirst, ScoreOrder::kLowerFirst}) {
    for (RankStyle style : {RankStyle::kUnique, RankStyle::kCompetition}) {
      CAPTURE(static_cast<int>(order));
      CAPTURE(static_cast<int>(style));
      auto board = NewBackendBoard(StyledOptions(4, order, style));
      const Scores scores = BoardScores();
      testing::Fill(*board, scores);
      const Entries all = Expected(scores, order, style);
      for (const ScoreRange& range : Ranges()) {
        CAPTURE(range.min);
        CAPTURE(range.max);
        for (size_t limit : {size_t{1}, size_t{4}, size_t{100}}) {
          CAPTURE(limit);
          LeaderboardReadOptions read;
          read.limit = limit;
          read.range = range;
          CHECK(ReadRange(*board, read) == Within(all, range));
          read.order = LeaderboardOrder::kWorstFirst;
          CHECK(ReadRange(*board, read) ==
                testing::Reversed(Within(all, range)));
        }
      }
      // A cursor from a read of the whole board continues within a range:
      // the page starts at the later of the cursor and the range's start.
      LeaderboardReadOptions whole;
      whole.limit = 3;
      const LeaderboardPage first = board->ReadPage(whole).value();
      LeaderboardReadOptions ranged;
      ranged.cursor = first.next_cursor;
      ranged.limit = 1000;
      ranged.range = {.min = -1, .max = 1};
      CHECK(ReadRange(*board, ranged) == Within(all, ranged.range));
    }
  }
}

TEST_CASE("ReadPage offset") {
  auto board = NewBackendBoard(Options(3));
  const Scores scores = BoardScores();
  testing::Fill(*board, scores);
  LeaderboardReadOptions read;
  read.limit = 5;
  read.offset = 7;
  const absl::StatusOr<LeaderboardPage> page = board->ReadPage(read);
  if (OnCluster()) {
    REQUIRE_FALSE(page.ok());
    CHECK(absl::IsUnimplemented(page.status()));
    CHECK(Contains(page.status(), "LeaderboardReadOptions.offset"));
  } else {
    REQUIRE_MESSAGE(page.ok(), page.status());
    CHECK(page->entries == testing::Slice(testing::Ranked(scores), 7, 12));
  }
  read.offset = 0;
  CHECK(board->ReadPage(read).value().entries ==
        testing::Slice(testing::Ranked(scores), 0, 5));
}

TEST_CASE("competition ranks in every read") {
  for (ScoreOrder order : {ScoreOrder::kHigherFirst, ScoreOrder::kLowerFirst}) {
    CAPTURE(static_cast<int>(order));
    auto board =
        NewBackendBoard(StyledOptions(5, order, RankStyle::kCompetition));
    const Scores scores = testing::TiedScores(50, 6);
    testing::Fill(*board, scores);
    const Entries all = Expected(scores, order, RankStyle::kCompetition);
    CHECK(board->TopK(17).value() == testing::Slice(all, 0, 17));
    CHECK(testing::All(*board) == all);
    for (size_t limit : {size_t{1}, size_t{7}}) {
      CHECK(testing::ReadAllPages(*board, LeaderboardOrder::kBestFirst,
                                  limit) == all);
      CHECK(testing::ReadAllPages(*board, LeaderboardOrder::kWorstFirst,
                                  limit) == testing::Reversed(all));
    }
    for (size_t i = 0; i < all.size(); i += 7) {
      CAPTURE(i);
      CHECK(board->Rank(all[i].member).value() == all[i].rank);
      CHECK(board->Around(all[i].member, 3, 2).value() ==
            testing::Slice(all, i >= 3 ? i - 3 : 0, i + 3));
    }
  }
}

TEST_CASE("dense ranks: memory keeps them, the cluster refuses") {
  absl::StatusOr<std::unique_ptr<Leaderboard>> board = MakeBoard(
      StyledOptions(3, ScoreOrder::kHigherFirst, RankStyle::kDense), "lb-unit");
  if (OnCluster()) {
    REQUIRE_FALSE(board.ok());
    CHECK(absl::IsUnimplemented(board.status()));
    CHECK(Contains(board.status(), "LeaderboardOptions.rank_style"));
    CHECK(Contains(board.status(), "kDenseRanks"));
    return;
  }
  REQUIRE_MESSAGE(board.ok(), board.status());
  testing::Fill(**board, {{1, 900}, {2, 900}, {3, 800}, {4, 700}});
  CHECK(testing::All(**board) ==
        Entries{{1, 900, 0}, {2, 900, 0}, {3, 800, 1}, {4, 700, 2}});
  CHECK((*board)->Rank(4).value() == 2);
}

TEST_CASE("Percentile: unique and competition, NotFound") {
  for (RankStyle style : {RankStyle::kUnique, RankStyle::kCompetition}) {
    CAPTURE(static_cast<int>(style));
    auto board =
        NewBackendBoard(StyledOptions(4, ScoreOrder::kHigherFirst, style));
    REQUIRE(board->Set(10, 5).ok());
    CHECK(board->Percentile(10).value() == 0.0);
    // 100 members: scores 0..98 once, 50 twice.
    for (MemberId m = 11; m < 110; ++m) {
      REQUIRE(
          board->Set(m * 0x9E3779B97F4A7C15ull, static_cast<int64_t>(m) - 11)
              .ok());
    }
    REQUIRE(board->Set(10, 50).ok());
    CHECK(board->Size().value() == 100);
    // The leader (98) is above 99 members.
    CHECK(board->Percentile(109 * 0x9E3779B97F4A7C15ull).value() == 99.0);
    CHECK(board->Percentile(11 * 0x9E3779B97F4A7C15ull).value() == 0.0);
    // Member 10 ties with the other 50, which ranks above it (lower id
    // first); the tie ranks below it only with unique ranks.
    // Below both: the 50 scores 0..49. Below member 10 with unique ranks:
    // its twin too.
    const MemberId twin = 61 * 0x9E3779B97F4A7C15ull;
    CHECK(board->Percentile(twin).value() == 50.0);
    CHECK(board->Percentile(10).value() ==
          (style == RankStyle::kUnique ? 51.0 : 50.0));
    CHECK(board->Percentile(7).status().code() == absl::StatusCode::kNotFound);
  }
}

TEST_CASE("TopKAmong, RankAmong, AroundAmong: a friends' board") {
  for (ScoreOrder order : {ScoreOrder::kHigherFirst, ScoreOrder::kLowerFirst}) {
    for (RankStyle style : {RankStyle::kUnique, RankStyle::kCompetition}) {
      CAPTURE(static_cast<int>(order));
      CAPTURE(static_cast<int>(style));
      auto board = NewBackendBoard(StyledOptions(5, order, style));
      const Scores scores = testing::TiedScores(80, 7);
      testing::Fill(*board, scores);
      // Every third member, twice, and ids that are not on the board.
      std::vector<MemberId> friends;
      Scores among;
      size_t i = 0;
      for (const auto& [member, score] : scores) {
        if (i++ % 3 != 0) continue;
        friends.push_back(member);
        friends.push_back(member);
        among[member] = score;
      }
      friends.push_back(5);
      friends.push_back(6);
      const Entries want = Expected(among, order, style);
      CHECK(board->TopKAmong(friends, 1000).value() == want);
      CHECK(board->TopKAmong(friends, 4).value() == testing::Slice(want, 0, 4));
      for (size_t at : {size_t{0}, size_t{5}, want.size() - 1}) {
        CAPTURE(at);
        const MemberId member = want[at].member;
        CHECK(board->RankAmong(member, friends).value() == want[at].rank);
        CHECK(board->AroundAmong(member, friends, 2, 2).value() ==
              testing::Slice(want, at >= 2 ? at - 2 : 0, at + 3));
      }
      // The member itself counts among them, even if not in the list.
      MemberId outsider = 0;
      for (const auto& [member, score] : scores) {
        if (among.count(member) == 0) outsider = member;
      }
      REQUIRE(outsider != 0);
      Scores with_outsider = among;
      with_outsider[outsider] = scores.at(outsider);
      const Entries with = Expected(with_outsider, order, style);
      for (size_t at = 0; at < with.size(); ++at) {
        if (with[at].member != outsider) continue;
        CHECK(board->RankAmong(outsider, friends).value() == with[at].rank);
        CHECK(board->AroundAmong(outsider, friends, 1, 1).value() ==
              testing::Slice(with, at >= 1 ? at - 1 : 0, at + 2));
      }
      // Absent anchor, empty lists, bounds.
      CHECK(board->RankAmong(5, friends).status().code() ==
            absl::StatusCode::kNotFound);
      CHECK(board->AroundAmong(5, friends, 1, 1).status().code() ==
            absl::StatusCode::kNotFound);
      CHECK(board->TopKAmong({}, 3).value().empty());
      CHECK(board->RankAmong(outsider, {}).value() == 0);
      CheckInvalid(board->TopKAmong(friends, 0).status(), "TopKAmong k");
      CheckInvalid(board->TopKAmong(friends, 1001).status(), "TopKAmong k");
      CheckInvalid(board->AroundAmong(outsider, friends, 1001, 0).status(),
                   "AroundAmong before");
      const std::vector<MemberId> too_many(kMaxAmongMembers + 1, 1);
      CheckInvalid(board->TopKAmong(too_many, 1).status(), "members");
      CheckInvalid(board->RankAmong(1, too_many).status(), "members");
    }
  }
}

}  // namespace
}  // namespace feedcore
