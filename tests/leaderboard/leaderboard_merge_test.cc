// Tests of LeaderboardImpl internals: the lazy k-way merge reads at most
// k + partitions - 1 entries (counted), where the naive scatter-gather
// reads partitions x k and gets the same answer; members are routed by
// XXH3_64bits(member) % partitions; every partition stays consistent.
#include <doctest/doctest.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "feedcore/leaderboard.h"
#include "leaderboard/leaderboard_impl.h"
#include "support/leaderboard_test_util.h"

namespace feedcore::internal {
namespace {

TEST_CASE("members live in partition XXH3_64bits(member) % N") {
  for (size_t partitions : {1, 3, 16}) {
    LeaderboardImpl board({.partitions = partitions});
    std::vector<size_t> expected(partitions, 0);
    for (MemberId m = 0; m < 1000; ++m) {
      const size_t p = XXH3_64bits(&m, sizeof(m)) % partitions;
      CHECK(board.PartitionOf(m) == p);
      ++expected[p];
      REQUIRE(board.Set(m, 1).ok());
    }
    CHECK(board.PartitionSizes() == expected);
    CHECK(board.CheckInvariants());
  }
}

TEST_CASE("TopK reads k + N - 1 entries; the naive merge reads N x k") {
  for (size_t partitions : {1, 2, 3, 16, 64}) {
    CAPTURE(partitions);
    LeaderboardImpl board({.partitions = partitions});
    const uint64_t seed = partitions;
    INFO("seed = " << seed);
    std::mt19937_64 rng(seed);
    // Enough members that every partition holds more than the largest k.
    for (MemberId m = 0; m < 400 * partitions; ++m) {
      REQUIRE(board.Set(m, static_cast<int64_t>(rng() % 5000)).ok());
    }
    const std::vector<size_t> sizes = board.PartitionSizes();
    REQUIRE(*std::min_element(sizes.begin(), sizes.end()) > 200);
    for (size_t k : {1, 2, 10, 100, 200}) {
      CAPTURE(k);
      size_t lazy_reads = 0;
      const std::vector<LeaderboardEntry> lazy =
          board.TopKCounted(k, &lazy_reads).value();
      CHECK(lazy.size() == k);
      CHECK(lazy_reads == k + partitions - 1);
      size_t naive_reads = 0;
      const std::vector<LeaderboardEntry> naive =
          board.TopKReadingKPerPartition(k, &naive_reads).value();
      CHECK(naive_reads == k * partitions);
      CHECK(lazy == naive);
    }
  }
}

TEST_CASE("the bound holds when the best entries share one partition") {
  constexpr size_t kPartitions = 16;
  LeaderboardImpl board({.partitions = kPartitions});
  // The 100 best members all live in partition 0; every other partition
  // holds worse ones.
  MemberId m = 0;
  size_t in_zero = 0;
  for (; in_zero < 100; ++m) {
    if (board.PartitionOf(m) != 0) continue;
    REQUIRE(board.Set(m, 1'000'000 + static_cast<int64_t>(m)).ok());
    ++in_zero;
  }
  for (MemberId other = m; other < m + 2000; ++other) {
    if (board.PartitionOf(other) == 0) continue;
    REQUIRE(board.Set(other, static_cast<int64_t>(other % 1000)).ok());
  }
  size_t reads = 0;
  const std::vector<LeaderboardEntry> top =
      board.TopKCounted(100, &reads).value();
  CHECK(reads == 100 + kPartitions - 1);
  for (const LeaderboardEntry& e : top) CHECK(board.PartitionOf(e.member) == 0);
  size_t naive_reads = 0;
  CHECK(board.TopKReadingKPerPartition(100, &naive_reads).value() == top);
  CHECK(naive_reads == 100 * kPartitions);
}

TEST_CASE("k beyond the board reads each entry once") {
  LeaderboardImpl board({.partitions = 8});
  for (MemberId m = 0; m < 37; ++m) REQUIRE(board.Set(m, 5).ok());
  size_t reads = 0;
  CHECK(board.TopKCounted(100, &reads).value().size() == 37);
  CHECK(reads == 37);
  // Some partitions empty: fewer reads than k + N - 1.
  LeaderboardImpl sparse({.partitions = 64});
  for (MemberId m = 0; m < 5; ++m) REQUIRE(sparse.Set(m, 5).ok());
  reads = 0;
  CHECK(sparse.TopKCounted(3, &reads).value().size() == 3);
  CHECK(reads <= 3 + 5 - 1);
}

TEST_CASE("board ids are distinct; partitions stay consistent") {
  LeaderboardImpl a({});
  LeaderboardImpl b({});
  CHECK(a.board_id() != b.board_id());
  constexpr uint64_t kSeed = 5;
  INFO("seed = " << kSeed);
  std::mt19937_64 rng(kSeed);
  for (int i = 0; i < 5000; ++i) {
    const MemberId m = rng() % 300;
    switch (rng() % 4) {
      case 0:
        (void)a.Remove(m);
        break;
      case 1:
        REQUIRE(a.Set(m, static_cast<int64_t>(rng() % 50)).ok());
        break;
      default:
        REQUIRE(a.Increment(m, static_cast<int64_t>(rng() % 11) - 5).ok());
    }
  }
  CHECK(a.CheckInvariants());
  REQUIRE(a.Clear().ok());
  CHECK(a.CheckInvariants());
  CHECK(a.PartitionSizes() == std::vector<size_t>(16, 0));
}

}  // namespace
}  // namespace feedcore::internal
