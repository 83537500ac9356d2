// Concurrency tests of FeedEngine: writer threads (single, fan-out across
// shards, batch), removers, evictors and a moving clock race with readers
// that page through the same timelines. Readers check every walk for order
// and duplicates; afterwards the final contents are compared with what the
// writers' own logs say they must be.
//
// Iteration counts are fixed (scaled by FEEDCORE_STRESS_SCALE, default 1)
// and every thread has a fixed seed; nothing waits on time.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/test_util.h"
#include "support/thread_failures.h"

namespace feedcore {
namespace {

using Key = std::pair<Micros, ActivityId>;

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Every activity id determines its timestamp and actor, so a reader can
// tell a torn or invented entry from a real one.
Micros TsOf(ActivityId id) { return static_cast<Micros>(Mix(id) % 1'000'000); }
EntityId ActorOf(ActivityId id) { return Mix(id ^ 0xabcdef) % 1000; }
TimelineEntry EntryOf(ActivityId id) { return {TsOf(id), id, ActorOf(id)}; }
ActivityId IdOf(int thread, uint64_t i) {
  return (static_cast<uint64_t>(thread + 1) << 40) | i;
}

uint64_t Scale() { return testing::EnvU64("FEEDCORE_STRESS_SCALE", 1); }

using testing::Failures;

std::string KeyText(const StoredEntry& e) {
  return "(" + std::to_string(e.ts) + "," + std::to_string(e.activity_id) + ")";
}

bool Before(const StoredEntry& a, const StoredEntry& b, ReadOrder order) {
  const Key ka{a.ts, a.activity_id};
  const Key kb{b.ts, b.activity_id};
  return order == ReadOrder::kNewestFirst ? ka > kb : ka < kb;
}

// One complete walk through `owner`'s timeline. Checks that entries are
// genuine, visible at read time, strictly ordered within and across pages
// (hence no duplicates), and that the window is respected.
void Walk(const InProcessFeedEngine& engine, const ManualClock& clock, EntityId owner,
          std::mt19937_64& rng, Failures* failures) {
  ReadOptions r;
  r.order = rng() % 2 ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst;
  if (rng() % 4 == 0) {
    const Micros a = static_cast<Micros>(rng() % 1'000'000);
    const Micros b = static_cast<Micros>(rng() % 1'000'000);
    r.min_ts = std::min(a, b);
    r.max_ts = std::max(a, b);
  }
  std::optional<StoredEntry> prev;
  std::set<ActivityId> seen;
  for (int pages = 0; pages < 100'000; ++pages) {
    r.limit = 1 + rng() % 20;
    const Micros now_before = clock.Now();
    const absl::StatusOr<Page> page = engine.ReadTimeline(owner, r);
    if (!page.ok()) {
      failures->Add("read failed: " + page.status().ToString());
      return;
    }
    if (page->entries.size() > r.limit) failures->Add("page over limit");
    for (const StoredEntry& e : page->entries) {
      if (e.ts != TsOf(e.activity_id) || e.actor != ActorOf(e.activity_id)) {
        failures->Add("entry not written by anyone: " + KeyText(e));
      }
      if (e.expires_at <= now_before) {
        failures->Add("expired entry returned: " + KeyText(e));
      }
      if ((r.min_ts && e.ts < *r.min_ts) || (r.max_ts && e.ts > *r.max_ts)) {
        failures->Add("entry outside the window: " + KeyText(e));
      }
      if (prev && !Before(*prev, e, r.order)) {
        failures->Add("out of order or repeated: " + KeyText(*prev) + " then " +
                      KeyText(e));
      }
      if (!seen.insert(e.activity_id).second) {
        failures->Add("duplicate in one walk: " + KeyText(e));
      }
      prev = e;
    }
    if (page->next_cursor.empty()) return;
    if (page->entries.empty()) failures->Add("empty page with a cursor");
    r.cursor = page->next_cursor;
  }
  failures->Add("walk did not end");
}

struct Totals {
  size_t inserted = 0, replaced = 0, rejected = 0, trimmed = 0, pairs = 0;
  void Add(const InsertResult& r, size_t n) {
    inserted += r.inserted;
    replaced += r.replaced;
    rejected += r.rejected_by_cap;
    trimmed += r.trimmed;
    pairs += n;
  }
};

TEST_CASE("concurrent writers and readers with fan-out and a cap") {
  constexpr int kWriters = 3;
  constexpr int kReaders = 2;
  constexpr EntityId kOwners = 16;
  constexpr size_t kCap = 40;
  const uint64_t writes = 20000 * Scale();
  const uint64_t walks = 1500 * Scale();

  auto clock = std::make_shared<ManualClock>(1'000'000);
  EngineOptions options;
  options.shards = 4;
  options.max_timeline_length = kCap;
  options.max_page_size = 50;
  const std::unique_ptr<InProcessFeedEngine> engine =
      testing::NewManualEngine(clock, options);

  // written[w]: every (owner, id) pair writer w stored.
  std::vector<std::vector<std::pair<EntityId, ActivityId>>> written(kWriters);
  std::vector<Totals> totals(kWriters);
  std::vector<std::string> writer_errors(kWriters);
  Failures failures;
  std::latch start(kWriters + kReaders);
  std::vector<std::thread> threads;

  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937_64 rng(1000 + w);
      uint64_t next = 0;
      start.arrive_and_wait();
      for (uint64_t i = 0; i < writes && writer_errors[w].empty(); ++i) {
        const int kind = static_cast<int>(rng() % 4);
        if (kind < 2) {
          const EntityId owner = 1 + rng() % kOwners;
          const ActivityId id = IdOf(w, next++);
          const absl::StatusOr<InsertResult> r =
              engine->Insert(owner, EntryOf(id));
          if (!r.ok()) writer_errors[w] = r.status().ToString();
          if (!r.ok()) break;
          totals[w].Add(*r, 1);
          written[w].emplace_back(owner, id);
        } else if (kind == 2) {
          // Fan-out to distinct owners spread over the shards.
          std::vector<EntityId> owners;
          for (EntityId o = 1; o <= kOwners; ++o) {
            if (rng() % 3 == 0) owners.push_back(o);
          }
          const ActivityId id = IdOf(w, next++);
          const absl::StatusOr<InsertResult> r =
              engine->InsertFanout(owners, EntryOf(id));
          if (!r.ok()) writer_errors[w] = r.status().ToString();
          if (!r.ok()) break;
          totals[w].Add(*r, owners.size());
          for (const EntityId o : owners) written[w].emplace_back(o, id);
        } else {
          std::vector<OwnedEntry> batch(1 + rng() % 4);
          for (OwnedEntry& pair : batch) {
            pair.owner = 1 + rng() % kOwners;
            pair.entry = EntryOf(IdOf(w, next++));
          }
          const absl::StatusOr<InsertResult> r = engine->InsertBatch(batch);
          if (!r.ok()) writer_errors[w] = r.status().ToString();
          if (!r.ok()) break;
          totals[w].Add(*r, batch.size());
          for (const OwnedEntry& pair : batch) {
            written[w].emplace_back(pair.owner, pair.entry.activity_id);
          }
        }
      }
    });
  }
  for (int rd = 0; rd < kReaders; ++rd) {
    threads.emplace_back([&, rd] {
      std::mt19937_64 rng(2000 + rd);
      start.arrive_and_wait();
      for (uint64_t i = 0; i < walks; ++i) {
        Walk(*engine, *clock, 1 + rng() % kOwners, rng, &failures);
        if (i % 16 == 0) {
          const EngineStats s = engine->Stats().value();
          size_t entries = 0;
          for (const ShardStats& shard : s.shards) {
            entries += shard.entries;
            if (shard.entries > shard.timelines * kCap) {
              failures.Add("a shard holds more than its timelines' caps");
            }
          }
          if (entries != s.entries) failures.Add("shard sums differ");
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  failures.Report();
  for (const std::string& e : writer_errors) CHECK_MESSAGE(e.empty(), e);

  // Each timeline holds the kCap newest of the keys written to it,
  // whatever the interleaving (keys are unique, nothing is removed).
  std::map<EntityId, std::vector<Key>> expected;
  Totals sum;
  for (int w = 0; w < kWriters; ++w) {
    for (const auto& [owner, id] : written[w]) {
      expected[owner].emplace_back(TsOf(id), id);
    }
    sum.inserted += totals[w].inserted;
    sum.replaced += totals[w].replaced;
    sum.rejected += totals[w].rejected;
    sum.trimmed += totals[w].trimmed;
    sum.pairs += totals[w].pairs;
  }
  size_t held = 0;
  for (auto& owner_keys : expected) {
    const EntityId owner = owner_keys.first;
    std::vector<Key>& keys = owner_keys.second;
    std::sort(keys.begin(), keys.end(), std::greater<>());
    if (keys.size() > kCap) keys.resize(kCap);
    std::vector<Key> got;
    for (const StoredEntry& e : testing::ReadAll(*engine, owner)) {
      got.emplace_back(e.ts, e.activity_id);
      CHECK(e.actor == ActorOf(e.activity_id));
    }
    INFO("owner " << owner);
    CHECK(got == keys);
    held += keys.size();
  }
  const EngineStats stats = engine->Stats().value();
  CHECK(sum.inserted + sum.replaced + sum.rejected == sum.pairs);
  CHECK(sum.replaced == 0);
  CHECK(sum.inserted - sum.trimmed == held);
  CHECK(stats.entries == held);
  CHECK(stats.timelines == expected.size());
  CHECK((stats.trimmed == sum.trimmed ||
         stats.trimmed == sum.trimmed + sum.rejected));
  testing::CheckShardSums(stats);
}

// What a writer knows about one entry it stored.
struct Record {
  EntityId owner;
  ActivityId id;
  Micros exp_lo, exp_hi;  // the engine's expires_at lies in [exp_lo, exp_hi]
  bool removed = false;
};

TEST_CASE("concurrent writes, removals, evictions and a moving clock") {
  constexpr int kWriters = 3;
  constexpr int kReaders = 2;
  constexpr EntityId kOwners = 8;
  const uint64_t writes = 20000 * Scale();
  const uint64_t walks = 1000 * Scale();
  const uint64_t ticks = 200000 * Scale();

  auto clock = std::make_shared<ManualClock>(1'000'000);
  EngineOptions options;
  options.shards = 4;
  options.max_timeline_length = 1'000'000;  // no trimming here
  options.max_page_size = 50;
  const std::unique_ptr<InProcessFeedEngine> engine =
      testing::NewManualEngine(clock, options);

  std::vector<std::vector<Record>> records(kWriters);
  std::vector<size_t> inserted(kWriters, 0);
  std::vector<size_t> removes(kWriters, 0);  // Remove calls that succeeded
  std::vector<std::string> writer_errors(kWriters);
  std::atomic<uint64_t> evicted{0};
  std::atomic<int> writers_left{kWriters};
  Failures failures;
  std::latch start(kWriters + kReaders + 2);
  std::vector<std::thread> threads;

  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937_64 rng(3000 + w);
      uint64_t next = 0;
      std::vector<Record>& mine = records[w];
      std::string& error = writer_errors[w];
      start.arrive_and_wait();
      for (uint64_t i = 0; i < writes && error.empty(); ++i) {
        const int kind = static_cast<int>(rng() % 10);
        if (kind < 2 && !mine.empty()) {
          Record& rec = mine[rng() % mine.size()];
          if (rec.removed) continue;
          const ActivityId id = rec.id;
          const absl::Status s = engine->Remove(rec.owner, {TsOf(id), id});
          if (s.ok()) {
            rec.removed = true;
            ++removes[w];
          } else if (absl::IsNotFound(s)) {
            // Only an eviction may have taken it, so it had expired.
            if (rec.exp_lo > clock->Now()) {
              error = "Remove: NotFound for an unexpired entry";
            }
            rec.removed = true;  // gone either way
          } else {
            error = "Remove: " + s.ToString();
          }
          continue;
        }
        const ActivityId id = IdOf(w, next++);
        const Micros ttl = 50 + static_cast<Micros>(rng() % 3000);
        InsertOptions o;
        const bool absolute = rng() % 2 == 0;
        const Micros before = clock->Now();
        if (absolute) {
          o.expires_at = before + ttl;
        } else {
          o.ttl = ttl;
        }
        std::vector<EntityId> owners = {1 + rng() % kOwners};
        if (kind == 9) {
          owners.clear();
          for (EntityId owner = 1; owner <= kOwners; ++owner) {
            if (rng() % 2) owners.push_back(owner);
          }
        }
        const absl::StatusOr<InsertResult> r =
            engine->InsertFanout(owners, EntryOf(id), o);
        const Micros after = clock->Now();
        if (!r.ok()) {
          // Only legitimate if the clock passed the absolute expiry.
          if (!(absolute && absl::IsInvalidArgument(r.status()) &&
                *o.expires_at <= after)) {
            error = "Insert: " + r.status().ToString();
          }
          continue;
        }
        if (r->inserted != owners.size()) error = "Insert: wrong counts";
        inserted[w] += r->inserted;
        for (const EntityId owner : owners) {
          if (absolute) {
            mine.push_back({owner, id, *o.expires_at, *o.expires_at});
          } else {
            mine.push_back({owner, id, before + ttl, after + ttl});
          }
        }
      }
      writers_left.fetch_sub(1);
    });
  }
  // The clock: moves forward while writers run (bounded either way).
  threads.emplace_back([&] {
    std::mt19937_64 rng(4000);
    start.arrive_and_wait();
    for (uint64_t i = 0; i < ticks && writers_left.load() > 0; ++i) {
      clock->Advance(static_cast<Micros>(rng() % 3));
      if (i % 64 == 0) std::this_thread::yield();
    }
  });
  // An evictor racing with everything else.
  threads.emplace_back([&] {
    std::mt19937_64 rng(5000);
    start.arrive_and_wait();
    for (uint64_t i = 0; i < ticks && writers_left.load() > 0; ++i) {
      evicted.fetch_add(engine->EvictExpired(1 + rng() % 50).value());
    }
  });
  for (int rd = 0; rd < kReaders; ++rd) {
    threads.emplace_back([&, rd] {
      std::mt19937_64 rng(6000 + rd);
      start.arrive_and_wait();
      for (uint64_t i = 0; i < walks; ++i) {
        Walk(*engine, *clock, 1 + rng() % kOwners, rng, &failures);
        // Readers evict too, so evictions race with each other.
        if (i % 4 == 0) evicted.fetch_add(engine->EvictExpired(20).value());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  failures.Report();
  for (const std::string& e : writer_errors) CHECK_MESSAGE(e.empty(), e);

  // Counters agree with the writers' logs: every stored entry is still
  // held, was removed by a successful Remove, or was evicted.
  size_t total_inserted = 0, removed_ok = 0;
  for (int w = 0; w < kWriters; ++w) {
    total_inserted += inserted[w];
    removed_ok += removes[w];
  }
  EngineStats stats = engine->Stats().value();
  CHECK(stats.evicted == evicted.load());
  CHECK(stats.entries == total_inserted - removed_ok - stats.evicted);

  // Visible contents: the writers' unremoved records, minus what expired.
  const Micros now = clock->Now();
  std::map<EntityId, std::map<ActivityId, const Record*>> live;
  for (const auto& mine : records) {
    for (const Record& rec : mine) {
      if (!rec.removed) live[rec.owner][rec.id] = &rec;
    }
  }
  size_t visible = 0;
  for (EntityId owner = 1; owner <= kOwners; ++owner) {
    INFO("owner " << owner);
    std::set<ActivityId> got;
    for (const StoredEntry& e : testing::ReadAll(*engine, owner)) {
      got.insert(e.activity_id);
      auto it = live[owner].find(e.activity_id);
      if (it == live[owner].end()) {
        CHECK_MESSAGE(false, "unexpected entry " << KeyText(e));
        continue;
      }
      CHECK(e.expires_at >= it->second->exp_lo);
      CHECK(e.expires_at <= it->second->exp_hi);
      CHECK(e.expires_at > now);
    }
    for (const auto& id_rec : live[owner]) {
      const ActivityId id = id_rec.first;
      const Record& rec = *id_rec.second;
      if (rec.exp_lo > now) CHECK_MESSAGE(got.contains(id), "missing " << id);
      if (rec.exp_hi <= now) {
        CHECK_MESSAGE(!got.contains(id), "expired " << id);
      }
    }
    visible += got.size();
  }

  // Reclaim everything expired: what is left is exactly what is visible.
  uint64_t more = 0;
  for (size_t n; (n = engine->EvictExpired(1000).value()) > 0;) more += n;
  stats = engine->Stats().value();
  CHECK(stats.evicted == evicted.load() + more);
  CHECK(stats.entries == visible);
  CHECK(stats.entries == total_inserted - removed_ok - stats.evicted);
  testing::CheckShardSums(stats);
}

}  // namespace
}  // namespace feedcore
