// RankedBtree's reads: bounds and ranks (one tree, or many at once with
// their misses overlapped), the write hints that prefetch a batch's
// descents, the tree's teardown and its invariant checks. The writes are in
// ranked_btree_write.cc.
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

#include "leaderboard/ranked_btree_node.h"

namespace feedcore::internal {
namespace {

using ranked_btree_node::Before;
using ranked_btree_node::ChildFor;
using ranked_btree_node::ChildInBlock;
using ranked_btree_node::CountLeftOf;
using ranked_btree_node::InnerBlock;
using ranked_btree_node::LeafBlock;
using ranked_btree_node::LeafBound;
using ranked_btree_node::LeafBoundFrom;
using ranked_btree_node::LeafFind;
using ranked_btree_node::PrefetchBytes;
using ranked_btree_node::SumCounts;
using Leaf = RankedBtree::Leaf;
using Inner = RankedBtree::Inner;

}  // namespace

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

RankedBtree::Position RankedBtree::Select(size_t index) const {
  if (index >= size_) return Position();
  const void* node = root_;
  // Entries of `node`'s subtree before the one wanted.
  uint64_t rest = index;
  for (int level = 0; level < inner_levels_; ++level) {
    const Inner* n = static_cast<const Inner*>(node);
    // The counts add up to the subtree's size, which exceeds `rest`, so
    // both scans stop inside the node.
    uint32_t child = 0;
    for (uint32_t b = 0; rest >= n->block_counts[b]; ++b) {
      rest -= n->block_counts[b];
      child += Inner::kBlock;
    }
    while (rest >= n->counts[child]) rest -= n->counts[child++];
    assert(child < n->size);
    node = n->children[child];
  }
  return Position(static_cast<const Leaf*>(node), static_cast<uint32_t>(rest));
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
