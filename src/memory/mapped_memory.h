// Memory mapped straight from the OS, aligned beyond a page: NodeArena's
// blocks (a node finds its block by masking its address) and the memory of
// large leaderboards, which asks for transparent huge pages. A huge page
// maps 2 MiB with one TLB entry where 4 KiB pages need 512: a write to a
// board of a million members touches a few random lines of tens of
// megabytes, and with small pages most of those touches also miss the TLB
// and walk the page table.
#ifndef FEEDCORE_SRC_MEMORY_MAPPED_MEMORY_H_
#define FEEDCORE_SRC_MEMORY_MAPPED_MEMORY_H_

#include <cstddef>

namespace feedcore::internal {

// Whether this build runs under AddressSanitizer. Allocators that carve
// objects out of bigger mappings hand every request to operator new
// instead, so that ASan sees each object as its own allocation.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

inline constexpr size_t kPageBytes = 4096;
// The size and alignment of an x86-64 transparent huge page.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Maps `bytes` (> 0; rounded up to whole pages) of zeroed, readable and
// writable memory starting at a multiple of `alignment` (a power of two, at
// least kPageBytes). Throws std::bad_alloc when the OS refuses.
void* MapAligned(size_t bytes, size_t alignment);

// Unmaps what MapAligned(bytes, ...) returned.
void Unmap(void* p, size_t bytes);

// Gives the memory of the whole pages [p, p + bytes) back to the OS while
// the range stays mapped: it reads as zeros and is faulted in again when
// touched (madvise MADV_DONTNEED). `p` is page aligned.
void Decommit(void* p, size_t bytes);

// Asks the kernel to back the mapped range [p, p + bytes) with transparent
// huge pages (madvise MADV_HUGEPAGE), which it does for the 2 MiB-aligned
// parts of the range. A hint: where huge pages are off ("never") or not
// supported, nothing changes.
void AdviseHugePages(void* p, size_t bytes);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_MEMORY_MAPPED_MEMORY_H_
