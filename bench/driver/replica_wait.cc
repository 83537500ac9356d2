// replica-wait: what RedisClusterOptions::wait_replicas costs. feedcore on
// a Redis Cluster of 3 masters with one replica each, started for this
// scenario (the other scenarios' cluster has no replicas), once with
// wait_replicas = 0 (a write is acknowledged by its master alone) and once
// with 1 (each call that writes also waits until one replica of every node
// it wrote to has its writes): a publish to --replica_wait_followers
// followers, and single inserts into timelines spread over the nodes,
// interleaved round by round. Both run against the same cluster, so the
// replicas do the same work in both; the difference is the wait.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/driver/cluster_feed.h"
#include "bench/driver/interleave.h"
#include "bench/driver/local_redis_cluster.h"
#include "bench/driver/report.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "replica-wait";
// feedcore on the replicated cluster, with wait_replicas = 0 and 1.
constexpr char kNoWait[] = "feedcore_redis_cluster_wait0";
constexpr char kWithWait[] = "feedcore_redis_cluster_wait1";
constexpr EntityId kActor = 1;
constexpr EntityId kFirstFollower = 1'000'000;
// Single inserts go to this many timelines, so they reach every master.
constexpr EntityId kInsertOwners = 64;
constexpr EntityId kFirstInsertOwner = 10;
constexpr size_t kSetupThreads = 8;

Activity Post(size_t number) {
  Activity post;
  post.id = 100 + number;
  post.actor = kActor;
  post.ts = kBenchStartTime + static_cast<Micros>(number) * kMicrosPerSecond;
  post.payload = "replicated";
  return post;
}

}  // namespace

void RunReplicaWait(RunContext& context) {
  // Without the cluster comparison in this run (main noted why), nothing
  // to measure.
  if (!context.redis_cluster.has_value()) return;
  const DriverOptions& options = context.options;
  absl::StatusOr<std::unique_ptr<LocalRedisCluster>> cluster =
      LocalRedisCluster::Start(options.redis_cluster_script,
                               /*replicas_per_master=*/1);
  if (!cluster.ok()) {
    context.answers.Fail(kScenario, kNoWait, cluster.status());
    return;
  }
  context.report.Note(absl::StrCat(
      kScenario,
      ": feedcore on a private cluster of 3 masters with a replica each; ",
      kNoWait, " and ", kWithWait,
      " with RedisClusterOptions::wait_replicas = 0 and 1"));

  auto clock = std::make_shared<ManualClock>(kBenchStartTime);
  struct Variant {
    const char* system;
    std::unique_ptr<ClusterFeed> feed;
  };
  std::vector<Variant> variants;
  for (size_t wait : {size_t{0}, size_t{1}}) {
    RedisClusterEndpoint endpoint{(*cluster)->seeds(),
                                  context.redis_cluster->key_prefix, wait};
    const char* system = wait == 0 ? kNoWait : kWithWait;
    absl::StatusOr<std::unique_ptr<ClusterFeed>> feed = ClusterFeed::Open(
        endpoint, absl::StrCat(kScenario, "-", wait),
        ClusterEngineOptions(NewEngineOptions(clock, options.timeline_cap)));
    if (!feed.ok()) {
      context.answers.Fail(kScenario, system, feed.status());
      return;
    }
    FollowOptions no_backfill;
    no_backfill.backfill = 0;
    FeedEngine& engine = (*feed)->engine();
    if (absl::Status s = RunConcurrently(
            context, kScenario, absl::StrCat("following (", system, ")"),
            options.replica_wait_followers, kSetupThreads,
            [&](size_t i) {
              return engine.Follow(kFirstFollower + i, kActor, no_backfill)
                  .status();
            });
        !s.ok()) {
      context.answers.Fail(kScenario, system, s);
      return;
    }
    // Untimed: loads the scripts and opens the connections.
    if (absl::Status s = engine.Publish(Post(0)).status(); !s.ok()) {
      context.answers.Fail(kScenario, system, s);
      return;
    }
    variants.push_back({system, *std::move(feed)});
  }

  std::vector<SystemUnderTest> publishes;
  std::vector<SystemUnderTest> inserts;
  for (Variant& variant : variants) {
    FeedEngine& engine = variant.feed->engine();
    publishes.push_back({variant.system,
                         [&engine](size_t round, std::vector<double>& samples) {
                           const auto start = Stopwatch::now();
                           absl::Status status =
                               engine.Publish(Post(round + 1)).status();
                           samples.push_back(MicrosSince(start) / 1000.0);
                           return status;
                         },
                         {},
                         false});
    const size_t per_round = options.replica_wait_inserts;
    inserts.push_back(
        {variant.system,
         [&engine, per_round](size_t round, std::vector<double>& samples) {
           for (size_t k = 0; k < per_round; ++k) {
             const size_t n = round * per_round + k + 1;
             TimelineEntry entry;
             entry.ts = kBenchStartTime + static_cast<Micros>(n);
             entry.activity_id = static_cast<ActivityId>(10'000'000 + n);
             entry.actor = kActor;
             const auto start = Stopwatch::now();
             absl::Status status =
                 engine.Insert(kFirstInsertOwner + n % kInsertOwners, entry, {})
                     .status();
             samples.push_back(MicrosSince(start));
             if (!status.ok()) return status;
           }
           return absl::OkStatus();
         },
         {},
         false});
  }
  RunInterleaved(context, kScenario, "publishing", options.replica_wait_rounds,
                 publishes);
  RunInterleaved(context, kScenario, "inserting", options.replica_wait_rounds,
                 inserts);

  const std::string publish_metric =
      absl::StrCat("publish to ", options.replica_wait_followers, " followers");
  const std::string insert_metric = "single insert";
  AddFigures(context, kScenario, publish_metric, "ms", publishes);
  AddFigures(context, kScenario, insert_metric, "us", inserts);
  context.report.Compare(kScenario, publish_metric, kNoWait, kWithWait,
                         std::nullopt);
  context.report.Compare(kScenario, insert_metric, kNoWait, kWithWait,
                         std::nullopt);

  // Both engines must show the same timeline to the same follower.
  ReadOptions read;
  read.limit = 20;
  std::vector<std::vector<int64_t>> answers;
  for (Variant& variant : variants) {
    absl::StatusOr<Page> page =
        variant.feed->engine().ReadTimeline(kFirstFollower, read);
    if (!page.ok()) {
      context.answers.Fail(kScenario, variant.system, page.status());
      return;
    }
    answers.push_back(PageIds(*page));
  }
  context.answers.Check(kScenario, "the first follower's newest entries",
                        kWithWait, answers[0], answers[1]);
  // The engines go before the cluster does (their destructors delete
  // their keys through it).
  variants.clear();
}

}  // namespace feedcore::bench
