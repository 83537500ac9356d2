// RankedBtree: an order-statistic (counted) B+tree of leaderboard entries,
// the sorted half of one leaderboard partition.
//
// Entries are ordered best-first by RankKey (see below), so the leader is
// the first entry and a top-k read is a forward walk.
//
// Layout. Every entry lives in a leaf; leaves hold up to kLeafCapacity
// entries in structure-of-arrays form (all scores, then all update
// sequences, then all members, each array on its own cache lines) and are
// linked both ways, so walks in either direction stay inside a leaf for
// dozens of entries. An inner node holds up to kInnerCapacity children,
// and for each child its separator key (a lower bound of everything under
// it and above everything under the previous child; none for child 0) and
// its subtree's entry count. All leaves are at the same depth.
//
// Ranks. A descent towards a key adds up, at every inner node, the counts
// of the children left of the one it follows, and in the leaf the entries
// before its stopping point: that sum is the number of entries ranked above
// the key. 1,000,000 entries need three inner levels; their upper levels
// are few and stay in cache, so a descent costs about one miss for the
// last inner node and one for the leaf, against one per level in the lower
// half of a skiplist.
//
// Balance. A full leaf first moves entries to a sibling with room; failing
// that, and for inner nodes, a full node splits in two (at an end of the
// tree, where sorted loads append, it splits leaving the full node full);
// a node that falls
// under a quarter of its capacity after an erase merges with a sibling or
// takes entries from it. Leaves other than the root hold at least
// kLeafCapacity / 4 entries once an erase has passed by them; inner nodes
// other than the root have at least two children.
//
// Positions. An entry is addressed by (leaf, index), valid until the next
// write to the tree: entries move between and within leaves. Callers keep
// an entry's key (which is how the leaderboard's member map finds it) and
// descend to it.
//
// Memory. Nodes are allocated one at a time at their fixed size (a leaf is
// 1,664 bytes, an inner node 2,688), 64-byte aligned; there is no
// allocation per entry. Leaves, nearly all of a tree's bytes, come from a
// HugePagePool when one is given (a leaderboard shares one among its
// partitions), inner nodes from operator new. An empty tree holds no node.
//
// Thread safety
// -------------
// None. Writes require the owning partition's lock held exclusively; reads
// require it held at least shared.
#ifndef FEEDCORE_SRC_LEADERBOARD_RANKED_BTREE_H_
#define FEEDCORE_SRC_LEADERBOARD_RANKED_BTREE_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "contract/rank_key.h"
#include "memory/huge_page_pool.h"

namespace feedcore::internal {

class RankedBtree {
 public:
  static constexpr uint32_t kLeafCapacity = 64;
  static constexpr uint32_t kInnerCapacity = 64;
  // Inner levels a tree can have: with at least two children per inner
  // node and one entry per leaf, more than 2^64 entries would be needed.
  static constexpr int kMaxInnerLevels = 64;

  struct Leaf;
  struct Inner;
  // A separator: index `index` of inner node `node`; none if node is null.
  struct Separator {
    const Inner* node = nullptr;
    uint32_t index = 0;
  };

  // One entry: (leaf, index). Invalidated by any write to the tree.
  class Position {
   public:
    Position() = default;
    bool valid() const { return leaf_ != nullptr; }
    RankKey key() const;
    int64_t score() const;
    // The next entry towards the worst one; invalid after the last.
    Position next() const;
    // The next entry towards the leader; invalid before the first.
    Position prev() const;
    friend bool operator==(const Position&, const Position&) = default;

   private:
    friend class RankedBtree;
    Position(const Leaf* leaf, uint32_t index) : leaf_(leaf), index_(index) {}
    const Leaf* leaf_ = nullptr;
    uint32_t index_ = 0;
  };

  // Leaves come from `leaf_pool` (slots of sizeof(Leaf)), which must
  // outlive the tree, or from operator new when it is null.
  explicit RankedBtree(HugePagePool* leaf_pool = nullptr)
      : leaf_pool_(leaf_pool) {}
  // Frees every node.
  ~RankedBtree();
  RankedBtree(const RankedBtree&) = delete;
  RankedBtree& operator=(const RankedBtree&) = delete;

  class WriteHint;

  // Adds `key`. If memory runs out (std::bad_alloc), the tree is unchanged.
  // `hinted`: a WriteHint towards `key` has run to its end, so the lines
  // the insert reads are on their way and it prefetches nothing more.
  // REQUIRES: no entry has key.member.
  void Insert(const RankKey& key, bool hinted = false);

  // Removes the entry `key`. Never allocates.
  // REQUIRES: `key` is in the tree.
  void Erase(const RankKey& key);

  // Gives the entry `old_key` the key `new_key`. When the new key still
  // belongs in the same leaf, it moves within the leaf and no count
  // changes; otherwise it is an insert and an erase. If memory runs out
  // (std::bad_alloc), the tree is unchanged.
  // `hint`, if not null, is a WriteHint started towards some key (not
  // necessarily `old_key`) and new_key.score. When it ran to its end, the
  // update prefetches nothing more; when it was started towards `old_key`
  // itself and the tree's shape (its nodes and separators) has not changed
  // since, the update also skips its own descent and uses the hint's leaf.
  // REQUIRES: `old_key` is in the tree; new_key.member == old_key.member.
  void Update(const RankKey& old_key, const RankKey& new_key,
              const WriteHint* hint = nullptr);

  // A hint for a batch of writes: a descent towards `key` run one phase
  // at a time, each phase prefetching the lines the next one reads, ending
  // with the lines of the leaf that an Update of `key` to `new_score` (or
  // an Insert of `key`, new_score being key.score) reads and shifts: the
  // leaf's blocks of scores, sequences and members from the old key's
  // place to the new one's. A caller keeps several in flight, advancing
  // each by one phase between its writes, so that the misses of later
  // writes overlap with the work of the current one instead of adding up.
  // Inner nodes miss too: the scattered writes of a batch evict their
  // lines between visits.
  //
  // The tree may change between phases. A hint whose nodes may have been
  // freed since (by a merge, or the root shrinking) stops; one whose
  // entries moved merely fetches lines that are not needed. Nothing is
  // changed; `key` need not be in the tree.
  class WriteHint {
   public:
    WriteHint() = default;
    bool done() const { return levels_left_ < 0; }
    // Whether it ran to its end and fetched the leaf's lines (rather than
    // stopping when nodes were freed, or not started).
    bool fetched() const { return fetched_; }

   private:
    friend class RankedBtree;
    RankKey key_;
    int64_t new_score_ = 0;
    const void* node_ = nullptr;  // the leaf, once the descent reached it
    uint64_t nodes_freed_ = 0;    // the tree's count at the start
    uint64_t shape_changes_ = 0;  // the tree's count at the start
    // The separators that bound the leaf, as DescendForWrite gives them.
    Separator low_;
    Separator high_;
    int levels_left_ = -1;  // inner levels below node_; -1 when done
    uint32_t block_ = 0;    // of node_, once picked_
    bool picked_ = false;
    bool fetched_ = false;
  };
  // Starts `hint` at the root.
  void StartWriteHint(const RankKey& key, int64_t new_score,
                      WriteHint& hint) const;
  // Runs the hint's next phase, if it has one.
  void AdvanceWriteHint(WriteHint& hint) const;

  // The number of entries whose key ranks above `key`.
  size_t CountAbove(const RankKey& key) const;

  // The first entry whose key does not rank above `key` (invalid if none),
  // and in `*index` its 0-based position, which is CountAbove(key).
  Position LowerBound(const RankKey& key, size_t* index) const;

  // The first entry whose key ranks below `key` (invalid if none), and in
  // `*index` its 0-based position: the number of entries ranking above or
  // equal to `key`.
  Position UpperBound(const RankKey& key, size_t* index) const;

  // Many bounds at once: for each i < count, positions[i] (if positions is
  // not null) and indexes[i] get what trees[i]->LowerBound(key, ...) would
  // give, or UpperBound with `upper`. The descents run interleaved, one
  // step of each per round, prefetching what each reads next, so
  // that their cache misses overlap. `holder`, if not kNoHolder, is the
  // index of a tree that holds `key` itself (a member's own partition):
  // its descent fetches the sequences it will compare along with the
  // scores.
  static constexpr size_t kNoHolder = ~size_t{0};
  static void BoundMany(const RankedBtree* const* trees, size_t count,
                        const RankKey& key, bool upper, Position* positions,
                        size_t* indexes, size_t holder = kNoHolder);

  // The entry at 0-based position `index` (invalid if index >= size()):
  // the order-statistic inverse of LowerBound's index. One descent that
  // follows the counts: at each inner node the block counts pass whole
  // blocks, then the child counts of one block. O(log n), reading three
  // lines per inner node and none of the leaf but the entry's.
  Position Select(size_t index) const;

  // The best entry (invalid when empty).
  Position First() const;
  // The worst entry (invalid when empty).
  Position Last() const;

  size_t size() const { return size_; }
  size_t leaves() const { return leaves_; }
  bool empty() const { return size_ == 0; }
  // Inner levels above the leaves: 0 for a single leaf (or none).
  int inner_levels() const { return inner_levels_; }
  // Bytes of the nodes held.
  size_t bytes_used() const;

  // Checks order, separators, counts, uniform depth, fill, leaf links,
  // first/last and size; returns false on the first violation. O(n); for
  // tests.
  bool CheckInvariants() const;

 private:
  // A step of a descent: the inner node and the child it followed.
  struct Step {
    Inner* node;
    uint32_t child;
  };
  using Path = std::array<Step, kMaxInnerLevels>;

  // Descends to the leaf where `key` belongs, filling `path` (inner levels
  // from the root) and, if asked, the separators that bound that leaf
  // from above (`low`) and below (`high`). Unless `hinted`, prefetches each
  // node's lines a search may read (the leaf's pivots and scores).
  Leaf* DescendForWrite(const RankKey& key, Path& path, Separator* low,
                        Separator* high, bool hinted = false) const;
  Position Bound(const RankKey& key, bool upper, size_t* index) const;
  // Makes room in the full `leaf` (at the end of `path`) by moving entries
  // to a sibling under the same parent that has room, then inserts `key`
  // (whose index in `leaf` was `pos`). False, changing nothing, if neither
  // sibling has enough room.
  bool ShiftToSibling(Leaf* leaf, uint32_t pos, const RankKey& key, Path& path);
  // Removes the entry at `index` of the leaf at the end of `path`, then
  // rebalances.
  void EraseAt(Leaf* leaf, uint32_t index, Path& path);
  // After `leaf` lost entries: merges it or refills it from a sibling.
  void RebalanceLeaf(Leaf* leaf, Path& path);
  // After the inner node at path level `level` lost a child.
  void RebalanceInner(int level, Path& path);
  // Makes the root's only child the root while the root has one child.
  void ShrinkRoot();
  bool CheckNode(const void* node, int level, const RankKey* low,
                 const RankKey* high, size_t* count, const Leaf** prev_leaf,
                 int* leaf_depth, int depth) const;

  Leaf* NewLeaf();
  static Inner* NewInner();
  // Gives back a leaf's memory (to the pool it came from).
  void DeleteLeaf(Leaf* leaf) const;
  void FreeLeaf(Leaf* leaf);
  void FreeInner(Inner* inner);
  void FreeSubtree(void* node, int level);

  HugePagePool* const leaf_pool_;
  // A leaf when inner_levels_ == 0, otherwise an inner node; null when
  // the tree is empty.
  void* root_ = nullptr;
  Leaf* first_ = nullptr;
  Leaf* last_ = nullptr;
  size_t size_ = 0;
  size_t leaves_ = 0;
  // Nodes freed so far: a WriteHint started before the last one may point
  // to freed memory.
  uint64_t nodes_freed_ = 0;
  // Changes to the tree's shape so far: nodes added or removed, entries
  // moved between leaves, separators rewritten. Between two of them every
  // entry stays in its leaf and every separator in its place, so a
  // WriteHint's leaf and bounds stay exact.
  uint64_t shape_changes_ = 0;
  size_t inners_ = 0;
  int inner_levels_ = 0;
};

// The first cache line holds the size and one pivot per block of kBlock
// entries but the last: the score of the block's last entry. A search
// reads that line, which names the block where the answer lies, then
// (almost always) that block's line of scores: two lines of a leaf, not a
// binary search's four of eight. Each array starts on a line of its own;
// the links come last.
struct alignas(64) RankedBtree::Leaf {
  static constexpr uint32_t kBlock = 8;  // scores per cache line
  static constexpr uint32_t kBlocks = kLeafCapacity / kBlock;

  uint32_t size;
  int64_t pivots[kBlocks - 1];
  int64_t scores[kLeafCapacity];
  uint64_t seqs[kLeafCapacity];
  uint64_t members[kLeafCapacity];
  Leaf* prev;
  Leaf* next;

  RankKey key(uint32_t i) const { return {scores[i], seqs[i], members[i]}; }
  void Set(uint32_t i, const RankKey& k) {
    scores[i] = k.score;
    seqs[i] = k.seq;
    members[i] = k.member;
  }
  // Recomputes the pivots of the blocks holding entries first..last
  // (clamped to the entries in use); after every change to them.
  void UpdatePivots(uint32_t first = 0, uint32_t last = kLeafCapacity) {
    if (size == 0) return;
    last = std::min(last, size - 1);
    for (uint32_t b = first / kBlock; b <= last / kBlock && b + 1 < kBlocks;
         ++b) {
      pivots[b] = scores[std::min(b * kBlock + kBlock - 1, size - 1)];
    }
  }
};

inline RankKey RankedBtree::Position::key() const { return leaf_->key(index_); }
inline int64_t RankedBtree::Position::score() const {
  return leaf_->scores[index_];
}
inline RankedBtree::Position RankedBtree::Position::next() const {
  if (index_ + 1 < leaf_->size) return Position(leaf_, index_ + 1);
  return leaf_->next != nullptr ? Position(leaf_->next, 0) : Position();
}
inline RankedBtree::Position RankedBtree::Position::prev() const {
  if (index_ > 0) return Position(leaf_, index_ - 1);
  const Leaf* p = leaf_->prev;
  return p != nullptr ? Position(p, p->size - 1) : Position();
}
inline RankedBtree::Position RankedBtree::First() const {
  return first_ != nullptr ? Position(first_, 0) : Position();
}
inline RankedBtree::Position RankedBtree::Last() const {
  return last_ != nullptr ? Position(last_, last_->size - 1) : Position();
}

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_LEADERBOARD_RANKED_BTREE_H_
