// Tests of the per-owner unrolled skiplist (src/timeline/timeline.h):
// ordering, overwrite, removal, range collection in both orders, expiry,
// cap trimming, eviction, chunk heights and its internal invariants.
#include "timeline/timeline.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "memory/node_arena.h"
#include "support/test_util.h"

namespace feedcore::internal {
namespace {

constexpr Micros kFar = 1'000'000'000'000;  // an expiry no test reaches
constexpr uint64_t kSeed = 0x5eed'1234'abcd'0001;

StoredEntry E(Micros ts, ActivityId id, Micros expires_at = kFar,
              EntityId actor = 0) {
  return StoredEntry{ts, id, actor, expires_at, 0, {}, 0};
}

// Reference: key -> entry, newest first.
using Ref = std::map<EntryKey, StoredEntry, std::greater<>>;

std::vector<StoredEntry> Flatten(const Ref& ref) {
  std::vector<StoredEntry> out;
  for (const auto& [key, entry] : ref) out.push_back(entry);
  return out;
}

// What Collect must append, computed from the reference.
std::vector<StoredEntry> ExpectedCollect(const Ref& ref, ReadOrder order,
                                         EntryKey lo, EntryKey hi, Micros now,
                                         size_t want) {
  std::vector<StoredEntry> all = Flatten(ref);
  if (order == ReadOrder::kOldestFirst) std::reverse(all.begin(), all.end());
  std::vector<StoredEntry> out;
  for (const StoredEntry& e : all) {
    if (out.size() >= want) break;
    const EntryKey k = e.key();
    if (k < lo || k > hi || e.expires_at <= now) continue;
    out.push_back(e);
  }
  return out;
}

// Applies the documented Put semantics to the reference.
Timeline::PutResult RefPut(Ref* ref, const StoredEntry& e, size_t cap) {
  const EntryKey key = e.key();
  auto it = ref->find(key);
  if (it != ref->end()) {
    it->second = e;
    return {Timeline::PutOutcome::kReplaced, 0};
  }
  if (ref->size() >= cap && key < ref->rbegin()->first) {
    return {Timeline::PutOutcome::kRejectedByCap, 0};
  }
  (*ref)[key] = e;
  size_t trimmed = 0;
  while (ref->size() > cap) {
    ref->erase(std::prev(ref->end()));
    ++trimmed;
  }
  return {Timeline::PutOutcome::kInserted, trimmed};
}

std::vector<EntryKey> Keys(const std::vector<StoredEntry>& entries) {
  std::vector<EntryKey> keys;
  for (const StoredEntry& e : entries) keys.push_back(e.key());
  return keys;
}

TEST_CASE("entries are ordered newest first with ties broken by id") {
  NodeArena arena;
  Timeline t(&arena, kSeed);
  const std::vector<StoredEntry> puts = {E(10, 1), E(30, 2), E(20, 3), E(20, 1),
                                         E(20, 2), E(0, 5),  E(30, 0)};
  for (const StoredEntry& e : puts) {
    CHECK(t.Put(e, 100).outcome == Timeline::PutOutcome::kInserted);
    CHECK(t.CheckInvariants());
  }
  const std::vector<StoredEntry> want = {E(30, 2), E(30, 0), E(20, 3), E(20, 2),
                                         E(20, 1), E(10, 1), E(0, 5)};
  CHECK(t.Entries() == want);
  CHECK(t.size() == 7);
  CHECK_FALSE(t.empty());
}

TEST_CASE("putting the same key twice keeps one entry with the new values") {
  NodeArena arena;
  Timeline t(&arena, kSeed);
  REQUIRE(t.Put(E(5, 1, 300, 7), 10).outcome ==
          Timeline::PutOutcome::kInserted);
  REQUIRE(t.Put(E(10, 1, 100, 7), 10).outcome ==
          Timeline::PutOutcome::kInserted);
  REQUIRE(t.Put(E(1, 1, 50, 7), 10).outcome == Timeline::PutOutcome::kInserted);
  const size_t used = arena.bytes_used();

  const Timeline::PutResult r = t.Put(E(5, 1, 200, 8), 10);
  CHECK(r.outcome == Timeline::PutOutcome::kReplaced);
  CHECK(r.trimmed == 0);
  CHECK(t.size() == 3);
  CHECK(arena.bytes_used() == used);
  CHECK(t.Entries() == std::vector<StoredEntry>{
                           E(10, 1, 100, 7), E(5, 1, 200, 8), E(1, 1, 50, 7)});
  CHECK(t.CheckInvariants());

  // Same ts, other id: a different key.
  CHECK(t.Put(E(5, 2, 200, 8), 10).outcome == Timeline::PutOutcome::kInserted);
  CHECK(t.size() == 4);
  // Overwriting the head and the tail.
  CHECK(t.Put(E(10, 1, 400, 9), 10).outcome == Timeline::PutOutcome::kReplaced);
  CHECK(t.Put(E(1, 1, 60, 9), 10).outcome == Timeline::PutOutcome::kReplaced);
  CHECK(t.Entries() ==
        std::vector<StoredEntry>{E(10, 1, 400, 9), E(5, 2, 200, 8),
                                 E(5, 1, 200, 8), E(1, 1, 60, 9)});
  CHECK(t.MinExpiry() == 60);
  CHECK(t.CheckInvariants());
}

TEST_CASE("remove present, absent, head, tail and middle entries") {
  NodeArena arena;
  Timeline t(&arena, kSeed);
  CHECK_FALSE(t.Remove({1, 1}));  // empty timeline
  for (Micros ts = 1; ts <= 5; ++ts) t.Put(E(ts, 1), 100);

  CHECK_FALSE(t.Remove({6, 1}));  // newer than all
  CHECK_FALSE(t.Remove({0, 1}));  // older than all
  CHECK_FALSE(t.Remove({3, 2}));  // right ts, wrong id
  CHECK(t.size() == 5);
  CHECK(t.CheckInvariants());

  CHECK(t.Remove({5, 1}));  // head
  CHECK(t.CheckInvariants());
  CHECK(t.Remove({1, 1}));  // tail
  CHECK(t.CheckInvariants());
  CHECK(t.Remove({3, 1}));  // middle
  CHECK(t.CheckInvariants());
  CHECK(t.Entries() == std::vector<StoredEntry>{E(4, 1), E(2, 1)});
  CHECK_FALSE(t.Remove({3, 1}));  // already gone

  // The new tail and head still work: put older than all, newer than all.
  t.Put(E(0, 1), 100);
  t.Put(E(9, 1), 100);
  CHECK(t.Entries() ==
        std::vector<StoredEntry>{E(9, 1), E(4, 1), E(2, 1), E(0, 1)});
  CHECK(t.CheckInvariants());

  for (const EntryKey k : Keys(t.Entries())) CHECK(t.Remove(k));
  CHECK(t.empty());
  CHECK(t.Entries().empty());
  CHECK(t.CheckInvariants());
  CHECK(arena.bytes_used() == 0);
  CHECK(t.MinExpiry() == std::numeric_limits<Micros>::max());
}

// Every pair of bounds drawn from the keys, their neighbours and the
// extremes, in both orders and with several limits.
void CheckCollectAtAllBounds(const Timeline& t, const Ref& ref, Micros now) {
  std::vector<EntryKey> bounds = {EntryKey::Min(), EntryKey::Max()};
  for (const auto& [k, e] : ref) {
    bounds.push_back(k);
    if (k.activity_id > 0) bounds.push_back({k.ts, k.activity_id - 1});
    bounds.push_back({k.ts, k.activity_id + 1});
    if (k.ts > 0) {
      bounds.push_back({k.ts - 1, std::numeric_limits<ActivityId>::max()});
    }
    bounds.push_back({k.ts + 1, 0});
  }
  const StoredEntry sentinel = E(123456, 654321, 1, 1);
  size_t compared = 0;
  size_t mismatches = 0;
  for (const EntryKey lo : bounds) {
    // CountVisible is Collect's count from `lo` up, without the copies.
    size_t visible = 0;
    for (const auto& [k, e] : ref) visible += !(k < lo) && e.expires_at > now;
    for (const size_t limit : {size_t{1}, size_t{2}, size_t{1000}}) {
      const size_t counted = t.CountVisible(lo, now, limit);
      if (counted != std::min(visible, limit) && ++mismatches == 1) {
        INFO("CountVisible lo=(" << lo.ts << "," << lo.activity_id
                                 << ") limit=" << limit << " now=" << now);
        CHECK(counted == std::min(visible, limit));
      }
    }
    for (const EntryKey hi : bounds) {
      for (const ReadOrder order :
           {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
        for (const size_t want :
             {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{1000}}) {
          std::vector<StoredEntry> got = {sentinel};
          t.Collect(order, lo, hi, now, want, &got);
          std::vector<StoredEntry> expected = {sentinel};
          for (const StoredEntry& e :
               ExpectedCollect(ref, order, lo, hi, now, want)) {
            expected.push_back(e);
          }
          ++compared;
          if (got != expected && ++mismatches == 1) {
            // Show the first mismatch in full.
            INFO("lo=(" << lo.ts << "," << lo.activity_id << ") hi=(" << hi.ts
                        << "," << hi.activity_id << ") order="
                        << (order == ReadOrder::kNewestFirst ? "newest"
                                                             : "oldest")
                        << " want=" << want << " now=" << now);
            CHECK(got == expected);
          }
        }
      }
    }
  }
  CHECK(compared == bounds.size() * bounds.size() * 2 * 5);
  CHECK(mismatches == 0);
}

TEST_CASE("collect honours [lo, hi] at every boundary in both orders") {
  NodeArena arena;
  Timeline t(&arena, kSeed);
  Ref ref;
  CheckCollectAtAllBounds(t, ref, 0);  // empty timeline
  for (const StoredEntry& e :
       {E(0, 0, 50), E(0, 3), E(5, 1), E(5, 2, 20), E(5, 3), E(9, 0, 30),
        E(12, 7), E(12, 8, 10), E(20, 1, 40)}) {
    REQUIRE(t.Put(e, 100).outcome == Timeline::PutOutcome::kInserted);
    ref[e.key()] = e;
  }
  // Nothing expired, then some entries (the newest and the oldest among
  // them) hidden.
  for (const Micros now : {Micros{0}, Micros{20}, Micros{45}, Micros{50}}) {
    CheckCollectAtAllBounds(t, ref, now);
  }
}

TEST_CASE("CountVisible skips whole chunks only while expiry is in order") {
  // One TTL: expiry follows the key, so the expired are the oldest ones.
  // Then one entry that expires before its older neighbours breaks it.
  NodeArena arena;
  Timeline t(&arena, kSeed);
  Ref ref;
  for (Micros ts = 0; ts < 600; ++ts) {
    const StoredEntry e = E(ts, 1, ts + 100);
    REQUIRE(t.Put(e, 1000).outcome == Timeline::PutOutcome::kInserted);
    ref[e.key()] = e;
  }
  auto check = [&] {
    for (const Micros now :
         {Micros{0}, Micros{150}, Micros{399}, Micros{800}}) {
      for (Micros lo_ts = 0; lo_ts <= 601; lo_ts += 7) {
        size_t visible = 0;
        for (const auto& [k, e] : ref) {
          visible += k.ts >= lo_ts && e.expires_at > now;
        }
        for (const size_t limit : {size_t{1}, size_t{50}, size_t{10000}}) {
          INFO("now=" << now << " lo.ts=" << lo_ts << " limit=" << limit);
          REQUIRE(t.CountVisible({lo_ts, 0}, now, limit) ==
                  std::min(visible, limit));
        }
      }
    }
  };
  check();
  const StoredEntry early = E(300, 2, 10);
  REQUIRE(t.Put(early, 1000).outcome == Timeline::PutOutcome::kInserted);
  ref[early.key()] = early;
  check();
}

TEST_CASE("collect on a large timeline matches the reference") {
  // Enough entries for several skip levels, so the oldest-first walk has to
  // use its anchors.
  NodeArena arena;
  Timeline t(&arena, kSeed);
  Ref ref;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 3000; ++i) {
    const StoredEntry e =
        E(static_cast<Micros>(rng() % 2000), rng() % 3, 1 + rng() % 100);
    RefPut(&ref, e, 100000);
    t.Put(e, 100000);
  }
  REQUIRE(t.CheckInvariants());
  REQUIRE(t.Entries() == Flatten(ref));
  for (int i = 0; i < 2000; ++i) {
    const Micros a = static_cast<Micros>(rng() % 2100);
    const Micros b = static_cast<Micros>(rng() % 2100);
    const EntryKey lo{std::min(a, b), rng() % 4};
    const EntryKey hi{std::max(a, b), rng() % 4};
    const Micros now = static_cast<Micros>(rng() % 110);
    const size_t want = 1 + rng() % 300;
    const ReadOrder order =
        (rng() & 1) ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst;
    std::vector<StoredEntry> got;
    t.Collect(order, lo, hi, now, want, &got);
    const std::vector<StoredEntry> expected =
        ExpectedCollect(ref, order, lo, hi, now, want);
    if (got != expected) {
      INFO("iteration " << i << " lo=(" << lo.ts << "," << lo.activity_id
                        << ") hi=(" << hi.ts << "," << hi.activity_id
                        << ") now=" << now << " want=" << want);
      CHECK(got == expected);
      break;
    }
  }
  CHECK(t.size() == ref.size());
}

TEST_CASE("collect hides entries whose expiry is at or before now") {
  NodeArena arena;
  Timeline t(&arena, kSeed);
  t.Put(E(1, 0, 15), 10);
  t.Put(E(2, 0, 10), 10);
  t.Put(E(3, 0, 5), 10);
  t.Put(E(4, 0, 11), 10);
  for (const ReadOrder order :
       {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
    std::vector<StoredEntry> got;
    t.Collect(order, EntryKey::Min(), EntryKey::Max(), 10, 10, &got);
    std::vector<StoredEntry> want = {E(4, 0, 11), E(1, 0, 15)};
    if (order == ReadOrder::kOldestFirst)
      std::reverse(want.begin(), want.end());
    CHECK(got == want);

    // `want` counts only visible entries.
    got.clear();
    t.Collect(order, EntryKey::Min(), EntryKey::Max(), 10, 1, &got);
    CHECK(got == std::vector<StoredEntry>{want[0]});
  }
  std::vector<StoredEntry> got;
  t.Collect(ReadOrder::kNewestFirst, EntryKey::Min(), EntryKey::Max(), 4, 10,
            &got);
  CHECK(got.size() == 4);
  got.clear();
  t.Collect(ReadOrder::kNewestFirst, EntryKey::Min(), EntryKey::Max(), 15, 10,
            &got);
  CHECK(got.empty());
  // Hidden is not removed.
  CHECK(t.size() == 4);
}

TEST_CASE("the cap drops the oldest entries and rejects older-than-all") {
  NodeArena arena;
  Timeline t(&arena, kSeed);
  for (Micros ts = 10; ts <= 50; ts += 10) {
    const Timeline::PutResult r = t.Put(E(ts, 0), 5);
    CHECK(r.outcome == Timeline::PutOutcome::kInserted);
    CHECK(r.trimmed == 0);
  }
  REQUIRE(t.size() == 5);

  SUBCASE("newer than all drops the oldest") {
    const Timeline::PutResult r = t.Put(E(60, 0), 5);
    CHECK(r.outcome == Timeline::PutOutcome::kInserted);
    CHECK(r.trimmed == 1);
    CHECK(Keys(t.Entries()) ==
          std::vector<EntryKey>{{60, 0}, {50, 0}, {40, 0}, {30, 0}, {20, 0}});
  }
  SUBCASE("in the middle drops the oldest") {
    const Timeline::PutResult r = t.Put(E(25, 0), 5);
    CHECK(r.outcome == Timeline::PutOutcome::kInserted);
    CHECK(r.trimmed == 1);
    CHECK(Keys(t.Entries()) ==
          std::vector<EntryKey>{{50, 0}, {40, 0}, {30, 0}, {25, 0}, {20, 0}});
  }
  SUBCASE("just above the oldest drops the oldest") {
    const Timeline::PutResult r = t.Put(E(10, 1), 5);
    CHECK(r.outcome == Timeline::PutOutcome::kInserted);
    CHECK(r.trimmed == 1);
    CHECK(Keys(t.Entries()).back() == EntryKey{10, 1});
  }
  SUBCASE("older than all is rejected and changes nothing") {
    const size_t used = arena.bytes_used();
    const Timeline::PutResult r = t.Put(E(9, 5), 5);
    CHECK(r.outcome == Timeline::PutOutcome::kRejectedByCap);
    CHECK(r.trimmed == 0);
    const Timeline::PutResult r2 = t.Put(E(0, 0), 5);
    CHECK(r2.outcome == Timeline::PutOutcome::kRejectedByCap);
    CHECK(t.size() == 5);
    CHECK(arena.bytes_used() == used);
    CHECK(Keys(t.Entries()).back() == EntryKey{10, 0});
  }
  SUBCASE("the oldest key itself is replaced, not rejected") {
    const Timeline::PutResult r = t.Put(E(10, 0, 77, 3), 5);
    CHECK(r.outcome == Timeline::PutOutcome::kReplaced);
    CHECK(r.trimmed == 0);
    CHECK(t.Entries().back() == E(10, 0, 77, 3));
  }
  SUBCASE("older than all fits while below the cap") {
    CHECK(t.Remove({30, 0}));
    const Timeline::PutResult r = t.Put(E(1, 0), 5);
    CHECK(r.outcome == Timeline::PutOutcome::kInserted);
    CHECK(r.trimmed == 0);
    CHECK(t.size() == 5);
  }
  SUBCASE("a cap of one keeps only the newest") {
    NodeArena a1;
    Timeline one(&a1, kSeed);
    CHECK(one.Put(E(5, 0), 1).outcome == Timeline::PutOutcome::kInserted);
    CHECK(one.Put(E(4, 0), 1).outcome == Timeline::PutOutcome::kRejectedByCap);
    const Timeline::PutResult r = one.Put(E(6, 0), 1);
    CHECK(r.outcome == Timeline::PutOutcome::kInserted);
    CHECK(r.trimmed == 1);
    CHECK(Keys(one.Entries()) == std::vector<EntryKey>{{6, 0}});
    CHECK(one.CheckInvariants());
  }
  CHECK(t.size() == 5);
  CHECK(t.CheckInvariants());
}

TEST_CASE("eviction when expiries follow key order") {
  NodeArena arena;
  Timeline t(&arena, kSeed);
  constexpr int kN = 1000;
  for (int i = 0; i < kN; ++i) t.Put(E(i, 0, 1000 + i), kN);
  CHECK_FALSE(t.has_expiry_index());
  CHECK(t.MinExpiry() == 1000);
  CHECK(t.EvictExpired(999, 1000) == 0);  // nothing expired yet
  CHECK(t.size() == kN);

  // Expired at 1500: i <= 500, 501 entries. Budget 100 first.
  CHECK(t.EvictExpired(1500, 100) == 100);
  CHECK(t.size() == kN - 100);
  CHECK(t.CheckInvariants());
  CHECK(t.MinExpiry() >= 1000);
  CHECK(t.EvictExpired(1500, 1000) == 401);
  CHECK(t.size() == kN - 501);
  CHECK(t.MinExpiry() == 1501);
  CHECK(t.Entries().back() == E(501, 0, 1501));
  CHECK(t.Entries().front() == E(kN - 1, 0, 1000 + kN - 1));
  CHECK(t.CheckInvariants());
  CHECK_FALSE(t.has_expiry_index());

  // Everything.
  CHECK(t.EvictExpired(1'000'000, 10'000) == kN - 501);
  CHECK(t.empty());
  CHECK(t.CheckInvariants());
  CHECK(arena.bytes_used() == 0);
  CHECK(t.EvictExpired(1'000'000, 10'000) == 0);
}

TEST_CASE("an expiry inversion builds the index, a sorted timeline drops it") {
  NodeArena arena;
  Timeline t(&arena, kSeed);
  t.Put(E(1, 0, 100), 10);
  t.Put(E(2, 0, 200), 10);
  CHECK_FALSE(t.has_expiry_index());
  t.Put(E(3, 0, 50), 10);  // newer but expires first
  CHECK(t.has_expiry_index());
  CHECK(t.index_bytes() > 0);
  CHECK(t.MinExpiry() == 50);
  CHECK(t.CheckInvariants());

  CHECK(t.EvictExpired(60, 10) == 1);
  CHECK(t.Entries() == std::vector<StoredEntry>{E(2, 0, 200), E(1, 0, 100)});
  CHECK(t.CheckInvariants());
  CHECK_FALSE(t.has_expiry_index());
  CHECK(t.MinExpiry() == 100);
}

TEST_CASE("eviction with mixed TTLs and out-of-order expiries") {
  NodeArena arena;
  Timeline t(&arena, kSeed);
  Ref ref;
  std::mt19937_64 rng(99);
  for (int i = 0; i < 2000; ++i) {
    const StoredEntry e = E(static_cast<Micros>(rng() % 5000), rng() % 2,
                            100 + static_cast<Micros>(rng() % 1000), i);
    RefPut(&ref, e, 100000);
    t.Put(e, 100000);
  }
  CHECK(t.has_expiry_index());
  REQUIRE(t.CheckInvariants());
  Micros min_exp = std::numeric_limits<Micros>::max();
  for (const auto& [k, e] : ref) min_exp = std::min(min_exp, e.expires_at);
  CHECK(t.MinExpiry() == min_exp);

  for (Micros now = 100; now <= 1200; now += 37) {
    size_t expired = 0;
    for (const auto& [k, e] : ref) expired += e.expires_at <= now;
    const size_t budget = 1 + rng() % 60;
    const size_t n = t.EvictExpired(now, budget);
    CHECK(n == std::min(budget, expired));
    // What went must have been expired; what stays is untouched.
    Ref after;
    for (const StoredEntry& e : t.Entries()) after[e.key()] = e;
    size_t removed = 0;
    for (const auto& [k, e] : ref) {
      auto it = after.find(k);
      if (it == after.end()) {
        CHECK(e.expires_at <= now);
        ++removed;
      } else {
        CHECK(it->second == e);
      }
    }
    CHECK(after.size() + removed == ref.size());
    CHECK(removed == n);
    ref = after;
    REQUIRE(t.CheckInvariants());
    Micros m = std::numeric_limits<Micros>::max();
    for (const auto& [k, e] : ref) m = std::min(m, e.expires_at);
    CHECK(t.MinExpiry() == m);
  }
  // Drain.
  while (t.EvictExpired(5000, 100) > 0) {
  }
  CHECK(t.empty());
  CHECK(t.CheckInvariants());
  CHECK(arena.bytes_used() == 0);
}

TEST_CASE("MinExpiry tracks puts, overwrites and removals") {
  NodeArena arena;
  Timeline t(&arena, kSeed);
  CHECK(t.MinExpiry() == std::numeric_limits<Micros>::max());
  t.Put(E(1, 0, 500), 10);
  CHECK(t.MinExpiry() == 500);
  t.Put(E(2, 0, 300), 10);
  CHECK(t.MinExpiry() == 300);
  t.Put(E(3, 0, 400), 10);
  CHECK(t.MinExpiry() == 300);
  t.Put(E(2, 0, 700), 10);  // overwrite raises the minimum
  CHECK(t.MinExpiry() == 400);
  CHECK(t.Remove({3, 0}));
  CHECK(t.MinExpiry() == 500);
  CHECK(t.CheckInvariants());
}

TEST_CASE("node heights follow p = 1/4 and are capped") {
  constexpr int kSamples = 400'000;
  std::vector<int> count(Timeline::kMaxHeight + 2, 0);
  for (int i = 0; i < kSamples; ++i) {
    const int h = Timeline::HeightFor(
        {static_cast<Micros>(i) * 1000, static_cast<ActivityId>(i % 17)},
        kSeed);
    REQUIRE(h >= 1);
    REQUIRE(h <= Timeline::kMaxHeight);
    ++count[h];
  }
  auto frac = [&](int h) { return static_cast<double>(count[h]) / kSamples; };
  CHECK(frac(1) > 0.73);
  CHECK(frac(1) < 0.77);
  CHECK(frac(2) > 0.17);
  CHECK(frac(2) < 0.205);
  CHECK(frac(3) > 0.040);
  CHECK(frac(3) < 0.055);
  CHECK(frac(4) > 0.008);
  CHECK(frac(4) < 0.016);

  // Deterministic per (key, seed); the seed matters.
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const EntryKey k{i, 3};
    CHECK(Timeline::HeightFor(k, kSeed) == Timeline::HeightFor(k, kSeed));
    differ += Timeline::HeightFor(k, kSeed) != Timeline::HeightFor(k, 42);
  }
  CHECK(differ > 100);

  // The cap is reached (expected after ~4M keys) and never exceeded.
  bool reached = false;
  for (uint64_t i = 0; i < (uint64_t{1} << 27) && !reached; ++i) {
    const int h = Timeline::HeightFor({static_cast<Micros>(i), 1}, kSeed);
    REQUIRE(h <= Timeline::kMaxHeight);
    reached = h == Timeline::kMaxHeight;
  }
  CHECK(reached);
}

// The shape of the random operations of one run.
struct RandomRun {
  size_t cap;
  // Timestamps are drawn from [step / 2 * drift, + ts_range): drift 0 keeps
  // every put within one window, 1 moves the window forward as a feed does.
  Micros ts_range;
  int drift;
  // Percent of puts whose entry expires `shared_ttl` after its timestamp
  // (chunks without an expiry column); the rest expire at random.
  int shared_ttl_percent;
  Micros shared_ttl;
  // Percent of puts whose entry expires at one time shared by every put of
  // the same 200 time units (a batch written at one clock reading).
  int same_expiry_percent = 0;
};

void RunRandomOperations(const RandomRun& run, uint64_t seed) {
  NodeArena arena;
  Timeline t(&arena, seed * 0x9e3779b97f4a7c15ULL);
  Ref ref;
  std::mt19937_64 rng(seed);
  Micros now = 0;
  for (int step = 0; step < 12000; ++step) {
    CAPTURE(step);
    const int op = static_cast<int>(rng() % 100);
    const Micros ts =
        step / 2 * run.drift +
        static_cast<Micros>(rng() % static_cast<uint64_t>(run.ts_range));
    if (op < 55) {
      const Micros exp = static_cast<int>(rng() % 100) < run.shared_ttl_percent
                             ? ts + run.shared_ttl
                             : now + 1 + static_cast<Micros>(rng() % 300);
      const StoredEntry e = E(ts, rng() % 4, exp, rng() % 5);
      const Timeline::PutResult want = RefPut(&ref, e, run.cap);
      const Timeline::PutResult got = t.Put(e, run.cap);
      REQUIRE(got.outcome == want.outcome);
      REQUIRE(got.trimmed == want.trimmed);
    } else if (op < 72) {
      EntryKey key{ts, rng() % 4};
      if (!ref.empty() && (rng() & 1)) {
        auto it = ref.begin();
        std::advance(it, static_cast<long>(rng() % ref.size()));
        key = it->first;
      }
      const bool present = ref.erase(key) > 0;
      REQUIRE(t.Remove(key) == present);
    } else if (op < 75) {
      const EntityId actor = rng() % 5;
      const EntryKey from{ts, 0};
      size_t removed = 0;
      for (auto it = ref.begin(); it != ref.end();) {
        if (it->second.actor == actor && it->first >= from) {
          it = ref.erase(it);
          ++removed;
        } else {
          ++it;
        }
      }
      REQUIRE(t.RemoveActor(actor, from) == removed);
    } else if (op < 85) {
      const size_t budget = 1 + rng() % 20;
      size_t expired = 0;
      for (const auto& [k, e] : ref) expired += e.expires_at <= now;
      const size_t n = t.EvictExpired(now, budget);
      REQUIRE(n == std::min(budget, expired));
      Ref after;
      for (const StoredEntry& e : t.Entries()) after[e.key()] = e;
      for (const auto& [k, e] : ref) {
        if (!after.contains(k)) REQUIRE(e.expires_at <= now);
      }
      REQUIRE(after.size() + n == ref.size());
      ref = after;
    } else if (op < 95) {
      const ReadOrder order =
          (rng() & 1) ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst;
      const Micros other =
          step / 2 * run.drift +
          static_cast<Micros>(rng() % static_cast<uint64_t>(run.ts_range + 10));
      const EntryKey lo{std::min(ts, other), rng() % 5};
      const EntryKey hi{std::max(ts, other), rng() % 5};
      const size_t want = 1 + rng() % 70;
      std::vector<StoredEntry> got;
      t.Collect(order, lo, hi, now, want, &got);
      REQUIRE(got == ExpectedCollect(ref, order, lo, hi, now, want));
      continue;
    } else {
      now += static_cast<Micros>(rng() % 50);
      continue;
    }
    REQUIRE(t.CheckInvariants());
    REQUIRE(t.size() == ref.size());
    REQUIRE(t.Entries() == Flatten(ref));
  }
  // Remove everything: the arena is empty again.
  for (const EntryKey k : Keys(t.Entries())) REQUIRE(t.Remove(k));
  CHECK(t.empty());
  CHECK(t.CheckInvariants());
  CHECK(arena.bytes_used() == 0);
}

TEST_CASE("random operations keep the invariants and match a reference") {
  // Few keys, random expiries: every chunk gets an expiry column.
  const RandomRun crowded{.cap = 64,
                          .ts_range = 200,
                          .drift = 0,
                          .shared_ttl_percent = 0,
                          .shared_ttl = 0};
  // A moving feed of many chunks, most sharing one TTL, with late and
  // early arrivals that split full chunks.
  const RandomRun feed{.cap = 700,
                       .ts_range = 400,
                       .drift = 1,
                       .shared_ttl_percent = 90,
                       .shared_ttl = 3000};
  // The same feed written in batches that share one expiry.
  const RandomRun batches{.cap = 700,
                          .ts_range = 400,
                          .drift = 1,
                          .shared_ttl_percent = 0,
                          .shared_ttl = 0,
                          .same_expiry_percent = 90};
  for (const RandomRun& run : {crowded, feed, batches}) {
    for (const uint64_t seed : {1u, 2u, 3u}) {
      CAPTURE(run.cap);
      CAPTURE(seed);
      RunRandomOperations(run, seed);
    }
  }
}

TEST_CASE("destroying a timeline returns every node to the arena") {
  NodeArena arena;
  {
    Timeline t(&arena, kSeed);
    std::mt19937_64 rng(5);
    for (int i = 0; i < 5000; ++i) {
      t.Put(E(static_cast<Micros>(rng() % 100000), rng() % 3,
              static_cast<Micros>(rng() % 1000)),
            100000);
    }
    CHECK(arena.bytes_used() > 0);
  }
  CHECK(arena.bytes_used() == 0);
}

// Grouped timelines, indexed or not: random puts (some overwriting a key
// with another group or actor), removes, trims, removals by actor and
// evictions against the reference, with the group keys read back and the
// index checked after every step.
TEST_CASE("grouped timelines keep group keys and an exact index") {
  for (const bool indexed : {false, true}) {
    CAPTURE(indexed);
    NodeArena arena;
    Timeline t(&arena, kSeed);
    t.EnableGroups(indexed);
    Ref ref;
    std::mt19937_64 rng(11);
    constexpr size_t kCap = 60;
    Micros now = 0;
    for (int step = 0; step < 20000; ++step) {
      CAPTURE(step);
      const int op = static_cast<int>(rng() % 100);
      StoredEntry e;
      e.ts = static_cast<Micros>(rng() % 400);
      e.activity_id = rng() % 4;
      e.actor = 1 + rng() % 6;
      e.expires_at = now + 1 + static_cast<Micros>(rng() % 300);
      e.group = rng() % 5;  // 0: a group of its own
      if (op < 60) {
        const Timeline::PutResult want = RefPut(&ref, e, kCap);
        const Timeline::PutResult got = t.Put(e, kCap);
        REQUIRE(got.outcome == want.outcome);
        REQUIRE(got.trimmed == want.trimmed);
      } else if (op < 75) {
        REQUIRE(t.Remove(e.key()) == (ref.erase(e.key()) == 1));
      } else if (op < 80) {
        size_t removed = 0;
        for (auto it = ref.begin(); it != ref.end();) {
          if (it->second.actor == e.actor) {
            it = ref.erase(it);
            ++removed;
          } else {
            ++it;
          }
        }
        REQUIRE(t.RemoveActor(e.actor) == removed);
      } else if (op < 95) {
        now += static_cast<Micros>(rng() % 20);
      } else {
        const size_t budget = 1 + rng() % 10;
        std::vector<EntryKey> keys;
        const size_t n = t.EvictExpired(now, budget, &keys);
        REQUIRE(n == keys.size());
        for (const EntryKey& k : keys) {
          auto it = ref.find(k);
          REQUIRE(it != ref.end());
          REQUIRE(it->second.expires_at <= now);
          ref.erase(it);
        }
      }
      REQUIRE(t.CheckInvariants());
      REQUIRE(t.Entries() == Flatten(ref));
      if (!ref.empty()) {
        const StoredEntry& any =
            std::next(ref.begin(), static_cast<long>(rng() % ref.size()))
                ->second;
        REQUIRE(t.GroupOf(any.key()) == any.group);
      }
      REQUIRE((t.groups() != nullptr) == indexed);
      if (indexed) {
        REQUIRE(t.groups()->entry_count() == ref.size());
        std::set<std::pair<GroupKey, EntryKey>> slots;
        for (const auto& [key, entry] : ref) {
          slots.insert({entry.group, entry.group == 0 ? key : EntryKey{}});
        }
        REQUIRE(t.groups()->group_count() == slots.size());
      }
    }
    for (const EntryKey k : Keys(t.Entries())) REQUIRE(t.Remove(k));
    CHECK(arena.bytes_used() == 0);
  }
}

}  // namespace
}  // namespace feedcore::internal
