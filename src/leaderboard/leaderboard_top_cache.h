// BoardTopCache: a copy of a leaderboard's best entries that TopK reads
// without taking any partition lock.
//
// Why. A TopK that takes every partition's lock and merges their trees
// spends its time on 2 x partitions lock operations and on a heap merge
// whose every step is an unpredictable branch: about 16 ns per entry
// returned, where walking one std::set under one mutex takes 5. The top
// of a board changes far less often than it is read (a write changes it
// only when it moves a member into, out of or within a partition's best
// kEntries), so the merged answer is kept and reused until it changes.
//
// Validity. Every partition has a top version, a counter that a write
// increments, under that partition's lock held exclusively, when it
// changes one of the partition's best kEntries entries. Versions only
// grow, so their sum is unchanged exactly when no partition's best
// entries changed. The cache holds the board's best entries, as many as
// the read that merged them asked for (at most kEntries; marked when they
// are the whole board), with their ranks in the board's style, and the
// sum of the versions read under the snapshot they were merged in. A read
// of no more entries that finds the current sum equal to the cached one
// returns the cached entries: each partition's best entries were then the same
// from the instant the cache was merged until the read's first version load,
// the board's best kEntries depend on nothing else, so the answer is the
// board's top at that load, an instant within the call, exactly as a read
// under the snapshot would give it.
//
// Publication. A sequence lock: the sequence is odd while a publisher
// writes. Entries are atomics, read and written relaxed, so that a copy
// racing a publisher is no data race; a reader that sees the sequence odd
// or changed gives up and reads under the snapshot. Publishers do not wait
// for each other: one that finds the sequence odd, or loses the race to
// make it odd, leaves the cache as it is. A publisher whose sum is older
// than the cache's only makes the next read miss.
//
// Thread safety: every method may be called from any thread.
#ifndef FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_TOP_CACHE_H_
#define FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_TOP_CACHE_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "feedcore/leaderboard.h"

namespace feedcore::internal {

class BoardTopCache {
 public:
  // Entries kept; TopK(k) with k up to this reads the cache.
  static constexpr size_t kEntries = 128;

  // Replaces `*out` (empty on entry) with the board's best min(k, members)
  // entries and returns true if the cache holds them: it holds k entries,
  // or the whole board, and its sum equals `current_version_sum()`, which
  // loads the partitions' versions (acquire) and adds them. False, leaving
  // `*out` empty, otherwise.
  template <typename VersionSum>
  bool TryRead(size_t k, VersionSum&& current_version_sum,
               std::vector<LeaderboardEntry>* out) const {
    if (k > kEntries) return false;
    const uint64_t begin = sequence_.load(std::memory_order_acquire);
    if ((begin & 1) != 0) return false;
    const size_t held = size_.load(std::memory_order_relaxed);
    if (held < k && !whole_board_.load(std::memory_order_relaxed)) {
      return false;
    }
    if (version_sum_.load(std::memory_order_relaxed) != current_version_sum()) {
      return false;
    }
    const size_t n = std::min(k, held);
    // Filled in place: moving an entry in would copy its (empty) string.
    out->resize(n);
    for (size_t i = 0; i < n; ++i) {
      const Slot& slot = slots_[i];
      LeaderboardEntry& entry = (*out)[i];
      entry.member = slot.member.load(std::memory_order_relaxed);
      entry.score = slot.score.load(std::memory_order_relaxed);
      entry.rank = slot.rank.load(std::memory_order_relaxed);
    }
    // Orders the copies before the second look at the sequence: if any
    // copy saw a publisher's store, that look sees its odd sequence.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (sequence_.load(std::memory_order_relaxed) != begin) {
      out->clear();
      return false;
    }
    return true;
  }

  // Keeps `entries`, the board's best entries in order with their styled
  // ranks (all of its members when `whole_board`), merged under the
  // snapshot in which the partitions' versions summed to `version_sum`;
  // entries past kEntries are not kept. Does nothing while another
  // publisher writes.
  void Publish(uint64_t version_sum, absl::Span<const LeaderboardEntry> entries,
               bool whole_board) {
    uint64_t sequence = sequence_.load(std::memory_order_relaxed);
    if ((sequence & 1) != 0 ||
        !sequence_.compare_exchange_strong(sequence, sequence + 1,
                                           std::memory_order_relaxed)) {
      return;
    }
    // Orders the odd sequence before the entries' stores (see TryRead).
    std::atomic_thread_fence(std::memory_order_release);
    const size_t n = std::min(entries.size(), kEntries);
    for (size_t i = 0; i < n; ++i) {
      Slot& slot = slots_[i];
      slot.member.store(entries[i].member, std::memory_order_relaxed);
      slot.score.store(entries[i].score, std::memory_order_relaxed);
      slot.rank.store(entries[i].rank, std::memory_order_relaxed);
    }
    size_.store(n, std::memory_order_relaxed);
    whole_board_.store(whole_board && n == entries.size(),
                       std::memory_order_relaxed);
    version_sum_.store(version_sum, std::memory_order_relaxed);
    sequence_.store(sequence + 2, std::memory_order_release);
  }

 private:
  struct Slot {
    std::atomic<uint64_t> member{0};
    std::atomic<int64_t> score{0};
    std::atomic<uint64_t> rank{0};
  };

  alignas(64) std::atomic<uint64_t> sequence_{0};
  // No sum of versions is ever all ones, so nothing matches before the
  // first publication.
  std::atomic<uint64_t> version_sum_{~uint64_t{0}};
  std::atomic<size_t> size_{0};
  std::atomic<bool> whole_board_{false};
  std::array<Slot, kEntries> slots_{};
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_TOP_CACHE_H_
