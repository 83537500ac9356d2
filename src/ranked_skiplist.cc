#include "ranked_skiplist.h"

#include <algorithm>
#include <cassert>
#include <new>

#include "skiplist_height.h"

namespace feedcore::internal {
int RankedSkiplist::HeightFor(uint64_t member, uint64_t seed) {
  return HeightFromBits(MixBits(member ^ MixBits(seed)), kMaxHeight);
}

RankedSkiplist::RankedSkiplist(NodeArena* arena, uint64_t height_seed)
    : arena_(arena), height_seed_(height_seed) {
  head_ = NewNode(RankKey{}, kMaxHeight);
  // An empty list: every head link points at null, which is position 1.
  for (int i = 0; i < kMaxHeight; ++i) head_->links()[i] = {nullptr, 1};
}

RankedSkiplist::~RankedSkiplist() {
  Node* node = First();
  while (node != nullptr) {
    Node* next = node->next();
    arena_->Free(node, Node::Bytes(HeightFor(node->key_.member, height_seed_)));
    node = next;
  }
  arena_->Free(head_, Node::Bytes(kMaxHeight));
}

RankedSkiplist::Node* RankedSkiplist::NewNode(const RankKey& key, int height) {
  void* memory = arena_->Allocate(Node::Bytes(height));
  Node* node = new (memory) Node;
  node->key_ = key;
  node->prev_ = nullptr;
  Node::Link* links = node->links();
  for (int i = 0; i < height; ++i) new (&links[i]) Node::Link{nullptr, 0};
  return node;
}

void RankedSkiplist::Start(Lane& lane, const RankedSkiplist* list) {
  lane.x = list->head_;
  lane.level = list->level_ - 1;
  lane.position = 0;
  lane.done = false;
}

void RankedSkiplist::Step(Lane& lane) {
  Node* x = lane.x;
  int level = lane.level;
  const Node::Link& link = x->links()[level];
  Node* next = link.next;
  size_t span = link.span;
  if (next != nullptr && next == lane.skip) {
    // As if `skip` were not in the list: its successor at this level
    // follows directly.
    span += next->links()[level].span;
    next = next->links()[level].next;
  }
  if (next != nullptr && (lane.upper ? !RanksAbove(lane.key, next->key_)
                                     : RanksAbove(next->key_, lane.key))) {
    lane.position += span;
    lane.x = x = next;
  } else {
    if (lane.path != nullptr) {
      (*lane.path)[level] = x;
      (*lane.positions)[level] = lane.position;
    }
    if (level == 0) {
      lane.found = next;
      lane.done = true;
      return;
    }
    lane.level = --level;
  }
  // The next step compares the successor at this level, or, if it stops
  // here, the one below. Fetching both now overlaps their cache misses
  // with each other and with the other lanes' instead of paying for them
  // one after another.
  __builtin_prefetch(x->links()[level].next);
  if (level > 0) __builtin_prefetch(x->links()[level - 1].next);
}

void RankedSkiplist::RunLanes(Lane* lanes, size_t count) {
  for (size_t active = count; active > 0;) {
    active = 0;
    for (size_t i = 0; i < count; ++i) {
      if (lanes[i].done) continue;
      Step(lanes[i]);
      if (!lanes[i].done) ++active;
    }
  }
}

RankedSkiplist::Node* RankedSkiplist::Descend(const RankKey& key, bool upper,
                                              size_t* index, Path* path,
                                              Positions* positions) const {
  Lane lane;
  Start(lane, this);
  lane.key = key;
  lane.upper = upper;
  lane.path = path;
  lane.positions = positions;
  while (!lane.done) Step(lane);
  if (index != nullptr) *index = lane.position;
  return lane.found;
}

template <bool kUpper>
void RankedSkiplist::BoundGroup(const RankedSkiplist* const* lists, size_t n,
                                const RankKey& key, Node** nodes,
                                size_t* indexes) {
  struct Cursor {
    const Node* x;
    const Node* readable;  // any node whose key may be read: the head
    size_t position;
    int level;
    Node* found;
  };
  std::array<Cursor, kBoundLanes> lanes;
  for (size_t i = 0; i < n; ++i) {
    lanes[i] = {lists[i]->head_, lists[i]->head_, 0, lists[i]->level_ - 1,
                nullptr};
  }
  for (size_t active = n; active > 0;) {
    active = 0;
    for (size_t i = 0; i < n; ++i) {
      Cursor& lane = lanes[i];
      if (lane.level < 0) continue;
      const Node::Link& link = lane.x->links()[lane.level];
      Node* next = link.next;
      // Reads a real node's key even at the end of a level; the result is
      // then masked out. Scores decide almost always; equal scores take
      // the full comparison.
      const RankKey& probe = (next != nullptr ? next : lane.readable)->key_;
      bool goes = probe.score > key.score;
      if (probe.score == key.score) [[unlikely]] {
        goes = kUpper ? !RanksAbove(key, probe) : RanksAbove(probe, key);
      }
      const bool right = (next != nullptr) & goes;
      lane.position += right ? link.span : 0;
      lane.found = right ? lane.found : next;
      lane.x = right ? next : lane.x;
      lane.level -= right ? 0 : 1;
      if (lane.level >= 0) {
        ++active;
        // What the next step compares: the successor at this level, or
        // the one below if it stops here (see Step).
        __builtin_prefetch(lane.x->links()[lane.level].next);
        if (lane.level > 0) {
          __builtin_prefetch(lane.x->links()[lane.level - 1].next);
        }
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (nodes != nullptr) nodes[i] = lanes[i].found;
    indexes[i] = lanes[i].position;
  }
}

void RankedSkiplist::BoundMany(const RankedSkiplist* const* lists, size_t count,
                               const RankKey& key, bool upper, Node** nodes,
                               size_t* indexes) {
  for (size_t base = 0; base < count; base += kBoundLanes) {
    const size_t n = std::min(kBoundLanes, count - base);
    Node** group_nodes = nodes != nullptr ? nodes + base : nullptr;
    if (upper) {
      BoundGroup<true>(lists + base, n, key, group_nodes, indexes + base);
    } else {
      BoundGroup<false>(lists + base, n, key, group_nodes, indexes + base);
    }
  }
}

void RankedSkiplist::Link(Node* node, int height, Path& path, Positions& pos) {
  if (height > level_) {
    // New levels start at the head, whose links there point at null
    // (position size + 1 before this insert).
    for (int i = level_; i < height; ++i) {
      path[i] = head_;
      pos[i] = 0;
      head_->links()[i] = {nullptr, size_ + 1};
    }
    level_ = height;
  }
  // The node lands at position pos[0] + 1; everything after it moves by 1.
  const size_t at = pos[0] + 1;
  Node::Link* links = node->links();
  for (int i = 0; i < height; ++i) {
    Node::Link& before = path[i]->links()[i];
    // before.next was at pos[i] + before.span and is now one further.
    links[i].next = before.next;
    links[i].span = pos[i] + before.span + 1 - at;
    before.next = node;
    before.span = at - pos[i];
  }
  for (int i = height; i < level_; ++i) ++path[i]->links()[i].span;
  node->prev_ = path[0] == head_ ? nullptr : path[0];
  if (links[0].next != nullptr) {
    links[0].next->prev_ = node;
  } else {
    tail_ = node;
  }
  ++size_;
}

void RankedSkiplist::Unlink(Node* node, const Path& path) {
  const Node::Link* links = node->links();
  for (int i = 0; i < level_; ++i) {
    Node::Link& before = path[i]->links()[i];
    if (before.next == node) {
      before.span += links[i].span - 1;
      before.next = links[i].next;
    } else {
      --before.span;
    }
  }
  if (links[0].next != nullptr) {
    links[0].next->prev_ = node->prev_;
  } else {
    tail_ = node->prev_;
  }
  while (level_ > 1 && head_->links()[level_ - 1].next == nullptr) --level_;
  --size_;
}

RankedSkiplist::Node* RankedSkiplist::Insert(const RankKey& key) {
  Path path;
  Positions positions;
  Descend(key, /*upper=*/false, nullptr, &path, &positions);
  const int height = HeightFor(key.member, height_seed_);
  Node* node = NewNode(key, height);
  Link(node, height, path, positions);
  return node;
}

void RankedSkiplist::Erase(Node* node) {
  Path path;
  Positions positions;
  const RankKey key = node->key_;
  [[maybe_unused]] Node* found =
      Descend(key, /*upper=*/false, nullptr, &path, &positions);
  assert(found == node);
  Unlink(node, path);
  arena_->Free(node, Node::Bytes(HeightFor(key.member, height_seed_)));
}

void RankedSkiplist::Update(Node* node, const RankKey& key) {
  assert(key.member == node->key_.member);
  // A key that moves up still ranks above the old successor, one that moves
  // down still ranks below the old predecessor: one neighbour decides.
  if (RanksAbove(key, node->key_)) {
    const Node* prev = node->prev_;
    if (prev == nullptr || RanksAbove(prev->key_, key)) {
      node->key_ = key;  // same place in the order: no link changes
      return;
    }
  } else {
    const Node* next = node->links()[0].next;
    if (next == nullptr || RanksAbove(key, next->key_)) {
      node->key_ = key;
      return;
    }
  }
  // Two descents at once on the list as it is: one to the node (the path
  // to unlink it), one to the new key that treats the node as already
  // gone (the path to link it back in).
  Path old_path, new_path;
  Positions old_positions, new_positions;
  std::array<Lane, 2> lanes;
  Start(lanes[0], this);
  lanes[0].key = node->key_;
  lanes[0].path = &old_path;
  lanes[0].positions = &old_positions;
  Start(lanes[1], this);
  lanes[1].key = key;
  lanes[1].skip = node;
  lanes[1].path = &new_path;
  lanes[1].positions = &new_positions;
  RunLanes(lanes.data(), lanes.size());
  assert(lanes[0].found == node);
  const size_t node_position = old_positions[0] + 1;
  const int levels = level_;
  Unlink(node, old_path);
  // The new path never stands on the node; positions after it move up by
  // one now that it is unlinked.
  for (int i = 0; i < levels; ++i) {
    assert(new_path[i] != node);
    if (new_positions[i] > node_position) --new_positions[i];
  }
  node->key_ = key;
  Link(node, HeightFor(key.member, height_seed_), new_path, new_positions);
}

size_t RankedSkiplist::CountAbove(const RankKey& key) const {
  size_t index = 0;
  Descend(key, /*upper=*/false, &index, nullptr, nullptr);
  return index;
}

RankedSkiplist::Node* RankedSkiplist::LowerBound(const RankKey& key,
                                                 size_t* index) const {
  return Descend(key, /*upper=*/false, index, nullptr, nullptr);
}

RankedSkiplist::Node* RankedSkiplist::UpperBound(const RankKey& key,
                                                 size_t* index) const {
  return Descend(key, /*upper=*/true, index, nullptr, nullptr);
}

bool RankedSkiplist::CheckInvariants() const {
  if (level_ < 1 || level_ > kMaxHeight) return false;
  // Level 0: order, backward links, size and tail.
  size_t count = 0;
  const Node* prev = nullptr;
  for (const Node* x = First(); x != nullptr; x = x->next()) {
    if (x->prev_ != prev) return false;
    if (prev != nullptr && !RanksAbove(prev->key_, x->key_)) return false;
    prev = x;
    ++count;
  }
  if (count != size_ || tail_ != prev) return false;
  // Every level in use: each link's span is the distance in positions, and
  // the links at level i visit exactly the nodes of height > i.
  for (int i = 0; i < level_; ++i) {
    const Node* x = head_;
    size_t position = 0;
    const Node* walk = First();  // level-0 walk, to check spans
    size_t walk_position = 1;
    for (;;) {
      const Node::Link& link = x->links()[i];
      // Advance the level-0 walk to the next node of height > i.
      while (walk != nullptr &&
             HeightFor(walk->key_.member, height_seed_) <= i) {
        walk = walk->next();
        ++walk_position;
      }
      if (link.next != walk) return false;
      const size_t target = walk == nullptr ? size_ + 1 : walk_position;
      if (link.span != target - position) return false;
      if (link.next == nullptr) break;
      x = link.next;
      position = target;
      walk = walk->next();
      ++walk_position;
    }
  }
  // Levels above level_ are unused: the head points at null there, and
  // level_ is the lowest level count that holds every node.
  for (int i = level_; i < kMaxHeight; ++i) {
    if (head_->links()[i].next != nullptr) return false;
  }
  if (level_ > 1 && head_->links()[level_ - 1].next == nullptr) return false;
  return true;
}

}  // namespace feedcore::internal
