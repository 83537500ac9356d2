// DistinctScoreIndex: the distinct rank scores of a RankStyle::kDense board
// and how many members hold each, so that a dense rank (the number of
// distinct better scores) costs O(shards x log n), like a unique rank.
//
// A dense rank cannot be summed over the board's member partitions, as a
// unique rank is: one score may be held in several of them. So the index
// is partitioned by the score instead: score s lives in shard
// XXH3_64bits(s) % shards, which holds a map rank score -> member count and
// a RankedBtree of its distinct rank scores (key {s, 0, s}: one entry per
// score, the member field set to the score so that no two entries share
// it). The number of distinct scores above s is the sum over shards of the
// entries above {s, 0, 0}, a key that ranks above every other key of score
// s (member 0 and sequence 0 come first).
//
// Thread safety. A write of the board calls Moved with its member
// partition's lock held exclusively; Moved takes the lock of each shard it
// changes (member partition lock first, then shard lock: the order of
// docs/architecture.md, which clang checks through ABSL_ACQUIRED_AFTER).
// Every change to the index happens under some member partition lock held
// exclusively, so a reader that holds every partition lock shared (a
// board snapshot) sees the index frozen and reads it without shard locks;
// CountAbove demands that proof.
#ifndef FEEDCORE_SRC_LEADERBOARD_DISTINCT_SCORE_INDEX_H_
#define FEEDCORE_SRC_LEADERBOARD_DISTINCT_SCORE_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/mutex.h"
#include "leaderboard/leaderboard_impl.h"
#include "leaderboard/ranked_btree.h"

namespace feedcore::internal {

class DistinctScoreIndex {
 public:
  explicit DistinctScoreIndex(size_t shards);
  DistinctScoreIndex(const DistinctScoreIndex&) = delete;
  DistinctScoreIndex& operator=(const DistinctScoreIndex&) = delete;

  // A member's rank score went from `from` to `to` (none: not on the
  // board before / after). Adds before it removes: if memory runs out
  // (std::bad_alloc) while `to` is added, the index is unchanged. A no-op
  // when both are equal.
  // REQUIRES: the member's partition lock held exclusively.
  void Moved(std::optional<int64_t> from, std::optional<int64_t> to);

  // The number of distinct rank scores above `rank_score`.
  // REQUIRES: every board partition lock held (at least shared), which
  // `snapshot` proves.
  uint64_t CountAbove(const LeaderboardImpl::SharedSnapshot& snapshot,
                      int64_t rank_score) const;

  // What the shards hold. Clear() allocates empty contents before it
  // takes the board's locks, exchanges them for the index's under the
  // locks and frees the old ones after releasing them.
  class Contents;
  Contents EmptyContents() const;
  // REQUIRES: every board partition lock held exclusively.
  void Swap(Contents& contents);

  // Checks that every shard's tree holds exactly the scores of its map,
  // each in the right shard, and that the counts are `members_of` (members
  // per rank score, as the board holds them). For tests.
  bool CheckInvariants(
      const LeaderboardImpl::SharedSnapshot& snapshot,
      const absl::flat_hash_map<int64_t, uint64_t>& members_of) const;

 private:
  struct ShardData {
    RankedBtree scores;
    absl::flat_hash_map<int64_t, uint64_t> members_of;
  };
  struct alignas(64) Shard {
    // Taken under a board partition lock: docs/architecture.md, lock order.
    mutable SharedMutex mu ABSL_ACQUIRED_AFTER(LeaderboardImpl::Partition::mu);
    std::unique_ptr<ShardData> data ABSL_GUARDED_BY(mu);
  };

  size_t ShardOf(int64_t rank_score) const;
  void Add(int64_t rank_score);
  void Remove(int64_t rank_score);
  const ShardData& FrozenData(size_t shard) const;

  const size_t shards_;
  const std::unique_ptr<Shard[]> shard_;
};

class DistinctScoreIndex::Contents {
 private:
  friend class DistinctScoreIndex;
  std::vector<std::unique_ptr<ShardData>> data_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_LEADERBOARD_DISTINCT_SCORE_INDEX_H_
