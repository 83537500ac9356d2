// Tests of DurableStore: what was acknowledged is in the directory (a copy
// of the directory taken right after a call returned is a crash image, and
// recovers to the same state as an engine that made the same calls in
// memory), torn tails are cut, damage is DataLoss naming file and offset,
// compaction deletes what a snapshot covers, and a disk that fails makes
// writes fail without changing anything.
#include "feedcore/durable_store.h"

#include <doctest/doctest.h>
#include <errno.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "durability/durable_log.h"
#include "durability/recovery.h"
#include "feedcore/leaderboard.h"
#include "support/engine_state.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"

namespace feedcore {
namespace {

namespace fs = std::filesystem;
using testing::CheckSameBoards;
using testing::CheckSameState;
using testing::CopyDirectory;
using testing::MakeActivity;
using testing::ReadBytes;
using testing::TempDir;
using testing::WriteBytes;

constexpr Micros kStart = 1'000'000'000;
const std::vector<EntityId> kEntities = {1, 2, 3, 4, 5, 6, 7, 8};

EngineOptions Options(std::shared_ptr<ManualClock> clock) {
  EngineOptions options;
  options.shards = 4;
  options.sweep_interval = 0;
  options.clock = std::move(clock);
  return options;
}

DurabilityOptions Durability(const std::string& directory,
                             FsyncPolicy fsync = FsyncPolicy::kAlways) {
  DurabilityOptions options;
  options.directory = directory;
  options.fsync = fsync;
  options.segment_bytes = kMinLogSegmentBytes;
  options.compact_after_bytes = 0;
  return options;
}

std::unique_ptr<DurableStore> OpenOrFail(const DurabilityOptions& durability,
                                         const EngineOptions& options) {
  absl::StatusOr<std::unique_ptr<DurableStore>> store =
      DurableStore::Open(durability, options);
  REQUIRE_MESSAGE(store.ok(), store.status());
  return *std::move(store);
}

// The same calls on a durable store and on a plain engine and registry.
struct Pair {
  explicit Pair(DurableStore& store, std::shared_ptr<ManualClock> clock)
      : durable(store), plain(FeedEngine::Create(Options(clock)).value()) {}

  void Step(int i) {
    const EntityId actor = 1 + i % 5;
    switch (i % 6) {
      case 0:
      case 1: {
        Activity a = MakeActivity(100 + i, actor, kStart + i);
        CHECK(durable.engine().Publish(a, {}).ok());
        CHECK(plain->Publish(a, {}).ok());
        break;
      }
      case 2: {
        const EntityId follower = 1 + (i * 7) % 8;
        if (follower == actor) break;
        CHECK(durable.engine().Follow(follower, actor, {}).ok());
        CHECK(plain->Follow(follower, actor, {}).ok());
        break;
      }
      case 3: {
        auto a = durable.boards().GetOrCreate("arena").value();
        auto b = plain_boards.GetOrCreate("arena").value();
        CHECK(a->Increment(actor, i).ok());
        CHECK(b->Increment(actor, i).ok());
        break;
      }
      case 4: {
        auto a = durable.boards().GetOrCreate("season").value();
        auto b = plain_boards.GetOrCreate("season").value();
        CHECK(a->Set(actor, -i).ok());
        CHECK(b->Set(actor, -i).ok());
        break;
      }
      case 5: {
        const EntityId follower = 1 + (i * 3) % 8;
        if (follower == actor) break;
        CHECK(durable.engine().Unfollow(follower, actor).ok());
        CHECK(plain->Unfollow(follower, actor).ok());
        break;
      }
    }
  }

  DurableStore& durable;
  std::unique_ptr<InProcessFeedEngine> plain;
  LeaderboardRegistry plain_boards;
};

std::vector<std::string> Segments(const std::string& directory) {
  std::vector<std::string> segments;
  for (const auto& entry : fs::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, "log-") && absl::EndsWith(name, ".fclog")) {
      segments.push_back(entry.path().string());
    }
  }
  std::sort(segments.begin(), segments.end());
  return segments;
}

TEST_CASE("every acknowledged call is in a copy of the directory") {
  TempDir dir("durable-ack"), image("durable-ack-image");
  auto clock = std::make_shared<ManualClock>(kStart);
  auto store = OpenOrFail(Durability(dir.path()), Options(clock));
  Pair pair(*store, clock);
  for (int i = 0; i < 60; ++i) {
    pair.Step(i);
    if (i % 7 != 6) continue;
    // kAlways: the copy holds everything acknowledged so far.
    CopyDirectory(dir.path(), image.path());
    auto recovered = OpenOrFail(Durability(image.path()), Options(clock));
    CheckSameState(*pair.plain, recovered->engine(), kEntities);
    CheckSameBoards(pair.plain_boards, recovered->boards());
  }
  const DurabilityStats stats = store->Stats();
  CHECK(stats.synced_sequence == stats.appended_sequence);
  CHECK(stats.write_error.ok());
}

TEST_CASE("reopening continues the sequence and the state") {
  TempDir dir("durable-reopen");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> plain;
  LeaderboardRegistry plain_boards;
  uint64_t last = 0;
  {
    auto store =
        OpenOrFail(Durability(dir.path(), FsyncPolicy::kNever), Options(clock));
    Pair pair(*store, clock);
    for (int i = 0; i < 40; ++i) pair.Step(i);
    last = store->Stats().appended_sequence;
    CHECK(last > 0);
    // Destroying the store writes and syncs, whatever the policy.
    plain = std::move(pair.plain);
    for (const std::string& name : pair.plain_boards.Names()) {
      auto from = pair.plain_boards.Get(name).value();
      auto to = plain_boards.GetOrCreate(name).value();
      const std::vector<LeaderboardEntry> entries = from->TopK(100).value();
      for (const LeaderboardEntry& e : entries) {
        REQUIRE(to->Set(e.member, e.score).ok());
      }
    }
  }
  auto store = OpenOrFail(Durability(dir.path()), Options(clock));
  CheckSameState(*plain, store->engine(), kEntities);
  const DurabilityStats stats = store->Stats();
  CHECK(stats.recovered_records > 0);
  CHECK(stats.appended_sequence == last);
  CHECK(store->engine().Publish(MakeActivity(9999, 1, kStart + 99), {}).ok());
  CHECK(store->Stats().appended_sequence > last);
}

TEST_CASE("a rename survives reopening, from the log and from a snapshot") {
  TempDir dir("durable-rename");
  auto clock = std::make_shared<ManualClock>(kStart);
  const auto scores = [](DurableStore& store, const std::string& name) {
    std::vector<std::pair<MemberId, int64_t>> out;
    const std::vector<LeaderboardEntry> entries =
        store.boards().Get(name).value()->TopK(100).value();
    for (const LeaderboardEntry& e : entries)
      out.emplace_back(e.member, e.score);
    return out;
  };
  const std::vector<std::pair<MemberId, int64_t>> want = {
      {3, 30}, {1, 10}, {2, 5}};
  uint64_t generation = 0;
  {
    auto store =
        OpenOrFail(Durability(dir.path(), FsyncPolicy::kNever), Options(clock));
    auto built = store->boards().GetOrCreate("building").value();
    auto live = store->boards().GetOrCreate("live").value();
    REQUIRE(built->Set(1, 10).ok());
    REQUIRE(built->Set(2, 5).ok());
    REQUIRE(live->Set(7, 70).ok());
    generation = store->boards().Generation("building").value();
    REQUIRE(store->boards().Rename("building", "live").ok());
    // Writes through both old handles after the rename: the renamed
    // board's land on "live", the dropped board's nowhere.
    REQUIRE(built->Set(3, 30).ok());
    REQUIRE(live->Set(8, 80).ok());
  }
  {
    auto store = OpenOrFail(Durability(dir.path()), Options(clock));
    CHECK(store->boards().Names() == std::vector<std::string>{"live"});
    CHECK(scores(*store, "live") == want);
    CHECK(store->boards().Generation("live").value() == generation);
    REQUIRE(store->Compact().ok());
    REQUIRE(store->boards().Rename("live", "archive").ok());
    REQUIRE(store->boards().Get("archive").value()->Set(4, 1).ok());
  }
  auto store = OpenOrFail(Durability(dir.path()), Options(clock));
  CHECK(store->boards().Names() == std::vector<std::string>{"archive"});
  std::vector<std::pair<MemberId, int64_t>> archived = want;
  archived.emplace_back(4, 1);
  CHECK(scores(*store, "archive") == archived);
  CHECK(store->boards().Generation("archive").value() == generation);
}

TEST_CASE(
    "edits and pins survive reopening, from the log and from a "
    "snapshot") {
  TempDir dir("durable-edits");
  auto clock = std::make_shared<ManualClock>(kStart);
  const auto state = [](DurableStore& store) {
    ReadOptions read;
    read.hydrate = true;
    std::vector<StoredEntry> all =
        store.engine().ReadOwn(1, read).value().entries;
    const std::vector<StoredEntry> pinned =
        store.engine().ReadPinned(1, /*hydrate=*/true).value();
    all.insert(all.end(), pinned.begin(), pinned.end());
    return all;
  };
  std::vector<StoredEntry> want;
  {
    auto store =
        OpenOrFail(Durability(dir.path(), FsyncPolicy::kNever), Options(clock));
    InProcessFeedEngine& engine = store->engine();
    for (ActivityId id = 1; id <= 4; ++id) {
      REQUIRE(engine.Publish(MakeActivity(id, 1, kStart + id), {}).ok());
    }
    clock->Advance(5);
    REQUIRE(engine.EditActivity(1, 2, "corrected").ok());
    REQUIRE(engine.Pin(1, 2).value());
    REQUIRE(engine.Pin(1, 3).value());
    REQUIRE(engine.Pin(1, 4).value());
    REQUIRE(engine.Retract(4).ok());
    want = state(*store);
    REQUIRE(want.size() == 5);
    CHECK(want[3].activity_id == 3);
    CHECK(want[4].payload == "corrected");
    CHECK(want[4].edited_at == kStart + 5);
  }
  {
    auto store = OpenOrFail(Durability(dir.path()), Options(clock));
    CHECK(state(*store) == want);
    REQUIRE(store->Compact().ok());
    REQUIRE(store->engine().Unpin(1, 3).value());
    clock->Advance(5);
    REQUIRE(store->engine().EditActivity(1, 1, "again").ok());
    want = state(*store);
  }
  auto store = OpenOrFail(Durability(dir.path()), Options(clock));
  CHECK(state(*store) == want);
  CHECK(store->engine().ReadPinned(1, false).value().size() == 1);
}

TEST_CASE(
    "reactions and their notices survive reopening, from the log and from a "
    "snapshot") {
  TempDir dir("durable-reactions");
  auto clock = std::make_shared<ManualClock>(kStart);
  // Everything a reaction changes: the reactors of each kind, what each
  // user reacted with, the counters and the actor's notifications.
  const auto state = [](DurableStore& store) {
    InProcessFeedEngine& engine = store.engine();
    std::vector<std::string> out;
    const ActivityId ids[] = {1, 2};
    for (const ActivityId id : ids) {
      for (ReactionKind kind = 0; kind < 2; ++kind) {
        ListOptions list;
        list.limit = 100;
        const ReactorPage page = engine.ReadReactors(id, kind, list).value();
        for (const Reactor& r : page.reactors) {
          out.push_back(absl::StrCat("reactor ", id, "/", kind, " ", r.user,
                                     "@", r.reacted_at));
        }
      }
      out.push_back(
          absl::StrCat("counters ", id, " ",
                       absl::StrJoin(engine.GetCounters(id).value(), ",")));
    }
    for (EntityId user = 2; user <= 4; ++user) {
      out.push_back(absl::StrCat(
          "own ", user, " ",
          absl::StrJoin(engine.GetOwnReactions(user, ids).value(), ",")));
    }
    const GroupPage notifications = engine.ReadNotifications(1, {}).value();
    for (const FeedGroup& g : notifications.groups) {
      for (const StoredEntry& e : g.recent) {
        out.push_back(absl::StrCat("notice ", e.activity_id, " by ", e.actor));
      }
    }
    return out;
  };
  std::vector<std::string> want;
  {
    auto store =
        OpenOrFail(Durability(dir.path(), FsyncPolicy::kNever), Options(clock));
    InProcessFeedEngine& engine = store->engine();
    REQUIRE(engine.Publish(MakeActivity(1, 1, kStart), {}).ok());
    REQUIRE(engine.Publish(MakeActivity(2, 1, kStart + 1), {}).ok());
    ReactOptions notice;
    notice.notice_id = 100;
    REQUIRE(engine.React(2, 1, 0, notice).value().notified);
    clock->Advance(1);
    REQUIRE(engine.React(3, 1, 0).ok());
    REQUIRE(engine.React(3, 1, 1).ok());
    REQUIRE(engine.React(4, 2, 1).ok());
    clock->Advance(1);
    notice.notice_id = 101;
    REQUIRE(engine.React(4, 1, 0, notice).value().notified);
    REQUIRE(engine.Unreact(3, 1, 1).value().changed);
    want = state(*store);
    REQUIRE(want.size() == 11);
  }
  {
    auto store = OpenOrFail(Durability(dir.path()), Options(clock));
    CHECK(state(*store) == want);
    REQUIRE(store->Compact().ok());
    // Taken back after the snapshot: the notice goes from the log.
    REQUIRE(store->engine().Unreact(2, 1, 0).value().changed);
    clock->Advance(1);
    REQUIRE(store->engine().React(2, 2, 0).ok());
    want = state(*store);
    CHECK(std::count(want.begin(), want.end(), "notice 100 by 2") == 0);
  }
  auto store = OpenOrFail(Durability(dir.path()), Options(clock));
  CHECK(state(*store) == want);
  CHECK(std::count(want.begin(), want.end(), "notice 101 by 4") == 1);
}

TEST_CASE("a write group reaches the disk whole or not at all") {
  for (const FsyncPolicy policy :
       {FsyncPolicy::kAlways, FsyncPolicy::kEverySecond}) {
    INFO("policy ", static_cast<int>(policy));
    TempDir dir("durable-group");
    const std::string crash = dir.path() + "-crash";
    auto clock = std::make_shared<ManualClock>(kStart);
    auto store = OpenOrFail(Durability(dir.path(), policy), Options(clock));
    auto board = store->boards().GetOrCreate("arena").value();
    REQUIRE(board->Set(1, 1).ok());
    REQUIRE(store->Sync().ok());
    absl::StatusOr<std::unique_ptr<DurableStore::WriteGroup>> group =
        store->BeginWriteGroup();
    REQUIRE_MESSAGE(group.ok(), group.status());
    CHECK(store->BeginWriteGroup().status().code() ==
          absl::StatusCode::kFailedPrecondition);
    // Calls in the group return at once, even under kAlways.
    REQUIRE(board->Set(2, 2).ok());
    REQUIRE(store->engine().Publish(MakeActivity(500, 3, kStart), {}).ok());
    REQUIRE(board->Increment(1, 10).ok());
    // Another thread's write lands behind the open group.
    std::thread other([&] {
      REQUIRE(store->boards().GetOrCreate("other").value()->Set(9, 9).ok());
    });
    // What a crash now leaves: none of the group.
    CopyDirectory(dir.path(), crash);
    {
      auto recovered = OpenOrFail(Durability(crash), Options(clock));
      auto arena = recovered->boards().Get("arena").value();
      CHECK(arena->Score(1).value() == 1);
      CHECK(arena->Score(2).status().code() == absl::StatusCode::kNotFound);
      CHECK(recovered->engine().ReadOwn(3, {}).value().entries.empty());
    }
    REQUIRE((*group)->Close().ok());
    other.join();
    REQUIRE(store->Sync().ok());
    CopyDirectory(dir.path(), crash);
    auto recovered = OpenOrFail(Durability(crash), Options(clock));
    auto arena = recovered->boards().Get("arena").value();
    CHECK(arena->Score(1).value() == 11);
    CHECK(arena->Score(2).value() == 2);
    CHECK(recovered->engine().ReadOwn(3, {}).value().entries.size() == 1);
    CHECK(recovered->boards().Get("other").value()->Score(9).value() == 9);
    fs::remove_all(crash);
  }
}

TEST_CASE(
    "a write group's tag is durable with the group and outlives "
    "compaction") {
  TempDir dir("durable-group-tag");
  const std::string crash = dir.path() + "-crash";
  auto clock = std::make_shared<ManualClock>(kStart);
  auto store = OpenOrFail(Durability(dir.path()), Options(clock));
  CHECK(store->Stats().write_group_tag == 0);
  auto board = store->boards().GetOrCreate("arena").value();
  {
    auto group = store->BeginWriteGroup(7).value();
    REQUIRE(board->Set(1, 1).ok());
    REQUIRE(group->Close().ok());
  }
  CHECK(store->Stats().write_group_tag == 7);
  // Tags only rise; a refused tag begins nothing.
  for (const uint64_t stale : {uint64_t{7}, uint64_t{3}}) {
    absl::StatusOr<std::unique_ptr<DurableStore::WriteGroup>> refused =
        store->BeginWriteGroup(stale);
    CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(refused.status().message(), "largest, 7"));
  }
  REQUIRE(board->Set(2, 2).ok());  // not inside a group: nothing open
  // A group still open when the process dies: neither it nor its tag.
  auto open_group = store->BeginWriteGroup(8).value();
  REQUIRE(board->Set(3, 3).ok());
  CopyDirectory(dir.path(), crash);
  {
    auto recovered = OpenOrFail(Durability(crash), Options(clock));
    CHECK(recovered->Stats().write_group_tag == 7);
    CHECK(recovered->boards().Get("arena").value()->Score(3).status().code() ==
          absl::StatusCode::kNotFound);
  }
  fs::remove_all(crash);
  REQUIRE(open_group->Close().ok());
  // Compaction deletes the segments that held the tag records; the tag
  // stays, through one reopen and the next.
  REQUIRE(store->Compact().ok());
  REQUIRE(store->Compact().ok());
  store.reset();
  for (int reopen = 0; reopen < 2; ++reopen) {
    store = OpenOrFail(Durability(dir.path()), Options(clock));
    CHECK(store->Stats().write_group_tag == 8);
    CHECK(store->boards().Get("arena").value()->Score(3).value() == 3);
    REQUIRE(store->Compact().ok());
    store.reset();
  }
}

TEST_CASE("reopening with a smaller cap keeps each timeline's newest") {
  TempDir dir("durable-cap");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::vector<StoredEntry> before;
  {
    auto store = OpenOrFail(Durability(dir.path()), Options(clock));
    for (ActivityId id = 1; id <= 30; ++id) {
      REQUIRE(store->engine()
                  .Insert(1, {kStart + static_cast<Micros>(id), id, 2})
                  .ok());
    }
    REQUIRE(store->Compact().ok());  // the snapshot holds 30
    for (ActivityId id = 31; id <= 35; ++id) {
      REQUIRE(store->engine()
                  .Insert(1, {kStart + static_cast<Micros>(id), id, 2})
                  .ok());
    }
    ReadOptions read;
    read.limit = 100;
    before = store->engine().ReadTimeline(1, read).value().entries;
    REQUIRE(before.size() == 35);
  }
  EngineOptions smaller = Options(clock);
  smaller.max_timeline_length = 10;
  smaller.default_ttl = kMicrosPerHour;
  auto store = OpenOrFail(Durability(dir.path()), smaller);
  ReadOptions read;
  read.limit = 100;
  const std::vector<StoredEntry> after =
      store->engine().ReadTimeline(1, read).value().entries;
  REQUIRE(after.size() == 10);
  CHECK(std::equal(after.begin(), after.end(), before.begin()));
  REQUIRE(store->engine().Insert(1, {kStart + 36, 36, 2}).ok());
  CHECK(store->engine().ReadTimeline(1, read).value().entries.size() == 10);
}

TEST_CASE("Sync and Compact return with nothing new to write") {
  TempDir dir("durable-idle");
  auto clock = std::make_shared<ManualClock>(kStart);
  for (FsyncPolicy fsync :
       {FsyncPolicy::kAlways, FsyncPolicy::kEverySecond, FsyncPolicy::kNever}) {
    std::filesystem::remove_all(dir.path());
    auto store = OpenOrFail(Durability(dir.path(), fsync), Options(clock));
    CHECK(store->Sync().ok());  // a fresh store
    CHECK(store->Sync().ok());
    CHECK(store->Compact().ok());
    CHECK(store->Compact().ok());
    auto board = store->boards().GetOrCreate("arena").value();
    CHECK(board->Set(1, 10).ok());
    CHECK(store->Sync().ok());
    CHECK(store->Sync().ok());
    CHECK(store->Compact().ok());
    CHECK(store->Compact().ok());
    CHECK(store->Stats().compactions == 4);
  }
}

TEST_CASE("a second store on the same directory is refused") {
  TempDir dir("durable-lock");
  auto clock = std::make_shared<ManualClock>(kStart);
  auto store = OpenOrFail(Durability(dir.path()), Options(clock));
  absl::StatusOr<std::unique_ptr<DurableStore>> second =
      DurableStore::Open(Durability(dir.path()), Options(clock));
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("bad options are refused, naming the field") {
  auto clock = std::make_shared<ManualClock>(kStart);
  DurabilityOptions empty;
  auto s = DurableStore::Open(empty, Options(clock));
  REQUIRE_FALSE(s.ok());
  CHECK(absl::StrContains(s.status().message(), "directory"));
  TempDir dir("durable-options");
  DurabilityOptions small = Durability(dir.path());
  small.segment_bytes = 1000;
  s = DurableStore::Open(small, Options(clock));
  REQUIRE_FALSE(s.ok());
  CHECK(absl::StrContains(s.status().message(), "segment_bytes"));
  CHECK(fs::is_empty(dir.path()));  // nothing created
}

TEST_CASE("a torn tail is cut; damage before the end is DataLoss") {
  TempDir dir("durable-torn");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> plain;
  {
    auto store = OpenOrFail(Durability(dir.path()), Options(clock));
    Pair pair(*store, clock);
    for (int i = 0; i < 30; ++i) pair.Step(i);
    plain = std::move(pair.plain);
  }
  std::vector<std::string> segments = Segments(dir.path());
  REQUIRE(segments.size() == 1);
  const std::string whole = ReadBytes(segments[0]);

  SUBCASE("half a frame at the end") {
    WriteBytes(segments[0], whole + std::string("\x40\x00\x00\x00\x01", 5));
    auto store = OpenOrFail(Durability(dir.path()), Options(clock));
    CHECK(store->Stats().recovered_torn_tail);
    CheckSameState(*plain, store->engine(), kEntities);
    CHECK(ReadBytes(segments[0]) == whole);
  }
  SUBCASE("a flipped byte in the middle") {
    std::string damaged = whole;
    damaged[whole.size() / 2] ^= 0x5a;
    WriteBytes(segments[0], damaged);
    auto store = DurableStore::Open(Durability(dir.path()), Options(clock));
    REQUIRE_FALSE(store.ok());
    CHECK(store.status().code() == absl::StatusCode::kDataLoss);
    CHECK(absl::StrContains(store.status().message(), segments[0]));
    CHECK(absl::StrContains(store.status().message(), "at byte"));
  }
}

TEST_CASE("compaction deletes covered segments and keeps the state") {
  TempDir dir("durable-compact");
  auto clock = std::make_shared<ManualClock>(kStart);
  auto store = OpenOrFail(Durability(dir.path()), Options(clock));
  Pair pair(*store, clock);
  for (int i = 0; i < 30; ++i) pair.Step(i);
  const std::vector<std::string> before = Segments(dir.path());
  REQUIRE(store->Compact().ok());
  for (int i = 30; i < 50; ++i) pair.Step(i);
  const std::vector<std::string> after = Segments(dir.path());
  REQUIRE(after.size() == 1);
  CHECK(after[0] != before.back());
  const DurabilityStats stats = store->Stats();
  CHECK(stats.compactions == 1);
  CHECK(stats.snapshot_sequence > 1);
  TempDir image("durable-compact-image");
  CopyDirectory(dir.path(), image.path());
  auto recovered = OpenOrFail(Durability(image.path()), Options(clock));
  CheckSameState(*pair.plain, recovered->engine(), kEntities);
  CheckSameBoards(pair.plain_boards, recovered->boards());
}

TEST_CASE("a log that ends before the snapshot goes on in a new segment") {
  // The snapshot of a compaction, next to the log it covered cut back to
  // a torn tail, without the segment the compaction started: every record
  // left is below the snapshot's sequence.
  TempDir dir("durable-covered");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> plain;
  {
    auto store = OpenOrFail(Durability(dir.path()), Options(clock));
    Pair pair(*store, clock);
    for (int i = 0; i < 30; ++i) pair.Step(i);
    plain = std::move(pair.plain);
  }
  const std::vector<std::string> covered = Segments(dir.path());
  REQUIRE(covered.size() == 1);
  const std::string whole = ReadBytes(covered[0]);
  {
    auto store = OpenOrFail(Durability(dir.path()), Options(clock));
    REQUIRE(store->Compact().ok());
  }
  for (const std::string& segment : Segments(dir.path())) fs::remove(segment);
  WriteBytes(covered[0], whole.substr(0, whole.size() / 2));

  {
    auto store = OpenOrFail(Durability(dir.path()), Options(clock));
    CheckSameState(*plain, store->engine(), kEntities);
    const Activity a = MakeActivity(9999, 1, kStart + 99);
    REQUIRE(store->engine().Publish(a, {}).ok());
    REQUIRE(plain->Publish(a, {}).ok());
  }
  // The covered segment is gone; what the store wrote after it reopens.
  CHECK_FALSE(fs::exists(covered[0]));
  auto store = OpenOrFail(Durability(dir.path()), Options(clock));
  CheckSameState(*plain, store->engine(), kEntities);
}

// Fails the calls it is told to, as a broken or full disk does, and
// records the reservations asked for.
class FailingCalls final : public internal::SegmentFileCalls {
 public:
  int Reserve(int fd, off_t bytes) override {
    if (fail_reserve) {
      errno = ENOSPC;
      return -1;
    }
    std::lock_guard lock(mu);
    reservations.push_back(static_cast<uint64_t>(bytes));
    return SegmentFileCalls::Reserve(fd, bytes);
  }
  // With fail_write, the disk fills in the middle of a write: the first
  // call writes half of what it is given, the next find no room.
  ssize_t Write(int fd, const char* data, size_t size) override {
    if (fail_write) {
      if (size > 1 && !half_written.exchange(true)) {
        return SegmentFileCalls::Write(fd, data, size / 2);
      }
      errno = ENOSPC;
      return -1;
    }
    half_written = false;
    return SegmentFileCalls::Write(fd, data, size);
  }
  int Sync(int fd) override {
    if (fail_sync) {
      errno = EIO;
      return -1;
    }
    return SegmentFileCalls::Sync(fd);
  }
  std::atomic<bool> fail_reserve{false};
  std::atomic<bool> fail_sync{false};
  std::atomic<bool> fail_write{false};
  std::atomic<bool> half_written{false};
  std::mutex mu;
  std::vector<uint64_t> reservations;
};

TEST_CASE("a store that writes little reserves little disk") {
  TempDir dir("durable-small");
  auto clock = std::make_shared<ManualClock>(kStart);
  auto calls = std::make_shared<FailingCalls>();
  DurabilityOptions durability = Durability(dir.path(), FsyncPolicy::kNever);
  durability.segment_bytes = uint64_t{64} << 20;
  auto store =
      internal::OpenDurableStore(durability, Options(clock), calls).value();
  {
    std::lock_guard lock(calls->mu);
    CHECK(calls->reservations == std::vector<uint64_t>{1 << 20});
  }
  // Past half of each reservation, the next pass doubles it.
  ActivityId id = 1;
  for (uint64_t want : {uint64_t{2} << 20, uint64_t{4} << 20}) {
    CAPTURE(want);
    while (true) {
      {
        std::lock_guard lock(calls->mu);
        if (calls->reservations.back() >= want) break;
      }
      Activity a = MakeActivity(id, 1 + id % 5, kStart + id);
      a.payload.assign(4096, 'x');
      ++id;
      REQUIRE(store->engine().Publish(a, {}).ok());
      REQUIRE(store->Sync().ok());
    }
    std::lock_guard lock(calls->mu);
    CHECK(calls->reservations.back() == want);
  }
}

TEST_CASE("no room for a new store's log is an error naming it, not a crash") {
  TempDir dir("durable-no-room");
  auto clock = std::make_shared<ManualClock>(kStart);
  auto calls = std::make_shared<FailingCalls>();
  calls->fail_reserve = true;
  absl::StatusOr<std::unique_ptr<DurableStore>> store =
      internal::OpenDurableStore(Durability(dir.path()), Options(clock), calls);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(absl::StrContains(
      store.status().message(),
      absl::StrCat("reserving 1048576 bytes in ", dir.path(), "/log-1.fclog")));
  // Nothing half-made stays in the way of the next try.
  calls->fail_reserve = false;
  CHECK(
      internal::OpenDurableStore(Durability(dir.path()), Options(clock), calls)
          .ok());
}

TEST_CASE("a write that finds the disk full is written once room returns") {
  for (FsyncPolicy fsync : {FsyncPolicy::kAlways, FsyncPolicy::kEverySecond}) {
    CAPTURE(static_cast<int>(fsync));
    TempDir dir("durable-filled");
    auto clock = std::make_shared<ManualClock>(kStart);
    auto calls = std::make_shared<FailingCalls>();
    std::unique_ptr<InProcessFeedEngine> plain =
        FeedEngine::Create(Options(clock)).value();
    {
      auto store = internal::OpenDurableStore(Durability(dir.path(), fsync),
                                              Options(clock), calls)
                       .value();
      const Activity first = MakeActivity(1, 1, kStart);
      REQUIRE(store->engine().Publish(first, {}).ok());
      REQUIRE(plain->Publish(first, {}).ok());
      calls->fail_write = true;
      // Applied in memory; its write finds no room. Under kAlways the call
      // says so, under kEverySecond the next Sync does.
      const Activity filled = MakeActivity(2, 2, kStart + 1);
      const absl::Status published =
          store->engine().Publish(filled, {}).status();
      REQUIRE(plain->Publish(filled, {}).ok());
      const absl::Status synced = store->Sync();
      CHECK(synced.code() == absl::StatusCode::kResourceExhausted);
      if (fsync == FsyncPolicy::kAlways) {
        CHECK(published.code() == absl::StatusCode::kResourceExhausted);
      } else {
        CHECK(published.ok());
      }
      // Until then, writes are refused and change nothing.
      const absl::Status refused =
          store->engine().Publish(MakeActivity(3, 3, kStart + 2), {}).status();
      CHECK(refused.code() == absl::StatusCode::kResourceExhausted);
      CHECK(absl::StrContains(refused.message(), "no room for the log"));
      CHECK(store->Stats().write_error.code() ==
            absl::StatusCode::kResourceExhausted);
      CHECK(store->engine().ReadOwn(3, {}).value().entries.empty());
      // Room again: the kept write goes to disk and writes resume.
      calls->fail_write = false;
      REQUIRE(store->Sync().ok());
      CHECK(store->Stats().write_error.ok());
      const Activity later = MakeActivity(4, 4, kStart + 3);
      REQUIRE(store->engine().Publish(later, {}).ok());
      REQUIRE(plain->Publish(later, {}).ok());
    }
    // The half-written append was cut off: the log reads back whole, with
    // the write that waited for room.
    auto store = OpenOrFail(Durability(dir.path(), fsync), Options(clock));
    CHECK_FALSE(store->Stats().recovered_torn_tail);
    CheckSameState(*plain, store->engine(), kEntities);
  }
}

TEST_CASE("no room for the log: writes are refused and change nothing") {
  TempDir dir("durable-full");
  auto clock = std::make_shared<ManualClock>(kStart);
  auto calls = std::make_shared<FailingCalls>();
  calls->fail_reserve = true;
  // The current segment's reservation fails at open: writes are refused
  // until a reservation succeeds.
  {
    auto made = OpenOrFail(Durability(dir.path()), Options(clock));  // creates
  }
  auto store =
      internal::OpenDurableStore(Durability(dir.path()), Options(clock), calls)
          .value();
  absl::StatusOr<PublishResult> published =
      store->engine().Publish(MakeActivity(1, 1, kStart), {});
  REQUIRE_FALSE(published.ok());
  CHECK(published.status().code() == absl::StatusCode::kResourceExhausted);
  auto board = store->boards().GetOrCreate("arena");
  REQUIRE_FALSE(board.ok());
  CHECK(board.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(store->engine().ReadOwn(1, {}).value().entries.empty());
  CHECK(store->boards().size() == 0);
  CHECK(store->Stats().appended_sequence == 0);
  // Space comes back: the writer's next pass (Sync waits for one) makes a
  // spare and lets writes in.
  calls->fail_reserve = false;
  REQUIRE(store->Sync().ok());
  CHECK(store->Stats().write_error.ok());
  CHECK(store->engine().Publish(MakeActivity(1, 1, kStart), {}).ok());
}

TEST_CASE("a failed sync fails the waiting call and refuses later writes") {
  TempDir dir("durable-eio");
  auto clock = std::make_shared<ManualClock>(kStart);
  auto calls = std::make_shared<FailingCalls>();
  auto store =
      internal::OpenDurableStore(Durability(dir.path()), Options(clock), calls)
          .value();
  CHECK(store->engine().Publish(MakeActivity(1, 1, kStart), {}).ok());
  calls->fail_sync = true;
  absl::StatusOr<PublishResult> failed =
      store->engine().Publish(MakeActivity(2, 1, kStart + 1), {});
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().code() == absl::StatusCode::kUnavailable);
  absl::Status refused = store->engine().Retract(1);
  REQUIRE_FALSE(refused.ok());
  CHECK(absl::StrContains(refused.message(), "refuses writes"));
  // Reads go on; the refused Retract changed nothing.
  CHECK(store->engine().ReadOwn(1, {}).value().entries.size() == 2);
  CHECK_FALSE(store->Stats().write_error.ok());
}

TEST_CASE("store file names carry their sequence; other names none") {
  CHECK(internal::SnapshotSequenceOf("snapshot-42.fcsnap") == 42);
  CHECK(internal::SegmentSequenceOf("log-7.fclog") == 7);
  CHECK(internal::SnapshotSequenceOf("log-7.fclog") == 0);
  CHECK(internal::SegmentSequenceOf("log-7.fclog.damaged") == 0);
  CHECK(internal::SegmentSequenceOf("log-.fclog") == 0);
  CHECK(internal::SegmentSequenceOf("log-0.fclog") == 0);
  CHECK(internal::SegmentSequenceOf("log-x1.fclog") == 0);
  CHECK(internal::SnapshotSequenceOf("snapshot-in-progress.fcsnap") == 0);
  CHECK(internal::SegmentSequenceOf("log-99999999999999999999.fclog") == 0);
}

}  // namespace
}  // namespace feedcore
