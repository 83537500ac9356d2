// Tests of TopK's copy of the board's best entries (leaderboard_top_cache.h):
// it answers exactly what the merge under the snapshot answers, after every
// kind of write, replay and load, in every rank style and score order; a
// change among a partition's best entries makes the next read merge again,
// a change elsewhere does not; readers racing writers see one instant.
#include "leaderboard/leaderboard_top_cache.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <latch>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "feedcore/leaderboard.h"
#include "leaderboard/leaderboard_impl.h"

namespace feedcore::internal {
namespace {

constexpr size_t kCopied = BoardTopCache::kEntries;

// TopK, the merge and, right after TopK, the copy alone agree.
void CheckTop(const LeaderboardImpl& board, size_t k) {
  CAPTURE(k);
  const std::vector<LeaderboardEntry> top = board.TopK(k).value();
  size_t entries_read = 0;
  CHECK(top == board.TopKCounted(k, &entries_read).value());
  std::vector<LeaderboardEntry> copied;
  if (k <= kCopied) {
    REQUIRE(board.TopKFromCopy(k, &copied));
    CHECK(copied == top);
  } else {
    CHECK_FALSE(board.TopKFromCopy(k, &copied));
    CHECK(copied.empty());
  }
}

TEST_CASE("the copy answers what the merge answers after every kind of write") {
  const LeaderboardOptions configurations[] = {
      {.partitions = 1},
      {.partitions = 3, .tie_break = TieBreak::kLowerMemberFirst},
      {.partitions = 16, .rank_style = RankStyle::kCompetition},
      {.partitions = 16,
       .score_order = ScoreOrder::kLowerFirst,
       .rank_style = RankStyle::kDense},
  };
  const size_t ks[] = {1, 7, 100, kCopied, kCopied + 1, 300};
  for (const LeaderboardOptions& options : configurations) {
    for (const MemberId members : {MemberId{40}, MemberId{3000}}) {
      CAPTURE(options.partitions);
      CAPTURE(members);
      LeaderboardImpl board(options);
      const uint64_t seed = options.partitions * 7919 + members;
      INFO("seed = " << seed);
      std::mt19937_64 rng(seed);
      // Few distinct scores, so that ties and shared ranks are common.
      const auto score = [&rng] { return static_cast<int64_t>(rng() % 200); };
      for (MemberId m = 0; m < members; ++m)
        REQUIRE(board.Set(m, score()).ok());
      for (int step = 0; step < 400; ++step) {
        const MemberId m = rng() % (members + 10);
        switch (rng() % 8) {
          case 0:
            REQUIRE(board.Set(m, score()).ok());
            break;
          case 1:
            (void)board.Increment(m, static_cast<int64_t>(rng() % 21) - 10);
            break;
          case 2:
            (void)board.Remove(m);
            break;
          case 3:
            (void)board.Write({.member = m,
                               .op = WriteOp::kSet,
                               .value = score(),
                               .condition = WriteCondition::kIfBetter});
            break;
          case 4: {
            std::vector<ScoreIncrement> batch;
            for (int i = 0; i < 20; ++i) {
              batch.push_back(
                  {rng() % members, static_cast<int64_t>(rng() % 11) - 5});
            }
            (void)board.IncrementMany(batch);
            break;
          }
          case 5:
            if (rng() % 20 == 0) REQUIRE(board.Clear().ok());
            break;
          default:
            break;  // reads only: the next TopK reads the copy
        }
        CheckTop(board, ks[rng() % std::size(ks)]);
        if (step % 50 == 0) REQUIRE(board.CheckInvariants());
      }
      CHECK(board.CheckInvariants());
    }
  }
}

TEST_CASE("a change among a partition's best entries makes TopK merge again") {
  LeaderboardImpl board({.partitions = 4});
  std::vector<LeaderboardEntry> copied;
  // Nothing is copied before the first TopK, not even of an empty board.
  CHECK_FALSE(board.TopKFromCopy(10, &copied));
  CHECK(board.TopK(10).value().empty());
  CHECK(board.TopKFromCopy(10, &copied));
  CHECK(copied.empty());
  for (MemberId m = 0; m < 4000; ++m) {
    REQUIRE(board.Set(m, static_cast<int64_t>(m)).ok());
  }
  const std::vector<LeaderboardEntry> top = board.TopK(100).value();
  REQUIRE(board.TopKFromCopy(100, &copied));
  CHECK(copied == top);
  copied.clear();
  // A shorter read is served from the copy; a longer one is not.
  REQUIRE(board.TopKFromCopy(10, &copied));
  CHECK(copied == std::vector<LeaderboardEntry>(top.begin(), top.begin() + 10));
  copied.clear();
  CHECK_FALSE(board.TopKFromCopy(101, &copied));

  // Far below every partition's best kCopied: the copy still holds.
  REQUIRE(board.Increment(5, 1).ok());
  REQUIRE(board.Remove(6).ok());
  REQUIRE(board.Set(4000, 3).ok());
  REQUIRE(board.TopKFromCopy(100, &copied));
  CHECK(copied == top);
  copied.clear();

  // Into, within and out of the best entries: each makes the copy stale.
  const auto stale_after = [&](auto&& write) {
    REQUIRE(board.TopK(100).ok());
    std::vector<LeaderboardEntry> unused;
    REQUIRE(board.TopKFromCopy(100, &unused));
    write();
    unused.clear();
    CHECK_FALSE(board.TopKFromCopy(100, &unused));
    CheckTop(board, 100);
  };
  stale_after([&] { REQUIRE(board.Set(7, 1'000'000).ok()); });   // enters
  stale_after([&] { REQUIRE(board.Increment(3999, 1).ok()); });  // moves
  stale_after([&] { REQUIRE(board.Set(3998, 0).ok()); });        // leaves
  stale_after([&] { REQUIRE(board.Remove(3997).ok()); });
  stale_after([&] { REQUIRE(board.Clear().ok()); });
  CHECK(board.TopK(5).value().empty());
  CHECK(board.CheckInvariants());
}

TEST_CASE("replayed changes and loaded partitions make the copy stale") {
  for (size_t partitions : {1, 5}) {
    CAPTURE(partitions);
    LeaderboardImpl board({.partitions = partitions});
    for (MemberId m = 0; m < 1000; ++m) {
      board.ApplyScore(m, static_cast<int64_t>(m), m + 1);
    }
    CheckTop(board, 50);
    board.ApplyScore(3, 5000, 2000);
    CheckTop(board, 50);
    board.ApplyRemove(999);
    CheckTop(board, 50);
    board.ApplyScore(2, 1, 2001);  // far below the best: the copy holds
    std::vector<LeaderboardEntry> copied;
    CHECK(board.TopKFromCopy(50, &copied));
    board.ApplyClear(board.PartitionOf(998));
    CheckTop(board, 50);
    CHECK(board.CheckInvariants());

    // A copy of every partition, loaded into a board whose TopK was read
    // while it was empty.
    LeaderboardImpl loaded({.partitions = partitions});
    CHECK(loaded.TopK(50).value().empty());
    for (size_t p = 0; p < partitions; ++p) {
      std::string bytes;
      board.SerializePartition(p, nullptr, &bytes);
      REQUIRE(loaded.LoadPartition(p, bytes).ok());
    }
    CHECK(loaded.TopK(50).value() == board.TopK(50).value());
    CheckTop(loaded, 50);
    CHECK(loaded.CheckInvariants());
  }
}

// A writer raises a and b by one in turn, a in a higher partition than b,
// so a - b is 0 or 1 at every instant; the pair leads the board. Readers
// take TopK and the copy alone while the top changes; both must show the
// pair as it was at one instant, and every top sorted with exact ranks.
TEST_CASE("readers of the copy racing writers of the top see one instant") {
  LeaderboardImpl board({.partitions = 16});
  constexpr MemberId kMembers = 500;
  for (MemberId m = 0; m < kMembers; ++m) {
    REQUIRE(board.Set(m, static_cast<int64_t>(m)).ok());
  }
  MemberId a = kMembers, b = kMembers + 1;
  while (board.PartitionOf(b) >= board.PartitionOf(a)) ++b;
  constexpr int64_t kPairStart = 1'000'000;
  REQUIRE(board.Set(a, kPairStart).ok());
  REQUIRE(board.Set(b, kPairStart).ok());
  constexpr int kSteps = 20'000;
  constexpr int kReaders = 2;
  std::atomic<bool> writing{true};
  std::atomic<int> failures{0};
  std::latch start(kReaders + 1);
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    std::mt19937_64 rng(5);
    start.arrive_and_wait();
    for (int i = 0; i < kSteps; ++i) {
      if (!board.Increment(a, 1).ok() || !board.Increment(b, 1).ok()) {
        failures.fetch_add(1);
      }
      // Writes below the best entries, which leave the copy valid.
      (void)board.Increment(rng() % 100, 1);
    }
    writing.store(false);
  });
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937_64 rng(100 + r);
      start.arrive_and_wait();
      const auto check = [&](const std::vector<LeaderboardEntry>& top) {
        if (top.size() < 2) {
          failures.fetch_add(1);
          return;
        }
        for (size_t i = 0; i < top.size(); ++i) {
          if (top[i].rank != i) failures.fetch_add(1);
          if (i > 0 && top[i - 1].score < top[i].score) failures.fetch_add(1);
        }
        const bool a_first = top[0].member == a;
        const LeaderboardEntry& entry_a = a_first ? top[0] : top[1];
        const LeaderboardEntry& entry_b = a_first ? top[1] : top[0];
        if (entry_a.member != a || entry_b.member != b ||
            entry_a.score - entry_b.score < 0 ||
            entry_a.score - entry_b.score > 1) {
          failures.fetch_add(1);
        }
      };
      while (writing.load()) {
        const size_t k = 2 + rng() % 30;
        absl::StatusOr<std::vector<LeaderboardEntry>> top = board.TopK(k);
        if (!top.ok()) {
          failures.fetch_add(1);
          break;
        }
        check(*top);
        std::vector<LeaderboardEntry> copied;
        if (board.TopKFromCopy(k, &copied)) check(copied);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(failures.load() == 0);
  CHECK(board.Score(a).value() == kPairStart + kSteps);
  CHECK(board.Score(b).value() == kPairStart + kSteps);
  CheckTop(board, 100);
  CHECK(board.CheckInvariants());
}

}  // namespace
}  // namespace feedcore::internal
