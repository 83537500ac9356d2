// durability: what logging every change costs. Side by side in one run,
// on `durability_threads` writer threads at once (so that concurrent
// callers share fdatasyncs: group commit):
//   * publish throughput: each thread publishes as its own actor, whose
//     `durability_followers` followers each get a copy (one Publish call per
//     activity, 100-byte payloads); Redis gets the same activity as one
//     pipelined round trip per publish: SET of the body, then per follower
//     ZADD and ZREMRANGEBYRANK for the timeline cap;
//   * increment throughput: each thread increments uniformly drawn members
//     of one 16-partition board, one Increment call per increment; Redis
//     gets one ZINCRBY round trip per increment, one connection per thread;
// for these systems:
//   feedcore            FeedEngine and Leaderboard in memory, nothing logged
//   feedcore_everysec   DurableStore, FsyncPolicy::kEverySecond
//   feedcore_always     DurableStore, FsyncPolicy::kAlways
//   redis_aof_everysec  redis-server --appendonly yes --appendfsync everysec
//   redis_aof_always    redis-server --appendonly yes --appendfsync always
// The stores' directories and the Redis append-only files are in the same
// file system (`durability_dir`, the system's temporary directory unless
// said otherwise). Each system runs `durability_rounds` rounds, taking
// turns; a sample is one round's operations per second. A round makes
// `durability_ops` calls per thread in memory and with kEverySecond,
// `durability_redis_ops` on Redis everysec (a round trip per call), and
// `durability_sync_ops` with kAlways and Redis always (a disk sync per
// group of calls).
//
// Then recovery: a store is filled with publishes and increments (no
// compaction, so that Open replays the whole log), closed, and opened
// three times; DurabilityStats gives records and bytes replayed and the
// time Open took.
//
// Answers compared: every board's scores after the rounds (each system
// made the same increments), and the recovered store's board against the
// one that wrote the log.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/driver/redis_client.h"
#include "bench/driver/redis_server.h"
#include "bench/driver/scenario.h"
#include "feedcore/durable_store.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "durability";
constexpr char kEverySecond[] = "feedcore_everysec";
constexpr char kAlways[] = "feedcore_always";
constexpr char kRedisEverySecond[] = "redis_aof_everysec";
constexpr char kRedisAlways[] = "redis_aof_always";
constexpr char kBoard[] = "arena";
constexpr size_t kPayloadBytes = 100;
constexpr size_t kMembers = 100'000;
constexpr size_t kTimelineCap = 1000;

// One system's engine and board, whatever holds them.
struct Target {
  FeedEngine* engine = nullptr;
  Leaderboard* board = nullptr;
};

EngineOptions BenchEngineOptions() {
  EngineOptions o;
  o.sweep_interval = 0;
  o.default_backfill = 0;
  o.max_timeline_length = kTimelineCap;
  return o;
}

// Runs call(thread, i) for i < per_thread on `threads` threads at once;
// returns calls per second, or the first error.
absl::StatusOr<double> Throughput(
    size_t threads, size_t per_thread,
    const std::function<absl::Status(size_t, size_t)>& call) {
  std::vector<absl::Status> errors(threads);
  std::vector<std::thread> workers;
  std::atomic<size_t> ready{0};
  std::atomic<bool> go{false};
  Stopwatch::time_point start;
  for (size_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (size_t i = 0; i < per_thread && errors[t].ok(); ++i) {
        errors[t] = call(t, i);
      }
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  start = Stopwatch::now();
  go.store(true, std::memory_order_release);
  for (std::thread& w : workers) w.join();
  const double seconds = MicrosSince(start) / 1e6;
  for (const absl::Status& e : errors) {
    if (!e.ok()) return e;
  }
  return static_cast<double>(threads * per_thread) / seconds;
}

// The actor thread t publishes as, and its followers.
EntityId Actor(size_t thread) { return 1'000'000 + thread; }
EntityId Follower(size_t thread, size_t k) {
  return 2'000'000 + thread * 10'000 + k;
}

absl::Status Follow(FeedEngine& engine, size_t threads, size_t followers) {
  for (size_t t = 0; t < threads; ++t) {
    for (size_t k = 0; k < followers; ++k) {
      absl::Status s = engine.Follow(Follower(t, k), Actor(t)).status();
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

// The activity of thread t's i-th publish in `round`: ids never repeat.
Activity MakeActivity(size_t round, size_t thread, size_t i) {
  Activity a;
  a.id = (uint64_t{round + 1} << 48) | (uint64_t{thread} << 32) | i;
  a.actor = Actor(thread);
  a.ts = static_cast<Micros>(a.id & 0xFFFFFFFFFFFF);
  a.payload.assign(kPayloadBytes, static_cast<char>('a' + i % 26));
  return a;
}

// The i-th increment of thread t: the same on every system.
ScoreIncrement IncrementOf(size_t thread, size_t i) {
  std::mt19937_64 rng((thread + 1) * 1'000'003 + i);
  return {rng() % kMembers, 1 + static_cast<int64_t>(rng() % 100)};
}

// A store in a fresh directory under `parent`, removed with it.
class ScopedStore {
 public:
  static absl::StatusOr<std::unique_ptr<ScopedStore>> Open(
      const std::string& parent, const std::string& name, FsyncPolicy fsync,
      uint64_t compact_after_bytes) {
    std::unique_ptr<ScopedStore> s(new ScopedStore);
    s->durability_.directory =
        (std::filesystem::path(parent) /
         absl::StrCat("feedcore-bench-", ::getpid(), "-", name))
            .string();
    std::filesystem::remove_all(s->durability_.directory);
    s->durability_.fsync = fsync;
    s->durability_.compact_after_bytes = compact_after_bytes;
    absl::Status status = s->Reopen();
    if (!status.ok()) return status;
    return s;
  }
  ~ScopedStore() {
    store_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(durability_.directory, ignored);
  }

  absl::Status Reopen() {
    store_.reset();
    absl::StatusOr<std::unique_ptr<DurableStore>> opened =
        DurableStore::Open(durability_, BenchEngineOptions());
    if (!opened.ok()) return opened.status();
    store_ = *std::move(opened);
    absl::StatusOr<std::shared_ptr<Leaderboard>> board =
        store_->boards().GetOrCreate(kBoard);
    if (!board.ok()) return board.status();
    board_ = *std::move(board);
    return absl::OkStatus();
  }

  DurableStore& store() { return *store_; }
  Target target() { return {&store_->engine(), board_.get()}; }

 private:
  ScopedStore() = default;
  DurabilityOptions durability_;
  std::unique_ptr<DurableStore> store_;
  std::shared_ptr<Leaderboard> board_;
};

// Redis with an append-only file, and one connection per writer thread.
struct RedisAof {
  std::unique_ptr<RedisServer> server;
  std::vector<std::unique_ptr<RedisClient>> clients;
};

absl::StatusOr<RedisAof> StartRedisAof(const DriverOptions& o,
                                       const char* appendfsync) {
  RedisAof redis;
  absl::StatusOr<std::unique_ptr<RedisServer>> server = RedisServer::Start(
      o.redis_server, {"--appendonly", "yes", "--appendfsync", appendfsync});
  if (!server.ok()) return server.status();
  redis.server = *std::move(server);
  for (size_t t = 0; t < o.durability_threads; ++t) {
    absl::StatusOr<std::unique_ptr<RedisClient>> client =
        RedisClient::Connect(redis.server->host(), redis.server->port());
    if (!client.ok()) return client.status();
    redis.clients.push_back(*std::move(client));
  }
  return redis;
}

absl::Status RedisPublish(RedisClient& client, const Activity& a, size_t thread,
                          size_t followers) {
  const std::string id = absl::StrCat(a.id);
  const std::string ts = absl::StrCat(a.ts);
  const std::string cap = absl::StrCat(-static_cast<int64_t>(kTimelineCap) - 1);
  client.Append({"SET", absl::StrCat("a:", id), a.payload});
  for (size_t k = 0; k < followers; ++k) {
    const std::string key = absl::StrCat("t:", Follower(thread, k));
    client.Append({"ZADD", key, ts, id});
    client.Append({"ZREMRANGEBYRANK", key, "0", cap});
  }
  return client.Flush();
}

absl::Status RedisIncrement(RedisClient& client, const ScoreIncrement& i) {
  return client
      .Command(
          {"ZINCRBY", kBoard, absl::StrCat(i.delta), absl::StrCat(i.member)})
      .status();
}

// Every member's score, in member order (0 for an absent one).
std::vector<int64_t> Scores(const Leaderboard& board) {
  std::vector<int64_t> scores(kMembers, 0);
  for (MemberId m = 0; m < kMembers; ++m) {
    absl::StatusOr<int64_t> s = board.Score(m);
    if (s.ok()) scores[m] = *s;
  }
  return scores;
}

absl::StatusOr<std::vector<int64_t>> RedisScores(RedisClient& client) {
  std::vector<int64_t> scores(kMembers, 0);
  for (MemberId m = 0; m < kMembers; ++m) {
    client.Append({"ZSCORE", kBoard, absl::StrCat(m)});
  }
  std::vector<RedisReply> replies;
  absl::Status s = client.Flush(&replies);
  if (!s.ok()) return s;
  for (MemberId m = 0; m < kMembers && m < replies.size(); ++m) {
    if (replies[m].type == RedisReply::Type::kString) {
      scores[m] = std::stoll(replies[m].text);
    }
  }
  return scores;
}

// One system of the scenario: how it publishes and increments, and how
// many calls each thread makes per round.
struct System {
  const char* name;
  size_t per_thread;
  std::function<absl::Status(size_t round, size_t thread, size_t i)> publish;
  std::function<absl::Status(size_t thread, size_t i)> increment;
};

System FeedcoreSystem(const char* name, size_t per_thread, Target target) {
  return {name, per_thread,
          [target](size_t round, size_t t, size_t i) {
            return target.engine->Publish(MakeActivity(round, t, i)).status();
          },
          [target](size_t t, size_t i) {
            const ScoreIncrement inc = IncrementOf(t, i);
            return target.board->Increment(inc.member, inc.delta).status();
          }};
}

System RedisSystem(const char* name, size_t per_thread, RedisAof& redis,
                   size_t followers) {
  return {name, per_thread,
          [&redis, followers](size_t round, size_t t, size_t i) {
            return RedisPublish(*redis.clients[t], MakeActivity(round, t, i), t,
                                followers);
          },
          [&redis](size_t t, size_t i) {
            return RedisIncrement(*redis.clients[t], IncrementOf(t, i));
          }};
}

// The scores after increments 0..done-1 of every thread.
std::vector<int64_t> ExpectedScores(size_t threads, size_t done) {
  std::vector<int64_t> scores(kMembers, 0);
  for (size_t t = 0; t < threads; ++t) {
    for (size_t i = 0; i < done; ++i) {
      const ScoreIncrement inc = IncrementOf(t, i);
      scores[inc.member] += inc.delta;
    }
  }
  return scores;
}

void Recovery(RunContext& context, const std::string& parent) {
  const DriverOptions& o = context.options;
  absl::StatusOr<std::unique_ptr<ScopedStore>> store = ScopedStore::Open(
      parent, "recovery", FsyncPolicy::kEverySecond, /*compact_after=*/0);
  if (!store.ok()) {
    context.answers.Fail(kScenario, kEverySecond, store.status());
    return;
  }
  Target target = (*store)->target();
  absl::Status s =
      Follow(*target.engine, o.durability_threads, o.durability_followers);
  const size_t n = o.durability_ops * o.durability_threads;
  for (size_t i = 0; i < n && s.ok(); ++i) {
    context.progress.Update(kScenario, "filling the log to recover", i, n);
    s = target.engine->Publish(MakeActivity(0, i % o.durability_threads, i))
            .status();
    const ScoreIncrement inc = IncrementOf(0, i);
    if (s.ok()) s = target.board->Increment(inc.member, inc.delta).status();
  }
  if (s.ok()) s = (*store)->store().Sync();
  if (!s.ok()) {
    context.answers.Fail(kScenario, kEverySecond, s);
    return;
  }
  const std::vector<int64_t> written = Scores(*target.board);
  std::vector<double> records_per_second, mb_per_second;
  DurabilityStats stats;
  for (int attempt = 0; attempt < 3; ++attempt) {
    s = (*store)->Reopen();
    if (!s.ok()) {
      context.answers.Fail(kScenario, kEverySecond, s);
      return;
    }
    stats = (*store)->store().Stats();
    const double seconds =
        std::max<double>(static_cast<double>(stats.recovery_micros), 1) / 1e6;
    records_per_second.push_back(static_cast<double>(stats.recovered_records) /
                                 seconds);
    mb_per_second.push_back(static_cast<double>(stats.recovered_bytes) / 1e6 /
                            seconds);
  }
  context.answers.Check(kScenario, "board after recovery", kEverySecond,
                        written, Scores(*(*store)->target().board));
  const std::string metric =
      absl::StrCat("recovery, log of ", stats.recovered_records, " records");
  context.report.Add({kScenario, metric + " (records)", kFeedcore, "records/s",
                      true, Summarize(records_per_second), std::nullopt});
  context.report.Add({kScenario, metric + " (bytes)", kFeedcore, "MB/s", true,
                      Summarize(mb_per_second), std::nullopt});
  context.report.Note(absl::StrCat("durability: recovery replayed ",
                                   stats.recovered_records, " records, ",
                                   stats.recovered_bytes, " bytes of log"));
}

}  // namespace

void RunDurability(RunContext& context) {
  const DriverOptions& o = context.options;
  const std::string parent =
      o.durability_dir.empty() ? std::filesystem::temp_directory_path().string()
                               : o.durability_dir;
  const size_t threads = o.durability_threads;

  // In memory: an engine and a board of their own, nothing logged.
  absl::StatusOr<std::unique_ptr<FeedEngine>> memory_engine =
      FeedEngine::Create(BenchEngineOptions());
  absl::StatusOr<std::unique_ptr<Leaderboard>> memory_board =
      Leaderboard::Create();
  if (!memory_engine.ok() || !memory_board.ok()) {
    context.answers.Fail(
        kScenario, kFeedcore,
        !memory_engine.ok() ? memory_engine.status() : memory_board.status());
    return;
  }
  std::vector<System> systems;
  systems.push_back(
      FeedcoreSystem(kFeedcore, o.durability_ops,
                     {memory_engine->get(), memory_board->get()}));
  std::vector<std::unique_ptr<ScopedStore>> stores;
  for (const auto& [name, policy] :
       {std::pair{kEverySecond, FsyncPolicy::kEverySecond},
        std::pair{kAlways, FsyncPolicy::kAlways}}) {
    absl::StatusOr<std::unique_ptr<ScopedStore>> store =
        ScopedStore::Open(parent, name, policy, uint64_t{1} << 30);
    if (!store.ok()) {
      context.answers.Fail(kScenario, name, store.status());
      return;
    }
    stores.push_back(*std::move(store));
    systems.push_back(FeedcoreSystem(name,
                                     policy == FsyncPolicy::kAlways
                                         ? o.durability_sync_ops
                                         : o.durability_ops,
                                     stores.back()->target()));
  }
  std::vector<std::unique_ptr<RedisAof>> redis;
  if (!context.redis.has_value()) {
    context.report.Note(
        "durability: Redis with an append-only file not "
        "compared (Redis does not run in this run)");
  } else {
    for (const auto& [name, appendfsync] :
         {std::pair{kRedisEverySecond, "everysec"},
          std::pair{kRedisAlways, "always"}}) {
      absl::StatusOr<RedisAof> started = StartRedisAof(o, appendfsync);
      if (!started.ok()) {
        context.answers.Fail(kScenario, name, started.status());
        continue;
      }
      redis.push_back(std::make_unique<RedisAof>(*std::move(started)));
      systems.push_back(RedisSystem(
          name,
          name == kRedisAlways ? o.durability_sync_ops : o.durability_redis_ops,
          *redis.back(), o.durability_followers));
    }
  }
  // Followers first, untimed.
  if (absl::Status s = Follow(**memory_engine, threads, o.durability_followers);
      !s.ok()) {
    context.answers.Fail(kScenario, kFeedcore, s);
    return;
  }
  for (auto& store : stores) {
    if (absl::Status s =
            Follow(*store->target().engine, threads, o.durability_followers);
        !s.ok()) {
      context.answers.Fail(kScenario, kAlways, s);
      return;
    }
  }

  const std::string publish_metric =
      absl::StrCat("publish to ", o.durability_followers, " followers, ",
                   threads, " threads");
  const std::string increment_metric =
      absl::StrCat("increment, ", threads, " threads");
  std::vector<std::vector<double>> publish(systems.size());
  std::vector<std::vector<double>> increment(systems.size());
  // Each system's increments continue where its previous round ended, so
  // that all of them make the same increments in the same order.
  std::vector<size_t> increments_done(systems.size(), 0);
  for (size_t round = 0; round < o.durability_rounds; ++round) {
    for (size_t k = 0; k < systems.size(); ++k) {
      const size_t s = (k + round) % systems.size();  // take turns
      const System& system = systems[s];
      const size_t per_thread = system.per_thread;
      context.progress.Update(kScenario, system.name, round,
                              o.durability_rounds);
      absl::StatusOr<double> rate = Throughput(
          threads, per_thread,
          [&](size_t t, size_t i) { return system.publish(round, t, i); });
      if (!rate.ok()) {
        context.answers.Fail(kScenario, system.name, rate.status());
        return;
      }
      publish[s].push_back(*rate);
      const size_t base = increments_done[s];
      rate = Throughput(threads, per_thread, [&](size_t t, size_t i) {
        return system.increment(t, base + i);
      });
      if (!rate.ok()) {
        context.answers.Fail(kScenario, system.name, rate.status());
        return;
      }
      increments_done[s] += per_thread;
      increment[s].push_back(*rate);
    }
  }
  for (size_t s = 0; s < systems.size(); ++s) {
    context.report.Add({kScenario, publish_metric, systems[s].name, "ops/s",
                        true, Summarize(publish[s]), std::nullopt});
    context.report.Add({kScenario, increment_metric, systems[s].name, "ops/s",
                        true, Summarize(increment[s]), std::nullopt});
  }
  for (const std::string& metric : {publish_metric, increment_metric}) {
    context.report.Compare(kScenario, metric, kEverySecond, kFeedcore, 0.8);
    context.report.Compare(kScenario, metric, kAlways, kRedisAlways, 1.0);
    context.report.Compare(kScenario, metric, kEverySecond, kRedisEverySecond,
                           std::nullopt);
  }
  context.report.Note(absl::StrCat(
      "durability: stores and append-only files in ",
      o.durability_dir.empty() ? "the temporary directory" : "--durability_dir",
      "; ", threads,
      " writer threads; calls per thread and round: ", o.durability_ops,
      " in memory and feedcore everysec, ", o.durability_redis_ops,
      " Redis everysec, ", o.durability_sync_ops, " with always"));

  // Every system made the same increments, as many as its rounds had: its
  // board must hold their sums. One Redis server stands for both (the
  // same code path).
  context.answers.Check(kScenario, "scores after the increments", kFeedcore,
                        ExpectedScores(threads, increments_done[0]),
                        Scores(**memory_board));
  for (size_t k = 0; k < stores.size(); ++k) {
    context.answers.Check(kScenario, "scores after the increments",
                          systems[k + 1].name,
                          ExpectedScores(threads, increments_done[k + 1]),
                          Scores(*stores[k]->target().board));
  }
  if (!redis.empty()) {
    const size_t s = 1 + stores.size();
    absl::StatusOr<std::vector<int64_t>> scores =
        RedisScores(*redis.front()->clients.front());
    if (!scores.ok()) {
      context.answers.Fail(kScenario, systems[s].name, scores.status());
    } else {
      context.answers.Check(
          kScenario, "scores after the increments", systems[s].name,
          ExpectedScores(threads, increments_done[s]), *scores);
    }
  }
  stores.clear();
  redis.clear();
  Recovery(context, parent);
}

}  // namespace feedcore::bench
