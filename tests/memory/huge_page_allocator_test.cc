// Tests of HugePageAllocator (src/memory/huge_page_allocator.h) and of the
// mapping functions under it (src/memory/mapped_memory.h): MapAligned's
// alignment, zeroed pages and trimmed over-mapping, Unmap giving back every
// page, small and large requests, and the containers the allocator serves
// (absl::flat_hash_map's slot array, std::vector) growing past 2 MiB.
//
// Under AddressSanitizer every request goes to std::allocator, so the
// 2 MiB alignment of large requests is only checked without it.
#include "memory/huge_page_allocator.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "memory/mapped_memory.h"

namespace feedcore::internal {
namespace {

uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

size_t RoundUpToPages(size_t bytes) {
  return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
}

// Whether every page of [p, p + bytes) is mapped: mincore fails with
// ENOMEM when any page of the range is not.
bool AllPagesMapped(void* p, size_t bytes) {
  std::vector<unsigned char> residency(bytes / kPageBytes);
  return mincore(p, bytes, residency.data()) == 0;
}

bool NoPageMapped(void* p, size_t bytes) {
  std::vector<unsigned char> residency(1);
  for (size_t offset = 0; offset < bytes; offset += kPageBytes) {
    errno = 0;
    if (mincore(static_cast<char*>(p) + offset, kPageBytes, residency.data()) ==
            0 ||
        errno != ENOMEM) {
      return false;
    }
  }
  return true;
}

// The address space the process has mapped, in KiB (VmSize in
// /proc/self/status). Read into a stack buffer so that reading it maps
// nothing; 0 when it cannot be read.
size_t MappedKiB() {
  char text[8192];
  const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t length = 0;
  while (length < sizeof(text) - 1) {
    const ssize_t n = read(fd, text + length, sizeof(text) - 1 - length);
    if (n <= 0) break;
    length += static_cast<size_t>(n);
  }
  close(fd);
  text[length] = '\0';
  const char* field = std::strstr(text, "VmSize:");
  if (field == nullptr) return 0;
  return std::strtoull(field + std::strlen("VmSize:"), nullptr, 10);
}

// Writes a value derived from each element's index, so that elements
// sharing storage or lost in a reallocation show up.
uint64_t Pattern(size_t i) { return i * 0x9e3779b97f4a7c15u + 1; }

template <typename T>
void FillArray(T* p, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(Pattern(i));
}

template <typename T>
bool ArrayIntact(const T* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != static_cast<T>(Pattern(i))) return false;
  }
  return true;
}

TEST_CASE(
    "MapAligned maps zeroed, writable memory at the requested alignment") {
  const size_t alignments[] = {kPageBytes, size_t{64} << 10, kHugePageBytes};
  // Whole pages, a partial last page and more than one huge page.
  const size_t sizes[] = {1, kPageBytes, 10000, 3 * kHugePageBytes + 123};
  for (const size_t alignment : alignments) {
    for (const size_t bytes : sizes) {
      CAPTURE(alignment);
      CAPTURE(bytes);
      void* p = MapAligned(bytes, alignment);
      REQUIRE(p != nullptr);
      CHECK(Address(p) % alignment == 0);
      // The last page is mapped whole, so the request rounded up to pages
      // is usable.
      const size_t length = RoundUpToPages(bytes);
      CHECK(AllPagesMapped(p, length));
      const auto* bytes_in = static_cast<const unsigned char*>(p);
      size_t nonzero = 0;
      for (size_t i = 0; i < length; ++i) nonzero += bytes_in[i] != 0;
      CHECK(nonzero == 0);
      auto* words = static_cast<uint64_t*>(p);
      FillArray(words, length / sizeof(uint64_t));
      CHECK(ArrayIntact(words, length / sizeof(uint64_t)));
      AdviseHugePages(p, bytes);  // a hint: the contents must stay
      CHECK(ArrayIntact(words, length / sizeof(uint64_t)));
      Unmap(p, bytes);
      // Unmap rounds up like MapAligned, so no page, not even the partial
      // last one, stays mapped.
      CHECK(NoPageMapped(p, length));
    }
  }
}

TEST_CASE("MapAligned gives back the over-mapped head and tail") {
  // MapAligned maps up to an alignment more than asked, to find an aligned
  // start inside; whatever it does not return must be unmapped again, or
  // every 2 MiB-aligned mapping would hold up to 2 MiB of address space
  // more than it uses.
  const size_t alignments[] = {kPageBytes, size_t{64} << 10, kHugePageBytes};
  const size_t sizes[] = {1, 10000, kHugePageBytes, 3 * kHugePageBytes + 123};
  for (const size_t alignment : alignments) {
    for (const size_t bytes : sizes) {
      CAPTURE(alignment);
      CAPTURE(bytes);
      const size_t before = MappedKiB();
      void* p = MapAligned(bytes, alignment);
      const size_t while_mapped = MappedKiB();
      Unmap(p, bytes);
      const size_t after = MappedKiB();
      REQUIRE(before > 0);
      CHECK(while_mapped - before == RoundUpToPages(bytes) / 1024);
      CHECK(after == before);
    }
  }
}

TEST_CASE("mappings at the same alignment do not overlap") {
  constexpr size_t kBytes = kHugePageBytes + kPageBytes;
  std::vector<void*> mappings;
  for (int i = 0; i < 4; ++i) {
    mappings.push_back(MapAligned(kBytes, kHugePageBytes));
    FillArray(static_cast<uint64_t*>(mappings.back()),
              kBytes / sizeof(uint64_t));
  }
  for (size_t i = 0; i < mappings.size(); ++i) {
    for (size_t j = i + 1; j < mappings.size(); ++j) {
      const uintptr_t a = Address(mappings[i]);
      const uintptr_t b = Address(mappings[j]);
      CHECK((a + kBytes <= b || b + kBytes <= a));
    }
  }
  for (void* p : mappings) {
    CHECK(ArrayIntact(static_cast<const uint64_t*>(p),
                      kBytes / sizeof(uint64_t)));
    Unmap(p, kBytes);
  }
}

TEST_CASE("small and large requests are both usable") {
  HugePageAllocator<uint64_t> allocator;
  constexpr size_t kThreshold = kHugePageBytes / sizeof(uint64_t);
  // Just below the mapping threshold, at it, and well above it.
  const size_t counts[] = {1, 100, kThreshold - 1, kThreshold,
                           3 * kThreshold + 5};
  for (const size_t n : counts) {
    CAPTURE(n);
    uint64_t* p = allocator.allocate(n);
    REQUIRE(p != nullptr);
    CHECK(Address(p) % alignof(uint64_t) == 0);
    if (!kAddressSanitizer && n >= kThreshold) {
      CHECK(Address(p) % kHugePageBytes == 0);
    }
    FillArray(p, n);
    CHECK(ArrayIntact(p, n));
    allocator.deallocate(p, n);
    // A mapped array goes back to the OS whole; a mapping left behind
    // would leak megabytes every time a table grows.
    if (!kAddressSanitizer && n >= kThreshold) {
      CHECK(NoPageMapped(p, RoundUpToPages(n * sizeof(uint64_t))));
    }
  }
}

TEST_CASE("a large request of an element size that does not divide 2 MiB") {
  struct Triple {
    uint64_t a, b, c;
  };
  static_assert(kHugePageBytes % sizeof(Triple) != 0);
  HugePageAllocator<Triple> allocator;
  const size_t n = kHugePageBytes / sizeof(Triple) + 1;
  Triple* p = allocator.allocate(n);
  if constexpr (!kAddressSanitizer) CHECK(Address(p) % kHugePageBytes == 0);
  for (size_t i = 0; i < n; ++i) p[i] = {Pattern(i), i, ~Pattern(i)};
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) {
    wrong += p[i].a != Pattern(i) || p[i].b != i || p[i].c != ~Pattern(i);
  }
  CHECK(wrong == 0);
  allocator.deallocate(p, n);
}

TEST_CASE("any instance, rebound or not, frees what another allocated") {
  HugePageAllocator<uint64_t> words;
  HugePageAllocator<char> chars(words);
  HugePageAllocator<uint64_t> words_again(chars);
  CHECK(words == chars);
  CHECK(words_again == words);
  constexpr size_t kLarge = kHugePageBytes / sizeof(uint64_t) * 2;
  for (const size_t n : {size_t{10}, kLarge}) {
    CAPTURE(n);
    uint64_t* p = words.allocate(n);
    FillArray(p, n);
    CHECK(ArrayIntact(p, n));
    words_again.deallocate(p, n);
  }
}

TEST_CASE("a request whose size in bytes overflows throws std::bad_alloc") {
  HugePageAllocator<uint64_t> allocator;
  const size_t too_many =
      std::numeric_limits<size_t>::max() / sizeof(uint64_t) + 1;
  CHECK_THROWS_AS(allocator.allocate(too_many), std::bad_alloc);
}

TEST_CASE("a request too large to map throws std::bad_alloc") {
  // The byte count fits in size_t, but rounding it up to pages and adding
  // room for the alignment would wrap around.
  HugePageAllocator<uint64_t> allocator;
  const size_t largest = std::numeric_limits<size_t>::max() / sizeof(uint64_t);
  CHECK_THROWS_AS(allocator.allocate(largest), std::bad_alloc);
  CHECK_THROWS_AS(
      MapAligned(std::numeric_limits<size_t>::max() - (size_t{1} << 20),
                 kHugePageBytes),
      std::bad_alloc);
}

TEST_CASE("a flat_hash_map on the allocator keeps 300,000 entries correct") {
  using Map = absl::flat_hash_map<
      uint64_t, uint64_t, absl::Hash<uint64_t>, std::equal_to<uint64_t>,
      HugePageAllocator<std::pair<const uint64_t, uint64_t>>>;
  constexpr uint64_t kEntries = 300000;
  // Keys spread over the whole range rather than 0..n, as members' ids are.
  auto key = [](uint64_t i) { return Pattern(i); };
  auto value = [](uint64_t i) { return i * 3 + 1; };

  Map map;
  // Growing from empty reallocates the slot array many times, from small
  // std::allocator arrays to mapped ones of several megabytes.
  for (uint64_t i = 0; i < kEntries; ++i) {
    const auto [it, inserted] = map.emplace(key(i), value(i));
    if (!inserted) FAIL("key " << i << " was already present");
  }
  CHECK(map.size() == kEntries);

  size_t wrong = 0;
  for (uint64_t i = 0; i < kEntries; ++i) {
    const auto it = map.find(key(i));
    wrong += it == map.end() || it->second != value(i);
  }
  CHECK(wrong == 0);
  // Keys never inserted are not found.
  size_t phantom = 0;
  for (uint64_t i = kEntries; i < kEntries + 1000; ++i) {
    phantom += map.contains(key(i));
  }
  CHECK(phantom == 0);
  uint64_t sum = 0;
  for (const auto& [k, v] : map) sum += v;
  CHECK(sum == 3 * (kEntries * (kEntries - 1) / 2) + kEntries);

  // Erase the even entries; the odd ones must be untouched.
  size_t not_erased = 0;
  for (uint64_t i = 0; i < kEntries; i += 2) {
    not_erased += map.erase(key(i)) != 1;
  }
  CHECK(not_erased == 0);
  CHECK(map.size() == kEntries / 2);
  wrong = 0;
  for (uint64_t i = 0; i < kEntries; ++i) {
    const auto it = map.find(key(i));
    if (i % 2 == 0) {
      wrong += it != map.end();
    } else {
      wrong += it == map.end() || it->second != value(i);
    }
  }
  CHECK(wrong == 0);

  // A copy and a rehash allocate fresh arrays through the allocator.
  Map copy = map;
  copy.rehash(0);
  map.clear();
  CHECK(map.empty());
  CHECK(copy.size() == kEntries / 2);
  wrong = 0;
  for (uint64_t i = 1; i < kEntries; i += 2) {
    const auto it = copy.find(key(i));
    wrong += it == copy.end() || it->second != value(i);
  }
  CHECK(wrong == 0);
  for (uint64_t i = 1; i < kEntries; i += 2) copy.erase(key(i));
  CHECK(copy.empty());
}

TEST_CASE("a vector on the allocator keeps its contents growing past 2 MiB") {
  std::vector<uint64_t, HugePageAllocator<uint64_t>> values;
  constexpr size_t kCount = 4 * kHugePageBytes / sizeof(uint64_t) + 17;
  for (size_t i = 0; i < kCount; ++i) values.push_back(Pattern(i));
  REQUIRE(values.size() == kCount);
  CHECK(ArrayIntact(values.data(), kCount));
  if constexpr (!kAddressSanitizer) {
    CHECK(Address(values.data()) % kHugePageBytes == 0);
  }
  // Shrinking moves the contents back into a std::allocator array.
  values.resize(1000);
  values.shrink_to_fit();
  CHECK(ArrayIntact(values.data(), values.size()));
  CHECK(values.size() == 1000);
}

}  // namespace
}  // namespace feedcore::internal
