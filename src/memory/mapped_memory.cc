#include "memory/mapped_memory.h"

#include <sys/mman.h>

#include <cassert>
#include <cstdint>
#include <limits>
#include <new>

namespace feedcore::internal {
namespace {

size_t RoundUpToPages(size_t bytes) {
  return (bytes + kPageBytes - 1) & ~(kPageBytes - 1);
}

}  // namespace

void* MapAligned(size_t bytes, size_t alignment) {
  assert(bytes > 0);
  assert(alignment >= kPageBytes && (alignment & (alignment - 1)) == 0);
  // No mapping that large can exist; the sums below would wrap around.
  if (bytes > std::numeric_limits<size_t>::max() - 2 * alignment) {
    throw std::bad_alloc();
  }
  const size_t length = RoundUpToPages(bytes);
  // Over-map by the alignment, then give back the unaligned head and the
  // tail past the aligned range.
  const size_t mapped = length + alignment - kPageBytes;
  void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + alignment - 1) & ~(alignment - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t tail = aligned + length;
  const uintptr_t end = start + mapped;
  if (end > tail) munmap(reinterpret_cast<void*>(tail), end - tail);
  return reinterpret_cast<void*>(aligned);
}

void Unmap(void* p, size_t bytes) { munmap(p, RoundUpToPages(bytes)); }

void Decommit(void* p, size_t bytes) {
  madvise(p, RoundUpToPages(bytes), MADV_DONTNEED);
}

void AdviseHugePages(void* p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  madvise(p, RoundUpToPages(bytes), MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace feedcore::internal
