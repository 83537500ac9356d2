// Timeline's reads: pages in either order, counts and group keys, and
// the copy of every entry.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "timeline/timeline.h"

namespace feedcore::internal {

std::optional<GroupKey> Timeline::GroupOf(EntryKey key) const {
  if (!grouped_) return std::nullopt;
  const Chunk* chunk = Descend(
      head_.data(), height_,
      [key](const Chunk* c) { return c->oldest() > key; }, nullptr);
  if (chunk == nullptr) return std::nullopt;
  const int slot = chunk->LowerSlot(key);
  if (slot == chunk->end || chunk->key(slot) != key) return std::nullopt;
  return chunk->group()[slot];
}

void Timeline::Collect(ReadOrder order, EntryKey lo, EntryKey hi, Micros now,
                       size_t want, std::vector<StoredEntry>* out,
                       uint64_t kinds) const {
  if (want == 0 || lo > hi || size_ == 0) return;
  if (order == ReadOrder::kOldestFirst) {
    CollectOldestFirst(lo, hi, now, want, kinds, out);
    return;
  }
  // A filtered walk tests each entry's kind; an unfiltered one reads no
  // kind column.
  const bool filtered = kinds != KindFilter::kEveryKind;
  const Chunk* chunk = Descend(
      head_.data(), height_, [hi](const Chunk* c) { return c->oldest() > hi; },
      nullptr);
  if (chunk == nullptr) return;
  int slot = chunk->LowerSlot(hi);
  if (slot == chunk->end || chunk->key(slot) != hi) --slot;
  // The span of a full chunk of average height, which a prefetch of the
  // next chunk covers without reading its header first (a prefetch past an
  // allocation's end is harmless).
  const size_t span =
      Chunk::Bytes(2, kMaxChunkEntries, false, grouped_, filtered);
  size_t taken = 0;
  for (;;) {
    const Chunk* next = chunk->next[0];
    if (next != nullptr &&
        taken + static_cast<size_t>(slot - chunk->begin + 1) < want) {
      // The walk goes on into the next chunk: ask for its columns now so
      // that their misses overlap the copying of this one.
      const char* bytes = reinterpret_cast<const char*>(next);
      for (size_t at = 0; at < span; at += 64) __builtin_prefetch(bytes + at);
    }
    // The layout once per chunk, not per entry, and the page grown once
    // per chunk: entries are written through a pointer, which keeps the
    // loop's state in registers.
    const TimelineRow* const rows = chunk->rows();
    const Micros* const expiries =
        chunk->has_expiry_column ? chunk->expiry_column() : nullptr;
    // expires_at = ts x 1 + shared, or ts x 0 + shared: no branch.
    const Micros ts_weight = chunk->same_expiry ? 0 : 1;
    const Micros shared = chunk->shared;
    const GroupKey* const groups = grouped_ ? chunk->group() : nullptr;
    const ActivityKind* const kind_column =
        chunk->has_kind_column ? chunk->kind_column() : nullptr;
    // A filtered walk makes room only for the entries of the kinds kept
    // (one pass over the kind column): growing the page by slots it then
    // gives back would construct and destroy an entry per skipped slot.
    size_t candidates = static_cast<size_t>(slot - chunk->begin + 1);
    if (filtered) {
      if (kind_column == nullptr) {
        candidates = (kinds & 1) != 0 ? candidates : 0;
      } else {
        candidates = 0;
        for (int s = slot; s >= chunk->begin; --s) {
          candidates += (kinds >> kind_column[s]) & 1;
        }
      }
    }
    const size_t room = std::min(want - taken, candidates);
    const size_t base = out->size();
    out->resize(base + room);
    StoredEntry* const page = out->data() + base;
    size_t filled = 0;
    bool below_lo = false;
    for (; slot >= chunk->begin && filled < room; --slot) {
      // A skipped kind needs no other test: an entry below lo is found at
      // the next kept one, or by the chunk's oldest key below.
      const ActivityKind kind =
          kind_column != nullptr ? kind_column[slot] : ActivityKind{0};
      if (filtered && ((kinds >> kind) & 1) == 0) continue;
      const TimelineRow& row = rows[slot];
      if (EntryKey{row.ts, row.activity_id} < lo) {
        below_lo = true;
        break;
      }
      const Micros expires_at =
          expiries != nullptr ? expiries[slot] : row.ts * ts_weight + shared;
      if (expires_at > now) {
        StoredEntry& entry = page[filled++];
        entry.ts = row.ts;
        entry.activity_id = row.activity_id;
        entry.actor = row.actor;
        entry.expires_at = expires_at;
        entry.kind = kind;
        if (groups != nullptr) entry.group = groups[slot];
      }
    }
    out->resize(base + filled);
    taken += filled;
    // Every older chunk lies below lo once this one reaches below it.
    if (below_lo || taken == want || chunk->oldest() < lo) return;
    chunk = chunk->next[0];
    if (chunk == nullptr) return;
    slot = chunk->end - 1;
  }
}

// The wanted entries are the `want` visible ones just newer than `lo`, but
// links only point to older chunks. The search for `lo` leaves, at each
// level, the last chunk entirely newer than `lo`: an anchor roughly
// 4^level chunks before `lo`. Walking forward from the lowest anchor that
// is far enough back and keeping the last `want` visible entries seen gives
// the answer in O(log n + want) expected steps.
size_t Timeline::CountVisible(EntryKey lo, Micros now, size_t limit) const {
  size_t count = 0;
  for (const Chunk* chunk = head_[0]; chunk != nullptr && count < limit;
       chunk = chunk->next[0]) {
    const int first =
        chunk->oldest() >= lo ? chunk->begin : chunk->LowerSlot(lo);
    if (first == chunk->end) break;  // all of it, and all older, below lo
    if (inversions_ == 0 && chunk->expires_at(first) > now) {
      count += static_cast<size_t>(chunk->end - first);
    } else {
      for (int slot = chunk->end - 1; slot >= first && count < limit; --slot) {
        count += chunk->expires_at(slot) > now;
      }
    }
    if (first > chunk->begin) break;  // the older chunks are below lo
  }
  return std::min(count, limit);
}

size_t Timeline::CountHeld(absl::Span<const EntryKey> keys, Micros now) const {
  size_t held = 0;
  size_t left = keys.size();  // keys[0, left) are still to find
  for (const Chunk* chunk = head_[0]; chunk != nullptr && left > 0;
       chunk = chunk->next[0]) {
    while (left > 0 && !(keys[left - 1] < chunk->oldest())) {
      const EntryKey key = keys[--left];
      const int slot = chunk->LowerSlot(key);
      held += slot < chunk->end && chunk->key(slot) == key &&
              chunk->expires_at(slot) > now;
    }
  }
  return held;
}

void Timeline::CollectOldestFirst(EntryKey lo, EntryKey hi, Micros now,
                                  size_t want, uint64_t kinds,
                                  std::vector<StoredEntry>* out) const {
  Links prev;
  prev.fill(nullptr);
  Descend(
      head_.data(), height_, [lo](const Chunk* c) { return c->oldest() >= lo; },
      &prev);
  // The newest slot at or below hi of a chunk whose oldest key is <= hi.
  const auto start_slot = [hi](const Chunk* c) {
    const int slot = c->LowerSlot(hi);
    return slot < c->end && c->key(slot) == hi ? slot : slot - 1;
  };
  struct Position {
    const Chunk* chunk;
    int slot;
  };
  std::vector<Position> ring(want);
  size_t pushed = 0;
  for (int level = 0;; ++level) {
    const Chunk* chunk = level < height_ ? prev[level] : nullptr;
    const bool whole_range = chunk == nullptr || chunk->oldest() > hi;
    if (whole_range) {
      chunk = Descend(
          head_.data(), height_,
          [hi](const Chunk* c) { return c->oldest() > hi; }, nullptr);
    }
    pushed = 0;
    for (int slot = chunk == nullptr ? 0 : start_slot(chunk);
         chunk != nullptr;) {
      if (slot < chunk->begin) {
        chunk = chunk->next[0];
        if (chunk != nullptr) slot = chunk->end - 1;
        continue;
      }
      if (chunk->key(slot) < lo) break;
      if (chunk->expires_at(slot) > now &&
          ((kinds >> chunk->kind(slot)) & 1) != 0) {
        ring[pushed++ % want] = {chunk, slot};
      }
      --slot;
    }
    if (whole_range || pushed >= want) break;
  }
  const size_t keep = std::min(pushed, want);
  for (size_t i = 0; i < keep; ++i) {
    const Position& p = ring[(pushed - 1 - i) % want];
    AppendEntry(p.chunk, p.slot, out);
  }
}

std::vector<StoredEntry> Timeline::Entries() const {
  std::vector<StoredEntry> entries;
  entries.reserve(size_);
  for (const Chunk* c = head_[0]; c != nullptr; c = c->next[0]) {
    for (int s = c->end - 1; s >= c->begin; --s) {
      AppendEntry(c, s, &entries);
    }
  }
  return entries;
}

}  // namespace feedcore::internal
