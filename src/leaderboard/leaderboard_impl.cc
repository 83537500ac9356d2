#include "leaderboard/leaderboard_impl.h"

// Inlined: routing is on every call, and an out-of-line call into the
// shared library costs as much as the hash itself. Same function, same
// values as XXH3_64bits from libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "leaderboard/leaderboard_cursor.h"
#include "leaderboard/leaderboard_options.h"

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

absl::Status MemberNotFound(MemberId member) {
  return absl::NotFoundError(
      absl::StrCat("member ", member, " is not on the leaderboard"));
}

LeaderboardEntry EntryOf(const RankKey& key, uint64_t rank) {
  return LeaderboardEntry{key.member, key.score, rank};
}

// A value-initialized array of `n` elements of T that lives on the stack
// for up to 32 partitions, so that the per-partition scratch space of a read
// costs no allocation in the common configurations.
template <typename T>
class PerPartition {
 public:
  explicit PerPartition(size_t n) : size_(n) {
    if (n > kInline) heap_.resize(n);
    data_ = n > kInline ? heap_.data() : inline_.data();
  }
  PerPartition(const PerPartition&) = delete;
  PerPartition& operator=(const PerPartition&) = delete;

  T* data() { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  size_t size() const { return size_; }
  absl::Span<const T> span() const { return {data_, size_}; }

 private:
  static constexpr size_t kInline = 32;
  std::array<T, kInline> inline_{};
  std::vector<T> heap_;
  T* data_;
  const size_t size_;
};

}  // namespace

// Holds every partition's lock shared, taken in ascending index and
// released in descending index, and is the proof of holding them that
// reading a partition's data requires. clang's analysis cannot follow a
// lock taken in a loop, so this class is where it is told.
class LeaderboardImpl::SharedSnapshot {
 public:
  explicit SharedSnapshot(const LeaderboardImpl& board)
      ABSL_NO_THREAD_SAFETY_ANALYSIS : board_(board) {
    for (size_t p = 0; p < board_.options_.partitions; ++p) {
      board_.partitions_[p].mu.ReaderLock();
    }
  }
  ~SharedSnapshot() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    for (size_t p = board_.options_.partitions; p-- > 0;) {
      board_.partitions_[p].mu.ReaderUnlock();
    }
  }
  SharedSnapshot(const SharedSnapshot&) = delete;
  SharedSnapshot& operator=(const SharedSnapshot&) = delete;

  const PartitionData& data(size_t p) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return *board_.partitions_[p].data;
  }
  size_t partitions() const { return board_.options_.partitions; }

  // For every partition p: positions[p] (if positions is not null) and
  // counts[p] get the partition's lower bound of `key` (upper bound with
  // `upper`), found by interleaved descents. `holder` is the partition
  // that holds `key` itself, if one does.
  void Bounds(const RankKey& key, bool upper, Position* positions,
              size_t* counts, size_t holder = RankedBtree::kNoHolder) const {
    PerPartition<const RankedBtree*> trees(partitions());
    for (size_t p = 0; p < trees.size(); ++p) trees[p] = &data(p).tree;
    RankedBtree::BoundMany(trees.data(), trees.size(), key, upper, positions,
                           counts, holder);
  }

 private:
  const LeaderboardImpl& board_;
};

LeaderboardImpl::LeaderboardImpl(const LeaderboardOptions& options)
    : options_(options),
      board_id_(BoardIdFor(this)),
      partitions_(new Partition[options.partitions]) {
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
  } else if (it->second.score != score) {
    seq = NextSeq();
    data.tree.Update(RankKey{it->second.score, it->second.seq, member},
                     RankKey{score, seq, member});
    it->second = Placed{score, seq};
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
  data.tree.Erase(RankKey{it->second.score, it->second.seq, member});
  data.members.erase(it);
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
  for (size_t p = 0; p < options_.partitions; ++p) partitions_[p].mu.Lock();
  for (size_t p = 0; p < options_.partitions; ++p) {
    partitions_[p].data.swap(swapped[p]);
    if (recording_ != nullptr) Record(ChangeKind::kBoardClear, p, 0, 0, 0);
  }
  for (size_t p = options_.partitions; p-- > 0;) partitions_[p].mu.Unlock();
  return absl::OkStatus();
}

absl::StatusOr<int64_t> LeaderboardImpl::Score(MemberId member) const {
  const Partition& partition = partitions_[PartitionOf(member)];
  ReaderLock lock(&partition.mu);
  const PartitionData& data = *partition.data;
  data.members.prefetch(member);  // as in Set
  auto it = data.members.find(member);
  if (it == data.members.end()) return MemberNotFound(member);
  return it->second.score;
}

absl::StatusOr<uint64_t> LeaderboardImpl::Rank(MemberId member) const {
  const size_t home = PartitionOf(member);
  SharedSnapshot snapshot(*this);
  const PartitionData& home_data = snapshot.data(home);
  home_data.members.prefetch(member);  // as in Set
  auto it = home_data.members.find(member);
  if (it == home_data.members.end()) return MemberNotFound(member);
  const RankKey key{it->second.score, it->second.seq, member};
  PerPartition<size_t> counts(snapshot.partitions());
  snapshot.Bounds(key, /*upper=*/false, nullptr, counts.data(), home);
  uint64_t rank = 0;
  for (size_t p = 0; p < counts.size(); ++p) rank += counts[p];
  return rank;
}

template <typename Emit>
bool LeaderboardImpl::Merge(absl::Span<const Position> runs, bool best_first,
                            size_t want, bool probe, size_t* entries_read,
                            Emit&& emit) {
  if (want == 0 && !probe) return false;
  // A binary heap whose top is the next entry in the merged order; each
  // item carries its entry's key, read once when the item enters.
  struct Item {
    RankKey key;
    Position at;
  };
  const auto after = [best_first](const Item& a, const Item& b) {
    return best_first ? RanksAbove(b.key, a.key) : RanksAbove(a.key, b.key);
  };
  PerPartition<Item> storage(runs.size());
  Item* const heap = storage.data();
  size_t size = 0;
  for (const Position& start : runs) {
    if (start.valid()) heap[size++] = Item{start.key(), start};
  }
  *entries_read += size;
  std::make_heap(heap, heap + size, after);
  for (size_t emitted = 0; emitted < want && size > 0;) {
    std::pop_heap(heap, heap + size, after);
    Item& item = heap[size - 1];
    emit(item.key);
    ++emitted;
    const Position successor = best_first ? item.at.next() : item.at.prev();
    if (successor.valid() && (emitted < want || probe)) {
      item = Item{successor.key(), successor};
      ++*entries_read;
      std::push_heap(heap, heap + size, after);
    } else {
      --size;
    }
  }
  return probe && size > 0;
}

absl::StatusOr<std::vector<LeaderboardEntry>> LeaderboardImpl::TopK(
    size_t k) const {
  size_t entries_read = 0;
  return TopKCounted(k, &entries_read);
}

absl::StatusOr<std::vector<LeaderboardEntry>> LeaderboardImpl::TopKCounted(
    size_t k, size_t* entries_read) const {
  if (absl::Status s = ValidateReadSize("TopK k", k, 1, options_.max_page_size);
      !s.ok()) {
    return s;
  }
  std::vector<LeaderboardEntry> out;
  PerPartition<Position> runs(options_.partitions);
  SharedSnapshot snapshot(*this);
  size_t size = 0;
  for (size_t p = 0; p < snapshot.partitions(); ++p) {
    runs[p] = snapshot.data(p).tree.First();
    size += snapshot.data(p).tree.size();
  }
  out.reserve(std::min(k, size));
  Merge(
      runs.span(), /*best_first=*/true, k, /*probe=*/false, entries_read,
      [&out](const RankKey& key) { out.push_back(EntryOf(key, out.size())); });
  return out;
}

absl::StatusOr<std::vector<LeaderboardEntry>>
LeaderboardImpl::TopKReadingKPerPartition(size_t k,
                                          size_t* entries_read) const {
  if (absl::Status s = ValidateReadSize("TopK k", k, 1, options_.max_page_size);
      !s.ok()) {
    return s;
  }
  std::vector<RankKey> gathered;
  {
    SharedSnapshot snapshot(*this);
    gathered.reserve(k * snapshot.partitions());
    for (size_t p = 0; p < snapshot.partitions(); ++p) {
      size_t taken = 0;
      for (Position at = snapshot.data(p).tree.First(); at.valid() && taken < k;
           at = at.next(), ++taken) {
        gathered.push_back(at.key());
      }
      *entries_read += taken;
    }
  }
  const size_t keep = std::min(k, gathered.size());
  std::partial_sort(gathered.begin(), gathered.begin() + keep, gathered.end(),
                    RanksAbove);
  std::vector<LeaderboardEntry> out;
  out.reserve(keep);
  for (size_t i = 0; i < keep; ++i) out.push_back(EntryOf(gathered[i], i));
  return out;
}

absl::StatusOr<std::vector<LeaderboardEntry>> LeaderboardImpl::Around(
    MemberId member, size_t before, size_t after) const {
  if (absl::Status s =
          ValidateReadSize("Around before", before, 0, options_.max_page_size);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ValidateReadSize("Around after", after, 0, options_.max_page_size);
      !s.ok()) {
    return s;
  }
  const size_t home = PartitionOf(member);
  const size_t partitions = options_.partitions;
  PerPartition<Position> above(partitions);  // runs towards the leader
  PerPartition<Position> below(partitions);  // runs away from it
  std::vector<LeaderboardEntry> out;
  SharedSnapshot snapshot(*this);
  const PartitionData& home_data = snapshot.data(home);
  home_data.members.prefetch(member);  // as in Set
  auto it = home_data.members.find(member);
  if (it == home_data.members.end()) return MemberNotFound(member);
  const RankKey key{it->second.score, it->second.seq, member};
  PerPartition<size_t> counts(partitions);
  snapshot.Bounds(key, /*upper=*/false, below.data(), counts.data(), home);
  uint64_t rank = 0;
  for (size_t p = 0; p < partitions; ++p) {
    rank += counts[p];
    // below[p] is the first entry not above `key`; the run towards the
    // leader starts just before it.
    above[p] =
        below[p].valid() ? below[p].prev() : snapshot.data(p).tree.Last();
  }
  // In the member's own partition that first entry is the member.
  below[home] = below[home].next();
  out.reserve(std::min<uint64_t>(before, rank) + 1 + after);
  size_t entries_read = 0;
  Merge(above.span(), /*best_first=*/false, before, /*probe=*/false,
        &entries_read, [&out, rank](const RankKey& at) {
          out.push_back(EntryOf(at, rank - 1 - out.size()));
        });
  std::reverse(out.begin(), out.end());
  out.push_back(EntryOf(key, rank));
  uint64_t next_rank = rank + 1;
  Merge(below.span(), /*best_first=*/true, after, /*probe=*/false,
        &entries_read, [&out, &next_rank](const RankKey& at) {
          out.push_back(EntryOf(at, next_rank++));
        });
  return out;
}

absl::StatusOr<LeaderboardPage> LeaderboardImpl::ReadPage(
    const LeaderboardReadOptions& options) const {
  absl::StatusOr<std::optional<RankKey>> start =
      ValidateReadPage(options, board_id_, options_.max_page_size);
  if (!start.ok()) return start.status();
  const std::optional<RankKey> after = *start;
  const bool best_first = options.order == LeaderboardOrder::kBestFirst;

  LeaderboardPage page;
  PerPartition<Position> runs(options_.partitions);
  {
    SharedSnapshot snapshot(*this);
    // Best-first: `rank` is the rank of the next entry to return, the
    // number of entries at or above the cursor. Worst-first: it is one more
    // than that rank, the number of entries above the cursor.
    uint64_t rank = 0;
    const size_t partitions = snapshot.partitions();
    PerPartition<size_t> counts(partitions);
    if (after.has_value()) {
      // Best-first: the first entry below the cursor. Worst-first: the
      // first entry not above it, whose predecessor is where the run
      // starts.
      snapshot.Bounds(*after, /*upper=*/best_first, runs.data(), counts.data());
    }
    for (size_t p = 0; p < partitions; ++p) {
      const RankedBtree& tree = snapshot.data(p).tree;
      if (!after.has_value()) {
        runs[p] = best_first ? tree.First() : tree.Last();
        counts[p] = best_first ? 0 : tree.size();
      } else if (!best_first) {
        runs[p] = runs[p].valid() ? runs[p].prev() : tree.Last();
      }
      rank += counts[p];
    }
    page.entries.reserve(options.limit);
    size_t entries_read = 0;
    RankKey last;
    const bool more = Merge(
        runs.span(), best_first, options.limit, /*probe=*/true, &entries_read,
        [&page, &rank, &last, best_first](const RankKey& key) {
          last = key;
          page.entries.push_back(EntryOf(last, best_first ? rank++ : --rank));
        });
    if (more) {
      page.next_cursor = EncodeLeaderboardCursor(
          LeaderboardCursor{board_id_, options.order, last});
    }
  }
  return page;
}

absl::StatusOr<size_t> LeaderboardImpl::Size() const {
  SharedSnapshot snapshot(*this);
  size_t size = 0;
  for (size_t p = 0; p < snapshot.partitions(); ++p) {
    size += snapshot.data(p).tree.size();
  }
  return size;
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
  for (size_t p = 0; p < snapshot.partitions(); ++p) {
    const PartitionData& data = snapshot.data(p);
    if (!data.tree.CheckInvariants()) return false;
    if (data.members.size() != data.tree.size()) return false;
    for (Position at = data.tree.First(); at.valid(); at = at.next()) {
      const RankKey key = at.key();
      if (PartitionOf(key.member) != p) return false;
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
  return true;
}

}  // namespace feedcore::internal
