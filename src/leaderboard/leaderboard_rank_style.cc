// LeaderboardImpl's rank styles: turning the unique ranks the reads compute
// into competition or dense ranks, under the read's snapshot.
//
// A competition rank is the number of members with a better score: the
// members above tree key {rank score, 0, 0}, which ranks above every other
// key of its score (sequence 0 and member 0 come first). Within consecutive
// entries of the board only the best one needs that descent: an entry whose
// score differs from the one just above it has every member above it at a
// better score, so its competition rank is its unique rank. A dense rank is
// the number of distinct better scores, which the DistinctScoreIndex
// counts; going down consecutive entries it grows by one at each new score.
#include "contract/score_order.h"
#include "leaderboard/distinct_score_index.h"
#include "leaderboard/leaderboard_snapshot.h"

namespace feedcore::internal {

void LeaderboardImpl::RankScoreMoved(std::optional<int64_t> from,
                                     std::optional<int64_t> to) {
  if (distinct_scores_ != nullptr) distinct_scores_->Moved(from, to);
}

uint64_t LeaderboardImpl::CountBetterScores(const SharedSnapshot& snapshot,
                                            int64_t rank_score) const {
  PerPartition<size_t> counts(snapshot.partitions());
  snapshot.Bounds(RankKey{rank_score, 0, 0}, /*upper=*/false, nullptr,
                  counts.data());
  uint64_t better = 0;
  for (size_t p = 0; p < counts.size(); ++p) better += counts[p];
  return better;
}

uint64_t LeaderboardImpl::CountDistinctBetterScores(
    const SharedSnapshot& snapshot, int64_t rank_score) const {
  return distinct_scores_->CountAbove(snapshot, rank_score);
}

uint64_t LeaderboardImpl::StyledRank(const SharedSnapshot& snapshot,
                                     const RankKey& key,
                                     uint64_t unique_rank) const {
  switch (options_.rank_style) {
    case RankStyle::kUnique:
      return unique_rank;
    case RankStyle::kCompetition:
      return CountBetterScores(snapshot, key.score);
    case RankStyle::kDense:
      return CountDistinctBetterScores(snapshot, key.score);
  }
  return unique_rank;
}

void LeaderboardImpl::StyleRanks(const SharedSnapshot& snapshot,
                                 absl::Span<LeaderboardEntry> entries,
                                 bool best_first) const {
  if (options_.rank_style == RankStyle::kUnique || entries.empty()) return;
  const size_t n = entries.size();
  // The i-th entry in best-first order.
  const auto at = [&](size_t i) -> LeaderboardEntry& {
    return best_first ? entries[i] : entries[n - 1 - i];
  };
  const LeaderboardEntry& best = at(0);
  const RankKey best_key{RankScoreOf(best.score, options_.score_order),
                         /*seq=*/0, best.member};
  uint64_t rank = StyledRank(snapshot, best_key, best.rank);
  int64_t score = best.score;
  for (size_t i = 0; i < n; ++i) {
    LeaderboardEntry& entry = at(i);
    if (entry.score != score) {
      score = entry.score;
      rank = options_.rank_style == RankStyle::kCompetition ? entry.rank
                                                            : rank + 1;
    }
    entry.rank = rank;
  }
}

}  // namespace feedcore::internal
