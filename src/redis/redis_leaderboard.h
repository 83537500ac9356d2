// How a Redis Cluster leaderboard names its keys and places its members;
// shared with the tests so they can check where the partitions land.
//
// Thread safety: pure functions.
#ifndef FEEDCORE_REDIS_REDIS_LEADERBOARD_H_
#define FEEDCORE_REDIS_REDIS_LEADERBOARD_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "feedcore/leaderboard.h"

namespace feedcore::redis {

struct LeaderboardKeys {
  // Partition p's sorted set, on a slot inside the p-th of `partitions`
  // equal slot ranges.
  std::vector<std::string> partitions;
  // Partition p's metadata hash (member bytes -> metadata), with the same
  // hash tag as partitions[p], so one script writes both atomically.
  std::vector<std::string> metadata;
  // Partition p's sequence hash (member bytes -> 8-byte update sequence),
  // with the same hash tag as partitions[p]; used only by a board ordered
  // TieBreak::kEarlierUpdateFirst.
  std::vector<std::string> sequences;
  // Holds the partition count the board was created with.
  std::string meta;
  // The board's update counter (INCRBY hands out update sequences), in the
  // slot of `meta`; used only under TieBreak::kEarlierUpdateFirst.
  std::string counter;
};

// The keys of board `name` (any bytes) under `key_prefix`, for
// 1..kMaxLeaderboardPartitions partitions.
LeaderboardKeys MakeLeaderboardKeys(absl::string_view key_prefix,
                                    absl::string_view name, size_t partitions);

// The partition that holds `member`, the same in every process.
size_t LeaderboardPartitionOf(MemberId member, size_t partitions);

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_REDIS_LEADERBOARD_H_
