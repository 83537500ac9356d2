#include "memory/huge_page_pool.h"

#include <cassert>
#include <new>

namespace feedcore::internal {

namespace {

constexpr std::align_val_t kSlotAlignment{64};

}  // namespace

HugePagePool::HugePagePool(size_t slot_bytes, size_t direct_bytes)
    : slot_bytes_(slot_bytes),
      direct_bytes_(direct_bytes),
      slots_per_chunk_(
          static_cast<uint32_t>((kChunkBytes - kHeaderBytes) / slot_bytes)) {
  assert(slot_bytes % 64 == 0 && slot_bytes > 0);
  assert(slot_bytes <= kChunkBytes / 4);
}

HugePagePool::~HugePagePool() {
  WriterLock lock(&mu_);
  assert(direct_slots_ == 0 && chunk_slots_ == 0);
  for (uintptr_t base : chunks_)
    Unmap(reinterpret_cast<void*>(base), kChunkBytes);
}

bool HugePagePool::HasRoom(const Chunk* chunk) const {
  return chunk->free_list != nullptr || chunk->never_used < slots_per_chunk_;
}

void HugePagePool::UnlinkLocked(Chunk* chunk) {
  if (chunk->prev != nullptr) {
    chunk->prev->next = chunk->next;
  } else {
    available_ = chunk->next;
  }
  if (chunk->next != nullptr) chunk->next->prev = chunk->prev;
  chunk->prev = chunk->next = nullptr;
}

void HugePagePool::PushAvailableLocked(Chunk* chunk) {
  chunk->prev = nullptr;
  chunk->next = available_;
  if (available_ != nullptr) available_->prev = chunk;
  available_ = chunk;
}

HugePagePool::Chunk* HugePagePool::NewChunkLocked() {
  void* memory = MapAligned(kChunkBytes, kChunkBytes);
  try {
    chunks_.insert(reinterpret_cast<uintptr_t>(memory));
  } catch (...) {
    Unmap(memory, kChunkBytes);
    throw;
  }
  AdviseHugePages(memory, kChunkBytes);
  Chunk* chunk = new (memory) Chunk;
  PushAvailableLocked(chunk);
  ++empty_chunks_;
  return chunk;
}

void HugePagePool::ReleaseChunkLocked(Chunk* chunk) {
  UnlinkLocked(chunk);
  chunks_.erase(reinterpret_cast<uintptr_t>(chunk));
  --empty_chunks_;
  chunk->~Chunk();
  Unmap(chunk, kChunkBytes);
}

void* HugePagePool::Allocate() {
  WriterLock lock(&mu_);
  const size_t live = direct_slots_ + chunk_slots_;
  if (kAddressSanitizer ||
      (available_ == nullptr && (live + 1) * slot_bytes_ <= direct_bytes_)) {
    void* slot = ::operator new(slot_bytes_, kSlotAlignment);
    ++direct_slots_;
    return slot;
  }
  Chunk* chunk = available_ != nullptr ? available_ : NewChunkLocked();
  if (chunk->live == 0) --empty_chunks_;
  void* slot;
  if (chunk->free_list != nullptr) {
    slot = chunk->free_list;
    chunk->free_list = chunk->free_list->next;
  } else {
    slot = reinterpret_cast<char*>(chunk) + kHeaderBytes +
           size_t{chunk->never_used} * slot_bytes_;
    ++chunk->never_used;
  }
  ++chunk->live;
  ++chunk_slots_;
  if (!HasRoom(chunk)) UnlinkLocked(chunk);
  return slot;
}

void HugePagePool::Free(void* slot) {
  const uintptr_t base =
      reinterpret_cast<uintptr_t>(slot) & ~uintptr_t{kChunkBytes - 1};
  WriterLock lock(&mu_);
  if (!chunks_.contains(base)) {
    assert(direct_slots_ > 0);
    --direct_slots_;
    ::operator delete(slot, kSlotAlignment);
    return;
  }
  Chunk* chunk = reinterpret_cast<Chunk*>(base);
  assert(chunk->live > 0);
  if (!HasRoom(chunk)) PushAvailableLocked(chunk);
  FreeSlot* free_slot = static_cast<FreeSlot*>(slot);
  free_slot->next = chunk->free_list;
  chunk->free_list = free_slot;
  --chunk->live;
  --chunk_slots_;
  if (chunk->live == 0) {
    ++empty_chunks_;
    if (empty_chunks_ > 1) ReleaseChunkLocked(chunk);
  }
}

size_t HugePagePool::chunks() const {
  ReaderLock lock(&mu_);
  return chunks_.size();
}

size_t HugePagePool::live_slots() const {
  ReaderLock lock(&mu_);
  return direct_slots_ + chunk_slots_;
}

}  // namespace feedcore::internal
