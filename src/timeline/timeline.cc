#include "timeline/timeline.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <new>

#include "timeline/skiplist_height.h"

namespace feedcore::internal {

struct Timeline::Node {
  Micros ts;
  ActivityId activity_id;
  EntityId actor;
  Micros expires_at;
  // Forward links, one per level; the node is allocated with exactly
  // HeightFor(key) of them.
  Node* next[1];

  TimelineKey key() const { return {ts, activity_id}; }
  StoredEntry entry() const {
    return {ts, activity_id, actor, expires_at, 0, {}};
  }
  static size_t Bytes(int height) {
    return offsetof(Node, next) + sizeof(Node*) * static_cast<size_t>(height);
  }
};

int Timeline::HeightFor(TimelineKey key, uint64_t seed) {
  return HeightFromBits(
      MixBits(MixBits(static_cast<uint64_t>(key.ts) ^ seed) ^ key.activity_id),
      kMaxHeight);
}

Timeline::Timeline(NodeArena* arena, uint64_t height_seed)
    : arena_(arena), height_seed_(height_seed) {}

Timeline::~Timeline() {
  groups_.reset();
  Node* node = head_[0];
  while (node != nullptr) {
    Node* next = node->next[0];
    FreeNode(node, HeightFor(node->key(), height_seed_));
    node = next;
  }
}

size_t Timeline::NodeBytes(int height) const {
  return Node::Bytes(height) + (grouped_ ? sizeof(GroupKey) : 0);
}

GroupKey Timeline::GroupOfNode(const Node* node, int height) {
  GroupKey group;
  std::memcpy(&group, reinterpret_cast<const char*>(node) + Node::Bytes(height),
              sizeof(group));
  return group;
}

void Timeline::SetGroupOfNode(Node* node, int height, GroupKey group) {
  std::memcpy(reinterpret_cast<char*>(node) + Node::Bytes(height), &group,
              sizeof(group));
}

Timeline::Node* Timeline::NewNode(const StoredEntry& entry, int height) {
  void* memory = arena_->Allocate(NodeBytes(height));
  Node* node = static_cast<Node*>(memory);
  node->ts = entry.ts;
  node->activity_id = entry.activity_id;
  node->actor = entry.actor;
  node->expires_at = entry.expires_at;
  for (int i = 0; i < height; ++i) node->next[i] = nullptr;
  if (grouped_) SetGroupOfNode(node, height, entry.group);
  return node;
}

void Timeline::FreeNode(Node* node, int height) {
  if (groups_ != nullptr) {
    groups_->Remove(node->key(), GroupOfNode(node, height));
  }
  arena_->Free(node, NodeBytes(height));
}

StoredEntry Timeline::EntryOf(const Node* node) const {
  StoredEntry entry = node->entry();
  if (grouped_) {
    entry.group = GroupOfNode(node, HeightFor(node->key(), height_seed_));
  }
  return entry;
}

void Timeline::EnableGroups(bool index) {
  assert(size_ == 0);
  grouped_ = true;
  if (index) groups_ = std::make_unique<GroupIndex>();
}

std::optional<GroupKey> Timeline::GroupOf(TimelineKey key) const {
  if (!grouped_) return std::nullopt;
  Node* found = Descend(
      head_.data(), height_, [key](const Node* n) { return n->key() > key; },
      nullptr);
  if (found == nullptr || found->key() != key) return std::nullopt;
  return GroupOfNode(found, HeightFor(key, height_seed_));
}

Timeline::Node* Timeline::NextAt(Node* prev, int level) const {
  return prev == nullptr ? head_[level] : prev->next[level];
}

void Timeline::SetNextAt(Node* prev, int level, Node* next) {
  if (prev == nullptr) {
    head_[level] = next;
  } else {
    prev->next[level] = next;
  }
}

template <typename Before>
Timeline::Node* Timeline::Descend(Node* const* head, int height, Before before,
                                  std::array<Node*, kMaxHeight>* prev) {
  Node* x = nullptr;
  for (int level = height - 1; level >= 0; --level) {
    Node* next = x == nullptr ? head[level] : x->next[level];
    while (next != nullptr && before(next)) {
      x = next;
      next = x->next[level];
    }
    if (prev != nullptr) (*prev)[level] = x;
  }
  return x == nullptr ? head[0] : x->next[0];
}

Timeline::Node* Timeline::FindGreaterOrEqualPrev(
    TimelineKey key, std::array<Node*, kMaxHeight>* prev) const {
  prev->fill(nullptr);
  return Descend(
      head_.data(), height_, [key](const Node* n) { return n->key() > key; },
      prev);
}

bool Timeline::Inverted(const Node* newer, const Node* older) {
  return newer->expires_at < older->expires_at;
}

void Timeline::AddPairs(const Node* a, const Node* b, int sign) {
  if (a == nullptr || b == nullptr || !Inverted(a, b)) return;
  if (sign > 0) {
    ++inversions_;
  } else {
    assert(inversions_ > 0);
    --inversions_;
  }
}

void Timeline::BuildExpiryIndex() {
  expiry_index_ = std::make_unique<ExpiryIndex>();
  for (Node* n = head_[0]; n != nullptr; n = n->next[0]) {
    expiry_index_->insert({n->expires_at, n->key()});
  }
}

Timeline::PutResult Timeline::Put(const StoredEntry& entry, size_t cap) {
  assert(entry.ts >= 0);
  assert(cap >= 1);
  const TimelineKey key{entry.ts, entry.activity_id};
  PutResult result{PutOutcome::kInserted, 0};
  Node* const first = head_[0];

  if (first == nullptr || key > newest_key_) {
    // Newer than everything: link in at the head without a search, and
    // without reading the old first node (its key and expiry are cached).
    const int height = HeightFor(key, height_seed_);
    Node* node = NewNode(entry, height);
    for (int i = 0; i < height; ++i) {
      node->next[i] = head_[i];
      head_[i] = node;
    }
    if (height > height_) height_ = height;
    const bool was_sorted = inversions_ == 0;
    if (first == nullptr) {
      tail_ = node;
    } else if (entry.expires_at < newest_expiry_) {
      ++inversions_;
    }
    if (expiry_index_ != nullptr) {
      expiry_index_->insert({entry.expires_at, key});
    }
    if (groups_ != nullptr) groups_->Add(entry);
    ++size_;
    newest_key_ = key;
    newest_expiry_ = entry.expires_at;
    if (first == nullptr) {
      min_expiry_ = entry.expires_at;
    } else if (!(was_sorted && inversions_ == 0)) {
      // Sorted before and after means the tail, and so the minimum, did
      // not change; otherwise work it out.
      if (inversions_ > 0 && expiry_index_ == nullptr) BuildExpiryIndex();
      RefreshCaches();
    }
  } else {
    std::array<Node*, kMaxHeight> prev;
    Node* found = FindGreaterOrEqualPrev(key, &prev);
    if (found != nullptr && found->key() == key) {
      result.outcome = PutOutcome::kReplaced;
      found->actor = entry.actor;
      if (grouped_) {
        const int height = HeightFor(key, height_seed_);
        const GroupKey old_group = GroupOfNode(found, height);
        SetGroupOfNode(found, height, entry.group);
        if (groups_ != nullptr) groups_->Replace(old_group, entry);
      }
      if (found->expires_at != entry.expires_at) {
        Node* before = prev[0];
        Node* after = found->next[0];
        AddPairs(before, found, -1);
        AddPairs(found, after, -1);
        if (expiry_index_ != nullptr) {
          expiry_index_->erase({found->expires_at, key});
          expiry_index_->insert({entry.expires_at, key});
        }
        found->expires_at = entry.expires_at;
        AddPairs(before, found, +1);
        AddPairs(found, after, +1);
      }
      if (inversions_ > 0 && expiry_index_ == nullptr) BuildExpiryIndex();
      RefreshCaches();
      return result;
    }
    if (found == nullptr && size_ >= cap) {
      // Older than every entry of a full timeline: it would be trimmed at
      // once, so do not store it at all.
      result.outcome = PutOutcome::kRejectedByCap;
      return result;
    }
    const int height = HeightFor(key, height_seed_);
    if (height > height_) height_ = height;  // prev[] above was the head
    Node* node = NewNode(entry, height);
    for (int i = 0; i < height; ++i) {
      node->next[i] = NextAt(prev[i], i);
      SetNextAt(prev[i], i, node);
    }
    Node* before = prev[0];
    Node* after = node->next[0];
    AddPairs(before, after, -1);
    AddPairs(before, node, +1);
    AddPairs(node, after, +1);
    if (after == nullptr) tail_ = node;
    if (expiry_index_ != nullptr) {
      expiry_index_->insert({entry.expires_at, key});
    }
    if (groups_ != nullptr) groups_->Add(entry);
    ++size_;
    if (inversions_ > 0 && expiry_index_ == nullptr) BuildExpiryIndex();
    RefreshCaches();
  }
  while (size_ > cap) {
    RemoveOldest();
    ++result.trimmed;
  }
  return result;
}

void Timeline::Unlink(Node* node, const std::array<Node*, kMaxHeight>& prev) {
  const int height = HeightFor(node->key(), height_seed_);
  for (int i = 0; i < height; ++i) {
    assert(NextAt(prev[i], i) == node);
    SetNextAt(prev[i], i, node->next[i]);
  }
  Node* before = prev[0];
  Node* after = node->next[0];
  AddPairs(before, node, -1);
  AddPairs(node, after, -1);
  AddPairs(before, after, +1);
  if (after == nullptr) tail_ = before;
  if (expiry_index_ != nullptr) {
    expiry_index_->erase({node->expires_at, node->key()});
  }
  --size_;
  FreeNode(node, height);
  while (height_ > 1 && head_[height_ - 1] == nullptr) --height_;
  RefreshCaches();
}

void Timeline::RemoveOldest() {
  assert(tail_ != nullptr);
  std::array<Node*, kMaxHeight> prev;
  Node* node = FindGreaterOrEqualPrev(tail_->key(), &prev);
  assert(node == tail_);
  Unlink(node, prev);
}

bool Timeline::Remove(TimelineKey key) {
  std::array<Node*, kMaxHeight> prev;
  Node* node = FindGreaterOrEqualPrev(key, &prev);
  if (node == nullptr || node->key() != key) return false;
  Unlink(node, prev);
  return true;
}

void Timeline::Collect(ReadOrder order, TimelineKey lo, TimelineKey hi,
                       Micros now, size_t want,
                       std::vector<StoredEntry>* out) const {
  if (want == 0 || lo > hi || size_ == 0) return;
  if (order == ReadOrder::kOldestFirst) {
    CollectOldestFirst(lo, hi, now, want, out);
    return;
  }
  std::array<Node*, kMaxHeight> prev;
  Node* node = Descend(
      head_.data(), height_, [hi](const Node* n) { return n->key() > hi; },
      &prev);
  if (height_ > 1) {
    Node* const express = prev[1] == nullptr ? head_[1] : prev[1]->next[1];
    PrefetchRun(node, express, lo, want);
  }
  for (size_t taken = 0; node != nullptr && taken < want && node->key() >= lo;
       node = node->next[0]) {
    if (node->expires_at > now) {
      out->push_back(EntryOf(node));
      ++taken;
    }
  }
}

void Timeline::PrefetchRun(const Node* first, const Node* express,
                           TimelineKey lo, size_t want) {
  // Segment j runs from starts[j] up to (not including) starts[j + 1]; the
  // starts after the first are the level-1 nodes from `express` on. With
  // p = 1/4 a segment holds four entries on average, so this many cover
  // `want` entries but for an unlucky draw, which the caller's walk then
  // finishes on its own.
  constexpr size_t kMaxSegments = 64;
  const size_t segments = std::min(kMaxSegments, want / 4 + 4);
  std::array<const Node*, kMaxSegments + 1> starts;
  size_t count = 0;
  starts[count++] = first;
  for (const Node* e = express;
       e != nullptr && count <= segments && e->key() >= lo; e = e->next[1]) {
    if (e != first) starts[count++] = e;
  }
  // One step of every segment per round: the steps of a round load
  // independent lines, so their misses overlap. A fixed number of rounds
  // keeps the loop free of unpredictable branches; a walker that runs
  // into the next segment only touches lines already on their way, and
  // the rest of a longer segment is left to the caller's walk.
  constexpr int kRounds = 6;
  std::array<const Node*, kMaxSegments + 1> cursors = starts;
  const size_t walkers = count - 1;  // the last start only bounds the walk
  for (int round = 0; round < kRounds; ++round) {
    for (size_t j = 0; j < walkers; ++j) {
      const Node* c = cursors[j];
      if (c == nullptr) continue;  // the list ended
      c = c->next[0];
      if (c != nullptr) __builtin_prefetch(c);
      cursors[j] = c;
    }
  }
}

// The wanted entries are the `want` visible ones just newer than `lo`, but
// links only point to older entries. The search for `lo` leaves, at each
// level, the last node newer than `lo`: an anchor roughly 4^level entries
// before `lo`. Walking forward from the lowest anchor that is far enough
// back and keeping the last `want` visible entries seen gives the answer in
// O(log n + want) expected steps.
void Timeline::CollectOldestFirst(TimelineKey lo, TimelineKey hi, Micros now,
                                  size_t want,
                                  std::vector<StoredEntry>* out) const {
  std::array<Node*, kMaxHeight> prev;
  prev.fill(nullptr);
  Descend(
      head_.data(), height_, [lo](const Node* n) { return n->key() >= lo; },
      &prev);
  // First node inside the window from the top; found only if needed.
  Node* upper = nullptr;
  bool upper_known = false;
  std::vector<const Node*> ring(want);
  size_t pushed = 0;
  for (int level = 0;; ++level) {
    Node* anchor = level < height_ ? prev[level] : nullptr;
    Node* node = anchor;
    const bool whole_range = anchor == nullptr || anchor->key() > hi;
    if (whole_range) {
      if (!upper_known) {
        upper = Descend(
            head_.data(), height_,
            [hi](const Node* n) { return n->key() > hi; }, nullptr);
        upper_known = true;
      }
      node = upper;
    }
    pushed = 0;
    for (; node != nullptr && node->key() >= lo; node = node->next[0]) {
      if (node->expires_at > now) ring[pushed++ % want] = node;
    }
    if (whole_range || pushed >= want) break;
  }
  const size_t keep = std::min(pushed, want);
  for (size_t i = 0; i < keep; ++i) {
    out->push_back(EntryOf(ring[(pushed - 1 - i) % want]));
  }
}

size_t Timeline::RemoveActor(EntityId actor, TimelineKey from) {
  // prev[i] tracks the last kept node of height > i seen so far, which is
  // each removed node's predecessor on its levels.
  std::array<Node*, kMaxHeight> prev;
  prev.fill(nullptr);
  size_t removed = 0;
  Node* node = head_[0];
  while (node != nullptr) {
    const int height = HeightFor(node->key(), height_seed_);
    Node* next = node->next[0];
    if (node->actor != actor || node->key() < from) {
      for (int i = 0; i < height; ++i) prev[i] = node;
      node = next;
      continue;
    }
    AddPairs(prev[0], node, -1);
    AddPairs(node, next, -1);
    AddPairs(prev[0], next, +1);
    for (int i = 0; i < height; ++i) SetNextAt(prev[i], i, node->next[i]);
    if (next == nullptr) tail_ = prev[0];
    if (expiry_index_ != nullptr) {
      expiry_index_->erase({node->expires_at, node->key()});
    }
    FreeNode(node, height);
    --size_;
    ++removed;
    node = next;
  }
  while (height_ > 1 && head_[height_ - 1] == nullptr) --height_;
  RefreshCaches();
  return removed;
}

size_t Timeline::EvictExpired(Micros now, size_t budget,
                              std::vector<TimelineKey>* keys) {
  if (budget == 0 || size_ == 0) return 0;
  if (inversions_ == 0) {
    expiry_index_.reset();  // sorted again: the list order is the index
    return EvictSortedSuffix(now, budget, keys);
  }
  const size_t evicted = EvictByIndex(now, budget, keys);
  if (inversions_ == 0) expiry_index_.reset();
  return evicted;
}

// With expiries non-increasing along the list, the expired entries are a
// suffix: find its start with one descent, then unlink node by node from
// the front of the suffix. Each node is, at that moment, directly after
// prev[i] on each of its levels, so unlinking it costs O(its height).
size_t Timeline::EvictSortedSuffix(Micros now, size_t budget,
                                   std::vector<TimelineKey>* keys) {
  std::array<Node*, kMaxHeight> prev;
  prev.fill(nullptr);
  Node* node = Descend(
      head_.data(), height_,
      [now](const Node* n) { return n->expires_at > now; }, &prev);
  size_t evicted = 0;
  while (node != nullptr && evicted < budget) {
    assert(node->expires_at <= now);
    const int height = HeightFor(node->key(), height_seed_);
    Node* next = node->next[0];
    for (int i = 0; i < height; ++i) SetNextAt(prev[i], i, node->next[i]);
    if (keys != nullptr) keys->push_back(node->key());
    FreeNode(node, height);
    ++evicted;
    node = next;
  }
  size_ -= evicted;
  if (node == nullptr) tail_ = prev[0];
  while (height_ > 1 && head_[height_ - 1] == nullptr) --height_;
  RefreshCaches();
  return evicted;
}

size_t Timeline::EvictByIndex(Micros now, size_t budget,
                              std::vector<TimelineKey>* keys) {
  size_t evicted = 0;
  while (evicted < budget && !expiry_index_->empty() &&
         expiry_index_->begin()->first <= now) {
    const TimelineKey key = expiry_index_->begin()->second;
    if (keys != nullptr) keys->push_back(key);
    const bool removed = Remove(key);
    assert(removed);
    (void)removed;
    ++evicted;
  }
  return evicted;
}

void Timeline::RefreshCaches() {
  if (size_ == 0) {
    newest_key_ = {};
    newest_expiry_ = 0;
    min_expiry_ = std::numeric_limits<Micros>::max();
    return;
  }
  newest_key_ = head_[0]->key();
  newest_expiry_ = head_[0]->expires_at;
  min_expiry_ =
      inversions_ == 0 ? tail_->expires_at : expiry_index_->begin()->first;
}
size_t Timeline::index_bytes() const {
  const size_t groups = groups_ != nullptr ? groups_->bytes_used() : 0;
  if (expiry_index_ == nullptr) return groups;
  // btree nodes are at least half full; count the worst case of that.
  return groups + sizeof(ExpiryIndex) +
         2 * expiry_index_->size() * sizeof(ExpiryIndex::value_type);
}

std::vector<StoredEntry> Timeline::Entries() const {
  std::vector<StoredEntry> entries;
  entries.reserve(size_);
  for (Node* n = head_[0]; n != nullptr; n = n->next[0]) {
    entries.push_back(EntryOf(n));
  }
  return entries;
}

bool Timeline::CheckInvariants() const {
  size_t count = 0;
  size_t inversions = 0;
  const Node* last = nullptr;
  int max_height = 0;
  for (const Node* n = head_[0]; n != nullptr; n = n->next[0]) {
    if (last != nullptr) {
      if (!(last->key() > n->key())) return false;
      if (Inverted(last, n)) ++inversions;
    }
    max_height = std::max(max_height, HeightFor(n->key(), height_seed_));
    last = n;
    ++count;
  }
  if (count != size_ || last != tail_ || inversions != inversions_) {
    return false;
  }
  if (max_height > height_ || height_ < 1 || height_ > kMaxHeight) {
    return false;
  }
  if (size_ > 0 && head_[height_ - 1] == nullptr) return false;
  for (int level = height_; level < kMaxHeight; ++level) {
    if (head_[level] != nullptr) return false;
  }
  // Each upper level must be exactly the nodes of level 0 that are tall
  // enough, in the same order.
  for (int level = 1; level < height_; ++level) {
    const Node* upper = head_[level];
    for (const Node* n = head_[0]; n != nullptr; n = n->next[0]) {
      if (HeightFor(n->key(), height_seed_) > level) {
        if (upper != n) return false;
        upper = upper->next[level];
      }
    }
    if (upper != nullptr) return false;
  }
  if (inversions_ > 0 && expiry_index_ == nullptr) return false;
  if (size_ > 0 && (newest_key_ != head_[0]->key() ||
                    newest_expiry_ != head_[0]->expires_at)) {
    return false;
  }
  Micros min_expiry = std::numeric_limits<Micros>::max();
  for (const Node* n = head_[0]; n != nullptr; n = n->next[0]) {
    min_expiry = std::min(min_expiry, n->expires_at);
  }
  if (min_expiry != min_expiry_) return false;
  if (expiry_index_ != nullptr) {
    if (expiry_index_->size() != size_) return false;
    for (const Node* n = head_[0]; n != nullptr; n = n->next[0]) {
      if (!expiry_index_->contains({n->expires_at, n->key()})) return false;
    }
  }
  if (groups_ != nullptr &&
      (groups_->entry_count() != size_ || !groups_->CheckInvariants())) {
    return false;
  }
  return true;
}

}  // namespace feedcore::internal
