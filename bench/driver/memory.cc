// memory: bytes per timeline entry, per follow edge and per leaderboard
// member.
//   * feedcore: resident memory growth of a fresh process of this program
//     that builds only that structure (--memory_child), read from
//     /proc/self/statm after malloc_trim. feedcore's node blocks come from
//     mmap, so RSS, not malloc's counters, is the measure that sees them.
//   * Redis: growth of INFO memory `used_memory` (what Redis's allocator
//     holds for data) over an empty database.
// Timelines are filled round-robin in time order, `memory_per_timeline`
// entries each; Redis stores them with plain ZADD (no capping needed), once
// with short members as a plain application would and once in the Redis
// Cluster backend's layout (40-byte members, entry_codec.h), which is what
// sizing the cluster needs. Follow edges: every user follows the next
// kEdgeDegree users (mod the user count), so every set of followers and
// followees holds kEdgeDegree ids, above Redis's listpack limit (128), as
// the sets of the accounts that hold most edges are; Redis keeps them in
// the cluster backend's layout, one 8-byte member in the followee's `fr`
// and one in the follower's `fg` per edge.
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/driver/redis_member_names.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/timeline_systems.h"
#include "src/redis/entry_codec.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "memory";
constexpr size_t kInsertBatch = 4096;
constexpr size_t kEdgeDegree = 200;

// Scores of the members: spread over a million values, as in the
// leaderboard scenario.
int64_t InitialScore(MemberId member) {
  return static_cast<int64_t>((member * 7919) % 1'000'003);
}

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
};

// Runs this program again (/proc/self/exe) as a fresh process with
// --memory_child=`kind` and the memory sizes, and reads the two numbers it
// prints. A fresh process, not a fork: a forked child would place the new
// structure in pages its parent already had resident (freed by earlier
// scenarios) and show almost no growth.
absl::StatusOr<ChildResult> MeasureInChild(const std::string& kind,
                                           const DriverOptions& options) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(std::strerror(errno));
  std::vector<std::string> args = {
      "/proc/self/exe",
      absl::StrCat("--memory_child=", kind),
      absl::StrCat("--memory_entries=", options.memory_entries),
      absl::StrCat("--memory_per_timeline=", options.memory_per_timeline),
      absl::StrCat("--memory_members=", options.memory_members),
      absl::StrCat("--memory_edges=", options.memory_edges),
      absl::StrCat("--timeline_cap=", options.timeline_cap)};
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDOUT_FILENO);
    close(fds[1]);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string output;
  char buffer[256];
  ssize_t n = 0;
  while ((n = read(fds[0], buffer, sizeof(buffer))) > 0) {
    output.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ChildResult result;
  std::istringstream in(output);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      !(in >> result.rss_growth >> result.stats_bytes_used)) {
    return absl::InternalError(absl::StrCat("the measuring process for ", kind,
                                            " failed: '", output, "'"));
  }
  return result;
}

struct MemoryShape {
  size_t per_timeline;
  size_t timelines;
  size_t entries;
};

MemoryShape ShapeOf(const DriverOptions& options) {
  MemoryShape shape;
  shape.per_timeline = std::max<size_t>(1, options.memory_per_timeline);
  shape.timelines =
      std::max<size_t>(1, options.memory_entries / shape.per_timeline);
  shape.entries = shape.timelines * shape.per_timeline;
  return shape;
}

// Entry j of every timeline, then entry j + 1: the way a live feed fills.
OwnedEntry EntryAt(size_t j, size_t t, size_t timelines) {
  const ActivityId id = j * timelines + t + 1;
  return OwnedEntry{t, TimelineEntry{kBenchStartTime + static_cast<Micros>(id),
                                     id, t % 1000}};
}

// Builds the timelines into `keep` (alive while the caller reads the RSS);
// returns EngineStats::bytes_used.
absl::StatusOr<int64_t> BuildTimelines(const DriverOptions& options,
                                       FeedSetup& keep) {
  const MemoryShape shape = ShapeOf(options);
  absl::StatusOr<FeedSetup> setup =
      NewFeedSetup(std::max(options.timeline_cap, shape.per_timeline));
  if (!setup.ok()) return setup.status();
  std::vector<OwnedEntry> batch;
  for (size_t j = 0; j < shape.per_timeline; ++j) {
    for (size_t t = 0; t < shape.timelines; ++t) {
      batch.push_back(EntryAt(j, t, shape.timelines));
      if (batch.size() == kInsertBatch) {
        if (auto r = setup->engine->InsertBatch(batch); !r.ok()) {
          return r.status();
        }
        batch.clear();
      }
    }
  }
  if (auto r = setup->engine->InsertBatch(batch); !r.ok()) return r.status();
  const EngineStats stats = setup->engine->Stats().value();
  if (stats.entries != shape.entries) {
    return absl::InternalError("feedcore holds the wrong entry count");
  }
  keep = *std::move(setup);
  return static_cast<int64_t>(stats.bytes_used);
}

// The users of the follow graph and edge `i`: (follower, followee).
size_t GraphUsers(const DriverOptions& options) {
  return std::max(kEdgeDegree + 1, options.memory_edges / kEdgeDegree);
}
FollowPair EdgeAt(size_t i, size_t users) {
  const size_t follower = i / kEdgeDegree;
  return FollowPair{follower, (follower + 1 + i % kEdgeDegree) % users};
}
size_t EdgeCount(const DriverOptions& options) {
  return GraphUsers(options) * kEdgeDegree;
}

absl::Status BuildGraph(const DriverOptions& options,
                        std::unique_ptr<InProcessFeedEngine>& keep) {
  absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> created =
      FeedEngine::Create(EngineOptions{});
  if (!created.ok()) return created.status();
  const size_t users = GraphUsers(options);
  FollowOptions no_backfill;
  no_backfill.backfill = 0;
  std::vector<FollowPair> batch;
  for (size_t i = 0; i < EdgeCount(options); ++i) {
    batch.push_back(EdgeAt(i, users));
    if (batch.size() == kInsertBatch || i + 1 == EdgeCount(options)) {
      absl::StatusOr<std::vector<FollowResult>> done =
          (*created)->FollowMany(batch, no_backfill);
      if (!done.ok()) return done.status();
      batch.clear();
    }
  }
  if ((*created)->FollowerCount(0).value() != kEdgeDegree) {
    return absl::InternalError("wrong follower count");
  }
  keep = *std::move(created);
  return absl::OkStatus();
}

absl::Status BuildLeaderboard(const DriverOptions& options,
                              std::unique_ptr<Leaderboard>& keep) {
  absl::StatusOr<std::unique_ptr<Leaderboard>> created = Leaderboard::Create();
  if (!created.ok()) return created.status();
  for (MemberId m = 0; m < options.memory_members; ++m) {
    if (absl::Status s = (*created)->Set(m, InitialScore(m)); !s.ok()) {
      return s;
    }
  }
  if ((*created)->Size().value() != options.memory_members) {
    return absl::InternalError("wrong member count");
  }
  keep = *std::move(created);
  return absl::OkStatus();
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

int RunMemoryChild(const std::string& kind, const DriverOptions& options) {
  malloc_trim(0);
  const int64_t before = ResidentBytes();
  FeedSetup timelines;
  std::unique_ptr<InProcessFeedEngine> graph;
  std::unique_ptr<Leaderboard> board;
  int64_t stats_bytes = 0;
  if (kind == "timelines") {
    absl::StatusOr<int64_t> bytes = BuildTimelines(options, timelines);
    if (!bytes.ok()) {
      std::fprintf(stderr, "%s\n", bytes.status().ToString().c_str());
      return 1;
    }
    stats_bytes = *bytes;
  } else if (kind == "graph") {
    if (absl::Status s = BuildGraph(options, graph); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
  } else if (kind == "leaderboard") {
    if (absl::Status s = BuildLeaderboard(options, board); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
  } else {
    std::fprintf(stderr, "unknown --memory_child '%s'\n", kind.c_str());
    return 2;
  }
  malloc_trim(0);
  std::printf("%lld %lld\n", static_cast<long long>(ResidentBytes() - before),
              static_cast<long long>(stats_bytes));
  return 0;
}

void RunMemory(RunContext& context) {
  const DriverOptions& options = context.options;
  const MemoryShape shape = ShapeOf(options);
  const size_t members = options.memory_members;
  const std::string entry_metric =
      absl::StrCat("bytes per timeline entry (", shape.entries, " = ",
                   shape.timelines, " x ", shape.per_timeline, ")");
  const std::string member_metric =
      absl::StrCat("bytes per leaderboard member (", members, ")");
  const size_t edges = EdgeCount(options);
  const std::string edge_metric = absl::StrCat("bytes per follow edge (", edges,
                                               ", ", kEdgeDegree, " per user)");
  const std::string cluster_entry_metric = absl::StrCat(
      "bytes per timeline entry, cluster layout (", shape.entries, ")");

  // Adds `bytes` / `count` as `system`'s figure, or reports its failure;
  // true when added.
  auto add = [&](const std::string& metric, std::string_view system,
                 const absl::StatusOr<int64_t>& bytes, size_t count) {
    if (!bytes.ok()) {
      context.answers.Fail(kScenario, system, bytes.status());
      return false;
    }
    AddMemoryFigure(context, metric, std::string(system),
                    static_cast<double>(*bytes) / static_cast<double>(count));
    return true;
  };
  auto rss_growth =
      [](const absl::StatusOr<ChildResult>& child) -> absl::StatusOr<int64_t> {
    if (!child.ok()) return child.status();
    return child->rss_growth;
  };

  context.progress.Update(kScenario, "feedcore timelines", 0, 1);
  absl::StatusOr<ChildResult> feed = MeasureInChild("timelines", options);
  if (feed.ok()) {
    AddMemoryFigure(context, entry_metric, kFeedcore,
                    static_cast<double>(feed->rss_growth) /
                        static_cast<double>(shape.entries));
    context.report.Note(absl::StrFormat(
        "memory: feedcore's own accounting (EngineStats::bytes_used) is %.1f "
        "bytes per timeline entry",
        static_cast<double>(feed->stats_bytes_used) /
            static_cast<double>(shape.entries)));
  } else {
    context.answers.Fail(kScenario, kFeedcore, feed.status());
  }
  context.progress.Update(kScenario, "feedcore follow graph", 0, 1);
  add(edge_metric, kFeedcore, rss_growth(MeasureInChild("graph", options)),
      edges);
  context.progress.Update(kScenario, "feedcore leaderboard", 0, 1);
  add(member_metric, kFeedcore,
      rss_growth(MeasureInChild("leaderboard", options)), members);
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
      measure_redis("redis timelines", shape.entries, [&](size_t i) {
        const OwnedEntry e =
            EntryAt(i / shape.timelines, i % shape.timelines, shape.timelines);
        redis->Append({"ZADD", absl::StrCat("tl:", e.owner),
                       absl::StrCat(e.entry.ts),
                       absl::StrCat(e.entry.activity_id)});
      });
  if (!add(entry_metric, kRedis, redis_entries, shape.entries)) return;
  absl::StatusOr<int64_t> cluster_entries = measure_redis(
      "redis timelines, cluster layout", shape.entries, [&](size_t i) {
        const OwnedEntry e =
            EntryAt(i / shape.timelines, i % shape.timelines, shape.timelines);
        const StoredEntry stored{e.entry.ts,
                                 e.entry.activity_id,
                                 e.entry.actor,
                                 e.entry.ts + kMaxTtl,
                                 0,
                                 {}};
        redis->Append({"ZADD", absl::StrCat("fc:{", e.owner, "}:tl"),
                       absl::StrCat(e.entry.ts),
                       redis::EncodeEntryMember(stored)});
      });
  add(cluster_entry_metric, kRedis, cluster_entries, shape.entries);
  const size_t users = GraphUsers(options);
  absl::StatusOr<int64_t> redis_edges =
      measure_redis("redis follow graph", edges, [&](size_t i) {
        const FollowPair edge = EdgeAt(i, users);
        redis->Append({"ZADD", absl::StrCat("fc:{", edge.followee, "}:fr"), "0",
                       redis::BigEndian(edge.follower)});
        redis->Append({"ZADD", absl::StrCat("fc:{", edge.follower, "}:fg"), "0",
                       redis::BigEndian(edge.followee)});
      });
  add(edge_metric, kRedis, redis_edges, edges);
  // Same member names as the leaderboard scenario.
  const RedisMemberNames names(members);
  absl::StatusOr<int64_t> redis_members =
      measure_redis("redis leaderboard", members, [&](size_t m) {
        redis->Append(
            {"ZADD", "lb", absl::StrCat(InitialScore(m)), names.Name(m)});
      });
  add(member_metric, kRedis, redis_members, members);
  // Leave the server's memory to the scenarios that may follow.
  if (auto s = redis->Command({"FLUSHALL"}); !s.ok()) {
    context.answers.Fail(kScenario, kRedis, s.status());
  }
}

}  // namespace feedcore::bench
