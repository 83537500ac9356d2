// Tests of FeedEngine's write and read calls: happy paths, InsertResult
// counts, idempotent puts, the cap, removal, error paths (and that a
// rejected call changes nothing), Stats, and the background sweeper.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::CheckShardSums;
using testing::Digest;
using testing::NewManualEngine;
using testing::ReadAll;

constexpr Micros kStart = 1'000'000'000;
constexpr Micros kDefaultTtl = 30 * kMicrosPerDay;

TimelineEntry T(Micros ts, ActivityId id, EntityId actor = 9) {
  return {ts, id, actor};
}

StoredEntry S(Micros ts, ActivityId id, EntityId actor, Micros expires_at) {
  return {ts, id, actor, expires_at, 0, {}};
}

bool Same(const InsertResult& r, size_t inserted, size_t replaced,
          size_t rejected, size_t trimmed) {
  return r.inserted == inserted && r.replaced == replaced &&
         r.rejected_by_cap == rejected && r.trimmed == trimmed;
}

std::string Show(const InsertResult& r) {
  return "{inserted=" + std::to_string(r.inserted) +
         " replaced=" + std::to_string(r.replaced) +
         " rejected=" + std::to_string(r.rejected_by_cap) +
         " trimmed=" + std::to_string(r.trimmed) + "}";
}

#define CHECK_RESULT(expr, ins, rep, rej, trim)                         \
  do {                                                                  \
    const auto result_ = (expr);                                        \
    REQUIRE_MESSAGE(result_.ok(), result_.status());                    \
    CHECK_MESSAGE(Same(*result_, ins, rep, rej, trim), Show(*result_)); \
  } while (0)

struct Fixture {
  explicit Fixture(EngineOptions options = DefaultOptions())
      : clock(std::make_shared<ManualClock>(kStart)),
        engine(NewManualEngine(clock, std::move(options))) {}
  static EngineOptions DefaultOptions() {
    EngineOptions o;
    o.shards = 8;
    return o;
  }
  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<InProcessFeedEngine> engine;
};

TEST_CASE("insert then read newest first") {
  Fixture f;
  CHECK_RESULT(f.engine->Insert(1, T(100, 1, 7)), 1, 0, 0, 0);
  CHECK_RESULT(f.engine->Insert(1, T(300, 2, 8)), 1, 0, 0, 0);
  CHECK_RESULT(f.engine->Insert(1, T(200, 3, 9)), 1, 0, 0, 0);
  CHECK_RESULT(f.engine->Insert(1, T(200, 1, 9)), 1, 0, 0, 0);
  const Micros exp = kStart + kDefaultTtl;
  const absl::StatusOr<Page> page = f.engine->ReadTimeline(1, {});
  REQUIRE(page.ok());
  CHECK(page->entries ==
        std::vector<StoredEntry>{S(300, 2, 8, exp), S(200, 3, 9, exp),
                                 S(200, 1, 9, exp), S(100, 1, 7, exp)});
  CHECK(page->next_cursor.empty());

  ReadOptions oldest;
  oldest.order = ReadOrder::kOldestFirst;
  const absl::StatusOr<Page> back = f.engine->ReadTimeline(1, oldest);
  REQUIRE(back.ok());
  CHECK(back->entries ==
        std::vector<StoredEntry>{S(100, 1, 7, exp), S(200, 1, 9, exp),
                                 S(200, 3, 9, exp), S(300, 2, 8, exp)});

  // Another owner is unaffected; an unknown owner reads as empty.
  const absl::StatusOr<Page> other = f.engine->ReadTimeline(2, {});
  REQUIRE(other.ok());
  CHECK(other->entries.empty());
  CHECK(other->next_cursor.empty());
  // ts = 0 is a valid timestamp.
  CHECK_RESULT(f.engine->Insert(2, T(0, 0)), 1, 0, 0, 0);
  CHECK(ReadAll(*f.engine, 2).size() == 1);
}

TEST_CASE("putting the same key again replaces actor and expiry") {
  Fixture f;
  CHECK_RESULT(f.engine->Insert(1, T(100, 1, 7)), 1, 0, 0, 0);
  f.clock->Advance(50);
  CHECK_RESULT(f.engine->Insert(1, T(100, 1, 8)), 0, 1, 0, 0);
  CHECK(ReadAll(*f.engine, 1) ==
        std::vector<StoredEntry>{S(100, 1, 8, kStart + 50 + kDefaultTtl)});
  InsertOptions o;
  o.ttl = 10;
  CHECK_RESULT(f.engine->Insert(1, T(100, 1, 8), o), 0, 1, 0, 0);
  CHECK(ReadAll(*f.engine, 1) ==
        std::vector<StoredEntry>{S(100, 1, 8, kStart + 60)});
  const EngineStats stats = f.engine->Stats().value();
  CHECK(stats.entries == 1);
  CHECK(stats.timelines == 1);
}

TEST_CASE("fan-out puts one entry in every owner's timeline") {
  Fixture f;
  std::vector<EntityId> owners;
  for (EntityId o = 100; o < 300; ++o) owners.push_back(o);
  CHECK_RESULT(f.engine->InsertFanout(owners, T(5, 55, 1)), 200, 0, 0, 0);
  for (const EntityId o : owners) {
    CHECK(ReadAll(*f.engine, o) ==
          std::vector<StoredEntry>{S(5, 55, 1, kStart + kDefaultTtl)});
  }
  // Again: all replaced.
  CHECK_RESULT(f.engine->InsertFanout(owners, T(5, 55, 2)), 0, 200, 0, 0);
  const EngineStats stats = f.engine->Stats().value();
  CHECK(stats.timelines == 200);
  CHECK(stats.entries == 200);
  CheckShardSums(stats);
  // The owners landed in more than one shard.
  size_t used_shards = 0;
  for (const ShardStats& s : stats.shards) used_shards += s.entries > 0;
  CHECK(used_shards > 1);

  // No owners: nothing to do.
  CHECK_RESULT(f.engine->InsertFanout({}, T(6, 66)), 0, 0, 0, 0);
}

TEST_CASE("fan-out with duplicate owners stores one entry per owner") {
  Fixture f;
  const std::vector<EntityId> owners = {1, 2, 1, 3, 2};
  const absl::StatusOr<InsertResult> r =
      f.engine->InsertFanout(owners, T(5, 1));
  REQUIRE(r.ok());
  CHECK(r->inserted == 3);
  CHECK(r->rejected_by_cap == 0);
  // Either the duplicates are dropped or they count as replacements.
  CHECK((r->replaced == 0 || r->replaced == 2));
  for (const EntityId o : {1, 2, 3}) CHECK(ReadAll(*f.engine, o).size() == 1);
  CHECK(f.engine->Stats().value().entries == 3);
}

TEST_CASE("batch insert across owners and shards") {
  Fixture f;
  std::vector<OwnedEntry> batch;
  for (EntityId o = 1; o <= 20; ++o) {
    for (Micros ts = 1; ts <= 3; ++ts) {
      batch.push_back({o, T(ts * 10, o, o + 100)});
    }
  }
  CHECK_RESULT(f.engine->InsertBatch(batch), 60, 0, 0, 0);
  for (EntityId o = 1; o <= 20; ++o) {
    const Micros exp = kStart + kDefaultTtl;
    CHECK(ReadAll(*f.engine, o) ==
          std::vector<StoredEntry>{S(30, o, o + 100, exp),
                                   S(20, o, o + 100, exp),
                                   S(10, o, o + 100, exp)});
  }
  // The same key twice in one batch: the later one wins.
  InsertOptions o;
  o.ttl = 1000;
  CHECK_RESULT(f.engine->InsertBatch(
                   {{50, T(7, 7, 1)}, {51, T(7, 7, 1)}, {50, T(7, 7, 2)}}, o),
               2, 1, 0, 0);
  CHECK(ReadAll(*f.engine, 50) ==
        std::vector<StoredEntry>{S(7, 7, 2, kStart + 1000)});
  CHECK_RESULT(f.engine->InsertBatch({}), 0, 0, 0, 0);
  CHECK(f.engine->Stats().value().entries == 62);
}

TEST_CASE("the cap trims the oldest and rejects older-than-all") {
  EngineOptions options = Fixture::DefaultOptions();
  options.max_timeline_length = 3;
  Fixture f(options);
  CHECK_RESULT(f.engine->Insert(1, T(10, 0)), 1, 0, 0, 0);
  CHECK_RESULT(f.engine->Insert(1, T(20, 0)), 1, 0, 0, 0);
  CHECK_RESULT(f.engine->Insert(1, T(30, 0)), 1, 0, 0, 0);
  CHECK_RESULT(f.engine->Insert(1, T(40, 0)), 1, 0, 0, 1);
  CHECK_RESULT(f.engine->Insert(1, T(25, 0)), 1, 0, 0, 1);
  // Timeline: 40, 30, 25. Older than all: rejected.
  CHECK_RESULT(f.engine->Insert(1, T(24, 0)), 0, 0, 1, 0);
  // The oldest key itself: replaced.
  CHECK_RESULT(f.engine->Insert(1, T(25, 0, 5)), 0, 1, 0, 0);
  std::vector<StoredEntry> all = ReadAll(*f.engine, 1);
  REQUIRE(all.size() == 3);
  CHECK(all[0].ts == 40);
  CHECK(all[1].ts == 30);
  CHECK(all[2].ts == 25);
  CHECK(all[2].actor == 5);
  EngineStats stats = f.engine->Stats().value();
  CHECK(stats.entries == 3);
  // Two trimmed; a rejected entry may be counted as trimmed as well.
  CHECK((stats.trimmed == 2 || stats.trimmed == 3));

  // Fan-out: rejected where full and older, inserted elsewhere.
  CHECK_RESULT(f.engine->InsertFanout({1, 2, 3}, T(5, 0)), 2, 0, 1, 0);
  // Batch: several entries into one full timeline, in order.
  CHECK_RESULT(f.engine->InsertBatch({{1, T(50, 0)},   // trims 25
                                      {1, T(1, 0)},    // rejected
                                      {1, T(60, 0)},   // trims 30
                                      {2, T(6, 0)}}),  // fits
               3, 0, 1, 2);
  all = ReadAll(*f.engine, 1);
  REQUIRE(all.size() == 3);
  CHECK(all[0].ts == 60);
  CHECK(all[2].ts == 40);
  stats = f.engine->Stats().value();
  CHECK(stats.entries == 3 + 2 + 1);
  CheckShardSums(stats);
}

TEST_CASE("eviction goes past a timeline whose earliest expiry a trim moved") {
  // One shard, so both timelines share one expiry index. A trim at the cap
  // only makes a timeline's earliest expiry later and leaves its key in the
  // index where it was; eviction must visit it, find nothing expired, and
  // still reach the other timeline's expired entry.
  EngineOptions options = Fixture::DefaultOptions();
  options.shards = 1;
  options.max_timeline_length = 1;
  Fixture f(options);
  InsertOptions soon, later, middle;
  soon.expires_at = kStart + 100;
  later.expires_at = kStart + 1000;
  middle.expires_at = kStart + 200;
  CHECK_RESULT(f.engine->Insert(1, T(10, 0), soon), 1, 0, 0, 0);
  CHECK_RESULT(f.engine->Insert(1, T(20, 0), later), 1, 0, 0, 1);
  CHECK_RESULT(f.engine->Insert(2, T(10, 0), middle), 1, 0, 0, 0);
  f.clock->Set(kStart + 300);
  absl::StatusOr<size_t> evicted = f.engine->EvictExpired(100);
  REQUIRE(evicted.ok());
  CHECK(*evicted == 1);
  CHECK(ReadAll(*f.engine, 2).empty());
  CHECK(ReadAll(*f.engine, 1) ==
        std::vector<StoredEntry>{S(20, 0, 9, kStart + 1000)});
  CHECK(f.engine->Stats().value().entries == 1);
  // Nothing else is expired until the kept entry's own expiry.
  CHECK(f.engine->EvictExpired(100).value() == 0);
  f.clock->Set(kStart + 1000);
  CHECK(f.engine->EvictExpired(100).value() == 1);
  CHECK(f.engine->Stats().value().entries == 0);
}

TEST_CASE("remove") {
  Fixture f;
  f.engine->Insert(1, T(10, 1)).IgnoreError();
  f.engine->Insert(1, T(20, 2)).IgnoreError();
  f.engine->Insert(1, T(30, 3)).IgnoreError();
  CHECK(f.engine->Remove(1, {20, 2}).ok());
  CHECK(ReadAll(*f.engine, 1).size() == 2);
  CHECK(absl::IsNotFound(f.engine->Remove(1, {20, 2})));   // already gone
  CHECK(absl::IsNotFound(f.engine->Remove(1, {20, 3})));   // wrong id
  CHECK(absl::IsNotFound(f.engine->Remove(1, {31, 3})));   // wrong ts
  CHECK(absl::IsNotFound(f.engine->Remove(2, {10, 1})));   // other owner
  CHECK(absl::IsNotFound(f.engine->Remove(99, {10, 1})));  // unknown owner
  CHECK(f.engine->Stats().value().entries == 2);
  CHECK(f.engine->Remove(1, {30, 3}).ok());
  CHECK(f.engine->Remove(1, {10, 1}).ok());
  const EngineStats stats = f.engine->Stats().value();
  CHECK(stats.entries == 0);
  CHECK(stats.timelines == 0);
  CHECK(ReadAll(*f.engine, 1).empty());
  // The emptied timeline takes new entries.
  CHECK_RESULT(f.engine->Insert(1, T(5, 5)), 1, 0, 0, 0);
  CHECK(f.engine->Stats().value().timelines == 1);
}

TEST_CASE("remove with a negative timestamp is an invalid argument") {
  // feed_engine.h lists "timestamp below zero" among the InvalidArgument
  // errors; no call accepts one.
  Fixture f;
  REQUIRE(f.engine->Insert(1, T(10, 1)).ok());
  const absl::Status s = f.engine->Remove(1, {-1, 1});
  INFO(s);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(f.engine->Stats().value().entries == 1);
}

// Fills a few timelines, runs `bad` (which must fail with
// InvalidArgument naming `field`), and checks that nothing changed.
template <typename Call>
void CheckRejectedChangesNothing(Fixture& f, const std::string& field,
                                 Call bad) {
  for (EntityId o = 1; o <= 5; ++o) {
    f.engine->Insert(o, T(100 + static_cast<Micros>(o), o)).IgnoreError();
  }
  const testing::StatsDigest before = Digest(f.engine->Stats().value());
  ReadOptions small_pages;
  small_pages.limit = 2;
  std::vector<std::vector<StoredEntry>> contents;
  for (EntityId o = 1; o <= 5; ++o) {
    contents.push_back(ReadAll(*f.engine, o, small_pages));
  }

  const absl::Status status = bad();
  INFO(field << ": " << status);
  CHECK(absl::IsInvalidArgument(status));
  CHECK(std::string(status.message()).find(field) != std::string::npos);

  CHECK(Digest(f.engine->Stats().value()) == before);
  for (EntityId o = 1; o <= 5; ++o) {
    CHECK(ReadAll(*f.engine, o, small_pages) == contents[o - 1]);
  }
}

TEST_CASE("invalid inserts fail and change nothing") {
  Fixture f;
  InsertOptions ttl_negative, ttl_too_long, past, now;
  ttl_negative.ttl = -1;
  ttl_too_long.ttl = kMaxTtl + 1;
  past.expires_at = kStart - 1;
  now.expires_at = kStart;
  const std::vector<EntityId> owners = {1, 2, 3, 4, 5, 6};

  SUBCASE("negative ts") {
    CheckRejectedChangesNothing(
        f, "ts", [&] { return f.engine->Insert(3, T(-1, 1)).status(); });
    CheckRejectedChangesNothing(f, "ts", [&] {
      return f.engine->InsertFanout(owners, T(-5, 1)).status();
    });
  }
  SUBCASE("ttl below zero or above kMaxTtl") {
    CheckRejectedChangesNothing(f, "ttl", [&] {
      return f.engine->Insert(3, T(1, 1), ttl_negative).status();
    });
    CheckRejectedChangesNothing(f, "ttl", [&] {
      return f.engine->Insert(3, T(1, 1), ttl_too_long).status();
    });
    CheckRejectedChangesNothing(f, "ttl", [&] {
      return f.engine->InsertFanout(owners, T(1, 1), ttl_too_long).status();
    });
    CheckRejectedChangesNothing(f, "ttl", [&] {
      return f.engine->InsertBatch({{1, T(1, 1)}, {2, T(1, 1)}}, ttl_negative)
          .status();
    });
  }
  SUBCASE("expires_at in the past or now") {
    CheckRejectedChangesNothing(f, "expires_at", [&] {
      return f.engine->Insert(3, T(1, 1), past).status();
    });
    CheckRejectedChangesNothing(f, "expires_at", [&] {
      return f.engine->Insert(3, T(1, 1), now).status();
    });
    CheckRejectedChangesNothing(f, "expires_at", [&] {
      return f.engine->InsertFanout(owners, T(1, 1), now).status();
    });
  }
  SUBCASE("a batch with one bad entry inserts none") {
    std::vector<OwnedEntry> batch;
    for (EntityId o = 1; o <= 40; ++o) batch.push_back({o, T(500, o)});
    batch.insert(batch.begin() + 25, OwnedEntry{7, T(-1, 1)});
    CheckRejectedChangesNothing(
        f, "ts", [&] { return f.engine->InsertBatch(batch).status(); });
    CHECK(ReadAll(*f.engine, 40).empty());
  }
  // The extremes that are allowed.
  InsertOptions longest, soonest, shortest;
  longest.ttl = kMaxTtl;
  soonest.expires_at = kStart + 1;
  shortest.ttl = 1;
  CHECK_RESULT(f.engine->Insert(9, T(1, 1), longest), 1, 0, 0, 0);
  CHECK_RESULT(f.engine->Insert(9, T(2, 1), soonest), 1, 0, 0, 0);
  CHECK_RESULT(f.engine->Insert(9, T(3, 1), shortest), 1, 0, 0, 0);
  CHECK(ReadAll(*f.engine, 9) ==
        std::vector<StoredEntry>{S(3, 1, 9, kStart + 1), S(2, 1, 9, kStart + 1),
                                 S(1, 1, 9, kStart + kMaxTtl)});
}

TEST_CASE("invalid reads fail") {
  EngineOptions options = Fixture::DefaultOptions();
  options.max_page_size = 20;
  Fixture f(options);
  ReadOptions r;
  r.limit = 10;
  SUBCASE("limit 0") {
    r.limit = 0;
    CheckRejectedChangesNothing(
        f, "limit", [&] { return f.engine->ReadTimeline(1, r).status(); });
  }
  SUBCASE("limit above max_page_size") {
    r.limit = 21;
    CheckRejectedChangesNothing(
        f, "limit", [&] { return f.engine->ReadTimeline(1, r).status(); });
  }
  SUBCASE("inverted window") {
    r.min_ts = 101;
    r.max_ts = 100;
    // The message names min_ts or max_ts.
    CheckRejectedChangesNothing(
        f, "_ts", [&] { return f.engine->ReadTimeline(1, r).status(); });
  }
  SUBCASE("garbage cursor") {
    r.cursor = "definitely not a cursor";
    CheckRejectedChangesNothing(
        f, "cursor", [&] { return f.engine->ReadTimeline(1, r).status(); });
  }
  // The extremes that are allowed.
  f.engine->Insert(1, T(100, 1)).IgnoreError();
  r = ReadOptions{};
  r.limit = 20;
  CHECK(f.engine->ReadTimeline(1, r).ok());
  r.limit = 1;
  r.min_ts = 100;
  r.max_ts = 100;
  const absl::StatusOr<Page> page = f.engine->ReadTimeline(1, r);
  REQUIRE(page.ok());
  CHECK(page->entries.size() == 1);
}

TEST_CASE("stats: per-shard figures add up to the totals") {
  Fixture f;
  const EngineStats empty = f.engine->Stats().value();
  CHECK(empty.shards.size() == 8);
  CHECK(empty.timelines == 0);
  CHECK(empty.entries == 0);
  CHECK(empty.evicted == 0);
  CHECK(empty.trimmed == 0);
  CheckShardSums(empty);

  size_t expected_entries = 0;
  for (EntityId o = 1; o <= 50; ++o) {
    for (Micros ts = 0; ts < static_cast<Micros>(o); ++ts) {
      f.engine->Insert(o, T(ts, 1)).IgnoreError();
      ++expected_entries;
    }
  }
  const EngineStats full = f.engine->Stats().value();
  CHECK(full.timelines == 50);
  CHECK(full.entries == expected_entries);
  CHECK(full.bytes_used > empty.bytes_used);
  CHECK(full.bytes_reserved >= full.bytes_used);
  CheckShardSums(full);
  for (const ShardStats& s : full.shards) {
    CHECK(s.bytes_reserved >= s.bytes_used);
  }
}

TEST_CASE("the background sweeper evicts expired entries") {
  auto clock = std::make_shared<ManualClock>(kStart);
  EngineOptions options;
  options.shards = 4;
  options.sweep_interval = kMicrosPerMillisecond;
  options.sweep_budget = 7;  // several passes needed
  options.clock = clock;
  absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> created =
      FeedEngine::Create(options);
  REQUIRE(created.ok());
  InProcessFeedEngine& engine = **created;

  InsertOptions short_ttl;
  short_ttl.ttl = 100;
  for (EntityId o = 1; o <= 10; ++o) {
    for (Micros ts = 0; ts < 10; ++ts) {
      REQUIRE(engine.Insert(o, T(ts, 1), short_ttl).ok());
      REQUIRE(engine.Insert(o, T(ts, 2)).ok());  // default 30 days
    }
  }
  clock->Advance(100);
  // Nothing short-lived is visible any more, swept or not.
  for (EntityId o = 1; o <= 10; ++o) CHECK(ReadAll(engine, o).size() == 10);

  // Wait (bounded) for the sweeper to reclaim all 100 expired entries.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  EngineStats stats = engine.Stats().value();
  while (stats.evicted < 100 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    stats = engine.Stats().value();
  }
  CHECK(stats.evicted == 100);
  CHECK(stats.entries == 100);
  CheckShardSums(stats);
  for (EntityId o = 1; o <= 10; ++o) CHECK(ReadAll(engine, o).size() == 10);
}

}  // namespace
}  // namespace feedcore
