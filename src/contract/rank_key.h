// RankKey: the order of a leaderboard's entries, best first, which both
// backends keep (the in-process trees and the Redis sorted sets) and every
// leaderboard cursor and merge of partitions compares.
#ifndef FEEDCORE_SRC_CONTRACT_RANK_KEY_H_
#define FEEDCORE_SRC_CONTRACT_RANK_KEY_H_

#include <cstdint>

namespace feedcore::internal {

// The sort key of a leaderboard entry. `seq` is the board's update sequence
// at the moment the member got its current score (0 for every member when
// the board breaks ties by member id alone).
struct RankKey {
  int64_t score = 0;
  uint64_t seq = 0;
  uint64_t member = 0;

  friend bool operator==(const RankKey&, const RankKey&) = default;
};

// Whether `a` ranks above `b`: the higher score first; on equal scores the
// lower sequence (the member who got there first); then the lower member id.
// A strict total order on distinct members.
inline bool RanksAbove(const RankKey& a, const RankKey& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.seq != b.seq) return a.seq < b.seq;
  return a.member < b.member;
}

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_CONTRACT_RANK_KEY_H_
