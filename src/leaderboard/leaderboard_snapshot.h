// What the parts of LeaderboardImpl share: the snapshot of every partition
// that cross-partition reads hold, the per-partition scratch arrays, the
// k-way merge of partition runs, and the errors and entries they return.
// Only src/leaderboard/ includes it.
#ifndef FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_SNAPSHOT_H_
#define FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_SNAPSHOT_H_

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "contract/score_order.h"
#include "leaderboard/leaderboard_impl.h"

namespace feedcore::internal {

inline absl::Status MemberNotFound(MemberId member) {
  return absl::NotFoundError(
      absl::StrCat("member ", member, " is not on the leaderboard"));
}

inline LeaderboardEntry LeaderboardImpl::EntryOf(const RankKey& key,
                                                 uint64_t rank) const {
  return LeaderboardEntry{
      key.member, ScoreOfRankScore(key.score, options_.score_order), rank};
}

// A value-initialized array of `n` elements of T that lives on the stack
// for up to 32 partitions, so that the per-partition scratch space of a read
// costs no allocation in the common configurations. Only the `n` elements
// are constructed: a read of a one-partition board touches one, not 32.
template <typename T>
class PerPartition {
  static_assert(std::is_trivially_destructible_v<T>,
                "the inline elements are never destroyed");

 public:
  explicit PerPartition(size_t n) : size_(n) {
    if (n > kInline) {
      heap_.resize(n);
      data_ = heap_.data();
    } else {
      std::uninitialized_value_construct_n(reinterpret_cast<T*>(inline_), n);
      data_ = std::launder(reinterpret_cast<T*>(inline_));
    }
  }
  PerPartition(const PerPartition&) = delete;
  PerPartition& operator=(const PerPartition&) = delete;

  T* data() { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  size_t size() const { return size_; }
  absl::Span<const T> span() const { return {data_, size_}; }

 private:
  static constexpr size_t kInline = 32;
  alignas(T) std::byte inline_[kInline * sizeof(T)];
  std::vector<T> heap_;
  T* data_;
  const size_t size_;
};

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

  // The members of every partition.
  size_t members() const {
    size_t total = 0;
    for (size_t p = 0; p < partitions(); ++p) total += data(p).tree.size();
    return total;
  }

  // `member`'s tree key, looked up in its partition `home`; none when it
  // is not on the board.
  std::optional<RankKey> KeyOf(MemberId member, size_t home) const {
    const PartitionData& home_data = data(home);
    home_data.members.prefetch(member);  // the slot with its control bytes
    const auto it = home_data.members.find(member);
    if (it == home_data.members.end()) return std::nullopt;
    return RankKey{it->second.score, it->second.seq, member};
  }

  // Fills LeaderboardEntry::metadata of `entries`, members of this board,
  // for a read asked with_metadata: one lookup per entry in its
  // partition's metadata map, none where a partition has no metadata.
  void FillMetadata(absl::Span<LeaderboardEntry> entries) const {
    for (LeaderboardEntry& entry : entries) {
      const auto& metadata = data(board_.PartitionOf(entry.member)).metadata;
      if (metadata.empty()) continue;
      const auto it = metadata.find(entry.member);
      if (it != metadata.end()) entry.metadata = it->second;
    }
  }

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

template <typename Emit>
inline bool LeaderboardImpl::Merge(absl::Span<const Position> runs,
                                   bool best_first, size_t want, bool probe,
                                   size_t* entries_read, Emit&& emit) {
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

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_SNAPSHOT_H_
