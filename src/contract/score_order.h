// How a board's ScoreOrder maps onto its trees, which always keep the best
// entry first under the highest key.
//
// A tree key's score is the "rank score": the score itself on a
// kHigherFirst board, its bitwise complement on a kLowerFirst one. The
// complement (~s == -s - 1) reverses the order of int64 and maps it onto
// itself, so every score, the limits included, has a rank score, with no
// overflow and no second tree order to maintain. It is its own inverse.
#ifndef FEEDCORE_SRC_CONTRACT_SCORE_ORDER_H_
#define FEEDCORE_SRC_CONTRACT_SCORE_ORDER_H_

#include <cstdint>

#include "feedcore/leaderboard.h"

namespace feedcore::internal {

// The rank score of `score`, and the score of a rank score.
inline int64_t RankScoreOf(int64_t score, ScoreOrder order) {
  return order == ScoreOrder::kHigherFirst ? score : ~score;
}
inline int64_t ScoreOfRankScore(int64_t rank_score, ScoreOrder order) {
  return RankScoreOf(rank_score, order);
}

// Whether `a` is a better score than `b` on a board of `order`.
inline bool BetterScore(int64_t a, int64_t b, ScoreOrder order) {
  return order == ScoreOrder::kHigherFirst ? a > b : a < b;
}

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_CONTRACT_SCORE_ORDER_H_
