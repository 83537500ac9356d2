#include "leaderboard/distinct_score_index.h"

// Inlined, as in leaderboard_impl.cc: every score change of a kDense board
// hashes one or two scores.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <utility>

#include "leaderboard/leaderboard_snapshot.h"

namespace feedcore::internal {
namespace {

// The tree key of a distinct rank score (see the header).
RankKey KeyOf(int64_t rank_score) {
  return RankKey{rank_score, 0, static_cast<uint64_t>(rank_score)};
}

}  // namespace

DistinctScoreIndex::DistinctScoreIndex(size_t shards)
    : shards_(shards), shard_(new Shard[shards]) {
  for (size_t s = 0; s < shards_; ++s) {
    WriterLock lock(&shard_[s].mu);
    shard_[s].data = std::make_unique<ShardData>();
  }
}

size_t DistinctScoreIndex::ShardOf(int64_t rank_score) const {
  if (shards_ == 1) return 0;
  return XXH3_64bits(&rank_score, sizeof(rank_score)) % shards_;
}

void DistinctScoreIndex::Moved(std::optional<int64_t> from,
                               std::optional<int64_t> to) {
  if (from == to) return;
  if (to.has_value()) Add(*to);  // may throw, changing nothing
  if (from.has_value()) Remove(*from);
}

void DistinctScoreIndex::Add(int64_t rank_score) {
  Shard& shard = shard_[ShardOf(rank_score)];
  WriterLock lock(&shard.mu);
  ShardData& data = *shard.data;
  auto [it, inserted] = data.members_of.try_emplace(rank_score, 0);
  if (inserted) {
    try {
      data.scores.Insert(KeyOf(rank_score));
    } catch (...) {
      data.members_of.erase(it);
      throw;
    }
  }
  ++it->second;
}

void DistinctScoreIndex::Remove(int64_t rank_score) {
  Shard& shard = shard_[ShardOf(rank_score)];
  WriterLock lock(&shard.mu);
  ShardData& data = *shard.data;
  auto it = data.members_of.find(rank_score);
  if (it == data.members_of.end()) return;  // cannot happen: Add came first
  if (--it->second == 0) {
    data.scores.Erase(KeyOf(rank_score));
    data.members_of.erase(it);
  }
}

const DistinctScoreIndex::ShardData& DistinctScoreIndex::FrozenData(
    size_t shard) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // Frozen by the board snapshot the callers hold (see the header).
  return *shard_[shard].data;
}

uint64_t DistinctScoreIndex::CountAbove(
    const LeaderboardImpl::SharedSnapshot& /*snapshot*/,
    int64_t rank_score) const {
  PerPartition<const RankedBtree*> trees(shards_);
  PerPartition<size_t> counts(shards_);
  for (size_t s = 0; s < shards_; ++s) trees[s] = &FrozenData(s).scores;
  // No key of rank_score or below ranks above {rank_score, 0, 0}.
  RankedBtree::BoundMany(trees.data(), shards_, RankKey{rank_score, 0, 0},
                         /*upper=*/false, nullptr, counts.data());
  uint64_t above = 0;
  for (size_t s = 0; s < shards_; ++s) above += counts[s];
  return above;
}

DistinctScoreIndex::Contents DistinctScoreIndex::EmptyContents() const {
  Contents contents;
  contents.data_.reserve(shards_);
  for (size_t s = 0; s < shards_; ++s) {
    contents.data_.push_back(std::make_unique<ShardData>());
  }
  return contents;
}

void DistinctScoreIndex::Swap(Contents& contents) {
  for (size_t s = 0; s < shards_; ++s) {
    WriterLock lock(&shard_[s].mu);
    shard_[s].data.swap(contents.data_[s]);
  }
}

bool DistinctScoreIndex::CheckInvariants(
    const LeaderboardImpl::SharedSnapshot& /*snapshot*/,
    const absl::flat_hash_map<int64_t, uint64_t>& members_of) const {
  size_t scores = 0;
  for (size_t s = 0; s < shards_; ++s) {
    const ShardData& data = FrozenData(s);
    if (!data.scores.CheckInvariants()) return false;
    if (data.scores.size() != data.members_of.size()) return false;
    for (auto at = data.scores.First(); at.valid(); at = at.next()) {
      const RankKey key = at.key();
      if (key != KeyOf(key.score) || ShardOf(key.score) != s) return false;
      auto it = data.members_of.find(key.score);
      auto want = members_of.find(key.score);
      if (it == data.members_of.end() || want == members_of.end() ||
          it->second != want->second) {
        return false;
      }
    }
    scores += data.scores.size();
  }
  return scores == members_of.size();
}

}  // namespace feedcore::internal
