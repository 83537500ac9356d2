// TimelineChunk: one node of a timeline's unrolled skiplist, a block of up
// to kMaxChunkEntries entries stored by column.
//
// Layout (all 8-byte aligned, one allocation):
//   header      16 bytes: height, capacity, begin, end, expiry layout,
//               shared expiry
//   links       height x 8 bytes, newest-first order, one per level
//   ts          capacity x i64
//   activity    capacity x u64
//   actor       capacity x u64
//   expires_at  capacity x i64, only in a chunk with an expiry column
//   group       capacity x u64, only in a grouped timeline's chunks
//
// Slots [begin, end) hold entries in ascending key order (oldest first),
// so that the newest entry is appended at `end` and the oldest dropped by
// moving `begin`: the two ends a capped, time-ordered feed touches.
//
// Expiry. Nearly every entry of a feed expires a fixed TTL after its
// timestamp (expires_at = ts + shared), or entries written together share
// one expiry (expires_at = shared): a chunk stores that one value for all
// its entries and no expiry column. The second entry decides which of the
// two the chunk keeps; the first entry that fits neither makes the timeline
// reallocate the chunk with the column.
//
// Thread safety: none; the owning Timeline's rules apply.
#ifndef FEEDCORE_SRC_TIMELINE_TIMELINE_CHUNK_H_
#define FEEDCORE_SRC_TIMELINE_TIMELINE_CHUNK_H_

#include <cstddef>
#include <cstdint>

#include "feedcore/types.h"
#include "timeline/timeline_key.h"

namespace feedcore::internal {

// At most 255 so that slots fit a byte; 32 entries keep a chunk's columns
// within 13 cache lines and a shift in the middle short.
inline constexpr int kMaxChunkEntries = 32;

struct TimelineChunk {
  uint8_t height;    // links
  uint8_t capacity;  // slots per column
  uint8_t begin;     // slot of the oldest entry
  uint8_t end;       // one past the slot of the newest entry
  uint8_t has_expiry_column;
  uint8_t grouped;      // has a group column
  uint8_t same_expiry;  // without an expiry column: see `shared`
  uint8_t unused;
  // Without an expiry column: every entry's expires_at - ts, or with
  // `same_expiry` every entry's expires_at.
  Micros shared;
  TimelineChunk* next[1];  // `height` of them

  static size_t Bytes(int height, int capacity, bool expiry_column,
                      bool grouped) {
    const size_t columns = 3 + (expiry_column ? 1 : 0) + (grouped ? 1 : 0);
    return offsetof(TimelineChunk, next) +
           sizeof(TimelineChunk*) * static_cast<size_t>(height) +
           sizeof(int64_t) * columns * static_cast<size_t>(capacity);
  }
  size_t bytes() const {
    return Bytes(height, capacity, has_expiry_column != 0, grouped != 0);
  }
  int count() const { return end - begin; }
  bool full() const { return begin == 0 && end == capacity; }

  // Column c (0: ts, 1: activity, 2: actor, then expiry and group as
  // present).
  int64_t* column(int c) {
    return reinterpret_cast<int64_t*>(next + height) +
           static_cast<size_t>(c) * capacity;
  }
  const int64_t* column(int c) const {
    return reinterpret_cast<const int64_t*>(next + height) +
           static_cast<size_t>(c) * capacity;
  }
  int columns() const { return 3 + has_expiry_column + grouped; }

  Micros* ts() { return column(0); }
  const Micros* ts() const { return column(0); }
  ActivityId* activity() { return reinterpret_cast<ActivityId*>(column(1)); }
  const ActivityId* activity() const {
    return reinterpret_cast<const ActivityId*>(column(1));
  }
  EntityId* actor() { return reinterpret_cast<EntityId*>(column(2)); }
  const EntityId* actor() const {
    return reinterpret_cast<const EntityId*>(column(2));
  }
  Micros* expiry_column() { return column(3); }
  GroupKey* group() {
    return reinterpret_cast<GroupKey*>(column(3 + has_expiry_column));
  }
  const GroupKey* group() const {
    return reinterpret_cast<const GroupKey*>(column(3 + has_expiry_column));
  }

  TimelineKey key(int slot) const { return {ts()[slot], activity()[slot]}; }
  Micros expires_at(int slot) const {
    if (has_expiry_column) return column(3)[slot];
    return same_expiry ? shared : ts()[slot] + shared;
  }
  TimelineKey oldest() const { return key(begin); }
  TimelineKey newest() const { return key(end - 1); }

  // The first slot in [begin, end) whose key is >= `k` (end if none).
  int LowerSlot(TimelineKey k) const {
    int lo = begin;
    int hi = end;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (key(mid) < k) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_TIMELINE_TIMELINE_CHUNK_H_
