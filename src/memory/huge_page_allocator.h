// HugePageAllocator: a standard allocator for the big arrays of a large
// leaderboard (the member maps' slot arrays). A request of at least
// kHugePageBytes is mapped straight from the OS, 2 MiB aligned, and marked
// for transparent huge pages (see mapped_memory.h for why); a smaller one,
// or any under AddressSanitizer, goes to std::allocator. A hash table's
// array is reallocated whole when the table grows, so the mapping is never
// resized in place.
//
// Stateless: every instance can free what any other allocated.
//
// Thread safety
// -------------
// Thread-safe (the OS and std::allocator are).
#ifndef FEEDCORE_SRC_MEMORY_HUGE_PAGE_ALLOCATOR_H_
#define FEEDCORE_SRC_MEMORY_HUGE_PAGE_ALLOCATOR_H_

#include <cstddef>
#include <memory>
#include <new>

#include "memory/mapped_memory.h"

namespace feedcore::internal {

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    if (!Mapped(n)) return std::allocator<T>().allocate(n);
    static_assert(alignof(T) <= kHugePageBytes);
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    void* p = MapAligned(n * sizeof(T), kHugePageBytes);
    AdviseHugePages(p, n * sizeof(T));
    return static_cast<T*>(p);
  }

  void deallocate(T* p, size_t n) {
    if (!Mapped(n)) {
      std::allocator<T>().deallocate(p, n);
      return;
    }
    Unmap(p, n * sizeof(T));
  }

  template <typename U>
  friend bool operator==(const HugePageAllocator&,
                         const HugePageAllocator<U>&) {
    return true;
  }

 private:
  // Whether a request for n objects is mapped rather than given to
  // std::allocator. Allocation and deallocation see the same n.
  static bool Mapped(size_t n) {
    return !kAddressSanitizer && n >= kHugePageBytes / sizeof(T);
  }
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_MEMORY_HUGE_PAGE_ALLOCATOR_H_
