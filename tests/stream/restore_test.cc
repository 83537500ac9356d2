// Restore-then-resume, end to end and under concurrency: several threads
// run a random social workload on engine A (publish with notifications,
// follow and unfollow (one pair or several, keeping history or not),
// retract, marking notifications seen and read, read markers, inserts,
// removes, expiry) while another thread saves snapshots
// of it. Each snapshot is loaded into a new engine, which then applies A's
// change stream from the snapshot's sequence number; afterwards every
// replica must hold exactly what A holds. A registry of leaderboards
// records into the same stream and is saved and compared the same way.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "feedcore/change_stream.h"
#include "feedcore/leaderboard.h"
#include "feedcore/snapshot.h"
#include "support/engine_state.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::CheckSameState;
using testing::EnvU64;
using testing::MakeActivity;
using testing::NewManualEngine;

constexpr Micros kStart = 1'000'000'000;
constexpr EntityId kEntities = 40;

EngineOptions SourceOptions(std::shared_ptr<ManualClock> clock,
                            std::shared_ptr<ChangeStream> stream) {
  EngineOptions o;
  o.shards = 8;
  o.max_timeline_length = 40;
  o.world_timeline_length = 60;
  o.hybrid_fanout_threshold = 15;
  o.default_backfill = 5;
  o.fanout_threads = 1;
  o.parallel_fanout_min_followers = 4;
  o.change_stream = std::move(stream);
  o.clock = std::move(clock);
  return o;
}

// One thread's share of the workload; ids are unique per thread.
void RunWorkload(InProcessFeedEngine& engine, ManualClock& clock, uint64_t seed,
                 int thread, int ops) {
  std::mt19937_64 rng(seed + static_cast<uint64_t>(thread));
  auto entity = [&] { return 1 + rng() % kEntities; };
  std::vector<ActivityId> mine;
  ActivityId next_id = static_cast<ActivityId>(thread + 1) * 1'000'000;
  for (int i = 0; i < ops; ++i) {
    const int op = static_cast<int>(rng() % 100);
    const EntityId a = entity();
    EntityId b = entity();
    if (b == a) b = a % kEntities + 1;
    const Micros ts = kStart + static_cast<Micros>(rng() % 5000);
    if (op < 35) {
      const Micros ttl = rng() % 4 == 0 ? 20 * kMicrosPerMillisecond : 0;
      Activity act = MakeActivity(++next_id, a, ts, ttl);
      // Likes of a few objects, so notifications group.
      act.verb = rng() % 2;
      act.object = rng() % 3;
      PublishOptions options;
      for (uint64_t n = rng() % 4; n > 0; --n)
        options.notify.push_back(entity());
      for (uint64_t n = rng() % 3; n > 0; --n)
        options.mentions.push_back(entity());
      if (engine.Publish(act, options).ok()) mine.push_back(act.id);
    } else if (op < 36) {
      if (rng() % 2 == 0) {
        engine.MarkSeen(a).value();
      } else {
        engine.MarkAllRead(a).value();
      }
    } else if (op < 38) {
      const MarkedFeed feed = rng() % 3 == 0   ? MarkedFeed::Home(a)
                              : rng() % 2 == 0 ? MarkedFeed::Own(b)
                                               : MarkedFeed::World();
      SetMarkerOptions options;
      options.force = rng() % 4 == 0;
      engine.SetReadMarker(a, feed, {ts, rng() % 1000}, options).value();
    } else if (op < 41) {
      absl::StatusOr<GroupPage> page = engine.ReadNotifications(a, {});
      REQUIRE(page.ok());
      if (!page->groups.empty()) {
        const StoredEntry& e =
            page->groups[rng() % page->groups.size()].recent.front();
        // It may have expired or been retracted since.
        const absl::Status s =
            engine.MarkRead(a, {e.ts, e.activity_id}).status();
        REQUIRE((s.ok() || s.code() == absl::StatusCode::kNotFound));
      }
    } else if (op < 55) {
      if (rng() % 4 == 0) {
        const std::vector<FollowPair> pairs = {{a, b}, {b, a}, {a, entity()}};
        const absl::Status s = engine.FollowMany(pairs).status();
        // The third pair may be a self-follow, which refuses the batch.
        REQUIRE((s.ok() || s.code() == absl::StatusCode::kInvalidArgument));
      } else {
        REQUIRE(engine.Follow(a, b).ok());
      }
    } else if (op < 65) {
      UnfollowOptions options;
      options.keep_history = rng() % 3 == 0;
      if (rng() % 4 == 0) {
        const std::vector<FollowPair> pairs = {{a, b}, {b, a}};
        REQUIRE(engine.UnfollowMany(pairs, options).ok());
      } else {
        REQUIRE(engine.Unfollow(a, b, options).ok());
      }
    } else if (op < 72 && !mine.empty()) {
      const ActivityId id = mine[rng() % mine.size()];
      const absl::Status s = engine.Retract(id);
      REQUIRE((s.ok() || s.code() == absl::StatusCode::kNotFound));
    } else if (op < 85) {
      InsertOptions options;
      options.ttl = rng() % 3 == 0 ? 10 * kMicrosPerMillisecond : 0;
      REQUIRE(engine.Insert(a, {ts, ++next_id, b}, options).ok());
    } else if (op < 90) {
      const absl::Status s = engine.Remove(a, {ts, next_id});
      REQUIRE((s.ok() || s.code() == absl::StatusCode::kNotFound));
    } else if (op < 95) {
      clock.Advance(kMicrosPerMillisecond);
    } else {
      engine.EvictExpired(1 + rng() % 50).value();
    }
  }
}

// Score changes on a few boards (one ranked lower-first, two keeping
// metadata), conditional writes and metadata, with the occasional remove,
// clear, drop-and-recreate (the old handle keeps writing, which
// replicas must ignore), and renames: two boards swapping names, and a
// board renamed over another (whose old handle keeps writing too).
void RunBoardWorkload(LeaderboardRegistry& registry, uint64_t seed, int ops) {
  std::mt19937_64 rng(seed ^ 0x626f61726473ULL);
  std::vector<LeaderboardOptions> options(3);
  for (LeaderboardOptions& o : options) o.partitions = 4;
  options[1].score_order = ScoreOrder::kLowerFirst;
  options[1].max_metadata_bytes = 6;
  options[2].max_metadata_bytes = 3;
  const std::vector<std::string> names = {"x", "y", "z"};
  std::vector<std::shared_ptr<Leaderboard>> handles;
  for (size_t b = 0; b < names.size(); ++b) {
    handles.push_back(registry.GetOrCreate(names[b], options[b]).value());
  }
  for (int i = 0; i < ops; ++i) {
    const size_t b = rng() % names.size();
    Leaderboard& board = *handles[b];
    const MemberId member = 1 + rng() % 200;
    const int op = static_cast<int>(rng() % 1000);
    if (op < 450) {
      board.Increment(member, static_cast<int64_t>(rng() % 5) - 1)
          .IgnoreError();
    } else if (op < 500) {
      // A batch over the board's partitions, numbered when it starts.
      std::vector<ScoreIncrement> batch(1 + rng() % 20);
      for (ScoreIncrement& increment : batch) {
        increment = {1 + rng() % 200, static_cast<int64_t>(rng() % 5) - 1};
      }
      for (const absl::StatusOr<int64_t>& result : board.IncrementMany(batch)) {
        REQUIRE(result.ok());
      }
    } else if (op < 700) {
      REQUIRE(board.Set(member, static_cast<int64_t>(rng() % 20)).ok());
    } else if (op < 900) {
      // Conditional writes, alone or in batches, with metadata where the
      // board keeps it.
      std::vector<ScoreWrite> batch(rng() % 4 == 0 ? 1 + rng() % 20 : 1);
      for (ScoreWrite& write : batch) {
        write.member = 1 + rng() % 200;
        write.op = rng() % 2 == 0 ? WriteOp::kSet : WriteOp::kIncrement;
        write.value = static_cast<int64_t>(rng() % 20) - 5;
        write.condition = static_cast<WriteCondition>(rng() % 7);
        if (options[b].max_metadata_bytes > 0 && rng() % 2 == 0) {
          write.metadata = std::string(rng() % 4, static_cast<char>('a' + b));
        }
      }
      for (const absl::StatusOr<WriteResult>& result : board.WriteMany(batch)) {
        REQUIRE_MESSAGE(result.ok(), result.status());
      }
      if (options[b].max_metadata_bytes > 0) {
        const absl::Status s = board.SetMetadata(member, std::to_string(i % 7));
        REQUIRE((s.ok() || s.code() == absl::StatusCode::kNotFound));
      }
    } else if (op < 990) {
      board.Remove(member).IgnoreError();
    } else if (op < 995) {
      REQUIRE(board.Clear().ok());
    } else if (op < 997) {
      const size_t c = (b + 1) % names.size();
      REQUIRE(registry.Rename(names[b], "swap").ok());
      REQUIRE(registry.Rename(names[c], names[b]).ok());
      REQUIRE(registry.Rename("swap", names[c]).ok());
      std::swap(handles[b], handles[c]);
      std::swap(options[b], options[c]);
    } else if (op < 998) {
      const size_t c = (b + 1) % names.size();
      std::shared_ptr<Leaderboard> replaced = handles[c];
      REQUIRE(registry.Rename(names[b], names[c]).ok());
      handles[c] = std::move(handles[b]);
      std::swap(options[b], options[c]);
      handles[b] = registry.GetOrCreate(names[b], options[b]).value();
      REQUIRE(replaced->Set(member, 98).ok());
    } else {
      registry.Drop(names[b]).IgnoreError();
      std::shared_ptr<Leaderboard> fresh =
          registry.GetOrCreate(names[b], options[b]).value();
      // The stale handle writes once more before it is let go.
      REQUIRE(handles[b]->Set(member, 99).ok());
      handles[b] = std::move(fresh);
    }
  }
}

TEST_CASE(
    "replicas restored from snapshots taken under load catch up exactly") {
  const uint64_t seed = EnvU64("FEEDCORE_RESTORE_SEED", std::random_device{}());
  const int ops = static_cast<int>(EnvU64("FEEDCORE_RESTORE_OPS", 4000));
  INFO("seed ", seed, " (set FEEDCORE_RESTORE_SEED to repeat)");
  auto clock = std::make_shared<ManualClock>(kStart);
  ChangeStreamOptions stream_options;
  stream_options.max_records = 10'000'000;
  stream_options.max_bytes = size_t{1} << 32;
  stream_options.clock = clock;
  std::shared_ptr<ChangeStream> stream =
      ChangeStream::Create(stream_options).value();
  std::unique_ptr<InProcessFeedEngine> source =
      NewManualEngine(clock, SourceOptions(clock, stream));
  LeaderboardRegistry boards(stream);

  const std::string base = (std::filesystem::temp_directory_path() /
                            ("feedcore-restore-" + std::to_string(::getpid())))
                               .string();
  constexpr int kThreads = 3;
  constexpr int kSnapshots = 4;
  std::atomic<int> running{kThreads + 1};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      RunWorkload(*source, *clock, seed, t, ops);
      running.fetch_sub(1);
    });
  }
  threads.emplace_back([&] {
    RunBoardWorkload(boards, seed, 2 * ops);
    running.fetch_sub(1);
  });
  std::vector<std::string> paths;
  std::vector<uint64_t> sequences;
  for (int s = 0; s < kSnapshots; ++s) {
    // Spread the snapshots over the run; the last may come after it.
    while (running.load() > 0 &&
           stream->Stats().next_sequence <
               static_cast<uint64_t>(s + 1) * kThreads * ops * 2 / kSnapshots) {
      std::this_thread::yield();
    }
    paths.push_back(base + "-" + std::to_string(s));
    absl::StatusOr<SnapshotInfo> info =
        SaveSnapshot(*source, paths.back(), &boards);
    REQUIRE_MESSAGE(info.ok(), info.status());
    sequences.push_back(info->sequence);
  }
  for (std::thread& t : threads) t.join();
  source->WaitForFanout();
  CHECK(stream->Stats().dropped == 0);

  std::vector<EntityId> universe;
  for (EntityId id = 1; id <= kEntities; ++id) universe.push_back(id);
  for (size_t s = 0; s < paths.size(); ++s) {
    INFO("snapshot ", s, " at sequence ", sequences[s]);
    EngineOptions options = SourceOptions(clock, nullptr);
    options.sweep_interval = 0;
    absl::StatusOr<std::unique_ptr<Replica>> replica =
        LoadSnapshot(paths[s], options);
    REQUIRE_MESSAGE(replica.ok(), replica.status());
    CHECK((*replica)->sequence() == sequences[s]);
    auto reader =
        stream->NewReader(StreamPosition::AtSequence((*replica)->sequence()));
    REQUIRE_MESSAGE(reader.ok(), reader.status());
    for (;;) {
      absl::StatusOr<std::vector<ChangeRecordPtr>> batch =
          (*reader)->Read(1000);
      REQUIRE_MESSAGE(batch.ok(), batch.status());
      if (batch->empty()) break;
      for (const ChangeRecordPtr& record : *batch) {
        const absl::Status status = (*replica)->Apply(*record);
        REQUIRE_MESSAGE(status.ok(), status);
      }
    }
    CheckSameState(*source, (*replica)->engine(), universe);
    testing::CheckSameBoards(boards, (*replica)->boards());
    MESSAGE("snapshot ", s, ": sequence ", sequences[s], ", applied ",
            (*replica)->applied(), ", skipped ", (*replica)->skipped());
    if (s == 0) CHECK((*replica)->applied() > 0);
    std::remove(paths[s].c_str());
  }
}

}  // namespace
}  // namespace feedcore
