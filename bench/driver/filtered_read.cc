// filtered-read: a page of the kinds a reader asks for, next to an
// unfiltered page of the same length.
//
// A reader follows `followees` actors whose activities fill its timeline
// to `timeline_cap` entries, alternating two kinds (posts and reposts), so
// that a filter keeping reposts keeps half. Each round, interleaved: the
// first page of 50 unfiltered, the first page of 50 reposts (a walk of
// about 100 entries), and the same two at a cursor halfway down. The
// target: the filtered page's median within 1.3x of the unfiltered one's.
// With Redis, the idiomatic equivalent beside it: a second sorted set per
// reader holding only its reposts (every fan-out written twice), read with
// ZREVRANGE. In process only: the Redis Cluster backend keeps no kinds.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/driver/interleave.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/stats.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "filtered-read";
constexpr EntityId kReader = 7;
constexpr EntityId kFirstActor = 10'000;
constexpr size_t kPageSize = 50;
constexpr ActivityKind kPost = 0;
constexpr ActivityKind kRepost = 1;
constexpr double kTargetRatio = 1.3;

// Activity i's kind: every other one a repost.
ActivityKind KindOf(size_t i) { return i % 2 == 0 ? kPost : kRepost; }
Micros TsOf(size_t i) {
  return kBenchStartTime + static_cast<Micros>(i) * kMicrosPerSecond;
}

absl::Status Fill(const DriverOptions& o, InProcessFeedEngine& engine) {
  for (size_t a = 0; a < o.followees; ++a) {
    absl::Status s = engine.Follow(kReader, kFirstActor + a).status();
    if (!s.ok()) return s;
  }
  for (size_t i = 0; i < o.timeline_cap; ++i) {
    Activity post;
    post.id = i + 1;
    post.actor = kFirstActor + i % o.followees;
    post.ts = TsOf(i);
    post.kind = KindOf(i);
    post.payload = absl::StrCat("post ", i);
    if (absl::Status s = engine.Publish(post).status(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// The ids of the newest `kPageSize` activities of `kind` (any kind when
// unset) among activities 0..below-1.
std::vector<int64_t> ExpectedIds(std::optional<ActivityKind> kind,
                                 size_t below) {
  std::vector<int64_t> ids;
  for (size_t i = below; i-- > 0 && ids.size() < kPageSize;) {
    if (!kind.has_value() || KindOf(i) == *kind) {
      ids.push_back(static_cast<int64_t>(i + 1));
    }
  }
  return ids;
}

}  // namespace

void RunFilteredRead(RunContext& context) {
  const DriverOptions& o = context.options;
  if (o.timeline_cap < 4 * kPageSize || o.timeline_cap % 4 != 0) {
    return context.answers.Fail(
        kScenario, kFeedcore,
        absl::InvalidArgumentError(
            absl::StrCat("--timeline_cap must be a multiple of 4, at least ",
                         4 * kPageSize)));
  }
  absl::StatusOr<FeedSetup> feed = NewFeedSetup(o.timeline_cap);
  if (!feed.ok())
    return context.answers.Fail(kScenario, kFeedcore, feed.status());
  InProcessFeedEngine& engine = *feed->engine;
  if (absl::Status s = Fill(o, engine); !s.ok()) {
    return context.answers.Fail(kScenario, kFeedcore, s);
  }
  // The cursors halfway down: the next pages start below activity `half`.
  const size_t half = o.timeline_cap / 2;
  ReadOptions all;
  all.limit = kPageSize;
  ReadOptions reposts = all;
  reposts.kinds = KindFilter::Only({kRepost});
  auto cursor_at = [&](ReadOptions read) -> absl::StatusOr<std::string> {
    // A page that ends just above `half`: its cursor continues below it.
    read.limit = o.timeline_cap - half;
    if (!read.kinds.every_kind()) read.limit = (o.timeline_cap - half) / 2;
    absl::StatusOr<Page> page = engine.ReadTimeline(kReader, read);
    if (!page.ok()) return page.status();
    return page->next_cursor;
  };
  absl::StatusOr<std::string> all_cursor = cursor_at(all);
  absl::StatusOr<std::string> repost_cursor = cursor_at(reposts);
  if (!all_cursor.ok() || !repost_cursor.ok()) {
    return context.answers.Fail(
        kScenario, kFeedcore,
        all_cursor.ok() ? repost_cursor.status() : all_cursor.status());
  }
  ReadOptions all_deep = all;
  all_deep.cursor = *all_cursor;
  ReadOptions reposts_deep = reposts;
  reposts_deep.cursor = *repost_cursor;

  // Each system's last page, by its index in `systems`.
  std::vector<std::vector<int64_t>> answers(6);
  auto page_of = [&](size_t index, const ReadOptions& read) {
    return [&, index, read](size_t, std::vector<double>& samples) {
      const auto start = Stopwatch::now();
      absl::StatusOr<Page> page = engine.ReadTimeline(kReader, read);
      samples.push_back(MicrosSince(start));
      if (!page.ok()) return page.status();
      answers[index] = PageIds(*page);
      return absl::OkStatus();
    };
  };
  const std::string first_all = absl::StrCat(kFeedcore, ", first page");
  const std::string first_reposts =
      absl::StrCat(kFeedcore, ", first page of reposts");
  const std::string deep_all = absl::StrCat(kFeedcore, ", page at a cursor");
  const std::string deep_reposts =
      absl::StrCat(kFeedcore, ", page of reposts at a cursor");
  std::vector<SystemUnderTest> systems;
  systems.push_back({first_all, page_of(0, all), {}, false});
  systems.push_back({first_reposts, page_of(1, reposts), {}, false});
  systems.push_back({deep_all, page_of(2, all_deep), {}, false});
  systems.push_back({deep_reposts, page_of(3, reposts_deep), {}, false});

  std::vector<SystemUnderTest> redis_systems;
  std::unique_ptr<RedisClient> redis = ConnectRedis(context, kScenario);
  const std::string repost_key = absl::StrCat("reposts:", kReader);
  if (redis != nullptr) {
    std::vector<std::string> args = {"ZADD", repost_key};
    for (size_t i = 0; i < o.timeline_cap; ++i) {
      if (KindOf(i) != kRepost) continue;
      args.push_back(absl::StrCat(TsOf(i)));
      args.push_back(absl::StrCat(i + 1));
    }
    std::vector<std::string_view> views(args.begin(), args.end());
    if (absl::Status s = redis->Command(views).status(); !s.ok()) {
      context.answers.Fail(kScenario, kRedis, s);
      redis.reset();
    }
  }
  if (redis != nullptr) {
    auto zrevrange = [&](size_t index, size_t skip) {
      return [&, index, skip](size_t, std::vector<double>& samples) {
        const std::string from = absl::StrCat(skip);
        const std::string to = absl::StrCat(skip + kPageSize - 1);
        const std::string_view args[] = {"ZREVRANGE", repost_key, from, to};
        const auto start = Stopwatch::now();
        absl::StatusOr<RedisReply> reply = redis->Command(args);
        samples.push_back(MicrosSince(start));
        if (!reply.ok()) return reply.status();
        answers[index].clear();
        for (const RedisReply& r : reply->elements) {
          int64_t id = 0;
          if (!absl::SimpleAtoi(r.text, &id)) {
            return absl::InternalError("ZREVRANGE returned a non-number");
          }
          answers[index].push_back(id);
        }
        return absl::OkStatus();
      };
    };
    redis_systems.push_back(
        {absl::StrCat(kRedis, ", ZREVRANGE of a reposts set"),
         zrevrange(4, 0),
         {},
         false});
    redis_systems.push_back(
        {absl::StrCat(kRedis, ", ZREVRANGE of a reposts set at an offset"),
         zrevrange(5, (o.timeline_cap - half) / 2),
         {},
         false});
  }
  // feedcore's four apart from Redis's calls, whose system calls would
  // leave the caches cold for whichever page followed them.
  RunInterleaved(context, kScenario, "filtered and unfiltered pages",
                 o.filtered_rounds, systems);
  RunInterleaved(context, kScenario, "pages of a reposts set",
                 o.filtered_rounds, redis_systems);
  for (SystemUnderTest& system : redis_systems) {
    systems.push_back(std::move(system));
  }
  const size_t cap = o.timeline_cap;
  const std::vector<std::vector<int64_t>> expected = {
      ExpectedIds(std::nullopt, cap),  ExpectedIds(kRepost, cap),
      ExpectedIds(std::nullopt, half), ExpectedIds(kRepost, half),
      ExpectedIds(kRepost, cap),       ExpectedIds(kRepost, half)};
  for (size_t s = 0; s < systems.size(); ++s) {
    if (systems[s].failed) continue;
    context.answers.Check(kScenario, "page ids", systems[s].name, expected[s],
                          answers[s]);
  }
  const std::string metric = absl::StrCat("page of ", kPageSize);
  AddFigures(context, kScenario, metric, "us", systems);
  // Compare's ratio is `other`'s median over `base`'s: the unfiltered
  // page's over the filtered one's, at least 1 / 1.3.
  context.report.Compare(kScenario, metric, first_reposts, first_all,
                         1 / kTargetRatio);
  context.report.Compare(kScenario, metric, deep_reposts, deep_all,
                         1 / kTargetRatio);
  for (const auto& [filtered, plain] :
       {std::pair<size_t, size_t>{1, 0}, std::pair<size_t, size_t>{3, 2}}) {
    if (systems[filtered].failed || systems[plain].failed) continue;
    const double ratio = Summarize(systems[filtered].samples).median /
                         Summarize(systems[plain].samples).median;
    context.report.Note(absl::StrCat(
        kScenario, ": ", systems[filtered].name, " / ", systems[plain].name,
        " = ", absl::StrFormat("%.2f", ratio), "x (target <= ", kTargetRatio,
        "x: ", ratio <= kTargetRatio ? "met" : "MISSED", ")"));
  }
}

}  // namespace feedcore::bench
