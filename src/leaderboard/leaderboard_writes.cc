// LeaderboardImpl's writes: Set, Increment, IncrementMany, Remove, Clear.
#include <algorithm>
#include <cassert>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "leaderboard/distinct_score_index.h"
#include "leaderboard/leaderboard_snapshot.h"

namespace feedcore::internal {
namespace {

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max()
               : std::numeric_limits<int64_t>::min();
}

// Elements of one partition that IncrementMany applies under one hold of
// its lock: long enough to keep a dozen misses in flight, short enough that
// a reader of the partition waits tens of microseconds at most.
constexpr size_t kIncrementRun = 128;

}  // namespace

// Each write runs inside a WriteCall (stream/change_log.h): refused before
// it changes anything when the log cannot take it, and durable as the
// policy promises when it returns.
absl::Status LeaderboardImpl::Set(MemberId member, int64_t score) {
  return InWriteCall(log(), [&] { return SetInMemory(member, score); });
}

absl::StatusOr<int64_t> LeaderboardImpl::Increment(MemberId member,
                                                   int64_t delta) {
  return InWriteCall(log(), [&] { return IncrementInMemory(member, delta); });
}

std::vector<absl::StatusOr<int64_t>> LeaderboardImpl::IncrementMany(
    absl::Span<const ScoreIncrement> increments) {
  WriteCall call(log());
  if (!call.admitted().ok()) {
    return std::vector<absl::StatusOr<int64_t>>(increments.size(),
                                                call.admitted());
  }
  std::vector<absl::StatusOr<int64_t>> results =
      IncrementManyInMemory(increments);
  if (absl::Status durable = call.Finish(true); !durable.ok()) {
    for (absl::StatusOr<int64_t>& result : results) {
      if (result.ok()) result = durable;
    }
  }
  return results;
}

absl::Status LeaderboardImpl::Remove(MemberId member) {
  return InWriteCall(log(), [&] { return RemoveInMemory(member); });
}

absl::Status LeaderboardImpl::Clear() {
  return InWriteCall(log(), [&] { return ClearInMemory(); });
}

absl::Status LeaderboardImpl::SetInMemory(MemberId member, int64_t score) {
  const size_t p = PartitionOf(member);
  Partition& partition = partitions_[p];
  WriterLock lock(&partition.mu);
  PartitionData& data = *partition.data;
  // The member's slot along with its control bytes: one wait, not two.
  data.members.prefetch(member);
  auto [it, inserted] = data.members.try_emplace(member, Placed{});
  uint64_t seq = 0;
  if (inserted) {
    try {
      seq = NextSeq();
      data.tree.Insert(RankKey{score, seq, member});
    } catch (...) {
      data.members.erase(it);  // keep map and tree in step if out of memory
      throw;
    }
    it->second = Placed{score, seq};
    RankScoreMoved(std::nullopt, score);
  } else if (it->second.score != score) {
    seq = NextSeq();
    const Placed old = it->second;
    data.tree.Update(RankKey{old.score, old.seq, member},
                     RankKey{score, seq, member});
    it->second = Placed{score, seq};
    RankScoreMoved(old.score, score);
  } else {
    return absl::OkStatus();  // unchanged: nothing to record
  }
  if (recording_ != nullptr) {
    Record(ChangeKind::kScoreSet, p, member, score, seq);
  }
  return absl::OkStatus();
}

template <typename TakeSeq>
absl::StatusOr<int64_t> LeaderboardImpl::IncrementLocked(
    PartitionData& data, size_t p, MemberId member, int64_t delta,
    const RankedBtree::WriteHint* hint, TakeSeq&& take_seq) {
  auto [it, inserted] = data.members.try_emplace(member, Placed{});
  if (inserted) {
    const uint64_t seq = take_seq(uint64_t{0});
    try {
      data.tree.Insert(RankKey{delta, seq, member},
                       hint != nullptr && hint->fetched());
    } catch (...) {
      data.members.erase(it);
      throw;
    }
    it->second = Placed{delta, seq};
    RankScoreMoved(std::nullopt, delta);
    if (recording_ != nullptr) {
      Record(ChangeKind::kScoreSet, p, member, delta, seq);
    }
    return delta;
  }
  const Placed old = it->second;
  int64_t new_score = 0;
  if (__builtin_add_overflow(old.score, delta, &new_score)) {
    return absl::OutOfRangeError(
        absl::StrCat("Increment(member ", member, ", delta ", delta,
                     ") would overflow the score: ", old.score, " + ", delta,
                     " is outside the int64 range; the score is unchanged"));
  }
  if (delta != 0) {
    const uint64_t seq = take_seq(old.seq);
    data.tree.Update(RankKey{old.score, old.seq, member},
                     RankKey{new_score, seq, member}, hint);
    it->second = Placed{new_score, seq};
    RankScoreMoved(old.score, new_score);
    if (recording_ != nullptr) {
      Record(ChangeKind::kScoreSet, p, member, new_score, seq);
    }
  }
  return new_score;
}

absl::StatusOr<int64_t> LeaderboardImpl::IncrementInMemory(MemberId member,
                                                           int64_t delta) {
  const size_t p = PartitionOf(member);
  Partition& partition = partitions_[p];
  WriterLock lock(&partition.mu);
  PartitionData& data = *partition.data;
  data.members.prefetch(member);  // as in Set
  return IncrementLocked(data, p, member, delta, /*hint=*/nullptr,
                         [this](uint64_t) { return NextSeq(); });
}

std::vector<absl::StatusOr<int64_t>> LeaderboardImpl::IncrementManyInMemory(
    absl::Span<const ScoreIncrement> increments) {
  std::vector<absl::StatusOr<int64_t>> results(increments.size());
  // Indexes are 32-bit to halve the sort's memory; a larger call is split.
  constexpr size_t kMaxCall = uint32_t{1} << 31;
  for (size_t begin = 0; begin < increments.size(); begin += kMaxCall) {
    const size_t count = std::min(kMaxCall, increments.size() - begin);
    const absl::Span<const ScoreIncrement> part =
        increments.subspan(begin, count);
    // Numbered in the order given, at the start (see the header).
    uint64_t first_seq = 0;
    if (options_.tie_break == TieBreak::kEarlierUpdateFirst) {
      first_seq = next_seq_.fetch_add(count, std::memory_order_relaxed) + 1;
    }
    // A stable counting sort of the elements by partition.
    const size_t partitions = options_.partitions;
    std::vector<uint32_t> partition_of(count);
    std::vector<uint32_t> starts(partitions + 1, 0);
    for (size_t i = 0; i < count; ++i) {
      partition_of[i] = static_cast<uint32_t>(PartitionOf(part[i].member));
      ++starts[partition_of[i] + 1];
    }
    for (size_t p = 0; p < partitions; ++p) starts[p + 1] += starts[p];
    std::vector<uint32_t> sorted(count);
    std::vector<uint32_t> next(starts.begin(), starts.end() - 1);
    for (size_t i = 0; i < count; ++i) {
      sorted[next[partition_of[i]]++] = static_cast<uint32_t>(i);
    }
    for (size_t p = 0; p < partitions; ++p) {
      for (size_t run = starts[p]; run < starts[p + 1]; run += kIncrementRun) {
        const size_t run_end =
            std::min<size_t>(starts[p + 1], run + kIncrementRun);
        IncrementRun(p, part,
                     absl::MakeConstSpan(sorted).subspan(run, run_end - run),
                     first_seq, results.data() + begin);
      }
    }
  }
  return results;
}

void LeaderboardImpl::IncrementRun(size_t p,
                                   absl::Span<const ScoreIncrement> increments,
                                   absl::Span<const uint32_t> indexes,
                                   uint64_t first_seq,
                                   absl::StatusOr<int64_t>* results) {
  // How far ahead of the element being applied its map slot is fetched,
  // and then (the slot having arrived) its descent is started: a descent
  // needs five phases on a partition of a million members (two per inner
  // level, one in the leaf), and every element applied runs one phase of
  // each descent in flight.
  constexpr size_t kMapAhead = 16;
  constexpr size_t kTreeAhead = 8;
  Partition& partition = partitions_[p];
  WriterLock lock(&partition.mu);
  PartitionData& data = *partition.data;
  const auto member_at = [&](size_t k) {
    return increments[indexes[k]].member;
  };
  // The descents of the elements ahead, by position modulo kTreeAhead.
  std::array<RankedBtree::WriteHint, kTreeAhead> hints;
  const auto start_hint = [&](size_t k) {
    const ScoreIncrement& increment = increments[indexes[k]];
    const auto it = data.members.find(increment.member);
    RankKey key{increment.delta, 0, increment.member};  // a new member
    int64_t new_score = increment.delta;
    if (it != data.members.end()) {
      key = RankKey{it->second.score, it->second.seq, increment.member};
      // Saturated: only a hint, and an overflowing element changes nothing.
      new_score = SaturatingAdd(key.score, increment.delta);
    }
    data.tree.StartWriteHint(key, new_score, hints[k % kTreeAhead]);
  };
  // Element i's update sequence. A change another thread applied to the
  // member after the call began has a higher number; a member's numbers
  // must keep increasing, so then the change takes a new one.
  const auto sequence_of = [&](uint32_t i, uint64_t current) -> uint64_t {
    if (options_.tie_break == TieBreak::kLowerMemberFirst) return 0;
    const uint64_t seq = first_seq + i;
    return seq > current ? seq : NextSeq();
  };

  const size_t n = indexes.size();
  for (size_t k = 0; k < std::min(n, kMapAhead); ++k) {
    data.members.prefetch(member_at(k));
  }
  for (size_t k = 0; k < std::min(n, kTreeAhead); ++k) start_hint(k);
  // The first elements have no earlier work to hide their misses behind:
  // their descents run to the end together, so that at least their misses
  // overlap one another's.
  for (bool running = true; running;) {
    running = false;
    for (RankedBtree::WriteHint& hint : hints) {
      data.tree.AdvanceWriteHint(hint);
      running |= !hint.done();
    }
  }
  for (size_t k = 0; k < n; ++k) {
    // Element k's descent. The hint of a member with an earlier element in
    // the run went to the place it had before that element moved it, which
    // costs a miss, not correctness: the tree uses a hint's leaf only for
    // the key the hint was started with.
    const RankedBtree::WriteHint hint = hints[k % kTreeAhead];
    // Element k's slot is free now.
    if (k + kTreeAhead < n) start_hint(k + kTreeAhead);
    if (k + kMapAhead < n) data.members.prefetch(member_at(k + kMapAhead));
    for (RankedBtree::WriteHint& hint : hints) data.tree.AdvanceWriteHint(hint);
    const uint32_t i = indexes[k];
    results[i] = IncrementLocked(
        data, p, increments[i].member, increments[i].delta, &hint,
        [&](uint64_t current) { return sequence_of(i, current); });
  }
}

absl::Status LeaderboardImpl::RemoveInMemory(MemberId member) {
  const size_t p = PartitionOf(member);
  Partition& partition = partitions_[p];
  WriterLock lock(&partition.mu);
  PartitionData& data = *partition.data;
  data.members.prefetch(member);  // as in Set
  auto it = data.members.find(member);
  if (it == data.members.end()) return MemberNotFound(member);
  const int64_t old_score = it->second.score;
  data.tree.Erase(RankKey{old_score, it->second.seq, member});
  data.members.erase(it);
  RankScoreMoved(old_score, std::nullopt);
  if (recording_ != nullptr) {
    Record(ChangeKind::kScoreRemove, p, member, 0, 0);
  }
  return absl::OkStatus();
}

absl::Status LeaderboardImpl::ClearInMemory() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // Allocate the empty partitions before taking any lock, exchange them
  // under all the locks, free the old ones after releasing them.
  std::vector<std::unique_ptr<PartitionData>> swapped;
  swapped.reserve(options_.partitions);
  for (size_t p = 0; p < options_.partitions; ++p) {
    swapped.push_back(std::make_unique<PartitionData>(&leaf_pool_));
  }
  std::optional<DistinctScoreIndex::Contents> scores_swapped;
  if (distinct_scores_ != nullptr) {
    scores_swapped.emplace(distinct_scores_->EmptyContents());
  }
  for (size_t p = 0; p < options_.partitions; ++p) partitions_[p].mu.Lock();
  for (size_t p = 0; p < options_.partitions; ++p) {
    partitions_[p].data.swap(swapped[p]);
    if (recording_ != nullptr) Record(ChangeKind::kBoardClear, p, 0, 0, 0);
  }
  if (scores_swapped.has_value()) distinct_scores_->Swap(*scores_swapped);
  for (size_t p = options_.partitions; p-- > 0;) partitions_[p].mu.Unlock();
  return absl::OkStatus();
}

}  // namespace feedcore::internal
