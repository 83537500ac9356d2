// Model-based test of Leaderboard: long random sequences of Set, Increment
// and IncrementMany (including overflowing elements), Write and WriteMany
// (every op and condition, with metadata, invalid ones included),
// SetMetadata, Remove and Clear, for 1, 3 and 16 partitions, both tie-break
// rules and both score orders. After every step the board is
// compared with the reference of leaderboard_model.h (a map of members,
// sorted in full for every question): TopK for a random k, Rank and Score of
// random members, Around a random member, a whole-board read in pages of a
// random size and order, and one more page of a long-running reader whose
// cursor is carried across the mutations (with metadata now and then);
// CountInRange of a random score range, Percentile of a random member, and
// two pages in that range from random offsets (past the end included), the
// second after the first's cursor; and the friends' boards (TopKAmong,
// RankAmong, AroundAmong) of random sets with duplicates and absent ids.
// Every rank style: the model turns its unique ranks into the board's.
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
  bool with_metadata = false;
  std::string cursor;
  std::optional<RankKey> after;  // the model's view of the cursor
};

// A write of any op and condition, now and then an invalid one.
ScoreWrite RandomWrite(std::mt19937_64& rng, MemberId member, int64_t value) {
  ScoreWrite write;
  write.member = member;
  write.op = rng() % 2 == 0 ? WriteOp::kSet : WriteOp::kIncrement;
  write.value = value;
  write.condition = static_cast<WriteCondition>(rng() % 7);
  if (rng() % 3 == 0) {
    write.metadata = std::string(rng() % 4, static_cast<char>('a' + rng() % 3));
  }
  if (rng() % 50 == 0) write.op = static_cast<WriteOp>(2 + rng() % 3);
  if (rng() % 50 == 0) write.condition = static_cast<WriteCondition>(7);
  return write;
}

// A write's result against the model's: the same result, or the same
// error code.
void CheckWritten(const absl::StatusOr<WriteResult>& got,
                  const absl::StatusOr<WriteResult>& want) {
  REQUIRE_MESSAGE(got.status().code() == want.status().code(), got.status());
  if (want.ok()) CHECK(*got == *want);
}

void RunModel(size_t partitions, TieBreak tie_break, ScoreOrder order,
              uint64_t seed, uint64_t steps,
              RankStyle style = RankStyle::kUnique) {
  INFO("seed = " << seed << " partitions = " << partitions
                 << " tie_break = " << static_cast<int>(tie_break)
                 << " score_order = " << static_cast<int>(order)
                 << " rank_style = " << static_cast<int>(style)
                 << " (set FEEDCORE_MODEL_SEED to reproduce)");
  std::mt19937_64 rng(seed);
  constexpr size_t kMaxPage = 64;
  const LeaderboardOptions options{.partitions = partitions,
                                   .tie_break = tie_break,
                                   .max_page_size = kMaxPage,
                                   .score_order = order,
                                   .rank_style = style,
                                   .max_metadata_bytes = 2};
  internal::LeaderboardImpl board(options);
  Model model(options);
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
  // Mostly around the scores in use, now and then open or at the limits;
  // sometimes empty (min > max).
  const auto random_range = [&]() -> ScoreRange {
    ScoreRange range;
    if (uniform(8) == 0) return range;  // every score
    range.min = uniform(6) == 0 ? kMin : random_score();
    range.max = uniform(6) == 0 ? kMax : random_score();
    if (range.min > range.max && uniform(4) != 0) {
      std::swap(range.min, range.max);
    }
    range.min_exclusive = uniform(3) == 0;
    range.max_exclusive = uniform(3) == 0;
    return range;
  };
  // Within the board, at its last entry, just past it, or far beyond.
  const auto random_offset = [&](size_t size) -> uint64_t {
    switch (uniform(10)) {
      case 0:
        return 0;
      case 1:
        return size == 0 ? 0 : size - 1;
      case 2:
        return size + uniform(2);
      case 3:
        return std::numeric_limits<uint64_t>::max() - uniform(2);
      default:
        return uniform(size + 1);
    }
  };
  Pager pager;

  for (uint64_t step = 0; step < steps; ++step) {
    CAPTURE(step);
    const uint64_t op = uniform(1000);
    const MemberId member = random_member();
    if (op < 250) {
      const int64_t score = random_score();
      REQUIRE(board.Set(member, score).ok());
      model.Set(member, score);
    } else if (op < 550) {
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
    } else if (op < 800) {
      // One Write, or now and then a batch applied by the model one
      // element after another.
      std::vector<ScoreWrite> batch = {
          RandomWrite(rng, member, random_delta())};
      if (uniform(8) == 0) {
        batch.resize(uniform(41));
        for (ScoreWrite& write : batch) {
          write = RandomWrite(rng, random_member(), random_delta());
        }
      }
      const std::vector<absl::StatusOr<WriteResult>> results =
          batch.size() == 1 && uniform(2) == 0
              ? std::vector<absl::StatusOr<WriteResult>>{board.Write(batch[0])}
              : board.WriteMany(batch);
      REQUIRE(results.size() == batch.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        CAPTURE(i);
        CheckWritten(results[i], model.Write(batch[i]));
      }
    } else if (op < 850) {
      const std::string metadata(uniform(4), 'x');
      const absl::Status got = board.SetMetadata(member, metadata);
      CHECK(got.code() == model.SetMetadata(member, metadata).code());
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
    CHECK(board.TopK(k).value() == restyled(ModelEntries(sorted, 0, k, order)));

    // Score and Rank of a few members, present or not.
    for (int i = 0; i < 3; ++i) {
      const MemberId probe = random_member();
      const std::optional<RankKey> key = model.Find(probe);
      const absl::StatusOr<int64_t> score = board.Score(probe);
      const absl::StatusOr<uint64_t> rank = board.Rank(probe);
      const absl::StatusOr<std::string> metadata = board.Metadata(probe);
      const absl::StatusOr<std::string> want_metadata = model.Metadata(probe);
      REQUIRE(score.ok() == key.has_value());
      REQUIRE(rank.ok() == key.has_value());
      REQUIRE(metadata.status().code() == want_metadata.status().code());
      if (key) {
        CHECK(*score == *model.Score(probe));
        CHECK(*rank == styled[ModelRank(sorted, *key)]);
        CHECK(*metadata == *want_metadata);
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
            restyled(ModelEntries(sorted, from, at + after + 1, order)));
    }

    // The whole board in pages of a random size, in a random order.
    {
      const LeaderboardOrder read_order = uniform(2) == 0
                                              ? LeaderboardOrder::kBestFirst
                                              : LeaderboardOrder::kWorstFirst;
      const size_t limit = 1 + uniform(sorted.size() < 8 ? 8 : kMaxPage);
      std::vector<LeaderboardEntry> expected =
          restyled(ModelEntries(sorted, 0, sorted.size(), order));
      if (read_order == LeaderboardOrder::kWorstFirst) {
        std::reverse(expected.begin(), expected.end());
      }
      CHECK(testing::ReadAllPages(board, read_order, limit) == expected);
    }

    // One more page of the long-running reader, checked against the
    // model's view of its cursor on the board as it is now.
    {
      LeaderboardReadOptions read;
      read.order = pager.order;
      read.limit = pager.limit;
      read.cursor = pager.cursor;
      read.with_metadata = pager.with_metadata;
      const absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
      REQUIRE_MESSAGE(page.ok(), page.status());
      bool more = false;
      RankKey last;
      std::vector<LeaderboardEntry> want = restyled(ModelPage(
          sorted, pager.order, pager.after, pager.limit, &more, &last, order));
      if (pager.with_metadata) model.FillMetadata(want);
      CHECK(page->entries == want);
      CHECK(page->next_cursor.empty() == !more);
      if (more) {
        pager.cursor = page->next_cursor;
        pager.after = last;
      } else {
        // Start a new reader with a new order and page size.
        pager.order = uniform(2) == 0 ? LeaderboardOrder::kBestFirst
                                      : LeaderboardOrder::kWorstFirst;
        pager.limit = 1 + uniform(10);
        pager.with_metadata = uniform(2) == 0;
        pager.cursor.clear();
        pager.after.reset();
      }
    }

    // Counts, percentiles and pages by score range and offset.
    {
      const ScoreRange range = random_range();
      CHECK(board.CountInRange(range).value() == model.CountInRange(range));
      const MemberId probe = random_member();
      const std::optional<double> percentile = model.Percentile(probe, style);
      const absl::StatusOr<double> got = board.Percentile(probe);
      REQUIRE(got.ok() == percentile.has_value());
      if (percentile) {
        CHECK(*got == *percentile);
      } else {
        CHECK(got.status().code() == absl::StatusCode::kNotFound);
      }
      // A first page at a random offset, then the next one from its
      // cursor at another offset.
      LeaderboardReadOptions read;
      read.order = uniform(2) == 0 ? LeaderboardOrder::kBestFirst
                                   : LeaderboardOrder::kWorstFirst;
      read.range = range;
      read.limit = 1 + uniform(10);
      read.offset = random_offset(sorted.size());
      std::optional<RankKey> after;
      for (int page_number = 0; page_number < 2; ++page_number) {
        CAPTURE(page_number);
        const absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
        REQUIRE_MESSAGE(page.ok(), page.status());
        bool more = false;
        RankKey last;
        CHECK(page->entries == restyled(testing::ModelRangePage(
                                   sorted, read, after, &more, &last, order)));
        CHECK(page->next_cursor.empty() == !more);
        if (!more) break;
        read.cursor = page->next_cursor;
        read.offset = random_offset(sorted.size());
        after = last;
      }
    }

    if (step % 256 == 0) REQUIRE(board.CheckInvariants());
  }
  CHECK(board.CheckInvariants());
}

uint64_t Seed() { return testing::EnvU64("FEEDCORE_MODEL_SEED", 4242); }
uint64_t Steps() { return testing::ModelOps(12000); }

constexpr ScoreOrder kHigher = ScoreOrder::kHigherFirst;
constexpr ScoreOrder kLower = ScoreOrder::kLowerFirst;

TEST_CASE("model: 1 partition") {
  RunModel(1, TieBreak::kEarlierUpdateFirst, kHigher, Seed(), Steps());
  RunModel(1, TieBreak::kLowerMemberFirst, kHigher, Seed() + 1, Steps());
}

TEST_CASE("model: 3 partitions") {
  RunModel(3, TieBreak::kEarlierUpdateFirst, kHigher, Seed() + 2, Steps());
  RunModel(3, TieBreak::kLowerMemberFirst, kHigher, Seed() + 3, Steps());
}

TEST_CASE("model: competition ranks") {
  RunModel(1, TieBreak::kEarlierUpdateFirst, kHigher, Seed() + 10, Steps(),
           RankStyle::kCompetition);
  RunModel(5, TieBreak::kLowerMemberFirst, kLower, Seed() + 11, Steps(),
           RankStyle::kCompetition);
}

TEST_CASE("model: dense ranks") {
  RunModel(1, TieBreak::kLowerMemberFirst, kLower, Seed() + 12, Steps(),
           RankStyle::kDense);
  RunModel(5, TieBreak::kEarlierUpdateFirst, kHigher, Seed() + 13, Steps(),
           RankStyle::kDense);
}

TEST_CASE("model: 16 partitions") {
  RunModel(16, TieBreak::kEarlierUpdateFirst, kHigher, Seed() + 4, Steps());
  RunModel(16, TieBreak::kLowerMemberFirst, kHigher, Seed() + 5, Steps());
}

TEST_CASE("model: lower scores first") {
  RunModel(1, TieBreak::kEarlierUpdateFirst, kLower, Seed() + 6, Steps());
  RunModel(3, TieBreak::kLowerMemberFirst, kLower, Seed() + 7, Steps());
  RunModel(16, TieBreak::kEarlierUpdateFirst, kLower, Seed() + 8, Steps());
}

}  // namespace
}  // namespace feedcore
