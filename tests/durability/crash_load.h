// The load of the crash test (crash_test.cc), shared by the writer program
// that runs it against a DurableStore (crash_writer.cc) and by the test that
// replays it into the reference models: both derive every operation from
// (seed, thread, index) alone, so a line "thread 2 acknowledged op 417"
// names one exact call, and a restarted writer can continue any thread at
// any index.
//
// Each writer thread works on entities, activity ids and board members of
// its own (thread t uses the ids (t + 1) * kIdStride + k), plus one board
// shared by every thread with TieBreak::kLowerMemberFirst, where each thread
// writes only its own members. So the threads' calls commute: what the
// store holds for thread t's ids depends only on which of thread t's
// operations were applied, and one model per thread predicts every result
// exactly, whatever the interleaving was.
//
// Free of any test framework: the writer is a plain program.
#ifndef FEEDCORE_TESTS_DURABILITY_CRASH_LOAD_H_
#define FEEDCORE_TESTS_DURABILITY_CRASH_LOAD_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "feedcore/clock.h"
#include "feedcore/durable_store.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/options.h"
#include "feedcore/types.h"

namespace feedcore::crash {

// Ids of thread t are (t + 1) * kIdStride + k, k < kEntities (or kMembers).
inline constexpr uint64_t kIdStride = 1000;
inline constexpr uint64_t kEntities = 16;
inline constexpr uint64_t kMembers = 24;
inline constexpr size_t kMaxThreads = 8;
// The engine's clock stands still at kNow, in the writer and in the test,
// so expiries are the same numbers in the store and in the models and
// nothing expires.
inline constexpr Micros kNow = 1'700'000'000LL * kMicrosPerSecond;
inline constexpr char kSharedBoard[] = "shared";

// The options every process that opens a crash-test directory passes (a
// store must be reopened with the options it was written with).
inline EngineOptions CrashEngineOptions() {
  EngineOptions o;
  o.shards = 4;
  // Short timelines, so that publishes and back-fills trim them.
  o.max_timeline_length = 64;
  // A world feed that never trims: its slices per thread stay independent.
  o.world_timeline_length = 1'000'000;
  o.default_backfill = 8;
  o.sweep_interval = 0;
  o.clock = std::make_shared<ManualClock>(kNow);
  return o;
}

inline std::string ThreadBoard(size_t thread) {
  return absl::StrCat("player-", thread);
}
inline LeaderboardOptions ThreadBoardOptions() {
  return {.partitions = 4, .tie_break = TieBreak::kEarlierUpdateFirst};
}
inline LeaderboardOptions SharedBoardOptions() {
  return {.partitions = 8, .tie_break = TieBreak::kLowerMemberFirst};
}

inline EntityId EntityOf(size_t thread, uint64_t k) {
  return (thread + 1) * kIdStride + k;
}
inline bool OwnedBy(size_t thread, uint64_t id) {
  return id / kIdStride == thread + 1;
}

// Activity ids: publishes and low-level inserts of one thread never share
// one, and no two threads do.
inline ActivityId PublishId(size_t thread, uint64_t index) {
  return ((thread + 1) << 40) | index;
}
inline ActivityId InsertId(size_t thread, uint64_t index) {
  return ((thread + 1) << 40) | (uint64_t{1} << 39) | index;
}
// Distinct, increasing with the index: later writes are newer.
inline Micros TsOf(size_t thread, uint64_t index, Micros offset) {
  return kNow - 100'000'000 + static_cast<Micros>(index) * 10 + offset +
         static_cast<Micros>(thread);
}

enum class OpKind {
  kPublish,
  kFollow,
  kUnfollow,
  kInsert,
  kRetract,
  kSet,
  kIncrement,
  kIncrementMany,
  kRemove,
};

inline bool IsBoardOp(OpKind kind) { return kind >= OpKind::kSet; }

struct Op {
  OpKind kind = OpKind::kPublish;
  Activity activity;      // kPublish
  EntityId a = 0, b = 0;  // Follow/Unfollow: follower a, followee b;
                          // Insert: owner a
  TimelineEntry entry;    // kInsert
  ActivityId target = 0;  // kRetract
  std::string board;      // board operations
  MemberId member = 0;    // kSet, kIncrement, kRemove
  int64_t value = 0;      // kSet: score; kIncrement: delta
  std::vector<ScoreIncrement> batch;  // kIncrementMany
};

// Operation `index` of `thread`. `payload_max` bounds publish payloads
// (large ones fill log segments quickly).
inline Op MakeOp(uint64_t seed, size_t thread, uint64_t index,
                 size_t payload_max) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL ^ (thread + 1) << 48 ^
                      index * 0xBF58476D1CE4E5B9ULL);
  auto entity = [&] { return EntityOf(thread, rng() % kEntities); };
  auto member = [&] { return EntityOf(thread, rng() % kMembers); };
  auto board = [&] {
    return rng() % 3 == 0 ? std::string(kSharedBoard) : ThreadBoard(thread);
  };
  Op op;
  const uint64_t pick = rng() % 100;
  if (pick < 24) {
    op.kind = OpKind::kPublish;
    op.activity.id = PublishId(thread, index);
    op.activity.actor = entity();
    op.activity.ts = TsOf(thread, index, 0);
    const size_t size = 8 + rng() % (payload_max - 7);
    op.activity.payload = absl::StrCat(op.activity.id, ":");
    op.activity.payload.append(size, static_cast<char>('a' + index % 26));
  } else if (pick < 45) {
    op.kind = pick < 38 ? OpKind::kFollow : OpKind::kUnfollow;
    op.a = entity();
    op.b = entity();
    if (op.a == op.b) op.b = EntityOf(thread, (op.a + 1) % kEntities);
  } else if (pick < 52) {
    op.kind = OpKind::kInsert;
    op.a = entity();
    op.entry.ts = TsOf(thread, index, 5);
    op.entry.activity_id = InsertId(thread, index);
    op.entry.actor = entity();
  } else if (pick < 56) {
    // An earlier index of this thread: a publish (retracted once or twice),
    // or not (NotFound).
    op.kind = OpKind::kRetract;
    const uint64_t back = 1 + rng() % 40;
    op.target = PublishId(thread, index >= back ? index - back : index);
  } else if (pick < 68) {
    op.kind = OpKind::kSet;
    op.board = board();
    op.member = member();
    op.value = static_cast<int64_t>(rng() % 200);  // dense: many ties
  } else if (pick < 86) {
    op.kind = OpKind::kIncrement;
    op.board = board();
    op.member = member();
    op.value = static_cast<int64_t>(rng() % 41) - 10;
    if (op.value == 0) op.value = 7;
  } else if (pick < 95) {
    op.kind = OpKind::kIncrementMany;
    op.board = board();
    // Distinct members: each score of a batch recovered in part is then
    // the one before the batch or the one after it.
    const size_t n = 1 + rng() % 6;
    const uint64_t from = rng() % kMembers;
    for (size_t i = 0; i < n; ++i) {
      op.batch.push_back({EntityOf(thread, (from + i) % kMembers),
                          1 + static_cast<int64_t>(rng() % 30)});
    }
  } else {
    op.kind = OpKind::kRemove;
    op.board = board();
    op.member = member();
  }
  return op;
}

// The text a result is acknowledged with; the test computes the same text
// from the models' results and compares.
inline std::string StatusText(const absl::Status& status) {
  return absl::StatusCodeToString(status.code());
}
inline std::string PublishText(const absl::StatusOr<PublishResult>& r) {
  if (!r.ok()) return StatusText(r.status());
  return absl::StrCat("created=", r->created, " fanned_out=", r->fanned_out);
}
inline std::string FollowText(const FollowResult& r) {
  return absl::StrCat("created=", r.created, " backfilled=", r.backfilled);
}
inline std::string UnfollowText(const UnfollowResult& r) {
  return absl::StrCat("was_following=", r.was_following,
                      " removed=", r.removed);
}
inline std::string InsertText(const InsertResult& r) {
  return absl::StrCat("inserted=", r.inserted, " replaced=", r.replaced,
                      " rejected=", r.rejected_by_cap, " trimmed=", r.trimmed);
}
inline std::string ScoreText(const absl::StatusOr<int64_t>& r) {
  return r.ok() ? absl::StrCat(*r) : StatusText(r.status());
}

// Runs `op` on the store; returns its acknowledgement text.
inline std::string Apply(const Op& op, DurableStore& store) {
  InProcessFeedEngine& engine = store.engine();
  auto get_board = [&]() -> std::shared_ptr<Leaderboard> {
    return store.boards().Get(op.board).value();
  };
  switch (op.kind) {
    case OpKind::kPublish:
      return PublishText(engine.Publish(op.activity));
    case OpKind::kFollow: {
      absl::StatusOr<FollowResult> r = engine.Follow(op.a, op.b);
      return r.ok() ? FollowText(*r) : StatusText(r.status());
    }
    case OpKind::kUnfollow: {
      absl::StatusOr<UnfollowResult> r = engine.Unfollow(op.a, op.b);
      return r.ok() ? UnfollowText(*r) : StatusText(r.status());
    }
    case OpKind::kInsert: {
      absl::StatusOr<InsertResult> r = engine.Insert(op.a, op.entry);
      return r.ok() ? InsertText(*r) : StatusText(r.status());
    }
    case OpKind::kRetract:
      return StatusText(engine.Retract(op.target));
    case OpKind::kSet:
      return StatusText(get_board()->Set(op.member, op.value));
    case OpKind::kIncrement:
      return ScoreText(get_board()->Increment(op.member, op.value));
    case OpKind::kIncrementMany: {
      std::string text;
      for (const absl::StatusOr<int64_t>& r :
           get_board()->IncrementMany(op.batch)) {
        absl::StrAppend(&text, text.empty() ? "" : ",", ScoreText(r));
      }
      return text;
    }
    case OpKind::kRemove:
      return StatusText(get_board()->Remove(op.member));
  }
  return "unknown operation";
}

inline absl::StatusOr<FsyncPolicy> ParsePolicy(const std::string& name) {
  for (FsyncPolicy p :
       {FsyncPolicy::kAlways, FsyncPolicy::kEverySecond, FsyncPolicy::kNever}) {
    if (name == FsyncPolicyName(p)) return p;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown policy ", name));
}

}  // namespace feedcore::crash

#endif  // FEEDCORE_TESTS_DURABILITY_CRASH_LOAD_H_
