// RankedBtree when memory runs out: the tree is unchanged and nothing
// leaks or is freed twice. A node allocation is made to fail by replacing
// the global aligned operator new (nodes are 64-byte aligned), which is
// why this test has a binary of its own.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "leaderboard/ranked_btree.h"
#include "memory/huge_page_pool.h"

// Sanitizer runtimes define the global operator new themselves, so these
// builds cannot replace it and skip the test.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FEEDCORE_SANITIZER_RUNTIME 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FEEDCORE_SANITIZER_RUNTIME 1
#endif
#endif

namespace {

#ifdef FEEDCORE_SANITIZER_RUNTIME
constexpr bool kCanFailAllocations = false;
#else
constexpr bool kCanFailAllocations = true;
#endif

// The size of the next aligned allocation to fail; 0 for none. The one
// mutable global of the test, standing in for the allocator's state.
std::atomic<size_t> fail_next_of_size{0};

}  // namespace

#ifndef FEEDCORE_SANITIZER_RUNTIME
void* operator new(std::size_t bytes, std::align_val_t alignment) {
  size_t expected = bytes;
  if (fail_next_of_size.compare_exchange_strong(expected, 0)) {
    throw std::bad_alloc();
  }
  const size_t align = static_cast<size_t>(alignment);
  void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }

void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
#endif

namespace feedcore::internal {
namespace {

// sizeof(RankedBtree::Inner), which ranked_btree.cc defines and checks
// with a static_assert; no other allocation of the test has this size.
constexpr size_t kInnerBytes = 2688;

TEST_CASE("a split whose inner node cannot be allocated changes nothing" *
          doctest::skip(!kCanFailAllocations)) {
  // Leaves from chunks from the first one on (no operator new): the leaf
  // reserved for the split must go back to the pool, not to delete.
  for (const bool pooled : {false, true}) {
    CAPTURE(pooled);
    HugePagePool pool(sizeof(RankedBtree::Leaf), /*direct_bytes=*/0);
    {
      RankedBtree tree(pooled ? &pool : nullptr);
      // One full leaf as the root: the next insert splits it and needs a
      // new root, an inner node.
      for (uint64_t m = 0; m < RankedBtree::kLeafCapacity; ++m) {
        tree.Insert({static_cast<int64_t>(m), 0, m});
      }
      REQUIRE(tree.inner_levels() == 0);
      fail_next_of_size = kInnerBytes;
      CHECK_THROWS_AS(tree.Insert({1000, 0, 1000}), std::bad_alloc);
      CHECK(fail_next_of_size == 0);  // the failure did happen
      CHECK(tree.size() == RankedBtree::kLeafCapacity);
      CHECK(tree.leaves() == 1);
      CHECK(tree.CheckInvariants());
      if (pooled) CHECK(pool.live_slots() == 1);
      // Memory is back: the same insert now succeeds.
      tree.Insert({1000, 0, 1000});
      CHECK(tree.inner_levels() == 1);
      CHECK(tree.First().key() == RankKey{1000, 0, 1000});
      CHECK(tree.CheckInvariants());
      if (pooled) CHECK(pool.live_slots() == 2);
    }
    CHECK(pool.live_slots() == 0);
  }
}

}  // namespace
}  // namespace feedcore::internal
