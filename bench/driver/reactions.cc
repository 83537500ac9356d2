// reactions: what "did I react" costs a page, next to the page itself.
//
// A reader follows `followees` actors whose posts fill its timeline to
// `timeline_cap` entries; it has reacted (kind 0) to every other one, and
// `reaction_crowd` other users to each, so that the reactions it looks up
// sit among many. Each round, interleaved: the first page of 50 of the
// reader's timeline, and the same page followed by GetOwnReactions of its
// 50 activities; and, beside them, GetOwnReactions alone. The target: the
// lookup adds at most 1 us to the page (the medians' difference). With
// Redis, the idiomatic equivalent beside it: the reader's reacted ids in a
// set, SMISMEMBER of the page's 50 ids (one round trip). In process only:
// the Redis Cluster backend has no FeedReactions.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/driver/interleave.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/stats.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "reactions";
constexpr EntityId kReader = 7;
constexpr EntityId kFirstActor = 10'000;
constexpr EntityId kFirstCrowd = 1'000'000;
constexpr size_t kPageSize = 50;
constexpr double kTargetMicros = 1;

// The reader's home timeline filled, its reactions and the crowd's made;
// returns the activity ids the reader reacted to.
absl::StatusOr<std::vector<ActivityId>> Fill(const DriverOptions& o,
                                             InProcessFeedEngine& engine) {
  for (size_t a = 0; a < o.followees; ++a) {
    absl::Status s = engine.Follow(kReader, kFirstActor + a).status();
    if (!s.ok()) return s;
  }
  std::vector<ActivityId> reacted;
  for (size_t i = 0; i < o.timeline_cap; ++i) {
    Activity post;
    post.id = i + 1;
    post.actor = kFirstActor + i % o.followees;
    post.ts = kBenchStartTime + static_cast<Micros>(i) * kMicrosPerSecond;
    post.payload = absl::StrCat("post ", i);
    if (absl::Status s = engine.Publish(post).status(); !s.ok()) return s;
    for (size_t c = 0; c < o.reaction_crowd; ++c) {
      absl::Status s = engine.React(kFirstCrowd + c, post.id, 0).status();
      if (!s.ok()) return s;
    }
    if (i % 2 == 0) {
      if (absl::Status s = engine.React(kReader, post.id, 0).status();
          !s.ok()) {
        return s;
      }
      reacted.push_back(post.id);
    }
  }
  return reacted;
}

// How many of `kinds` are set: the answer checked.
int64_t Reacted(const std::vector<ReactionKinds>& kinds) {
  int64_t n = 0;
  for (const ReactionKinds k : kinds) n += k != 0;
  return n;
}

}  // namespace

void RunReactions(RunContext& context) {
  const DriverOptions& o = context.options;
  absl::StatusOr<FeedSetup> feed = NewFeedSetup(o.timeline_cap);
  if (!feed.ok())
    return context.answers.Fail(kScenario, kFeedcore, feed.status());
  InProcessFeedEngine& engine = *feed->engine;
  absl::StatusOr<std::vector<ActivityId>> reacted = Fill(o, engine);
  if (!reacted.ok()) {
    return context.answers.Fail(kScenario, kFeedcore, reacted.status());
  }
  ReadOptions read;
  read.limit = kPageSize;
  std::vector<ActivityId> ids;
  // Each system's last answer, by its index in `systems`.
  std::vector<std::vector<ReactionKinds>> kinds(4);
  // The page's ids, as a program gathers them before the lookup.
  auto page_ids = [&ids](const Page& page) {
    ids.clear();
    for (const StoredEntry& e : page.entries) ids.push_back(e.activity_id);
  };
  const std::string page_only = absl::StrCat(kFeedcore, ", page");
  const std::string page_and = absl::StrCat(kFeedcore, ", page + reactions");
  const std::string lookup = absl::StrCat(kFeedcore, ", GetOwnReactions");
  std::vector<SystemUnderTest> systems;
  systems.push_back({page_only,
                     [&](size_t, std::vector<double>& samples) -> absl::Status {
                       const auto start = Stopwatch::now();
                       absl::StatusOr<Page> page =
                           engine.ReadTimeline(kReader, read);
                       if (page.ok()) page_ids(*page);
                       samples.push_back(MicrosSince(start));
                       return page.status();
                     },
                     {},
                     false});
  systems.push_back({page_and,
                     [&](size_t, std::vector<double>& samples) -> absl::Status {
                       const auto start = Stopwatch::now();
                       absl::StatusOr<Page> page =
                           engine.ReadTimeline(kReader, read);
                       if (!page.ok()) return page.status();
                       page_ids(*page);
                       absl::StatusOr<std::vector<ReactionKinds>> got =
                           engine.GetOwnReactions(kReader, ids);
                       samples.push_back(MicrosSince(start));
                       if (!got.ok()) return got.status();
                       kinds[1] = *std::move(got);
                       return absl::OkStatus();
                     },
                     {},
                     false});
  systems.push_back({lookup,
                     [&](size_t, std::vector<double>& samples) -> absl::Status {
                       const auto start = Stopwatch::now();
                       absl::StatusOr<std::vector<ReactionKinds>> got =
                           engine.GetOwnReactions(kReader, ids);
                       samples.push_back(MicrosSince(start));
                       if (!got.ok()) return got.status();
                       kinds[2] = *std::move(got);
                       return absl::OkStatus();
                     },
                     {},
                     false});
  std::unique_ptr<RedisClient> redis = ConnectRedis(context, kScenario);
  if (redis != nullptr) {
    const std::string key = absl::StrCat("reacted:", kReader);
    std::vector<std::string> args = {"SADD", key};
    for (const ActivityId id : *reacted) args.push_back(absl::StrCat(id));
    std::vector<std::string_view> views(args.begin(), args.end());
    if (absl::Status s = redis->Command(views).status(); !s.ok()) {
      context.answers.Fail(kScenario, kRedis, s);
      redis.reset();
    }
  }
  if (redis != nullptr) {
    systems.push_back(
        {absl::StrCat(kRedis, ", SMISMEMBER"),
         [&](size_t, std::vector<double>& samples) -> absl::Status {
           std::vector<std::string> args = {"SMISMEMBER",
                                            absl::StrCat("reacted:", kReader)};
           for (const ActivityId id : ids) args.push_back(absl::StrCat(id));
           std::vector<std::string_view> views(args.begin(), args.end());
           const auto start = Stopwatch::now();
           absl::StatusOr<RedisReply> reply = redis->Command(views);
           samples.push_back(MicrosSince(start));
           if (!reply.ok()) return reply.status();
           kinds[3].clear();
           for (const RedisReply& r : reply->elements) {
             kinds[3].push_back(static_cast<ReactionKinds>(r.integer));
           }
           return absl::OkStatus();
         },
         {},
         false});
  }
  RunInterleaved(context, kScenario, "pages and their reactions",
                 o.reaction_rounds, systems);
  // Every other post of the first page is the reader's.
  for (size_t s = 1; s < systems.size(); ++s) {
    if (systems[s].failed) continue;
    context.answers.Check(
        kScenario, "reacted among the first page", systems[s].name,
        {static_cast<int64_t>(kPageSize / 2)}, {Reacted(kinds[s])});
  }
  const std::string metric =
      absl::StrCat("first page of ", kPageSize, " and its reactions");
  AddFigures(context, kScenario, metric, "us", systems);
  context.report.Compare(kScenario, metric, page_and, page_only, std::nullopt);
  if (!systems[0].failed && !systems[1].failed) {
    const double added = Summarize(systems[1].samples).median -
                         Summarize(systems[0].samples).median;
    context.report.Note(
        absl::StrCat(kScenario, ": GetOwnReactions of ", kPageSize, " adds ",
                     absl::StrFormat("%.2f", added),
                     " us to the page's median (target <= ", kTargetMicros,
                     " us: ", added <= kTargetMicros ? "met" : "MISSED", ")"));
  }
}

}  // namespace feedcore::bench
