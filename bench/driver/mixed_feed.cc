// mixed-feed: `users` users with power-law follower counts (workload.h);
// 90% reads of a uniformly chosen user's first page, 10% publishes by a
// uniformly chosen user (so a celebrity publishes as often as anyone), on 1
// and 2 threads. Figures: throughput, and the latency of reads and of
// publishes (a publish ends when every follower has the activity).
//
// Every system runs the same operations: the workload is split into
// rounds, and round r runs on every system (in rotating order) before
// round r + 1. Within a round thread t takes operations t, t + T, ...
// Before the timed rounds every system receives the same untimed
// publishes, so timelines are not empty.
#include <algorithm>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/driver/merge_on_read_baseline.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/timeline_systems.h"
#include "bench/driver/workload.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "mixed-feed";
constexpr size_t kRounds = 10;
constexpr size_t kCheckedUsers = 200;

struct Operation {
  bool publish = false;
  EntityId user = 0;  // the reader, or the publisher
  ActivityId id = 0;  // publishes only
  Micros ts = 0;      // publishes only; unique
};

// One system as the mixed workload drives it. `thread` selects per-thread
// state (Redis: one connection per thread).
class MixedSystem {
 public:
  virtual ~MixedSystem() = default;
  virtual absl::Status Publish(size_t thread, const Operation& op) = 0;
  virtual absl::StatusOr<std::vector<int64_t>> FirstPage(size_t thread,
                                                         EntityId user,
                                                         size_t limit) = 0;
};

class FeedcoreMixed : public MixedSystem {
 public:
  explicit FeedcoreMixed(FeedEngine& engine) : engine_(engine) {}
  absl::Status Publish(size_t, const Operation& op) override {
    Activity activity;
    activity.id = op.id;
    activity.actor = op.user;
    activity.ts = op.ts;
    return engine_.Publish(activity).status();
  }
  absl::StatusOr<std::vector<int64_t>> FirstPage(size_t, EntityId user,
                                                 size_t limit) override {
    ReadOptions read;
    read.limit = limit;
    absl::StatusOr<Page> page = engine_.ReadTimeline(user, read);
    if (!page.ok()) return page.status();
    return PageIds(*page);
  }

 private:
  FeedEngine& engine_;
};

class RedisMixed : public MixedSystem {
 public:
  RedisMixed(std::vector<std::unique_ptr<RedisClient>> clients,
             const FollowGraph& graph, const DriverOptions& options)
      : clients_(std::move(clients)), graph_(graph) {
    for (auto& client : clients_) {
      timelines_.push_back(std::make_unique<RedisTimelines>(
          *client, options.timeline_cap, options.redis_pipeline));
    }
  }
  absl::Status Publish(size_t thread, const Operation& op) override {
    Activity activity;
    activity.id = op.id;
    activity.actor = op.user;
    activity.ts = op.ts;
    return timelines_[thread]->Publish(activity, graph_.followers[op.user]);
  }
  absl::StatusOr<std::vector<int64_t>> FirstPage(size_t thread, EntityId user,
                                                 size_t limit) override {
    std::optional<Micros> next;
    return timelines_[thread]->ReadPage(user, std::nullopt, limit, &next);
  }

 private:
  std::vector<std::unique_ptr<RedisClient>> clients_;
  std::vector<std::unique_ptr<RedisTimelines>> timelines_;
  const FollowGraph& graph_;
};

class StdMapMixed : public MixedSystem {
 public:
  StdMapMixed(BaselineOptions options, const FollowGraph& graph)
      : map_(std::move(options)), graph_(graph) {}
  absl::Status Publish(size_t, const Operation& op) override {
    const TimelineEntry entry{op.ts, op.id, op.user};
    for (const EntityId follower : graph_.followers[op.user]) {
      map_.Insert(follower, entry);
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<int64_t>> FirstPage(size_t, EntityId user,
                                                 size_t limit) override {
    return PageIds(map_.ReadPage(user, std::nullopt, limit));
  }

 private:
  StdMapBaseline map_;
  const FollowGraph& graph_;
};

class MergeMixed : public MixedSystem {
 public:
  MergeMixed(BaselineOptions options, const FollowGraph& graph)
      : merge_(std::move(options)) {
    for (EntityId user = 0; user < graph.followees.size(); ++user) {
      for (const EntityId followee : graph.followees[user]) {
        merge_.Follow(user, followee);
      }
    }
  }
  absl::Status Publish(size_t, const Operation& op) override {
    merge_.Publish({op.ts, op.id, op.user});
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<int64_t>> FirstPage(size_t, EntityId user,
                                                 size_t limit) override {
    return PageIds(merge_.Read(user, std::nullopt, limit));
  }

 private:
  MergeOnReadBaseline merge_;
};

struct MixedRun {
  MixedRun(std::string name, std::unique_ptr<MixedSystem> system)
      : name(std::move(name)), system(std::move(system)) {}

  std::string name;
  std::unique_ptr<MixedSystem> system;
  bool failed = false;
  // Samples of the current thread count.
  std::vector<double> throughput, read_latency, publish_latency;
};

std::vector<Operation> MakeOperations(size_t count, size_t users,
                                      std::mt19937_64& rng, ActivityId& next_id,
                                      Micros& next_ts) {
  std::vector<Operation> ops(count);
  for (Operation& op : ops) {
    op.publish = rng() % 10 == 0;
    op.user = rng() % users;
    if (op.publish) {
      op.id = next_id++;
      op.ts = next_ts;
      next_ts += 1 + static_cast<Micros>(rng() % 1000);
    }
  }
  return ops;
}

// Runs ops[begin, end) on `threads` threads; adds one throughput sample
// and every operation's latency.
absl::Status RunRound(MixedRun& run, const std::vector<Operation>& ops,
                      size_t begin, size_t end, size_t threads,
                      size_t page_size) {
  std::vector<std::vector<double>> reads(threads), publishes(threads);
  std::vector<absl::Status> statuses(threads);
  const auto start = Stopwatch::now();
  std::vector<std::thread> workers;
  for (size_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (size_t i = begin + t; i < end; i += threads) {
        const Operation& op = ops[i];
        const auto op_start = Stopwatch::now();
        if (op.publish) {
          absl::Status status = run.system->Publish(t, op);
          publishes[t].push_back(MicrosSince(op_start));
          if (!status.ok()) {
            statuses[t] = status;
            return;
          }
        } else {
          absl::StatusOr<std::vector<int64_t>> page =
              run.system->FirstPage(t, op.user, page_size);
          reads[t].push_back(MicrosSince(op_start));
          if (!page.ok()) {
            statuses[t] = page.status();
            return;
          }
        }
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  const double seconds = MicrosSince(start) / 1e6;
  for (size_t t = 0; t < threads; ++t) {
    if (!statuses[t].ok()) return statuses[t];
    run.read_latency.insert(run.read_latency.end(), reads[t].begin(),
                            reads[t].end());
    run.publish_latency.insert(run.publish_latency.end(), publishes[t].begin(),
                               publishes[t].end());
  }
  run.throughput.push_back(static_cast<double>(end - begin) / seconds);
  return absl::OkStatus();
}

void AddMixedFigure(RunContext& context, const std::string& metric,
                    const std::string& unit, bool higher_is_better,
                    const std::string& system,
                    const std::vector<double>& samples) {
  Figure figure;
  figure.scenario = kScenario;
  figure.metric = metric;
  figure.system = system;
  figure.unit = unit;
  figure.higher_is_better = higher_is_better;
  figure.summary = Summarize(samples);
  context.report.Add(std::move(figure));
}

void CheckFirstPages(RunContext& context, std::vector<MixedRun>& runs,
                     const std::vector<EntityId>& users, size_t page_size,
                     const std::string& when) {
  for (const EntityId user : users) {
    absl::StatusOr<std::vector<int64_t>> expected =
        runs[0].system->FirstPage(0, user, page_size);
    if (!expected.ok()) {
      context.answers.Fail(kScenario, runs[0].name, expected.status());
      return;
    }
    const std::string question =
        absl::StrCat("first page of user ", user, " ", when);
    for (size_t s = 1; s < runs.size(); ++s) {
      if (runs[s].failed) continue;
      absl::StatusOr<std::vector<int64_t>> answer =
          runs[s].system->FirstPage(0, user, page_size);
      if (!answer.ok()) {
        context.answers.Fail(kScenario, runs[s].name, answer.status());
        runs[s].failed = true;
        continue;
      }
      context.answers.Check(kScenario, question, runs[s].name, *expected,
                            *answer);
    }
  }
}

}  // namespace

void RunMixedFeed(RunContext& context) {
  const DriverOptions& options = context.options;
  context.progress.Update(kScenario, "making the follow graph", 0, 1);
  const FollowGraph graph = MakePowerLawGraph(
      options.users, options.followees_per_user, options.seed);
  context.report.Note(absl::StrCat("mixed-feed: ", options.users, " users, ",
                                   graph.edges,
                                   " follow edges, most-followed user has ",
                                   graph.max_followers, " followers"));

  absl::StatusOr<FeedSetup> feed = NewFeedSetup(options.timeline_cap);
  if (!feed.ok()) {
    context.answers.Fail(kScenario, kFeedcore, feed.status());
    return;
  }
  FollowOptions no_backfill;
  no_backfill.backfill = 0;
  for (EntityId user = 0; user < options.users; ++user) {
    for (const EntityId followee : graph.followees[user]) {
      if (absl::Status s =
              feed->engine->Follow(user, followee, no_backfill).status();
          !s.ok()) {
        context.answers.Fail(kScenario, kFeedcore, s);
        return;
      }
    }
    if (user % 4096 == 0) {
      context.progress.Update(kScenario, "following", user, options.users);
    }
  }

  std::vector<MixedRun> runs;
  runs.emplace_back(kFeedcore, std::make_unique<FeedcoreMixed>(*feed->engine));
  const size_t max_threads = *std::max_element(options.mixed_threads.begin(),
                                               options.mixed_threads.end());
  if (context.redis.has_value()) {
    std::vector<std::unique_ptr<RedisClient>> clients;
    for (size_t t = 0; t < max_threads; ++t) {
      // The first connection empties the database; the others only connect.
      std::unique_ptr<RedisClient> client =
          t == 0 ? ConnectRedis(context, kScenario)
                 : [&]() -> std::unique_ptr<RedisClient> {
        auto c = RedisClient::Connect(context.redis->host, context.redis->port);
        if (!c.ok()) {
          context.answers.Fail(kScenario, kRedis, c.status());
          return nullptr;
        }
        return *std::move(c);
      }();
      if (client == nullptr) break;
      clients.push_back(std::move(client));
    }
    if (clients.size() == max_threads) {
      runs.emplace_back(kRedis, std::make_unique<RedisMixed>(std::move(clients),
                                                             graph, options));
    }
  }
  runs.emplace_back(
      kStdMapMutex,
      std::make_unique<StdMapMixed>(
          NewBaselineOptions(feed->clock, options.timeline_cap), graph));
  context.progress.Update(kScenario, "following (merge on read)", 0, 1);
  runs.emplace_back(
      kMergeOnRead,
      std::make_unique<MergeMixed>(
          NewBaselineOptions(feed->clock, options.timeline_cap), graph));

  // Untimed publishes, so that reads find entries.
  std::mt19937_64 rng(options.seed + 1);
  ActivityId next_id = 1;
  Micros next_ts = kBenchStartTime;
  const size_t prefill = options.users / 4;
  for (size_t i = 0; i < prefill; ++i) {
    Operation op;
    op.publish = true;
    op.user = rng() % options.users;
    op.id = next_id++;
    op.ts = next_ts;
    next_ts += 1 + static_cast<Micros>(rng() % 1000);
    for (MixedRun& run : runs) {
      if (run.failed) continue;
      if (absl::Status s = run.system->Publish(0, op); !s.ok()) {
        context.answers.Fail(kScenario, run.name, s);
        run.failed = true;
      }
    }
    if (i % 1024 == 0) {
      context.progress.Update(kScenario, "prefilling", i, prefill);
    }
  }

  std::vector<EntityId> checked_users;
  for (size_t i = 0; i < kCheckedUsers; ++i) {
    checked_users.push_back(rng() % options.users);
  }
  CheckFirstPages(context, runs, checked_users, options.mixed_page_size,
                  "after prefill");

  for (const size_t threads : options.mixed_threads) {
    const std::vector<Operation> ops =
        MakeOperations(options.mixed_ops, options.users, rng, next_id, next_ts);
    const std::string step = absl::StrCat(threads, " thread(s)");
    for (size_t round = 0; round < kRounds; ++round) {
      context.progress.Update(kScenario, step, round, kRounds);
      const size_t begin = ops.size() * round / kRounds;
      const size_t end = ops.size() * (round + 1) / kRounds;
      for (size_t k = 0; k < runs.size(); ++k) {
        MixedRun& run = runs[(round + k) % runs.size()];
        if (run.failed) continue;
        if (absl::Status s = RunRound(run, ops, begin, end, threads,
                                      options.mixed_page_size);
            !s.ok()) {
          context.progress.Clear();
          context.answers.Fail(kScenario, run.name, s);
          run.failed = true;
        }
      }
    }
    context.progress.Clear();
    CheckFirstPages(context, runs, checked_users, options.mixed_page_size,
                    absl::StrCat("after the ", step, " run"));
    const std::string suffix =
        absl::StrCat(", ", threads, threads == 1 ? " thread" : " threads");
    for (MixedRun& run : runs) {
      if (!run.failed) {
        AddMixedFigure(context, "throughput" + suffix, "ops/s", true, run.name,
                       run.throughput);
        AddMixedFigure(context, "read latency" + suffix, "us", false, run.name,
                       run.read_latency);
        AddMixedFigure(context, "publish latency" + suffix, "us", false,
                       run.name, run.publish_latency);
      }
      run.throughput.clear();
      run.read_latency.clear();
      run.publish_latency.clear();
    }
  }
}

}  // namespace feedcore::bench
