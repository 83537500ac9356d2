// The activity kinds of a timeline's entries (timeline_chunk.h's kind
// column): a chunk gets the column with its first entry of a kind other
// than 0 and keeps every kind through appends, inserts in the middle,
// splits, replacements, removals and trims; a filtered Collect keeps the
// kinds asked for in both orders; a timeline of kind 0 only takes no more
// memory than before kinds existed; with the cap per kind (an own feed)
// each kind keeps its newest entries.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "memory/node_arena.h"
#include "support/test_util.h"
#include "timeline/timeline.h"

namespace feedcore::internal {
namespace {

constexpr Micros kFar = 1'000'000'000'000;
constexpr uint64_t kSeed = 0x6b69'6e64'0000'0001;

StoredEntry E(Micros ts, ActivityId id, ActivityKind kind,
              Micros expires_at = kFar, EntityId actor = 0) {
  StoredEntry e{ts, id, actor, expires_at, 0, {}, 0};
  e.kind = kind;
  return e;
}

using Ref = std::map<EntryKey, StoredEntry, std::greater<>>;

std::vector<StoredEntry> Expected(const Ref& ref, ReadOrder order, Micros now,
                                  size_t want, uint64_t kinds) {
  std::vector<StoredEntry> all;
  for (const auto& [key, entry] : ref) all.push_back(entry);
  if (order == ReadOrder::kOldestFirst) std::reverse(all.begin(), all.end());
  std::vector<StoredEntry> out;
  for (const StoredEntry& e : all) {
    if (out.size() == want) break;
    if (e.expires_at <= now || ((kinds >> e.kind) & 1) == 0) continue;
    out.push_back(e);
  }
  return out;
}

TEST_CASE("a filtered collect keeps the kinds asked for, in both orders") {
  NodeArena arena;
  Timeline t(&arena, kSeed);
  for (ActivityId id = 1; id <= 100; ++id) {
    t.Put(E(static_cast<Micros>(id), id, static_cast<ActivityKind>(id % 4)),
          1000);
  }
  REQUIRE(t.CheckInvariants());
  std::vector<StoredEntry> out;
  t.Collect(ReadOrder::kNewestFirst, EntryKey::Min(), EntryKey::Max(), 0, 5,
            &out, /*kinds=*/0b100);
  std::vector<ActivityId> ids;
  for (const StoredEntry& e : out) {
    ids.push_back(e.activity_id);
    CHECK(e.kind == 2);
  }
  CHECK(ids == std::vector<ActivityId>{98, 94, 90, 86, 82});
  out.clear();
  t.Collect(ReadOrder::kOldestFirst, {50, 0}, EntryKey::Max(), 0, 3, &out,
            /*kinds=*/0b1001);
  ids.clear();
  for (const StoredEntry& e : out) ids.push_back(e.activity_id);
  CHECK(ids == std::vector<ActivityId>{51, 52, 55});
}

TEST_CASE("a timeline of kind 0 only carries no kind column") {
  NodeArena plain_arena;
  NodeArena kinded_arena;
  Timeline plain(&plain_arena, kSeed);
  Timeline kinded(&kinded_arena, kSeed);
  // One chunk of two slots each (the first chunk's size): the kind column
  // is one byte a slot, rounded up to 8.
  for (ActivityId id = 1; id <= 2; ++id) {
    const Micros ts = static_cast<Micros>(id);
    plain.Put(E(ts, id, 0), 1000);
    kinded.Put(E(ts, id, id == 2 ? 3 : 0), 1000);
  }
  CHECK(kinded_arena.bytes_used() == plain_arena.bytes_used() + 8);
  CHECK(kinded.Entries()[0].kind == 3);
  CHECK(kinded.Entries()[1].kind == 0);
  CHECK(plain.Entries()[0].kind == 0);
  // Full chunks: 26 bytes an entry, as documented, and the column of the
  // one chunk holding a kind fits the allocation's rounding.
  for (ActivityId id = 3; id <= 200; ++id) {
    const Micros ts = static_cast<Micros>(id);
    plain.Put(E(ts, id, 0), 1000);
    kinded.Put(E(ts, id, 0), 1000);
  }
  CHECK(plain_arena.bytes_used() <= 200 * 26 + 2 * 832);
  CHECK(kinded_arena.bytes_used() <= plain_arena.bytes_used() + 64);
  CHECK(kinded.CheckInvariants());
}

// Put's contract on the reference: replace, refuse what a full timeline
// would trim at once, or insert and trim the oldest; with the cap per kind,
// all of that among the entries of the entry's kind.
Timeline::PutOutcome RefPut(Ref& ref, const StoredEntry& e, size_t cap,
                            bool per_kind) {
  const auto counted = [&](const StoredEntry& other) {
    return !per_kind || other.kind == e.kind;
  };
  const auto oldest_counted = [&]() {
    auto it = std::find_if(ref.rbegin(), ref.rend(),
                           [&](const auto& kv) { return counted(kv.second); });
    return std::prev(it.base());
  };
  const auto count = [&]() {
    return static_cast<size_t>(
        std::count_if(ref.begin(), ref.end(),
                      [&](const auto& kv) { return counted(kv.second); }));
  };
  Timeline::PutOutcome outcome = Timeline::PutOutcome::kInserted;
  if (auto it = ref.find(e.key()); it != ref.end()) {
    it->second = e;
    outcome = Timeline::PutOutcome::kReplaced;
  } else if (count() >= cap && e.key() < oldest_counted()->first) {
    return Timeline::PutOutcome::kRejectedByCap;
  } else {
    ref[e.key()] = e;
  }
  while (count() > cap) ref.erase(oldest_counted());
  return outcome;
}

TEST_CASE("kinds survive every change of a chunk, against a reference") {
  std::mt19937_64 rng(testing::EnvU64("FEEDCORE_MODEL_SEED", kSeed));
  for (int round = 0; round < 60; ++round) {
    NodeArena arena;
    Timeline t(&arena, kSeed + static_cast<uint64_t>(round));
    // Every third round keeps the cap per kind, as an own feed does.
    const bool per_kind = round % 3 == 0;
    if (per_kind) t.KeepCapPerKind();
    Ref ref;
    const size_t cap = per_kind ? 3 + rng() % 20 : 10 + rng() % 120;
    Micros head = 1000;
    const Micros now = 500;
    // Rounds differ in how common kinds are: none, rare, everywhere.
    const uint64_t kinded_per_16 = rng() % 17;
    for (int step = 0; step < 600; ++step) {
      const uint64_t op = rng() % 10;
      if (op < 7) {
        head += static_cast<Micros>(rng() % 3);
        const Micros ts =
            rng() % 3 != 0 ? head : static_cast<Micros>(rng() % head);
        const ActivityKind kind = rng() % 16 < kinded_per_16
                                      ? static_cast<ActivityKind>(rng() % 5)
                                      : 0;
        // Expiry in the past for some, so that filtered walks skip both.
        const Micros expires_at =
            rng() % 8 == 0 ? now - 1
                           : ts + 10'000 + static_cast<Micros>(rng() % 50);
        const StoredEntry e = E(ts, rng() % 3, kind, expires_at);
        REQUIRE(t.Put(e, cap).outcome == RefPut(ref, e, cap, per_kind));
      } else if (op < 8 && !ref.empty()) {
        auto it = ref.begin();
        std::advance(it, static_cast<long>(rng() % ref.size()));
        CHECK(t.Remove(it->first));
        ref.erase(it);
      } else if (op < 9 && !ref.empty()) {
        // Replace an entry's kind in place.
        auto it = ref.begin();
        std::advance(it, static_cast<long>(rng() % ref.size()));
        StoredEntry e = it->second;
        e.kind = static_cast<ActivityKind>(rng() % 5);
        CHECK(t.Put(e, cap).outcome == Timeline::PutOutcome::kReplaced);
        RefPut(ref, e, cap, per_kind);
      } else {
        const EntityId actor = 0;
        if (rng() % 2 == 0) {
          t.EvictExpired(now, 1000);
          std::erase_if(
              ref, [&](const auto& kv) { return kv.second.expires_at <= now; });
        } else if (rng() % 2 == 0) {
          t.RemoveActor(actor, {head - 5, 0});
          std::erase_if(ref, [&](const auto& kv) {
            return kv.first >= EntryKey{head - 5, 0};
          });
        }
      }
      REQUIRE(t.size() == ref.size());
      if (per_kind) {
        const ActivityKind k = static_cast<ActivityKind>(rng() % 5);
        REQUIRE(t.CappedCount(k) ==
                static_cast<size_t>(std::count_if(
                    ref.begin(), ref.end(),
                    [&](const auto& kv) { return kv.second.kind == k; })));
        REQUIRE(t.CheckInvariants());
      }
      const uint64_t kinds =
          rng() % 2 ? KindFilter::kEveryKind : 1 + rng() % 31;
      const ReadOrder order =
          rng() % 2 ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst;
      const size_t want = 1 + rng() % 40;
      std::vector<StoredEntry> got;
      t.Collect(order, EntryKey::Min(), EntryKey::Max(), now, want, &got,
                kinds);
      INFO("round " << round << " step " << step << " kinds " << kinds);
      REQUIRE(got == Expected(ref, order, now, want, kinds));
    }
    REQUIRE(t.CheckInvariants());
    std::vector<StoredEntry> all;
    for (const auto& [key, entry] : ref) all.push_back(entry);
    CHECK(t.Entries() == all);
  }
}

}  // namespace
}  // namespace feedcore::internal
