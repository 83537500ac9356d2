// timeline-read: a reader follows `followees` actors, each of whom posted
// `posts_per_followee` times (interleaved in time), and pages through its
// timeline newest first, `page_size` entries a page, passing the previous
// page's position back. The figure is the time of one page. Every system
// returns the same pages: the newest `timeline_cap` entries, which is all a
// capped timeline holds (the merge-on-read baseline stops there too).
// feedcore on Redis Cluster pages with the same calls as feedcore in
// process: one read script on the reader's node per page.
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/driver/interleave.h"
#include "bench/driver/merge_on_read_baseline.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "timeline-read";
constexpr EntityId kReader = 7;
constexpr EntityId kFirstActor = 10'000;
// Calls in flight while the cluster's posts are published (untimed).
constexpr size_t kClusterSetupThreads = 8;

// One pass through the timeline: the ids of every page, in order.
using Pages = std::vector<std::vector<int64_t>>;

}  // namespace

void RunTimelineRead(RunContext& context) {
  const DriverOptions& options = context.options;
  const size_t pages_per_pass =
      (options.timeline_cap + options.page_size - 1) / options.page_size;
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

  for (size_t a = 0; a < options.followees; ++a) {
    if (absl::Status s = engine.Follow(kReader, kFirstActor + a).status();
        !s.ok()) {
      context.answers.Fail(kScenario, kFeedcore, s);
      return;
    }
    merge.Follow(kReader, kFirstActor + a);
    if (cluster != nullptr) {
      if (absl::Status s =
              cluster->engine().Follow(kReader, kFirstActor + a).status();
          !s.ok()) {
        context.answers.Fail(kScenario, kFeedcoreCluster, s);
        cluster.reset();
      }
    }
  }
  const size_t total = options.followees * options.posts_per_followee;
  std::vector<Activity> posts;
  posts.reserve(total);
  const absl::Status posted = PostRoundRobin(
      kFirstActor, options.followees, options.posts_per_followee, options.seed,
      [&](const Activity& post) -> absl::Status {
        if (absl::Status s = engine.Publish(post).status(); !s.ok()) return s;
        if (cluster != nullptr) posts.push_back(post);
        const TimelineEntry entry{post.ts, post.id, post.actor};
        std_map.Insert(kReader, entry);
        merge.Publish(entry);
        if (redis.has_value()) {
          if (absl::Status s = redis->QueueDelivery(kReader, post.ts, post.id);
              !s.ok()) {
            context.answers.Fail(kScenario, kRedis, s);
            redis.reset();
          }
        }
        if (post.id % 1024 == 0) {
          context.progress.Update(kScenario, "publishing", post.id, total);
        }
        return absl::OkStatus();
      });
  if (!posted.ok()) {
    context.answers.Fail(kScenario, kFeedcore, posted);
    return;
  }
  if (redis.has_value()) {
    if (absl::Status s = redis->Flush(); !s.ok()) {
      context.answers.Fail(kScenario, kRedis, s);
      redis.reset();
    }
  }
  // Out of order across threads, which leaves the same timeline: a capped
  // timeline keeps the newest entries whatever order they came in.
  if (cluster != nullptr) {
    absl::Status s = RunConcurrently(
        context, kScenario, "publishing on Redis Cluster", posts.size(),
        kClusterSetupThreads,
        [&](size_t i) { return cluster->engine().Publish(posts[i]).status(); });
    if (!s.ok()) {
      context.answers.Fail(kScenario, kFeedcoreCluster, s);
      cluster.reset();
    }
  }

  // Each system's pages of the last pass, compared after the runs.
  Pages feedcore_pages, cluster_pages, redis_pages, std_map_pages, merge_pages;
  // `read` keeps its result (and status) in the caller's variables, which
  // are checked after the clock stopped.
  auto timed_page = [](std::vector<double>& samples, auto&& read) {
    const auto start = Stopwatch::now();
    read();
    samples.push_back(MicrosSince(start));
  };

  auto feedcore_pass = [&](FeedEngine& on, Pages& pages,
                           std::vector<double>& samples) -> absl::Status {
    pages.assign(pages_per_pass, {});
    ReadOptions read;
    read.limit = options.page_size;
    for (size_t p = 0; p < pages_per_pass; ++p) {
      absl::StatusOr<Page> page;
      timed_page(samples, [&] { page = on.ReadTimeline(kReader, read); });
      if (!page.ok()) return page.status();
      pages[p] = PageIds(*page);
      read.cursor = std::move(page->next_cursor);
    }
    return absl::OkStatus();
  };

  std::vector<SystemUnderTest> systems;
  systems.push_back({kFeedcore,
                     [&](size_t, std::vector<double>& samples) {
                       return feedcore_pass(engine, feedcore_pages, samples);
                     },
                     {},
                     false});
  if (cluster != nullptr) {
    systems.push_back({kFeedcoreCluster,
                       [&](size_t, std::vector<double>& samples) {
                         return feedcore_pass(cluster->engine(), cluster_pages,
                                              samples);
                       },
                       {},
                       false});
  }
  if (redis.has_value()) {
    systems.push_back(
        {kRedis,
         [&](size_t, std::vector<double>& samples) -> absl::Status {
           redis_pages.assign(pages_per_pass, {});
           std::optional<Micros> before;
           for (size_t p = 0; p < pages_per_pass; ++p) {
             absl::StatusOr<std::vector<int64_t>> ids;
             timed_page(samples, [&] {
               ids =
                   redis->ReadPage(kReader, before, options.page_size, &before);
             });
             if (!ids.ok()) return ids.status();
             redis_pages[p] = *std::move(ids);
           }
           return absl::OkStatus();
         },
         {},
         false});
  }
  systems.push_back({kStdMapMutex,
                     [&](size_t, std::vector<double>& samples) {
                       std_map_pages.assign(pages_per_pass, {});
                       std::optional<BaselineKey> after;
                       for (size_t p = 0; p < pages_per_pass; ++p) {
                         BaselinePage page;
                         timed_page(samples, [&] {
                           page = std_map.ReadPage(kReader, after,
                                                   options.page_size);
                         });
                         std_map_pages[p] = PageIds(page);
                         after = page.next;
                       }
                       return absl::OkStatus();
                     },
                     {},
                     false});
  systems.push_back({kMergeOnRead,
                     [&](size_t, std::vector<double>& samples) {
                       merge_pages.assign(pages_per_pass, {});
                       std::optional<BaselineKey> after;
                       for (size_t p = 0; p < pages_per_pass; ++p) {
                         BaselinePage page;
                         timed_page(samples, [&] {
                           page = merge.Read(kReader, after, options.page_size);
                         });
                         merge_pages[p] = PageIds(page);
                         after = page.next;
                       }
                       return absl::OkStatus();
                     },
                     {},
                     false});

  // Pages are compared after every pass, outside the timed reads.
  const size_t passes = options.read_passes;
  for (size_t pass = 0; pass < passes; ++pass) {
    context.progress.Update(kScenario, "paging", pass, passes);
    std::vector<SystemUnderTest*> order;
    for (size_t k = 0; k < systems.size(); ++k) {
      order.push_back(&systems[(pass + k) % systems.size()]);
    }
    for (SystemUnderTest* system : order) {
      if (system->failed) continue;
      if (absl::Status s = system->run(pass, system->samples); !s.ok()) {
        context.progress.Clear();
        context.answers.Fail(kScenario, system->name, s);
        system->failed = true;
      }
    }
    if (pass == 0 || pass + 1 == passes) {
      for (size_t p = 0; p < pages_per_pass; ++p) {
        const std::string question = absl::StrCat("page ", p + 1);
        if (feedcore_pages[p].size() != options.page_size &&
            p + 1 < pages_per_pass) {
          context.answers.Fail(
              kScenario, kFeedcore,
              absl::InternalError(absl::StrCat("short ", question)));
        }
        context.answers.Check(kScenario, question, kStdMapMutex,
                              feedcore_pages[p], std_map_pages[p]);
        context.answers.Check(kScenario, question, kMergeOnRead,
                              feedcore_pages[p], merge_pages[p]);
        if (cluster != nullptr && !cluster_pages.empty()) {
          context.answers.Check(kScenario, question, kFeedcoreCluster,
                                feedcore_pages[p], cluster_pages[p]);
        }
        if (redis.has_value() && !redis_pages.empty()) {
          context.answers.Check(kScenario, question, kRedis, feedcore_pages[p],
                                redis_pages[p]);
        }
      }
    }
  }
  context.progress.Clear();

  AddFigures(context, kScenario,
             absl::StrCat(options.page_size, "-entry page, ", options.followees,
                          " followees"),
             "us", systems, /*redis_target=*/20.0);
}

}  // namespace feedcore::bench
