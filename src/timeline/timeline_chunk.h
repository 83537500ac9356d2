// TimelineChunk: one node of a timeline's unrolled skiplist, a block of up
// to kMaxChunkEntries entries.
//
// Layout (all 8-byte aligned, one allocation):
//   header      16 bytes: height, capacity, begin, end, expiry layout,
//               shared expiry
//   links       height x 8 bytes, newest-first order, one per level
//   rows        capacity x 24 bytes: ts, activity id, actor
//   expires_at  capacity x i64, only in a chunk with an expiry column
//   group       capacity x u64, only in a grouped timeline's chunks
//   kind        capacity x u8 rounded up to 8 bytes, only in a chunk that
//               has held an entry of a kind other than 0
//
// An entry's fields sit together in one row, so that a put into a cold
// timeline (a fan-out writes to thousands) touches one line of the chunk
// besides its header. Slots [begin, end) hold entries in ascending key
// order (oldest first), so that the newest entry is appended at `end` and
// the oldest dropped by moving `begin`: the two ends a capped, time-ordered
// feed touches.
//
// Expiry. Nearly every entry of a feed expires a fixed TTL after its
// timestamp (expires_at = ts + shared), or entries written together share
// one expiry (expires_at = shared): a chunk stores that one value for all
// its entries and no expiry column. The second entry decides which of the
// two the chunk keeps; the first entry that fits neither makes the timeline
// reallocate the chunk with the column.
//
// Kinds. A chunk whose entries are all of kind 0 (every entry, in a
// program that uses no kinds) has no kind column; the first entry of
// another kind makes the timeline reallocate the chunk with one.
//
// Thread safety: none; the owning Timeline's rules apply.
#ifndef FEEDCORE_SRC_TIMELINE_TIMELINE_CHUNK_H_
#define FEEDCORE_SRC_TIMELINE_TIMELINE_CHUNK_H_

#include <cstddef>
#include <cstdint>

#include "feedcore/types.h"

namespace feedcore::internal {

// At most 255 so that slots fit a byte; 32 entries keep a chunk's columns
// within 13 cache lines and a shift in the middle short.
inline constexpr int kMaxChunkEntries = 32;

struct TimelineRow {
  Micros ts;
  ActivityId activity_id;
  EntityId actor;
};

struct TimelineChunk {
  uint8_t height;    // links
  uint8_t capacity;  // slots
  uint8_t begin;     // slot of the oldest entry
  uint8_t end;       // one past the slot of the newest entry
  uint8_t has_expiry_column;
  uint8_t grouped;      // has a group column
  uint8_t same_expiry;  // without an expiry column: see `shared`
  uint8_t has_kind_column;
  // Without an expiry column: every entry's expires_at - ts, or with
  // `same_expiry` every entry's expires_at.
  Micros shared;
  TimelineChunk* next[1];  // `height` of them

  static size_t Bytes(int height, int capacity, bool expiry_column,
                      bool grouped, bool kind_column) {
    const size_t columns = (expiry_column ? 1 : 0) + (grouped ? 1 : 0);
    const size_t slots = static_cast<size_t>(capacity);
    return offsetof(TimelineChunk, next) +
           sizeof(TimelineChunk*) * static_cast<size_t>(height) +
           (sizeof(TimelineRow) + sizeof(int64_t) * columns) * slots +
           (kind_column ? (slots + 7) & ~size_t{7} : 0);
  }
  // What a chunk takes from the arena: past 128 bytes its size is rounded
  // up to 64 bytes (NewChunk fills the rounding with slots), so that
  // chunks fall into few of the arena's size classes.
  static size_t AllocationBytes(size_t bytes) {
    return bytes <= 128 ? bytes : (bytes + 63) & ~size_t{63};
  }
  size_t bytes() const {
    return AllocationBytes(Bytes(height, capacity, has_expiry_column != 0,
                                 grouped != 0, has_kind_column != 0));
  }
  int count() const { return end - begin; }
  bool full() const { return begin == 0 && end == capacity; }

  TimelineRow* rows() { return reinterpret_cast<TimelineRow*>(next + height); }
  const TimelineRow* rows() const {
    return reinterpret_cast<const TimelineRow*>(next + height);
  }
  // Only with has_expiry_column.
  Micros* expiry_column() {
    return reinterpret_cast<Micros*>(rows() + capacity);
  }
  const Micros* expiry_column() const {
    return reinterpret_cast<const Micros*>(rows() + capacity);
  }
  // Only with grouped.
  GroupKey* group() {
    return reinterpret_cast<GroupKey*>(rows() + capacity) +
           (has_expiry_column ? capacity : 0);
  }
  const GroupKey* group() const {
    return reinterpret_cast<const GroupKey*>(rows() + capacity) +
           (has_expiry_column ? capacity : 0);
  }

  // Only with has_kind_column.
  ActivityKind* kind_column() {
    return reinterpret_cast<ActivityKind*>(rows() + capacity) +
           sizeof(int64_t) * capacity *
               ((has_expiry_column ? 1 : 0) + (grouped ? 1 : 0));
  }
  const ActivityKind* kind_column() const {
    return reinterpret_cast<const ActivityKind*>(rows() + capacity) +
           sizeof(int64_t) * capacity *
               ((has_expiry_column ? 1 : 0) + (grouped ? 1 : 0));
  }
  ActivityKind kind(int slot) const {
    return has_kind_column ? kind_column()[slot] : ActivityKind{0};
  }

  EntryKey key(int slot) const {
    return {rows()[slot].ts, rows()[slot].activity_id};
  }
  Micros expires_at(int slot) const {
    if (has_expiry_column) return expiry_column()[slot];
    return same_expiry ? shared : rows()[slot].ts + shared;
  }
  EntryKey oldest() const { return key(begin); }
  EntryKey newest() const { return key(end - 1); }

  // The first slot in [begin, end) whose key is >= `k` (end if none).
  int LowerSlot(EntryKey k) const {
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
