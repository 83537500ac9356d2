// RankedSkiplist: an order-statistic skiplist of leaderboard entries, the
// sorted half of one leaderboard partition.
//
// Entries are ordered best-first by RankKey (see below), so the leader is
// the first node and a top-k read is a forward walk. Like the skiplist of a
// Redis sorted set, every forward link carries its span: the number of
// level-0 steps it jumps. A descent that adds up the spans it crosses knows
// the 0-based position of where it stops, so the number of entries ranked
// above any key costs O(log n) expected, not O(n). Each node also has a
// level-0 backward link, for walking towards the leader (worst-first pages,
// the entries above a member).
//
// Layout. A node is its key (score, update sequence, member: 24 bytes), the
// backward link (8 bytes), then `height` links of {next, span} (16 bytes
// each). The height is a hash of the member with the list's seed, 1 + the
// number of trailing zero bit pairs, capped at kMaxHeight, so P(height > h)
// = 4^-h and 1.33 links per node on average: 53 bytes per entry. The height
// is not stored, and a member keeps its node (and its height) when its key
// changes. Nodes come from a NodeArena at their exact size.
//
// Spans. Number the head 0 and the nodes 1..size in list order, and give a
// null link the position size + 1. A link from position a to position b has
// span b - a. Every insert and erase keeps that exact, including for links to
// null, for the levels in use (`level()`); head links above that are
// rewritten when the list grows into them.
//
// Descents. On a list larger than the cache, each node a descent moves to is
// a cache miss that its next comparison waits for, so a descent costs about
// one memory latency per step in the lower levels. A descent standing on a
// node prefetches both nodes it may compare next (the successor at its
// level and the one below), and independent descents run interleaved, one
// step of each per round, so that their misses overlap instead of adding
// up: Update's two descents (to the old key and to the new one), and
// BoundMany's one descent per list.
//
// Thread safety
// -------------
// None. Writes require the owning partition's lock held exclusively; reads
// require it held at least shared. Nodes stay valid until erased, whatever
// else changes.
#ifndef FEEDCORE_SRC_RANKED_SKIPLIST_H_
#define FEEDCORE_SRC_RANKED_SKIPLIST_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "node_arena.h"

namespace feedcore::internal {

// The sort key of a leaderboard entry. `seq` is the board's update sequence
// at the moment the member got its current score (0 for every member when
// the board breaks ties by member id alone).
struct RankKey {
  int64_t score = 0;
  uint64_t seq = 0;
  uint64_t member = 0;

  friend bool operator==(const RankKey&, const RankKey&) = default;
};

// Whether `a` ranks above `b`: the higher score first; on equal scores the
// lower sequence (the member who got there first); then the lower member id.
// A strict total order on distinct members.
inline bool RanksAbove(const RankKey& a, const RankKey& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.seq != b.seq) return a.seq < b.seq;
  return a.member < b.member;
}

class RankedSkiplist {
 public:
  static constexpr int kMaxHeight = 16;  // enough for 4^16 entries

  class Node {
   public:
    const RankKey& key() const { return key_; }
    // The next node towards the worst entry, or nullptr after the last one.
    Node* next() const { return links()[0].next; }
    // The next node towards the leader, or nullptr before the first one.
    Node* prev() const { return prev_; }

   private:
    friend class RankedSkiplist;
    struct Link {
      Node* next;
      size_t span;
    };
    static size_t Bytes(int height) {
      return sizeof(Node) + sizeof(Link) * static_cast<size_t>(height);
    }
    // The links follow the node in the same allocation.
    Link* links() { return reinterpret_cast<Link*>(this + 1); }
    const Link* links() const {
      return reinterpret_cast<const Link*>(this + 1);
    }

    RankKey key_;
    Node* prev_;
  };

  // `arena` must outlive the list. `height_seed` decides node heights.
  RankedSkiplist(NodeArena* arena, uint64_t height_seed);
  // Returns every node to the arena.
  ~RankedSkiplist();
  RankedSkiplist(const RankedSkiplist&) = delete;
  RankedSkiplist& operator=(const RankedSkiplist&) = delete;

  // Links in a new node for `key` and returns it. O(log n) expected.
  // REQUIRES: no node with key.member is in the list.
  Node* Insert(const RankKey& key);

  // Unlinks and frees `node`. O(log n) expected.
  // REQUIRES: `node` is in this list.
  void Erase(Node* node);

  // Gives `node` the key `key` and moves it to its place. The node stays
  // the same object. O(1) when the new key still sorts between the node's
  // neighbours, otherwise O(log n) expected.
  // REQUIRES: `node` is in this list; key.member == node->key().member.
  void Update(Node* node, const RankKey& key);

  // The number of nodes whose key ranks above `key`. O(log n) expected.
  size_t CountAbove(const RankKey& key) const;

  // The first node whose key does not rank above `key` (nullptr if none),
  // and in `*index` its 0-based position, which is CountAbove(key).
  Node* LowerBound(const RankKey& key, size_t* index) const;

  // The first node whose key ranks below `key` (nullptr if none), and in
  // `*index` its 0-based position: the number of nodes ranking above or
  // equal to `key`.
  Node* UpperBound(const RankKey& key, size_t* index) const;

  // Many bounds at once: for each i < count, nodes[i] and indexes[i] get
  // what lists[i]->LowerBound(key, &indexes[i]) would give, or UpperBound
  // with `upper`. The descents run interleaved, one step of each per
  // round, so that their cache misses overlap: on lists too large for the
  // cache, 16 descents cost little more than one.
  static void BoundMany(const RankedSkiplist* const* lists, size_t count,
                        const RankKey& key, bool upper, Node** nodes,
                        size_t* indexes);

  // The 0-based position of `node`. REQUIRES: `node` is in this list.
  size_t IndexOf(const Node* node) const { return CountAbove(node->key()); }

  // The best node (nullptr when empty).
  Node* First() const { return head_->links()[0].next; }
  // The worst node (nullptr when empty).
  Node* Last() const { return tail_; }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Levels in use, 1..kMaxHeight.
  int level() const { return level_; }

  // Checks order, backward links, spans, tail and size; returns false on
  // the first violation. O(n x height); for tests.
  bool CheckInvariants() const;

  // Height of the node of `member` under `seed`: 1 + the number of
  // trailing zero pairs of bits of a hash, capped at kMaxHeight (p = 1/4).
  static int HeightFor(uint64_t member, uint64_t seed);

 private:
  using Path = std::array<Node*, kMaxHeight>;
  using Positions = std::array<size_t, kMaxHeight>;

  // One descent from the head towards `key`, advanced a step at a time by
  // Step() so that several can run interleaved (see RunLanes).
  struct Lane {
    RankKey key;
    // Moves right over nodes ranking above `key` (a lower bound) or, with
    // `upper`, over nodes ranking above or equal to it (an upper bound).
    bool upper = false;
    // A node the descent treats as absent, or nullptr.
    const Node* skip = nullptr;
    // If set, receive for every level the last node the descent stood on
    // there and that node's position.
    Path* path = nullptr;
    Positions* positions = nullptr;
    // Progress: standing on `x` (position `position`) at `level`.
    Node* x = nullptr;
    int level = 0;
    size_t position = 0;
    bool done = false;
    // Result: the first node at level 0 that the descent did not step over.
    // `position` is then the number of nodes before it.
    Node* found = nullptr;
  };

  // Descents BoundMany interleaves at once. Beyond about 16 outstanding
  // cache misses a core gains nothing; larger sets run in groups.
  static constexpr size_t kBoundLanes = 16;
  // BoundMany for at most kBoundLanes lists.
  template <bool kUpper>
  static void BoundGroup(const RankedSkiplist* const* lists, size_t n,
                         const RankKey& key, Node** nodes, size_t* indexes);

  // Starts `lane` at the head of `list`.
  static void Start(Lane& lane, const RankedSkiplist* list);
  // One comparison of `lane`: a step right, or down a level, or done.
  static void Step(Lane& lane);
  // Runs `count` lanes to completion, a step of each per round.
  static void RunLanes(Lane* lanes, size_t count);
  // A single descent: the first node not above `key` (or, with `upper`,
  // ranking below it), its position minus 1 in `*index`, and the path if
  // asked for.
  Node* Descend(const RankKey& key, bool upper, size_t* index, Path* path,
                Positions* positions) const;

  Node* NewNode(const RankKey& key, int height);
  // Links `node` (with key and height set) in after path/pos from a
  // descent for its key.
  void Link(Node* node, int height, Path& path, Positions& pos);
  // Unlinks `node` given the path of a descent for its key; does not free.
  void Unlink(Node* node, const Path& path);

  NodeArena* const arena_;
  const uint64_t height_seed_;
  // A node of kMaxHeight links that holds no entry; position 0.
  Node* head_;
  Node* tail_ = nullptr;
  size_t size_ = 0;
  int level_ = 1;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_RANKED_SKIPLIST_H_
