// LeaderboardImpl's writes: Set, Increment, IncrementMany, Write, WriteMany,
// SetMetadata, Remove, Clear, and Metadata, the read of what SetMetadata
// writes. Every change of a member goes through StoreLocked.
#include <algorithm>
#include <array>
#include <cassert>
#include <limits>
#include <optional>
#include <tuple>
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

// Elements of one partition that IncrementMany and WriteMany apply under
// one hold of its lock: long enough to keep a dozen misses in flight, short
// enough that a reader of the partition waits tens of microseconds at most.
constexpr size_t kWriteRun = 128;

// The score an element would give a member whose score is `old` (none:
// absent), saturated: it only says where to prefetch.
int64_t LikelyScore(const ScoreIncrement& increment,
                    const std::optional<int64_t>& old) {
  return old ? SaturatingAdd(*old, increment.delta) : increment.delta;
}
int64_t LikelyScore(const ScoreWrite& write,
                    const std::optional<int64_t>& old) {
  return old && write.op == WriteOp::kIncrement
             ? SaturatingAdd(*old, write.value)
             : write.value;
}

bool RequiresPresent(WriteCondition condition) {
  return condition == WriteCondition::kIfPresent ||
         condition == WriteCondition::kIfPresentAndBetter ||
         condition == WriteCondition::kIfPresentAndWorse;
}
bool RequiresBetter(WriteCondition condition) {
  return condition == WriteCondition::kIfBetter ||
         condition == WriteCondition::kIfPresentAndBetter;
}
bool RequiresWorse(WriteCondition condition) {
  return condition == WriteCondition::kIfWorse ||
         condition == WriteCondition::kIfPresentAndWorse;
}

absl::Status Overflow(absl::string_view call, MemberId member,
                      absl::string_view what, int64_t delta, int64_t old) {
  return absl::OutOfRangeError(
      absl::StrCat(call, "(member ", member, ", ", what, " ", delta,
                   ") would overflow the score: ", old, " + ", delta,
                   " is outside the int64 range; the score is unchanged"));
}

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

absl::StatusOr<WriteResult> LeaderboardImpl::Write(const ScoreWrite& write) {
  if (absl::Status s = ValidateWrite(write); !s.ok()) return s;
  return InWriteCall(log(), [&] { return WriteInMemory(write); });
}

std::vector<absl::StatusOr<WriteResult>> LeaderboardImpl::WriteMany(
    absl::Span<const ScoreWrite> writes) {
  std::vector<absl::StatusOr<WriteResult>> results;
  results.reserve(writes.size());
  for (const ScoreWrite& write : writes) {
    if (absl::Status s = ValidateWrite(write); !s.ok()) {
      results.push_back(std::move(s));
    } else {
      results.push_back(WriteResult{});
    }
  }
  WriteCall call(log());
  if (!call.admitted().ok()) {
    for (absl::StatusOr<WriteResult>& result : results) {
      if (result.ok()) result = call.admitted();
    }
    return results;
  }
  WriteManyInMemory(writes, results.data());
  if (absl::Status durable = call.Finish(true); !durable.ok()) {
    for (absl::StatusOr<WriteResult>& result : results) {
      if (result.ok()) result = durable;
    }
  }
  return results;
}

absl::Status LeaderboardImpl::SetMetadata(MemberId member,
                                          absl::string_view metadata) {
  if (absl::Status s =
          ValidateMetadata("SetMetadata metadata", metadata.size());
      !s.ok()) {
    return s;
  }
  return InWriteCall(log(),
                     [&] { return SetMetadataInMemory(member, metadata); });
}

absl::Status LeaderboardImpl::Remove(MemberId member) {
  return InWriteCall(log(), [&] { return RemoveInMemory(member); });
}

absl::Status LeaderboardImpl::Clear() {
  return InWriteCall(log(), [&] { return ClearInMemory(); });
}

absl::Status LeaderboardImpl::ValidateMetadata(absl::string_view field,
                                               size_t size) const {
  if (options_.max_metadata_bytes == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field,
                     " is given, but LeaderboardOptions.max_metadata_bytes is "
                     "0: the board keeps no metadata"));
  }
  if (size > options_.max_metadata_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is ", size, " bytes; it must be at most ",
                     options_.max_metadata_bytes,
                     " (LeaderboardOptions.max_metadata_bytes)"));
  }
  return absl::OkStatus();
}

absl::Status LeaderboardImpl::ValidateWrite(const ScoreWrite& write) const {
  if (write.op != WriteOp::kSet && write.op != WriteOp::kIncrement) {
    return absl::InvalidArgumentError(
        absl::StrCat("ScoreWrite.op is ", static_cast<int>(write.op),
                     "; it must be WriteOp::kSet or WriteOp::kIncrement"));
  }
  if (static_cast<uint8_t>(write.condition) >
      static_cast<uint8_t>(WriteCondition::kIfPresentAndWorse)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ScoreWrite.condition is ", static_cast<int>(write.condition),
        "; it must be a WriteCondition, kAlways..kIfPresentAndWorse"));
  }
  if (write.metadata.has_value()) {
    return ValidateMetadata("ScoreWrite.metadata", write.metadata->size());
  }
  return absl::OkStatus();
}

template <typename TakeSeq>
WriteOutcome LeaderboardImpl::StoreLocked(
    PartitionData& data, size_t p, MemberId member, MemberMap::iterator it,
    bool added, int64_t rank_score, const RankedBtree::WriteHint* hint,
    TakeSeq&& take_seq, const std::string* metadata) {
  // What can fail comes first: the copy of the metadata and its slot, then
  // the tree, which changes nothing when it fails. The rest cannot fail.
  std::string new_metadata;
  MetadataMap::iterator slot;
  bool slot_added = false;
  WriteOutcome outcome = WriteOutcome::kUnchanged;
  uint64_t seq = it->second.seq;
  try {
    if (metadata != nullptr && !metadata->empty()) {
      new_metadata = *metadata;
      std::tie(slot, slot_added) = data.metadata.try_emplace(member);
    }
    if (added) {
      seq = take_seq(uint64_t{0});
      data.tree.Insert(RankKey{rank_score, seq, member},
                       hint != nullptr && hint->fetched());
      outcome = WriteOutcome::kAdded;
    } else if (it->second.score != rank_score) {
      seq = take_seq(it->second.seq);
      data.tree.Update(RankKey{it->second.score, it->second.seq, member},
                       RankKey{rank_score, seq, member}, hint);
      outcome = WriteOutcome::kChanged;
    }
  } catch (...) {
    if (slot_added) data.metadata.erase(slot);
    if (added) data.members.erase(it);  // keep map and tree in step
    throw;
  }
  const Placed old = it->second;
  it->second = Placed{rank_score, seq};
  const RankKey new_key{rank_score, seq, member};
  if (outcome == WriteOutcome::kAdded) {
    NoteTopChange(p, data, nullptr, &new_key);
    RankScoreMoved(std::nullopt, rank_score);
  } else if (outcome == WriteOutcome::kChanged) {
    const RankKey old_key{old.score, old.seq, member};
    NoteTopChange(p, data, &old_key, &new_key);
    RankScoreMoved(old.score, rank_score);
  }
  bool metadata_changed = false;
  if (metadata != nullptr) {
    if (!metadata->empty()) {
      metadata_changed = slot->second != new_metadata;
      slot->second.swap(new_metadata);
    } else if (auto found = data.metadata.find(member);
               found != data.metadata.end()) {
      data.metadata.erase(found);
      metadata_changed = true;
    }
  }
  if (recording_ != nullptr &&
      (outcome != WriteOutcome::kUnchanged || metadata_changed)) {
    Record(ChangeKind::kScoreSet, p, member, ToScore(rank_score), seq,
           metadata_changed ? metadata : nullptr);
  }
  return outcome;
}

absl::Status LeaderboardImpl::SetInMemory(MemberId member, int64_t score) {
  const size_t p = PartitionOf(member);
  Partition& partition = partitions_[p];
  WriterLock lock(&partition.mu);
  PartitionData& data = *partition.data;
  // The member's slot along with its control bytes: one wait, not two.
  data.members.prefetch(member);
  auto [it, added] = data.members.try_emplace(member, Placed{});
  StoreLocked(
      data, p, member, it, added, ToRankScore(score), /*hint=*/nullptr,
      [this](uint64_t) { return NextSeq(); }, /*metadata=*/nullptr);
  return absl::OkStatus();
}

template <typename TakeSeq>
absl::StatusOr<int64_t> LeaderboardImpl::IncrementLocked(
    PartitionData& data, size_t p, MemberId member, int64_t delta,
    const RankedBtree::WriteHint* hint, TakeSeq&& take_seq) {
  auto [it, added] = data.members.try_emplace(member, Placed{});
  int64_t score = delta;
  if (!added) {
    // On scores: on a kLowerFirst board the rank score moves the other way.
    const int64_t old = ToScore(it->second.score);
    if (__builtin_add_overflow(old, delta, &score)) {
      return Overflow("Increment", member, "delta", delta, old);
    }
  }
  StoreLocked(data, p, member, it, added, ToRankScore(score), hint, take_seq,
              /*metadata=*/nullptr);
  return score;
}

template <typename TakeSeq>
absl::StatusOr<WriteResult> LeaderboardImpl::WriteLocked(
    PartitionData& data, size_t p, const ScoreWrite& write,
    const RankedBtree::WriteHint* hint, TakeSeq&& take_seq) {
  const MemberId member = write.member;
  const WriteCondition condition = write.condition;
  auto it = data.members.find(member);
  const bool present = it != data.members.end();
  std::optional<int64_t> old;
  if (present) old = ToScore(it->second.score);
  const WriteResult not_applied{WriteOutcome::kNotApplied, old};
  // Presence first: a write that cannot apply to a member that is there
  // (or absent) never computes its increment, so it cannot overflow.
  if (present ? condition == WriteCondition::kIfAbsent
              : RequiresPresent(condition)) {
    return not_applied;
  }
  int64_t score = write.value;
  if (present && write.op == WriteOp::kIncrement &&
      __builtin_add_overflow(*old, write.value, &score)) {
    return Overflow("Write", member, "increment", write.value, *old);
  }
  if (present && ((RequiresBetter(condition) &&
                   !BetterScore(score, *old, options_.score_order)) ||
                  (RequiresWorse(condition) &&
                   !BetterScore(*old, score, options_.score_order)))) {
    return not_applied;
  }
  if (!present) it = data.members.try_emplace(member, Placed{}).first;
  const WriteOutcome outcome =
      StoreLocked(data, p, member, it, !present, ToRankScore(score), hint,
                  take_seq, write.metadata ? &*write.metadata : nullptr);
  return WriteResult{outcome, score};
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

absl::StatusOr<WriteResult> LeaderboardImpl::WriteInMemory(
    const ScoreWrite& write) {
  const size_t p = PartitionOf(write.member);
  Partition& partition = partitions_[p];
  WriterLock lock(&partition.mu);
  PartitionData& data = *partition.data;
  data.members.prefetch(write.member);  // as in Set
  return WriteLocked(data, p, write, /*hint=*/nullptr,
                     [this](uint64_t) { return NextSeq(); });
}

absl::Status LeaderboardImpl::SetMetadataInMemory(MemberId member,
                                                  absl::string_view metadata) {
  const std::string bytes(metadata);
  const size_t p = PartitionOf(member);
  Partition& partition = partitions_[p];
  WriterLock lock(&partition.mu);
  PartitionData& data = *partition.data;
  auto it = data.members.find(member);
  if (it == data.members.end()) return MemberNotFound(member);
  // The same score: the member keeps its key, and no sequence is taken.
  StoreLocked(
      data, p, member, it, /*added=*/false, it->second.score, /*hint=*/nullptr,
      [](uint64_t current) { return current; }, &bytes);
  return absl::OkStatus();
}

absl::StatusOr<std::string> LeaderboardImpl::Metadata(MemberId member) const {
  if (options_.max_metadata_bytes == 0) {
    return absl::InvalidArgumentError(
        "Metadata: LeaderboardOptions.max_metadata_bytes is 0: the board "
        "keeps no metadata");
  }
  const Partition& partition = partitions_[PartitionOf(member)];
  ReaderLock lock(&partition.mu);
  const PartitionData& data = *partition.data;
  if (!data.members.contains(member)) return MemberNotFound(member);
  const auto it = data.metadata.find(member);
  return it == data.metadata.end() ? std::string() : it->second;
}

template <typename Element, typename Result, typename Skip, typename Run>
void LeaderboardImpl::ApplyInRuns(absl::Span<const Element> elements,
                                  Result* results, Skip&& skip, Run&& run) {
  // Indexes are 32-bit to halve the sort's memory; a larger call is split.
  constexpr size_t kMaxCall = uint32_t{1} << 31;
  constexpr uint32_t kSkipped = std::numeric_limits<uint32_t>::max();
  for (size_t begin = 0; begin < elements.size(); begin += kMaxCall) {
    const size_t count = std::min(kMaxCall, elements.size() - begin);
    const absl::Span<const Element> part = elements.subspan(begin, count);
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
      if (skip(begin + i)) {
        partition_of[i] = kSkipped;
        continue;
      }
      partition_of[i] = static_cast<uint32_t>(PartitionOf(part[i].member));
      ++starts[partition_of[i] + 1];
    }
    for (size_t p = 0; p < partitions; ++p) starts[p + 1] += starts[p];
    std::vector<uint32_t> sorted(starts[partitions]);
    std::vector<uint32_t> next(starts.begin(), starts.end() - 1);
    for (size_t i = 0; i < count; ++i) {
      if (partition_of[i] == kSkipped) continue;
      sorted[next[partition_of[i]]++] = static_cast<uint32_t>(i);
    }
    for (size_t p = 0; p < partitions; ++p) {
      for (size_t run_begin = starts[p]; run_begin < starts[p + 1];
           run_begin += kWriteRun) {
        const size_t run_end =
            std::min<size_t>(starts[p + 1], run_begin + kWriteRun);
        run(p, part,
            absl::MakeConstSpan(sorted).subspan(run_begin, run_end - run_begin),
            first_seq, results + begin);
      }
    }
  }
}

template <typename Element, typename Apply>
void LeaderboardImpl::ApplyRun(size_t p, absl::Span<const Element> elements,
                               absl::Span<const uint32_t> indexes,
                               uint64_t first_seq, Apply&& apply) {
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
  const auto member_at = [&](size_t k) { return elements[indexes[k]].member; };
  // The descents of the elements ahead, by position modulo kTreeAhead.
  std::array<RankedBtree::WriteHint, kTreeAhead> hints;
  const auto start_hint = [&](size_t k) {
    const Element& element = elements[indexes[k]];
    const auto it = data.members.find(element.member);
    if (it == data.members.end()) {  // a new member
      const int64_t rank_score =
          ToRankScore(LikelyScore(element, std::nullopt));
      data.tree.StartWriteHint(RankKey{rank_score, 0, element.member},
                               rank_score, hints[k % kTreeAhead]);
      return;
    }
    const RankKey key{it->second.score, it->second.seq, element.member};
    data.tree.StartWriteHint(
        key, ToRankScore(LikelyScore(element, ToScore(key.score))),
        hints[k % kTreeAhead]);
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
    for (RankedBtree::WriteHint& ahead : hints) {
      data.tree.AdvanceWriteHint(ahead);
    }
    const uint32_t i = indexes[k];
    apply(data, i, &hint,
          [&](uint64_t current) { return sequence_of(i, current); });
  }
}

std::vector<absl::StatusOr<int64_t>> LeaderboardImpl::IncrementManyInMemory(
    absl::Span<const ScoreIncrement> increments) {
  std::vector<absl::StatusOr<int64_t>> results(increments.size());
  ApplyInRuns(
      increments, results.data(), [](size_t) { return false; },
      [this](size_t p, absl::Span<const ScoreIncrement> part,
             absl::Span<const uint32_t> indexes, uint64_t first_seq,
             absl::StatusOr<int64_t>* out) {
        ApplyRun(p, part, indexes, first_seq,
                 [&](PartitionData& data, uint32_t i,
                     const RankedBtree::WriteHint* hint, auto&& take_seq) {
                   out[i] = IncrementLocked(data, p, part[i].member,
                                            part[i].delta, hint, take_seq);
                 });
      });
  return results;
}

void LeaderboardImpl::WriteManyInMemory(absl::Span<const ScoreWrite> writes,
                                        absl::StatusOr<WriteResult>* results) {
  ApplyInRuns(
      writes, results, [results](size_t i) { return !results[i].ok(); },
      [this](size_t p, absl::Span<const ScoreWrite> part,
             absl::Span<const uint32_t> indexes, uint64_t first_seq,
             absl::StatusOr<WriteResult>* out) {
        ApplyRun(p, part, indexes, first_seq,
                 [&](PartitionData& data, uint32_t i,
                     const RankedBtree::WriteHint* hint, auto&& take_seq) {
                   out[i] = WriteLocked(data, p, part[i], hint, take_seq);
                 });
      });
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
  const RankKey old_key{old_score, it->second.seq, member};
  data.tree.Erase(old_key);
  data.members.erase(it);
  if (!data.metadata.empty()) data.metadata.erase(member);
  NoteTopChange(p, data, &old_key, nullptr);
  RankScoreMoved(old_score, std::nullopt);
  if (recording_ != nullptr) {
    Record(ChangeKind::kScoreRemove, p, member, 0, 0);
  }
  return absl::OkStatus();
}

void LeaderboardImpl::NoteTopChange(size_t p, PartitionData& data,
                                    const RankKey* from, const RankKey* to) {
  const std::optional<RankKey>& edge = data.top_edge;
  const auto among_best = [&edge](const RankKey* key) {
    return key != nullptr && (!edge.has_value() || !RanksAbove(*edge, *key));
  };
  if (!among_best(from) && !among_best(to)) return;
  BumpTopVersion(p);
  constexpr size_t kBest = BoardTopCache::kEntries;
  data.top_edge =
      data.tree.size() >= kBest
          ? std::optional<RankKey>(data.tree.Select(kBest - 1).key())
          : std::nullopt;
}

void LeaderboardImpl::BumpTopVersion(size_t p) {
  std::atomic<uint64_t>& version = partitions_[p].top_version;
  // Release: a TopK that loads the new version sees the change (only
  // writers holding the partition's lock exclusively store it).
  version.store(version.load(std::memory_order_relaxed) + 1,
                std::memory_order_release);
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
    BumpTopVersion(p);
    if (recording_ != nullptr) Record(ChangeKind::kBoardClear, p, 0, 0, 0);
  }
  if (scores_swapped.has_value()) distinct_scores_->Swap(*scores_swapped);
  for (size_t p = options_.partitions; p-- > 0;) partitions_[p].mu.Unlock();
  return absl::OkStatus();
}

}  // namespace feedcore::internal
