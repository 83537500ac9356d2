// Node heights for the skiplists (timelines, leaderboard partitions),
// derived from a hash of the node's key so that they need not be stored.
#ifndef FEEDCORE_SRC_TIMELINE_SKIPLIST_HEIGHT_H_
#define FEEDCORE_SRC_TIMELINE_SKIPLIST_HEIGHT_H_

#include <cstdint>

namespace feedcore::internal {

// The splitmix64 finalizer: every input bit affects every output bit, which
// is all the height draw needs.
inline uint64_t MixBits(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// 1 + the number of trailing zero pairs of `bits`, capped at `max_height`:
// P(height > h) = 4^-h.
inline int HeightFromBits(uint64_t bits, int max_height) {
  int height = 1;
  while (height < max_height && (bits & 3) == 0) {
    ++height;
    bits >>= 2;
  }
  return height;
}

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_TIMELINE_SKIPLIST_HEIGHT_H_
