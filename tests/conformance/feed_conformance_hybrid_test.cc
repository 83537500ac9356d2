// Hybrid fan-out against copying, on the backend FEEDCORE_TEST_BACKEND
// selects: two engines on one clock, one copying every publish and one
// with a threshold of 2 followers, get the same random Follow, FollowMany,
// Unfollow (also keeping history), Publish (in and out of timestamp
// order), Retract, Block, Unblock, Mute and Unmute (with and without
// back-fill) calls, and must show every reader the same timeline (every
// third step), paged to
// the end in both orders with cursors, the same CountNewer and the same
// grouped timeline (ReadGroups, paged to the end). The cap is out
// of reach, so the one sequence where merged pages may differ (feed_engine.h,
// "Hybrid fan-out") never happens. Results that count copies differ by design
// and are checked against what merging means: a publish of an actor past the
// threshold reports merged_at_read and no copies.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "conformance/feed_conformance_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::kStart;

constexpr size_t kEntities = 8;
constexpr size_t kThreshold = 2;

std::unique_ptr<FeedEngine> MakeOn(std::shared_ptr<ManualClock> clock,
                                   size_t threshold, size_t cap = 100'000) {
  EngineOptions o = testing::Options(cap);
  o.sweep_interval = 0;
  o.clock = std::move(clock);
  o.hybrid_fanout_threshold = threshold;
  o.aggregation.enabled = true;
  o.aggregation.group_key = [](const Activity& a) -> GroupKey {
    return a.verb * 1000 + a.object;
  };
  o.aggregation.max_group_actors = 2;
  o.aggregation.max_group_entries = 3;
  absl::StatusOr<std::unique_ptr<FeedEngine>> made =
      testing::MakeEngine(std::move(o), "hybrid");
  REQUIRE_MESSAGE(made.ok(), made.status());
  return *std::move(made);
}

// Every entry of `reader`'s timeline in `order`, with pages of `limit`.
std::vector<ActivityId> Walk(FeedEngine& engine, EntityId reader,
                             ReadOrder order, size_t limit) {
  std::vector<ActivityId> ids;
  ReadOptions read;
  read.order = order;
  read.limit = limit;
  do {
    absl::StatusOr<Page> page = engine.ReadTimeline(reader, read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    for (const StoredEntry& e : page->entries) ids.push_back(e.activity_id);
    read.cursor = page->next_cursor;
  } while (!read.cursor.empty());
  return ids;
}

// Every group of `reader`'s grouped timeline, with pages of `limit`.
std::vector<FeedGroup> WalkGroups(FeedEngine& engine, EntityId reader,
                                  size_t limit) {
  std::vector<FeedGroup> groups;
  GroupReadOptions read;
  read.limit = limit;
  do {
    absl::StatusOr<GroupPage> page = engine.ReadGroups(reader, read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    groups.insert(groups.end(), page->groups.begin(), page->groups.end());
    read.cursor = page->next_cursor;
  } while (!read.cursor.empty());
  return groups;
}

TEST_CASE("hybrid fan-out shows every reader what copying shows") {
  const uint64_t seed = testing::EnvU64("FEEDCORE_MODEL_SEED", 20261126);
  std::mt19937_64 rng(seed);
  INFO("FEEDCORE_MODEL_SEED=" << seed);
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<FeedEngine> copying = MakeOn(clock, 0);
  std::unique_ptr<FeedEngine> merging = MakeOn(clock, kThreshold);
  auto entity = [&] { return 1 + rng() % kEntities; };
  auto other = [&](EntityId e) {
    EntityId o = entity();
    return o == e ? e % kEntities + 1 : o;
  };
  ActivityId next_id = 1;
  std::vector<ActivityId> published;
  size_t merged_publishes = 0;
  size_t out_of_order = 0;
  size_t shared_groups = 0;
  std::set<EntityId> merged_actors;
  // Relation calls that changed how a merged actor shows.
  size_t hidden_merged = 0;
  // Unfollows of merged actors that kept what the merge showed.
  size_t kept_merged = 0;
  for (int step = 0; step < 400; ++step) {
    const int op = static_cast<int>(rng() % 100);
    std::string what;
    if (op < 30) {
      const EntityId follower = entity();
      std::vector<FollowPair> pairs = {{follower, other(follower)}};
      if (rng() % 3 == 0) pairs.push_back({entity(), 0});
      if (pairs.size() > 1) pairs[1].followee = other(pairs[1].follower);
      FollowOptions o;
      o.backfill = rng() % 4;
      what = "follow";
      absl::StatusOr<std::vector<FollowResult>> a =
          copying->FollowMany(pairs, o);
      absl::StatusOr<std::vector<FollowResult>> b =
          merging->FollowMany(pairs, o);
      REQUIRE_MESSAGE(a.ok(), a.status());
      REQUIRE_MESSAGE(b.ok(), b.status());
      for (size_t i = 0; i < pairs.size(); ++i) {
        CHECK(a->at(i).created == b->at(i).created);
        CHECK(a->at(i).blocked == b->at(i).blocked);
      }
    } else if (op < 42) {
      const EntityId follower = entity();
      const EntityId followee = other(follower);
      UnfollowOptions o;
      o.keep_history = rng() % 3 == 0;
      what = o.keep_history ? "unfollow keeping history" : "unfollow";
      absl::StatusOr<UnfollowResult> a =
          copying->Unfollow(follower, followee, o);
      absl::StatusOr<UnfollowResult> b =
          merging->Unfollow(follower, followee, o);
      REQUIRE_MESSAGE(a.ok(), a.status());
      REQUIRE_MESSAGE(b.ok(), b.status());
      CHECK(a->was_following == b->was_following);
      if (o.keep_history && b->was_following &&
          merged_actors.contains(followee)) {
        ++kept_merged;
      }
    } else if (op < 50) {
      // No mute here expires: an expiring mute of a merged actor is not
      // exact (feed_engine.h, Mute).
      const EntityId user = entity();
      const EntityId actor = other(user);
      const int kind = static_cast<int>(rng() % 4);
      RestoreOptions restore;
      restore.backfill = rng() % 4;
      MuteOptions mute;
      mute.notifications = rng() % 2 == 0;
      what = "relation " + std::to_string(kind);
      auto apply = [&](FeedEngine& engine) {
        switch (kind) {
          case 0:
            return engine.relations()->Block(user, actor);
          case 1:
            return engine.relations()->Unblock(user, actor, restore);
          case 2:
            return engine.relations()->Mute(user, actor, mute);
          default:
            return engine.relations()->Unmute(user, actor, restore);
        }
      };
      absl::StatusOr<RelationResult> a = apply(*copying);
      absl::StatusOr<RelationResult> b = apply(*merging);
      REQUIRE_MESSAGE(a.ok(), a.status());
      REQUIRE_MESSAGE(b.ok(), b.status());
      CHECK(a->changed == b->changed);
      CHECK(a->follows_ended == b->follows_ended);
      if (b->changed && merged_actors.contains(actor)) ++hidden_merged;
    } else if (op < 88) {
      const EntityId actor = entity();
      // Mostly in order; one in eight older than the newest so far.
      Micros ts = clock->Now();
      if (rng() % 8 == 0) {
        ts -= 1 + static_cast<Micros>(rng() % 1000);
        ++out_of_order;
      }
      Activity activity =
          testing::MakeActivity(next_id++, actor, ts, /*ttl=*/0);
      // Verb 0 and object 0: ungrouped.
      activity.verb = rng() % 2;
      activity.object = rng() % 3;
      what = "publish " + std::to_string(activity.id);
      absl::StatusOr<PublishResult> a = copying->Publish(activity);
      absl::StatusOr<PublishResult> b = merging->Publish(activity);
      REQUIRE_MESSAGE(a.ok(), a.status());
      REQUIRE_MESSAGE(b.ok(), b.status());
      const size_t followers = merging->FollowerCount(actor).value();
      CHECK_FALSE(a->merged_at_read);
      if (b->merged_at_read) {
        ++merged_publishes;
        merged_actors.insert(actor);
        CHECK(b->fanned_out == 0);
      } else {
        CHECK(b->fanned_out == a->fanned_out);
        CHECK(followers <= kThreshold);
      }
      published.push_back(activity.id);
    } else if (op < 96 && !published.empty()) {
      const ActivityId id = published[rng() % published.size()];
      what = "retract " + std::to_string(id);
      CHECK(copying->Retract(id).code() == merging->Retract(id).code());
    } else {
      clock->Advance(1 + static_cast<Micros>(rng() % 1000));
      what = "advance";
    }
    INFO("step " << step << ": " << what);
    if (step % 3 != 2) continue;
    for (EntityId reader = 1; reader <= kEntities; ++reader) {
      INFO("reader " << reader);
      const size_t limit = 2 + rng() % 6;
      for (ReadOrder order :
           {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
        REQUIRE(Walk(*copying, reader, order, limit) ==
                Walk(*merging, reader, order, limit));
      }
      REQUIRE(copying->CountNewer(reader, {kStart, 0}, 100).value() ==
              merging->CountNewer(reader, {kStart, 0}, 100).value());
      const std::vector<FeedGroup> groups = WalkGroups(*copying, reader, limit);
      REQUIRE(groups == WalkGroups(*merging, reader, limit));
      for (const FeedGroup& g : groups) shared_groups += g.activity_count > 1;
    }
  }
  MESSAGE("publishes merged at read: "
          << merged_publishes << ", out of order: " << out_of_order
          << ", relations of merged actors changed: " << hidden_merged
          << ", merged histories kept: " << kept_merged);
  CHECK(merged_publishes > 0);
  CHECK(hidden_merged > 0);
  CHECK(kept_merged > 0);
  CHECK(out_of_order > 0);
  CHECK(shared_groups > 0);
}

TEST_CASE("a merged timeline keeps the newest max_timeline_length entries") {
  auto clock = std::make_shared<ManualClock>(kStart);
  for (const size_t threshold : {size_t{0}, size_t{1}}) {
    INFO("threshold " << threshold);
    std::unique_ptr<FeedEngine> engine = MakeOn(clock, threshold, /*cap=*/3);
    // Actor 10 passes the threshold at its second follower; 11 stays
    // copied.
    for (const EntityId reader : {1, 2}) {
      REQUIRE(engine->Follow(reader, 10).ok());
    }
    REQUIRE(engine->Follow(1, 11).ok());
    for (ActivityId id = 1; id <= 5; ++id) {
      const absl::StatusOr<PublishResult> r = engine->Publish(
          testing::MakeActivity(id, 10, static_cast<Micros>(id), 0));
      REQUIRE_MESSAGE(r.ok(), r.status());
      CHECK(r->merged_at_read == (threshold > 0));
    }
    REQUIRE(engine->Publish(testing::MakeActivity(6, 11, 3, 0)).ok());
    using I = std::vector<ActivityId>;
    CHECK(Walk(*engine, 1, ReadOrder::kNewestFirst, 2) == I{5, 4, 6});
    CHECK(Walk(*engine, 1, ReadOrder::kOldestFirst, 2) == I{6, 4, 5});
    CHECK(Walk(*engine, 2, ReadOrder::kNewestFirst, 10) == I{5, 4, 3});
    CHECK(engine->CountNewer(1, {0, 0}, 10).value() == 3);
    // Grouped reads keep the same entries.
    const std::vector<FeedGroup> groups = WalkGroups(*engine, 1, 2);
    REQUIRE(groups.size() == 3);
    CHECK(groups[0].recent[0].activity_id == 5);
    CHECK(groups[2].recent[0].activity_id == 6);
  }
}

}  // namespace
}  // namespace feedcore
