// The node layout of RankedBtree's inner nodes and the searches and moves
// over node arrays that every part of the tree shares: the descents of
// reads, of writes and of write hints, and the splits and merges. Only
// ranked_btree*.cc include it.
//
// Everything here is inline and sits on the hot path of every descent;
// changes are measured with bench/ before they land.
#ifndef FEEDCORE_SRC_LEADERBOARD_RANKED_BTREE_NODE_H_
#define FEEDCORE_SRC_LEADERBOARD_RANKED_BTREE_NODE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "leaderboard/ranked_btree.h"

namespace feedcore::internal {

// Separator i (1 <= i < size) bounds child i from below: every key under
// child i ranks at or below it, every key under child i - 1 above it.
// Separator 0 is a sentinel that ranks above every key, so that the child
// for a key is the last separator ranking at or above it.
//
// Children come in blocks of kBlock (a cache line of scores, of counts, of
// child pointers). The first line holds the size and each block's pivot,
// the score of its first separator (but block 0's, which is the
// sentinel), and the second each block's total count. A search
// reads those two lines, which name the block holding the child, then that
// block's line of scores, of counts and of children: five lines, where a
// binary search and a sum of the counts to the left would read a dozen.
struct alignas(64) RankedBtree::Inner {
  static constexpr uint32_t kBlock = 8;
  static constexpr uint32_t kBlocks = kInnerCapacity / kBlock;

  uint32_t size;
  int64_t pivots[kBlocks - 1];  // pivots[b - 1]: block b's
  uint64_t block_counts[kBlocks];
  int64_t scores[kInnerCapacity];
  uint64_t counts[kInnerCapacity];
  void* children[kInnerCapacity];
  uint64_t seqs[kInnerCapacity];
  uint64_t members[kInnerCapacity];

  RankKey key(uint32_t i) const { return {scores[i], seqs[i], members[i]}; }
  void Set(uint32_t i, const RankKey& k) {
    scores[i] = k.score;
    seqs[i] = k.seq;
    members[i] = k.member;
  }
  void AddCount(uint32_t child, uint64_t n) {
    counts[child] += n;
    block_counts[child / kBlock] += n;
  }
  void SubtractCount(uint32_t child, uint64_t n) {
    counts[child] -= n;
    block_counts[child / kBlock] -= n;
  }
  // Restores the sentinel, the pivots and the block counts after children
  // or separators changed.
  void Refresh() {
    scores[0] = std::numeric_limits<int64_t>::max();
    seqs[0] = 0;
    members[0] = 0;
    for (uint32_t b = 0; b * kBlock < size; ++b) {
      if (b > 0) pivots[b - 1] = scores[b * kBlock];
      uint64_t sum = 0;
      for (uint32_t i = b * kBlock; i < std::min(size, (b + 1) * kBlock); ++i) {
        sum += counts[i];
      }
      block_counts[b] = sum;
    }
  }
};

static_assert(offsetof(RankedBtree::Leaf, scores) == 64);
static_assert(sizeof(RankedBtree::Leaf) == 1664);
static_assert(offsetof(RankedBtree::Inner, block_counts) == 64);
static_assert(offsetof(RankedBtree::Inner, scores) == 128);
static_assert(sizeof(RankedBtree::Inner) == 2688);

namespace ranked_btree_node {

using Leaf = RankedBtree::Leaf;
using Inner = RankedBtree::Inner;

// Whether the entry (score, seq, member) at `i` of the arrays ranks above
// `key` (or, with kOrEqual, is equal to it). Scores decide almost always.
template <bool kOrEqual>
inline bool Before(const int64_t* scores, const uint64_t* seqs,
                   const uint64_t* members, uint32_t i, const RankKey& key) {
  bool before = scores[i] > key.score;
  if (scores[i] == key.score) [[unlikely]] {
    const RankKey k{scores[i], seqs[i], members[i]};
    before = kOrEqual ? !RanksAbove(key, k) : RanksAbove(k, key);
  }
  return before;
}

// The first i in [begin, end) for which Before<kOrEqual> is false (end if
// none): the arrays are sorted, so Before is true on a prefix. A binary
// search whose steps choose with conditional moves.
template <bool kOrEqual>
inline uint32_t FirstNotBefore(const int64_t* scores, const uint64_t* seqs,
                               const uint64_t* members, uint32_t begin,
                               uint32_t end, const RankKey& key) {
  uint32_t n = end - begin;
  if (n == 0) return begin;
  uint32_t base = begin;
  while (n > 1) {
    const uint32_t half = n / 2;
    base = Before<kOrEqual>(scores, seqs, members, base + half, key)
               ? base + half
               : base;
    n -= half;
  }
  return base + (Before<kOrEqual>(scores, seqs, members, base, key) ? 1 : 0);
}

// The block of `n` that holds the child for `key`: the last block whose
// first separator ranks at or above `key` (block 0's is the sentinel).
inline uint32_t InnerBlock(const Inner* n, const RankKey& key) {
  uint32_t block = 0;
  for (uint32_t b = 1; b * Inner::kBlock < n->size; ++b) {
    bool before = n->pivots[b - 1] > key.score;
    if (n->pivots[b - 1] == key.score) [[unlikely]] {
      before =
          Before<true>(n->scores, n->seqs, n->members, b * Inner::kBlock, key);
    }
    block += before ? 1 : 0;
  }
  return block;
}

// The child of `n` under which `key` belongs, in `block` from InnerBlock:
// the last separator there that ranks at or above `key`.
inline uint32_t ChildInBlock(const Inner* n, uint32_t block,
                             const RankKey& key) {
  const uint32_t first = block * Inner::kBlock;
  const uint32_t end = std::min(first + Inner::kBlock, n->size);
  uint32_t higher = 0;
  for (uint32_t j = first + 1; j < end; ++j) {
    higher += n->scores[j] > key.score ? 1 : 0;
  }
  uint32_t j = first + 1 + higher;
  while (j < end && n->scores[j] == key.score &&
         Before<true>(n->scores, n->seqs, n->members, j, key)) {
    ++j;
  }
  return j - 1;
}

// The child of `n` under which `key` belongs: the last one whose separator
// ranks at or above `key`.
inline uint32_t ChildFor(const Inner* n, const RankKey& key) {
  return ChildInBlock(n, InnerBlock(n, key), key);
}

// The block of `leaf` (of `size` entries) where a search for `key` starts:
// the number of blocks whose last score is higher than key.score, all of
// whose entries rank above `key`.
inline uint32_t LeafBlock(const Leaf* leaf, uint32_t size, const RankKey& key) {
  uint32_t block = 0;
  for (uint32_t b = 0; b * Leaf::kBlock < size && b + 1 < Leaf::kBlocks; ++b) {
    block += leaf->pivots[b] > key.score ? 1 : 0;
  }
  return block;
}

// The number of entries of `leaf` that rank above `key` (with kOrEqual:
// above or equal), starting at `block` from LeafBlock. The block's last
// score is at most key.score, so the answer lies in it unless entries of
// that very score run past its end.
template <bool kOrEqual>
inline uint32_t LeafBoundFrom(const Leaf* leaf, uint32_t size, uint32_t block,
                              const RankKey& key) {
  uint32_t i = block * Leaf::kBlock;
  if (i >= size) return size;
  const uint32_t end = std::min(i + Leaf::kBlock, size);
  uint32_t higher = 0;
  for (uint32_t j = i; j < end; ++j) {
    higher += leaf->scores[j] > key.score ? 1 : 0;
  }
  i += higher;
  while (i < size && leaf->scores[i] == key.score &&
         Before<kOrEqual>(leaf->scores, leaf->seqs, leaf->members, i, key)) {
    ++i;
  }
  return i;
}

// The number of entries of `leaf` (of `size` entries: the parent's count
// of it, so that the line holding the size need not be read) that rank
// above `key` (with kOrEqual: above or equal).
template <bool kOrEqual>
inline uint32_t LeafBound(const Leaf* leaf, uint32_t size, const RankKey& key) {
  return LeafBoundFrom<kOrEqual>(leaf, size, LeafBlock(leaf, size, key), key);
}

template <bool kOrEqual>
inline uint32_t LeafBound(const Leaf* leaf, const RankKey& key) {
  return LeafBound<kOrEqual>(leaf, leaf->size, key);
}

// The index of `key`, which `leaf` holds. Usually its score alone tells:
// when no other entry has it, the sequence and member lines stay unread.
inline uint32_t LeafFind(const Leaf* leaf, const RankKey& key) {
  const uint32_t size = leaf->size;
  const uint32_t block = LeafBlock(leaf, size, key);
  uint32_t i = block * Leaf::kBlock;
  while (leaf->scores[i] > key.score) ++i;  // stops at `key` at the latest
  if (i + 1 < size && leaf->scores[i + 1] == key.score) {
    return LeafBoundFrom<false>(leaf, size, block, key);
  }
  return i;
}

// The entries under the children of `n` left of `child`: whole blocks,
// then the children of its own block before it.
inline uint64_t CountLeftOf(const Inner* n, uint32_t child) {
  const uint32_t block = child / Inner::kBlock;
  uint64_t sum = 0;
  for (uint32_t b = 0; b < block; ++b) sum += n->block_counts[b];
  for (uint32_t i = block * Inner::kBlock; i < child; ++i) sum += n->counts[i];
  return sum;
}

inline uint64_t SumCounts(const Inner* n) {
  uint64_t sum = 0;
  for (uint32_t i = 0; i < n->size; ++i) sum += n->counts[i];
  return sum;
}

inline void PrefetchBytes(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off);
}

// Moves `count` entries of a leaf's arrays from index `from` to `to`
// (ranges may overlap).
inline void MoveEntries(Leaf* dst, uint32_t to, const Leaf* src, uint32_t from,
                        uint32_t count) {
  std::memmove(dst->scores + to, src->scores + from, count * sizeof(int64_t));
  std::memmove(dst->seqs + to, src->seqs + from, count * sizeof(uint64_t));
  std::memmove(dst->members + to, src->members + from,
               count * sizeof(uint64_t));
}

// Moves `count` children (with their counts and separators) of inner nodes
// from index `from` to `to` (ranges may overlap). The separator of index 0
// is moved too; callers overwrite what must change.
inline void MoveChildren(Inner* dst, uint32_t to, const Inner* src,
                         uint32_t from, uint32_t count) {
  std::memmove(dst->scores + to, src->scores + from, count * sizeof(int64_t));
  std::memmove(dst->seqs + to, src->seqs + from, count * sizeof(uint64_t));
  std::memmove(dst->members + to, src->members + from,
               count * sizeof(uint64_t));
  std::memmove(dst->counts + to, src->counts + from, count * sizeof(uint64_t));
  std::memmove(dst->children + to, src->children + from, count * sizeof(void*));
}

inline void RemoveChild(Inner* n, uint32_t index) {
  MoveChildren(n, index, n, index + 1, n->size - index - 1);
  --n->size;
}

}  // namespace ranked_btree_node
}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_LEADERBOARD_RANKED_BTREE_NODE_H_
