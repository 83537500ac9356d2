// NodeArena: a size-class slab allocator for small fixed-size nodes.
//
// Timeline chunks are 72 bytes to 1.4 KiB. The system allocator rounds
// each up and adds a header, and a timeline that grows its newest chunk
// frees one size and asks for a larger one, which glibc's bins serve
// poorly (a fan-out grows thousands of chunks at once). The arena carves
// nodes of exactly the requested size (rounded to 8 bytes) out of 64 KiB
// blocks. A block whose last node is freed is kept as its class's one
// spare, or else in a pool that any class reuses; ReleaseSpareBlocks, which
// every eviction pass calls, gives the memory of the spares and the pool
// back to the OS, so memory freed by eviction really leaves the process
// and what a burst freed is held until the next pass at most.
//
// Blocks come from regions mapped straight from the OS, each half as large
// as what the arena has mapped so far, from one block up to 2 MiB: a small
// arena maps little, and a large one maps a region per 32 blocks, aligned
// and marked for transparent huge pages (mapped_memory.h), instead of three
// system calls and sixteen page faults per block. A large engine's puts
// land on random timelines, and with huge pages their chunks' addresses
// mostly hit the TLB. A block given back keeps its first page (its link in
// the list of given-back blocks) and its address range, which the next
// block taken reuses before a region is carved further; regions are
// unmapped only with the arena.
//
// Requests larger than kMaxSlabBytes go to operator new. Under
// AddressSanitizer every request does, so that ASan sees each node as its
// own allocation and catches overruns and use-after-free.
//
// Thread safety
// -------------
// None: every call requires external synchronization (the owning shard's
// lock).
#ifndef FEEDCORE_SRC_MEMORY_NODE_ARENA_H_
#define FEEDCORE_SRC_MEMORY_NODE_ARENA_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace feedcore::internal {

class NodeArena {
 public:
  static constexpr size_t kBlockBytes = 64 * 1024;
  static constexpr size_t kMaxSlabBytes = 2048;

  NodeArena() = default;
  // Returns every block to the OS; slab nodes still allocated become
  // invalid. REQUIRES: every allocation that went to operator new (over
  // kMaxSlabBytes, or any under AddressSanitizer) was freed, since the
  // arena does not track those.
  ~NodeArena();
  NodeArena(const NodeArena&) = delete;
  NodeArena& operator=(const NodeArena&) = delete;

  // Returns 8-byte aligned storage for `bytes` bytes (> 0). Never null:
  // failure to get memory from the OS throws std::bad_alloc.
  void* Allocate(size_t bytes);
  // REQUIRES: `p` came from Allocate(bytes) on this arena, with the same
  // `bytes`, and was not freed yet.
  void Free(void* p, size_t bytes);

  // Bytes handed out and not yet freed (rounded up to 8).
  size_t bytes_used() const { return bytes_used_; }
  // Bytes held from the OS or operator new on behalf of the callers.
  size_t bytes_reserved() const { return bytes_reserved_; }
  size_t blocks() const { return blocks_; }
  // Address space mapped from the OS for blocks, in use or not: at least
  // bytes_reserved() of slab blocks; only what blocks in use touched (and
  // the first page of each given-back block) is backed by memory.
  size_t bytes_mapped() const { return mapped_bytes_; }

  // Gives back to the OS the empty blocks kept to absorb alloc/free churn
  // (the spares and the pool). Called after eviction passes.
  void ReleaseSpareBlocks();

 private:
  struct Block;
  struct FreeSlot {
    FreeSlot* next;
  };
  static constexpr size_t kClasses = kMaxSlabBytes / 8 + 1;

  Block* NewBlock(size_t class_index);
  // The memory of a new block: a given-back block, or the next one of the
  // current region (mapping a new region when it is used up).
  void* TakeBlockMemory();
  // Gives the memory of an emptied block back to the OS, keeping its
  // address range for TakeBlockMemory.
  void GiveBack(void* block);
  // Takes an emptied block out of its class and keeps it in the pool. A
  // timeline that grows its chunks frees blocks of one size class while it
  // fills another; the pool hands the freed memory, already faulted in, to
  // the other class.
  void ReleaseBlock(Block* block);
  // An emptied block from the pool, or nullptr when the pool is empty.
  void* PopPooled();
  static void Unlink(Block** list, Block* block);
  static void PushFront(Block** list, Block* block);

  // Per size class, the blocks that have at least one free slot.
  std::array<Block*, kClasses> available_{};
  // Per size class, the blocks that are full (kept so the destructor can
  // release them).
  std::array<Block*, kClasses> full_{};
  // Per size class, at most one block that became empty and was kept.
  std::array<Block*, kClasses> spare_{};
  // Emptied blocks of no class, linked through their first word. Counted
  // in blocks_ and bytes_reserved_.
  void* pool_ = nullptr;
  // Given-back blocks: only their first page is backed, which holds the
  // link to the next one.
  void* given_back_ = nullptr;
  // The part of the newest region not carved into blocks yet.
  char* region_next_ = nullptr;
  char* region_end_ = nullptr;
  // Every region, to unmap with the arena.
  std::vector<std::pair<void*, size_t>> regions_;
  size_t mapped_bytes_ = 0;
  size_t bytes_used_ = 0;
  size_t bytes_reserved_ = 0;
  size_t blocks_ = 0;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_MEMORY_NODE_ARENA_H_
