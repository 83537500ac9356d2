// celebrity-post: one actor with F followers publishes; the figure is the
// time until every follower's timeline has the activity (feedcore, in
// process or on Redis Cluster: a synchronous Publish returns; Redis: the
// last reply of the pipelined ZADDs arrived; std::map: the insert loop
// ended). Every follower already holds a few entries, as in a live feed.
// The follower list of the celebrity is held by the Redis client and the
// baselines, not fetched: their best case. feedcore on Redis Cluster reads
// it from the cluster, as the in-process engine reads its own.
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/driver/interleave.h"
#include "bench/driver/merge_on_read_baseline.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "celebrity-post";
constexpr EntityId kCelebrity = 1;
constexpr EntityId kFirstFollower = 1'000'000;
constexpr size_t kWarmupPosts = 3;
constexpr size_t kCheckedFollowers = 100;
constexpr size_t kCheckedEntries = 10;
// Calls in flight while the cluster's followers are set up (untimed).
constexpr size_t kClusterSetupThreads = 8;

Activity Post(size_t number) {
  Activity post;
  post.id = 100 + number;
  post.actor = kCelebrity;
  // One second apart: unique timestamps, the order of publishing.
  post.ts = kBenchStartTime + static_cast<Micros>(number) * kMicrosPerSecond;
  post.payload = "live now";
  return post;
}

}  // namespace

void RunCelebrityPost(RunContext& context) {
  const DriverOptions& options = context.options;
  absl::StatusOr<FeedSetup> feed = NewFeedSetup(options.timeline_cap);
  if (!feed.ok()) {
    context.answers.Fail(kScenario, kFeedcore, feed.status());
    return;
  }
  FeedEngine& engine = *feed->engine;
  StdMapBaseline std_map(NewBaselineOptions(feed->clock, options.timeline_cap));
  MergeOnReadBaseline merge(
      NewBaselineOptions(feed->clock, options.timeline_cap));
  std::unique_ptr<RedisClient> redis_client = ConnectRedis(context, kScenario);
  std::optional<RedisTimelines> redis;
  if (redis_client != nullptr) {
    redis.emplace(*redis_client, options.timeline_cap, options.redis_pipeline);
  }
  std::unique_ptr<ClusterFeed> cluster = OpenClusterFeed(
      context, kScenario, NewEngineOptions(feed->clock, options.timeline_cap));

  std::vector<EntityId> followers(options.followers);
  FollowOptions no_backfill;
  no_backfill.backfill = 0;
  for (size_t i = 0; i < followers.size(); ++i) {
    followers[i] = kFirstFollower + i;
    if (absl::Status s =
            engine.Follow(followers[i], kCelebrity, no_backfill).status();
        !s.ok()) {
      context.answers.Fail(kScenario, kFeedcore, s);
      return;
    }
    merge.Follow(followers[i], kCelebrity);
    if (i % 4096 == 0) {
      context.progress.Update(kScenario, "following", i, followers.size());
    }
  }
  if (cluster != nullptr) {
    absl::Status s =
        RunConcurrently(context, kScenario, "following on Redis Cluster",
                        followers.size(), kClusterSetupThreads, [&](size_t i) {
                          return cluster->engine()
                              .Follow(followers[i], kCelebrity, no_backfill)
                              .status();
                        });
    if (!s.ok()) {
      context.answers.Fail(kScenario, kFeedcoreCluster, s);
      cluster.reset();
    }
  }

  auto publish_to_std_map = [&](const Activity& post) {
    const TimelineEntry entry{post.ts, post.id, post.actor};
    for (const EntityId follower : followers) std_map.Insert(follower, entry);
  };
  auto publish_on = [&](FeedEngine& on, const Activity& post) -> absl::Status {
    absl::StatusOr<PublishResult> result = on.Publish(post);
    if (!result.ok()) return result.status();
    if (result->fanned_out != followers.size()) {
      return absl::InternalError(absl::StrCat(
          "fanned out to ", result->fanned_out, " of ", followers.size()));
    }
    return absl::OkStatus();
  };
  auto publish_to_feedcore = [&](const Activity& post) {
    return publish_on(engine, post);
  };
  auto publish_to_cluster = [&](const Activity& post) {
    return publish_on(cluster->engine(), post);
  };

  // Warm-up posts, untimed.
  for (size_t n = 0; n < kWarmupPosts; ++n) {
    const Activity post = Post(n);
    if (absl::Status s = publish_to_feedcore(post); !s.ok()) {
      context.answers.Fail(kScenario, kFeedcore, s);
      return;
    }
    if (cluster != nullptr) {
      if (absl::Status s = publish_to_cluster(post); !s.ok()) {
        context.answers.Fail(kScenario, kFeedcoreCluster, s);
        cluster.reset();
      }
    }
    publish_to_std_map(post);
    merge.Publish({post.ts, post.id, post.actor});
    if (redis.has_value()) {
      if (absl::Status s = redis->Publish(post, followers); !s.ok()) {
        context.answers.Fail(kScenario, kRedis, s);
        redis.reset();
      }
    }
  }

  auto timed = [](auto&& publish) {
    return [publish](size_t round, std::vector<double>& samples) {
      const Activity post = Post(kWarmupPosts + round);
      const auto start = Stopwatch::now();
      absl::Status status = publish(post);
      samples.push_back(MicrosSince(start) / 1000.0);
      return status;
    };
  };
  std::vector<SystemUnderTest> systems;
  systems.push_back({kFeedcore, timed(publish_to_feedcore), {}, false});
  if (cluster != nullptr) {
    systems.push_back({kFeedcoreCluster, timed(publish_to_cluster), {}, false});
  }
  if (redis.has_value()) {
    systems.push_back({kRedis,
                       timed([&](const Activity& post) {
                         return redis->Publish(post, followers);
                       }),
                       {},
                       false});
  }
  systems.push_back({kStdMapMutex,
                     timed([&](const Activity& post) {
                       publish_to_std_map(post);
                       return absl::OkStatus();
                     }),
                     {},
                     false});
  systems.push_back({kMergeOnRead,
                     timed([&](const Activity& post) {
                       merge.Publish({post.ts, post.id, post.actor});
                       return absl::OkStatus();
                     }),
                     {},
                     false});
  // The servers' CPU time over the timed publishes: what one delivery
  // costs Redis, apart from how the machine's cores were shared.
  std::optional<double> cluster_cpu;
  std::optional<double> redis_cpu;
  if (cluster != nullptr) {
    if (absl::StatusOr<double> s = cluster->MastersCpuSeconds(); s.ok()) {
      cluster_cpu = *s;
    }
  }
  if (redis.has_value()) {
    if (absl::StatusOr<double> s = RedisCpuSeconds(*redis_client); s.ok()) {
      redis_cpu = *s;
    }
  }
  RunInterleaved(context, kScenario, "publishing", options.celebrity_rounds,
                 systems);
  const double deliveries =
      static_cast<double>(options.celebrity_rounds * followers.size());
  auto note_cpu = [&](std::optional<double> before,
                      absl::StatusOr<double> after, std::string_view system) {
    if (!before.has_value() || !after.ok()) return;
    context.report.Note(absl::StrFormat(
        "celebrity-post: %s used %.2f us of server CPU per delivery over the "
        "timed publishes",
        system, (*after - *before) * 1e6 / deliveries));
  };
  if (cluster != nullptr) {
    note_cpu(cluster_cpu, cluster->MastersCpuSeconds(),
             "feedcore_redis_cluster (its masters together)");
  }
  if (redis.has_value()) {
    note_cpu(redis_cpu, RedisCpuSeconds(*redis_client), kRedis);
  }
  for (const SystemUnderTest& system : systems) {
    // Failed already, and reported: its timelines are not compared.
    if (system.name == kFeedcoreCluster && system.failed) cluster.reset();
  }

  // Every system must show the same newest entries to the same followers:
  // the first and last follower and a random sample between.
  std::mt19937_64 rng(options.seed);
  std::vector<EntityId> checked = {followers.front(), followers.back()};
  for (size_t i = 0; i < kCheckedFollowers; ++i) {
    checked.push_back(followers[rng() % followers.size()]);
  }
  ReadOptions read;
  read.limit = kCheckedEntries;
  for (const EntityId follower : checked) {
    absl::StatusOr<Page> page = engine.ReadTimeline(follower, read);
    if (!page.ok()) {
      context.answers.Fail(kScenario, kFeedcore, page.status());
      break;
    }
    const std::vector<int64_t> expected = PageIds(*page);
    const std::string question = absl::StrCat("newest entries of ", follower);
    context.answers.Check(
        kScenario, question, kStdMapMutex, expected,
        PageIds(std_map.ReadPage(follower, std::nullopt, kCheckedEntries)));
    context.answers.Check(
        kScenario, question, kMergeOnRead, expected,
        PageIds(merge.Read(follower, std::nullopt, kCheckedEntries)));
    if (cluster != nullptr) {
      absl::StatusOr<Page> cluster_page =
          cluster->engine().ReadTimeline(follower, read);
      if (!cluster_page.ok()) {
        context.answers.Fail(kScenario, kFeedcoreCluster,
                             cluster_page.status());
        cluster.reset();
      } else {
        context.answers.Check(kScenario, question, kFeedcoreCluster, expected,
                              PageIds(*cluster_page));
      }
    }
    if (redis.has_value()) {
      std::optional<Micros> next;
      absl::StatusOr<std::vector<int64_t>> ids =
          redis->ReadPage(follower, std::nullopt, kCheckedEntries, &next);
      if (!ids.ok()) {
        context.answers.Fail(kScenario, kRedis, ids.status());
        break;
      }
      context.answers.Check(kScenario, question, kRedis, expected, *ids);
    }
  }

  AddFigures(context, kScenario,
             absl::StrCat("publish to ", followers.size(), " followers"), "ms",
             systems, /*redis_target=*/15.0);
}

}  // namespace feedcore::bench
