// NodeArena: a size-class slab allocator for small fixed-size nodes.
//
// Timeline chunks are 72 bytes to 1.4 KiB. The system allocator rounds
// each up and adds a header, and a timeline that grows its newest chunk
// frees one size and asks for a larger one, which glibc's bins serve
// poorly (a fan-out grows thousands of chunks at once). The arena carves
// nodes of exactly the requested size (rounded to 8 bytes) out of 64 KiB
// blocks mapped straight from the OS. A block whose last node is freed is
// kept as its class's one spare, or in a pool of up to kPooledBlocks that
// any class reuses before mapping, or else given back to the OS;
// ReleaseSpareBlocks gives back the spares and the pool, so memory freed
// by eviction really leaves the process.
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

namespace feedcore::internal {

class NodeArena {
 public:
  static constexpr size_t kBlockBytes = 64 * 1024;
  static constexpr size_t kMaxSlabBytes = 2048;
  // Emptied blocks kept mapped for any size class (see ReleaseBlock).
  static constexpr size_t kPooledBlocks = 64;

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
  // Takes an emptied block out of its class and keeps it in the pool, or
  // unmaps it when the pool is full. A timeline that grows its chunks
  // frees blocks of one size class while it fills another; the pool hands
  // the freed memory, already faulted in, to the other class.
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
  // Emptied blocks of no class, linked through their first word; at most
  // kPooledBlocks. Counted in blocks_ and bytes_reserved_.
  void* pool_ = nullptr;
  size_t pooled_ = 0;
  size_t bytes_used_ = 0;
  size_t bytes_reserved_ = 0;
  size_t blocks_ = 0;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_MEMORY_NODE_ARENA_H_
