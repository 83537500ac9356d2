// Conformance cases of FeedEngine's social calls: each runs against the
// backend that FEEDCORE_TEST_BACKEND selects (conformance/backend.h), the
// in-process engine or the Redis Cluster one, and holds both to the contract
// of feed_engine.h: back-fill, Unfollow, the follower and followee lists,
// Publish and Retract, that a call which fails changes nothing, Stats, and
// the options and notification calls where the backends differ by design
// (redis_cluster.h, "What differs").
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
#include "absl/strings/match.h"
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

using testing::Env;
using testing::FailsChangingNothing;
using testing::FollowerSet;
using testing::IdsOf;
using testing::kHour;
using testing::kListPage;
using testing::kStart;
using testing::Limit;
using testing::MakeActivity;
using testing::OnCluster;
using testing::Options;
using testing::Own;
using testing::Stored;
using testing::Timeline;
using testing::WholeList;
using testing::World;

// ---------------------------------------------------------------------------
// Social graph

TEST_CASE("Follow back-fills the followee's newest visible activities") {
  EngineOptions o = Options(10);
  o.default_backfill = 2;
  Env env(o);
  for (ActivityId i = 1; i <= 6; ++i) {
    env.Pub(i, 5, static_cast<Micros>(i), i == 6 ? 10 : 0);
  }
  REQUIRE(env.engine->Retract(5).ok());
  env.clock->Advance(10);  // 6 has expired
  using I = std::vector<ActivityId>;
  REQUIRE(IdsOf(Own(*env.engine, 5)) == I{4, 3, 2, 1});

  const FollowResult by_default = env.Fol(1, 5);
  CHECK(by_default.created);
  CHECK(by_default.backfilled == 2);
  // The copies keep the activity's expiry.
  CHECK(Timeline(*env.engine, 1) ==
        std::vector<StoredEntry>{Stored(4, 4, 5, kStart + kHour),
                                 Stored(3, 3, 5, kStart + kHour)});
  const FollowResult none = env.Fol(2, 5, 0);
  CHECK(none.created);
  CHECK(none.backfilled == 0);
  CHECK(Timeline(*env.engine, 2).empty());
  const FollowResult all = env.Fol(3, 5, 100);
  CHECK(all.backfilled == 4);
  CHECK(IdsOf(Timeline(*env.engine, 3)) == I{4, 3, 2, 1});
  const FollowResult at_limit = env.Fol(4, 5, kMaxTimelineLengthLimit);
  CHECK(at_limit.backfilled == 4);

  // Following again changes nothing and back-fills nothing.
  const std::vector<StoredEntry> before = Timeline(*env.engine, 1);
  const FollowResult again = env.Fol(1, 5, 50);
  CHECK_FALSE(again.created);
  CHECK(again.backfilled == 0);
  CHECK(Timeline(*env.engine, 1) == before);
  CHECK(env.engine->FollowerCount(5).value() == 4);

  // A key the follower already holds is overwritten by the copy.
  env.Ins(6, {4, 4, 9});
  const FollowResult overwrite = env.Fol(6, 5, 1);
  CHECK(overwrite.backfilled == 1);
  CHECK(Timeline(*env.engine, 6) ==
        std::vector<StoredEntry>{Stored(4, 4, 5, kStart + kHour)});

  // An entity that never published: nothing to copy.
  CHECK(env.Fol(1, 77).backfilled == 0);
  CHECK(env.Fol(1, 77).created == false);

  CHECK(absl::IsInvalidArgument(env.engine->Follow(1, 1).status()));
  FollowOptions too_many;
  too_many.backfill = kMaxTimelineLengthLimit + 1;
  CHECK(absl::IsInvalidArgument(env.engine->Follow(7, 5, too_many).status()));
  CHECK(env.engine->FollowingCount(7).value() == 0);
  CHECK(env.engine->FollowerCount(1).value() == 0);
}

TEST_CASE("back-fill is bounded by the follower's cap") {
  Env env(Options(3));
  for (ActivityId i = 1; i <= 3; ++i) env.Pub(i, 5, static_cast<Micros>(i));
  // A full timeline of newer entries takes none of the copies.
  for (ActivityId i = 0; i < 3; ++i)
    env.Ins(1, {static_cast<Micros>(100 + i), 50 + i, 9});
  const FollowResult full = env.Fol(1, 5, 3);
  CHECK(full.created);
  CHECK(full.backfilled == 0);
  CHECK(IdsOf(Timeline(*env.engine, 1)) == std::vector<ActivityId>{52, 51, 50});
  // Older entries make way for the copies.
  env.Ins(2, {0, 60, 9});
  const FollowResult room = env.Fol(2, 5, 1000);
  CHECK(room.backfilled == 3);
  CHECK(IdsOf(Timeline(*env.engine, 2)) == std::vector<ActivityId>{3, 2, 1});
}

TEST_CASE("Unfollow removes every entry of the followee") {
  Env env(Options(100));
  env.Fol(1, 5);
  env.Fol(1, 6);
  env.Pub(10, 5, 10);
  env.Pub(11, 5, 11);
  env.Pub(12, 6, 12);
  env.Ins(1, {13, 900, 5});  // a low-level entry with the followee as actor
  env.Ins(1, {14, 901, 7});
  env.Ins(2, {15, 902, 5});
  using I = std::vector<ActivityId>;
  REQUIRE(IdsOf(Timeline(*env.engine, 1)) == I{901, 900, 12, 11, 10});

  const UnfollowResult r = env.Unf(1, 5);
  CHECK(r.was_following);
  CHECK(r.removed == 3);
  CHECK(IdsOf(Timeline(*env.engine, 1)) == I{901, 12});
  CHECK(env.engine->FollowerCount(5).value() == 0);
  CHECK(env.engine->FollowingCount(1).value() == 1);
  CHECK(WholeList(*env.engine, false, 1) == std::vector<EntityId>{6});

  // Not following: says so and removes nothing, not even entries that
  // carry the actor.
  const UnfollowResult again = env.Unf(1, 5);
  CHECK_FALSE(again.was_following);
  CHECK(again.removed == 0);
  const UnfollowResult never = env.Unf(2, 5);
  CHECK_FALSE(never.was_following);
  CHECK(never.removed == 0);
  CHECK(IdsOf(Timeline(*env.engine, 2)) == I{902});
  CHECK(absl::IsInvalidArgument(env.engine->Unfollow(1, 1).status()));

  // Later publishes no longer arrive; following again back-fills.
  env.Pub(20, 5, 20);
  CHECK(IdsOf(Timeline(*env.engine, 1)) == I{901, 12});
  CHECK(env.Fol(1, 5, 10).backfilled == 3);
  CHECK(IdsOf(Timeline(*env.engine, 1)) == I{20, 901, 12, 11, 10});
}

TEST_CASE("FollowMany and UnfollowMany; an unfollow that keeps history") {
  Env env(Options(100));
  env.Pub(10, 5, 10);
  env.Pub(11, 6, 11);
  const std::vector<FollowPair> pairs = {{1, 5}, {1, 6}, {1, 5}};
  absl::StatusOr<std::vector<FollowResult>> followed =
      env.engine->FollowMany(pairs);
  REQUIRE(followed.ok());
  CHECK(followed->at(0).created);
  CHECK(followed->at(0).backfilled == 1);
  CHECK(followed->at(1).created);
  CHECK_FALSE(followed->at(2).created);
  CHECK(followed->at(2).backfilled == 0);
  using I = std::vector<ActivityId>;
  CHECK(IdsOf(Timeline(*env.engine, 1)) == I{11, 10});
  // Both check every pair before changing anything.
  const std::vector<FollowPair> with_self = {{2, 5}, {3, 3}};
  const absl::Status refused = env.engine->FollowMany(with_self).status();
  CHECK(absl::IsInvalidArgument(refused));
  CHECK(refused.message().find("pairs[1]") != std::string::npos);
  CHECK(env.engine->FollowingCount(2).value() == 0);
  CHECK(absl::IsInvalidArgument(env.engine->UnfollowMany(with_self).status()));
  CHECK(env.engine->FollowingCount(1).value() == 2);

  UnfollowOptions keep;
  keep.keep_history = true;
  CHECK(env.engine->Unfollow(1, 6, keep).value().was_following);
  CHECK(IdsOf(Timeline(*env.engine, 1)) == I{11, 10});
  const std::vector<UnfollowResult> gone =
      env.engine->UnfollowMany(pairs).value();
  CHECK(gone[0].was_following);
  CHECK(gone[0].removed == 1);
  CHECK_FALSE(gone[1].was_following);
  CHECK_FALSE(gone[2].was_following);
  CHECK(IdsOf(Timeline(*env.engine, 1)) == I{11});
  CHECK(env.engine->FollowerCount(5).value() == 0);
  // The kept copy is still the activity's: a Retract removes it.
  REQUIRE(env.engine->Retract(11).ok());
  CHECK(Timeline(*env.engine, 1).empty());
  // Keeping the history of a follow that does not exist keeps nothing.
  CHECK_FALSE(env.engine->Unfollow(2, 6, keep).value().was_following);
}

TEST_CASE("Followers and Following page with cursors; counts") {
  EngineOptions o = Options(10);
  o.max_page_size = 12;
  Env env(o);
  const std::vector<EntityId> followers = {3, 17, 5, 1, 42, 8, 99, 21, 64, 2};
  for (const EntityId f : followers) env.Fol(f, 1000, 0);
  // Ids with the top bit set sort after the others: ids are unsigned.
  const std::vector<EntityId> followees = {
      1000, 7, 50, 4, 9, EntityId{1} << 63, ~EntityId{0} - 1};
  for (const EntityId f : followees) env.Fol(3, f, 0);
  const std::set<EntityId> follower_set(followers.begin(), followers.end());
  std::vector<EntityId> followees_by_id = followees;
  std::sort(followees_by_id.begin(), followees_by_id.end());

  for (const size_t limit : {1, 2, 3, 4, 5, 10, 11, 12}) {
    INFO("limit " << limit);
    // The order of followers is stable but differs by backend (in-process:
    // by shard, then id; cluster: by id), so they compare as a set; the
    // list must hold each once.
    const std::vector<EntityId> got = WholeList(*env.engine, true, 1000, limit);
    CHECK(got.size() == followers.size());
    CHECK(std::set<EntityId>(got.begin(), got.end()) == follower_set);
    CHECK(WholeList(*env.engine, true, 1000, limit) == got);
    // Following is by ascending id on both.
    CHECK(WholeList(*env.engine, false, 3, limit) == followees_by_id);
  }
  CHECK(env.engine->FollowerCount(1000).value() == 10);
  CHECK(env.engine->FollowingCount(3).value() == 7);
  CHECK(env.engine->FollowerCount(3).value() == 0);
  CHECK(env.engine->FollowingCount(1000).value() == 0);
  for (const EntityId f : followers)
    CHECK(env.engine->FollowingCount(f).value() == (f == 3 ? 7u : 1u));

  // Unknown entities: an empty page without cursor.
  ListOptions five;
  five.limit = 5;
  const absl::StatusOr<EntityPage> unknown =
      env.engine->Followers(123456, five);
  REQUIRE(unknown.ok());
  CHECK(unknown->ids.empty());
  CHECK(unknown->next_cursor.empty());
  CHECK(env.engine->FollowerCount(123456).value() == 0);

  env.Unf(42, 1000);
  env.Unf(3, 50);
  CHECK(FollowerSet(*env.engine, 1000, kListPage).count(42) == 0);
  CHECK(env.engine->FollowerCount(1000).value() == 9);
  CHECK(WholeList(*env.engine, false, 3, 2) ==
        std::vector<EntityId>{4, 7, 9, 1000, EntityId{1} << 63,
                              ~EntityId{0} - 1});
  CHECK(FollowerSet(*env.engine, 50, kListPage).empty());
}

// ---------------------------------------------------------------------------
// Publish and Retract

TEST_CASE("Publish delivers to every follower, the own feed and the world") {
  EngineOptions o = Options(100);
  o.max_payload_bytes = 8;
  Env env(o);
  for (const EntityId f : {1, 2, 3}) env.Fol(f, 5);
  env.Fol(4, 6);
  Activity a = MakeActivity(10, 5, 100, /*ttl=*/500);
  const PublishResult r = env.Pub(a);
  CHECK(r.created);
  CHECK(r.fanned_out == 3);
  CHECK_FALSE(r.merged_at_read);
  CHECK_FALSE(r.pending);
  CHECK(r.notified == 0);
  const std::vector<StoredEntry> one = {Stored(100, 10, 5, kStart + 500)};
  for (const EntityId f : {1, 2, 3}) CHECK(Timeline(*env.engine, f) == one);
  CHECK(Timeline(*env.engine, 4).empty());
  CHECK(Timeline(*env.engine, 5).empty());
  CHECK(Own(*env.engine, 5) == one);
  CHECK(World(*env.engine) == one);
  // An actor without followers still has its own and the world feed.
  const PublishResult lonely = env.Pub(MakeActivity(11, 7, 101));
  CHECK(lonely.created);
  CHECK(lonely.fanned_out == 0);
  CHECK(IdsOf(World(*env.engine)) == std::vector<ActivityId>{11, 10});

  // The same activity again (the ttl is not compared) is a no-op.
  env.clock->Advance(10);
  Activity same = a;
  same.ttl = 9999;
  const PublishResult again = env.Pub(same);
  CHECK_FALSE(again.created);
  CHECK(again.fanned_out == 0);
  CHECK(Own(*env.engine, 5) == one);
  CHECK(Timeline(*env.engine, 1) == one);

  // The biggest payload allowed goes through.
  Activity big = MakeActivity(12, 5, 102);
  big.payload = std::string(8, 'x');
  CHECK(env.Pub(big).created);
  ReadOptions hydrated;
  hydrated.hydrate = true;
  CHECK(Timeline(*env.engine, 2, hydrated).front().payload == big.payload);
}

TEST_CASE("Retract removes the activity from every feed") {
  Env env(Options(100));
  env.Fol(1, 5);
  env.Fol(2, 5);
  env.Pub(100, 5, 10);
  env.Pub(101, 5, 11);
  // Follower 1's copy of 100 is overwritten with another actor and expiry:
  // still that activity's key, so Retract removes it.
  InsertOptions ttl50;
  ttl50.ttl = 50;
  env.Ins(1, {10, 100, 9}, ttl50);
  using I = std::vector<ActivityId>;
  REQUIRE(IdsOf(Timeline(*env.engine, 1)) == I{101, 100});

  CHECK(env.engine->Retract(100).ok());
  ReadOptions hydrated;
  hydrated.hydrate = true;
  for (const bool hydrate : {false, true}) {
    const ReadOptions r = hydrate ? hydrated : ReadOptions{};
    CHECK(IdsOf(Timeline(*env.engine, 1, r)) == I{101});
    CHECK(IdsOf(Timeline(*env.engine, 2, r)) == I{101});
    CHECK(IdsOf(Own(*env.engine, 5, r)) == I{101});
    CHECK(IdsOf(World(*env.engine, r)) == I{101});
  }
  // Retracting twice is a no-op: an entry put back under the key
  // afterwards stays.
  env.Ins(1, {10, 100, 5});
  CHECK(env.engine->Retract(100).ok());
  CHECK(IdsOf(Timeline(*env.engine, 1)) == I{101, 100});
  CHECK(env.engine->Remove(1, {10, 100}).ok());

  CHECK(absl::IsNotFound(env.engine->Retract(999)));
  // The id stays taken, by the same activity or any other.
  CHECK(absl::IsFailedPrecondition(
      env.engine->Publish(MakeActivity(100, 5, 10)).status()));
  CHECK(absl::IsFailedPrecondition(
      env.engine->Publish(MakeActivity(100, 6, 20)).status()));
  CHECK(IdsOf(Own(*env.engine, 5)) == I{101});
  CHECK(Own(*env.engine, 6).empty());
  // A later follower's back-fill does not bring it back.
  CHECK(env.Fol(3, 5, 10).backfilled == 1);
  CHECK(IdsOf(Timeline(*env.engine, 3)) == I{101});
  // A follower that left before the retract lost its copy then.
  env.Unf(2, 5);
  CHECK(env.engine->Retract(101).ok());
  for (const EntityId e : {1, 2, 3}) CHECK(Timeline(*env.engine, e).empty());
  CHECK(World(*env.engine).empty());
}

// ---------------------------------------------------------------------------
// Failed calls

TEST_CASE("a call that fails changes nothing") {
  EngineOptions o = Options(4);
  o.max_payload_bytes = 16;
  o.max_page_size = 10;
  Env env(o);
  env.Fol(1, 5);
  env.Fol(2, 5);
  env.Fol(1, 6);
  env.Pub(100, 5, 10);
  env.Pub(101, 6, 11);
  env.Pub(102, 5, 12);
  env.Ins(3, {5, 900, 9});
  REQUIRE(env.engine->Retract(102).ok());
  const std::vector<EntityId> entities = {1, 2, 3, 4, 5, 6};
  const FeedEngine& engine = *env.engine;
  FeedEngine& e = *env.engine;
  using absl::StatusCode;
  auto fails = [&](const std::string& what, StatusCode code,
                   const std::function<absl::Status()>& call) {
    FailsChangingNothing(engine, entities, what, code, call);
  };

  fails("Insert with ts < 0", StatusCode::kInvalidArgument, [&] {
    return e.Insert(1, {-1, 1, 9}).status();
  });
  fails("Insert expiring now", StatusCode::kInvalidArgument, [&] {
    InsertOptions past;
    past.expires_at = env.Now();
    return e.Insert(1, {50, 1, 9}, past).status();
  });
  fails("InsertFanout with a bad ttl", StatusCode::kInvalidArgument, [&] {
    InsertOptions bad;
    bad.ttl = -3;
    return e.InsertFanout({1, 2, 3, 4}, {50, 1, 9}, bad).status();
  });
  fails("InsertFanout with ts < 0", StatusCode::kInvalidArgument, [&] {
    return e.InsertFanout({1, 2, 3, 4}, {-2, 1, 9}).status();
  });
  fails("InsertBatch whose last pair is bad", StatusCode::kInvalidArgument,
        [&] {
          return e
              .InsertBatch({{1, {50, 1, 9}}, {4, {51, 2, 9}}, {2, {-1, 3, 9}}})
              .status();
        });
  fails(
      "InsertBatch with an expiry in the past", StatusCode::kInvalidArgument,
      [&] {
        InsertOptions past;
        past.expires_at = 1;
        return e.InsertBatch({{1, {50, 1, 9}}, {4, {51, 2, 9}}}, past).status();
      });
  fails("Remove of an absent key", StatusCode::kNotFound, [&] {
    return e.Remove(1, {10, 101});
  });
  fails("Remove with ts < 0", StatusCode::kInvalidArgument, [&] {
    return e.Remove(3, {-5, 900});
  });
  fails("Follow of oneself", StatusCode::kInvalidArgument,
        [&] { return e.Follow(4, 4).status(); });
  fails("Follow with a bad back-fill", StatusCode::kInvalidArgument, [&] {
    FollowOptions f;
    f.backfill = kMaxTimelineLengthLimit + 1;
    return e.Follow(4, 5, f).status();
  });
  fails("Unfollow of oneself", StatusCode::kInvalidArgument,
        [&] { return e.Unfollow(1, 1).status(); });
  fails("Publish with ts < 0", StatusCode::kInvalidArgument,
        [&] { return e.Publish(MakeActivity(200, 5, -1)).status(); });
  fails("Publish with a payload too large", StatusCode::kInvalidArgument, [&] {
    Activity a = MakeActivity(201, 5, 20);
    a.payload = std::string(17, 'x');
    return e.Publish(a).status();
  });
  fails("Publish with ttl < 0", StatusCode::kInvalidArgument,
        [&] { return e.Publish(MakeActivity(202, 5, 20, -1)).status(); });
  fails("Publish with ttl above kMaxTtl", StatusCode::kInvalidArgument, [&] {
    return e.Publish(MakeActivity(203, 5, 20, kMaxTtl + 1)).status();
  });
  fails("Publish of another activity's id (actor)", StatusCode::kAlreadyExists,
        [&] { return e.Publish(MakeActivity(100, 6, 10)).status(); });
  fails("Publish of another activity's id (ts)", StatusCode::kAlreadyExists,
        [&] { return e.Publish(MakeActivity(100, 5, 11)).status(); });
  fails("Publish of another activity's id (payload)",
        StatusCode::kAlreadyExists, [&] {
          Activity a = MakeActivity(100, 5, 10);
          a.payload = "other";
          return e.Publish(a).status();
        });
  fails("Publish of a retracted id", StatusCode::kFailedPrecondition,
        [&] { return e.Publish(MakeActivity(102, 5, 12)).status(); });
  fails("Retract of an unknown id", StatusCode::kNotFound,
        [&] { return e.Retract(555); });
  fails("ReadTimeline with limit 0", StatusCode::kInvalidArgument,
        [&] { return e.ReadTimeline(1, Limit(0)).status(); });
  fails("CountNewer with max_count 0", StatusCode::kInvalidArgument, [&] {
    return e.CountNewer(1, {0, 0}, 0).status();
  });
  // None of the refused publishes left its activity behind.
  for (const ActivityId id : {200, 201, 202, 203}) {
    CHECK(absl::IsNotFound(e.Retract(id)));
  }
  // The original activity is intact: publishing it again is a no-op.
  const absl::StatusOr<PublishResult> same =
      e.Publish(MakeActivity(100, 5, 10));
  REQUIRE(same.ok());
  CHECK_FALSE(same->created);
}

// ---------------------------------------------------------------------------
// Where the backends differ by design

TEST_CASE("Stats and EvictExpired: only the in-process engine keeps figures") {
  Env env(Options(100, /*default_ttl=*/1000));
  InsertOptions ttl10;
  ttl10.ttl = 10;
  for (ActivityId i = 0; i < 3; ++i)
    env.Ins(1, {static_cast<Micros>(i), i, 5}, ttl10);
  env.Ins(1, {10, 10, 5});
  env.Ins(2, {11, 11, 5});
  env.clock->Advance(10);
  if (FeedMaintenance* maintenance = env.engine->maintenance()) {
    // Memory is the in-process engine's to account for and reclaim.
    CHECK(maintenance->Stats().value().entries == 5);
    CHECK(maintenance->EvictExpired(100).value() == 3);
    CHECK(maintenance->Stats().value().entries == 2);
    CHECK(maintenance->Stats().value().evicted == 3);
    CHECK(maintenance->EvictExpired(100).value() == 0);
  } else {
    // The cluster keeps the data and reclaims it itself (reads, writes,
    // key expiry): it has no maintenance facet.
    CHECK(OnCluster());
  }
  // Either way what a reader sees is the same.
  CHECK(IdsOf(Timeline(*env.engine, 1)) == std::vector<ActivityId>{10});
  CHECK(IdsOf(Timeline(*env.engine, 2)) == std::vector<ActivityId>{11});
}

TEST_CASE("options the cluster does not map are refused at creation") {
  auto create = [](EngineOptions o) {
    o.sweep_interval = 0;
    return testing::MakeEngine(std::move(o), "feedconf").status();
  };
  EngineOptions streamed;
  absl::StatusOr<std::shared_ptr<ChangeStream>> stream =
      ChangeStream::Create({});
  REQUIRE_MESSAGE(stream.ok(), stream.status());
  streamed.change_stream = *stream;
  const absl::Status s = create(streamed);
  INFO(s);
  if (OnCluster()) {
    CHECK(absl::IsInvalidArgument(s));
    CHECK(absl::StrContains(s.message(), "scale-out.md"));
  } else {
    CHECK(s.ok());
  }
  // Out-of-range options are refused by both.
  EngineOptions no_cap;
  no_cap.max_timeline_length = 0;
  EngineOptions no_ttl;
  no_ttl.default_ttl = 0;
  EngineOptions no_page;
  no_page.max_page_size = kMaxPageSizeLimit + 1;
  for (const EngineOptions& o : {no_cap, no_ttl, no_page}) {
    CHECK(absl::IsInvalidArgument(create(o)));
  }

  // Both resolve and report the options they run with.
  EngineOptions chosen = Options(17, 1234);
  chosen.max_page_size = 33;
  chosen.default_backfill = 4;
  chosen.world_timeline_length = 55;
  chosen.max_payload_bytes = 66;
  Env env(chosen);
  const EngineOptions& got = env.engine->options();
  CHECK(got.max_timeline_length == 17);
  CHECK(got.default_ttl == 1234);
  CHECK(got.max_page_size == 33);
  CHECK(got.default_backfill == 4);
  CHECK(got.world_timeline_length == 55);
  CHECK(got.max_payload_bytes == 66);
  CHECK(got.shards > 0);
  CHECK(got.clock == env.clock);
}

TEST_CASE(
    "notifications: delivered beside the fan-out, empty feeds read empty") {
  Env env(Options(100));
  env.Fol(1, 5);
  PublishOptions notify;
  notify.notify = {7, 8, 7};
  const absl::StatusOr<PublishResult> r =
      env.engine->Publish(MakeActivity(10, 5, 10), notify);
  REQUIRE_MESSAGE(r.ok(), r.status());
  CHECK(r->created);
  // Duplicates are served once.
  CHECK(r->notified == 2);
  const absl::StatusOr<GroupPage> bell =
      env.engine->notifications()->ReadNotifications(7, {});
  REQUIRE_MESSAGE(bell.ok(), bell.status());
  REQUIRE(bell->groups.size() == 1);
  CHECK(bell->groups[0].recent[0].activity_id == 10);
  CHECK(bell->groups[0].recent[0].payload.empty());
  CHECK(IdsOf(Timeline(*env.engine, 1)) == std::vector<ActivityId>{10});
  GroupReadOptions hydrated;
  hydrated.hydrate = true;
  const absl::StatusOr<GroupPage> full =
      env.engine->notifications()->ReadNotifications(8, hydrated);
  REQUIRE_MESSAGE(full.ok(), full.status());
  REQUIRE(full->groups.size() == 1);
  CHECK(full->groups[0].recent[0].payload == MakeActivity(10, 5, 10).payload);

  // Publishing again notifies nobody twice.
  const absl::StatusOr<PublishResult> again =
      env.engine->Publish(MakeActivity(10, 5, 10), notify);
  REQUIRE_MESSAGE(again.ok(), again.status());
  CHECK_FALSE(again->created);
  CHECK(again->notified == 0);
  CHECK(env.engine->notifications()->GetNotificationCounts(7).value() ==
        NotificationCounts{.unseen = 1, .unread = 1, .groups = 1});

  // Retract takes it out of every bell.
  REQUIRE(env.engine->Retract(10).ok());
  CHECK(env.engine->notifications()
            ->ReadNotifications(7, {})
            .value()
            .groups.empty());
  CHECK(env.engine->notifications()->GetNotificationCounts(8).value() ==
        NotificationCounts{});

  // A crowd beyond what one script call's Lua can unpack at once, and
  // Retract still finds every feed.
  PublishOptions many;
  for (EntityId user = 1000; user < 11'000; ++user) many.notify.push_back(user);
  const absl::StatusOr<PublishResult> crowded =
      env.engine->Publish(MakeActivity(12, 5, 12), many);
  REQUIRE_MESSAGE(crowded.ok(), crowded.status());
  CHECK(crowded->notified == 10'000);
  CHECK(env.engine->notifications()
            ->GetNotificationCounts(10'999)
            .value()
            .groups == 1);
  REQUIRE(env.engine->Retract(12).ok());
  CHECK(env.engine->notifications()->GetNotificationCounts(1000).value() ==
        NotificationCounts{});
  CHECK(env.engine->notifications()->GetNotificationCounts(10'999).value() ==
        NotificationCounts{});

  // Too many recipients: refused before anything is stored.
  PublishOptions crowd;
  crowd.notify.assign(kMaxNotifyRecipients + 1, 7);
  CHECK(absl::IsInvalidArgument(
      env.engine->Publish(MakeActivity(11, 5, 11), crowd).status()));
  CHECK(absl::IsNotFound(env.engine->Retract(11)));

  {
    // A feed nobody notified reads as empty.
    const absl::StatusOr<GroupPage> empty =
        env.engine->notifications()->ReadNotifications(9, {});
    REQUIRE_MESSAGE(empty.ok(), empty.status());
    CHECK(empty->groups.empty());
    CHECK(empty->next_cursor.empty());
    CHECK(env.engine->notifications()->GetNotificationCounts(9).value() ==
          NotificationCounts{});
    CHECK(env.engine->notifications()->MarkSeen(9).value() ==
          NotificationCounts{});
    CHECK(env.engine->notifications()->MarkAllRead(9).value() ==
          NotificationCounts{});
    CHECK(absl::IsNotFound(
        env.engine->notifications()->MarkRead(9, {10, 10}).status()));
    CHECK(absl::IsInvalidArgument(
        env.engine->notifications()->MarkRead(9, {-1, 10}).status()));
    GroupReadOptions zero;
    zero.limit = 0;
    CHECK(absl::IsInvalidArgument(
        env.engine->notifications()->ReadNotifications(9, zero).status()));
    GroupReadOptions bad_cursor;
    bad_cursor.cursor = "garbage";
    CHECK(absl::IsInvalidArgument(env.engine->notifications()
                                      ->ReadNotifications(9, bad_cursor)
                                      .status()));
    // Grouped reads need aggregation, which this engine does not have.
    CHECK(absl::IsFailedPrecondition(env.engine->ReadGroups(1, {}).status()));
  }
  CHECK(Timeline(*env.engine, 1).empty());
}

}  // namespace
}  // namespace feedcore
