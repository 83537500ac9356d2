// Benchmarks of the social layer: the access patterns of the live-stream
// timeline (DESIGN.md), each next to a baseline measured in the same run.
//
//   BM_CelebrityPost/threads:<n>      one actor with 210,000 followers
//                                     publishes; time until Publish returns
//                                     (synchronous: every follower's
//                                     timeline has it). <n> fan-out worker
//                                     threads besides the publisher.
//   BM_CelebrityPostBareLoop          the floor: for each follower, one hash
//                                     probe and one append to a vector, no
//                                     skiplist, no locks, no expiry.
//   BM_FollowingRead/<mode>           a reader following 300 actors reads a
//                                     50-entry page at a cursor. <mode>:
//                                     `fanout_on_write` (its materialized
//                                     timeline) or `merge_on_read` (every
//                                     followee hybrid: the engine merges 300
//                                     own feeds, as the old read-time query
//                                     `WHERE actor IN (...) ORDER BY ts DESC
//                                     LIMIT 50` did).
//   BM_MixedFeed/<hybrid>/threads:<n> 1,000,000 users with power-law
//                                     follower counts; 90% timeline reads
//                                     (20 entries), 10% publishes, on 1 and
//                                     2 threads, hybrid fan-out off (0) or
//                                     at 10,000 followers.
//   BM_FollowersPage/<depth>          a page of 1,000 followers of an
//                                     entity with 1,000,000, read at a
//                                     cursor <depth> pages into the list:
//                                     each page is a seek, so the last page
//                                     (depth 999) costs what the first does.
//   BM_UnfollowOfMillion              one follower of the million unfollows
//                                     and follows again.
//
// Every engine runs without a sweeper thread and reads a ManualClock. The
// random choices come from fixed-seed generators drawn before the timed
// loops. By default each benchmark reports the aggregates of 5 repetitions;
// `--benchmark_*` flags override that.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "bench/benchmark_main.h"
#include "feedcore/feedcore.h"

namespace feedcore::bench {
namespace {

constexpr Micros kStart = 1'700'000'000LL * kMicrosPerSecond;

std::unique_ptr<InProcessFeedEngine> NewEngine(std::shared_ptr<ManualClock> clock,
                                      EngineOptions options) {
  options.clock = std::move(clock);
  options.sweep_interval = 0;
  absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> engine =
      FeedEngine::Create(std::move(options));
  if (!engine.ok()) {
    std::fprintf(stderr, "FeedEngine::Create: %s\n",
                 engine.status().ToString().c_str());
    std::abort();
  }
  return *std::move(engine);
}

void Require(const absl::Status& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
    std::abort();
  }
}

// ---------------------------------------------------------------------------
// The OPENREC write spike

constexpr size_t kCelebrityFollowers = 210'000;
constexpr EntityId kCelebrity = 1;
constexpr EntityId kFirstFollower = 1'000'000;

void BM_CelebrityPost(benchmark::State& state) {
  const size_t threads = static_cast<size_t>(state.range(0));
  auto clock = std::make_shared<ManualClock>(kStart);
  EngineOptions options;
  options.fanout_threads = threads;
  std::unique_ptr<InProcessFeedEngine> engine = NewEngine(clock, options);
  FollowOptions no_backfill;
  no_backfill.backfill = 0;
  for (size_t i = 0; i < kCelebrityFollowers; ++i) {
    Require(
        engine->Follow(kFirstFollower + i, kCelebrity, no_backfill).status(),
        "Follow");
  }
  // Every follower already holds a few entries, as in a live feed.
  for (ActivityId id = 1; id <= 3; ++id) {
    Activity warmup;
    warmup.id = id;
    warmup.actor = kCelebrity;
    warmup.ts = clock->Now();
    Require(engine->Publish(warmup).status(), "Publish");
    clock->Advance(kMicrosPerSecond);
  }
  ActivityId next = 100;
  for (auto _ : state) {
    Activity activity;
    activity.id = next++;
    activity.actor = kCelebrity;
    activity.ts = clock->Now();
    activity.payload = "live now";
    absl::StatusOr<PublishResult> result = engine->Publish(activity);
    if (!result.ok() || result->fanned_out != kCelebrityFollowers) {
      state.SkipWithError("publish did not reach every follower");
      break;
    }
    clock->Advance(kMicrosPerSecond);
  }
  state.counters["followers_per_second"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kCelebrityFollowers),
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CelebrityPost)
    ->ArgName("threads")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(20);

// The floor the issue quotes: one hash probe and one append per follower.
void BM_CelebrityPostBareLoop(benchmark::State& state) {
  struct Entry {
    Micros ts;
    ActivityId id;
    EntityId actor;
  };
  absl::flat_hash_map<EntityId, std::vector<Entry>> timelines;
  std::vector<EntityId> followers;
  for (size_t i = 0; i < kCelebrityFollowers; ++i) {
    followers.push_back(kFirstFollower + i);
    timelines[kFirstFollower + i].reserve(32);
  }
  Micros ts = kStart;
  ActivityId next = 100;
  for (auto _ : state) {
    const Entry entry{ts++, next++, kCelebrity};
    for (const EntityId follower : followers) {
      timelines[follower].push_back(entry);
    }
    benchmark::ClobberMemory();
  }
  state.counters["followers_per_second"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kCelebrityFollowers),
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CelebrityPostBareLoop)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(20);

// ---------------------------------------------------------------------------
// The OPENREC read: a reader following 300 actors

constexpr EntityId kReader = 7;
constexpr size_t kFollowees = 300;
constexpr size_t kPostsPerFollowee = 100;
constexpr size_t kPageSize = 50;

struct FollowingReadFixture {
  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<InProcessFeedEngine> engine;
  std::vector<std::string> cursors;  // positions to read a page at
};

// mode 0: fan-out on write; mode 1: every followee merged at read time.
FollowingReadFixture MakeFollowingRead(int mode) {
  FollowingReadFixture f;
  f.clock = std::make_shared<ManualClock>(kStart);
  EngineOptions options;
  // Each followee has two followers (the reader and one other), so a
  // threshold of 1 makes every followee hybrid.
  options.hybrid_fanout_threshold = mode == 0 ? 0 : 1;
  options.fanout_threads = 0;
  f.engine = NewEngine(f.clock, options);
  for (size_t a = 0; a < kFollowees; ++a) {
    const EntityId actor = 10'000 + a;
    Require(f.engine->Follow(kReader, actor).status(), "Follow");
    Require(f.engine->Follow(9, actor).status(), "Follow");
  }
  // Posts interleave across actors in time, as in a real feed.
  std::mt19937_64 rng(42);
  ActivityId id = 1;
  for (size_t round = 0; round < kPostsPerFollowee; ++round) {
    for (size_t a = 0; a < kFollowees; ++a) {
      f.clock->Advance(1 + static_cast<Micros>(rng() % 1000));
      Activity post;
      post.id = id++;
      post.actor = 10'000 + a;
      post.ts = f.clock->Now();
      Require(f.engine->Publish(post).status(), "Publish");
    }
  }
  // Cursors of the first pages of the (capped, 1000-entry) timeline.
  ReadOptions read;
  read.limit = kPageSize;
  for (int page = 0; page < 15; ++page) {
    absl::StatusOr<Page> p = f.engine->ReadTimeline(kReader, read);
    Require(p.status(), "ReadTimeline");
    if (p->next_cursor.empty()) break;
    f.cursors.push_back(p->next_cursor);
    read.cursor = p->next_cursor;
  }
  return f;
}

void BM_FollowingRead(benchmark::State& state) {
  static FollowingReadFixture fixtures[2] = {MakeFollowingRead(0),
                                             MakeFollowingRead(1)};
  const FollowingReadFixture& f = fixtures[state.range(0)];
  ReadOptions read;
  read.limit = kPageSize;
  size_t i = 0;
  for (auto _ : state) {
    read.cursor = f.cursors[i++ % f.cursors.size()];
    absl::StatusOr<Page> page = f.engine->ReadTimeline(kReader, read);
    if (!page.ok() || page->entries.size() != kPageSize) {
      state.SkipWithError("short page");
      break;
    }
    benchmark::DoNotOptimize(page->entries.data());
  }
  state.SetLabel(state.range(0) == 0 ? "fanout_on_write" : "merge_on_read");
}
BENCHMARK(BM_FollowingRead)->ArgName("merge_on_read")->Arg(0)->Arg(1);

// ---------------------------------------------------------------------------
// Mixed workload

constexpr size_t kUsers = 1'000'000;
constexpr size_t kFolloweesPerUser = 10;

struct MixedFixture {
  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<InProcessFeedEngine> engine;
  std::atomic<ActivityId> next_id{1};
  size_t max_followers = 0;
};

// Followees drawn from a power law (Zipf, s = 1) over all users: a few
// users have tens of thousands of followers, most have a handful.
std::unique_ptr<MixedFixture> MakeMixed(size_t hybrid_threshold) {
  auto f = std::make_unique<MixedFixture>();
  f->clock = std::make_shared<ManualClock>(kStart);
  EngineOptions options;
  options.hybrid_fanout_threshold = hybrid_threshold;
  options.default_backfill = 0;
  f->engine = NewEngine(f->clock, options);
  std::vector<double> cdf(kUsers);
  double sum = 0;
  for (size_t i = 0; i < kUsers; ++i) {
    sum += 1.0 / static_cast<double>(i + 1);
    cdf[i] = sum;
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(0, sum);
  for (EntityId user = 0; user < kUsers; ++user) {
    for (size_t k = 0; k < kFolloweesPerUser; ++k) {
      const EntityId followee = static_cast<EntityId>(
          std::lower_bound(cdf.begin(), cdf.end(), uniform(rng)) - cdf.begin());
      if (followee == user) continue;
      Require(f->engine->Follow(user, followee).status(), "Follow");
    }
  }
  f->max_followers = f->engine->FollowerCount(0).value();
  return f;
}

MixedFixture& Mixed(size_t hybrid_threshold) {
  static std::mutex mu;
  static absl::flat_hash_map<size_t, std::unique_ptr<MixedFixture>> fixtures;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<MixedFixture>& f = fixtures[hybrid_threshold];
  if (f == nullptr) f = MakeMixed(hybrid_threshold);
  return *f;
}

void BM_MixedFeed(benchmark::State& state) {
  MixedFixture& f = Mixed(static_cast<size_t>(state.range(0)));
  std::mt19937_64 rng(1000 + state.thread_index());
  // Operations drawn before timing: 1 in 10 publishes (by a uniformly
  // chosen user, so celebrities publish as often as anyone), the rest
  // reads of a uniformly chosen user's first page.
  constexpr size_t kOps = 1 << 16;
  std::vector<std::pair<bool, EntityId>> ops(kOps);
  for (auto& op : ops) op = {rng() % 10 == 0, rng() % kUsers};
  ReadOptions read;
  read.limit = 20;
  size_t i = 0;
  for (auto _ : state) {
    const auto& [publish, user] = ops[i++ % kOps];
    if (publish) {
      Activity activity;
      activity.id = f.next_id.fetch_add(1, std::memory_order_relaxed);
      activity.actor = user;
      activity.ts = f.clock->Now() + static_cast<Micros>(activity.id);
      if (!f.engine->Publish(activity).ok()) {
        state.SkipWithError("publish failed");
        break;
      }
    } else {
      absl::StatusOr<Page> page = f.engine->ReadTimeline(user, read);
      benchmark::DoNotOptimize(page);
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["max_followers"] = benchmark::Counter(
      static_cast<double>(f.max_followers), benchmark::Counter::kAvgThreads);
}
BENCHMARK(BM_MixedFeed)
    ->ArgName("hybrid_threshold")
    ->Arg(0)
    ->Arg(10'000)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

// ---------------------------------------------------------------------------
// A follower list of a million

constexpr EntityId kStar = 1;
constexpr EntityId kFirstFan = 1'000;
constexpr size_t kFans = 1'000'000;
constexpr size_t kFansPage = 1'000;

// One engine for both benchmarks: following a million takes seconds.
InProcessFeedEngine& MillionFollowerEngine() {
  static InProcessFeedEngine* const engine = [] {
    EngineOptions options;
    options.shards = 16;
    options.hybrid_fanout_threshold = 10'000;
    InProcessFeedEngine* created =
        NewEngine(std::make_shared<ManualClock>(kStart), options).release();
    FollowOptions no_backfill;
    no_backfill.backfill = 0;
    for (size_t i = 0; i < kFans; ++i) {
      Require(created->Follow(kFirstFan + i, kStar, no_backfill).status(),
              "Follow");
    }
    return created;
  }();
  return *engine;
}

void BM_FollowersPage(benchmark::State& state) {
  InProcessFeedEngine& engine = MillionFollowerEngine();
  const size_t depth = static_cast<size_t>(state.range(0));
  ListOptions list;
  list.limit = kFansPage;
  for (size_t page = 0; page < depth; ++page) {
    absl::StatusOr<EntityPage> skipped = engine.Followers(kStar, list);
    Require(skipped.status(), "Followers");
    list.cursor = skipped->next_cursor;
  }
  for (auto _ : state) {
    absl::StatusOr<EntityPage> page = engine.Followers(kStar, list);
    if (!page.ok() || page->ids.size() != kFansPage) {
      state.SkipWithError("Followers did not return a full page");
      break;
    }
    benchmark::DoNotOptimize(page->ids.data());
  }
}
BENCHMARK(BM_FollowersPage)
    ->ArgName("depth")
    ->Arg(0)
    ->Arg(kFans / kFansPage / 2)
    ->Arg(kFans / kFansPage - 1);

void BM_UnfollowOfMillion(benchmark::State& state) {
  InProcessFeedEngine& engine = MillionFollowerEngine();
  FollowOptions no_backfill;
  no_backfill.backfill = 0;
  const EntityId fan = kFirstFan + kFans / 2;
  for (auto _ : state) {
    absl::StatusOr<UnfollowResult> unfollowed = engine.Unfollow(fan, kStar);
    if (!unfollowed.ok() || !unfollowed->was_following) {
      state.SkipWithError("Unfollow did not find the follower");
      break;
    }
    Require(engine.Follow(fan, kStar, no_backfill).status(), "Follow");
  }
}
BENCHMARK(BM_UnfollowOfMillion);

}  // namespace
}  // namespace feedcore::bench

int main(int argc, char** argv) {
  if (!feedcore::bench::InitializeWithDefaults(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
