// The switch of an actor to merged-at-read on the Redis Cluster backend
// when the Follow that started it stops half-way (its client died after
// marking the actor "becoming" and adding the follower, before walking the
// followers): the actor stays copied, and correct, until the walk's lease
// runs out on the engine clock; then the next Follow of the actor takes
// the walk over and finishes the switch. The half-done state is written
// with the layout hybrid_scripts.h describes. Runs on the shared cluster
// under a key prefix of its own.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "doctest/doctest.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/redis_cluster.h"
#include "redis/cluster_client.h"
#include "redis/entry_codec.h"
#include "redis/key_slot.h"
#include "redis/redis_cluster_seeds.h"

namespace feedcore::redis {
namespace {

constexpr Micros kStart = 1'000'000'000;
constexpr EntityId kActor = 100;
// A lease is 30 s of the engine clock (RedisFeedEngine::kSwitchLease).
constexpr Micros kPastLease = 31 * kMicrosPerSecond;

struct Fixture {
  Fixture() {
    cluster.seed_nodes = testing::RedisClusterSeeds();
    cluster.key_prefix = testing::UniqueKeyPrefix("hybrid-switch");
    EngineOptions options;
    options.clock = clock;
    options.hybrid_fanout_threshold = 2;
    auto created = CreateRedisClusterFeedEngine(cluster, options);
    REQUIRE_MESSAGE(created.ok(), created.status());
    engine = *std::move(created);
    auto connected = ClusterClient::Connect(cluster);
    REQUIRE_MESSAGE(connected.ok(), connected.status());
    client = *std::move(connected);
  }

  std::string Key(EntityId entity, const char* kind) const {
    return absl::StrCat(cluster.key_prefix, ":{", entity, "}:", kind);
  }

  Reply Run(std::vector<std::string> args) {
    const uint16_t slot = KeySlot(args[1]);
    absl::StatusOr<Reply> reply =
        client->RunOne(Command{std::move(args), slot});
    REQUIRE_MESSAGE(reply.ok(), reply.status());
    REQUIRE_MESSAGE(!reply->is_error(), reply->str);
    return *reply;
  }

  std::string Mode() { return Run({"HGET", Key(kActor, "fo"), "mode"}).str; }

  PublishResult Publish(ActivityId id) {
    Activity activity;
    activity.id = id;
    activity.actor = kActor;
    activity.ts = clock->Now();
    absl::StatusOr<PublishResult> published = engine->Publish(activity);
    REQUIRE_MESSAGE(published.ok(), published.status());
    return *published;
  }

  std::vector<ActivityId> Timeline(EntityId reader) {
    absl::StatusOr<Page> page = engine->ReadTimeline(reader, {});
    REQUIRE_MESSAGE(page.ok(), page.status());
    std::vector<ActivityId> ids;
    for (const StoredEntry& e : page->entries) ids.push_back(e.activity_id);
    return ids;
  }

  std::shared_ptr<ManualClock> clock = std::make_shared<ManualClock>(kStart);
  RedisClusterOptions cluster;
  std::unique_ptr<FeedEngine> engine;
  std::unique_ptr<ClusterClient> client;
};

TEST_CASE("a switch whose walker stopped is taken over once its lease ends") {
  Fixture f;
  REQUIRE(f.engine->Follow(1, kActor).ok());
  REQUIRE(f.engine->Follow(2, kActor).ok());
  CHECK(f.Publish(1).fanned_out == 2);
  // Follower 3 takes the actor past the threshold, and its Follow stops
  // after its first two steps: the actor is "becoming", leased from now,
  // and nobody merges it.
  f.Run({"ZADD", f.Key(kActor, "fr"), "0", BigEndian(3)});
  f.Run({"ZADD", f.Key(3, "fg"), "0", BigEndian(kActor)});
  f.Run({"HSET", f.Key(kActor, "fo"), "mode", "becoming", "lease",
         BigEndian(static_cast<uint64_t>(kStart + 30 * kMicrosPerSecond))});

  // Meanwhile publishes are copied to every follower.
  f.clock->Advance(1);
  const PublishResult copied = f.Publish(2);
  CHECK_FALSE(copied.merged_at_read);
  CHECK(copied.fanned_out == 3);
  // A Follow within the lease merges the actor for its follower but leaves
  // the walk to the lease's holder.
  REQUIRE(f.engine->Follow(4, kActor).ok());
  CHECK(f.Mode() == "becoming");

  // The lease runs out: the next Follow takes the walk over.
  f.clock->Advance(kPastLease);
  REQUIRE(f.engine->Follow(5, kActor).ok());
  CHECK(f.Mode() == "merged");
  f.clock->Advance(1);
  const PublishResult merged = f.Publish(3);
  CHECK(merged.merged_at_read);
  CHECK(merged.fanned_out == 0);
  using Ids = std::vector<ActivityId>;
  CHECK(f.Timeline(1) == Ids{3, 2, 1});
  CHECK(f.Timeline(2) == Ids{3, 2, 1});
  CHECK(f.Timeline(3) == Ids{3, 2});
  // Followers that came after the switch began see what back-fill would
  // have copied and everything after.
  CHECK(f.Timeline(4) == Ids{3, 2, 1});
  CHECK(f.Timeline(5) == Ids{3, 2, 1});
}

}  // namespace
}  // namespace feedcore::redis
