// Model-based conformance test of Leaderboard, run against each backend (see
// backend.h): long random sequences of Set, Increment, IncrementMany, Write
// and WriteMany under every condition (some past the backend's score
// range), Remove and Clear on boards of 1, 3 and 16 partitions, compared
// after every step with a plain reference, a map of member -> score sorted
// in full for every question. Every step checks Size, TopK for a random k,
// CountInRange of a random range, Score and Rank of random members (present
// or not), Around a random member, and one more page of a long-running
// reader whose cursor is carried across the mutations; every few steps the
// whole board is read in pages of a random size in both orders, and the
// best of a random set of members (TopKAmong) is checked.
//
// Ties are what backends most easily get wrong, so scores come mostly from
// a narrow range and members from a small set; ids spread over the whole
// 64-bit range and scores at the ends of the backend's range come up too.
// Half the members crowd one partition (see MemberIds).
// Each board runs under both tie rules: TieBreak::kLowerMemberFirst, and
// kEarlierUpdateFirst, where the model numbers every score change in the
// order the calls make them (a batch's elements in the order given).
//
// The seed is fixed and printed on failure; FEEDCORE_MODEL_SEED overrides
// it, and FEEDCORE_MODEL_OPS the number of steps per board.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/backend.h"
#include "feedcore/leaderboard.h"
#include "model/leaderboard_model.h"
#include "support/leaderboard_test_util.h"
#include "support/test_util.h"
// Where the cluster board puts a member, to crowd one of its partitions.
#include "redis/redis_leaderboard.h"

namespace feedcore {
namespace {

using internal::RankKey;
using testing::LeaderboardModel;
using testing::ModelEntries;
using testing::ModelPage;
using testing::ModelRank;
using testing::OnCluster;
using Entries = std::vector<LeaderboardEntry>;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
// The cluster keeps scores as doubles, exact up to this magnitude.
constexpr int64_t kExact = int64_t{1} << 53;
constexpr size_t kMaxPage = 64;
constexpr size_t kMembers = 200;

// The score range of the backend under test.
int64_t HighestScore() { return OnCluster() ? kExact : kMax; }
int64_t LowestScore() { return OnCluster() ? -kExact : kMin; }

// The members a board of `partitions` draws from. Half of them share one
// partition of the cluster board: its merges read a share of each
// partition's entries first and must go back for more to a crowded one.
// Of the rest, half are small adjacent ids and half are spread over the
// 64-bit range, up to the largest id.
std::vector<MemberId> MemberIds(size_t partitions) {
  std::set<MemberId> ids;
  for (MemberId m = 0; ids.size() < kMembers / 4; ++m) ids.insert(m);
  for (MemberId j = 1; ids.size() < kMembers / 2; ++j) {
    ids.insert(j * 0x9E3779B97F4A7C15ull);
  }
  ids.insert(std::numeric_limits<MemberId>::max());
  for (MemberId j = 1; ids.size() < kMembers; ++j) {
    const MemberId m = j * 0xD1B54A32D192ED03ull;
    if (redis::LeaderboardPartitionOf(m, partitions) == 0) ids.insert(m);
  }
  return std::vector<MemberId>(ids.begin(), ids.end());
}

struct Pager {
  LeaderboardOrder order = LeaderboardOrder::kBestFirst;
  size_t limit = 1;
  std::string cursor;
  std::optional<RankKey> after;  // the model's view of the cursor
};

void RunModel(size_t partitions, uint64_t seed, uint64_t steps,
              TieBreak tie_break = TieBreak::kLowerMemberFirst) {
  INFO("seed = " << seed << " partitions = " << partitions << " tie_break = "
                 << (tie_break == TieBreak::kLowerMemberFirst
                         ? "kLowerMemberFirst"
                         : "kEarlierUpdateFirst")
                 << " (set FEEDCORE_MODEL_SEED to reproduce)");
  std::mt19937_64 rng(seed);
  absl::StatusOr<std::unique_ptr<Leaderboard>> created =
      testing::MakeBoard({.partitions = partitions,
                          .tie_break = tie_break,
                          .max_page_size = kMaxPage},
                         "lb-model");
  REQUIRE_MESSAGE(created.ok(), created.status());
  Leaderboard& board = **created;
  LeaderboardModel model(tie_break);
  const int64_t high = HighestScore();
  const int64_t low = LowestScore();

  const auto uniform = [&rng](uint64_t n) { return rng() % n; };
  const std::vector<MemberId> ids = MemberIds(partitions);
  const auto random_member = [&] { return ids[uniform(ids.size())]; };
  const auto random_score = [&]() -> int64_t {
    switch (uniform(40)) {
      case 0:
        return high - static_cast<int64_t>(uniform(3));
      case 1:
        return low + static_cast<int64_t>(uniform(3));
      case 2:  // past the cluster's range, inside memory's
        return (uniform(2) == 0 ? 1 : -1) *
               (kExact + 1 + static_cast<int64_t>(uniform(3)));
      default:
        return static_cast<int64_t>(uniform(41)) - 20;
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
    if (op < 300) {
      const int64_t score = random_score();
      const bool fits = score >= low && score <= high;
      const absl::Status status = board.Set(member, score);
      CHECK_MESSAGE(status.ok() == fits,
                    "Set(" << member << ", " << score << "): " << status);
      if (!fits) {
        CHECK(status.code() == absl::StatusCode::kOutOfRange);
      } else {
        model.Set(member, score);
      }
    } else if (op < 600) {
      const int64_t delta = random_delta();
      const absl::StatusOr<int64_t> got = board.Increment(member, delta);
      const std::optional<int64_t> want =
          model.Increment(member, delta, low, high);
      REQUIRE_MESSAGE(
          got.ok() == want.has_value(),
          "Increment(" << member << ", " << delta << "): " << got.status());
      if (want) {
        CHECK(*got == *want);
      } else {
        CHECK(got.status().code() == absl::StatusCode::kOutOfRange);
      }
    } else if (op < 680) {
      // A batch whose members often repeat, so that a member's elements
      // must apply in order; the model applies them one by one.
      std::vector<ScoreIncrement> batch(uniform(41));
      for (ScoreIncrement& increment : batch) {
        increment.member = uniform(2) == 0 ? ids[uniform(8)] : random_member();
        increment.delta = random_delta();
      }
      const std::vector<absl::StatusOr<int64_t>> got =
          board.IncrementMany(batch);
      REQUIRE(got.size() == batch.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        const ScoreIncrement& increment = batch[i];
        const absl::StatusOr<int64_t>& result = got[i];
        const std::optional<int64_t> want =
            model.Increment(increment.member, increment.delta, low, high);
        REQUIRE_MESSAGE(result.ok() == want.has_value(),
                        "IncrementMany element "
                            << i << " (" << increment.member << ", "
                            << increment.delta << "): " << result.status());
        if (want) {
          CHECK(*result == *want);
        } else {
          CHECK(result.status().code() == absl::StatusCode::kOutOfRange);
        }
      }
    } else if (op < 800) {
      // One conditional write, or a batch of them whose members repeat;
      // the model applies them one by one.
      std::vector<ScoreWrite> batch(op < 760 ? 1 : uniform(25));
      for (ScoreWrite& write : batch) {
        write.member = uniform(2) == 0 ? ids[uniform(8)] : random_member();
        write.op = uniform(2) == 0 ? WriteOp::kSet : WriteOp::kIncrement;
        write.value =
            write.op == WriteOp::kSet ? random_score() : random_delta();
        write.condition = static_cast<WriteCondition>(uniform(7));
      }
      std::vector<absl::StatusOr<WriteResult>> got;
      if (op < 760) {
        got.push_back(board.Write(batch.front()));
      } else {
        got = board.WriteMany(batch);
      }
      REQUIRE(got.size() == batch.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        const ScoreWrite& write = batch[i];
        const absl::StatusOr<WriteResult> want = model.Write(write, low, high);
        REQUIRE_MESSAGE(got[i].ok() == want.ok(),
                        "Write element "
                            << i << " (member " << write.member << ", op "
                            << int(write.op) << ", value " << write.value
                            << ", condition " << int(write.condition)
                            << "): " << got[i].status());
        if (want.ok()) {
          CHECK(got[i]->outcome == want->outcome);
          CHECK(got[i]->score == want->score);
        } else {
          CHECK(got[i].status().code() == absl::StatusCode::kOutOfRange);
        }
      }
    } else if (op < 998) {
      const bool removed = model.Remove(member);
      const absl::Status status = board.Remove(member);
      CHECK_MESSAGE(status.ok() == removed,
                    "Remove(" << member << "): " << status);
      if (!removed) CHECK(status.code() == absl::StatusCode::kNotFound);
    } else {
      REQUIRE(board.Clear().ok());
      model.Clear();
    }

    const std::vector<RankKey> sorted = model.Sorted();
    REQUIRE(board.Size().value() == sorted.size());

    const size_t k = 1 + uniform(kMaxPage);
    CHECK(board.TopK(k).value() == ModelEntries(sorted, 0, k));

    {
      ScoreRange range{.min = random_score(),
                       .max = random_score(),
                       .min_exclusive = uniform(2) == 0,
                       .max_exclusive = uniform(2) == 0};
      if (uniform(8) == 0) range.min = kMin;
      if (uniform(8) == 0) range.max = kMax;
      size_t want = 0;
      for (const RankKey& key : sorted) {
        want += (range.min_exclusive ? key.score > range.min
                                     : key.score >= range.min) &&
                        (range.max_exclusive ? key.score < range.max
                                             : key.score <= range.max)
                    ? 1
                    : 0;
      }
      CHECK(board.CountInRange(range).value() == want);
    }

    for (int i = 0; i < 3; ++i) {
      // The first probe is the member just written, the likeliest to have
      // moved.
      const MemberId probe = i == 0 ? member : random_member();
      const std::optional<int64_t> score = model.Score(probe);
      const absl::StatusOr<int64_t> got_score = board.Score(probe);
      const absl::StatusOr<uint64_t> got_rank = board.Rank(probe);
      REQUIRE(got_score.ok() == score.has_value());
      REQUIRE(got_rank.ok() == score.has_value());
      if (score) {
        CHECK(*got_score == *score);
        CHECK(*got_rank == ModelRank(sorted, *model.Find(probe)));
      } else {
        CHECK(got_score.status().code() == absl::StatusCode::kNotFound);
        CHECK(got_rank.status().code() == absl::StatusCode::kNotFound);
      }
    }

    if (!sorted.empty()) {
      const size_t at = uniform(sorted.size());
      // Mostly a few neighbours; now and then as many as a page allows.
      const size_t before =
          uniform(4) == 0 ? uniform(kMaxPage + 1) : uniform(6);
      const size_t after = uniform(4) == 0 ? uniform(kMaxPage + 1) : uniform(6);
      const size_t from = at >= before ? at - before : 0;
      CHECK(board.Around(sorted[at].member, before, after).value() ==
            ModelEntries(sorted, from, at + after + 1));
    } else {
      CHECK(board.Around(member, 1, 1).status().code() ==
            absl::StatusCode::kNotFound);
    }

    if (step % 4 == 2) {
      // The best of a random set of ids, some absent, some repeated.
      std::vector<MemberId> among(uniform(30));
      for (MemberId& m : among) m = random_member();
      std::set<MemberId> distinct(among.begin(), among.end());
      Entries want;
      for (const RankKey& key : sorted) {
        if (distinct.count(key.member) != 0) {
          want.push_back({key.member, key.score, want.size()});
        }
      }
      const size_t best = 1 + uniform(kMaxPage);
      if (want.size() > best) want.resize(best);
      CHECK(board.TopKAmong(among, best).value() == want);
    }

    if (step % 4 == 0) {
      // The whole board, in pages of a random size, in both orders.
      const size_t limit = 1 + uniform(uniform(3) == 0 ? 8 : kMaxPage);
      CAPTURE(limit);
      const Entries best = ModelEntries(sorted, 0, sorted.size());
      CHECK(testing::ReadAllPages(board, LeaderboardOrder::kBestFirst, limit) ==
            best);
      CHECK(
          testing::ReadAllPages(board, LeaderboardOrder::kWorstFirst, limit) ==
          Entries(best.rbegin(), best.rend()));
    }

    {
      LeaderboardReadOptions read;
      read.order = pager.order;
      read.limit = pager.limit;
      read.cursor = pager.cursor;
      const absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
      REQUIRE_MESSAGE(page.ok(), page.status());
      bool more = false;
      RankKey last;
      CHECK(page->entries == ModelPage(sorted, pager.order, pager.after,
                                       pager.limit, &more, &last));
      CHECK(page->next_cursor.empty() == !more);
      if (more) {
        pager.cursor = page->next_cursor;
        pager.after = last;
      } else {
        pager.order = uniform(2) == 0 ? LeaderboardOrder::kBestFirst
                                      : LeaderboardOrder::kWorstFirst;
        pager.limit = 1 + uniform(10);
        pager.cursor.clear();
        pager.after.reset();
      }
    }
  }
}

uint64_t Seed() { return testing::EnvU64("FEEDCORE_MODEL_SEED", 4242); }
// A step is about fifteen round trips to the cluster, so it gets fewer.
uint64_t Steps() { return testing::ModelOps(OnCluster() ? 2000 : 20000); }

TEST_CASE("model: 1 partition") { RunModel(1, Seed(), Steps()); }
TEST_CASE("model: 3 partitions") { RunModel(3, Seed() + 1, Steps()); }
TEST_CASE("model: 16 partitions") { RunModel(16, Seed() + 2, Steps()); }
TEST_CASE("model, earlier update first: 1 partition") {
  RunModel(1, Seed() + 3, Steps(), TieBreak::kEarlierUpdateFirst);
}
TEST_CASE("model, earlier update first: 3 partitions") {
  RunModel(3, Seed() + 4, Steps(), TieBreak::kEarlierUpdateFirst);
}
TEST_CASE("model, earlier update first: 16 partitions") {
  RunModel(16, Seed() + 5, Steps(), TieBreak::kEarlierUpdateFirst);
}

}  // namespace
}  // namespace feedcore
