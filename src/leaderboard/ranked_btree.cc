#include "leaderboard/ranked_btree.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

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

namespace {

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

uint64_t SumCounts(const Inner* n) {
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

void RemoveChild(Inner* n, uint32_t index) {
  MoveChildren(n, index, n, index + 1, n->size - index - 1);
  --n->size;
}

}  // namespace

RankedBtree::Leaf* RankedBtree::NewLeaf() {
  // Default-initialized: the arrays stay unwritten.
  Leaf* leaf =
      leaf_pool_ != nullptr ? new (leaf_pool_->Allocate()) Leaf : new Leaf;
  leaf->prev = nullptr;
  leaf->next = nullptr;
  leaf->size = 0;
  return leaf;
}

RankedBtree::Inner* RankedBtree::NewInner() {
  Inner* inner = new Inner;
  inner->size = 0;
  return inner;
}

void RankedBtree::DeleteLeaf(Leaf* leaf) const {
  if (leaf_pool_ != nullptr) {
    static_assert(std::is_trivially_destructible_v<Leaf>);
    leaf_pool_->Free(leaf);
  } else {
    delete leaf;
  }
}

void RankedBtree::FreeLeaf(Leaf* leaf) {
  DeleteLeaf(leaf);
  ++nodes_freed_;
}

void RankedBtree::FreeInner(Inner* inner) {
  delete inner;
  ++nodes_freed_;
}

RankedBtree::~RankedBtree() {
  if (root_ != nullptr) FreeSubtree(root_, inner_levels_);
}

void RankedBtree::FreeSubtree(void* node, int level) {
  if (level == 0) {
    FreeLeaf(static_cast<Leaf*>(node));
    return;
  }
  Inner* n = static_cast<Inner*>(node);
  for (uint32_t i = 0; i < n->size; ++i) FreeSubtree(n->children[i], level - 1);
  FreeInner(n);
}

size_t RankedBtree::bytes_used() const {
  return leaves_ * sizeof(Leaf) + inners_ * sizeof(Inner);
}

RankedBtree::Leaf* RankedBtree::DescendForWrite(const RankKey& key, Path& path,
                                                Separator* low, Separator* high,
                                                bool hinted) const {
  void* node = root_;
  for (int level = 0; level < inner_levels_; ++level) {
    Inner* n = static_cast<Inner*>(node);
    const uint32_t c = ChildFor(n, key);
    path[level] = {n, c};
    // A deeper separator is always the tighter bound.
    if (low != nullptr && c > 0) *low = {n, c};
    if (high != nullptr && c + 1 < n->size) *high = {n, c + 1};
    node = n->children[c];
    if (level + 1 < inner_levels_ && !hinted) {
      // The child's first lines, its separator scores and its children
      // at once, rather than first lines, then the lines they point to.
      const Inner* child = static_cast<const Inner*>(node);
      __builtin_prefetch(child);
      PrefetchBytes(child->scores, sizeof(Inner::scores));
      PrefetchBytes(child->children, sizeof(Inner::children));
    }
  }
  // The size, the pivots and every score at once: one wait, not two.
  if (!hinted) PrefetchBytes(node, offsetof(Leaf, seqs));
  return static_cast<Leaf*>(node);
}

void RankedBtree::StartWriteHint(const RankKey& key, int64_t new_score,
                                 WriteHint& hint) const {
  hint = WriteHint();
  if (root_ == nullptr) return;
  hint.key_ = key;
  hint.new_score_ = new_score;
  hint.node_ = root_;
  hint.nodes_freed_ = nodes_freed_;
  hint.shape_changes_ = shape_changes_;
  hint.levels_left_ = inner_levels_;
  __builtin_prefetch(root_);  // the size and the pivots
}

void RankedBtree::AdvanceWriteHint(WriteHint& hint) const {
  if (hint.done()) return;
  if (hint.nodes_freed_ != nodes_freed_) {
    hint.levels_left_ = -1;
    return;
  }
  const RankKey& key = hint.key_;
  if (hint.levels_left_ > 0) {
    const Inner* node = static_cast<const Inner*>(hint.node_);
    if (!hint.picked_) {
      // The pivots name the block; its lines are read next phase.
      hint.block_ = InnerBlock(node, key);
      hint.picked_ = true;
      __builtin_prefetch(&node->scores[hint.block_ * Inner::kBlock]);
      __builtin_prefetch(&node->children[hint.block_ * Inner::kBlock]);
      return;
    }
    if (hint.block_ * Inner::kBlock >= node->size) {
      hint.levels_left_ = -1;  // the node split since: the block moved
      return;
    }
    const uint32_t c = ChildInBlock(node, hint.block_, key);
    // As DescendForWrite: a deeper separator is always the tighter bound.
    if (c > 0) hint.low_ = {node, c};
    if (c + 1 < node->size) hint.high_ = {node, c + 1};
    hint.node_ = node->children[c];
    hint.picked_ = false;
    --hint.levels_left_;
    __builtin_prefetch(hint.node_);  // the size and the pivots
    return;
  }
  // The blocks from the old key's to the new score's: an entry moving
  // within the leaf shifts the entries between. Past the leaf's ends, the
  // update becomes an insert elsewhere and an erase here.
  const Leaf* leaf = static_cast<const Leaf*>(hint.node_);
  const uint32_t size = leaf->size;
  const uint32_t from = LeafBlock(leaf, size, key);
  const uint32_t to = LeafBlock(leaf, size, {hint.new_score_, 0, 0});
  for (uint32_t b = std::min(from, to); b <= std::max(from, to); ++b) {
    __builtin_prefetch(&leaf->scores[b * Leaf::kBlock]);
    __builtin_prefetch(&leaf->seqs[b * Leaf::kBlock]);
    __builtin_prefetch(&leaf->members[b * Leaf::kBlock]);
  }
  hint.levels_left_ = -1;
  hint.fetched_ = true;
}

void RankedBtree::Insert(const RankKey& key, bool hinted) {
  if (root_ == nullptr) {
    Leaf* leaf = NewLeaf();
    ++shape_changes_;
    leaf->Set(0, key);
    leaf->size = 1;
    leaf->UpdatePivots();
    root_ = first_ = last_ = leaf;
    size_ = 1;
    leaves_ = 1;
    inner_levels_ = 0;
    return;
  }
  Path path;
  Leaf* leaf = DescendForWrite(key, path, nullptr, nullptr, hinted);
  const uint32_t pos = LeafBound<false>(leaf, key);
  if (leaf->size < kLeafCapacity) {
    MoveEntries(leaf, pos + 1, leaf, pos, leaf->size - pos);
    leaf->Set(pos, key);
    ++leaf->size;
    leaf->UpdatePivots(pos);
    for (int l = 0; l < inner_levels_; ++l) {
      path[l].node->AddCount(path[l].child, 1);
    }
    ++size_;
    return;
  }

  // A full leaf first hands entries to a sibling with room, which keeps
  // leaves fuller than splitting alone (about 80% instead of 65% under
  // random inserts) and allocates nothing.
  if (inner_levels_ > 0 && ShiftToSibling(leaf, pos, key, path)) {
    ++shape_changes_;
    return;
  }

  // The leaf splits, and so does every full inner node above it. Allocate
  // every node that can take before changing anything.
  int full = 0;
  while (full < inner_levels_ &&
         path[inner_levels_ - 1 - full].node->size == kInnerCapacity) {
    ++full;
  }
  const int inners_needed = full + (full == inner_levels_ ? 1 : 0);
  struct Reserved {
    const RankedBtree* tree;
    Leaf* leaf = nullptr;
    std::array<Inner*, kMaxInnerLevels + 1> inners{};
    int count = 0;
    int used = 0;
    // Never linked into the tree, so not counted as freed nodes.
    ~Reserved() {
      if (leaf != nullptr) tree->DeleteLeaf(leaf);
      for (int i = used; i < count; ++i) delete inners[i];
    }
    Inner* Take() { return inners[used++]; }
  } reserved{this};
  reserved.leaf = NewLeaf();
  for (int i = 0; i < inners_needed; ++i) {
    reserved.inners[i] = NewInner();
    ++reserved.count;
  }
  ++shape_changes_;

  for (int l = 0; l < inner_levels_; ++l) {
    path[l].node->AddCount(path[l].child, 1);
  }
  ++size_;

  // Split the leaf. Appending at the very end (a sorted load) leaves it
  // full and starts the new leaf with the key alone.
  const bool append = pos == kLeafCapacity && leaf->next == nullptr;
  const uint32_t keep = append ? kLeafCapacity : kLeafCapacity / 2;
  Leaf* right = reserved.leaf;
  reserved.leaf = nullptr;
  ++leaves_;
  MoveEntries(right, 0, leaf, keep, kLeafCapacity - keep);
  right->size = kLeafCapacity - keep;
  leaf->size = keep;
  Leaf* target =
      pos < keep || (pos == keep && keep < kLeafCapacity) ? leaf : right;
  const uint32_t at = target == leaf ? pos : pos - keep;
  MoveEntries(target, at + 1, target, at, target->size - at);
  target->Set(at, key);
  ++target->size;
  leaf->UpdatePivots();
  right->UpdatePivots();
  right->prev = leaf;
  right->next = leaf->next;
  if (leaf->next != nullptr) {
    leaf->next->prev = right;
  } else {
    last_ = right;
  }
  leaf->next = right;

  // Hand the new node to the parent, splitting upwards as needed.
  void* left_node = leaf;
  void* right_node = right;
  RankKey separator = right->key(0);
  uint64_t left_count = leaf->size;
  uint64_t right_count = right->size;
  for (int level = inner_levels_ - 1;; --level) {
    if (level < 0) {
      Inner* root = reserved.Take();
      ++inners_;
      root->size = 2;
      root->children[0] = left_node;
      root->children[1] = right_node;
      root->counts[0] = left_count;
      root->counts[1] = right_count;
      root->Set(1, separator);
      root->Refresh();
      root_ = root;
      ++inner_levels_;
      return;
    }
    Inner* n = path[level].node;
    const uint32_t c = path[level].child;  // left_node is child c
    if (n->size < kInnerCapacity) {
      MoveChildren(n, c + 2, n, c + 1, n->size - c - 1);
      n->children[c + 1] = right_node;
      n->counts[c + 1] = right_count;
      n->counts[c] = left_count;
      n->Set(c + 1, separator);
      ++n->size;
      n->Refresh();
      return;
    }
    // Split n: lay its children out with the new one in place, then give
    // the first `m` to n and the rest to a new right node.
    Inner* r = reserved.Take();
    ++inners_;
    constexpr uint32_t kAll = kInnerCapacity + 1;
    struct {
      int64_t scores[kAll];
      uint64_t seqs[kAll];
      uint64_t members[kAll];
      uint64_t counts[kAll];
      void* children[kAll];
    } all;
    for (uint32_t i = 0, j = 0; i < kAll; ++i) {
      if (i == c + 1) {
        all.scores[i] = separator.score;
        all.seqs[i] = separator.seq;
        all.members[i] = separator.member;
        all.counts[i] = right_count;
        all.children[i] = right_node;
        continue;
      }
      all.scores[i] = n->scores[j];
      all.seqs[i] = n->seqs[j];
      all.members[i] = n->members[j];
      all.counts[i] = i == c ? left_count : n->counts[j];
      all.children[i] = n->children[j];
      ++j;
    }
    // Appending at the right edge leaves n full but for one child.
    const uint32_t m =
        append && c + 1 == kInnerCapacity ? kInnerCapacity - 1 : kAll / 2;
    const auto copy = [&all](Inner* dst, uint32_t from, uint32_t count) {
      std::memcpy(dst->scores, all.scores + from, count * sizeof(int64_t));
      std::memcpy(dst->seqs, all.seqs + from, count * sizeof(uint64_t));
      std::memcpy(dst->members, all.members + from, count * sizeof(uint64_t));
      std::memcpy(dst->counts, all.counts + from, count * sizeof(uint64_t));
      std::memcpy(dst->children, all.children + from, count * sizeof(void*));
      dst->size = count;
    };
    copy(n, 0, m);
    copy(r, m, kAll - m);
    n->Refresh();
    r->Refresh();
    left_node = n;
    right_node = r;
    separator = {all.scores[m], all.seqs[m], all.members[m]};
    left_count = SumCounts(n);
    right_count = SumCounts(r);
  }
}

bool RankedBtree::ShiftToSibling(Leaf* leaf, uint32_t pos, const RankKey& key,
                                 Path& path) {
  const int level = inner_levels_ - 1;
  Inner* parent = path[level].node;
  const uint32_t c = path[level].child;
  // Worth it only if the sibling has a real share of room to give.
  constexpr uint32_t kMinRoom = kLeafCapacity / 8;
  Leaf* right = c + 1 < parent->size
                    ? static_cast<Leaf*>(parent->children[c + 1])
                    : nullptr;
  Leaf* left = c > 0 ? static_cast<Leaf*>(parent->children[c - 1]) : nullptr;
  if (right != nullptr && kLeafCapacity - right->size >= kMinRoom) {
    // The last k entries move to the front of the right sibling.
    const uint32_t k = (kLeafCapacity - right->size + 1) / 2;
    MoveEntries(right, k, right, 0, right->size);
    MoveEntries(right, 0, leaf, leaf->size - k, k);
    leaf->size -= k;
    right->size += k;
    if (pos <= leaf->size) {
      MoveEntries(leaf, pos + 1, leaf, pos, leaf->size - pos);
      leaf->Set(pos, key);
      ++leaf->size;
    } else {
      const uint32_t at = pos - leaf->size;
      MoveEntries(right, at + 1, right, at, right->size - at);
      right->Set(at, key);
      ++right->size;
    }
    parent->counts[c] = leaf->size;
    parent->counts[c + 1] = right->size;
    parent->Set(c + 1, right->key(0));
  } else if (left != nullptr && kLeafCapacity - left->size >= kMinRoom) {
    // The first k entries move to the end of the left sibling.
    const uint32_t k = (kLeafCapacity - left->size + 1) / 2;
    MoveEntries(left, left->size, leaf, 0, k);
    MoveEntries(leaf, 0, leaf, k, leaf->size - k);
    left->size += k;
    leaf->size -= k;
    if (pos >= k) {
      const uint32_t at = pos - k;
      MoveEntries(leaf, at + 1, leaf, at, leaf->size - at);
      leaf->Set(at, key);
      ++leaf->size;
    } else {
      // It ranks above the moved entry that now follows the left
      // sibling's old ones, so it lands among them.
      const uint32_t at = left->size - k + pos;
      MoveEntries(left, at + 1, left, at, left->size - at);
      left->Set(at, key);
      ++left->size;
    }
    parent->counts[c - 1] = left->size;
    parent->counts[c] = leaf->size;
    parent->Set(c, leaf->key(0));
  } else {
    return false;
  }
  leaf->UpdatePivots();
  if (right != nullptr) right->UpdatePivots();
  if (left != nullptr) left->UpdatePivots();
  parent->Refresh();
  for (int l = 0; l < level; ++l) path[l].node->AddCount(path[l].child, 1);
  ++size_;
  return true;
}

void RankedBtree::Erase(const RankKey& key) {
  Path path;
  Leaf* leaf = DescendForWrite(key, path, nullptr, nullptr);
  const uint32_t index = LeafFind(leaf, key);
  assert(index < leaf->size && leaf->key(index) == key);
  EraseAt(leaf, index, path);
}

void RankedBtree::EraseAt(Leaf* leaf, uint32_t index, Path& path) {
  for (int l = 0; l < inner_levels_; ++l) {
    path[l].node->SubtractCount(path[l].child, 1);
  }
  MoveEntries(leaf, index, leaf, index + 1, leaf->size - index - 1);
  --leaf->size;
  leaf->UpdatePivots(index > 0 ? index - 1 : 0);
  --size_;
  RebalanceLeaf(leaf, path);
}

void RankedBtree::RebalanceLeaf(Leaf* leaf, Path& path) {
  if (inner_levels_ == 0) {
    if (leaf->size == 0) {
      FreeLeaf(leaf);
      --leaves_;
      root_ = first_ = last_ = nullptr;
      ++shape_changes_;
    }
    return;
  }
  if (leaf->size >= kLeafCapacity / 4) return;
  ++shape_changes_;  // a merge, or entries moved from a sibling
  const int level = inner_levels_ - 1;
  Inner* parent = path[level].node;
  const uint32_t c = path[level].child;
  const uint32_t li = c + 1 < parent->size ? c : c - 1;
  const uint32_t ri = li + 1;
  Leaf* l = static_cast<Leaf*>(parent->children[li]);
  Leaf* r = static_cast<Leaf*>(parent->children[ri]);
  if (l->size + r->size <= kLeafCapacity * 3 / 4) {
    MoveEntries(l, l->size, r, 0, r->size);
    l->size += r->size;
    l->UpdatePivots();
    l->next = r->next;
    if (r->next != nullptr) {
      r->next->prev = l;
    } else {
      last_ = l;
    }
    FreeLeaf(r);
    --leaves_;
    parent->counts[li] = l->size;
    RemoveChild(parent, ri);
    parent->Refresh();
    RebalanceInner(level, path);
    return;
  }
  // Even them out; each ends with more than a quarter.
  const uint32_t half = (l->size + r->size) / 2;
  if (l->size < half) {
    const uint32_t k = half - l->size;
    MoveEntries(l, l->size, r, 0, k);
    MoveEntries(r, 0, r, k, r->size - k);
    l->size += k;
    r->size -= k;
  } else {
    const uint32_t k = l->size - half;
    MoveEntries(r, k, r, 0, r->size);
    MoveEntries(r, 0, l, l->size - k, k);
    l->size -= k;
    r->size += k;
  }
  l->UpdatePivots();
  r->UpdatePivots();
  parent->counts[li] = l->size;
  parent->counts[ri] = r->size;
  parent->Set(ri, r->key(0));
  parent->Refresh();
}

void RankedBtree::RebalanceInner(int level, Path& path) {
  if (level == 0) {
    ShrinkRoot();
    return;
  }
  Inner* n = path[level].node;
  if (n->size >= kInnerCapacity / 4) return;
  ++shape_changes_;
  Inner* parent = path[level - 1].node;
  const uint32_t c = path[level - 1].child;
  const uint32_t li = c + 1 < parent->size ? c : c - 1;
  const uint32_t ri = li + 1;
  Inner* l = static_cast<Inner*>(parent->children[li]);
  Inner* r = static_cast<Inner*>(parent->children[ri]);
  const RankKey between = parent->key(ri);
  if (l->size + r->size <= kInnerCapacity * 3 / 4) {
    // r's first child takes the separator that stood between them.
    const uint32_t base = l->size;
    MoveChildren(l, base, r, 0, r->size);
    l->Set(base, between);
    l->size += r->size;
    l->Refresh();
    FreeInner(r);
    --inners_;
    parent->counts[li] += parent->counts[ri];
    RemoveChild(parent, ri);
    parent->Refresh();
    RebalanceInner(level - 1, path);
    return;
  }
  const uint32_t half = (l->size + r->size) / 2;
  uint64_t moved = 0;
  if (l->size < half) {
    // r's first k children go to the end of l.
    const uint32_t k = half - l->size;
    const uint32_t base = l->size;
    MoveChildren(l, base, r, 0, k);
    l->Set(base, between);
    for (uint32_t i = 0; i < k; ++i) moved += r->counts[i];
    const RankKey up = r->key(k);
    MoveChildren(r, 0, r, k, r->size - k);
    l->size += k;
    r->size -= k;
    parent->Set(ri, up);
    parent->counts[li] += moved;
    parent->counts[ri] -= moved;
    l->Refresh();
    r->Refresh();
    parent->Refresh();
  } else {
    // l's last k children go to the front of r.
    const uint32_t k = l->size - half;
    const uint32_t from = l->size - k;
    MoveChildren(r, k, r, 0, r->size);
    r->Set(k, between);
    MoveChildren(r, 0, l, from, k);
    for (uint32_t i = 0; i < k; ++i) moved += r->counts[i];
    const RankKey up = l->key(from);
    l->size -= k;
    r->size += k;
    parent->Set(ri, up);
    parent->counts[li] -= moved;
    parent->counts[ri] += moved;
    l->Refresh();
    r->Refresh();
    parent->Refresh();
  }
}

void RankedBtree::ShrinkRoot() {
  while (inner_levels_ > 0 && static_cast<Inner*>(root_)->size == 1) {
    Inner* old = static_cast<Inner*>(root_);
    root_ = old->children[0];
    FreeInner(old);
    --inners_;
    --inner_levels_;
    ++shape_changes_;
  }
}

void RankedBtree::Update(const RankKey& old_key, const RankKey& new_key,
                         const WriteHint* hint) {
  assert(old_key.member == new_key.member);
  if (old_key == new_key) return;
  const bool hinted = hint != nullptr && hint->fetched();
  Separator low, high;
  Leaf* leaf = nullptr;
  if (hinted && hint->key_ == old_key &&
      hint->shape_changes_ == shape_changes_) {
    // Nothing moved between leaves since the hint's descent.
    leaf = static_cast<Leaf*>(const_cast<void*>(hint->node_));
    low = hint->low_;
    high = hint->high_;
  } else {
    Path path;
    leaf = DescendForWrite(old_key, path, &low, &high, hinted);
  }
  // The sequences, which an update rewrites: their lines are on their way
  // by the time it writes them.
  if (!hinted) PrefetchBytes(leaf->seqs, sizeof(Leaf::seqs));
  const uint32_t i = LeafFind(leaf, old_key);
  assert(i < leaf->size && leaf->key(i) == old_key);
  // Whether `new_key` ranks above separator `s`; scores decide almost
  // always, without reading the separator's other lines.
  const auto above = [&new_key](const Separator& s) {
    const int64_t score = s.node->scores[s.index];
    if (score != new_key.score) return new_key.score > score;
    return RanksAbove(new_key, s.node->key(s.index));
  };
  // The leaf holds the keys from `low` (included) to `high` (excluded).
  const bool stays = (low.node == nullptr || !above(low)) &&
                     (high.node == nullptr || above(high));
  if (stays) {
    // Its place among the leaf's entries, itself included at i.
    uint32_t j = LeafBound<false>(leaf, new_key);
    if (j > i) {
      --j;
      MoveEntries(leaf, i, leaf, i + 1, j - i);
    } else if (j < i) {
      MoveEntries(leaf, j + 1, leaf, j, i - j);
    }
    leaf->scores[j] = new_key.score;
    leaf->seqs[j] = new_key.seq;
    if (j != i) leaf->members[j] = new_key.member;
    leaf->UpdatePivots(std::min(i, j), std::max(i, j));
    return;
  }
  // Insert first: it is the step that may fail, and then nothing changed.
  Insert(new_key);
  Erase(old_key);
}

RankedBtree::Position RankedBtree::Bound(const RankKey& key, bool upper,
                                         size_t* index) const {
  if (root_ == nullptr) {
    if (index != nullptr) *index = 0;
    return Position();
  }
  const void* node = root_;
  uint64_t total = size_;
  size_t position = 0;
  for (int level = 0; level < inner_levels_; ++level) {
    const Inner* n = static_cast<const Inner*>(node);
    const uint32_t c = ChildFor(n, key);
    position += CountLeftOf(n, c);
    total = n->counts[c];
    node = n->children[c];
  }
  const Leaf* leaf = static_cast<const Leaf*>(node);
  const uint32_t size = static_cast<uint32_t>(total);
  const uint32_t i = upper ? LeafBound<true>(leaf, size, key)
                           : LeafBound<false>(leaf, size, key);
  if (index != nullptr) *index = position + i;
  if (i < size) return Position(leaf, i);
  return leaf->next != nullptr ? Position(leaf->next, 0) : Position();
}

size_t RankedBtree::CountAbove(const RankKey& key) const {
  size_t index = 0;
  Bound(key, /*upper=*/false, &index);
  return index;
}

RankedBtree::Position RankedBtree::LowerBound(const RankKey& key,
                                              size_t* index) const {
  return Bound(key, /*upper=*/false, index);
}

RankedBtree::Position RankedBtree::UpperBound(const RankKey& key,
                                              size_t* index) const {
  return Bound(key, /*upper=*/true, index);
}

void RankedBtree::BoundMany(const RankedBtree* const* trees, size_t count,
                            const RankKey& key, bool upper, Position* positions,
                            size_t* indexes, size_t holder) {
  // One lane per tree, advanced a phase per round, each phase prefetching
  // what the lane's next phase reads, so that a lane's cache misses overlap
  // with every other lane's work instead of adding up. At an inner node:
  // search the separator scores, then (next round) add up the counts and
  // follow the child. At the leaf: search its scores.
  struct Lane {
    const void* node;
    uint64_t total;   // entries under `node`
    int levels_left;  // inner levels below `node`'s; -1 when done
    uint32_t block;   // the block of `node` its pivots chose, once `picked`
    bool picked;
  };
  constexpr size_t kGroup = 32;
  for (size_t base = 0; base < count; base += kGroup) {
    const size_t n = std::min(kGroup, count - base);
    std::array<Lane, kGroup> lanes;
    size_t active = 0;
    for (size_t t = 0; t < n; ++t) {
      const RankedBtree* tree = trees[base + t];
      indexes[base + t] = 0;
      if (positions != nullptr) positions[base + t] = Position();
      if (tree->root_ == nullptr) {
        lanes[t] = {nullptr, 0, -1, 0, false};
        continue;
      }
      lanes[t] = {tree->root_, tree->size_, tree->inner_levels_, 0, false};
      ++active;
    }
    while (active > 0) {
      for (size_t t = 0; t < n; ++t) {
        Lane& lane = lanes[t];
        if (lane.levels_left < 0) continue;
        if (lane.levels_left > 0) {
          const Inner* node = static_cast<const Inner*>(lane.node);
          if (!lane.picked) {
            // The pivots name the block; its lines are read next round.
            const uint32_t block = InnerBlock(node, key);
            lane.block = block;
            lane.picked = true;
            __builtin_prefetch(&node->scores[block * Inner::kBlock]);
            __builtin_prefetch(&node->counts[block * Inner::kBlock]);
            __builtin_prefetch(&node->children[block * Inner::kBlock]);
            continue;
          }
          const uint32_t c = ChildInBlock(node, lane.block, key);
          indexes[base + t] += CountLeftOf(node, c);
          lane.total = node->counts[c];
          lane.node = node->children[c];
          lane.picked = false;
          --lane.levels_left;
          // What the next round reads: a leaf's pivots, or an inner
          // node's pivots and block counts.
          if (lane.levels_left == 0) {
            __builtin_prefetch(lane.node);  // size and pivots
          } else {
            PrefetchBytes(lane.node, 2 * 64);
          }
          continue;
        }
        const Leaf* leaf = static_cast<const Leaf*>(lane.node);
        const uint32_t size = static_cast<uint32_t>(lane.total);
        if (!lane.picked) {
          // The pivots name the block; its scores are read next round.
          lane.block = LeafBlock(leaf, size, key);
          lane.picked = true;
          if (lane.block * Leaf::kBlock < size) {
            __builtin_prefetch(&leaf->scores[lane.block * Leaf::kBlock]);
            // The tree that holds `key` itself compares sequences there.
            if (base + t == holder) {
              __builtin_prefetch(&leaf->seqs[lane.block * Leaf::kBlock]);
            }
          }
          continue;
        }
        const uint32_t i =
            upper ? LeafBoundFrom<true>(leaf, size, lane.block, key)
                  : LeafBoundFrom<false>(leaf, size, lane.block, key);
        indexes[base + t] += i;
        lane.picked = false;
        if (positions != nullptr) {
          positions[base + t] =
              i < size ? Position(leaf, i)
                       : (leaf->next != nullptr ? Position(leaf->next, 0)
                                                : Position());
        }
        lane.levels_left = -1;
        --active;
      }
    }
  }
}

bool RankedBtree::CheckNode(const void* node, int level, const RankKey* low,
                            const RankKey* high, size_t* count,
                            const Leaf** prev_leaf, int* leaf_depth,
                            int depth) const {
  // Every key under this node lies in [low, high).
  const auto in_range = [low, high](const RankKey& k) {
    return (low == nullptr || !RanksAbove(k, *low)) &&
           (high == nullptr || RanksAbove(k, *high));
  };
  if (level == 0) {
    const Leaf* leaf = static_cast<const Leaf*>(node);
    if (leaf->size == 0 || leaf->size > kLeafCapacity) return false;
    for (uint32_t i = 0; i < leaf->size; ++i) {
      if (!in_range(leaf->key(i))) return false;
      if (i > 0 && !RanksAbove(leaf->key(i - 1), leaf->key(i))) return false;
    }
    for (uint32_t b = 0; b * Leaf::kBlock < leaf->size && b + 1 < Leaf::kBlocks;
         ++b) {
      const uint32_t last =
          std::min(b * Leaf::kBlock + Leaf::kBlock - 1, leaf->size - 1);
      if (leaf->pivots[b] != leaf->scores[last]) return false;
    }
    if (leaf->prev != *prev_leaf) return false;
    if (*prev_leaf != nullptr && (*prev_leaf)->next != leaf) return false;
    if (*prev_leaf == nullptr && first_ != leaf) return false;
    if (*leaf_depth < 0) *leaf_depth = depth;
    if (*leaf_depth != depth) return false;
    *prev_leaf = leaf;
    *count += leaf->size;
    return true;
  }
  const Inner* n = static_cast<const Inner*>(node);
  // Only the root may have one child, and only for the moment ShrinkRoot
  // takes to remove it: never between calls.
  if (n->size < 2 || n->size > kInnerCapacity) return false;
  for (uint32_t i = 1; i < n->size; ++i) {
    if (!in_range(n->key(i))) return false;
    if (i > 1 && !RanksAbove(n->key(i - 1), n->key(i))) return false;
  }
  if (n->key(0) != RankKey{std::numeric_limits<int64_t>::max(), 0, 0}) {
    return false;
  }
  for (uint32_t b = 0; b * Inner::kBlock < n->size; ++b) {
    if (b > 0 && n->pivots[b - 1] != n->scores[b * Inner::kBlock]) {
      return false;
    }
    uint64_t sum = 0;
    for (uint32_t i = b * Inner::kBlock;
         i < std::min(n->size, (b + 1) * Inner::kBlock); ++i) {
      sum += n->counts[i];
    }
    if (n->block_counts[b] != sum) return false;
  }
  for (uint32_t i = 0; i < n->size; ++i) {
    const RankKey child_low = i > 0 ? n->key(i) : RankKey{};
    const RankKey child_high = i + 1 < n->size ? n->key(i + 1) : RankKey{};
    size_t under = 0;
    if (!CheckNode(n->children[i], level - 1, i > 0 ? &child_low : low,
                   i + 1 < n->size ? &child_high : high, &under, prev_leaf,
                   leaf_depth, depth + 1)) {
      return false;
    }
    if (n->counts[i] != under) return false;
    *count += under;
  }
  return true;
}

bool RankedBtree::CheckInvariants() const {
  if (root_ == nullptr) {
    return size_ == 0 && first_ == nullptr && last_ == nullptr &&
           inner_levels_ == 0 && leaves_ == 0 && inners_ == 0;
  }
  if (inner_levels_ < 0 || inner_levels_ > kMaxInnerLevels) return false;
  size_t count = 0;
  const Leaf* prev_leaf = nullptr;
  int leaf_depth = -1;
  if (!CheckNode(root_, inner_levels_, nullptr, nullptr, &count, &prev_leaf,
                 &leaf_depth, 0)) {
    return false;
  }
  if (count != size_ || prev_leaf != last_ || last_->next != nullptr) {
    return false;
  }
  // The node counters match what the walk saw.
  size_t leaves = 0;
  for (const Leaf* l = first_; l != nullptr; l = l->next) ++leaves;
  if (leaves != leaves_) return false;
  size_t inners = 0;
  std::vector<const void*> level_nodes = {root_};
  for (int level = inner_levels_; level > 0; --level) {
    std::vector<const void*> below;
    for (const void* node : level_nodes) {
      const Inner* n = static_cast<const Inner*>(node);
      ++inners;
      below.insert(below.end(), n->children, n->children + n->size);
    }
    level_nodes = std::move(below);
  }
  return inners == inners_ && level_nodes.size() == leaves_;
}

}  // namespace feedcore::internal
