// Concurrency test of DurableStore, run under ThreadSanitizer in CI.
//
// Writer threads publish, retract, follow, unfollow and change scores on
// one store while a maintenance thread calls Compact(), Sync() and Stats()
// over and over, once per fsync policy: kAlways (every call waits for a
// group commit shared with the other writers) and kEverySecond (the
// background writer). Then:
//  * the state is exactly what the threads did: a shared board's scores are
//    the sums of every thread's increments, each thread's board holds its
//    last Set per member, each actor's own feed and each follower's
//    timeline hold the activities published and not retracted, an
//    unfollowed follower's timeline is empty, the engine counts every
//    activity published;
//  * every Stats() seen was consistent (nothing synced before it was
//    written, nothing written before it was appended, counters never went
//    back) and every Compact() and Sync() succeeded;
//  * closed and reopened, the store describes exactly as it did before
//    closing, and accepts a write.
//
// Iteration counts are fixed (scaled by FEEDCORE_STRESS_SCALE, default 1);
// nothing waits on time. The maintenance thread runs until the writers are
// done, and at least one whole round.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "feedcore/durable_store.h"
#include "feedcore/leaderboard.h"
#include "support/engine_state.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"
#include "support/test_util.h"
#include "support/thread_failures.h"

namespace feedcore {
namespace {

using testing::DescribeBoards;
using testing::DescribeEngine;
using testing::MakeActivity;
using testing::TempDir;

uint64_t Scale() { return testing::EnvU64("FEEDCORE_STRESS_SCALE", 1); }

constexpr Micros kStart = 1'000'000'000;
constexpr int kWriters = 4;
// Members of the shared board each thread increments, and of its own.
constexpr MemberId kSharedMembers = 16;
constexpr MemberId kOwnMembers = 8;
// Publishes by every thread in the name of this actor; each thread also
// has an actor of its own, and two followers: one that follows its actor
// throughout, one that unfollows it halfway.
constexpr EntityId kSharedActor = 1;
// Follows every actor before the threads start.
constexpr EntityId kWatcher = 2;

EntityId ActorOf(int thread) { return 10 + thread; }
EntityId FollowerOf(int thread) { return 100 + thread; }
EntityId LeaverOf(int thread) { return 200 + thread; }
std::string BoardOf(int thread) { return absl::StrCat("thread-", thread); }

std::vector<EntityId> Entities() {
  std::vector<EntityId> entities = {kSharedActor, kWatcher};
  for (int t = 0; t < kWriters; ++t) {
    entities.push_back(ActorOf(t));
    entities.push_back(FollowerOf(t));
    entities.push_back(LeaverOf(t));
  }
  return entities;
}

using testing::Failures;

EngineOptions Options() {
  EngineOptions options;
  options.shards = 4;
  options.sweep_interval = 0;
  // A fixed clock: nothing expires, so the state is only what the threads
  // did.
  options.clock = std::make_shared<ManualClock>(kStart);
  // Every activity published fits in the timelines that receive it.
  options.max_timeline_length = 1'000'000;
  options.world_timeline_length = 1'000'000;
  return options;
}

DurabilityOptions Durability(const std::string& directory, FsyncPolicy fsync) {
  DurabilityOptions options;
  options.directory = directory;
  options.fsync = fsync;
  options.segment_bytes = kMinLogSegmentBytes;
  // The background compactor runs too once the log passes a segment.
  options.compact_after_bytes = kMinLogSegmentBytes;
  return options;
}

// What one writer thread did, for the expected state.
struct Done {
  std::set<ActivityId> own;     // published by ActorOf(t), not retracted
  std::set<ActivityId> shared;  // published by kSharedActor, not retracted
  uint64_t published = 0;
  std::map<MemberId, int64_t> increments;  // on the shared board
  std::map<MemberId, int64_t> last_set;    // on BoardOf(t)
};

void Write(DurableStore& store, int t, uint64_t iterations, Done* done,
           Failures* failures) {
  InProcessFeedEngine& engine = store.engine();
  const std::string where = absl::StrCat("thread ", t);
  auto ok = [&](const absl::Status& s, const char* call, uint64_t i) {
    failures->Check(s, absl::StrCat(where, " iteration ", i, " ", call));
    return s.ok();
  };
  ok(engine.Follow(FollowerOf(t), ActorOf(t), {}).status(), "Follow", 0);
  ok(engine.Follow(LeaverOf(t), ActorOf(t), {}).status(), "Follow", 0);
  absl::StatusOr<std::shared_ptr<Leaderboard>> shared =
      store.boards().GetOrCreate("shared", {.partitions = 4});
  absl::StatusOr<std::shared_ptr<Leaderboard>> own =
      store.boards().GetOrCreate(BoardOf(t), {.partitions = 2});
  if (!ok(shared.status(), "GetOrCreate", 0) ||
      !ok(own.status(), "GetOrCreate", 0)) {
    return;
  }
  for (uint64_t i = 0; i < iterations; ++i) {
    const ActivityId id = (static_cast<ActivityId>(t) + 1) * 1'000'000 + i;
    const EntityId actor = i % 3 == 0 ? kSharedActor : ActorOf(t);
    const Micros ts =
        kStart - static_cast<Micros>(iterations) + static_cast<Micros>(i);
    if (ok(engine.Publish(MakeActivity(id, actor, ts), {}).status(), "Publish",
           i)) {
      ++done->published;
      (actor == kSharedActor ? done->shared : done->own).insert(id);
    }
    if (i % 5 == 4 && ok(engine.Retract(id), "Retract", i)) {
      done->own.erase(id);
      done->shared.erase(id);
    }
    if (i == iterations / 2) {
      ok(engine.Unfollow(LeaverOf(t), ActorOf(t)).status(), "Unfollow", i);
    }
    const MemberId member = (i * 7 + static_cast<MemberId>(t)) % kSharedMembers;
    const int64_t delta = static_cast<int64_t>(i % 13) - 6;
    if (ok((*shared)->Increment(member, delta).status(), "Increment", i)) {
      done->increments[member] += delta;
    }
    const MemberId mine = i % kOwnMembers;
    if (ok((*own)->Set(mine, static_cast<int64_t>(i)), "Set", i)) {
      done->last_set[mine] = static_cast<int64_t>(i);
    }
  }
}

// Compact, Sync and Stats until `stop`, at least once; counts compactions.
void Maintain(DurableStore& store, const std::atomic<bool>& stop,
              uint64_t* rounds, Failures* failures) {
  DurabilityStats last = store.Stats();
  do {
    failures->Check(store.Compact(), "Compact");
    failures->Check(store.Sync(), "Sync");
    const DurabilityStats stats = store.Stats();
    failures->Check(stats.write_error, "Stats().write_error");
    if (stats.synced_sequence > stats.written_sequence ||
        stats.written_sequence > stats.appended_sequence) {
      failures->Add(absl::StrCat("Stats: synced ", stats.synced_sequence,
                                 " written ", stats.written_sequence,
                                 " appended ", stats.appended_sequence));
    }
    if (stats.appended_sequence < last.appended_sequence ||
        stats.synced_sequence < last.synced_sequence ||
        stats.compactions < last.compactions || stats.fsyncs < last.fsyncs) {
      failures->Add("Stats: a counter went back");
    }
    last = stats;
    ++*rounds;
    // Acquire: pairs with the main thread's release store after the
    // writers joined; a plain flag is all that is read.
  } while (!stop.load(std::memory_order_acquire));
}

std::vector<std::string> Describe(DurableStore& store) {
  std::vector<std::string> lines = DescribeEngine(store.engine(), Entities());
  for (std::string& line : DescribeBoards(store.boards())) {
    lines.push_back(std::move(line));
  }
  return lines;
}

std::set<ActivityId> IdsIn(const std::vector<StoredEntry>& entries) {
  std::set<ActivityId> ids;
  for (const StoredEntry& e : entries) ids.insert(e.activity_id);
  return ids;
}

// The state checks against what the threads did.
void CheckDone(DurableStore& store, const std::vector<Done>& done) {
  InProcessFeedEngine& engine = store.engine();
  ReadOptions read;
  read.limit = engine.options().max_page_size;
  std::set<ActivityId> shared, all;
  uint64_t published = 0;
  std::map<MemberId, int64_t> scores;
  for (int t = 0; t < kWriters; ++t) {
    const Done& d = done[t];
    INFO("thread ", t);
    CHECK(IdsIn(testing::Own(engine, ActorOf(t), read)) == d.own);
    CHECK(IdsIn(testing::Timeline(engine, FollowerOf(t), read)) == d.own);
    CHECK(testing::Timeline(engine, LeaverOf(t), read).empty());
    CHECK(testing::FollowerSet(engine, ActorOf(t)) ==
          std::set<EntityId>{kWatcher, FollowerOf(t)});
    std::shared_ptr<Leaderboard> own = store.boards().Get(BoardOf(t)).value();
    CHECK(own->Size().value() == d.last_set.size());
    for (const auto& [member, score] : d.last_set) {
      CHECK(own->Score(member).value() == score);
    }
    shared.insert(d.shared.begin(), d.shared.end());
    all.insert(d.own.begin(), d.own.end());
    all.insert(d.shared.begin(), d.shared.end());
    published += d.published;
    for (const auto& [member, delta] : d.increments) scores[member] += delta;
  }
  CHECK(IdsIn(testing::Own(engine, kSharedActor, read)) == shared);
  CHECK(IdsIn(testing::Timeline(engine, kWatcher, read)) == all);
  CHECK(IdsIn(testing::World(engine, read)) == all);
  CHECK(engine.Stats().value().activities == published);
  std::shared_ptr<Leaderboard> board = store.boards().Get("shared").value();
  CHECK(board->Size().value() == scores.size());
  for (const auto& [member, score] : scores) {
    const MemberId m = member;  // INFO captures by reference
    INFO("member ", m);
    CHECK(board->Score(m).value() == score);
  }
}

void Run(FsyncPolicy fsync) {
  INFO("fsync ", FsyncPolicyName(fsync));
  TempDir dir(absl::StrCat("durable-stress-", FsyncPolicyName(fsync)));
  const uint64_t iterations = 500 * Scale();
  std::vector<std::string> before;
  {
    std::unique_ptr<DurableStore> store =
        DurableStore::Open(Durability(dir.path(), fsync), Options()).value();
    REQUIRE(store->engine().Follow(kWatcher, kSharedActor, {}).ok());
    for (int t = 0; t < kWriters; ++t) {
      REQUIRE(store->engine().Follow(kWatcher, ActorOf(t), {}).ok());
    }
    Failures failures;
    std::vector<Done> done(kWriters);
    std::atomic<bool> stop{false};
    uint64_t rounds = 0;
    // Everyone starts together, so that the writes overlap the
    // maintenance calls rather than run before them.
    std::latch start(kWriters + 1);
    std::thread maintainer([&] {
      start.arrive_and_wait();
      Maintain(*store, stop, &rounds, &failures);
    });
    std::vector<std::thread> writers;
    for (int t = 0; t < kWriters; ++t) {
      writers.emplace_back([&, t] {
        start.arrive_and_wait();
        Write(*store, t, iterations, &done[t], &failures);
      });
    }
    for (std::thread& w : writers) w.join();
    stop.store(true, std::memory_order_release);
    maintainer.join();
    failures.Report();
    CHECK(rounds >= 1);

    REQUIRE(store->Sync().ok());
    const DurabilityStats stats = store->Stats();
    CHECK(stats.write_error.ok());
    CHECK(stats.synced_sequence == stats.appended_sequence);
    CHECK(stats.compactions >= 1);
    CheckDone(*store, done);
    before = Describe(*store);
  }
  std::unique_ptr<DurableStore> store =
      DurableStore::Open(Durability(dir.path(), fsync), Options()).value();
  const std::vector<std::string> after = Describe(*store);
  REQUIRE(after.size() == before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    INFO("line ", i);
    REQUIRE(after[i] == before[i]);
  }
  CHECK(store->engine()
            .Publish(MakeActivity(1, kSharedActor, kStart + 1), {})
            .ok());
  CHECK(store->Sync().ok());
}

TEST_CASE("concurrent writers, compaction and syncs under kAlways") {
  Run(FsyncPolicy::kAlways);
}

TEST_CASE("concurrent writers, compaction and syncs under kEverySecond") {
  Run(FsyncPolicy::kEverySecond);
}

}  // namespace
}  // namespace feedcore
