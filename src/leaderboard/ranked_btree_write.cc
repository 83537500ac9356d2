// RankedBtree's writes: node allocation, the descent that records the
// path, insert with its splits and moves to siblings, erase with its merges
// and rebalancing, and in-place score updates. They share one file so that
// the compiler sees the small helpers (allocation, descent) next to their
// callers, as the hot write path needs.
#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "leaderboard/ranked_btree.h"
#include "leaderboard/ranked_btree_node.h"

namespace feedcore::internal {
namespace {

using ranked_btree_node::ChildFor;
using ranked_btree_node::CountLeftOf;
using ranked_btree_node::LeafBound;
using ranked_btree_node::LeafFind;
using ranked_btree_node::MoveChildren;
using ranked_btree_node::MoveEntries;
using ranked_btree_node::PrefetchBytes;
using ranked_btree_node::RemoveChild;
using ranked_btree_node::SumCounts;
using Leaf = RankedBtree::Leaf;
using Inner = RankedBtree::Inner;

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
}  // namespace feedcore::internal
