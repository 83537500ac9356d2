// ranked-read: what counters and ranked reads cost, in process and on the
// Redis Cluster backend, next to a plain timeline page of the same reader.
//
// A reader follows `followees` actors whose posts, one minute apart, fill
// its timeline to `timeline_cap` entries (about 17 hours of them at the
// default cap, so that age matters to the score). Every third post is
// given counters with IncrementCounter (1..50 on each of the four, drawn
// from the seed), so that the ranking mixes popularity and age. The engine
// clock stands one minute after the newest post for the whole run.
//
// Each round, on each system: IncrementCounter (delta 1, counter round % 4,
// on a different kept post each round), GetCounters of another kept post,
// the first page of 20 of ReadRanked with a window of 50, 200 and 1,000
// entries (the fixed kFormula), and the first page of 20 of ReadTimeline.
// In process a ranked page looks up `window` counters under the shard
// locks and sorts partially; on the cluster it reads the window with the
// timeline script and its counters in one pipeline, and ranks on the
// client. Redis is not compared: it has no ranked read of its own.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/driver/cluster_feed.h"
#include "bench/driver/interleave.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/stats.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "ranked-read";
constexpr EntityId kReader = 7;
constexpr EntityId kFirstActor = 10'000;
constexpr size_t kPageSize = 20;
constexpr Micros kPostSpacing = kMicrosPerMinute;
// One post in kCountedEvery gets counters in the set-up.
constexpr size_t kCountedEvery = 3;
constexpr int64_t kMaxSetupCount = 50;
constexpr size_t kClusterSetupThreads = 8;

// Fixed, and not the default, so that every weight plays a part.
constexpr RankFormula kFormula{
    .base = 1,
    .weights = {1, 2, 3, 0.5},
    .gravity = 1.5,
    .age_offset_hours = 2,
};

enum Metric : size_t {
  kIncrement,
  kGetCounters,
  kRanked50,
  kRanked200,
  kRanked1000,
  kTimelineFirst,
  kMetrics,
};
constexpr const char* kMetricNames[kMetrics] = {
    "IncrementCounter",         "GetCounters",
    "ReadRanked, window 50",    "ReadRanked, window 200",
    "ReadRanked, window 1,000", "ReadTimeline, first page",
};
constexpr size_t kWindows[kMetrics] = {0, 0, 50, 200, 1000, 0};

// One system: its engine, its samples per metric and the answers of its
// latest call of each.
struct System {
  System(std::string system, FeedEngine& on)
      : name(std::move(system)), engine(&on) {}

  std::string name;
  FeedEngine* engine;
  std::vector<std::vector<double>> samples =
      std::vector<std::vector<double>>(kMetrics);
  std::vector<std::vector<int64_t>> answers =
      std::vector<std::vector<int64_t>>(kMetrics);
  bool failed = false;
};

std::vector<int64_t> CountersAnswer(const ActivityCounters& counters) {
  return std::vector<int64_t>(counters.begin(), counters.end());
}

std::vector<int64_t> RankedIds(const RankedPage& page) {
  std::vector<int64_t> ids;
  ids.reserve(page.entries.size());
  for (const RankedEntry& e : page.entries) {
    ids.push_back(static_cast<int64_t>(e.entry.activity_id));
  }
  return ids;
}

// One timed call of `metric` on `system`; the answer is kept.
// Windows are capped at the timeline's `cap`, the largest one allowed.
absl::Status RunMetric(System& system, Metric metric, size_t round,
                       const std::vector<ActivityId>& kept, size_t cap) {
  FeedEngine& engine = *system.engine;
  // Both backends have the facet.
  RankedFeeds& ranked = *engine.ranked();
  std::vector<double>& samples = system.samples[metric];
  std::vector<int64_t>& answer = system.answers[metric];
  switch (metric) {
    case kIncrement:
    case kGetCounters: {
      // Different posts for the two, walking the kept ones in strides
      // that visit new and old posts alike.
      const size_t at =
          (round * 7919 + (metric == kGetCounters ? 1 : 0)) % kept.size();
      const auto start = Stopwatch::now();
      absl::StatusOr<ActivityCounters> counters =
          metric == kIncrement ? ranked.IncrementCounter(
                                     kept[at], round % kActivityCounterCount, 1)
                               : ranked.GetCounters(kept[at]);
      samples.push_back(MicrosSince(start));
      if (!counters.ok()) return counters.status();
      answer = CountersAnswer(*counters);
      return absl::OkStatus();
    }
    case kRanked50:
    case kRanked200:
    case kRanked1000: {
      RankedReadOptions read;
      read.limit = kPageSize;
      read.window = std::min(kWindows[metric], cap);
      read.formula = kFormula;
      const auto start = Stopwatch::now();
      absl::StatusOr<RankedPage> page = ranked.ReadRanked(kReader, read);
      samples.push_back(MicrosSince(start));
      if (!page.ok()) return page.status();
      answer = RankedIds(*page);
      return absl::OkStatus();
    }
    case kTimelineFirst: {
      ReadOptions read;
      read.limit = kPageSize;
      const auto start = Stopwatch::now();
      absl::StatusOr<Page> page = engine.ReadTimeline(kReader, read);
      samples.push_back(MicrosSince(start));
      if (!page.ok()) return page.status();
      answer = PageIds(*page);
      return absl::OkStatus();
    }
    case kMetrics:
      break;
  }
  return absl::InternalError("unknown metric");
}

double Median(const System& system, Metric metric) {
  return Summarize(system.samples[metric]).median;
}

}  // namespace

void RunRankedRead(RunContext& context) {
  const DriverOptions& options = context.options;
  auto clock = std::make_shared<ManualClock>(kBenchStartTime);
  const EngineOptions engine_options =
      NewEngineOptions(clock, options.timeline_cap);
  absl::StatusOr<std::unique_ptr<FeedEngine>> created =
      FeedEngine::Create(engine_options);
  if (!created.ok()) {
    context.answers.Fail(kScenario, kFeedcore, created.status());
    return;
  }
  FeedEngine& engine = **created;
  std::unique_ptr<ClusterFeed> cluster =
      OpenClusterFeed(context, kScenario, engine_options);
  auto fail_cluster = [&](const absl::Status& status) {
    context.answers.Fail(kScenario, kFeedcoreCluster, status);
    cluster.reset();
  };

  // --- The reader's timeline: just over timeline_cap posts ---
  const FollowOutcome followed =
      FollowActors(engine, cluster != nullptr ? &cluster->engine() : nullptr,
                   kReader, kFirstActor, options.followees);
  if (!followed.in_process.ok()) {
    context.answers.Fail(kScenario, kFeedcore, followed.in_process);
    return;
  }
  if (!followed.cluster.ok()) fail_cluster(followed.cluster);
  const size_t rounds_of_posts = options.timeline_cap / options.followees + 1;
  const size_t total = rounds_of_posts * options.followees;
  std::vector<Activity> posts;
  posts.reserve(total);
  // The newest post is dated kBenchStartTime; ids (from 1) and dates rise
  // together.
  const absl::Status posted = PostRoundRobin(
      kFirstActor, options.followees, rounds_of_posts, options.seed,
      [&](const Activity& drawn) -> absl::Status {
        Activity post = drawn;
        post.ts = kBenchStartTime -
                  static_cast<Micros>(total - post.id) * kPostSpacing;
        if (absl::Status s = engine.Publish(post).status(); !s.ok()) return s;
        posts.push_back(std::move(post));
        return absl::OkStatus();
      });
  if (!posted.ok()) {
    context.answers.Fail(kScenario, kFeedcore, posted);
    return;
  }
  if (cluster != nullptr) {
    absl::Status s = RunConcurrently(
        context, kScenario, "publishing on Redis Cluster", posts.size(),
        kClusterSetupThreads,
        [&](size_t i) { return cluster->engine().Publish(posts[i]).status(); });
    if (!s.ok()) fail_cluster(s);
  }

  // --- Counters: every kCountedEvery-th post, drawn from the seed ---
  struct Increment {
    ActivityId id;
    size_t counter;
    int64_t delta;
  };
  std::vector<Increment> increments;
  std::mt19937_64 rng(options.seed + 2);
  for (size_t i = 0; i < posts.size(); i += kCountedEvery) {
    for (size_t c = 0; c < kActivityCounterCount; ++c) {
      const int64_t delta = 1 + static_cast<int64_t>(rng() % kMaxSetupCount);
      increments.push_back({posts[i].id, c, delta});
    }
  }
  for (const Increment& inc : increments) {
    if (absl::Status s = engine.ranked()
                             ->IncrementCounter(inc.id, inc.counter, inc.delta)
                             .status();
        !s.ok()) {
      context.answers.Fail(kScenario, kFeedcore, s);
      return;
    }
  }
  // Additions commute: any order leaves the same counters.
  if (cluster != nullptr) {
    absl::Status s =
        RunConcurrently(context, kScenario, "counting on Redis Cluster",
                        increments.size(), kClusterSetupThreads, [&](size_t i) {
                          const Increment& inc = increments[i];
                          return cluster->engine()
                              .ranked()
                              ->IncrementCounter(inc.id, inc.counter, inc.delta)
                              .status();
                        });
    if (!s.ok()) fail_cluster(s);
  }
  clock->Advance(kPostSpacing);

  // The posts the timeline keeps: the newest timeline_cap.
  std::vector<ActivityId> kept;
  for (size_t i = posts.size() - std::min(posts.size(), options.timeline_cap);
       i < posts.size(); ++i) {
    kept.push_back(posts[i].id);
  }

  // --- The rounds ---
  std::vector<System> systems;
  systems.emplace_back(kFeedcore, engine);
  if (cluster != nullptr)
    systems.emplace_back(kFeedcoreCluster, cluster->engine());
  auto compare = [&](const char* when) {
    const System& base = systems.front();
    if (base.failed) return;
    for (size_t s = 1; s < systems.size(); ++s) {
      if (systems[s].failed) continue;
      for (size_t m = 0; m < kMetrics; ++m) {
        context.answers.Check(
            kScenario, absl::StrCat(kMetricNames[m], ", ", when),
            systems[s].name, base.answers[m], systems[s].answers[m]);
      }
    }
  };
  const size_t rounds = options.ranked_rounds;
  for (size_t round = 0; round < rounds; ++round) {
    context.progress.Update(kScenario, "reading", round, rounds);
    for (size_t k = 0; k < systems.size(); ++k) {
      System& system = systems[(round + k) % systems.size()];
      // The order of the calls turns by one each round, the same for
      // every system, so that no call always follows the same one and
      // every system sees the same counters at each call.
      for (size_t u = 0; u < kMetrics && !system.failed; ++u) {
        const auto metric = static_cast<Metric>((round + u) % kMetrics);
        if (absl::Status s =
                RunMetric(system, metric, round, kept, options.timeline_cap);
            !s.ok()) {
          context.progress.Clear();
          context.answers.Fail(
              kScenario, system.name,
              absl::Status(s.code(), absl::StrCat(kMetricNames[metric], ": ",
                                                  s.message())));
          system.failed = true;
        }
      }
    }
    if (round == 0 || round + 1 == rounds) {
      compare(round == 0 ? "first round" : "last round");
    }
  }
  context.progress.Clear();

  // The ranking must be one: full pages, and not the timeline's order.
  const System& in_process = systems.front();
  if (!in_process.failed) {
    for (const Metric m : {kRanked50, kRanked200, kRanked1000}) {
      if (in_process.answers[m].size() != kPageSize) {
        context.answers.Fail(
            kScenario, kFeedcore,
            absl::InternalError(absl::StrCat(kMetricNames[m], ": a page of ",
                                             in_process.answers[m].size())));
      }
    }
    if (in_process.answers[kRanked1000] == in_process.answers[kTimelineFirst]) {
      context.answers.Fail(
          kScenario, kFeedcore,
          absl::InternalError("the ranked page is the timeline's first page"));
    }
  }

  // --- Figures ---
  for (size_t m = 0; m < kMetrics; ++m) {
    std::vector<SystemUnderTest> measured;
    for (const System& system : systems) {
      measured.push_back({system.name, {}, system.samples[m], system.failed});
    }
    AddFigures(context, kScenario, kMetricNames[m], "us", measured);
  }
  context.report.Note(absl::StrFormat(
      "%s: pages of %zu; the reader's timeline holds %zu entries from %zu "
      "followees, one minute apart, %zu of them with counters; %zu rounds",
      kScenario, kPageSize, kept.size(), options.followees,
      increments.size() / kActivityCounterCount, rounds));
  for (const System& system : systems) {
    if (system.failed) continue;
    context.report.Note(absl::StrFormat(
        "%s: %s: ReadRanked window 1,000 / ReadTimeline first page %.1fx; "
        "%.2f us per windowed entry (window 1,000 less window 50, / 950)",
        kScenario, system.name,
        Median(system, kRanked1000) / Median(system, kTimelineFirst),
        (Median(system, kRanked1000) - Median(system, kRanked50)) / 950));
  }
}

}  // namespace feedcore::bench
