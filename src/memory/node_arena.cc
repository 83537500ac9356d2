#include "memory/node_arena.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <new>

#include "memory/mapped_memory.h"

namespace feedcore::internal {
namespace {

constexpr bool kUseSlabs = !kAddressSanitizer;

constexpr size_t RoundUp8(size_t bytes) { return (bytes + 7) & ~size_t{7}; }

}  // namespace

struct NodeArena::Block {
  Block* prev = nullptr;
  Block* next = nullptr;
  FreeSlot* free_list = nullptr;
  char* bump = nullptr;  // first never-used slot
  char* end = nullptr;
  uint32_t live = 0;
  uint32_t class_index = 0;
  bool full = false;
};

NodeArena::~NodeArena() {
  for (const auto& [region, bytes] : regions_) Unmap(region, bytes);
}

void NodeArena::Unlink(Block** list, Block* block) {
  if (block->prev != nullptr) {
    block->prev->next = block->next;
  } else {
    *list = block->next;
  }
  if (block->next != nullptr) block->next->prev = block->prev;
  block->prev = block->next = nullptr;
}

void NodeArena::PushFront(Block** list, Block* block) {
  block->prev = nullptr;
  block->next = *list;
  if (*list != nullptr) (*list)->prev = block;
  *list = block;
}

NodeArena::Block* NodeArena::NewBlock(size_t class_index) {
  void* memory = PopPooled();
  if (memory == nullptr) {
    memory = TakeBlockMemory();
    bytes_reserved_ += kBlockBytes;
    ++blocks_;
  }
  Block* block = new (memory) Block;
  block->class_index = static_cast<uint32_t>(class_index);
  block->bump = static_cast<char*>(memory) + RoundUp8(sizeof(Block));
  block->end = static_cast<char*>(memory) + kBlockBytes;
  PushFront(&available_[class_index], block);
  return block;
}

void* NodeArena::TakeBlockMemory() {
  if (given_back_ != nullptr) {
    void* block = given_back_;
    given_back_ = *static_cast<void**>(block);
    return block;
  }
  if (region_next_ == region_end_) {
    // Blocks are aligned to their size, so that a slot finds its block by
    // masking its address; a 2 MiB region is aligned to 2 MiB so that the
    // kernel can back it with one huge page.
    const size_t bytes =
        std::clamp(mapped_bytes_ / 2 / kBlockBytes * kBlockBytes, kBlockBytes,
                   kHugePageBytes);
    regions_.reserve(regions_.size() + 1);
    void* region = MapAligned(
        bytes, bytes == kHugePageBytes ? kHugePageBytes : kBlockBytes);
    if (bytes == kHugePageBytes) AdviseHugePages(region, bytes);
    regions_.emplace_back(region, bytes);
    mapped_bytes_ += bytes;
    region_next_ = static_cast<char*>(region);
    region_end_ = region_next_ + bytes;
  }
  void* block = region_next_;
  region_next_ += kBlockBytes;
  return block;
}

void NodeArena::GiveBack(void* block) {
  *static_cast<void**>(block) = given_back_;
  given_back_ = block;
  Decommit(static_cast<char*>(block) + kPageBytes, kBlockBytes - kPageBytes);
  bytes_reserved_ -= kBlockBytes;
  --blocks_;
}

void* NodeArena::PopPooled() {
  void* block = pool_;
  if (block == nullptr) return nullptr;
  pool_ = *static_cast<void**>(block);
  return block;
}

void NodeArena::ReleaseBlock(Block* block) {
  const size_t c = block->class_index;
  Unlink(block->full ? &full_[c] : &available_[c], block);
  if (spare_[c] == block) spare_[c] = nullptr;
  block->~Block();
  // Pooled until the next ReleaseSpareBlocks (the shard's eviction pass),
  // however many: the followers of a large post grow their newest chunks
  // in step, emptying a whole class's blocks while the next class fills,
  // and blocks given back at once would be faulted in and zeroed by the
  // kernel again a moment later, each give-back also flushing the TLBs.
  *reinterpret_cast<void**>(block) = pool_;
  pool_ = block;
}

void* NodeArena::Allocate(size_t bytes) {
  assert(bytes > 0);
  const size_t rounded = RoundUp8(bytes);
  bytes_used_ += rounded;
  if (!kUseSlabs || rounded > kMaxSlabBytes) {
    bytes_reserved_ += rounded;
    return ::operator new(rounded);
  }
  const size_t c = rounded / 8;
  Block* block = available_[c];
  if (block == nullptr) block = NewBlock(c);
  if (spare_[c] == block) spare_[c] = nullptr;
  void* slot;
  if (block->free_list != nullptr) {
    slot = block->free_list;
    block->free_list = block->free_list->next;
    // Popping a free slot reads its link, which was written when the slot
    // was freed, long ago and far away: fetch the next one now so that the
    // next allocation of this size does not wait for it.
    __builtin_prefetch(block->free_list);
  } else {
    slot = block->bump;
    block->bump += rounded;
  }
  ++block->live;
  if (block->free_list == nullptr &&
      static_cast<size_t>(block->end - block->bump) < rounded) {
    Unlink(&available_[c], block);
    PushFront(&full_[c], block);
    block->full = true;
  }
  return slot;
}

void NodeArena::Free(void* p, size_t bytes) {
  const size_t rounded = RoundUp8(bytes);
  bytes_used_ -= rounded;
  if (!kUseSlabs || rounded > kMaxSlabBytes) {
    bytes_reserved_ -= rounded;
    ::operator delete(p);
    return;
  }
  const size_t c = rounded / 8;
  Block* block = reinterpret_cast<Block*>(reinterpret_cast<uintptr_t>(p) &
                                          ~(kBlockBytes - 1));
  assert(block->class_index == c);
  FreeSlot* slot = static_cast<FreeSlot*>(p);
  slot->next = block->free_list;
  block->free_list = slot;
  --block->live;
  if (block->full) {
    Unlink(&full_[c], block);
    PushFront(&available_[c], block);
    block->full = false;
  }
  if (block->live == 0) {
    // Keep one empty block per class so that alloc/free alternating at a
    // block boundary does not map and unmap every time.
    if (spare_[c] == nullptr) {
      spare_[c] = block;
    } else if (spare_[c] != block) {
      ReleaseBlock(block);
    }
  }
}

void NodeArena::ReleaseSpareBlocks() {
  for (size_t c = 0; c < kClasses; ++c) {
    if (spare_[c] != nullptr && spare_[c]->live == 0) ReleaseBlock(spare_[c]);
  }
  while (void* block = PopPooled()) GiveBack(block);
}

}  // namespace feedcore::internal
