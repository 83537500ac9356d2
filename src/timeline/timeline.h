// Timeline: one owner's entries in an unrolled skiplist ordered
// newest-first by (ts, activity_id).
//
// Layout. The entries live in chunks of up to kMaxChunkEntries, one row
// per entry (timeline_chunk.h): a page reads a few contiguous runs of
// memory instead of one node per entry. Chunks are linked newest-first on
// 1..kMaxHeight levels (p = 1/4); a chunk is routed by its oldest key. An
// entry takes 24 bytes (ts, activity id, actor) while its chunk's entries
// share one TTL or one expiry, 32 with an expiry column, 8 more in a grouped
// timeline, 1 more in a chunk holding a kind other than 0, plus its share of
// the chunk's header and links (about 27 bytes per chunk). A growing timeline's
// newest chunk grows by half its capacity until it holds kMaxChunkEntries, so
// short timelines stay small; chunks come from the shard's NodeArena.
//
// Costs. An entry newer than everything is appended to the newest chunk
// and dropping the oldest moves the oldest chunk's start: both O(1) but
// for one chunk allocation or O(log n) unlink every kMaxChunkEntries
// entries. Any other put, remove and seek is O(log n + kMaxChunkEntries).
// A page of k entries is O(log n + k) and touches k / kMaxChunkEntries + 1
// chunks. A full chunk that takes an entry in its middle splits in two;
// chunks are not merged again after removals, so a timeline thinned by
// removals keeps up to one chunk per remaining entry until it is trimmed
// or evicted.
//
// Expiry. While every entry's expiry is no later than that of every newer
// entry (one TTL, entries put in time order: the normal case), the expired
// entries are exactly the oldest ones, cut off from the oldest chunk in
// O(expired). The timeline counts adjacent pairs that break that order;
// while any exist it keeps a secondary index ordered by expiry (built on
// the first inversion, dropped once the timeline is sorted again at an
// eviction), so eviction stays O(expired log n).
//
// Groups. A grouped timeline keeps each entry's group key in a column of
// its chunk; one that is also indexed keeps a GroupIndex of its entries,
// and every way an entry leaves (remove, trim, eviction, removal by actor)
// updates the index, which keeps it exact.
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
#include "absl/types/span.h"
#include "feedcore/options.h"
#include "feedcore/types.h"
#include "memory/node_arena.h"
#include "timeline/group_index.h"
#include "timeline/timeline_chunk.h"

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

  // Stores `entry`, keeping at most `cap` entries by dropping the oldest
  // (after KeepCapPerKind: at most `cap` of each kind, by dropping the
  // oldest of the entry's kind).
  // REQUIRES: entry.ts >= 0, cap >= 1.
  PutResult Put(const StoredEntry& entry, size_t cap);

  // From now on the cap of Put holds per kind: every kind keeps its newest
  // `cap` entries however often other kinds are written. An actor's own
  // feed keeps its entries so, because a follow that delivers only some
  // kinds, merged at read or rebuilt from the own feed, must find every
  // entry its copies would hold. Counts per kind are kept only once an
  // entry of a kind other than 0 arrives. REQUIRES: the timeline is empty.
  void KeepCapPerKind();
  // What the cap of a Put of `kind` compares: the size, or after
  // KeepCapPerKind the entries of that kind held. O(1).
  size_t CappedCount(ActivityKind kind) const {
    if (!cap_per_kind_) return size_;
    return kind_counts_ != nullptr ? (*kind_counts_)[kind]
           : kind == 0             ? size_
                                   : 0;
  }

  // Removes the entry with `key`; false if there is none.
  bool Remove(EntryKey key);

  // Appends to `out` up to `want` entries whose key lies in [lo, hi] and
  // which have not expired at `now` (expires_at > now), in `order`,
  // starting from the end of the range nearest to the first entry of that
  // order (hi for newest-first, lo for oldest-first). Only entries whose
  // kind's bit is set in `kinds` (KindFilter::kinds) count and are copied.
  void Collect(ReadOrder order, EntryKey lo, EntryKey hi, Micros now,
               size_t want, std::vector<StoredEntry>* out,
               uint64_t kinds = KindFilter::kEveryKind) const;

  // How many entries with key >= `lo` have not expired at `now`, counted
  // up to `limit` (the count is min(visible, limit)). Copies nothing: O(k /
  // kMaxChunkEntries + log kMaxChunkEntries) for k counted while no pair
  // of entries breaks the expiry order (then the oldest counted entry of a
  // chunk being visible means all its newer ones are), O(k) otherwise.
  size_t CountVisible(EntryKey lo, Micros now, size_t limit) const;
  // How many of `keys` (ascending, each once) the timeline holds unexpired
  // at `now`. One walk from the newest chunk down to the oldest key's:
  // O(chunks walked + |keys| log kMaxChunkEntries).
  size_t CountHeld(absl::Span<const EntryKey> keys, Micros now) const;

  // Removes every entry whose actor is `actor` and whose key is at least
  // `from`; returns how many. One walk of the chunks, O(n), no descents.
  size_t RemoveActor(EntityId actor, EntryKey from = EntryKey::Min());

  // Removes up to `budget` entries with expires_at <= now; returns how many.
  // With `keys`, appends the key of every entry reclaimed.
  size_t EvictExpired(Micros now, size_t budget,
                      std::vector<EntryKey>* keys = nullptr);

  // The earliest expiry of any entry, or Micros max when empty. O(1).
  Micros MinExpiry() const { return min_expiry_; }

  size_t size() const { return size_; }
  // The chunk that takes an entry newer than all (nullptr when empty).
  const void* newest_chunk() const { return head_[0]; }
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
  std::optional<GroupKey> GroupOf(EntryKey key) const;
  // The same, for changing seen and read state (never entries: those
  // change only through the timeline).
  GroupIndex* mutable_groups() { return groups_.get(); }

  // Every entry, newest first. For tests and snapshots.
  std::vector<StoredEntry> Entries() const;

  // Checks ordering, links, size, tail and the expiry bookkeeping; returns
  // false on the first violation. O(n log n); for tests.
  bool CheckInvariants() const;

  // Height of the chunk first routed by `key` under `seed`: 1 + the
  // number of trailing zero pairs of bits of a hash, capped at kMaxHeight
  // (p = 1/4).
  static int HeightFor(EntryKey key, uint64_t seed);

 private:
  using Chunk = TimelineChunk;
  using Links = std::array<Chunk*, kMaxHeight>;
  // Expiry, then key: the order in which entries expire.
  using ExpiryIndex = absl::btree_set<std::pair<Micros, EntryKey>>;

  // Descends from the top level, moving right while `before(next)` holds.
  // `before` must hold for a prefix of the chunks and not after it. Fills
  // prev[i] (if given) with the last chunk at level i for which it holds
  // (nullptr: the head) and returns the first chunk at level 0 for which it
  // does not.
  template <typename Before>
  static Chunk* Descend(Chunk* const* head, int height, Before before,
                        Links* prev);
  // The first chunk whose oldest key is <= `key` (the one that holds `key`
  // if any does), with its predecessors in `prev`.
  Chunk* FindChunk(EntryKey key, Links* prev) const;
  Chunk* NextAt(Chunk* prev, int level) const;
  void SetNextAt(Chunk* prev, int level, Chunk* next);

  // A chunk with no entries and unset links.
  Chunk* NewChunk(int height, int capacity, bool expiry_column,
                  bool kind_column, Micros shared, bool same_expiry);
  // A chunk sized for `entry`, with the expiry and kind columns only if it
  // needs them.
  Chunk* NewChunkFor(const StoredEntry& entry, int height, int capacity);
  // Moves `chunk`'s entries into a new chunk of `capacity` (from slot 0),
  // linked in its place through `prev`; returns it.
  Chunk* Reshape(Chunk* chunk, const Links& prev, int capacity,
                 bool expiry_column, bool kind_column);
  // Whether `chunk` can hold `entry` without an expiry column it lacks.
  static bool Fits(const Chunk* chunk, const StoredEntry& entry);
  // Whether `chunk` can hold `entry`'s kind without a kind column it lacks.
  static bool FitsKind(const Chunk* chunk, const StoredEntry& entry);
  // Re-decides the shared expiry of a chunk of one entry so that `entry`
  // fits too, if either form allows; returns whether it now fits.
  static bool Readopt(Chunk* chunk, const StoredEntry& entry);
  void WriteSlot(Chunk* chunk, int slot, const StoredEntry& entry);
  static void CopySlots(const Chunk* from, int from_slot, Chunk* to,
                        int to_slot, int n);
  // Appends the slot's entry as a read returns it (with its group key).
  void AppendEntry(const Chunk* chunk, int slot,
                   std::vector<StoredEntry>* out) const;

  // Expiries of the entries around a position, Micros max or min when the
  // position is at the newest or oldest end.
  static Micros NewerExpiry(const Chunk* chunk, int slot, const Chunk* prev0);
  static Micros OlderExpiry(const Chunk* chunk, int slot);
  // Adds `sign` for the pair (newer, older) if it breaks the expiry order.
  void CountPair(Micros newer, Micros older, int sign);
  void RecountInversions();
  void BuildExpiryIndex();
  // Bookkeeping of a new entry, after it is in place.
  void NoteInserted(const StoredEntry& entry, Micros newer, Micros older);

  void AppendNewest(const StoredEntry& entry);
  // Inserts `entry` in `chunk` before `slot` (after the older entries).
  void InsertAt(Chunk* chunk, int slot, Links& prev, const StoredEntry& entry);
  // Splits the full `chunk`; the newer half goes to a new chunk linked
  // before it. Returns that chunk.
  Chunk* Split(Chunk* chunk, Links& prev);
  void ReplaceAt(Chunk* chunk, int slot, const Links& prev,
                 const StoredEntry& entry);
  // Takes the entry at `slot`, whose neighbours expire at `newer` and
  // `older`, out of the size, the inversion count and the indexes; the
  // caller then takes it out of its chunk.
  void ForgetEntry(const Chunk* chunk, int slot, Micros newer, Micros older);
  void RemoveAt(Chunk* chunk, int slot, const Links& prev);
  void RemoveOldest();
  // Removes the oldest entry of `kind` and returns its key.
  // REQUIRES: CappedCount(kind) > 0 after KeepCapPerKind.
  EntryKey RemoveOldestOfKind(ActivityKind kind);
  // Adds `sign` to the count of `kind` after KeepCapPerKind; call before
  // size_ changes (the first kind other than 0 counts the held entries as
  // kind 0).
  void CountKind(ActivityKind kind, int sign);
  size_t EvictSortedSuffix(Micros now, size_t budget,
                           std::vector<EntryKey>* keys);
  size_t EvictByIndex(Micros now, size_t budget, std::vector<EntryKey>* keys);
  void CollectOldestFirst(EntryKey lo, EntryKey hi, Micros now, size_t want,
                          uint64_t kinds, std::vector<StoredEntry>* out) const;
  // Recompute the cached newest key/expiry and earliest expiry after a
  // change that may have moved them.
  void RefreshCaches();
  // Only the earliest expiry, after a change that left the newest entry.
  // REQUIRES: not empty.
  void RefreshMinExpiry();
  void ShrinkHeight();

  // Fields the common insert touches come first, so that a record spans as
  // few cache lines as possible on that path.
  NodeArena* const arena_;
  const uint64_t height_seed_;
  // Copies of the newest entry's key and expiry, and of the earliest
  // expiry, so that the common insert and the engine's expiry bookkeeping
  // need not search.
  EntryKey newest_key_{};
  Micros newest_expiry_ = 0;
  size_t size_ = 0;
  // Adjacent (newer, older) pairs where the newer expires first.
  size_t inversions_ = 0;
  int height_ = 1;  // levels in use
  std::unique_ptr<ExpiryIndex> expiry_index_;
  Micros min_expiry_ = std::numeric_limits<Micros>::max();
  Chunk* tail_ = nullptr;  // the oldest chunk
  Links head_{};
  // Set by EnableGroups: chunks carry a group column.
  bool grouped_ = false;
  // Set by KeepCapPerKind.
  bool cap_per_kind_ = false;
  // After KeepCapPerKind, from the first entry of a kind other than 0: the
  // entries held of each kind (until then every entry is of kind 0).
  std::unique_ptr<std::array<uint32_t, kMaxActivityKind + 1>> kind_counts_;
  // Null unless EnableGroups(/*index=*/true) was called.
  std::unique_ptr<GroupIndex> groups_;
};

// Defined here for the files that share the timeline's walks.
template <typename Before>
Timeline::Chunk* Timeline::Descend(Chunk* const* head, int height,
                                   Before before, Links* prev) {
  Chunk* x = nullptr;
  for (int level = height - 1; level >= 0; --level) {
    Chunk* next = x == nullptr ? head[level] : x->next[level];
    while (next != nullptr && before(next)) {
      x = next;
      next = x->next[level];
    }
    if (prev != nullptr) (*prev)[level] = x;
  }
  return x == nullptr ? head[0] : x->next[0];
}

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_TIMELINE_TIMELINE_H_
