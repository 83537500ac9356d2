// Tests of snapshots: a full round trip, option checks, every way a file
// can be wrong (not a snapshot, unknown version, each byte flipped, each
// truncation, absurd counts behind valid checksums), a write that fails
// midway leaving the previous snapshot intact, and the Replica's checks on
// the records it is given.
#include "feedcore/snapshot.h"

#include <doctest/doctest.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/byte_codec.h"
#include "feedcore/change_stream.h"
#include "feedcore/leaderboard.h"
#include "support/engine_state.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::CheckSameState;
using testing::FileSizeLimit;
using testing::MakeActivity;
using testing::NewManualEngine;
using testing::ReadBytes;
using testing::TempPath;
using testing::WriteBytes;

constexpr Micros kStart = 1'000'000'000;
constexpr size_t kShards = 4;

EngineOptions Options(std::shared_ptr<ManualClock> clock) {
  EngineOptions o;
  o.shards = kShards;
  o.max_timeline_length = 50;
  o.world_timeline_length = 80;
  o.hybrid_fanout_threshold = 6;
  o.fanout_threads = 0;
  o.sweep_interval = 0;
  o.clock = std::move(clock);
  return o;
}

std::vector<EntityId> Universe() {
  std::vector<EntityId> ids;
  for (EntityId id = 1; id <= 30; ++id) ids.push_back(id);
  return ids;
}

// Follows (one actor past the hybrid threshold), publishes with several
// TTLs, notifications in several states, retractions, unfollows,
// low-level inserts and removes, some entries expired but not reclaimed, a
// timeline at its cap.
void Populate(InProcessFeedEngine& e, ManualClock& clock) {
  for (EntityId f = 2; f <= 12; ++f) REQUIRE(e.Follow(f, 1).ok());  // hybrid
  for (EntityId f = 3; f <= 5; ++f) REQUIRE(e.Follow(f, 2).ok());
  REQUIRE(e.Follow(20, 21).ok());
  REQUIRE(e.Follow(21, 20).ok());
  ActivityId id = 1;
  for (int round = 0; round < 30; ++round) {
    for (EntityId actor : {1, 2, 20, 21}) {
      REQUIRE(e.Publish(MakeActivity(id, actor, kStart + round,
                                     round % 3 == 0 ? kMicrosPerMinute : 0))
                  .ok());
      ++id;
    }
  }
  // Notifications: grouped likes of one photo (and one of another), seen
  // and read state of every kind, one retracted.
  for (ActivityId like = 2000; like < 2012; ++like) {
    Activity a = MakeActivity(like, 1 + like % 5, kStart + 40 + like % 7,
                              like % 4 == 0 ? kMicrosPerMinute : 0);
    a.verb = 1;
    a.object = like < 2010 ? 7 : 8;
    PublishOptions notify;
    notify.notify = {26, 27, like % 2 == 0 ? 28u : 26u};
    notify.mentions = {26, like % 3 == 0 ? 29u : 27u};
    REQUIRE(e.Publish(a, notify).ok());
    if (like == 2005) e.MarkSeen(27).value();
  }
  REQUIRE(e.MarkRead(26, {kStart + 40 + 2011 % 7, 2011}).ok());
  // Clears 27's mentions in channel 3 up to it.
  REQUIRE(e.SetReadMarker(27, MarkedFeed::Own(3), {kStart + 44, 2008}).ok());
  e.MarkAllRead(28).value();
  REQUIRE(e.Retract(2003).ok());
  REQUIRE(e.Retract(5).ok());
  REQUIRE(e.Retract(6).ok());
  REQUIRE(e.Unfollow(4, 2).ok());
  for (ActivityId low = 1000; low < 1080; ++low) {
    REQUIRE(e.Insert(25, {kStart + static_cast<Micros>(low), low, 26}).ok());
  }
  REQUIRE(e.Remove(25, {kStart + 1070, 1070}).ok());
  clock.Advance(2 * kMicrosPerMinute);  // some entries now expired
}

std::string SaveFresh(const std::string& path) {
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> engine =
      NewManualEngine(clock, Options(clock));
  Populate(*engine, *clock);
  absl::StatusOr<SnapshotInfo> info = SaveSnapshot(*engine, path);
  REQUIRE_MESSAGE(info.ok(), info.status());
  return ReadBytes(path);
}

TEST_CASE("round trip: the loaded engine holds exactly what was saved") {
  TempPath file("roundtrip");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> source =
      NewManualEngine(clock, Options(clock));
  Populate(*source, *clock);
  absl::StatusOr<SnapshotInfo> info = SaveSnapshot(*source, file.path);
  REQUIRE_MESSAGE(info.ok(), info.status());
  CHECK(info->sequence == 0);  // no change stream
  CHECK(info->file_bytes == std::filesystem::file_size(file.path));
  CHECK_FALSE(std::filesystem::exists(file.path + ".tmp"));

  EngineOptions options = Options(clock);
  options.shards = 0;  // take the snapshot's
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(file.path, options);
  REQUIRE_MESSAGE(replica.ok(), replica.status());
  InProcessFeedEngine& loaded = (*replica)->engine();
  CHECK(loaded.options().shards == kShards);
  CheckSameState(*source, loaded, Universe());
  // Expired entries came along too (same Stats), and both reclaim the same.
  CHECK(source->EvictExpired(100'000).value() ==
        loaded.EvictExpired(100'000).value());
  CheckSameState(*source, loaded, Universe());
  // The loaded engine works like any other, hybrid actor included.
  REQUIRE(source->Publish(MakeActivity(5000, 1, kStart + 99)).ok());
  REQUIRE(loaded.Publish(MakeActivity(5000, 1, kStart + 99)).ok());
  REQUIRE(source->Follow(30, 1).ok());
  REQUIRE(loaded.Follow(30, 1).ok());
  CheckSameState(*source, loaded, Universe());
  // Retracted ids stay reserved after the load.
  CHECK(loaded.Publish(MakeActivity(5, 1, kStart)).status().code() ==
        absl::StatusCode::kFailedPrecondition);
}

// Boards of both tie-break rules, equal scores (whose order must survive),
// negative scores, a cleared board and an empty one, and a board ranked
// lower-first with metadata.
void PopulateBoards(LeaderboardRegistry& registry) {
  LeaderboardOptions by_time;
  by_time.partitions = 3;
  std::shared_ptr<Leaderboard> a = registry.GetOrCreate("a", by_time).value();
  for (MemberId m = 1; m <= 60; ++m) {
    REQUIRE(a->Set(m, static_cast<int64_t>(m % 7) - 3).ok());
  }
  REQUIRE(a->Increment(5, 2).ok());
  REQUIRE(a->Remove(6).ok());
  LeaderboardOptions by_id;
  by_id.partitions = 1;
  by_id.tie_break = TieBreak::kLowerMemberFirst;
  by_id.max_page_size = 10;
  std::shared_ptr<Leaderboard> b = registry.GetOrCreate("b", by_id).value();
  for (MemberId m = 100; m > 90; --m) REQUIRE(b->Set(m, 42).ok());
  std::shared_ptr<Leaderboard> c = registry.GetOrCreate("c").value();
  REQUIRE(c->Set(1, 1).ok());
  REQUIRE(c->Clear().ok());
  LeaderboardOptions laps;
  laps.partitions = 2;
  laps.score_order = ScoreOrder::kLowerFirst;
  laps.max_metadata_bytes = 8;
  std::shared_ptr<Leaderboard> d = registry.GetOrCreate("d", laps).value();
  for (MemberId m = 1; m <= 30; ++m) {
    REQUIRE(d->Write({.member = m,
                      .value = static_cast<int64_t>(m % 5) - 2,
                      .metadata =
                          m % 3 == 0 ? std::string() : absl::StrCat("p", m)})
                .ok());
  }
  REQUIRE(d->Set(7, std::numeric_limits<int64_t>::max()).ok());
  REQUIRE(d->Set(8, std::numeric_limits<int64_t>::min()).ok());
  REQUIRE(d->SetMetadata(9, std::string("\0bin\xff", 5)).ok());
  REQUIRE(d->Remove(10).ok());
}

TEST_CASE("leaderboards round-trip, tie order included") {
  TempPath file("boards");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> engine =
      NewManualEngine(clock, Options(clock));
  LeaderboardRegistry registry;
  PopulateBoards(registry);
  REQUIRE(SaveSnapshot(*engine, file.path, &registry).ok());
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(file.path, Options(clock));
  REQUIRE_MESSAGE(replica.ok(), replica.status());
  LeaderboardRegistry& loaded = (*replica)->boards();
  testing::CheckSameBoards(registry, loaded);
  CHECK(loaded.Names() == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(loaded.Get("d").value()->Metadata(9).value() ==
        std::string("\0bin\xff", 5));
  CHECK(loaded.Get("d").value()->TopK(1).value().front().member == 8);
  // Later updates rank after the loaded ones on both sides.
  REQUIRE(registry.Get("a").value()->Set(1000, -2).ok());
  REQUIRE(loaded.Get("a").value()->Set(1000, -2).ok());
  testing::CheckSameBoards(registry, loaded);
  // A snapshot without a registry loads with no boards.
  REQUIRE(SaveSnapshot(*engine, file.path).ok());
  replica = LoadSnapshot(file.path, Options(clock));
  REQUIRE(replica.ok());
  CHECK((*replica)->boards().size() == 0);
}

TEST_CASE("engine and registry must share their change stream") {
  TempPath file("two-streams");
  auto clock = std::make_shared<ManualClock>(kStart);
  EngineOptions options = Options(clock);
  options.change_stream = ChangeStream::Create({}).value();
  std::unique_ptr<InProcessFeedEngine> engine = NewManualEngine(clock, options);
  LeaderboardRegistry registry(ChangeStream::Create({}).value());
  const absl::Status status =
      SaveSnapshot(*engine, file.path, &registry).status();
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_FALSE(std::filesystem::exists(file.path));
  // One recording and the other not is refused too.
  LeaderboardRegistry quiet;
  CHECK(SaveSnapshot(*engine, file.path, &quiet).status().code() ==
        absl::StatusCode::kInvalidArgument);
  LeaderboardRegistry shared(options.change_stream);
  CHECK(SaveSnapshot(*engine, file.path, &shared).ok());
}

TEST_CASE("an empty engine round-trips") {
  TempPath file("empty");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> source =
      NewManualEngine(clock, Options(clock));
  REQUIRE(SaveSnapshot(*source, file.path).ok());
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(file.path, Options(clock));
  REQUIRE_MESSAGE(replica.ok(), replica.status());
  CHECK((*replica)->engine().Stats().value().entries == 0);
}

TEST_CASE("saving replaces the previous snapshot atomically") {
  TempPath file("replace");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> engine =
      NewManualEngine(clock, Options(clock));
  REQUIRE(SaveSnapshot(*engine, file.path).ok());
  const std::string first = ReadBytes(file.path);
  Populate(*engine, *clock);
  REQUIRE(SaveSnapshot(*engine, file.path).ok());
  CHECK(ReadBytes(file.path) != first);
  CHECK_FALSE(std::filesystem::exists(file.path + ".tmp"));
}

// The entries of a page that holds a whole feed of this test.
std::vector<StoredEntry> Entries(const absl::StatusOr<Page>& page) {
  REQUIRE(page.ok());
  CHECK(page->next_cursor.empty());
  return page->entries;
}

// Whether `part` is where `whole` begins.
bool Begins(const std::vector<StoredEntry>& whole,
            const std::vector<StoredEntry>& part) {
  return part.size() <= whole.size() &&
         std::equal(part.begin(), part.end(), whole.begin());
}

TEST_CASE("shards must match; caps and the TTL may change") {
  TempPath file("options");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> source =
      NewManualEngine(clock, Options(clock));
  Populate(*source, *clock);
  REQUIRE(SaveSnapshot(*source, file.path).ok());
  ReadOptions whole;
  whole.limit = 100;

  EngineOptions options = Options(clock);
  options.shards = 8;
  absl::StatusOr<std::unique_ptr<Replica>> r = LoadSnapshot(file.path, options);
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(r.status().message()).find("shards = 4") !=
        std::string::npos);

  SUBCASE("smaller caps keep each timeline's newest entries") {
    options = Options(clock);
    options.max_timeline_length = 3;
    options.world_timeline_length = 5;
    options.notifications.max_length = 2;
    options.default_ttl = kMicrosPerHour;
    r = LoadSnapshot(file.path, options);
    REQUIRE(r.ok());
    const InProcessFeedEngine& loaded = (*r)->engine();
    for (EntityId id : Universe()) {
      // Expired entries not yet reclaimed count against a cap, so a page
      // may show fewer than the cap; never an older entry.
      const std::vector<StoredEntry> home =
          Entries(loaded.ReadTimeline(id, whole));
      CHECK(home.size() <= 3);
      CHECK(Begins(Entries(source->ReadTimeline(id, whole)), home));
      const std::vector<StoredEntry> own = Entries(loaded.ReadOwn(id, whole));
      CHECK(own.size() <= 3);
      CHECK(Begins(Entries(source->ReadOwn(id, whole)), own));
      GroupReadOptions groups;
      const absl::StatusOr<GroupPage> bell =
          (*r)->engine().ReadNotifications(id, groups);
      REQUIRE(bell.ok());
      size_t notifications = 0;
      for (const FeedGroup& g : bell->groups) notifications += g.activity_count;
      CHECK(notifications <= 2);
    }
    // Owner 25's entries were inserted without expiry: exactly the newest.
    const std::vector<StoredEntry> newest =
        Entries(loaded.ReadTimeline(25, whole));
    REQUIRE(newest.size() == 3);
    CHECK(Begins(Entries(source->ReadTimeline(25, whole)), newest));
    CHECK(Entries(loaded.ReadWorld(whole)).size() <= kShards * 5);
    // The TTL applies to what is inserted from then on.
    REQUIRE((*r)->engine().Insert(25, {kStart + 5000, 5000, 26}).ok());
    const std::vector<StoredEntry> after =
        Entries((*r)->engine().ReadTimeline(25, whole));
    REQUIRE(after.size() == 3);
    CHECK(after.front().expires_at == clock->Now() + kMicrosPerHour);
  }
  SUBCASE("larger caps keep every entry and merge more") {
    options = Options(clock);
    options.max_timeline_length = 500;
    options.world_timeline_length = 800;
    options.notifications.max_length = 1000;
    r = LoadSnapshot(file.path, options);
    REQUIRE(r.ok());
    for (EntityId id : Universe()) {
      // A home timeline that merges a hybrid actor shows the newest
      // entries of the merge under the cap it is read with: more of them
      // under a larger cap (feed_engine.h, hybrid fan-out).
      CHECK(Begins(Entries((*r)->engine().ReadTimeline(id, whole)),
                   Entries(source->ReadTimeline(id, whole))));
      CHECK(Entries((*r)->engine().ReadOwn(id, whole)) ==
            Entries(source->ReadOwn(id, whole)));
    }
    CHECK(Entries((*r)->engine().ReadWorld(whole)) ==
          Entries(source->ReadWorld(whole)));
  }
  SUBCASE("other options are the new engine's own; bad ones fail as Create") {
    options = Options(clock);
    options.max_page_size = 0;
    r = LoadSnapshot(file.path, options);
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("files that are not snapshots") {
  TempPath file("notasnapshot");
  auto clock = std::make_shared<ManualClock>(kStart);
  CHECK(LoadSnapshot(file.path, Options(clock)).status().code() ==
        absl::StatusCode::kNotFound);
  WriteBytes(file.path, std::string(100, 'z'));
  absl::StatusOr<std::unique_ptr<Replica>> r =
      LoadSnapshot(file.path, Options(clock));
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(r.status().message()).find("not a feedcore snapshot") !=
        std::string::npos);
  CHECK(SaveSnapshot(*NewManualEngine(clock, Options(clock)),
                     "/nonexistent-dir/x/snap")
            .status()
            .code() == absl::StatusCode::kNotFound);
  CHECK(SaveSnapshot(*NewManualEngine(clock, Options(clock)), "")
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
}

// Rewrites the header's version (and its checksum, so that only the
// version is wrong).
TEST_CASE("an unknown format version is refused by name") {
  TempPath file("version");
  std::string bytes = SaveFresh(file.path);
  bytes[8] = 14;
  const uint64_t sum =
      XXH3_64bits_withSeed(bytes.data(), 24, 0x66656564736e6170ULL);
  std::string sum_bytes;
  internal::ByteWriter(&sum_bytes).U64(sum);
  bytes.replace(24, 8, sum_bytes);
  WriteBytes(file.path, bytes);
  auto clock = std::make_shared<ManualClock>(kStart);
  absl::StatusOr<std::unique_ptr<Replica>> r =
      LoadSnapshot(file.path, Options(clock));
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(r.status().message()).find("format version 14") !=
        std::string::npos);
}

bool IsCleanError(const absl::Status& status) {
  return status.code() == absl::StatusCode::kDataLoss ||
         status.code() == absl::StatusCode::kInvalidArgument;
}

TEST_CASE("every flipped byte and every truncation is a clean error") {
  TempPath file("corrupt");
  TempPath damaged("damaged");
  auto clock = std::make_shared<ManualClock>(kStart);
  // A small engine so that every position can be tried.
  {
    std::unique_ptr<InProcessFeedEngine> engine =
        NewManualEngine(clock, Options(clock));
    REQUIRE(engine->Follow(2, 1).ok());
    REQUIRE(engine->Publish(MakeActivity(1, 1, kStart)).ok());
    REQUIRE(engine->Publish(MakeActivity(2, 3, kStart + 1)).ok());
    REQUIRE(engine->Retract(2).ok());
    LeaderboardRegistry registry;
    LeaderboardOptions small;
    small.partitions = 2;
    std::shared_ptr<Leaderboard> board =
        registry.GetOrCreate("b", small).value();
    REQUIRE(board->Set(1, 5).ok());
    REQUIRE(board->Set(2, -5).ok());
    REQUIRE(SaveSnapshot(*engine, file.path, &registry).ok());
  }
  const std::string good = ReadBytes(file.path);
  REQUIRE(good.size() > 100);
  size_t flips = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (const unsigned char mask : {0x01, 0x80}) {
      std::string bad = good;
      bad[i] = static_cast<char>(static_cast<unsigned char>(bad[i]) ^ mask);
      WriteBytes(damaged.path, bad);
      const absl::Status status =
          LoadSnapshot(damaged.path, Options(clock)).status();
      INFO("byte ", i, " mask ", static_cast<int>(mask), ": ", status);
      REQUIRE(IsCleanError(status));
      ++flips;
    }
  }
  for (size_t length = 0; length < good.size(); ++length) {
    WriteBytes(damaged.path, good.substr(0, length));
    const absl::Status status =
        LoadSnapshot(damaged.path, Options(clock)).status();
    INFO("length ", length, ": ", status);
    REQUIRE(status.code() == absl::StatusCode::kDataLoss);
  }
  // Extra bytes at the end are damage too.
  WriteBytes(damaged.path, good + "x");
  CHECK(LoadSnapshot(damaged.path, Options(clock)).status().code() ==
        absl::StatusCode::kDataLoss);
  CHECK(flips == 2 * good.size());
}

// A domain section whose checksum is right but whose content claims more
// than the file could hold: refused before anything is allocated for it.
TEST_CASE("absurd counts behind a valid checksum are refused") {
  TempPath file("absurd");
  std::string bytes = SaveFresh(file.path);
  // The first domain section starts after the header (32) and the options
  // section (24 + 32); its payload is the cut (8), then the timeline count.
  const size_t section = 32 + 24 + 32;
  internal::ByteReader header(std::string_view(bytes).substr(section, 24));
  header.U32();
  header.U32();
  const uint64_t length = header.U64();
  std::string payload = bytes.substr(section + 24, length);
  std::string huge;
  internal::ByteWriter(&huge).U64(uint64_t{1} << 60);
  payload.replace(8, 8, huge);
  std::string sum;
  internal::ByteWriter(&sum).U64(XXH3_64bits_withSeed(
      payload.data(), payload.size(), 0x66656564736e6170ULL));
  bytes.replace(section + 16, 8, sum);
  bytes.replace(section + 24, length, payload);
  WriteBytes(file.path, bytes);
  auto clock = std::make_shared<ManualClock>(kStart);
  absl::StatusOr<std::unique_ptr<Replica>> r =
      LoadSnapshot(file.path, Options(clock));
  CHECK(r.status().code() == absl::StatusCode::kDataLoss);
  CHECK(std::string(r.status().message()).find("domain 0") !=
        std::string::npos);
}

// The file size limit makes write() fail with EFBIG partway through, as a
// full disk would.
TEST_CASE("a write that fails midway leaves the previous snapshot intact") {
  TempPath file("fault");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> engine =
      NewManualEngine(clock, Options(clock));
  REQUIRE(engine->Publish(MakeActivity(1, 1, kStart)).ok());
  REQUIRE(SaveSnapshot(*engine, file.path).ok());
  const std::string previous = ReadBytes(file.path);
  Populate(*engine, *clock);

  absl::StatusOr<SnapshotInfo> failed;
  {
    FileSizeLimit limit(previous.size() + 64);
    failed = SaveSnapshot(*engine, file.path);
  }

  CHECK(failed.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(ReadBytes(file.path) == previous);
  CHECK_FALSE(std::filesystem::exists(file.path + ".tmp"));
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(file.path, Options(clock));
  REQUIRE_MESSAGE(replica.ok(), replica.status());
  CHECK((*replica)->engine().Stats().value().activities == 1);
}

TEST_CASE("a replica checks the order, continuity and shape of records") {
  TempPath file("replica");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::shared_ptr<ChangeStream> stream = ChangeStream::Create({}).value();
  EngineOptions options = Options(clock);
  options.change_stream = stream;
  std::unique_ptr<InProcessFeedEngine> source = NewManualEngine(clock, options);
  REQUIRE(source->Insert(1, {kStart, 1, 2}).ok());
  REQUIRE(source->Insert(1, {kStart, 2, 2}).ok());
  absl::StatusOr<SnapshotInfo> info = SaveSnapshot(*source, file.path);
  REQUIRE(info.ok());
  CHECK(info->sequence == 3);
  REQUIRE(source->Insert(1, {kStart, 3, 2}).ok());
  REQUIRE(source->Insert(1, {kStart, 4, 2}).ok());
  std::vector<ChangeRecordPtr> records =
      stream->NewReader(StreamPosition::TrimHorizon())
          .value()
          ->Read(100)
          .value();
  REQUIRE(records.size() == 4);

  absl::StatusOr<std::unique_ptr<Replica>> loaded =
      LoadSnapshot(file.path, Options(clock));
  REQUIRE(loaded.ok());
  Replica& replica = **loaded;
  CHECK(replica.sequence() == 3);
  // Starting after the snapshot's sequence would miss record 3.
  CHECK(replica.Apply(*records[3]).code() ==
        absl::StatusCode::kInvalidArgument);
  // Records the snapshot holds are skipped.
  REQUIRE(replica.Apply(*records[0]).ok());
  REQUIRE(replica.Apply(*records[1]).ok());
  CHECK(replica.skipped() == 2);
  // A gap and a repeat are refused.
  CHECK(replica.Apply(*records[3]).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(replica.Apply(*records[1]).code() ==
        absl::StatusCode::kInvalidArgument);
  // A malformed record changes nothing.
  ChangeRecord bad = *records[2];
  bad.owners.clear();
  CHECK(replica.Apply(bad).code() == absl::StatusCode::kInvalidArgument);
  bad = *records[2];
  bad.domain = 1000;
  CHECK(replica.Apply(bad).code() == absl::StatusCode::kInvalidArgument);
  bad = *records[2];
  bad.kind = static_cast<ChangeKind>(200);
  CHECK(replica.Apply(bad).code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(replica.Apply(*records[2]).ok());
  REQUIRE(replica.Apply(*records[3]).ok());
  CHECK(replica.applied() == 2);
  CheckSameState(*source, replica.engine(), {1});
}

}  // namespace
}  // namespace feedcore
