// inactive-readers: what EngineOptions::inactive_after saves and what it
// costs. The engine's clock is a ManualClock moved by the scenario, so who
// is inactive is decided here, never by waiting.
//
// Publish: two engines with the same graph, an actor with `followers`
// followers, each of whom holds `kPostsBeforeRelease` entries of it. Then
// `inactive_after` passes; on one engine every follower reads, on the
// other one follower in five, and both release their inactive readers.
// Each round publishes once on each engine; the figure is the time of one
// publish. The target: with 80% inactive, at most 0.3x the
// all-active publish.
//
// Memory: EngineStats of the 80%-inactive engine just before and just
// after the release.
//
// Returning reader: `returning_users` users each follow the same
// `followees` actors of `returning_posts` posts each, and so does an
// active twin of each user. The users go idle and are released, the twins
// keep reading. Each round, one returning user reads its first page
// (`page_size` entries; the rebuild of its timeline included) and so does
// its twin; both pages, and then both whole timelines, must be the same.
// The target: the returning user's first page under 1 ms.
//
// Every timed call is measured by the wall clock and by the process's CPU
// time.
#include <time.h>

#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/driver/interleave.h"
#include "bench/driver/scenario.h"
#include "bench/driver/stats.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "inactive-readers";
constexpr char kAllActive[] = "feedcore, all active";
constexpr char kMostlyInactive[] = "feedcore, 80% inactive";
constexpr char kBeforeRelease[] = "feedcore, before release";
constexpr char kAfterRelease[] = "feedcore, after release";
constexpr char kReturning[] = "feedcore, returning reader";
constexpr char kActiveTwin[] = "feedcore, active twin";

constexpr Micros kInactiveAfter = 7 * kMicrosPerDay;
// How long everyone stays away before the release: past inactive_after,
// well within the entries' default time-to-live of 30 days.
constexpr Micros kIdleTime = kInactiveAfter + kMicrosPerDay;
// One follower in this many keeps reading: 80% inactive.
constexpr size_t kActiveEvery = 5;
constexpr size_t kPostsBeforeRelease = 20;
constexpr size_t kCheckedFollowers = 100;
constexpr size_t kCheckedEntries = 50;
constexpr EntityId kCelebrity = 1;
constexpr EntityId kFirstFollower = 1'000'000;
constexpr EntityId kFirstActor = 10'000;
// Far apart, so that no size flag makes the id ranges meet.
constexpr EntityId kFirstReturning = EntityId{1} << 40;
constexpr EntityId kFirstTwin = EntityId{2} << 40;
// Report::Compare takes "times better": all-active / 80%-inactive >= 1/0.3.
constexpr double kPublishTarget = 1.0 / 0.3;
constexpr double kReturningTargetMicros = 1000;

absl::StatusOr<FeedSetup> NewInactiveReadersEngine(size_t cap) {
  FeedSetup setup;
  setup.clock = std::make_shared<ManualClock>(kBenchStartTime);
  EngineOptions options = NewEngineOptions(setup.clock, cap);
  options.inactive_after = kInactiveAfter;
  absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> engine =
      FeedEngine::Create(options);
  if (!engine.ok()) return engine.status();
  setup.engine = *std::move(engine);
  return setup;
}

// CPU time of the whole process, the fan-out workers' included. Unlike
// the wall clock it leaves out the time other programs hold the cores.
double ProcessCpuMicros() {
  timespec now;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e6 +
         static_cast<double>(now.tv_nsec) / 1e3;
}

// The same systems, for figures measured beside the wall-clock ones.
std::vector<SystemUnderTest> NamesOf(
    const std::vector<SystemUnderTest>& systems) {
  std::vector<SystemUnderTest> named;
  for (const SystemUnderTest& system : systems) {
    named.push_back({system.name, nullptr, {}, system.failed});
  }
  return named;
}

Activity CelebrityPost(size_t number, Micros ts) {
  Activity post;
  post.id = 100 + number;
  post.actor = kCelebrity;
  post.ts = ts;
  post.payload = "live now";
  return post;
}

bool IsActive(size_t follower_index) {
  return follower_index % kActiveEvery == 0;
}

EntityId Follower(size_t index) { return kFirstFollower + index; }

// Follows, posts, time passing and the reads of one engine of the publish
// comparison, up to just before its release.
absl::Status PrepareFollowers(RunContext& context, FeedSetup& feed,
                              bool everyone_reads, std::string_view step) {
  const size_t followers = context.options.followers;
  InProcessFeedEngine& engine = *feed.engine;
  FollowOptions no_backfill;
  no_backfill.backfill = 0;
  for (size_t i = 0; i < followers; ++i) {
    if (absl::Status s =
            engine.Follow(Follower(i), kCelebrity, no_backfill).status();
        !s.ok()) {
      return s;
    }
    if (i % 4096 == 0) context.progress.Update(kScenario, step, i, followers);
  }
  for (size_t n = 0; n < kPostsBeforeRelease; ++n) {
    const Activity post =
        CelebrityPost(n, kBenchStartTime + static_cast<Micros>(n));
    if (absl::Status s = engine.Publish(post).status(); !s.ok()) return s;
  }
  feed.clock->Advance(kIdleTime);
  ReadOptions read;
  read.limit = 1;
  for (size_t i = 0; i < followers; ++i) {
    if (!everyone_reads && !IsActive(i)) continue;
    if (absl::Status s = engine.ReadTimeline(Follower(i), read).status();
        !s.ok()) {
      return s;
    }
  }
  context.progress.Clear();
  return absl::OkStatus();
}

// The release must make dormant exactly the followers that did not read.
absl::Status Release(InProcessFeedEngine& engine, size_t followers,
                     size_t expected) {
  absl::StatusOr<size_t> released = engine.ReleaseInactiveReaders(followers);
  if (!released.ok()) return released.status();
  if (*released != expected) {
    return absl::InternalError(absl::StrCat(
        "released ", *released, " inactive readers, not ", expected));
  }
  return absl::OkStatus();
}

void AddMemoryFigures(RunContext& context, const EngineStats& before,
                      const EngineStats& after, size_t dormant) {
  const std::string held =
      absl::StrCat(context.options.followers, " followers holding ",
                   kPostsBeforeRelease, " entries each");
  auto add = [&](const std::string& metric, const char* system,
                 const char* unit, double value) {
    Figure figure;
    figure.scenario = kScenario;
    figure.metric = metric;
    figure.system = system;
    figure.unit = unit;
    figure.summary = Summarize({value});
    context.report.Add(std::move(figure));
  };
  const std::string bytes = absl::StrCat("bytes used, ", held);
  const std::string entries = absl::StrCat("entries, ", held);
  add(bytes, kBeforeRelease, "bytes", static_cast<double>(before.bytes_used));
  add(bytes, kAfterRelease, "bytes", static_cast<double>(after.bytes_used));
  add(entries, kBeforeRelease, "entries", static_cast<double>(before.entries));
  add(entries, kAfterRelease, "entries", static_cast<double>(after.entries));
  const double saved = static_cast<double>(before.bytes_used) -
                       static_cast<double>(after.bytes_used);
  const double per_reader = dormant == 0 ? 0 : saved / dormant;
  add("bytes saved per dormant reader", kMostlyInactive, "bytes", per_reader);
  context.report.Note(absl::StrFormat(
      "%s: releasing %d of %d followers: bytes used %d -> %d (%.0f saved, "
      "%.1f per dormant reader), entries %d -> %d",
      kScenario, dormant, context.options.followers, before.bytes_used,
      after.bytes_used, saved, per_reader, before.entries, after.entries));
}

// The newest entries of a sample of followers, active and dormant, must be
// the same on both engines; a dormant follower's read rebuilds it.
void CheckFollowerPages(RunContext& context,
                        const InProcessFeedEngine& all_active,
                        const InProcessFeedEngine& mostly_inactive) {
  const size_t followers = context.options.followers;
  std::mt19937_64 rng(context.options.seed);
  std::vector<size_t> checked = {0, followers - 1};
  if (followers > 1) checked.push_back(1);
  for (size_t i = 0; i < kCheckedFollowers; ++i) {
    checked.push_back(rng() % followers);
  }
  ReadOptions read;
  read.limit = kCheckedEntries;
  for (const size_t i : checked) {
    absl::StatusOr<Page> expected = all_active.ReadTimeline(Follower(i), read);
    if (!expected.ok()) {
      return context.answers.Fail(kScenario, kAllActive, expected.status());
    }
    absl::StatusOr<Page> answer =
        mostly_inactive.ReadTimeline(Follower(i), read);
    if (!answer.ok()) {
      return context.answers.Fail(kScenario, kMostlyInactive, answer.status());
    }
    context.answers.Check(
        kScenario,
        absl::StrCat("newest entries of ", IsActive(i) ? "active" : "dormant",
                     " follower ", Follower(i)),
        kMostlyInactive, PageIds(*expected), PageIds(*answer));
  }
}

void RunPublish(RunContext& context) {
  const DriverOptions& options = context.options;
  const size_t followers = options.followers;
  const size_t active = (followers + kActiveEvery - 1) / kActiveEvery;
  absl::StatusOr<FeedSetup> all_active =
      NewInactiveReadersEngine(options.timeline_cap);
  if (!all_active.ok()) {
    return context.answers.Fail(kScenario, kAllActive, all_active.status());
  }
  absl::StatusOr<FeedSetup> mostly_inactive =
      NewInactiveReadersEngine(options.timeline_cap);
  if (!mostly_inactive.ok()) {
    return context.answers.Fail(kScenario, kMostlyInactive,
                                mostly_inactive.status());
  }
  InProcessFeedEngine& all_engine = *all_active->engine;
  InProcessFeedEngine& mostly_engine = *mostly_inactive->engine;
  if (absl::Status s =
          PrepareFollowers(context, *all_active, /*everyone_reads=*/true,
                           "following, all active");
      !s.ok()) {
    return context.answers.Fail(kScenario, kAllActive, s);
  }
  if (absl::Status s =
          PrepareFollowers(context, *mostly_inactive,
                           /*everyone_reads=*/false, "following, 80% inactive");
      !s.ok()) {
    return context.answers.Fail(kScenario, kMostlyInactive, s);
  }
  if (absl::Status s = Release(all_engine, followers, 0); !s.ok()) {
    return context.answers.Fail(kScenario, kAllActive, s);
  }
  absl::StatusOr<EngineStats> before = mostly_engine.Stats();
  if (!before.ok()) {
    return context.answers.Fail(kScenario, kMostlyInactive, before.status());
  }
  if (absl::Status s = Release(mostly_engine, followers, followers - active);
      !s.ok()) {
    return context.answers.Fail(kScenario, kMostlyInactive, s);
  }
  absl::StatusOr<EngineStats> after = mostly_engine.Stats();
  if (!after.ok()) {
    return context.answers.Fail(kScenario, kMostlyInactive, after.status());
  }
  AddMemoryFigures(context, *before, *after, followers - active);

  // Round r publishes the same activity on both engines, newer than all
  // before it, so every publish is in timestamp order.
  const Micros first_ts = kBenchStartTime + kIdleTime;
  std::vector<double> all_active_cpu, mostly_inactive_cpu;
  auto timed = [&](InProcessFeedEngine& engine, size_t expected_fanout,
                   std::vector<double>& cpu_samples) {
    return [&engine, expected_fanout, first_ts, &cpu_samples](
               size_t round, std::vector<double>& samples) -> absl::Status {
      const Activity post = CelebrityPost(
          kPostsBeforeRelease + round, first_ts + static_cast<Micros>(round));
      const double cpu_start = ProcessCpuMicros();
      const Stopwatch::time_point start = Stopwatch::now();
      absl::StatusOr<PublishResult> result = engine.Publish(post);
      samples.push_back(MicrosSince(start) / 1000.0);
      cpu_samples.push_back((ProcessCpuMicros() - cpu_start) / 1000.0);
      if (!result.ok()) return result.status();
      if (result->fanned_out != expected_fanout) {
        return absl::InternalError(absl::StrCat(
            "fanned out to ", result->fanned_out, ", not ", expected_fanout));
      }
      return absl::OkStatus();
    };
  };
  std::vector<SystemUnderTest> systems;
  systems.push_back(
      {kAllActive, timed(all_engine, followers, all_active_cpu), {}, false});
  systems.push_back({kMostlyInactive,
                     timed(mostly_engine, active, mostly_inactive_cpu),
                     {},
                     false});
  RunInterleaved(context, kScenario, "publishing", options.inactive_rounds,
                 systems);
  CheckFollowerPages(context, all_engine, mostly_engine);
  const std::string metric =
      absl::StrCat("publish to ", followers, " followers");
  AddFigures(context, kScenario, metric, "ms", systems);
  context.report.Compare(kScenario, metric, kMostlyInactive, kAllActive,
                         kPublishTarget);
  std::vector<SystemUnderTest> cpu = NamesOf(systems);
  cpu[0].samples = std::move(all_active_cpu);
  cpu[1].samples = std::move(mostly_inactive_cpu);
  const std::string cpu_metric = absl::StrCat(metric, ", CPU time");
  AddFigures(context, kScenario, cpu_metric, "ms", cpu);
  context.report.Compare(kScenario, cpu_metric, kMostlyInactive, kAllActive,
                         kPublishTarget);
}

// Follows of every returning user and twin, the actors' posts, time
// passing, the twins' reads and the release of the returning users.
absl::Status PrepareReturningUsers(RunContext& context, FeedSetup& feed) {
  const DriverOptions& options = context.options;
  InProcessFeedEngine& engine = *feed.engine;
  for (size_t u = 0; u < options.returning_users; ++u) {
    context.progress.Update(kScenario, "following, returning users", u,
                            options.returning_users);
    for (size_t a = 0; a < options.followees; ++a) {
      for (const EntityId user : {kFirstReturning + u, kFirstTwin + u}) {
        if (absl::Status s = engine.Follow(user, kFirstActor + a).status();
            !s.ok()) {
          return s;
        }
      }
    }
  }
  size_t posted = 0;
  const size_t total = options.returning_posts * options.followees;
  if (absl::Status s = PostRoundRobin(
          kFirstActor, options.followees, options.returning_posts, options.seed,
          [&](const Activity& post) {
            context.progress.Update(kScenario, "posting, returning users",
                                    posted++, total);
            return engine.Publish(post).status();
          });
      !s.ok()) {
    return s;
  }
  context.progress.Clear();
  feed.clock->Advance(kIdleTime);
  ReadOptions read;
  read.limit = options.page_size;
  for (size_t u = 0; u < options.returning_users; ++u) {
    if (absl::Status s = engine.ReadTimeline(kFirstTwin + u, read).status();
        !s.ok()) {
      return s;
    }
  }
  return Release(engine, options.returning_users * 2, options.returning_users);
}

// Every activity id of a timeline, newest first, page by page.
absl::StatusOr<std::vector<int64_t>> WholeTimeline(
    const InProcessFeedEngine& engine, EntityId reader) {
  std::vector<int64_t> ids;
  ReadOptions read;
  read.limit = kCheckedEntries;
  while (true) {
    absl::StatusOr<Page> page = engine.ReadTimeline(reader, read);
    if (!page.ok()) return page.status();
    for (const int64_t id : PageIds(*page)) ids.push_back(id);
    if (page->next_cursor.empty()) return ids;
    read.cursor = std::move(page->next_cursor);
  }
}

// A rebuilt timeline holds what it would have held had its reader stayed
// active, down to the cap: the twin's, entry for entry.
void CheckWholeTimelines(RunContext& context,
                         const InProcessFeedEngine& engine) {
  for (size_t u = 0; u < context.options.returning_users; ++u) {
    absl::StatusOr<std::vector<int64_t>> twin =
        WholeTimeline(engine, kFirstTwin + u);
    if (!twin.ok()) {
      return context.answers.Fail(kScenario, kActiveTwin, twin.status());
    }
    absl::StatusOr<std::vector<int64_t>> returning =
        WholeTimeline(engine, kFirstReturning + u);
    if (!returning.ok()) {
      return context.answers.Fail(kScenario, kReturning, returning.status());
    }
    context.answers.Check(kScenario,
                          absl::StrCat("whole timeline of returning user ", u),
                          kReturning, *twin, *returning);
  }
}

void RunReturningReader(RunContext& context) {
  const DriverOptions& options = context.options;
  absl::StatusOr<FeedSetup> feed =
      NewInactiveReadersEngine(options.timeline_cap);
  if (!feed.ok())
    return context.answers.Fail(kScenario, kFeedcore, feed.status());
  InProcessFeedEngine& engine = *feed->engine;
  if (absl::Status s = PrepareReturningUsers(context, *feed); !s.ok()) {
    return context.answers.Fail(kScenario, kReturning, s);
  }
  std::vector<std::vector<int64_t>> returning_pages(options.returning_users);
  std::vector<std::vector<int64_t>> twin_pages(options.returning_users);
  std::vector<double> returning_cpu, twin_cpu;
  auto first_page = [&](EntityId first_user,
                        std::vector<std::vector<int64_t>>& pages,
                        std::vector<double>& cpu_samples) {
    return [&engine, &options, &pages, &cpu_samples, first_user](
               size_t round, std::vector<double>& samples) -> absl::Status {
      ReadOptions read;
      read.limit = options.page_size;
      const double cpu_start = ProcessCpuMicros();
      const Stopwatch::time_point start = Stopwatch::now();
      absl::StatusOr<Page> page = engine.ReadTimeline(first_user + round, read);
      samples.push_back(MicrosSince(start));
      cpu_samples.push_back(ProcessCpuMicros() - cpu_start);
      if (!page.ok()) return page.status();
      pages[round] = PageIds(*page);
      return absl::OkStatus();
    };
  };
  std::vector<SystemUnderTest> systems;
  systems.push_back(
      {kReturning,
       first_page(kFirstReturning, returning_pages, returning_cpu),
       {},
       false});
  systems.push_back(
      {kActiveTwin, first_page(kFirstTwin, twin_pages, twin_cpu), {}, false});
  RunInterleaved(context, kScenario, "first pages", options.returning_users,
                 systems);
  for (size_t u = 0; u < options.returning_users; ++u) {
    context.answers.Check(kScenario,
                          absl::StrCat("first page of returning user ", u),
                          kReturning, twin_pages[u], returning_pages[u]);
  }
  CheckWholeTimelines(context, engine);
  const std::string metric =
      absl::StrCat("first page of ", options.page_size, ", ", options.followees,
                   " followees of ", options.returning_posts, " posts");
  AddFigures(context, kScenario, metric, "us", systems);
  // The returning reader's page costs hundreds of times the twin's: as
  // "times better" that reads as 0.00x, so the twin is the base.
  context.report.Compare(kScenario, metric, kActiveTwin, kReturning,
                         std::nullopt);
  std::vector<SystemUnderTest> cpu = NamesOf(systems);
  cpu[0].samples = std::move(returning_cpu);
  cpu[1].samples = std::move(twin_cpu);
  const std::string cpu_metric = absl::StrCat(metric, ", CPU time");
  AddFigures(context, kScenario, cpu_metric, "us", cpu);
  context.report.Compare(kScenario, cpu_metric, kActiveTwin, kReturning,
                         std::nullopt);
  for (const auto& [what, measured] :
       {std::pair{"", &systems[0]}, std::pair{" in CPU time", &cpu[0]}}) {
    if (measured->failed || measured->samples.empty()) continue;
    const double median = Summarize(measured->samples).median;
    context.report.Note(absl::StrFormat(
        "%s: a returning reader's first page takes %.0f us%s (median of %d), "
        "target under %.0f us: %s",
        kScenario, median, what, measured->samples.size(),
        kReturningTargetMicros,
        median < kReturningTargetMicros ? "met" : "MISSED"));
  }
}

}  // namespace

void RunInactiveReaders(RunContext& context) {
  RunPublish(context);
  RunReturningReader(context);
}

}  // namespace feedcore::bench
