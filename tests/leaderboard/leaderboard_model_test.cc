// Model-based test of Leaderboard: long random sequences of Set, Increment
// and IncrementMany (including overflowing elements), Remove and Clear, for 1,
// 3 and 16 partitions and both tie-break rules. After every step the board is
// compared with the reference of leaderboard_model.h (a map of members,
// sorted in full for every question): TopK for a random k, Rank and Score of
// random members, Around a random member, a whole-board read in pages of a
// random size and order, and one more page of a long-running reader whose
// cursor is carried across the mutations; and the friends' boards
// (TopKAmong, RankAmong, AroundAmong) of random sets with duplicates and
// absent ids. Every rank style: the model turns its unique ranks into the
// board's.
//
// The seed is fixed and printed on failure; FEEDCORE_MODEL_SEED overrides
// it, and FEEDCORE_MODEL_OPS the number of steps per configuration.
#include "model/leaderboard_model.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/leaderboard.h"
#include "leaderboard/leaderboard_impl.h"
#include "leaderboard/ranked_btree.h"
#include "support/leaderboard_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using internal::RankKey;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

using Model = testing::LeaderboardModel;
using testing::ModelAmong;
using testing::ModelEntries;
using testing::ModelPage;
using testing::ModelRank;
using testing::ModelRestyled;
using testing::ModelStyledRanks;

struct Pager {
  LeaderboardOrder order = LeaderboardOrder::kBestFirst;
  size_t limit = 1;
  std::string cursor;
  std::optional<RankKey> after;  // the model's view of the cursor
};

void RunModel(size_t partitions, TieBreak tie_break, uint64_t seed,
              uint64_t steps, RankStyle style = RankStyle::kUnique) {
  INFO("seed = " << seed << " partitions = " << partitions
                 << " tie_break = " << static_cast<int>(tie_break)
                 << " rank_style = " << static_cast<int>(style)
                 << " (set FEEDCORE_MODEL_SEED to reproduce)");
  std::mt19937_64 rng(seed);
  constexpr size_t kMaxPage = 64;
  internal::LeaderboardImpl board({.partitions = partitions,
                                   .tie_break = tie_break,
                                   .max_page_size = kMaxPage,
                                   .rank_style = style});
  Model model(tie_break);
  const auto uniform = [&rng](uint64_t n) { return rng() % n; };
  // Members from a small range, so that updates hit existing members.
  const auto random_member = [&] { return uniform(300); };
  const auto random_score = [&]() -> int64_t {
    switch (uniform(20)) {
      case 0:
        return kMax - static_cast<int64_t>(uniform(4));
      case 1:
        return kMin + static_cast<int64_t>(uniform(4));
      default:
        return static_cast<int64_t>(uniform(41)) - 20;  // many ties
    }
  };
  const auto random_delta = [&]() -> int64_t {
    return uniform(10) == 0 ? random_score()
                            : static_cast<int64_t>(uniform(7)) - 3;
  };
  Pager pager;

  for (uint64_t step = 0; step < steps; ++step) {
    CAPTURE(step);
    const uint64_t op = uniform(1000);
    const MemberId member = random_member();
    if (op < 350) {
      const int64_t score = random_score();
      REQUIRE(board.Set(member, score).ok());
      model.Set(member, score);
    } else if (op < 800) {
      // One Increment, or now and then a batch applied by the model one
      // element after another.
      std::vector<ScoreIncrement> batch = {{member, random_delta()}};
      if (uniform(8) == 0) {
        batch.resize(uniform(41));
        for (ScoreIncrement& increment : batch) {
          increment = {random_member(), random_delta()};
        }
      }
      const std::vector<absl::StatusOr<int64_t>> results =
          batch.size() == 1 && uniform(2) == 0
              ? std::vector<absl::StatusOr<int64_t>>{board.Increment(
                    batch[0].member, batch[0].delta)}
              : board.IncrementMany(batch);
      REQUIRE(results.size() == batch.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        CAPTURE(i);
        const absl::StatusOr<int64_t>& got = results[i];
        const std::optional<int64_t> want =
            model.Increment(batch[i].member, batch[i].delta);
        REQUIRE(got.ok() == want.has_value());
        if (want) {
          CHECK(*got == *want);
        } else {
          CHECK(got.status().code() == absl::StatusCode::kOutOfRange);
        }
      }
    } else if (op < 999) {
      const bool removed = model.Remove(member);
      const absl::Status status = board.Remove(member);
      CHECK(status.ok() == removed);
      if (!removed) CHECK(status.code() == absl::StatusCode::kNotFound);
    } else {
      REQUIRE(board.Clear().ok());
      model.Clear();
    }

    const std::vector<RankKey> sorted = model.Sorted();
    REQUIRE(board.Size().value() == sorted.size());
    const std::vector<uint64_t> styled = ModelStyledRanks(sorted, style);
    const auto restyled = [&](std::vector<LeaderboardEntry> entries) {
      return ModelRestyled(sorted, style, std::move(entries));
    };

    // TopK for a random k, and the whole board.
    const size_t k = 1 + uniform(kMaxPage);
    CHECK(board.TopK(k).value() == restyled(ModelEntries(sorted, 0, k)));

    // Score and Rank of a few members, present or not.
    for (int i = 0; i < 3; ++i) {
      const MemberId probe = random_member();
      const std::optional<RankKey> key = model.Find(probe);
      const absl::StatusOr<int64_t> score = board.Score(probe);
      const absl::StatusOr<uint64_t> rank = board.Rank(probe);
      REQUIRE(score.ok() == key.has_value());
      REQUIRE(rank.ok() == key.has_value());
      if (key) {
        CHECK(*score == key->score);
        CHECK(*rank == styled[ModelRank(sorted, *key)]);
      } else {
        CHECK(score.status().code() == absl::StatusCode::kNotFound);
        CHECK(rank.status().code() == absl::StatusCode::kNotFound);
      }
    }

    // Around a member that is on the board.
    if (!sorted.empty()) {
      const size_t at = uniform(sorted.size());
      const size_t before = uniform(6);
      const size_t after = uniform(6);
      const size_t from = at >= before ? at - before : 0;
      CHECK(board.Around(sorted[at].member, before, after).value() ==
            restyled(ModelEntries(sorted, from, at + after + 1)));
    }

    // The whole board in pages of a random size, in a random order.
    {
      const LeaderboardOrder order = uniform(2) == 0
                                         ? LeaderboardOrder::kBestFirst
                                         : LeaderboardOrder::kWorstFirst;
      const size_t limit = 1 + uniform(sorted.size() < 8 ? 8 : kMaxPage);
      std::vector<LeaderboardEntry> expected =
          restyled(ModelEntries(sorted, 0, sorted.size()));
      if (order == LeaderboardOrder::kWorstFirst) {
        std::reverse(expected.begin(), expected.end());
      }
      CHECK(testing::ReadAllPages(board, order, limit) == expected);
    }

    // One more page of the long-running reader, checked against the
    // model's view of its cursor on the board as it is now.
    {
      LeaderboardReadOptions read;
      read.order = pager.order;
      read.limit = pager.limit;
      read.cursor = pager.cursor;
      const absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
      REQUIRE_MESSAGE(page.ok(), page.status());
      bool more = false;
      RankKey last;
      CHECK(page->entries ==
            restyled(ModelPage(sorted, pager.order, pager.after, pager.limit,
                               &more, &last)));
      CHECK(page->next_cursor.empty() == !more);
      if (more) {
        pager.cursor = page->next_cursor;
        pager.after = last;
      } else {
        // Start a new reader with a new order and page size.
        pager.order = uniform(2) == 0 ? LeaderboardOrder::kBestFirst
                                      : LeaderboardOrder::kWorstFirst;
        pager.limit = 1 + uniform(10);
        pager.cursor.clear();
        pager.after.reset();
      }
    }

    // A friends' board: a random set, with duplicates and absent ids.
    {
      std::vector<MemberId> friends(uniform(12));
      for (MemberId& id : friends) id = random_member();
      if (!friends.empty() && uniform(2) == 0) friends.push_back(friends[0]);
      const size_t among_k = 1 + uniform(8);
      std::vector<LeaderboardEntry> among =
          ModelAmong(model, friends, std::nullopt, style);
      if (among.size() > among_k) among.resize(among_k);
      CHECK(board.TopKAmong(friends, among_k).value() == among);

      const MemberId self = random_member();
      const std::vector<LeaderboardEntry> with_self =
          ModelAmong(model, friends, self, style);
      const auto it = std::find_if(
          with_self.begin(), with_self.end(),
          [self](const LeaderboardEntry& e) { return e.member == self; });
      const absl::StatusOr<uint64_t> rank = board.RankAmong(self, friends);
      const size_t before = uniform(4);
      const size_t after = uniform(4);
      const absl::StatusOr<std::vector<LeaderboardEntry>> around =
          board.AroundAmong(self, friends, before, after);
      if (it == with_self.end()) {
        CHECK(rank.status().code() == absl::StatusCode::kNotFound);
        CHECK(around.status().code() == absl::StatusCode::kNotFound);
      } else {
        const size_t at = static_cast<size_t>(it - with_self.begin());
        CHECK(rank.value() == it->rank);
        const size_t from = at >= before ? at - before : 0;
        const size_t to = std::min(with_self.size(), at + after + 1);
        CHECK(around.value() ==
              std::vector<LeaderboardEntry>(with_self.begin() + from,
                                            with_self.begin() + to));
      }
    }

    if (step % 256 == 0) REQUIRE(board.CheckInvariants());
  }
  CHECK(board.CheckInvariants());
}

uint64_t Seed() { return testing::EnvU64("FEEDCORE_MODEL_SEED", 4242); }
uint64_t Steps() { return testing::EnvU64("FEEDCORE_MODEL_OPS", 12000); }

TEST_CASE("model: 1 partition") {
  RunModel(1, TieBreak::kEarlierUpdateFirst, Seed(), Steps());
  RunModel(1, TieBreak::kLowerMemberFirst, Seed() + 1, Steps());
}

TEST_CASE("model: 3 partitions") {
  RunModel(3, TieBreak::kEarlierUpdateFirst, Seed() + 2, Steps());
  RunModel(3, TieBreak::kLowerMemberFirst, Seed() + 3, Steps());
}

TEST_CASE("model: competition ranks") {
  RunModel(1, TieBreak::kEarlierUpdateFirst, Seed() + 6, Steps(),
           RankStyle::kCompetition);
  RunModel(5, TieBreak::kLowerMemberFirst, Seed() + 7, Steps(),
           RankStyle::kCompetition);
}

TEST_CASE("model: dense ranks") {
  RunModel(1, TieBreak::kLowerMemberFirst, Seed() + 8, Steps(),
           RankStyle::kDense);
  RunModel(5, TieBreak::kEarlierUpdateFirst, Seed() + 9, Steps(),
           RankStyle::kDense);
}

TEST_CASE("model: 16 partitions") {
  RunModel(16, TieBreak::kEarlierUpdateFirst, Seed() + 4, Steps());
  RunModel(16, TieBreak::kLowerMemberFirst, Seed() + 5, Steps());
}

}  // namespace
}  // namespace feedcore
