// Timeline: one owner's entries in a skiplist ordered newest-first by
// (ts, activity_id).
//
// Layout. Each entry is one node: key, actor and expiry (32 bytes) followed
// by its forward links, 1..kMaxHeight pointers (8 bytes each, 1.33 on
// average with p = 1/4). Nodes come from the shard's NodeArena at their
// exact size. A node's height is a hash of its key with a per-engine seed,
// so it is not stored: the same key always has the same height.
//
// Costs. An entry newer than everything links in at the head in O(height),
// O(1) expected; any other put, remove and seek is O(log n). Oldest-first
// reads walk back from the start key using the skip links as anchors,
// O(log n + page) expected, without backward pointers.
//
// Expiry. While every entry's expiry is no later than that of every newer
// entry (one TTL, entries put in time order: the normal case), the expired
// entries are exactly the oldest ones, found by one O(log n) descent and
// cut off in O(expired). The timeline counts adjacent pairs that break that
// order; while any exist it keeps a secondary index ordered by expiry
// (built on the first inversion, dropped once the timeline is sorted again
// at an eviction), so eviction stays O(expired log n).
//
// Groups. A grouped timeline keeps each entry's group key in 8 more bytes
// at the end of its node, after the links; one that is also indexed keeps
// a GroupIndex of its entries, and every way an entry leaves (remove,
// trim, eviction, removal by actor) goes through FreeNode, which keeps the
// index exact.
//
// Thread safety
// -------------
// None. Writes require the owning shard's lock held exclusively; reads
// require it held at least shared.
#ifndef FEEDCORE_SRC_TIMELINE_TIMELINE_H_
#define FEEDCORE_SRC_TIMELINE_TIMELINE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/btree_set.h"
#include "feedcore/options.h"
#include "feedcore/types.h"
#include "memory/node_arena.h"
#include "timeline/group_index.h"
#include "timeline/timeline_key.h"

namespace feedcore::internal {

class Timeline {
 public:
  static constexpr int kMaxHeight = 12;

  enum class PutOutcome {
    kInserted,       // a new key
    kReplaced,       // the key existed; actor and expiry overwritten
    kRejectedByCap,  // timeline full and the entry older than all of it
  };
  struct PutResult {
    PutOutcome outcome;
    size_t trimmed = 0;  // oldest entries dropped to respect the cap
  };

  // `arena` must outlive the timeline. `height_seed` decides node heights.
  Timeline(NodeArena* arena, uint64_t height_seed);
  // Returns every node to the arena.
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // Stores `entry`, keeping at most `cap` entries by dropping the oldest.
  // REQUIRES: entry.ts >= 0, cap >= 1.
  PutResult Put(const StoredEntry& entry, size_t cap);

  // Removes the entry with `key`; false if there is none.
  bool Remove(TimelineKey key);

  // Appends to `out` up to `want` entries whose key lies in [lo, hi] and
  // which have not expired at `now` (expires_at > now), in `order`,
  // starting from the end of the range nearest to the first entry of that
  // order (hi for newest-first, lo for oldest-first).
  void Collect(ReadOrder order, TimelineKey lo, TimelineKey hi, Micros now,
               size_t want, std::vector<StoredEntry>* out) const;

  // Removes every entry whose actor is `actor` and whose key is at least
  // `from`; returns how many. One walk of the list, O(n + removed x
  // height), no descents.
  size_t RemoveActor(EntityId actor, TimelineKey from = TimelineKey::Min());

  // Removes up to `budget` entries with expires_at <= now; returns how many.
  // With `keys`, appends the key of every entry reclaimed.
  size_t EvictExpired(Micros now, size_t budget,
                      std::vector<TimelineKey>* keys = nullptr);

  // The earliest expiry of any entry, or Micros max when empty. O(1).
  Micros MinExpiry() const { return min_expiry_; }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Bytes of the secondary expiry index and of the group index, if any
  // (nodes are counted by the arena).
  size_t index_bytes() const;
  bool has_expiry_index() const { return expiry_index_ != nullptr; }

  // Keeps the group key of every entry from now on, and with `index` also
  // indexes entries by it (see group_index.h); until then group keys are
  // dropped and read back as 0. REQUIRES: the timeline is empty.
  void EnableGroups(bool index);
  // The group index, or nullptr if the timeline is not indexed.
  const GroupIndex* groups() const { return groups_.get(); }
  // The group key of the entry `key`, or nullopt if there is no such entry
  // or the timeline keeps no group keys. O(log n).
  std::optional<GroupKey> GroupOf(TimelineKey key) const;
  // The same, for changing seen and read state (never entries: those
  // change only through the timeline).
  GroupIndex* mutable_groups() { return groups_.get(); }

  // Every entry, newest first. For tests and snapshots.
  std::vector<StoredEntry> Entries() const;

  // Checks ordering, links, size, tail and the expiry bookkeeping; returns
  // false on the first violation. O(n log n); for tests.
  bool CheckInvariants() const;

  // Height of the node for `key` under `seed`: 1 + the number of trailing
  // zero pairs of bits of a hash, capped at kMaxHeight (p = 1/4).
  static int HeightFor(TimelineKey key, uint64_t seed);

 private:
  struct Node;
  // Expiry, then key: the order in which entries expire.
  using ExpiryIndex = absl::btree_set<std::pair<Micros, TimelineKey>>;

  // Descends from the top level, moving right while `before(next)` holds.
  // `before` must hold for a prefix of the list and not after it. Fills
  // prev[i] (if given) with the last node at level i for which it holds
  // (nullptr: the head) and returns the first node at level 0 for which it
  // does not.
  template <typename Before>
  static Node* Descend(Node* const* head, int height, Before before,
                       std::array<Node*, kMaxHeight>* prev);
  // Bytes of a node of `height`, with its group key if the timeline is
  // grouped.
  size_t NodeBytes(int height) const;
  static GroupKey GroupOfNode(const Node* node, int height);
  static void SetGroupOfNode(Node* node, int height, GroupKey group);
  Node* NewNode(const StoredEntry& entry, int height);
  // The node's entry as a read returns it (with its group key).
  StoredEntry EntryOf(const Node* node) const;
  void FreeNode(Node* node, int height);
  // Fills prev[i] with the last node at level i whose key is greater than
  // (newer than) `key`, or nullptr meaning the head. Returns the first node
  // at level 0 whose key is <= key (or nullptr).
  Node* FindGreaterOrEqualPrev(TimelineKey key,
                               std::array<Node*, kMaxHeight>* prev) const;
  Node* NextAt(Node* prev, int level) const;
  void SetNextAt(Node* prev, int level, Node* next);
  void Unlink(Node* node, const std::array<Node*, kMaxHeight>& prev);
  void RemoveOldest();
  // Whether the pair (newer, older) breaks the expiry order.
  static bool Inverted(const Node* newer, const Node* older);
  void AddPairs(const Node* a, const Node* b, int sign);
  void BuildExpiryIndex();
  size_t EvictSortedSuffix(Micros now, size_t budget,
                           std::vector<TimelineKey>* keys);
  size_t EvictByIndex(Micros now, size_t budget,
                      std::vector<TimelineKey>* keys);
  void CollectOldestFirst(TimelineKey lo, TimelineKey hi, Micros now,
                          size_t want, std::vector<StoredEntry>* out) const;
  // Brings into cache the nodes a newest-first walk of about `want` entries
  // from `first` will read, `express` being the first level-1 node at or
  // after `first` (or null). A walk alone waits for one node at a time;
  // this walks the level-1 links to cut the run into segments, then
  // steps through all segments at once, so that their misses overlap.
  static void PrefetchRun(const Node* first, const Node* express,
                          TimelineKey lo, size_t want);
  // Recompute the cached newest key/expiry and earliest expiry after a
  // change that may have moved them.
  void RefreshCaches();

  // Fields the common insert touches come first, so that a record spans as
  // few cache lines as possible on that path.
  NodeArena* const arena_;
  const uint64_t height_seed_;
  // Copies of the first node's key and expiry, and of the earliest expiry,
  // so that the common insert (newer than everything) and the engine's
  // expiry bookkeeping touch neither the first nor the last node.
  TimelineKey newest_key_{};
  Micros newest_expiry_ = 0;
  size_t size_ = 0;
  // Adjacent (newer, older) pairs where the newer expires first.
  size_t inversions_ = 0;
  int height_ = 1;  // levels in use
  std::unique_ptr<ExpiryIndex> expiry_index_;
  Micros min_expiry_ = std::numeric_limits<Micros>::max();
  Node* tail_ = nullptr;  // the oldest entry
  std::array<Node*, kMaxHeight> head_{};
  // Set by EnableGroups: nodes carry a group key.
  bool grouped_ = false;
  // Null unless EnableGroups(/*index=*/true) was called.
  std::unique_ptr<GroupIndex> groups_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_TIMELINE_TIMELINE_H_
