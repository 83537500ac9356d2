// Conformance cases of FeedEngine: each runs against the backend that
// FEEDCORE_TEST_BACKEND selects (conformance/backend.h), the in-process
// engine or the Redis Cluster one, and holds both to the contract of
// feed_engine.h: the low-level inserts and their counts, Remove, paging of
// the three kinds of feed in both orders with cursors, time windows and
// hydration, every cursor and limit error, expiry on an injected clock, the
// length caps and CountNewer; the social calls are in
// feed_conformance_social_test.cc. Where the backends differ by design
// (redis_cluster.h, "What differs"), a case checks each backend's
// documented behaviour and says why.
//
// Every engine reads time from a ManualClock and runs no sweeper, so what
// has expired, and when, is decided by the test alone.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/backend.h"
#include "conformance/feed_conformance_util.h"
#include "feedcore/change_stream.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/stats.h"
#include "feedcore/types.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::Counts;
using testing::Describe;
using testing::Env;
using testing::Feed;
using testing::IdsOf;
using testing::Joined;
using testing::kHour;
using testing::kStart;
using testing::Limit;
using testing::MakeActivity;
using testing::Options;
using testing::Own;
using testing::Pages;
using testing::Read;
using testing::ReadFeed;
using testing::Reversed;
using testing::Stored;
using testing::Timeline;
using testing::World;

// ---------------------------------------------------------------------------
// Low-level inserts and Remove

TEST_CASE("Insert: inserted, replaced by key, rejected by the cap, trimmed") {
  Env env(Options(3));
  const Micros exp = kStart + kHour;
  CHECK(Describe(env.Ins(1, {10, 1, 7})) == Counts(1, 0, 0, 0));
  CHECK(Timeline(*env.engine, 1) ==
        std::vector<StoredEntry>{Stored(10, 1, 7, exp)});

  // The same key again overwrites actor and expiry; it never duplicates.
  env.clock->Advance(5);
  InsertOptions ttl100;
  ttl100.ttl = 100;
  CHECK(Describe(env.Ins(1, {10, 1, 8}, ttl100)) == Counts(0, 1, 0, 0));
  CHECK(Timeline(*env.engine, 1) ==
        std::vector<StoredEntry>{Stored(10, 1, 8, kStart + 5 + 100)});

  // Two keys with the same ts are two entries.
  CHECK(Describe(env.Ins(1, {20, 2, 7})) == Counts(1, 0, 0, 0));
  CHECK(Describe(env.Ins(1, {20, 1, 7})) == Counts(1, 0, 0, 0));
  const Micros exp5 = exp + 5;
  const std::vector<StoredEntry> full = {Stored(20, 2, 7, exp5),
                                         Stored(20, 1, 7, exp5),
                                         Stored(10, 1, 8, kStart + 105)};
  CHECK(Timeline(*env.engine, 1) == full);

  // Older than everything in a full timeline: dropped at once.
  CHECK(Describe(env.Ins(1, {5, 9, 7})) == Counts(0, 0, 1, 0));
  CHECK(Describe(env.Ins(1, {10, 0, 7})) == Counts(0, 0, 1, 0));
  CHECK(Timeline(*env.engine, 1) == full);

  // Replacing the oldest entry of a full timeline is not a rejection.
  CHECK(Describe(env.Ins(1, {10, 1, 9})) == Counts(0, 1, 0, 0));

  // A newer entry makes room by dropping the oldest, also one that lands
  // in the middle.
  CHECK(Describe(env.Ins(1, {15, 3, 7})) == Counts(1, 0, 0, 1));
  CHECK(Describe(env.Ins(1, {17, 5, 6})) == Counts(1, 0, 0, 1));
  InsertOptions at;
  at.expires_at = kStart + 1000;
  CHECK(Describe(env.Ins(1, {30, 4, 7}, at)) == Counts(1, 0, 0, 1));
  CHECK(Timeline(*env.engine, 1) ==
        std::vector<StoredEntry>{Stored(30, 4, 7, kStart + 1000),
                                 Stored(20, 2, 7, exp5),
                                 Stored(20, 1, 7, exp5)});
  CHECK(Timeline(*env.engine, 2).empty());
}

TEST_CASE(
    "InsertFanout: one entry into every owner; a repeated owner "
    "replaces") {
  Env env(Options(2));
  const Micros exp = kStart + kHour;
  env.Ins(3, {100, 1, 9});
  env.Ins(3, {101, 1, 9});
  const std::vector<EntityId> owners = {1, 2, 3, 2};
  const absl::StatusOr<InsertResult> r =
      env.engine->InsertFanout(owners, {50, 5, 9});
  REQUIRE_MESSAGE(r.ok(), r.status());
  // 1 and 2 get it, 2 again replaces, 3 is full of newer entries.
  CHECK(Describe(*r) == Counts(2, 1, 1, 0));
  for (const EntityId owner : {1, 2}) {
    CHECK(Timeline(*env.engine, owner) ==
          std::vector<StoredEntry>{Stored(50, 5, 9, exp)});
  }
  CHECK(IdsOf(Timeline(*env.engine, 3)) == std::vector<ActivityId>{1, 1});

  const absl::StatusOr<InsertResult> none =
      env.engine->InsertFanout({}, {60, 6, 9});
  REQUIRE_MESSAGE(none.ok(), none.status());
  CHECK(Describe(*none) == Counts(0, 0, 0, 0));

  InsertOptions ttl;
  ttl.ttl = 77;
  const absl::StatusOr<InsertResult> newer =
      env.engine->InsertFanout({1, 3}, {200, 6, 8}, ttl);
  REQUIRE_MESSAGE(newer.ok(), newer.status());
  CHECK(Describe(*newer) == Counts(2, 0, 0, 1));
  CHECK(Timeline(*env.engine, 3) ==
        std::vector<StoredEntry>{Stored(200, 6, 8, kStart + 77),
                                 Stored(101, 1, 9, exp)});
  CHECK(Timeline(*env.engine, 1) ==
        std::vector<StoredEntry>{Stored(200, 6, 8, kStart + 77),
                                 Stored(50, 5, 9, exp)});
}

TEST_CASE("InsertBatch: the pairs of one owner apply in the order given") {
  Env env(Options(2));
  InsertOptions at;
  at.expires_at = kStart + 500;
  const std::vector<OwnedEntry> batch = {
      {1, {10, 1, 5}}, {2, {10, 1, 5}}, {1, {10, 1, 6}},
      {1, {11, 2, 5}}, {1, {12, 3, 5}}, {1, {9, 9, 5}},
  };
  const absl::StatusOr<InsertResult> r = env.engine->InsertBatch(batch, at);
  REQUIRE_MESSAGE(r.ok(), r.status());
  CHECK(Describe(*r) == Counts(4, 1, 1, 1));
  CHECK(Timeline(*env.engine, 1) ==
        std::vector<StoredEntry>{Stored(12, 3, 5, kStart + 500),
                                 Stored(11, 2, 5, kStart + 500)});
  CHECK(Timeline(*env.engine, 2) ==
        std::vector<StoredEntry>{Stored(10, 1, 5, kStart + 500)});

  const absl::StatusOr<InsertResult> empty = env.engine->InsertBatch({});
  REQUIRE_MESSAGE(empty.ok(), empty.status());
  CHECK(Describe(*empty) == Counts(0, 0, 0, 0));
}

TEST_CASE("Remove deletes exactly one key; NotFound otherwise") {
  Env env(Options(10));
  env.Ins(1, {10, 1, 5});
  env.Ins(1, {10, 2, 5});
  env.Ins(1, {11, 1, 5});
  CHECK(env.engine->Remove(1, {10, 2}).ok());
  CHECK(IdsOf(Timeline(*env.engine, 1)) == std::vector<ActivityId>{1, 1});
  CHECK(Timeline(*env.engine, 1)[1].ts == 10);
  CHECK(absl::IsNotFound(env.engine->Remove(1, {10, 2})));
  CHECK(absl::IsNotFound(env.engine->Remove(2, {10, 1})));
  CHECK(absl::IsNotFound(env.engine->Remove(1, {12, 1})));
  CHECK(absl::IsInvalidArgument(env.engine->Remove(1, {-1, 1})));
  CHECK(Timeline(*env.engine, 1).size() == 2);

  // An expired entry that nothing has reclaimed yet is still found (no
  // read or eviction touches the timeline between expiry and removal).
  InsertOptions ttl;
  ttl.ttl = 10;
  env.Ins(1, {5, 5, 5}, ttl);
  env.clock->Advance(20);
  CHECK(env.engine->Remove(1, {5, 5}).ok());
  CHECK(absl::IsNotFound(env.engine->Remove(1, {5, 5})));
  CHECK(Timeline(*env.engine, 1).size() == 2);
}

// ---------------------------------------------------------------------------
// Paging

TEST_CASE("paging: every feed, both orders, cursors to the end") {
  EngineOptions o = Options(100);
  o.max_page_size = 10;
  Env env(o);
  const Micros exp = kStart + kHour;
  // Timeline of 1: repeated timestamps, ts 0, and timestamps above 2^53,
  // where a double (Redis's score) no longer tells neighbours apart.
  std::vector<StoredEntry> timeline;
  auto put = [&](Micros ts, ActivityId id, EntityId actor) {
    env.Ins(1, {ts, id, actor});
    timeline.push_back(Stored(ts, id, actor, exp));
  };
  put(0, 0, 3);
  put(0, 7, 3);
  for (int i = 0; i < 12; ++i) put(100 + i / 3, 50 - i, 4 + i % 2);
  const Micros big = (Micros{1} << 53) + 1;
  for (int i = 0; i < 6; ++i) put(big + i / 2, 900 + i, 6);
  put(std::numeric_limits<Micros>::max(), 1, 7);
  put(std::numeric_limits<Micros>::max(),
      std::numeric_limits<ActivityId>::max(), 7);
  std::sort(timeline.begin(), timeline.end(),
            [](const StoredEntry& a, const StoredEntry& b) {
              return std::pair(a.ts, a.activity_id) >
                     std::pair(b.ts, b.activity_id);
            });
  REQUIRE(timeline.size() == 22);

  // Own feed of 5 and the world feed (5's and 6's activities).
  std::vector<StoredEntry> own, world;
  for (int i = 0; i < 12; ++i) {
    const ActivityId id = 1000 + static_cast<ActivityId>(i);
    const Micros ts = 500 + i / 2;
    env.Pub(id, 5, ts);
    own.insert(own.begin(), Stored(ts, id, 5, exp));
  }
  world = own;
  for (int i = 0; i < 3; ++i) {
    const ActivityId id = 2000 + static_cast<ActivityId>(i);
    env.Pub(id, 6, 503 + i);
    world.push_back(Stored(503 + i, id, 6, exp));
  }
  std::sort(world.begin(), world.end(),
            [](const StoredEntry& a, const StoredEntry& b) {
              return std::pair(a.ts, a.activity_id) >
                     std::pair(b.ts, b.activity_id);
            });

  const struct {
    Feed feed;
    EntityId owner;
    const std::vector<StoredEntry>* want;
  } feeds[] = {{Feed::kTimeline, 1, &timeline},
               {Feed::kOwn, 5, &own},
               {Feed::kWorld, 0, &world}};
  for (const auto& f : feeds) {
    for (const ReadOrder order :
         {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
      const std::vector<StoredEntry> want =
          order == ReadOrder::kNewestFirst ? *f.want : Reversed(*f.want);
      for (const size_t limit : {1, 2, 3, 5, 10}) {
        INFO("feed " << static_cast<int>(f.feed) << " oldest_first "
                     << (order == ReadOrder::kOldestFirst) << " limit "
                     << limit);
        const std::vector<Page> pages =
            Pages(*env.engine, f.feed, f.owner, Read(limit, order));
        CHECK(Joined(pages) == want);
        // A last page that comes out full carries no cursor: no empty
        // page at the end.
        CHECK(pages.size() ==
              std::max<size_t>(1, (want.size() + limit - 1) / limit));
      }
    }
  }
  // Other entities' feeds are empty, and an unknown owner reads as empty.
  for (const EntityId other : {2, 6, 77}) {
    CHECK(Timeline(*env.engine, other, Limit(10)).empty());
  }
  CHECK(Own(*env.engine, 1, Limit(10)).empty());
}

TEST_CASE("timestamps beyond 2^53 keep exact keys and order") {
  // 2^53 and 2^53 + 1 are one double (Redis's score): only the exact
  // (ts, activity_id) key may tell them apart.
  Env env(Options(100));
  const Micros t = Micros{1} << 53;
  const Micros exp = kStart + kHour;
  CHECK(Describe(env.Ins(1, {t + 1, 5, 1})) == Counts(1, 0, 0, 0));
  CHECK(Describe(env.Ins(1, {t, 5, 2})) == Counts(1, 0, 0, 0));
  CHECK(Describe(env.Ins(1, {t, 6, 3})) == Counts(1, 0, 0, 0));
  CHECK(Describe(env.Ins(1, {t + 1, 5, 4})) == Counts(0, 1, 0, 0));
  const std::vector<StoredEntry> all = {
      Stored(t + 1, 5, 4, exp), Stored(t, 6, 3, exp), Stored(t, 5, 2, exp)};
  CHECK(Joined(Pages(*env.engine, Feed::kTimeline, 1, Read(1))) == all);
  CHECK(Joined(Pages(*env.engine, Feed::kTimeline, 1,
                     Read(1, ReadOrder::kOldestFirst))) == Reversed(all));
  ReadOptions window;
  window.min_ts = t + 1;
  CHECK(Timeline(*env.engine, 1, window) == std::vector<StoredEntry>{all[0]});
  window.min_ts.reset();
  window.max_ts = t;
  CHECK(IdsOf(Timeline(*env.engine, 1, window)) ==
        std::vector<ActivityId>{6, 5});
  CHECK(env.engine->CountNewer(1, {t, 5}, 10).value_or(99) == 2);
  CHECK(env.engine->CountNewer(1, {t, 6}, 10).value_or(99) == 1);
  // A full timeline rejects t but takes t + 1 with a smaller id.
  Env capped(Options(2));
  capped.Ins(1, {t + 1, 5, 1});
  capped.Ins(1, {t + 1, 7, 1});
  CHECK(Describe(capped.Ins(1, {t, 9, 1})) == Counts(0, 0, 1, 0));
  CHECK(Describe(capped.Ins(1, {t + 1, 6, 1})) == Counts(1, 0, 0, 1));
  CHECK(IdsOf(Timeline(*capped.engine, 1)) == std::vector<ActivityId>{7, 6});
  CHECK(env.engine->Remove(1, {t, 5}).ok());
  CHECK(absl::IsNotFound(env.engine->Remove(1, {t + 1, 6})));
  CHECK(IdsOf(Timeline(*env.engine, 1)) == std::vector<ActivityId>{5, 6});
}

TEST_CASE(
    "paging is keyset-based: changes during a walk cause no duplicate "
    "and no skip") {
  for (const ReadOrder order :
       {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
    INFO("oldest_first " << (order == ReadOrder::kOldestFirst));
    Env env(Options(100));
    for (ActivityId i = 0; i < 10; ++i)
      env.Ins(1, {static_cast<Micros>(10 + i), i, 5});
    const bool newest = order == ReadOrder::kNewestFirst;
    absl::StatusOr<Page> first = env.engine->ReadTimeline(1, Read(3, order));
    REQUIRE_MESSAGE(first.ok(), first.status());
    REQUIRE(first->entries.size() == 3);
    const Micros edge = first->entries.back().ts;  // 17 or 12
    // Before the cursor (already passed): must not show up.
    env.Ins(1, {newest ? 25 : 5, 100, 5});
    // After the cursor: must show up, and a removed one must not.
    env.Ins(1, {15, 99, 5});
    REQUIRE(env.engine->Remove(1, {16, 6}).ok());
    ReadOptions rest = Read(2, order);
    rest.cursor = first->next_cursor;
    const std::vector<StoredEntry> after =
        Joined(Pages(*env.engine, Feed::kTimeline, 1, rest));
    std::vector<StoredEntry> want;
    for (const StoredEntry& e : Timeline(*env.engine, 1, Read(50, order))) {
      if (newest ? e.ts < edge : e.ts > edge) want.push_back(e);
    }
    CHECK(after == want);
    CHECK(after.size() == 7);
    CHECK(testing::Contains(after, 99));
    CHECK_FALSE(testing::Contains(after, 100));
  }
}

TEST_CASE("time windows: min_ts and max_ts are inclusive, with cursors") {
  Env env(Options(100));
  const Micros exp = kStart + kHour;
  env.Ins(1, {10, 1, 5});
  env.Ins(1, {20, 1, 5});
  env.Ins(1, {20, 2, 5});
  env.Ins(1, {30, 1, 5});
  env.Ins(1, {40, 1, 5});
  auto window = [&](std::optional<Micros> min_ts, std::optional<Micros> max_ts,
                    ReadOrder order, size_t limit = 10) {
    ReadOptions r = Read(limit, order);
    r.min_ts = min_ts;
    r.max_ts = max_ts;
    std::vector<Micros> ts;
    for (const StoredEntry& e :
         Joined(Pages(*env.engine, Feed::kTimeline, 1, r))) {
      ts.push_back(e.ts);
    }
    return ts;
  };
  using V = std::vector<Micros>;
  const ReadOrder kNew = ReadOrder::kNewestFirst;
  const ReadOrder kOld = ReadOrder::kOldestFirst;
  CHECK(window(20, 30, kNew) == V{30, 20, 20});
  CHECK(window(20, 30, kOld) == V{20, 20, 30});
  CHECK(window(30, std::nullopt, kNew) == V{40, 30});
  CHECK(window(std::nullopt, 20, kNew) == V{20, 20, 10});
  CHECK(window(20, 20, kOld) == V{20, 20});
  CHECK(window(21, 29, kNew).empty());
  CHECK(window(-5, std::nullopt, kOld) == V{10, 20, 20, 30, 40});
  CHECK(window(std::nullopt, -1, kNew).empty());
  CHECK(window(-10, -1, kNew).empty());
  // Paged one at a time inside the window: three pages, the last without
  // a cursor (nothing visible follows inside the window).
  for (const ReadOrder order : {kNew, kOld}) {
    ReadOptions r = Read(1, order);
    r.min_ts = 20;
    r.max_ts = 30;
    const std::vector<Page> pages = Pages(*env.engine, Feed::kTimeline, 1, r);
    CHECK(pages.size() == 3);
  }
  ReadOptions inverted;
  inverted.min_ts = 31;
  inverted.max_ts = 30;
  CHECK(
      absl::IsInvalidArgument(env.engine->ReadTimeline(1, inverted).status()));
  CHECK(absl::IsInvalidArgument(env.engine->ReadOwn(1, inverted).status()));
  CHECK(absl::IsInvalidArgument(env.engine->ReadWorld(inverted).status()));

  // The same on own and world feeds.
  env.Pub(1, 5, 10);
  env.Pub(2, 5, 20);
  env.Pub(3, 6, 30);
  ReadOptions r;
  r.min_ts = 15;
  r.max_ts = 30;
  CHECK(Own(*env.engine, 5, r) ==
        std::vector<StoredEntry>{Stored(20, 2, 5, exp)});
  CHECK(World(*env.engine, r) ==
        std::vector<StoredEntry>{Stored(30, 3, 6, exp), Stored(20, 2, 5, exp)});
}

TEST_CASE("hydrate fills the payloads of published activities") {
  Env env(Options(100));
  env.Fol(1, 5);
  Activity alpha = MakeActivity(10, 5, 100);
  alpha.payload = "alpha";
  Activity empty = MakeActivity(11, 5, 101);
  empty.payload.clear();
  Activity binary = MakeActivity(12, 5, 102);
  binary.payload = std::string("\0\xff{x}\r\n", 7);
  for (const Activity& a : {alpha, empty, binary}) {
    REQUIRE(env.Pub(a).created);
  }
  env.Pub(13, 5, 103);
  // Entity 2 (no follower) gets low-level entries: one under a published
  // id (at another ts), one under an id nobody published, one under an id
  // that is then retracted.
  env.Ins(2, {50, 10, 8});
  env.Ins(2, {51, 777, 8});
  env.Ins(2, {52, 13, 8});
  REQUIRE(env.engine->Retract(13).ok());

  ReadOptions hydrated;
  hydrated.hydrate = true;
  auto payloads = [](const std::vector<StoredEntry>& entries) {
    std::vector<std::string> out;
    for (const StoredEntry& e : entries) out.push_back(e.payload);
    return out;
  };
  using P = std::vector<std::string>;
  const P published = {binary.payload, "", "alpha"};
  CHECK(payloads(Timeline(*env.engine, 1, hydrated)) == published);
  CHECK(payloads(Own(*env.engine, 5, hydrated)) == published);
  CHECK(payloads(World(*env.engine, hydrated)) == published);
  CHECK(payloads(Timeline(*env.engine, 2, hydrated)) == P{"", "", "alpha"});
  // Without hydrate no payload is filled.
  CHECK(payloads(Timeline(*env.engine, 1)) == P{"", "", ""});
  CHECK(payloads(Timeline(*env.engine, 2)) == P{"", "", ""});
  // Hydrated pages page like plain ones.
  ReadOptions paged = Read(1, ReadOrder::kOldestFirst);
  paged.hydrate = true;
  CHECK(payloads(Joined(Pages(*env.engine, Feed::kOwn, 5, paged))) ==
        P{"alpha", "", binary.payload});
}

// ---------------------------------------------------------------------------
// Errors of reads

TEST_CASE("every cursor error and limit error is InvalidArgument") {
  EngineOptions o = Options(100);
  o.max_page_size = 20;
  Env env(o);
  for (ActivityId i = 0; i < 4; ++i) {
    env.Ins(1, {static_cast<Micros>(i), i, 9});
    env.Ins(2, {static_cast<Micros>(i), i, 9});
    env.Pub(100 + i, 5, static_cast<Micros>(i));
  }
  env.Fol(3, 5);
  env.Fol(4, 5);
  env.Fol(3, 6);
  env.Fol(3, 7);
  auto cursor = [&](Feed feed, EntityId owner, ReadOrder order) {
    const absl::StatusOr<Page> page =
        ReadFeed(*env.engine, feed, owner, Read(1, order));
    REQUIRE_MESSAGE(page.ok(), page.status());
    REQUIRE_FALSE(page->next_cursor.empty());
    return page->next_cursor;
  };
  const std::string home_new =
      cursor(Feed::kTimeline, 1, ReadOrder::kNewestFirst);
  const std::string home_old =
      cursor(Feed::kTimeline, 1, ReadOrder::kOldestFirst);
  const std::string own_new = cursor(Feed::kOwn, 5, ReadOrder::kNewestFirst);
  const std::string world_new =
      cursor(Feed::kWorld, 0, ReadOrder::kNewestFirst);
  ListOptions one;
  one.limit = 1;
  const absl::StatusOr<EntityPage> followers = env.engine->Followers(5, one);
  const absl::StatusOr<EntityPage> following = env.engine->Following(3, one);
  REQUIRE(followers.ok());
  REQUIRE(following.ok());
  REQUIRE_FALSE(followers->next_cursor.empty());
  REQUIRE_FALSE(following->next_cursor.empty());

  auto read_with = [&](Feed feed, EntityId owner, const std::string& c,
                       ReadOrder order = ReadOrder::kNewestFirst) {
    ReadOptions r = Read(2, order);
    r.cursor = c;
    return ReadFeed(*env.engine, feed, owner, r).status();
  };
  std::string flipped = home_new;
  flipped[flipped.size() / 2] = flipped[flipped.size() / 2] == 'A' ? 'B' : 'A';
  const struct {
    const char* what;
    absl::Status status;
  } errors[] = {
      {"garbage", read_with(Feed::kTimeline, 1, "not a cursor")},
      {"truncated",
       read_with(Feed::kTimeline, 1, home_new.substr(0, home_new.size() - 1))},
      {"one character changed", read_with(Feed::kTimeline, 1, flipped)},
      {"a follower-list cursor",
       read_with(Feed::kTimeline, 1, followers->next_cursor)},
      {"another owner's", read_with(Feed::kTimeline, 2, home_new)},
      {"a timeline's cursor on an own feed",
       read_with(Feed::kOwn, 1, home_new)},
      {"an own feed's cursor on a timeline",
       read_with(Feed::kTimeline, 5, own_new)},
      {"an own feed's cursor on the world feed",
       read_with(Feed::kWorld, 0, own_new)},
      {"the world feed's cursor on a timeline",
       read_with(Feed::kTimeline, 0, world_new)},
      {"the world feed's cursor on an own feed",
       read_with(Feed::kOwn, 0, world_new)},
      {"another actor's own feed", read_with(Feed::kOwn, 6, own_new)},
      {"newest-first cursor read oldest-first",
       read_with(Feed::kTimeline, 1, home_new, ReadOrder::kOldestFirst)},
      {"oldest-first cursor read newest-first",
       read_with(Feed::kTimeline, 1, home_old, ReadOrder::kNewestFirst)},
  };
  for (const auto& e : errors) {
    INFO(e.what << ": " << e.status);
    CHECK(absl::IsInvalidArgument(e.status));
  }
  // The good cursors still work.
  CHECK(read_with(Feed::kTimeline, 1, home_new).ok());
  CHECK(read_with(Feed::kTimeline, 1, home_old, ReadOrder::kOldestFirst).ok());
  CHECK(read_with(Feed::kOwn, 5, own_new).ok());
  CHECK(read_with(Feed::kWorld, 0, world_new).ok());

  for (const Feed feed : {Feed::kTimeline, Feed::kOwn, Feed::kWorld}) {
    for (const size_t limit : {size_t{0}, size_t{21}, size_t{1} << 40}) {
      INFO("feed " << static_cast<int>(feed) << " limit " << limit);
      CHECK(absl::IsInvalidArgument(
          ReadFeed(*env.engine, feed, 1, Limit(limit)).status()));
    }
    CHECK(ReadFeed(*env.engine, feed, 1, Limit(20)).ok());
  }

  // Follower and followee lists.
  auto list = [&](bool of_followers, EntityId entity, size_t limit,
                  const std::string& c) {
    ListOptions l;
    l.limit = limit;
    l.cursor = c;
    return (of_followers ? env.engine->Followers(entity, l)
                         : env.engine->Following(entity, l))
        .status();
  };
  const struct {
    const char* what;
    absl::Status status;
  } list_errors[] = {
      {"limit 0", list(true, 5, 0, "")},
      {"limit above max_page_size", list(false, 3, 21, "")},
      {"garbage", list(true, 5, 1, "garbage")},
      {"a timeline cursor", list(true, 5, 1, home_new)},
      {"another entity's", list(true, 6, 1, followers->next_cursor)},
      {"a follower cursor on Following",
       list(false, 5, 1, followers->next_cursor)},
      {"a followee cursor on Followers",
       list(true, 3, 1, following->next_cursor)},
  };
  for (const auto& e : list_errors) {
    INFO(e.what << ": " << e.status);
    CHECK(absl::IsInvalidArgument(e.status));
  }
  CHECK(list(true, 5, 1, followers->next_cursor).ok());
  CHECK(list(false, 3, 1, following->next_cursor).ok());
  CHECK(list(false, 3, 20, "").ok());
}

// ---------------------------------------------------------------------------
// Expiry and caps

TEST_CASE("entries disappear once the clock reaches their expiry") {
  Env env(Options(100, /*default_ttl=*/100));
  InsertOptions ttl10, ttl20, at;
  ttl10.ttl = 10;
  ttl20.ttl = 20;
  at.expires_at = kStart + 15;
  env.Ins(1, {1, 1, 5}, ttl10);
  env.Ins(1, {2, 2, 5}, ttl20);
  env.Ins(1, {3, 3, 5}, at);
  env.Ins(1, {4, 4, 5});
  env.Fol(2, 5);
  env.Pub(50, 5, 5, /*ttl=*/12);
  auto ids = [&](EntityId owner) {
    return IdsOf(Timeline(*env.engine, owner));
  };
  using I = std::vector<ActivityId>;
  CHECK(ids(1) == I{4, 3, 2, 1});
  CHECK(Timeline(*env.engine, 2) ==
        std::vector<StoredEntry>{Stored(5, 50, 5, kStart + 12)});

  env.clock->Set(kStart + 9);
  CHECK(ids(1) == I{4, 3, 2, 1});
  env.clock->Set(kStart + 10);  // visible while now < expires_at
  CHECK(ids(1) == I{4, 3, 2});
  CHECK(env.engine->CountNewer(1, {0, 0}, 10).value_or(99) == 3);
  CHECK(ids(2) == I{50});
  env.clock->Set(kStart + 12);
  CHECK(ids(2).empty());
  CHECK(Own(*env.engine, 5).empty());
  CHECK(World(*env.engine).empty());
  env.clock->Set(kStart + 15);
  CHECK(ids(1) == I{4, 2});
  env.clock->Set(kStart + 99);
  CHECK(ids(1) == I{4});
  // Oldest-first and paged reads skip them too.
  CHECK(IdsOf(Timeline(*env.engine, 1, Read(1, ReadOrder::kOldestFirst))) ==
        I{4});
  env.clock->Set(kStart + 100);
  CHECK(ids(1).empty());
  CHECK(env.engine->CountNewer(1, {0, 0}, 10).value_or(99) == 0);

  // An expiry not after now is refused: the entry would never be visible.
  for (const Micros expires_at : {env.Now(), env.Now() - 1, Micros{0}}) {
    InsertOptions past;
    past.expires_at = expires_at;
    CHECK(absl::IsInvalidArgument(
        env.engine->Insert(1, {1, 1, 5}, past).status()));
  }
  for (const Micros ttl : {Micros{-1}, kMaxTtl + 1}) {
    InsertOptions bad;
    bad.ttl = ttl;
    CHECK(absl::IsInvalidArgument(
        env.engine->Insert(1, {1, 1, 5}, bad).status()));
  }
  CHECK(ids(1).empty());
}

TEST_CASE("far-future expiries are kept") {
  Env env(Options(100));
  InsertOptions longest;
  longest.ttl = kMaxTtl;
  InsertOptions never;
  never.expires_at = std::numeric_limits<Micros>::max();
  // First into an empty timeline, then after another entry.
  env.Ins(3, {2, 2, 5}, never);
  env.Ins(1, {1, 1, 5}, longest);
  env.Ins(1, {2, 2, 5}, never);
  CHECK(Timeline(*env.engine, 3) ==
        std::vector<StoredEntry>{
            Stored(2, 2, 5, std::numeric_limits<Micros>::max())});
  env.Pub(MakeActivity(3, 5, 3, kMaxTtl));
  env.Fol(2, 5);
  const std::vector<StoredEntry> want = {
      Stored(2, 2, 5, std::numeric_limits<Micros>::max()),
      Stored(1, 1, 5, kStart + kMaxTtl)};
  CHECK(Timeline(*env.engine, 1) == want);
  CHECK(Timeline(*env.engine, 2) ==
        std::vector<StoredEntry>{Stored(3, 3, 5, kStart + kMaxTtl)});
  env.clock->Advance(365 * kMicrosPerDay);
  CHECK(Timeline(*env.engine, 1) == want);
  CHECK(IdsOf(Own(*env.engine, 5)) == std::vector<ActivityId>{3});

  // The same on a clock at its very start, where the room left before the
  // largest expiry is as large as it gets.
  Env early;
  early.clock->Set(0);
  early.Ins(1, {2, 2, 5}, never);
  CHECK(Timeline(*early.engine, 1) ==
        std::vector<StoredEntry>{
            Stored(2, 2, 5, std::numeric_limits<Micros>::max())});
}

TEST_CASE("the cap keeps the newest entries of every timeline and own feed") {
  EngineOptions o = Options(3);
  o.world_timeline_length = 4;
  // The in-process world feed keeps world_timeline_length per shard; with
  // one shard that is the whole feed, as in the cluster's single world key.
  o.shards = 1;
  Env env(o);
  env.Fol(1, 5);
  for (ActivityId i = 1; i <= 6; ++i) env.Pub(i, 5, static_cast<Micros>(i));
  using I = std::vector<ActivityId>;
  CHECK(IdsOf(Own(*env.engine, 5)) == I{6, 5, 4});
  CHECK(IdsOf(World(*env.engine)) == I{6, 5, 4, 3});
  CHECK(IdsOf(Timeline(*env.engine, 1)) == I{6, 5, 4});
  // Older than every entry of the full feeds: kept nowhere, yet published.
  const PublishResult old = env.Pub(MakeActivity(7, 5, 0));
  CHECK(old.created);
  CHECK(old.fanned_out == 1);
  CHECK(IdsOf(Own(*env.engine, 5)) == I{6, 5, 4});
  CHECK(IdsOf(World(*env.engine)) == I{6, 5, 4, 3});
  CHECK(IdsOf(Timeline(*env.engine, 1)) == I{6, 5, 4});
  CHECK(env.engine->Retract(7).ok());
  // A newer low-level entry trims the oldest copy.
  CHECK(Describe(env.Ins(1, {10, 100, 9})) == Counts(1, 0, 0, 1));
  CHECK(IdsOf(Timeline(*env.engine, 1)) == I{100, 6, 5});
}

TEST_CASE("CountNewer counts visible entries newer than a key") {
  EngineOptions o = Options(100);
  o.max_page_size = 10;
  Env env(o);
  InsertOptions short_ttl;
  short_ttl.ttl = 50;
  env.Ins(1, {10, 1, 5});
  env.Ins(1, {20, 1, 5});
  env.Ins(1, {20, 2, 5});
  env.Ins(1, {30, 1, 5}, short_ttl);
  env.Ins(1, {40, 1, 5});
  auto count = [&](Micros ts, ActivityId id, size_t max) {
    const absl::StatusOr<size_t> n = env.engine->CountNewer(1, {ts, id}, max);
    REQUIRE_MESSAGE(n.ok(), n.status());
    return *n;
  };
  CHECK(count(0, 0, 10) == 5);
  CHECK(count(20, 1, 10) == 3);
  CHECK(count(20, 2, 10) == 2);
  CHECK(count(20, 0, 10) == 4);
  CHECK(count(20, std::numeric_limits<ActivityId>::max(), 10) == 2);
  CHECK(count(40, 1, 10) == 0);
  CHECK(count(0, 0, 2) == 2);
  CHECK(count(std::numeric_limits<Micros>::max(),
              std::numeric_limits<ActivityId>::max(), 10) == 0);
  CHECK(env.engine->CountNewer(99, {0, 0}, 10).value_or(99) == 0);
  env.clock->Advance(50);
  CHECK(count(0, 0, 10) == 4);
  CHECK(count(20, 2, 10) == 1);
  // Publishes count as they reach the reader.
  env.Fol(1, 6);
  env.Pub(500, 6, 45);
  CHECK(count(40, 1, 10) == 1);

  CHECK(
      absl::IsInvalidArgument(env.engine->CountNewer(1, {-1, 0}, 5).status()));
  CHECK(absl::IsInvalidArgument(env.engine->CountNewer(1, {0, 0}, 0).status()));
  CHECK(
      absl::IsInvalidArgument(env.engine->CountNewer(1, {0, 0}, 11).status()));
  CHECK(count(0, 0, 10) == 5);
}

}  // namespace
}  // namespace feedcore
