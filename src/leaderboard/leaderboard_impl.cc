#include "leaderboard/leaderboard_impl.h"

// Inlined: routing is on every call, and an out-of-line call into the
// shared library costs as much as the hash itself. Same function, same
// values as XXH3_64bits from libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cassert>

#include "absl/status/status.h"
#include "contract/leaderboard_arguments.h"
#include "leaderboard/distinct_score_index.h"
#include "leaderboard/leaderboard_snapshot.h"

namespace feedcore::internal {
namespace {

// A board's id tells its cursors from other boards' cursors. It is a hash
// of the board's address: distinct for boards alive at the same time, with
// no state shared between boards. A board created later at the address of
// a destroyed one gets the same id, so a stale cursor of the old board is
// accepted as a position in the new one; a cursor is only a key position,
// so that can misplace a page but never expose anything.
uint64_t BoardIdFor(const void* board) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(board);
  return XXH3_64bits_withSeed(&address, sizeof(address), 0x626f617264696473ULL);
}

}  // namespace

LeaderboardImpl::LeaderboardImpl(const LeaderboardOptions& options)
    : options_(options),
      board_id_(BoardIdFor(this)),
      partitions_(new Partition[options.partitions]),
      distinct_scores_(
          options.rank_style == RankStyle::kDense
              ? std::make_unique<DistinctScoreIndex>(options.partitions)
              : nullptr) {
  for (size_t p = 0; p < options_.partitions; ++p) {
    WriterLock lock(&partitions_[p].mu);
    partitions_[p].data = std::make_unique<PartitionData>(&leaf_pool_);
  }
}

LeaderboardImpl::~LeaderboardImpl() = default;

}  // namespace feedcore::internal

namespace feedcore {

absl::StatusOr<std::unique_ptr<Leaderboard>> Leaderboard::Create(
    const LeaderboardOptions& options) {
  if (absl::Status s = internal::ValidateLeaderboardOptions(options); !s.ok()) {
    return s;
  }
  return std::make_unique<internal::LeaderboardImpl>(options);
}

std::vector<absl::StatusOr<int64_t>> Leaderboard::IncrementMany(
    absl::Span<const ScoreIncrement> increments) {
  std::vector<absl::StatusOr<int64_t>> results;
  results.reserve(increments.size());
  for (const ScoreIncrement& increment : increments) {
    results.push_back(Increment(increment.member, increment.delta));
  }
  return results;
}

std::vector<absl::StatusOr<WriteResult>> Leaderboard::WriteMany(
    absl::Span<const ScoreWrite> writes) {
  std::vector<absl::StatusOr<WriteResult>> results;
  results.reserve(writes.size());
  for (const ScoreWrite& write : writes) results.push_back(Write(write));
  return results;
}

}  // namespace feedcore

namespace feedcore::internal {

size_t LeaderboardImpl::PartitionOf(MemberId member) const {
  if (options_.partitions == 1) return 0;
  return XXH3_64bits(&member, sizeof(member)) % options_.partitions;
}

uint64_t LeaderboardImpl::NextSeq() {
  if (options_.tie_break == TieBreak::kLowerMemberFirst) return 0;
  // Relaxed: only the uniqueness and the single modification order of the
  // counter matter. A read-modify-write always sees the latest value, so a
  // change that happens-before another (same thread, or ordered through the
  // partition lock for the same member) gets the smaller number.
  return next_seq_.fetch_add(1, std::memory_order_relaxed) + 1;
}

const ChangeLog* LeaderboardImpl::log() const {
  return recording_ == nullptr ? nullptr : recording_->log;
}

absl::StatusOr<size_t> LeaderboardImpl::Size() const {
  SharedSnapshot snapshot(*this);
  return snapshot.members();
}

std::vector<size_t> LeaderboardImpl::PartitionSizes() const {
  SharedSnapshot snapshot(*this);
  std::vector<size_t> sizes;
  for (size_t p = 0; p < snapshot.partitions(); ++p) {
    sizes.push_back(snapshot.data(p).tree.size());
  }
  return sizes;
}

bool LeaderboardImpl::CheckInvariants() const {
  SharedSnapshot snapshot(*this);
  // Members per rank score, to check the DistinctScoreIndex against.
  absl::flat_hash_map<int64_t, uint64_t> members_of;
  for (size_t p = 0; p < snapshot.partitions(); ++p) {
    const PartitionData& data = snapshot.data(p);
    if (!data.tree.CheckInvariants()) return false;
    if (data.members.size() != data.tree.size()) return false;
    constexpr size_t kBest = BoardTopCache::kEntries;
    const std::optional<RankKey> edge =
        data.tree.size() >= kBest
            ? std::optional<RankKey>(data.tree.Select(kBest - 1).key())
            : std::nullopt;
    if (data.top_edge != edge) return false;
    for (Position at = data.tree.First(); at.valid(); at = at.next()) {
      const RankKey key = at.key();
      if (PartitionOf(key.member) != p) return false;
      if (distinct_scores_ != nullptr) ++members_of[key.score];
      auto it = data.members.find(key.member);
      if (it == data.members.end() || it->second.score != key.score ||
          it->second.seq != key.seq) {
        return false;
      }
      if (options_.tie_break == TieBreak::kLowerMemberFirst && key.seq != 0) {
        return false;
      }
    }
  }
  if (distinct_scores_ != nullptr &&
      !distinct_scores_->CheckInvariants(snapshot, members_of)) {
    return false;
  }
  return true;
}

}  // namespace feedcore::internal
