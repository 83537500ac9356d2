// A master of a private Redis Cluster is killed in the middle of a publish
// workload and started again. Checks the documented behaviour
// (include/feedcore/redis_cluster.h): while the node is down calls fail
// with Unavailable and a message naming the problem, never hang or crash;
// once it is back the same client works again without being recreated; and
// a publish that failed half-way, retried, completes its fan-out without
// duplicating a single entry.
//
// The cluster has no replicas and no persistence, so the restarted master
// comes back empty. The test keeps everything it checks (the actor, the
// activities, the followers it counts) on the two masters that stay up,
// and puts only some followers on the one that goes down: their fan-out is
// what fails mid-way.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "doctest/doctest.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/redis_cluster.h"
#include "redis/cluster_client.h"
#include "redis/key_slot.h"
#include "redis/private_redis_cluster.h"

namespace feedcore {
namespace {

// The first ids from `start` on whose keys (`<prefix>:{<tag><id>}:<kind>`)
// live on `node`, `count` of them.
std::vector<uint64_t> IdsOnNode(const redis::ClusterClient& client,
                                const std::string& prefix,
                                const std::string& tag, const char* kind,
                                const std::string& node, size_t count,
                                uint64_t start) {
  std::vector<uint64_t> ids;
  for (uint64_t id = start; ids.size() < count; ++id) {
    const std::string key = absl::StrCat(prefix, ":{", tag, id, "}:", kind);
    if (client.NodeOf(redis::KeySlot(key)) == node) ids.push_back(id);
  }
  return ids;
}

// How many times each activity id appears in `reader`'s whole timeline.
std::map<ActivityId, int> CopiesIn(FeedEngine& engine, EntityId reader) {
  std::map<ActivityId, int> copies;
  ReadOptions read;
  read.limit = 100;
  do {
    absl::StatusOr<Page> page = engine.ReadTimeline(reader, read);
    REQUIRE(page.ok());
    for (const StoredEntry& entry : page->entries) ++copies[entry.activity_id];
    read.cursor = page->next_cursor;
  } while (!read.cursor.empty());
  return copies;
}

TEST_CASE(
    "a master dies mid-workload: Unavailable, then recovery without "
    "duplicates") {
  testing::PrivateRedisCluster cluster("fault");
  RedisClusterOptions options;
  options.seed_nodes = cluster.seeds();
  options.key_prefix = "fault";
  // Short, so the outage is seen within a second or two per call.
  options.connect_timeout = 200 * kMicrosPerMillisecond;
  options.command_timeout = 500 * kMicrosPerMillisecond;
  options.max_attempts = 3;
  options.retry_backoff = 20 * kMicrosPerMillisecond;
  options.max_retry_backoff = 100 * kMicrosPerMillisecond;

  absl::StatusOr<std::unique_ptr<redis::ClusterClient>> client =
      redis::ClusterClient::Connect(options);
  REQUIRE(client.ok());
  const std::string stays_a = (*client)->NodeOf(0);
  const std::string stays_b = (*client)->NodeOf(redis::kSlotCount / 2);
  const std::string dies = (*client)->NodeOf(redis::kSlotCount - 1);
  REQUIRE(stays_a != dies);
  REQUIRE(stays_b != dies);
  REQUIRE(stays_a != stays_b);

  EngineOptions engine_options;
  auto clock = std::make_shared<ManualClock>(kMicrosPerDay);
  engine_options.clock = clock;
  absl::StatusOr<std::unique_ptr<FeedEngine>> engine =
      CreateRedisClusterFeedEngine(options, engine_options);
  REQUIRE(engine.ok());

  const EntityId actor =
      IdsOnNode(**client, "fault", "", "tl", stays_a, 1, 1).front();
  std::vector<EntityId> checked =
      IdsOnNode(**client, "fault", "", "tl", stays_a, 20, 1000);
  const std::vector<EntityId> on_b =
      IdsOnNode(**client, "fault", "", "tl", stays_b, 20, 1000);
  checked.insert(checked.end(), on_b.begin(), on_b.end());
  const std::vector<EntityId> lost =
      IdsOnNode(**client, "fault", "", "tl", dies, 20, 1000);
  for (EntityId follower : checked) {
    REQUIRE((*engine)->Follow(follower, actor, {}).ok());
  }
  for (EntityId follower : lost) {
    REQUIRE((*engine)->Follow(follower, actor, {}).ok());
  }
  // Activity records on the masters that stay up, so a retry finds the
  // half-done publish and completes it.
  std::vector<ActivityId> ids;
  for (ActivityId id :
       IdsOnNode(**client, "fault", "a", "act", stays_a, 20, 1)) {
    ids.push_back(id);
  }
  for (ActivityId id :
       IdsOnNode(**client, "fault", "a", "act", stays_b, 20, 1)) {
    ids.push_back(id);
  }

  auto activity = [&](ActivityId id) {
    return Activity{.id = id,
                    .actor = actor,
                    .ts = static_cast<Micros>(id),
                    .payload = absl::StrCat("post ", id)};
  };
  // Before the fault: everything works.
  for (size_t i = 0; i < 10; ++i) {
    REQUIRE((*engine)->Publish(activity(ids[i])).ok());
  }

  cluster.Kill(dies);
  std::vector<ActivityId> failed;
  for (size_t i = 10; i < ids.size(); ++i) {
    absl::StatusOr<PublishResult> result = (*engine)->Publish(activity(ids[i]));
    if (result.ok()) continue;
    if (failed.empty()) {
      MESSAGE("first failure during the outage: ", result.status().ToString());
    }
    INFO("publish failed with: ", result.status().ToString());
    CHECK(result.status().code() == absl::StatusCode::kUnavailable);
    const std::string message(result.status().message());
    // It names the dead node, or says the cluster is down.
    CHECK((message.find(dies) != std::string::npos ||
           message.find("CLUSTERDOWN") != std::string::npos));
    failed.push_back(ids[i]);
  }
  // Every publish during the outage fails: its fan-out reaches followers
  // on the dead master, or, once the other masters notice, the whole
  // cluster refuses (CLUSTERDOWN, Redis's default full-coverage rule).
  CHECK(failed.size() == ids.size() - 10);
  absl::StatusOr<Page> during = (*engine)->ReadTimeline(lost.front(), {});
  CHECK(during.status().code() == absl::StatusCode::kUnavailable);

  cluster.Restart(dies);
  // The same engine recovers: retried publishes complete.
  for (ActivityId id : failed) {
    absl::StatusOr<PublishResult> retried = (*engine)->Publish(activity(id));
    INFO("retry of ", id, ": ", retried.status().ToString());
    REQUIRE(retried.ok());
    CHECK(retried->created);  // it finished the earlier, half-done publish
    // Publishing it once more is a no-op.
    absl::StatusOr<PublishResult> again = (*engine)->Publish(activity(id));
    REQUIRE(again.ok());
    CHECK_FALSE(again->created);
  }
  // Every follower on the surviving masters has every activity exactly
  // once: the retries completed the fan-outs and duplicated nothing.
  for (EntityId follower : checked) {
    const std::map<ActivityId, int> copies = CopiesIn(**engine, follower);
    INFO("follower ", follower);
    CHECK(copies.size() == ids.size());
    for (ActivityId id : ids) {
      auto it = copies.find(id);
      REQUIRE(it != copies.end());
      CHECK(it->second == 1);
    }
  }
  // The restarted master came back empty (no persistence, no replica):
  // its followers lost their follow and their timelines, as Redis would
  // lose any data there; reading them works again.
  absl::StatusOr<Page> after = (*engine)->ReadTimeline(lost.front(), {});
  REQUIRE(after.ok());
  CHECK(after->entries.empty());
}

}  // namespace
}  // namespace feedcore
