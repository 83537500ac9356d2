// Friends' boards: TopKAmong, RankAmong and AroundAmong (duplicates, absent
// ids, rank styles, argument checks, a set of 10,000 members) and
// FollowedAndSelf on an in-process FeedEngine.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/friends_leaderboard.h"
#include "feedcore/leaderboard.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

std::unique_ptr<Leaderboard> Board(RankStyle style = RankStyle::kUnique,
                                   size_t max_page_size = 100) {
  return Leaderboard::Create({.partitions = 4,
                              .tie_break = TieBreak::kLowerMemberFirst,
                              .max_page_size = max_page_size,
                              .rank_style = style})
      .value();
}

std::vector<MemberId> MembersOf(const std::vector<LeaderboardEntry>& entries) {
  std::vector<MemberId> members;
  for (const LeaderboardEntry& e : entries) members.push_back(e.member);
  return members;
}

std::vector<uint64_t> RanksOf(const std::vector<LeaderboardEntry>& entries) {
  std::vector<uint64_t> ranks;
  for (const LeaderboardEntry& e : entries) ranks.push_back(e.rank);
  return ranks;
}

TEST_CASE("TopKAmong: the set's best, ranked among the set") {
  auto board = Board();
  for (MemberId m = 1; m <= 20; ++m) {
    REQUIRE(board->Set(m, static_cast<int64_t>(m) * 10).ok());
  }
  // Duplicates count once, absent ids are skipped.
  const std::vector<MemberId> friends = {3, 17, 999, 3, 11, 17, 5, 1000};
  const std::vector<LeaderboardEntry> top =
      board->TopKAmong(friends, 10).value();
  CHECK(top == std::vector<LeaderboardEntry>{
                   {17, 170, 0}, {11, 110, 1}, {5, 50, 2}, {3, 30, 3}});
  CHECK(MembersOf(board->TopKAmong(friends, 2).value()) ==
        std::vector<MemberId>{17, 11});
  CHECK(board->TopKAmong({}, 5).value().empty());
  CHECK(board->TopKAmong(std::vector<MemberId>{998, 999}, 5).value().empty());
}

TEST_CASE("RankAmong and AroundAmong count the member itself once") {
  auto board = Board();
  for (MemberId m = 1; m <= 20; ++m) {
    REQUIRE(board->Set(m, static_cast<int64_t>(m) * 10).ok());
  }
  const std::vector<MemberId> friends = {3, 17, 999, 3, 11, 5, 8};
  // 8 is in the set as well as the member asked about.
  CHECK(board->RankAmong(8, friends).value() == 2);  // below 17 and 11
  CHECK(board->RankAmong(20, friends).value() == 0);
  CHECK(board->RankAmong(1, friends).value() == 5);
  CHECK(MembersOf(board->AroundAmong(8, friends, 1, 1).value()) ==
        std::vector<MemberId>{11, 8, 5});
  CHECK(RanksOf(board->AroundAmong(8, friends, 1, 1).value()) ==
        std::vector<uint64_t>{1, 2, 3});
  CHECK(MembersOf(board->AroundAmong(17, friends, 5, 1).value()) ==
        std::vector<MemberId>{17, 11});
  CHECK(MembersOf(board->AroundAmong(1, friends, 2, 4).value()) ==
        std::vector<MemberId>{5, 3, 1});
  CHECK(board->AroundAmong(1, {}, 2, 2).value() ==
        std::vector<LeaderboardEntry>{{1, 10, 0}});
  CHECK(board->RankAmong(999, friends).status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(board->AroundAmong(999, friends, 1, 1).status().code() ==
        absl::StatusCode::kNotFound);
}

TEST_CASE("shared ranks among the set") {
  const std::vector<MemberId> friends = {1, 2, 3, 4, 5, 6, 7};
  for (RankStyle style : {RankStyle::kCompetition, RankStyle::kDense}) {
    CAPTURE(static_cast<int>(style));
    auto board = Board(style);
    // 1, 2: 50; 3: 40; 4, 5, 6: 30; 7: 10. Member 8 (50) is not a friend.
    const int64_t scores[] = {50, 50, 40, 30, 30, 30, 10, 50};
    for (MemberId m = 1; m <= 8; ++m)
      REQUIRE(board->Set(m, scores[m - 1]).ok());
    const std::vector<uint64_t> want =
        style == RankStyle::kCompetition
            ? std::vector<uint64_t>{0, 0, 2, 3, 3, 3, 6}
            : std::vector<uint64_t>{0, 0, 1, 2, 2, 2, 3};
    CHECK(RanksOf(board->TopKAmong(friends, 10).value()) == want);
    for (MemberId m = 1; m <= 7; ++m) {
      CHECK(board->RankAmong(m, friends).value() == want[m - 1]);
    }
    // A window that starts inside a tie group keeps the group's rank.
    CHECK(RanksOf(board->AroundAmong(5, friends, 0, 2).value()) ==
          std::vector<uint64_t>(want.begin() + 4, want.end()));
    // The member asked about joins the set: 8 ties with 1 and 2.
    CHECK(board->RankAmong(8, friends).value() == 0);
    CHECK(board->RankAmong(3, std::vector<MemberId>{8, 1, 2}).value() ==
          (style == RankStyle::kCompetition ? 3u : 1u));
  }
}

TEST_CASE("Among reads check their arguments first") {
  auto board = Board(RankStyle::kUnique, /*max_page_size=*/10);
  REQUIRE(board->Set(1, 1).ok());
  const std::vector<MemberId> one = {1};
  CHECK(board->TopKAmong(one, 0).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(board->TopKAmong(one, 11).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(board->TopKAmong(one, 10).ok());
  const std::vector<MemberId> too_many(kMaxAmongMembers + 1, 1);
  const absl::Status big = board->TopKAmong(too_many, 1).status();
  CHECK(big.code() == absl::StatusCode::kInvalidArgument);
  CHECK(big.message().find("kMaxAmongMembers") != absl::string_view::npos);
  CHECK(board->RankAmong(1, too_many).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(board->AroundAmong(1, too_many, 1, 1).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(board->AroundAmong(1, one, 11, 0).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(board->AroundAmong(1, one, 0, 11).status().code() ==
        absl::StatusCode::kInvalidArgument);
  // Arguments are checked before the member is looked up.
  CHECK(board->AroundAmong(2, one, 11, 0).status().code() ==
        absl::StatusCode::kInvalidArgument);
  const std::vector<MemberId> most(kMaxAmongMembers, 1);
  CHECK(board->RankAmong(1, most).value() == 0);
}

TEST_CASE("10,000 friends on a board of 30,000") {
  auto board = Board(RankStyle::kDense, /*max_page_size=*/1000);
  for (MemberId m = 0; m < 30'000; ++m) {
    REQUIRE(board->Set(m, static_cast<int64_t>((m * 7919) % 2000)).ok());
  }
  // Every third member, some ids absent, a few repeated.
  std::vector<MemberId> friends;
  for (MemberId m = 0; m < 30'000; m += 3) friends.push_back(m);
  for (MemberId m = 40'000; m < 40'100; ++m) friends.push_back(m);
  for (MemberId m = 0; m < 300; m += 3) friends.push_back(m);
  REQUIRE(friends.size() == 10'200);
  // Expected: the friends on the board sorted by score, then id.
  std::vector<std::pair<int64_t, MemberId>> expected;
  for (MemberId m = 0; m < 30'000; m += 3) {
    expected.push_back({-static_cast<int64_t>((m * 7919) % 2000), m});
  }
  std::sort(expected.begin(), expected.end());
  const std::vector<LeaderboardEntry> top =
      board->TopKAmong(friends, 1000).value();
  REQUIRE(top.size() == 1000);
  uint64_t dense = 0;
  for (size_t i = 0; i < top.size(); ++i) {
    CAPTURE(i);
    CHECK(top[i].member == expected[i].second);
    CHECK(top[i].score == -expected[i].first);
    if (i > 0 && expected[i].first != expected[i - 1].first) ++dense;
    CHECK(top[i].rank == dense);
  }
  const MemberId last = expected.back().second;
  uint64_t distinct_better = 0;
  for (size_t i = 1; i < expected.size(); ++i) {
    if (expected[i].first != expected[i - 1].first &&
        expected[i].first <= expected.back().first) {
      ++distinct_better;
    }
  }
  CHECK(board->RankAmong(last, friends).value() == distinct_better);
}

TEST_CASE("FollowedAndSelf reads the follow list page by page") {
  EngineOptions options;
  options.max_page_size = 3;  // several pages for a handful of followees
  std::unique_ptr<InProcessFeedEngine> engine = testing::NewManualEngine(
      std::make_shared<ManualClock>(1'000'000), options);
  for (EntityId followee : {40, 7, 12, 99, 3, 55, 21}) {
    REQUIRE(engine->Follow(10, followee).ok());
  }
  CHECK(FollowedAndSelf(*engine, 10).value() ==
        std::vector<MemberId>{10, 3, 7, 12, 21, 40, 55, 99});
  CHECK(FollowedAndSelf(*engine, 10, 7).value().size() == 8);
  // No one followed: the user alone.
  CHECK(FollowedAndSelf(*engine, 500).value() == std::vector<MemberId>{500});

  const absl::Status too_many = FollowedAndSelf(*engine, 10, 6).status();
  CHECK(too_many.code() == absl::StatusCode::kInvalidArgument);
  CHECK(too_many.message().find("limit") != absl::string_view::npos);
  CHECK(FollowedAndSelf(*engine, 10, 0).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(FollowedAndSelf(*engine, 10, kMaxAmongMembers).status().code() ==
        absl::StatusCode::kInvalidArgument);

  // The friends' board of user 10.
  auto board = Board();
  for (MemberId m : {10, 3, 7, 12, 21, 40, 55, 99, 1, 2}) {
    REQUIRE(board->Set(m, static_cast<int64_t>(m)).ok());
  }
  REQUIRE(board->Remove(55).ok());
  const std::vector<MemberId> friends = FollowedAndSelf(*engine, 10).value();
  CHECK(MembersOf(board->TopKAmong(friends, 3).value()) ==
        std::vector<MemberId>{99, 40, 21});
  CHECK(board->RankAmong(10, friends).value() == 4);
}

}  // namespace
}  // namespace feedcore
