// Tests of HugePagePool (src/memory/huge_page_pool.h): slot alignment and
// isolation, operator new below direct_bytes and chunks past it, reuse of
// freed slots before a new chunk is mapped, at most one empty chunk kept,
// slots lying inside their chunk's 2 MiB-aligned range (Free finds the
// chunk by masking the slot's address) and concurrent Allocate and Free.
//
// Under AddressSanitizer the pool maps no chunks at all, so chunk counts
// and chunk addresses are checked only without it; the ASan build checks
// instead that chunks() stays 0.
//
// The cases in the "concurrency" suite are also registered as a stress
// test, which the ThreadSanitizer job runs. Their iteration counts are
// scaled by FEEDCORE_STRESS_SCALE (default 1).
#include "memory/huge_page_pool.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <latch>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "memory/mapped_memory.h"
#include "support/test_util.h"

namespace feedcore::internal {
namespace {

constexpr size_t kChunkBytes = HugePagePool::kChunkBytes;
// A chunk starts with one 64-byte line for its header; slots fill the rest.
constexpr size_t kChunkHeaderBytes = 64;
constexpr size_t kSlotAlignment = 64;

// Slot sizes from the smallest to the largest the pool accepts, including
// ones that do not divide a chunk evenly.
constexpr size_t kSlotSizes[] = {64, 192, 320, 4096, kChunkBytes / 4};

size_t SlotsPerChunk(size_t slot_bytes) {
  return (kChunkBytes - kChunkHeaderBytes) / slot_bytes;
}

uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

uintptr_t ChunkBase(const void* p) {
  return Address(p) & ~uintptr_t{kChunkBytes - 1};
}

// The number of distinct chunks that `slots` come from.
size_t ChunksHolding(const std::vector<void*>& slots) {
  std::set<uintptr_t> bases;
  for (const void* slot : slots) bases.insert(ChunkBase(slot));
  return bases.size();
}

// Every 32-bit word of a slot gets a value derived from `tag` and its
// position, so that a slot handed out twice, two overlapping slots or a
// free-list link written into a live slot all show up as a mismatch.
uint32_t PatternWord(uint32_t tag, size_t index) {
  return tag * 0x9e3779b1u + static_cast<uint32_t>(index);
}

void FillSlot(void* slot, size_t slot_bytes, uint32_t tag) {
  auto* words = static_cast<uint32_t*>(slot);
  for (size_t i = 0; i < slot_bytes / sizeof(uint32_t); ++i) {
    words[i] = PatternWord(tag, i);
  }
}

bool SlotIntact(const void* slot, size_t slot_bytes, uint32_t tag) {
  const auto* words = static_cast<const uint32_t*>(slot);
  for (size_t i = 0; i < slot_bytes / sizeof(uint32_t); ++i) {
    if (words[i] != PatternWord(tag, i)) return false;
  }
  return true;
}

// Allocates `n` slots and fills slot i with tag i.
std::vector<void*> AllocateFilled(HugePagePool& pool, size_t n) {
  std::vector<void*> slots;
  slots.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    void* slot = pool.Allocate();
    REQUIRE(slot != nullptr);
    FillSlot(slot, pool.slot_bytes(), static_cast<uint32_t>(i));
    slots.push_back(slot);
  }
  return slots;
}

// Whether every slot still holds the pattern AllocateFilled wrote, its
// index in `slots` being its tag.
bool AllIntact(const HugePagePool& pool, const std::vector<void*>& slots) {
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!SlotIntact(slots[i], pool.slot_bytes(), static_cast<uint32_t>(i))) {
      return false;
    }
  }
  return true;
}

void FreeAll(HugePagePool& pool, std::vector<void*>& slots) {
  for (void* slot : slots) pool.Free(slot);
  slots.clear();
}

TEST_CASE("slots are 64-byte aligned, disjoint and writable over slot_bytes") {
  for (const size_t slot_bytes : kSlotSizes) {
    CAPTURE(slot_bytes);
    // A few slots from operator new, then a full chunk and part of a second,
    // so that both kinds of slot and a chunk boundary are covered.
    const size_t direct_slots = 4;
    HugePagePool pool(slot_bytes, direct_slots * slot_bytes);
    CHECK(pool.slot_bytes() == slot_bytes);
    const size_t n = direct_slots + SlotsPerChunk(slot_bytes) + 3;
    std::vector<void*> slots = AllocateFilled(pool, n);
    CHECK(pool.live_slots() == n);
    if constexpr (!kAddressSanitizer) CHECK(pool.chunks() == 2);

    for (const void* slot : slots) {
      CHECK(Address(slot) % kSlotAlignment == 0);
    }
    std::vector<uintptr_t> starts;
    for (const void* slot : slots) starts.push_back(Address(slot));
    std::sort(starts.begin(), starts.end());
    for (size_t i = 1; i < starts.size(); ++i) {
      CHECK(starts[i - 1] + slot_bytes <= starts[i]);
    }
    // Written in allocation order above; any overlap or shared slot
    // leaves a later tag where an earlier one was expected.
    CHECK(AllIntact(pool, slots));

    FreeAll(pool, slots);
    CHECK(pool.live_slots() == 0);
  }
}

TEST_CASE("slots come from operator new up to direct_bytes, then from chunks") {
  constexpr size_t kSlotBytes = 256;
  HugePagePool pool(kSlotBytes, 4 * kSlotBytes);
  CHECK(pool.chunks() == 0);
  CHECK(pool.live_slots() == 0);

  std::vector<void*> direct = AllocateFilled(pool, 4);
  CHECK(pool.chunks() == 0);
  CHECK(pool.live_slots() == 4);

  void* from_chunk = pool.Allocate();
  FillSlot(from_chunk, kSlotBytes, 99);
  CHECK(pool.live_slots() == 5);
  if constexpr (kAddressSanitizer) {
    CHECK(pool.chunks() == 0);
  } else {
    CHECK(pool.chunks() == 1);
    // A chunk is wholly the pool's own mapping, so memory from operator new
    // can never lie in the same 2 MiB range.
    for (const void* slot : direct) {
      CHECK(ChunkBase(slot) != ChunkBase(from_chunk));
    }
  }

  // Freeing a slot from operator new leaves the chunk alone.
  pool.Free(direct.back());
  direct.pop_back();
  CHECK(pool.live_slots() == 4);
  if constexpr (!kAddressSanitizer) CHECK(pool.chunks() == 1);

  // The chunk's only slot: the emptied chunk is kept as the spare.
  pool.Free(from_chunk);
  CHECK(pool.live_slots() == 3);
  if constexpr (!kAddressSanitizer) CHECK(pool.chunks() == 1);

  CHECK(AllIntact(pool, direct));
  FreeAll(pool, direct);
  CHECK(pool.live_slots() == 0);
}

TEST_CASE("by default one chunk's worth of slots comes from operator new") {
  constexpr size_t kSlotBytes = 4096;
  HugePagePool pool(kSlotBytes);
  std::vector<void*> slots = AllocateFilled(pool, kChunkBytes / kSlotBytes);
  CHECK(pool.chunks() == 0);
  slots.push_back(pool.Allocate());
  CHECK(pool.live_slots() == kChunkBytes / kSlotBytes + 1);
  CHECK(pool.chunks() == (kAddressSanitizer ? 0 : 1));
  FreeAll(pool, slots);
  CHECK(pool.live_slots() == 0);
}

TEST_CASE("with direct_bytes 0 the first slot maps a chunk") {
  HugePagePool pool(128, 0);
  void* slot = pool.Allocate();
  CHECK(pool.live_slots() == 1);
  CHECK(pool.chunks() == (kAddressSanitizer ? 0 : 1));
  pool.Free(slot);
  CHECK(pool.live_slots() == 0);
}

TEST_CASE("a chunk is filled completely before the next one is mapped") {
  for (const size_t slot_bytes : kSlotSizes) {
    CAPTURE(slot_bytes);
    HugePagePool pool(slot_bytes, 0);
    const size_t per_chunk = SlotsPerChunk(slot_bytes);
    std::vector<void*> slots = AllocateFilled(pool, per_chunk);
    if constexpr (!kAddressSanitizer) {
      CHECK(pool.chunks() == 1);
      CHECK(ChunksHolding(slots) == 1);
    }
    slots.push_back(pool.Allocate());
    if constexpr (!kAddressSanitizer) CHECK(pool.chunks() == 2);
    FreeAll(pool, slots);
  }
}

TEST_CASE("a freed slot is reused before a new chunk is mapped") {
  constexpr size_t kSlotBytes = 4096;
  const size_t per_chunk = SlotsPerChunk(kSlotBytes);
  HugePagePool pool(kSlotBytes, 0);

  SUBCASE("in the only chunk") {
    std::vector<void*> slots = AllocateFilled(pool, per_chunk);
    if constexpr (!kAddressSanitizer) CHECK(pool.chunks() == 1);
    void* freed = slots[per_chunk / 2];
    pool.Free(freed);
    CHECK(pool.live_slots() == per_chunk - 1);
    void* again = pool.Allocate();
    CHECK(pool.live_slots() == per_chunk);
    if constexpr (!kAddressSanitizer) {
      CHECK(pool.chunks() == 1);
      CHECK(again == freed);
    }
    slots[per_chunk / 2] = again;
    FillSlot(again, kSlotBytes, static_cast<uint32_t>(per_chunk / 2));
    CHECK(AllIntact(pool, slots));
    FreeAll(pool, slots);
  }

  SUBCASE("in a full chunk that is not the newest") {
    // Two full chunks: neither has room until a slot of the first is freed.
    std::vector<void*> slots = AllocateFilled(pool, 2 * per_chunk);
    if constexpr (!kAddressSanitizer) CHECK(pool.chunks() == 2);
    void* freed = slots[7];
    pool.Free(freed);
    void* again = pool.Allocate();
    if constexpr (!kAddressSanitizer) {
      CHECK(pool.chunks() == 2);
      CHECK(again == freed);
    }
    slots[7] = again;
    FillSlot(again, kSlotBytes, 7);
    // Both chunks full again, so the next slot needs a third.
    slots.push_back(pool.Allocate());
    FillSlot(slots.back(), kSlotBytes, static_cast<uint32_t>(slots.size() - 1));
    if constexpr (!kAddressSanitizer) CHECK(pool.chunks() == 3);
    CHECK(AllIntact(pool, slots));
    FreeAll(pool, slots);
  }

  SUBCASE("several freed slots, none needing a new chunk") {
    std::vector<void*> slots = AllocateFilled(pool, per_chunk + 10);
    if constexpr (!kAddressSanitizer) CHECK(pool.chunks() == 2);
    // Free slots of both chunks, then take as many back.
    std::vector<size_t> freed_indexes = {0, 3, per_chunk - 1, per_chunk,
                                         per_chunk + 9};
    for (size_t i : freed_indexes) pool.Free(slots[i]);
    CHECK(pool.live_slots() == slots.size() - freed_indexes.size());
    std::set<void*> freed;
    for (size_t i : freed_indexes) freed.insert(slots[i]);
    std::set<void*> reused;
    for (size_t i : freed_indexes) {
      slots[i] = pool.Allocate();
      reused.insert(slots[i]);
      FillSlot(slots[i], kSlotBytes, static_cast<uint32_t>(i));
    }
    if constexpr (!kAddressSanitizer) {
      CHECK(pool.chunks() == 2);
      CHECK(reused == freed);
    }
    CHECK(pool.live_slots() == slots.size());
    CHECK(AllIntact(pool, slots));
    FreeAll(pool, slots);
  }
  CHECK(pool.live_slots() == 0);
}

TEST_CASE("emptied chunks are unmapped, at most one empty chunk stays") {
  constexpr size_t kSlotBytes = 4096;
  const size_t per_chunk = SlotsPerChunk(kSlotBytes);
  HugePagePool pool(kSlotBytes, 0);
  std::vector<void*> slots = AllocateFilled(pool, 4 * per_chunk + 7);
  if constexpr (!kAddressSanitizer) CHECK(pool.chunks() == 5);

  // Free in random order, so that chunks empty one by one in no particular
  // order while others are partly used.
  std::vector<size_t> order(slots.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 rng(20240611);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<void*> live = slots;
  std::vector<bool> freed(slots.size(), false);
  for (size_t step = 0; step < order.size(); ++step) {
    const size_t i = order[step];
    pool.Free(slots[i]);
    freed[i] = true;
    CHECK(pool.live_slots() == slots.size() - step - 1);
    if (kAddressSanitizer || step % 97 != 0) continue;
    // Every chunk still holding a live slot stays mapped, plus at most one
    // empty one.
    live.clear();
    for (size_t j = 0; j < slots.size(); ++j) {
      if (!freed[j]) live.push_back(slots[j]);
    }
    const size_t occupied = ChunksHolding(live);
    CHECK(pool.chunks() >= occupied);
    CHECK(pool.chunks() <= occupied + 1);
    // Unmapping a chunk that still holds a live slot would fault here.
    for (size_t j = 0; j < slots.size(); ++j) {
      if (!freed[j]) {
        CHECK(SlotIntact(slots[j], kSlotBytes, static_cast<uint32_t>(j)));
      }
    }
  }
  CHECK(pool.live_slots() == 0);
  CHECK(pool.chunks() <= 1);

  // The pool works as before, and a chunk's worth of slots fits in the
  // empty chunk that was kept.
  slots = AllocateFilled(pool, per_chunk);
  if constexpr (!kAddressSanitizer) CHECK(pool.chunks() == 1);
  slots.push_back(pool.Allocate());
  FillSlot(slots.back(), kSlotBytes, static_cast<uint32_t>(slots.size() - 1));
  if constexpr (!kAddressSanitizer) CHECK(pool.chunks() == 2);
  CHECK(AllIntact(pool, slots));
  FreeAll(pool, slots);
  CHECK(pool.live_slots() == 0);
  CHECK(pool.chunks() <= 1);
}

TEST_CASE("a chunk's slots lie inside its 2 MiB-aligned range") {
  if constexpr (kAddressSanitizer) return;  // no chunks to look at
  for (const size_t slot_bytes : kSlotSizes) {
    CAPTURE(slot_bytes);
    HugePagePool pool(slot_bytes, 0);
    const size_t per_chunk = SlotsPerChunk(slot_bytes);
    std::vector<void*> slots = AllocateFilled(pool, per_chunk);
    REQUIRE(pool.chunks() == 1);
    // Free finds a slot's chunk by rounding the slot's address down to
    // 2 MiB: a slot reaching past the chunk's end, or into its header,
    // would be freed into the wrong place.
    const uintptr_t base = ChunkBase(slots.front());
    for (const void* slot : slots) {
      CHECK(ChunkBase(slot) == base);
      CHECK(Address(slot) >= base + kChunkHeaderBytes);
      CHECK(Address(slot) + slot_bytes <= base + kChunkBytes);
    }
    CHECK(AllIntact(pool, slots));
    // Freed through masking, every slot goes back to the chunk: taking
    // them all again needs no second chunk.
    FreeAll(pool, slots);
    CHECK(pool.chunks() == 1);
    slots = AllocateFilled(pool, per_chunk);
    CHECK(pool.chunks() == 1);
    CHECK(ChunkBase(slots.back()) == base);
    FreeAll(pool, slots);
  }
}

TEST_CASE("under AddressSanitizer no chunk is ever mapped") {
  HugePagePool pool(1024, 0);
  std::vector<void*> slots = AllocateFilled(pool, 3000);
  CHECK(pool.live_slots() == 3000);
  if constexpr (kAddressSanitizer) {
    CHECK(pool.chunks() == 0);
  } else {
    CHECK(pool.chunks() == 2);
  }
  CHECK(AllIntact(pool, slots));
  FreeAll(pool, slots);
  CHECK(pool.live_slots() == 0);
}

uint64_t StressScale() { return testing::EnvU64("FEEDCORE_STRESS_SCALE", 1); }

TEST_SUITE("concurrency") {
  TEST_CASE("threads allocate and free their own slots concurrently") {
    constexpr size_t kSlotBytes = 1024;
    constexpr int kThreads = 4;
    constexpr size_t kMaxHeld = 1500;
    const int rounds = static_cast<int>(20 * StressScale());
    // Some slots from operator new while few are live; with all threads at
    // their peak about three chunks are in use, and every few rounds each
    // thread frees everything, so chunks are mapped and unmapped under
    // contention.
    HugePagePool pool(kSlotBytes, 32 * kSlotBytes);

    std::vector<size_t> corrupt(kThreads, 0);
    std::vector<size_t> allocated(kThreads, 0);
    std::atomic<int> running{kThreads};
    size_t too_many_live = 0;
    std::latch start(kThreads + 1);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        struct Held {
          void* slot;
          uint32_t tag;
        };
        std::mt19937 rng(1000 + t);
        std::vector<Held> held;
        uint32_t serial = 0;
        auto release = [&](size_t index) {
          if (!SlotIntact(held[index].slot, kSlotBytes, held[index].tag)) {
            ++corrupt[t];
          }
          pool.Free(held[index].slot);
          held[index] = held.back();
          held.pop_back();
        };
        start.arrive_and_wait();
        for (int round = 0; round < rounds; ++round) {
          const size_t target =
              std::uniform_int_distribution<size_t>(held.size(), kMaxHeld)(rng);
          while (held.size() < target) {
            // The thread in the top byte keeps tags distinct across
            // threads, so a slot given to two threads is caught too.
            const uint32_t tag = (static_cast<uint32_t>(t) << 24) | serial++;
            void* slot = pool.Allocate();
            FillSlot(slot, kSlotBytes, tag);
            held.push_back({slot, tag});
            ++allocated[t];
          }
          const size_t keep =
              round % 5 == 4 ? 0 : held.size() / 3;  // everything at times
          while (held.size() > keep) {
            release(
                std::uniform_int_distribution<size_t>(0, held.size() - 1)(rng));
          }
        }
        while (!held.empty()) release(held.size() - 1);
        running.fetch_sub(1);
      });
    }
    start.arrive_and_wait();
    // The accessors run on this thread while the others allocate and free,
    // so that ThreadSanitizer sees them too; the count they read can never
    // exceed what the threads hold together.
    while (running.load() > 0) {
      if (pool.live_slots() > kThreads * kMaxHeld) ++too_many_live;
      (void)pool.chunks();
      std::this_thread::yield();
    }
    for (std::thread& thread : threads) thread.join();

    for (int t = 0; t < kThreads; ++t) {
      CAPTURE(t);
      CHECK(allocated[t] > 0);
      CHECK(corrupt[t] == 0);
    }
    CHECK(too_many_live == 0);
    CHECK(pool.live_slots() == 0);
    if constexpr (kAddressSanitizer) {
      CHECK(pool.chunks() == 0);
    } else {
      CHECK(pool.chunks() <= 1);
    }
  }

  TEST_CASE("slots are freed by other threads than those that allocated them") {
    constexpr size_t kSlotBytes = 512;
    constexpr int kProducers = 2;
    constexpr int kConsumers = 2;
    const size_t per_producer = 20000 * StressScale();
    HugePagePool pool(kSlotBytes, 16 * kSlotBytes);

    struct Handoff {
      void* slot;
      uint32_t tag;
    };
    std::mutex mu;
    std::condition_variable ready;
    std::deque<Handoff> queue;
    int producing = kProducers;
    std::vector<size_t> consumed(kConsumers, 0);
    std::vector<size_t> corrupt(kConsumers, 0);

    std::vector<std::thread> threads;
    for (int p = 0; p < kProducers; ++p) {
      threads.emplace_back([&, p] {
        for (size_t i = 0; i < per_producer; ++i) {
          const uint32_t tag =
              (static_cast<uint32_t>(p) << 24) | static_cast<uint32_t>(i);
          void* slot = pool.Allocate();
          FillSlot(slot, kSlotBytes, tag);
          std::lock_guard<std::mutex> lock(mu);
          queue.push_back({slot, tag});
          ready.notify_one();
        }
        std::lock_guard<std::mutex> lock(mu);
        --producing;
        ready.notify_all();
      });
    }
    for (int c = 0; c < kConsumers; ++c) {
      threads.emplace_back([&, c] {
        while (true) {
          Handoff handoff;
          {
            std::unique_lock<std::mutex> lock(mu);
            ready.wait(lock, [&] { return !queue.empty() || producing == 0; });
            if (queue.empty()) return;
            handoff = queue.front();
            queue.pop_front();
          }
          if (!SlotIntact(handoff.slot, kSlotBytes, handoff.tag)) ++corrupt[c];
          pool.Free(handoff.slot);
          ++consumed[c];
        }
      });
    }
    for (std::thread& thread : threads) thread.join();

    size_t total = 0;
    for (int c = 0; c < kConsumers; ++c) {
      CAPTURE(c);
      CHECK(corrupt[c] == 0);
      total += consumed[c];
    }
    CHECK(total == kProducers * per_producer);
    CHECK(pool.live_slots() == 0);
    if constexpr (kAddressSanitizer) {
      CHECK(pool.chunks() == 0);
    } else {
      CHECK(pool.chunks() <= 1);
    }
  }
}

}  // namespace
}  // namespace feedcore::internal
