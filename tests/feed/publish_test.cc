// Tests of Publish and the feeds it fills: delivery to the own feed, the
// world feed and every follower, PublishResult, idempotent and conflicting
// re-publishes, every validation error (and that it changes nothing),
// hydration, the world feed's merge, paging and cap, ReadOwn and CountNewer.
// How the fan-out is delivered is in publish_delivery_test.cc.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::Async;
using testing::Contains;
using testing::IdsOf;
using testing::Limit;
using testing::MakeActivity;
using testing::Own;
using testing::PayloadOf;
using testing::Social;
using testing::Timeline;
using testing::World;

using Fixture = testing::SocialFixture;
constexpr Micros kStart = Fixture::kStart;

// Key order of entries: newest first.
bool NewerThan(const StoredEntry& a, const StoredEntry& b) {
  return std::pair(a.ts, a.activity_id) > std::pair(b.ts, b.activity_id);
}

TEST_CASE("publish reaches the own feed, the world feed and every follower") {
  Fixture f;
  constexpr EntityId kActor = 100;
  for (EntityId id = 1; id <= 6; ++id) f.Fol(id, kActor);
  f.Fol(7, 200);  // follows someone else

  Activity a = MakeActivity(1, kActor, 50);
  a.payload = "hello";
  const PublishResult r = f.Pub(a);
  CHECK(r.created);
  CHECK(r.fanned_out == 6);
  CHECK_FALSE(r.merged_at_read);
  CHECK_FALSE(r.pending);

  const StoredEntry want{50, 1, kActor, f.DefaultExpiry(), 0, {}};
  for (EntityId id = 1; id <= 6; ++id) {
    INFO("follower " << id);
    CHECK(Timeline(*f.engine, id) == std::vector<StoredEntry>{want});
  }
  CHECK(Own(*f.engine, kActor) == std::vector<StoredEntry>{want});
  CHECK(World(*f.engine) == std::vector<StoredEntry>{want});
  CHECK(Timeline(*f.engine, 7).empty());
  CHECK(Own(*f.engine, 7).empty());
  CHECK(Own(*f.engine, 1).empty());

  const EngineStats stats = f.engine->Stats().value();
  CHECK(stats.activities == 1);
  CHECK(stats.retracted_activities == 0);
  CHECK(stats.payload_bytes == 5);
  CHECK(stats.entries == 6 + 2);
  CHECK(stats.follow_edges == 7);
  // Per-shard figures cover the timelines; the activity store (payloads)
  // is counted in the totals only.
  size_t shard_entries = 0, shard_bytes = 0;
  for (const ShardStats& s : stats.shards) {
    shard_entries += s.entries;
    shard_bytes += s.bytes_used;
  }
  CHECK(shard_entries == stats.entries);
  CHECK(stats.bytes_used >= shard_bytes + stats.payload_bytes);

  // An actor nobody follows: own and world feeds only.
  const PublishResult lonely = f.Pub(2, 300, 60);
  CHECK(lonely.created);
  CHECK(lonely.fanned_out == 0);
  CHECK(IdsOf(Own(*f.engine, 300)) == std::vector<ActivityId>{2});
  CHECK(IdsOf(World(*f.engine)) == std::vector<ActivityId>{2, 1});
  CHECK(f.engine->Stats().value().entries == 6 + 2 + 2);
}

TEST_CASE("an activity's ttl sets its expiry in every feed") {
  Fixture f;
  f.Fol(1, 100);
  f.Pub(1, 100, 5, /*ttl=*/500);
  f.Pub(2, 100, 6);
  const StoredEntry short_lived{5, 1, 100, kStart + 500, 0, {}};
  CHECK(Timeline(*f.engine, 1).back() == short_lived);
  CHECK(Own(*f.engine, 100).back() == short_lived);
  CHECK(World(*f.engine).back() == short_lived);
  f.clock->Advance(499);
  CHECK(Timeline(*f.engine, 1).size() == 2);
  f.clock->Advance(1);
  CHECK(IdsOf(Timeline(*f.engine, 1)) == std::vector<ActivityId>{2});
  CHECK(IdsOf(Own(*f.engine, 100)) == std::vector<ActivityId>{2});
  CHECK(IdsOf(World(*f.engine)) == std::vector<ActivityId>{2});
  // The expired activity's key and body are reclaimed by eviction.
  CHECK(f.engine->EvictExpired(1'000).value() == 3);
  const EngineStats stats = f.engine->Stats().value();
  CHECK(stats.entries == 3);
  CHECK(stats.activities == 1);
  CHECK(stats.activities_evicted == 1);
  CHECK(stats.payload_bytes == PayloadOf(2).size());
}

TEST_CASE("re-publishing the same activity changes nothing") {
  Fixture f;
  for (EntityId id = 1; id <= 5; ++id) f.Fol(id, 100);
  const Activity a = MakeActivity(7, 100, 70, /*ttl=*/1000);
  REQUIRE(f.Pub(a).created);
  const auto before = Social(f.engine->Stats().value());
  const std::vector<StoredEntry> timeline = Timeline(*f.engine, 3);
  REQUIRE(timeline.size() == 1);

  SUBCASE("as it was") {
    const PublishResult again = f.Pub(a);
    CHECK_FALSE(again.created);
    CHECK_FALSE(again.pending);
  }
  SUBCASE("asynchronously") { CHECK_FALSE(f.Pub(a, Async()).created); }
  SUBCASE("with another ttl: same id, actor, ts and payload") {
    Activity other_ttl = a;
    other_ttl.ttl = 5000;
    CHECK_FALSE(f.Pub(other_ttl).created);
  }
  SUBCASE("after a new follower joined without back-fill") {
    f.Fol(9, 100, 0);
    const auto with_follower = Social(f.engine->Stats().value());
    CHECK_FALSE(f.Pub(a).created);
    CHECK(Timeline(*f.engine, 9).empty());
    CHECK(Social(f.engine->Stats().value()) == with_follower);
    return;
  }
  f.engine->WaitForFanout();
  CHECK(Social(f.engine->Stats().value()) == before);
  for (EntityId id = 1; id <= 5; ++id) {
    CHECK(Timeline(*f.engine, id) == timeline);
  }
  CHECK(Own(*f.engine, 100) == timeline);
  CHECK(World(*f.engine) == timeline);
}

TEST_CASE("a different activity under a used id is AlreadyExists") {
  Fixture f;
  f.Fol(1, 100);
  f.Fol(1, 101);
  const Activity a = MakeActivity(7, 100, 70);
  REQUIRE(f.Pub(a).created);
  const auto before = Social(f.engine->Stats().value());
  const std::vector<StoredEntry> timeline = Timeline(*f.engine, 1);

  Activity other = a;
  SUBCASE("another actor") { other.actor = 101; }
  SUBCASE("another timestamp") { other.ts = 71; }
  SUBCASE("another payload") { other.payload = "different"; }
  SUBCASE("an empty payload") { other.payload.clear(); }
  const absl::StatusOr<PublishResult> r = f.engine->Publish(other);
  CHECK(absl::IsAlreadyExists(r.status()));
  CHECK_FALSE(r.status().message().empty());
  const absl::StatusOr<PublishResult> r_async =
      f.engine->Publish(other, Async(false));
  CHECK(absl::IsAlreadyExists(r_async.status()));
  f.engine->WaitForFanout();
  CHECK(Social(f.engine->Stats().value()) == before);
  CHECK(Timeline(*f.engine, 1) == timeline);
  CHECK(Own(*f.engine, 101).empty());
  CHECK(IdsOf(World(*f.engine)) == std::vector<ActivityId>{7});
}

TEST_CASE("invalid publishes fail and change nothing") {
  EngineOptions o = Fixture::Defaults();
  o.max_payload_bytes = 16;
  Fixture f(o);
  for (EntityId id = 1; id <= 4; ++id) f.Fol(id, 100);
  f.Pub(1, 100, 10);
  const auto before = Social(f.engine->Stats().value());

  Activity bad = MakeActivity(2, 100, 20);
  SUBCASE("negative timestamp") { bad.ts = -1; }
  SUBCASE("negative ttl") { bad.ttl = -1; }
  SUBCASE("ttl above kMaxTtl") { bad.ttl = kMaxTtl + 1; }
  SUBCASE("payload above max_payload_bytes") {
    bad.payload = std::string(17, 'x');
  }
  for (const PublishOptions& options : {PublishOptions{}, Async(false)}) {
    const absl::StatusOr<PublishResult> r = f.engine->Publish(bad, options);
    CHECK(absl::IsInvalidArgument(r.status()));
    CHECK_FALSE(r.status().message().empty());
  }
  CHECK(Social(f.engine->Stats().value()) == before);
  for (EntityId id = 1; id <= 4; ++id) {
    CHECK(IdsOf(Timeline(*f.engine, id)) == std::vector<ActivityId>{1});
  }
  CHECK(IdsOf(Own(*f.engine, 100)) == std::vector<ActivityId>{1});
  CHECK(IdsOf(World(*f.engine)) == std::vector<ActivityId>{1});
  // The id was not taken: a valid activity under it is new.
  CHECK(f.Pub(2, 100, 20).created);
}

TEST_CASE("publish accepts the limits themselves") {
  EngineOptions o = Fixture::Defaults();
  o.max_payload_bytes = 16;
  Fixture f(o);
  f.Fol(1, 100);
  Activity a = MakeActivity(1, 100, 0, kMaxTtl);  // ts 0, longest ttl
  a.payload = std::string(16, 'y');
  CHECK(f.Pub(a).created);
  CHECK(Timeline(*f.engine, 1) ==
        std::vector<StoredEntry>{{0, 1, 100, kStart + kMaxTtl, 0, {}}});
  CHECK(f.engine->Stats().value().payload_bytes == 16);

  EngineOptions none = Fixture::Defaults();
  none.max_payload_bytes = 0;
  Fixture g(none);
  Activity empty = MakeActivity(1, 100, 5);
  empty.payload.clear();
  CHECK(g.Pub(empty).created);
  Activity one_byte = MakeActivity(2, 100, 5);
  one_byte.payload.assign(1, 'x');
  CHECK(absl::IsInvalidArgument(g.engine->Publish(one_byte).status()));
}

TEST_CASE("reads return payloads only when asked to hydrate") {
  Fixture f;
  f.Fol(1, 100);
  f.Fol(1, 200);
  Activity binary = MakeActivity(1, 100, 10);
  binary.payload = std::string("a\0b\xff", 4);
  f.Pub(binary);
  f.Pub(2, 200, 20);
  Activity empty = MakeActivity(3, 100, 30);
  empty.payload.clear();
  f.Pub(empty);
  // A host entry with an id that was never published has no body.
  REQUIRE(f.engine->Insert(1, {25, 999, 100}).ok());

  ReadOptions plain;
  ReadOptions hydrate;
  hydrate.hydrate = true;
  for (const StoredEntry& e : Timeline(*f.engine, 1, plain)) {
    CHECK(e.payload.empty());
  }
  for (const StoredEntry& e : Own(*f.engine, 100, plain)) {
    CHECK(e.payload.empty());
  }
  for (const StoredEntry& e : World(*f.engine, plain)) {
    CHECK(e.payload.empty());
  }
  const std::vector<StoredEntry> timeline = Timeline(*f.engine, 1, hydrate);
  REQUIRE(IdsOf(timeline) == std::vector<ActivityId>{3, 999, 2, 1});
  CHECK(timeline[0].payload.empty());
  CHECK(timeline[1].payload.empty());
  CHECK(timeline[2].payload == PayloadOf(2));
  CHECK(timeline[3].payload == binary.payload);
  const std::vector<StoredEntry> own = Own(*f.engine, 100, hydrate);
  REQUIRE(IdsOf(own) == std::vector<ActivityId>{3, 1});
  CHECK(own[1].payload == binary.payload);
  const std::vector<StoredEntry> world = World(*f.engine, hydrate);
  REQUIRE(IdsOf(world) == std::vector<ActivityId>{3, 2, 1});
  CHECK(world[1].payload == PayloadOf(2));
  CHECK(world[2].payload == binary.payload);
  // Hydration changes nothing else in the entries.
  for (size_t i = 0; i < world.size(); ++i) {
    StoredEntry bare = world[i];
    bare.payload.clear();
    CHECK(bare == World(*f.engine)[i]);
  }
  // Paging with hydration: every page carries its payloads.
  ReadOptions paged = hydrate;
  paged.limit = 1;
  CHECK(Timeline(*f.engine, 1, paged) == timeline);
}

TEST_CASE("the world feed merges every shard newest-first") {
  EngineOptions o = Fixture::Defaults();
  o.shards = 4;
  Fixture f(o);
  std::vector<StoredEntry> all;
  for (ActivityId id = 1; id <= 40; ++id) {
    const EntityId actor = 1 + (id * 7) % 13;
    const Micros ts = static_cast<Micros>((id * 37) % 17);  // many equal
    f.Pub(id, actor, ts);
    all.push_back({ts, id, actor, f.DefaultExpiry(), 0, {}});
  }
  std::sort(all.begin(), all.end(), NewerThan);
  CHECK(World(*f.engine) == all);
  const std::vector<StoredEntry> oldest_first(all.rbegin(), all.rend());
  for (size_t limit = 1; limit <= all.size() + 1; ++limit) {
    INFO("limit " << limit);
    ReadOptions r = Limit(limit);
    CHECK(World(*f.engine, r) == all);
    r.order = ReadOrder::kOldestFirst;
    CHECK(World(*f.engine, r) == oldest_first);
  }
  // Time windows.
  for (Micros lo = 0; lo <= 17; lo += 3) {
    for (Micros hi = lo; hi <= 17; hi += 4) {
      std::vector<StoredEntry> want;
      for (const StoredEntry& e : all) {
        if (e.ts >= lo && e.ts <= hi) want.push_back(e);
      }
      ReadOptions r = Limit(3);
      r.min_ts = lo;
      r.max_ts = hi;
      CHECK(World(*f.engine, r) == want);
    }
  }
}

TEST_CASE("the world feed keeps at least world_timeline_length newest") {
  SUBCASE("one shard: exactly the newest") {
    EngineOptions o = Fixture::Defaults();
    o.shards = 1;
    o.world_timeline_length = 5;
    Fixture f(o);
    for (ActivityId id = 1; id <= 12; ++id) {
      f.Pub(id, 1 + id % 4, static_cast<Micros>((id * 5) % 12));
    }
    std::vector<StoredEntry> want;
    for (ActivityId id = 1; id <= 12; ++id) {
      want.push_back({static_cast<Micros>((id * 5) % 12),
                      id,
                      1 + id % 4,
                      f.DefaultExpiry(),
                      0,
                      {}});
    }
    std::sort(want.begin(), want.end(), NewerThan);
    want.resize(5);
    CHECK(World(*f.engine) == want);
    // The own feeds are capped separately (max_timeline_length).
    CHECK(Own(*f.engine, 1).size() == 3);
  }
  SUBCASE("several shards: a superset of the newest, newest-first") {
    EngineOptions o = Fixture::Defaults();
    o.shards = 4;
    o.world_timeline_length = 3;
    Fixture f(o);
    std::vector<StoredEntry> published;
    for (ActivityId id = 1; id <= 30; ++id) {
      const EntityId actor = 1 + (id * 11) % 9;
      f.Pub(id, actor, static_cast<Micros>(id));
      published.push_back(
          {static_cast<Micros>(id), id, actor, f.DefaultExpiry(), 0, {}});
    }
    const std::vector<StoredEntry> world = World(*f.engine);
    CHECK(world.size() >= 3);
    CHECK(world.size() <= 3 * 4);
    CHECK(std::is_sorted(world.begin(), world.end(), NewerThan));
    CHECK(std::adjacent_find(world.begin(), world.end()) == world.end());
    for (ActivityId id = 30; id > 27; --id) {
      CHECK(Contains(world, id));
    }
    for (const StoredEntry& e : world) {
      CHECK(e == published[e.activity_id - 1]);
    }
    CHECK(f.engine->Stats().value().trimmed == 30 - world.size());
  }
}

TEST_CASE("ReadOwn: an actor's own activities only") {
  EngineOptions o = Fixture::Defaults();
  o.max_timeline_length = 8;
  Fixture f(o);
  f.Fol(100, 200);  // the actor follows someone: not part of its own feed
  for (ActivityId id = 1; id <= 12; ++id) {
    f.Pub(id, id % 2 == 0 ? 100 : 200, static_cast<Micros>(id));
  }
  const std::vector<StoredEntry> own = Own(*f.engine, 100);
  CHECK(IdsOf(own) == std::vector<ActivityId>{12, 10, 8, 6, 4, 2});
  for (const StoredEntry& e : own) CHECK(e.actor == 100);
  for (size_t limit = 1; limit <= 7; ++limit) {
    ReadOptions r = Limit(limit);
    CHECK(Own(*f.engine, 100, r) == own);
    r.order = ReadOrder::kOldestFirst;
    CHECK(Own(*f.engine, 100, r) ==
          std::vector<StoredEntry>(own.rbegin(), own.rend()));
  }
  ReadOptions window = Limit(2);
  window.min_ts = 4;
  window.max_ts = 9;
  CHECK(IdsOf(Own(*f.engine, 100, window)) == std::vector<ActivityId>{8, 6, 4});
  CHECK(Own(*f.engine, 555).empty());

  // The own feed is capped at max_timeline_length.
  for (ActivityId id = 13; id <= 30; ++id) {
    f.Pub(id, 300, static_cast<Micros>(id));
  }
  std::vector<ActivityId> newest;
  for (ActivityId id = 30; id > 22; --id) newest.push_back(id);
  CHECK(IdsOf(Own(*f.engine, 300)) == newest);
}

TEST_CASE("feed cursors belong to one feed, owner and order") {
  Fixture f;
  f.Fol(1, 100);
  for (ActivityId id = 1; id <= 4; ++id)
    f.Pub(id, 100, static_cast<Micros>(id));
  const ReadOptions one = Limit(1);
  const std::string timeline = f.engine->ReadTimeline(1, one)->next_cursor;
  const std::string own = f.engine->ReadOwn(100, one)->next_cursor;
  const std::string world = f.engine->ReadWorld(one)->next_cursor;
  REQUIRE_FALSE(timeline.empty());
  REQUIRE_FALSE(own.empty());
  REQUIRE_FALSE(world.empty());

  auto invalid = [&](testing::Feed feed, EntityId owner, std::string cursor,
                     ReadOrder order = ReadOrder::kNewestFirst) {
    ReadOptions r = Limit(1);
    r.cursor = std::move(cursor);
    r.order = order;
    const absl::StatusOr<Page> page =
        testing::ReadFeed(*f.engine, feed, owner, r);
    CHECK(absl::IsInvalidArgument(page.status()));
    CHECK_FALSE(page.status().message().empty());
  };
  using testing::Feed;
  invalid(Feed::kOwn, 1, timeline);
  invalid(Feed::kWorld, 0, timeline);
  invalid(Feed::kTimeline, 100, own);
  invalid(Feed::kWorld, 0, own);
  invalid(Feed::kTimeline, 0, world);
  invalid(Feed::kOwn, 0, world);  // actor 0's own feed is not the world feed
  invalid(Feed::kOwn, 101, own);  // another actor's own feed
  invalid(Feed::kOwn, 100, own, ReadOrder::kOldestFirst);
  invalid(Feed::kWorld, 0, world, ReadOrder::kOldestFirst);
  invalid(Feed::kWorld, 0, "garbage");
  invalid(Feed::kOwn, 100, "garbage");
  // And limits.
  for (const size_t limit :
       {size_t{0}, f.engine->options().max_page_size + 1}) {
    CHECK(
        absl::IsInvalidArgument(f.engine->ReadOwn(100, Limit(limit)).status()));
    CHECK(absl::IsInvalidArgument(f.engine->ReadWorld(Limit(limit)).status()));
  }
  ReadOptions inverted;
  inverted.min_ts = 5;
  inverted.max_ts = 4;
  CHECK(absl::IsInvalidArgument(f.engine->ReadOwn(100, inverted).status()));
  CHECK(absl::IsInvalidArgument(f.engine->ReadWorld(inverted).status()));
  // The valid cursors continue.
  ReadOptions next = Limit(10);
  next.cursor = own;
  CHECK(IdsOf(f.engine->ReadOwn(100, next)->entries) ==
        std::vector<ActivityId>{3, 2, 1});
  next.cursor = world;
  CHECK(IdsOf(f.engine->ReadWorld(next)->entries) ==
        std::vector<ActivityId>{3, 2, 1});
}

TEST_CASE("CountNewer counts visible timeline entries after a key") {
  EngineOptions o = Fixture::Defaults();
  o.max_page_size = 20;
  Fixture f(o);
  f.Fol(1, 100);
  f.Fol(1, 200);
  // Equal timestamps: the id orders them.
  f.Pub(1, 100, 10);
  f.Pub(2, 200, 20);
  f.Pub(3, 100, 30);
  f.Pub(4, 200, 30);
  f.Pub(5, 100, 40, /*ttl=*/50);
  f.Pub(6, 200, 50);
  f.Pub(7, 100, 0);
  auto count = [&](Micros ts, ActivityId id, size_t max_count) {
    const absl::StatusOr<size_t> n =
        f.engine->CountNewer(1, {ts, id}, max_count);
    REQUIRE_MESSAGE(n.ok(), n.status());
    return *n;
  };
  // Against a brute-force count over the whole timeline, for every key in
  // it, keys between, and every max_count.
  auto check_all = [&] {
    const std::vector<StoredEntry> timeline = Timeline(*f.engine, 1, Limit(20));
    std::vector<std::pair<Micros, ActivityId>> probes = {
        {0, 0}, {0, 6}, {30, 3}, {30, 5}, {31, 0}, {50, 6}, {1000, 0}};
    for (const StoredEntry& e : timeline)
      probes.push_back({e.ts, e.activity_id});
    for (const auto& probe : probes) {
      const Micros ts = probe.first;
      const ActivityId id = probe.second;
      size_t newer = 0;
      for (const StoredEntry& e : timeline) {
        newer += std::pair(e.ts, e.activity_id) > std::pair(ts, id);
      }
      for (size_t max_count = 1; max_count <= 8; ++max_count) {
        INFO("key " << ts << "/" << id << " max_count " << max_count);
        CHECK(count(ts, id, max_count) == std::min(newer, max_count));
      }
    }
  };
  check_all();
  CHECK(count(30, 3, 20) == 3);  // (30, 4), (40, 5), (50, 6)
  CHECK(count(0, 0, 20) == 7);   // (0, 7) is newer than (0, 0)
  f.clock->Advance(50);          // 5 expires
  check_all();
  CHECK(count(30, 3, 20) == 2);
  CHECK(count(0, 0, 20) == 6);
  // An unknown reader has nothing new; a key newer than all has nothing.
  CHECK(*f.engine->CountNewer(999, {0, 0}, 5) == 0);
  CHECK(count(std::numeric_limits<Micros>::max(),
              std::numeric_limits<ActivityId>::max(), 5) == 0);
  // Errors.
  CHECK(absl::IsInvalidArgument(f.engine->CountNewer(1, {-1, 0}, 5).status()));
  CHECK(absl::IsInvalidArgument(f.engine->CountNewer(1, {0, 0}, 0).status()));
  CHECK(absl::IsInvalidArgument(f.engine->CountNewer(1, {0, 0}, 21).status()));
}

// Records every on_delivery call.
}  // namespace
}  // namespace feedcore
