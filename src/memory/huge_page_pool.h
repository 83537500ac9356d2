// HugePagePool: fixed-size, 64-byte aligned slots for the many equal nodes
// of a structure that can grow large: the leaves of one leaderboard's
// trees (all its partitions share the pool).
//
// The first `direct_bytes` of live slots come from operator new, so a small
// structure costs what it did without the pool. Past that, slots are
// carved from 2 MiB chunks mapped 2 MiB aligned and marked for transparent
// huge pages (see mapped_memory.h for why); a slot finds its chunk by
// masking its address. A freed slot is reused before any new memory is
// taken; a chunk whose last slot is freed goes back to the OS, except one
// empty chunk kept so that a structure breathing around a chunk boundary
// does not map and unmap every time. Under AddressSanitizer every slot
// comes from operator new, so that ASan sees each one as an allocation.
//
// Thread safety
// -------------
// Every call is thread-safe. Allocate and Free hold one mutex for a few
// instructions, and are called only when a node is created or destroyed
// (a leaf split or merge, not every write). It is a leaf lock: callers may
// hold their own locks (a partition's), and nothing is locked while it is
// held.
#ifndef FEEDCORE_SRC_MEMORY_HUGE_PAGE_POOL_H_
#define FEEDCORE_SRC_MEMORY_HUGE_PAGE_POOL_H_

#include <cstddef>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "base/mutex.h"
#include "memory/mapped_memory.h"

namespace feedcore::internal {

class HugePagePool {
 public:
  static constexpr size_t kChunkBytes = kHugePageBytes;

  // Slots of `slot_bytes`: a multiple of 64, at most a quarter of a chunk.
  HugePagePool(size_t slot_bytes, size_t direct_bytes = kChunkBytes);
  // Unmaps every chunk. REQUIRES: every slot was freed.
  ~HugePagePool();
  HugePagePool(const HugePagePool&) = delete;
  HugePagePool& operator=(const HugePagePool&) = delete;

  // Uninitialized storage for one slot, 64-byte aligned. Never null: throws
  // std::bad_alloc when no memory can be had.
  void* Allocate();
  // REQUIRES: `slot` came from this pool's Allocate and was not freed yet.
  void Free(void* slot);

  size_t slot_bytes() const { return slot_bytes_; }
  // Chunks mapped now (for tests and memory accounting).
  size_t chunks() const;
  // Slots handed out and not freed, from chunks and from operator new.
  size_t live_slots() const;

 private:
  struct FreeSlot {
    FreeSlot* next;
  };
  // At the start of every chunk; the slots follow on the next line.
  struct Chunk {
    Chunk* prev = nullptr;  // in available_
    Chunk* next = nullptr;
    FreeSlot* free_list = nullptr;
    uint32_t never_used = 0;  // index of the first slot never handed out
    uint32_t live = 0;
  };
  static constexpr size_t kHeaderBytes = 64;
  static_assert(sizeof(Chunk) <= kHeaderBytes);

  Chunk* NewChunkLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReleaseChunkLocked(Chunk* chunk) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnlinkLocked(Chunk* chunk) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PushAvailableLocked(Chunk* chunk) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasRoom(const Chunk* chunk) const;

  const size_t slot_bytes_;
  const size_t direct_bytes_;
  const uint32_t slots_per_chunk_;
  // LeaderboardImpl names mu_ to order its partition locks before it.
  friend class LeaderboardImpl;
  // Taken exclusively (WriterLock) by every call but the counters.
  mutable SharedMutex mu_;
  // The chunks' start addresses, to tell a chunk's slot from one that
  // operator new gave.
  absl::flat_hash_set<uintptr_t> chunks_ ABSL_GUARDED_BY(mu_);
  // Chunks with a free or never-used slot, the most recently freed into
  // first.
  Chunk* available_ ABSL_GUARDED_BY(mu_) = nullptr;
  size_t empty_chunks_ ABSL_GUARDED_BY(mu_) = 0;
  size_t direct_slots_ ABSL_GUARDED_BY(mu_) = 0;  // from operator new
  size_t chunk_slots_ ABSL_GUARDED_BY(mu_) = 0;   // live in chunks
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_MEMORY_HUGE_PAGE_POOL_H_
