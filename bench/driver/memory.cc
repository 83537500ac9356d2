// memory: bytes per timeline entry and per leaderboard member.
//   * feedcore: resident memory growth of a forked child that builds only
//     that structure (so no memory freed by an earlier scenario is reused
//     and hides the growth), read from /proc/self/statm after malloc_trim.
//     feedcore's node blocks come from mmap, so RSS, not malloc's
//     counters, is the measure that sees them.
//   * Redis: growth of INFO memory `used_memory` (what Redis's allocator
//     holds for data) over an empty database.
// Timelines are filled round-robin in time order, `memory_per_timeline`
// entries each; Redis stores them with plain ZADD (no capping needed).
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/driver/redis_member_names.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "memory";
constexpr size_t kInsertBatch = 4096;

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size_pages = 0;
  int64_t resident_pages = 0;
  statm >> size_pages >> resident_pages;
  return resident_pages * sysconf(_SC_PAGESIZE);
}

struct ChildResult {
  int64_t rss_growth = 0;
  int64_t stats_bytes_used = 0;  // timelines only: EngineStats::bytes_used
  bool ok = false;
};

// Runs `build` in a forked child and returns the child's RSS growth. The
// structure must stay alive until `build` returns the stats figure.
absl::StatusOr<ChildResult> MeasureInChild(
    const std::function<absl::StatusOr<int64_t>(void)>& build) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    ChildResult result;
    malloc_trim(0);
    const int64_t before = ResidentBytes();
    absl::StatusOr<int64_t> stats = build();
    malloc_trim(0);
    result.rss_growth = ResidentBytes() - before;
    result.ok = stats.ok();
    result.stats_bytes_used = stats.value_or(0);
    const ssize_t written = write(fds[1], &result, sizeof(result));
    _exit(written == sizeof(result) ? 0 : 1);
  }
  close(fds[1]);
  ChildResult result;
  const ssize_t got = read(fds[0], &result, sizeof(result));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != sizeof(result) || !result.ok) {
    return absl::InternalError("the measuring child process failed");
  }
  return result;
}

void AddMemoryFigure(RunContext& context, const std::string& metric,
                     const std::string& system, double bytes_per_item) {
  Figure figure;
  figure.scenario = kScenario;
  figure.metric = metric;
  figure.system = system;
  figure.unit = "bytes";
  figure.summary = Summarize({bytes_per_item});
  context.report.Add(std::move(figure));
}

}  // namespace

void RunMemory(RunContext& context) {
  const DriverOptions& options = context.options;
  const size_t per_timeline = std::max<size_t>(1, options.memory_per_timeline);
  const size_t timelines =
      std::max<size_t>(1, options.memory_entries / per_timeline);
  const size_t entries = timelines * per_timeline;
  const size_t members = options.memory_members;
  const std::string entry_metric =
      absl::StrCat("bytes per timeline entry (", entries, " = ", timelines,
                   " x ", per_timeline, ")");
  const std::string member_metric =
      absl::StrCat("bytes per leaderboard member (", members, ")");
  // Entry j of every timeline, then entry j + 1: the way a live feed fills.
  auto entry_at = [&](size_t j, size_t t) {
    const ActivityId id = j * timelines + t + 1;
    return OwnedEntry{
        t,
        TimelineEntry{kBenchStartTime + static_cast<Micros>(id), id, t % 1000}};
  };

  context.progress.Update(kScenario, "feedcore timelines", 0, 1);
  absl::StatusOr<ChildResult> feed =
      MeasureInChild([&]() -> absl::StatusOr<int64_t> {
        absl::StatusOr<FeedSetup> setup =
            NewFeedSetup(std::max(options.timeline_cap, per_timeline));
        if (!setup.ok()) return setup.status();
        std::vector<OwnedEntry> batch;
        for (size_t j = 0; j < per_timeline; ++j) {
          for (size_t t = 0; t < timelines; ++t) {
            batch.push_back(entry_at(j, t));
            if (batch.size() == kInsertBatch) {
              if (auto r = setup->engine->InsertBatch(batch); !r.ok()) {
                return r.status();
              }
              batch.clear();
            }
          }
        }
        if (auto r = setup->engine->InsertBatch(batch); !r.ok()) {
          return r.status();
        }
        const EngineStats stats = setup->engine->Stats();
        if (stats.entries != entries) {
          return absl::InternalError("feedcore holds the wrong entry count");
        }
        return static_cast<int64_t>(stats.bytes_used);
      });
  if (feed.ok()) {
    AddMemoryFigure(
        context, entry_metric, kFeedcore,
        static_cast<double>(feed->rss_growth) / static_cast<double>(entries));
    context.report.Note(absl::StrCat(
        "memory: feedcore's own accounting (EngineStats::bytes_used) is ",
        absl::StrFormat("%.1f", static_cast<double>(feed->stats_bytes_used) /
                                    static_cast<double>(entries)),
        " bytes per timeline entry"));
  } else {
    context.answers.Fail(kScenario, kFeedcore, feed.status());
  }

  context.progress.Update(kScenario, "feedcore leaderboard", 0, 1);
  absl::StatusOr<ChildResult> board =
      MeasureInChild([&]() -> absl::StatusOr<int64_t> {
        absl::StatusOr<std::unique_ptr<Leaderboard>> created =
            Leaderboard::Create();
        if (!created.ok()) return created.status();
        for (MemberId m = 0; m < members; ++m) {
          if (absl::Status s = (*created)->Set(
                  m, static_cast<int64_t>((m * 7919) % 1000003));
              !s.ok()) {
            return s;
          }
        }
        if ((*created)->Size() != members) {
          return absl::InternalError("wrong member count");
        }
        return 0;
      });
  if (board.ok()) {
    AddMemoryFigure(
        context, member_metric, kFeedcore,
        static_cast<double>(board->rss_growth) / static_cast<double>(members));
  } else {
    context.answers.Fail(kScenario, kFeedcore, board.status());
  }
  context.progress.Clear();

  std::unique_ptr<RedisClient> redis = ConnectRedis(context, kScenario);
  if (redis == nullptr) return;
  auto measure_redis = [&](const std::string& step, size_t total,
                           const std::function<void(size_t)>& queue_item)
      -> absl::StatusOr<int64_t> {
    absl::StatusOr<RedisReply> flushed = redis->Command({"FLUSHALL"});
    if (!flushed.ok()) return flushed.status();
    absl::StatusOr<int64_t> before = RedisUsedMemory(*redis);
    if (!before.ok()) return before.status();
    for (size_t i = 0; i < total; ++i) {
      queue_item(i);
      if (redis->pending() >= options.redis_pipeline) {
        if (absl::Status s = redis->Flush(); !s.ok()) return s;
        context.progress.Update(kScenario, step, i, total);
      }
    }
    if (absl::Status s = redis->Flush(); !s.ok()) return s;
    context.progress.Clear();
    absl::StatusOr<int64_t> after = RedisUsedMemory(*redis);
    if (!after.ok()) return after.status();
    return *after - *before;
  };
  absl::StatusOr<int64_t> redis_entries =
      measure_redis("redis timelines", entries, [&](size_t i) {
        const OwnedEntry e = entry_at(i / timelines, i % timelines);
        redis->Append({"ZADD", absl::StrCat("tl:", e.owner),
                       absl::StrCat(e.entry.ts),
                       absl::StrCat(e.entry.activity_id)});
      });
  if (redis_entries.ok()) {
    AddMemoryFigure(
        context, entry_metric, kRedis,
        static_cast<double>(*redis_entries) / static_cast<double>(entries));
  } else {
    context.answers.Fail(kScenario, kRedis, redis_entries.status());
    return;
  }
  // Same member names as the leaderboard scenario.
  const RedisMemberNames names(members);
  absl::StatusOr<int64_t> redis_members =
      measure_redis("redis leaderboard", members, [&](size_t m) {
        redis->Append(
            {"ZADD", "lb", absl::StrCat((m * 7919) % 1000003), names.Name(m)});
      });
  if (redis_members.ok()) {
    AddMemoryFigure(
        context, member_metric, kRedis,
        static_cast<double>(*redis_members) / static_cast<double>(members));
  } else {
    context.answers.Fail(kScenario, kRedis, redis_members.status());
  }
  // Leave the server's memory to the scenarios that may follow.
  if (auto s = redis->Command({"FLUSHALL"}); !s.ok()) {
    context.answers.Fail(kScenario, kRedis, s.status());
  }
}

}  // namespace feedcore::bench
