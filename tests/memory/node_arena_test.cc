// Tests of the slab allocator (src/memory/node_arena.h): size rounding and
// accounting, alignment, isolation of neighbouring nodes, reuse and
// release of emptied blocks (a spare per size class and a bounded pool for
// any class, kept until ReleaseSpareBlocks) and requests above the slab
// limit.
#include "memory/node_arena.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "memory/mapped_memory.h"

namespace feedcore::internal {
namespace {

// Under AddressSanitizer the arena sends every request to operator new, so
// it holds no blocks; block counts are only checked without it.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSlabsInUse = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSlabsInUse = false;
#else
constexpr bool kSlabsInUse = true;
#endif
#else
constexpr bool kSlabsInUse = true;
#endif

size_t RoundUp8(size_t n) { return (n + 7) & ~size_t{7}; }

struct Chunk {
  unsigned char* p;
  size_t bytes;
  uint32_t tag;
};

void Fill(const Chunk& c) {
  for (size_t i = 0; i < c.bytes; ++i) {
    c.p[i] = static_cast<unsigned char>((c.tag * 131 + i * 7) & 0xff);
  }
}

bool Intact(const Chunk& c) {
  for (size_t i = 0; i < c.bytes; ++i) {
    if (c.p[i] != static_cast<unsigned char>((c.tag * 131 + i * 7) & 0xff)) {
      return false;
    }
  }
  return true;
}

TEST_CASE("each size is rounded up to 8 bytes, aligned and accounted") {
  NodeArena arena;
  CHECK(arena.bytes_used() == 0);
  CHECK(arena.bytes_reserved() == 0);
  CHECK(arena.blocks() == 0);
  std::vector<Chunk> chunks;
  size_t used = 0;
  for (size_t bytes = 1; bytes <= NodeArena::kMaxSlabBytes + 40; ++bytes) {
    void* p = arena.Allocate(bytes);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(p) % 8 == 0);
    used += RoundUp8(bytes);
    CHECK(arena.bytes_used() == used);
    CHECK(arena.bytes_reserved() >= arena.bytes_used());
    chunks.push_back(
        {static_cast<unsigned char*>(p), bytes, static_cast<uint32_t>(bytes)});
  }
  for (const Chunk& c : chunks) Fill(c);
  for (const Chunk& c : chunks) CHECK(Intact(c));
  for (const Chunk& c : chunks) {
    arena.Free(c.p, c.bytes);
    used -= RoundUp8(c.bytes);
    CHECK(arena.bytes_used() == used);
  }
  CHECK(arena.bytes_used() == 0);
  CHECK(arena.bytes_reserved() == arena.blocks() * NodeArena::kBlockBytes);
  arena.ReleaseSpareBlocks();
  CHECK(arena.bytes_reserved() == 0);
  CHECK(arena.blocks() == 0);
}

TEST_CASE("full-size writes never reach a neighbouring node") {
  NodeArena arena;
  std::mt19937_64 rng(11);
  std::vector<Chunk> live;
  uint32_t next_tag = 1;
  size_t used = 0;
  auto allocate = [&] {
    // Mostly slab sizes, some above the slab limit.
    const size_t bytes = (rng() % 10 == 0)
                             ? NodeArena::kMaxSlabBytes + 1 + rng() % 300
                             : 1 + rng() % NodeArena::kMaxSlabBytes;
    Chunk c{static_cast<unsigned char*>(arena.Allocate(bytes)), bytes,
            next_tag++};
    Fill(c);
    used += RoundUp8(bytes);
    live.push_back(c);
  };
  for (int i = 0; i < 20000; ++i) allocate();
  for (int round = 0; round < 5; ++round) {
    std::shuffle(live.begin(), live.end(), rng);
    const size_t keep = live.size() / 2;
    for (size_t i = keep; i < live.size(); ++i) {
      REQUIRE(Intact(live[i]));
      arena.Free(live[i].p, live[i].bytes);
      used -= RoundUp8(live[i].bytes);
    }
    live.resize(keep);
    for (int i = 0; i < 10000; ++i) allocate();
    CHECK(arena.bytes_used() == used);
    CHECK(arena.bytes_reserved() >= arena.bytes_used());
    size_t broken = 0;
    for (const Chunk& c : live) broken += !Intact(c);
    CHECK(broken == 0);
  }
  // No two live chunks overlap.
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (const Chunk& c : live) {
    ranges.emplace_back(reinterpret_cast<uintptr_t>(c.p),
                        reinterpret_cast<uintptr_t>(c.p) + c.bytes);
  }
  std::sort(ranges.begin(), ranges.end());
  size_t overlaps = 0;
  for (size_t i = 1; i < ranges.size(); ++i) {
    overlaps += ranges[i].first < ranges[i - 1].second;
  }
  CHECK(overlaps == 0);
  for (const Chunk& c : live) arena.Free(c.p, c.bytes);
  CHECK(arena.bytes_used() == 0);
  arena.ReleaseSpareBlocks();
  CHECK(arena.bytes_reserved() == 0);
  CHECK(arena.blocks() == 0);
}

TEST_CASE("emptied blocks stay for reuse until released, then go back") {
  NodeArena arena;
  constexpr size_t kNode = 40;
  const size_t n = 3 * NodeArena::kBlockBytes / kNode;
  std::vector<void*> nodes;
  for (size_t i = 0; i < n; ++i) nodes.push_back(arena.Allocate(kNode));
  CHECK(arena.bytes_used() == n * kNode);
  const size_t full_reserved = arena.bytes_reserved();
  const size_t full_blocks = arena.blocks();
  CHECK(full_reserved >= n * kNode);
  if (kSlabsInUse) {
    CHECK(full_blocks >= 3);
    CHECK(full_reserved == full_blocks * NodeArena::kBlockBytes);
    // Far less than a heap allocation per node would need.
    CHECK(full_reserved < n * kNode + 5 * NodeArena::kBlockBytes);
  }

  // Free everything but the first node: the emptied blocks stay mapped (a
  // spare and the pool) and are counted as reserved.
  for (size_t i = 1; i < n; ++i) arena.Free(nodes[i], kNode);
  CHECK(arena.bytes_used() == kNode);
  CHECK(arena.bytes_reserved() <= full_reserved);
  if (kSlabsInUse) {
    CHECK(arena.blocks() == full_blocks);
    CHECK(arena.bytes_reserved() == arena.blocks() * NodeArena::kBlockBytes);
  }
  arena.ReleaseSpareBlocks();
  CHECK(arena.bytes_used() == kNode);
  if (kSlabsInUse) {
    CHECK(arena.blocks() == 1);
    CHECK(arena.bytes_reserved() == NodeArena::kBlockBytes);
  }

  // The remaining block is reused before a new one is mapped.
  std::vector<void*> again;
  for (size_t i = 0; i < 100; ++i) again.push_back(arena.Allocate(kNode));
  if (kSlabsInUse) CHECK(arena.blocks() == 1);

  arena.Free(nodes[0], kNode);
  for (void* p : again) arena.Free(p, kNode);
  CHECK(arena.bytes_used() == 0);
  CHECK(arena.blocks() <= 1);
  arena.ReleaseSpareBlocks();
  CHECK(arena.bytes_reserved() == 0);
  CHECK(arena.blocks() == 0);
}

TEST_CASE("a block emptied in one size class serves another unmapped") {
  NodeArena arena;
  std::vector<void*> small;
  for (size_t i = 0; i < 4 * NodeArena::kBlockBytes / 48; ++i) {
    small.push_back(arena.Allocate(48));
  }
  const size_t blocks = arena.blocks();
  for (void* p : small) arena.Free(p, 48);
  CHECK(arena.bytes_used() == 0);
  if (kSlabsInUse) CHECK(arena.blocks() == blocks);
  // A larger class fills the pooled blocks (one stays the 48-byte spare)
  // before mapping any.
  std::vector<void*> large;
  for (size_t i = 0; i < 2 * NodeArena::kBlockBytes / 512; ++i) {
    void* p = arena.Allocate(512);
    std::memset(p, 0x5a, 512);
    large.push_back(p);
  }
  if (kSlabsInUse) CHECK(arena.blocks() == blocks);
  for (void* p : large) arena.Free(p, 512);
  arena.ReleaseSpareBlocks();
  CHECK(arena.blocks() == 0);
  CHECK(arena.bytes_reserved() == 0);
}

TEST_CASE("emptied blocks are kept until ReleaseSpareBlocks") {
  NodeArena arena;
  const size_t per_block = NodeArena::kBlockBytes / 1024;
  constexpr size_t kBlocks = 100;
  std::vector<void*> nodes;
  for (size_t i = 0; i < kBlocks * per_block; ++i) {
    nodes.push_back(arena.Allocate(1024));
  }
  const size_t blocks = arena.blocks();
  const size_t mapped = arena.bytes_mapped();
  for (void* p : nodes) arena.Free(p, 1024);
  CHECK(arena.bytes_used() == 0);
  if (kSlabsInUse) {
    // Every emptied block is kept (one as the class's spare, the rest in
    // the pool), and another class takes the pooled ones before any other.
    CHECK(arena.blocks() == blocks);
    std::vector<void*> other;
    const size_t per_large_block = NodeArena::kBlockBytes / 2048 - 1;
    for (size_t i = 0; i < (blocks - 1) * per_large_block; ++i) {
      other.push_back(arena.Allocate(2048));
    }
    CHECK(arena.blocks() == blocks);
    CHECK(arena.bytes_mapped() == mapped);
    for (void* p : other) arena.Free(p, 2048);
  }
  arena.ReleaseSpareBlocks();
  CHECK(arena.blocks() == 0);
  CHECK(arena.bytes_reserved() == 0);
}

TEST_CASE("size classes keep their own blocks") {
  NodeArena arena;
  std::vector<void*> small, large;
  for (int i = 0; i < 5000; ++i) {
    small.push_back(arena.Allocate(40));
    large.push_back(arena.Allocate(72));
  }
  const size_t both = arena.blocks();
  for (void* p : small) arena.Free(p, 40);
  CHECK(arena.bytes_used() == 5000 * 72);
  arena.ReleaseSpareBlocks();
  if (kSlabsInUse) {
    CHECK(arena.blocks() < both);
    CHECK(arena.blocks() >= 1);
  }
  for (void* p : large) arena.Free(p, 72);
  arena.ReleaseSpareBlocks();
  CHECK(arena.blocks() == 0);
  CHECK(arena.bytes_reserved() == 0);
}

TEST_CASE("requests above kMaxSlabBytes bypass the slabs") {
  NodeArena arena;
  void* slab = arena.Allocate(NodeArena::kMaxSlabBytes);
  const size_t blocks_after_slab = arena.blocks();
  if (kSlabsInUse) CHECK(blocks_after_slab == 1);

  std::vector<Chunk> chunks;
  size_t used = NodeArena::kMaxSlabBytes;
  uint32_t tag = 1;
  for (const size_t bytes :
       {NodeArena::kMaxSlabBytes + 1, NodeArena::kMaxSlabBytes + 8,
        NodeArena::kMaxSlabBytes + 1000, size_t{4096}, NodeArena::kBlockBytes,
        NodeArena::kBlockBytes + 1, size_t{1} << 20}) {
    Chunk c{static_cast<unsigned char*>(arena.Allocate(bytes)), bytes, tag++};
    CHECK(reinterpret_cast<uintptr_t>(c.p) % 8 == 0);
    Fill(c);
    chunks.push_back(c);
    used += RoundUp8(bytes);
    CHECK(arena.bytes_used() == used);
    CHECK(arena.bytes_reserved() >= used);
    CHECK(arena.blocks() == blocks_after_slab);
  }
  for (const Chunk& c : chunks) CHECK(Intact(c));
  for (const Chunk& c : chunks) arena.Free(c.p, c.bytes);
  CHECK(arena.bytes_used() == NodeArena::kMaxSlabBytes);
  arena.Free(slab, NodeArena::kMaxSlabBytes);
  CHECK(arena.bytes_used() == 0);
  arena.ReleaseSpareBlocks();
  CHECK(arena.bytes_reserved() == 0);
}

TEST_CASE("regions grow with the arena and given-back blocks are reused") {
  if (kAddressSanitizer) return;  // every node comes from operator new
  NodeArena arena;
  // One node per block: the largest slab size leaves no room for a second.
  constexpr size_t kNode = NodeArena::kMaxSlabBytes;
  const size_t per_block = (NodeArena::kBlockBytes - 64) / kNode;
  std::vector<void*> nodes;
  size_t largest_step = 0;
  for (int i = 0; i < 4000; ++i) {
    const size_t mapped_before = arena.bytes_mapped();
    nodes.push_back(arena.Allocate(kNode));
    largest_step = std::max(largest_step, arena.bytes_mapped() - mapped_before);
    // Mapped at most twice what is in use, plus one region of 2 MiB.
    CHECK(arena.bytes_mapped() <= 2 * arena.bytes_reserved() + kHugePageBytes);
  }
  CHECK(largest_step == kHugePageBytes);
  const size_t blocks = arena.blocks();
  CHECK(blocks == (nodes.size() + per_block - 1) / per_block);
  const size_t mapped = arena.bytes_mapped();
  std::vector<uintptr_t> block_addresses;
  for (void* p : nodes) {
    block_addresses.push_back(reinterpret_cast<uintptr_t>(p) &
                              ~(NodeArena::kBlockBytes - 1));
  }
  for (void* p : nodes) arena.Free(p, kNode);
  arena.ReleaseSpareBlocks();
  CHECK(arena.blocks() == 0);
  CHECK(arena.bytes_reserved() == 0);
  // Taking the same number of blocks again maps nothing new and reuses the
  // given-back address ranges, which read and write as fresh memory.
  std::vector<void*> again;
  for (size_t i = 0; i < nodes.size(); ++i) {
    again.push_back(arena.Allocate(kNode));
    std::memset(again.back(), 0x5a, kNode);
  }
  CHECK(arena.bytes_mapped() == mapped);
  CHECK(arena.blocks() == blocks);
  std::sort(block_addresses.begin(), block_addresses.end());
  size_t reused = 0;
  for (void* p : again) {
    reused += std::binary_search(
        block_addresses.begin(), block_addresses.end(),
        reinterpret_cast<uintptr_t>(p) & ~(NodeArena::kBlockBytes - 1));
  }
  CHECK(reused == again.size());
  for (void* p : again) arena.Free(p, kNode);
}

}  // namespace
}  // namespace feedcore::internal
