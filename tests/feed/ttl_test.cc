// Tests of expiry through FeedEngine with a ManualClock: the exact instant
// an entry disappears, default and per-insert TTLs, absolute expiries, and
// EvictExpired's reclaiming, budget and counters.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::CheckShardSums;
using testing::NewManualEngine;
using testing::ReadAll;

constexpr Micros kStart = 5'000'000;

struct Fixture {
  explicit Fixture(Micros default_ttl = 30 * kMicrosPerDay)
      : clock(std::make_shared<ManualClock>(kStart)) {
    EngineOptions o;
    o.shards = 4;
    o.default_ttl = default_ttl;
    o.max_timeline_length = 100'000;
    engine = NewManualEngine(clock, o);
  }
  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<InProcessFeedEngine> engine;
};

InsertOptions Ttl(Micros ttl) {
  InsertOptions o;
  o.ttl = ttl;
  return o;
}

TEST_CASE("an entry is visible until now + ttl, exclusive") {
  Fixture f;
  constexpr Micros kTtl = 1000;
  REQUIRE(f.engine->Insert(1, {10, 1, 2}, Ttl(kTtl)).ok());
  std::vector<StoredEntry> all = ReadAll(*f.engine, 1);
  REQUIRE(all.size() == 1);
  CHECK(all[0].expires_at == kStart + kTtl);

  f.clock->Set(kStart + kTtl - 1);
  CHECK(ReadAll(*f.engine, 1).size() == 1);
  f.clock->Set(kStart + kTtl);
  CHECK(ReadAll(*f.engine, 1).empty());
  // Hidden, not yet reclaimed.
  CHECK(f.engine->Stats().value().entries == 1);
  CHECK(f.engine->EvictExpired(10).value() == 1);
  CHECK(f.engine->Stats().value().entries == 0);
  CHECK(f.engine->Stats().value().evicted == 1);
}

TEST_CASE("ttl 0 means the engine's default_ttl") {
  constexpr Micros kDefault = 5000;
  Fixture f(kDefault);
  REQUIRE(f.engine->Insert(1, {10, 1, 2}).ok());
  REQUIRE(f.engine->Insert(1, {11, 1, 2}, Ttl(0)).ok());
  for (const StoredEntry& e : ReadAll(*f.engine, 1)) {
    CHECK(e.expires_at == kStart + kDefault);
  }
  f.clock->Advance(kDefault - 1);
  CHECK(ReadAll(*f.engine, 1).size() == 2);
  f.clock->Advance(1);
  CHECK(ReadAll(*f.engine, 1).empty());
}

TEST_CASE("expires_at overrides ttl") {
  Fixture f;
  InsertOptions o;
  o.ttl = 100;
  o.expires_at = kStart + 7;
  REQUIRE(f.engine->Insert(1, {10, 1, 2}, o).ok());
  const std::vector<StoredEntry> all = ReadAll(*f.engine, 1);
  REQUIRE(all.size() == 1);
  CHECK(all[0].expires_at == kStart + 7);
  f.clock->Advance(6);
  CHECK(ReadAll(*f.engine, 1).size() == 1);
  f.clock->Advance(1);
  CHECK(ReadAll(*f.engine, 1).empty());
}

TEST_CASE("an expired entry that was not reclaimed can still be removed") {
  Fixture f;
  REQUIRE(f.engine->Insert(1, {10, 1, 2}, Ttl(5)).ok());
  f.clock->Advance(5);
  CHECK(f.engine->Remove(1, {10, 1}).ok());
  CHECK(f.engine->Stats().value().entries == 0);
  CHECK(f.engine->EvictExpired(10).value() == 0);
}

TEST_CASE("putting an expired key again revives it") {
  Fixture f;
  REQUIRE(f.engine->Insert(1, {10, 1, 2}, Ttl(5)).ok());
  f.clock->Advance(5);
  CHECK(ReadAll(*f.engine, 1).empty());
  const absl::StatusOr<InsertResult> r =
      f.engine->Insert(1, {10, 1, 3}, Ttl(5));
  REQUIRE(r.ok());
  CHECK(r->replaced == 1);
  CHECK(ReadAll(*f.engine, 1) ==
        std::vector<StoredEntry>{{10, 1, 3, kStart + 10, 0, {}}});
  CHECK(f.engine->Stats().value().entries == 1);
}

TEST_CASE("eviction reclaims entries and memory") {
  Fixture f;
  const EngineStats empty = f.engine->Stats().value();
  constexpr int kOwners = 50;
  constexpr int kPerOwner = 400;
  for (EntityId o = 1; o <= kOwners; ++o) {
    for (Micros ts = 0; ts < kPerOwner; ++ts) {
      REQUIRE(f.engine->Insert(o, {ts, o, 0}, Ttl(100)).ok());
    }
  }
  REQUIRE(f.engine->Insert(999, {1, 1, 1}).ok());  // long-lived
  const EngineStats full = f.engine->Stats().value();
  CHECK(full.entries == kOwners * kPerOwner + 1);
  CHECK(full.timelines == kOwners + 1);

  f.clock->Advance(99);
  CHECK(f.engine->EvictExpired(1'000'000).value() == 0);
  f.clock->Advance(1);
  CHECK(f.engine->EvictExpired(1'000'000).value() == kOwners * kPerOwner);

  const EngineStats after = f.engine->Stats().value();
  CHECK(after.entries == 1);
  CHECK(after.timelines == 1);
  CHECK(after.evicted == kOwners * kPerOwner);
  CHECK(after.bytes_used < full.bytes_used);
  CHECK(after.bytes_reserved < full.bytes_reserved);
  // Back near the empty engine's footprint: at most the long-lived entry's
  // share over what an empty engine holds, plus one node block per shard.
  CHECK(after.bytes_reserved <=
        empty.bytes_reserved +
            (full.bytes_reserved - empty.bytes_reserved) / 4);
  CheckShardSums(after);
  CHECK(ReadAll(*f.engine, 999).size() == 1);
}

TEST_CASE("the budget bounds each call") {
  Fixture f;
  for (EntityId o = 1; o <= 10; ++o) {
    for (Micros ts = 0; ts < 100; ++ts) {
      REQUIRE(f.engine->Insert(o, {ts, 1, 0}, Ttl(10 + ts % 7)).ok());
    }
  }
  f.clock->Advance(1000);
  size_t total = 0;
  for (const size_t expected : {300, 300, 300, 100, 0}) {
    const size_t n = f.engine->EvictExpired(300).value();
    CHECK(n == expected);
    total += n;
    CHECK(f.engine->Stats().value().evicted == total);
    CHECK(f.engine->Stats().value().entries == 1000 - total);
  }
  CHECK(f.engine->EvictExpired(1).value() == 0);
}

TEST_CASE("mixed TTLs: expired entries are never returned") {
  Fixture f;
  std::mt19937_64 rng(17);
  // owner -> key -> expires_at
  std::map<EntityId, std::map<std::pair<Micros, ActivityId>, Micros>> ref;
  for (int i = 0; i < 3000; ++i) {
    const EntityId owner = 1 + rng() % 6;
    const Micros ts = static_cast<Micros>(rng() % 10000);
    const ActivityId id = rng() % 3;
    const Micros ttl = 1 + static_cast<Micros>(rng() % 2000);
    REQUIRE(f.engine->Insert(owner, {ts, id, 0}, Ttl(ttl)).ok());
    ref[owner][{ts, id}] = kStart + ttl;
  }
  size_t stored = 0;
  for (const auto& [owner, entries] : ref) stored += entries.size();

  size_t evicted = 0;
  for (Micros step = 0; step <= 2100; step += 70) {
    f.clock->Set(kStart + step);
    const Micros now = kStart + step;
    size_t expired = 0;
    for (const auto& [owner, entries] : ref) {
      std::vector<StoredEntry> want;
      for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
        if (it->second > now) {
          want.push_back(
              {it->first.first, it->first.second, 0, it->second, 0, {}});
        } else {
          ++expired;
        }
      }
      ReadOptions options;
      options.limit = 97;
      CHECK(ReadAll(*f.engine, owner, options) == want);
    }
    // Every other step, reclaim; the others read unreclaimed entries.
    CHECK(f.engine->Stats().value().entries == stored - evicted);
    if ((step / 70) % 2 == 1) {
      const size_t n = f.engine->EvictExpired(1'000'000).value();
      CHECK(n == expired - evicted);
      evicted += n;
      CHECK(f.engine->Stats().value().evicted == evicted);
    }
  }
  f.engine->EvictExpired(1'000'000).value();
  CHECK(f.engine->Stats().value().entries == 0);
  CHECK(f.engine->Stats().value().timelines == 0);
}

}  // namespace
}  // namespace feedcore
