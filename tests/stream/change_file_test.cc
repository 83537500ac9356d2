// Tests of change files: records survive the trip through a file exactly,
// a snapshot plus a change file written by a subscription restores the
// source, a torn last frame is dropped (and cut off when the file is opened
// again), damage before the end is DataLoss, and a failed append leaves a
// file that later appends continue cleanly.
#include "feedcore/change_file.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/change_stream.h"
#include "feedcore/leaderboard.h"
#include "feedcore/snapshot.h"
#include "support/engine_state.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::CheckSameBoards;
using testing::CheckSameState;
using testing::FileSizeLimit;
using testing::MakeActivity;
using testing::NewManualEngine;
using testing::ReadBytes;
using testing::TempPath;
using testing::WriteBytes;

constexpr Micros kStart = 1'000'000'000;

EngineOptions Options(std::shared_ptr<ManualClock> clock,
                      std::shared_ptr<ChangeStream> stream) {
  EngineOptions o;
  o.shards = 4;
  o.fanout_threads = 0;
  o.hybrid_fanout_threshold = 5;
  o.clock = std::move(clock);
  o.change_stream = std::move(stream);
  return o;
}

std::vector<ChangeRecordPtr> AllRecords(const ChangeStream& stream) {
  auto reader = stream.NewReader(StreamPosition::TrimHorizon()).value();
  std::vector<ChangeRecordPtr> all;
  for (;;) {
    std::vector<ChangeRecordPtr> batch = reader->Read(1000).value();
    if (batch.empty()) return all;
    all.insert(all.end(), batch.begin(), batch.end());
  }
}

// Every kind of record: feeds, graph (with a hybrid actor), retraction,
// expiry, and leaderboards.
void Workload(InProcessFeedEngine& engine, LeaderboardRegistry& boards,
              ManualClock& clock, ActivityId first_id) {
  for (EntityId f = 2; f <= 8; ++f) REQUIRE(engine.Follow(f, 1).ok());
  REQUIRE(engine.Follow(3, 9).ok());
  for (ActivityId id = first_id; id < first_id + 20; ++id) {
    REQUIRE(engine
                .Publish(MakeActivity(id, id % 2 == 0 ? 1 : 9,
                                      kStart + static_cast<Micros>(id),
                                      id % 5 == 0 ? kMicrosPerSecond : 0))
                .ok());
  }
  REQUIRE(engine.Retract(first_id + 3).ok());
  REQUIRE(engine.Unfollow(3, 9).ok());
  REQUIRE(engine.Insert(20, {kStart, first_id + 100, 21}).ok());
  clock.Advance(2 * kMicrosPerSecond);
  engine.EvictExpired(1000).value();
  std::shared_ptr<Leaderboard> board = boards.GetOrCreate("season").value();
  for (MemberId m = 1; m <= 30; ++m) {
    REQUIRE(board->Set(m, static_cast<int64_t>(m % 4)).ok());
  }
  REQUIRE(board->Increment(7, 10).ok());
  REQUIRE(board->Remove(8).ok());
  // A board with every option away from its default, scores ranked
  // lower-first, metadata written with a score, alone, and removed.
  std::shared_ptr<Leaderboard> laps =
      boards
          .GetOrCreate("laps", {.partitions = 3,
                                .tie_break = TieBreak::kLowerMemberFirst,
                                .max_page_size = 20,
                                .score_order = ScoreOrder::kLowerFirst,
                                .rank_style = RankStyle::kDense,
                                .max_metadata_bytes = 16})
          .value();
  for (MemberId m = 1; m <= 10; ++m) {
    REQUIRE(laps->Write({.member = m,
                         .value = -static_cast<int64_t>(m),
                         .condition = WriteCondition::kIfBetter,
                         .metadata = "driver " + std::to_string(m)})
                .ok());
  }
  REQUIRE(laps->SetMetadata(3, "").ok());
  REQUIRE(laps->SetMetadata(4, std::string("\0\xff", 2)).ok());
  REQUIRE(laps->Write({.member = 5, .value = -5, .metadata = "same score"})
              .ok());
}

TEST_CASE("records survive the file exactly, in order") {
  TempPath file("records");
  auto clock = std::make_shared<ManualClock>(kStart);
  auto stream = ChangeStream::Create({}).value();
  std::unique_ptr<InProcessFeedEngine> engine =
      NewManualEngine(clock, Options(clock, stream));
  LeaderboardRegistry boards(stream);
  Workload(*engine, boards, *clock, 1);
  const std::vector<ChangeRecordPtr> records = AllRecords(*stream);
  REQUIRE(records.size() > 50);
  {
    auto writer = ChangeFileWriter::Open(file.path).value();
    // Two appends, the second after reopening.
    const size_t half = records.size() / 2;
    REQUIRE(writer->Append(absl::MakeConstSpan(records).first(half)).ok());
    REQUIRE(writer->Sync().ok());
    writer = ChangeFileWriter::Open(file.path).value();
    REQUIRE(writer->Append(absl::MakeConstSpan(records).subspan(half)).ok());
    CHECK(writer->size() == std::filesystem::file_size(file.path));
  }
  absl::StatusOr<ChangeFileContents> read = ReadChangeFile(file.path);
  REQUIRE_MESSAGE(read.ok(), read.status());
  CHECK_FALSE(read->torn_tail);
  REQUIRE(read->records.size() == records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    INFO("record ", i);
    CHECK(read->records[i] == *records[i]);
  }
}

TEST_CASE("a snapshot and a change file written by a subscription restore") {
  TempPath snapshot("restore-snap");
  TempPath log("restore-log");
  auto clock = std::make_shared<ManualClock>(kStart);
  auto stream = ChangeStream::Create({}).value();
  std::unique_ptr<InProcessFeedEngine> engine =
      NewManualEngine(clock, Options(clock, stream));
  LeaderboardRegistry boards(stream);
  Workload(*engine, boards, *clock, 1);
  absl::StatusOr<SnapshotInfo> info =
      SaveSnapshot(*engine, snapshot.path, &boards);
  REQUIRE(info.ok());
  auto writer = ChangeFileWriter::Open(log.path).value();
  std::atomic<uint64_t> written{0};
  std::atomic<bool> failed{false};
  {
    auto subscription =
        stream
            ->Subscribe(
                StreamPosition::AtSequence(info->sequence), 64,
                [&](absl::Span<const ChangeRecordPtr> batch) {
                  if (!writer->Append(batch).ok()) failed.store(true);
                  written.fetch_add(batch.size());
                },
                [&](const absl::Status&) { failed.store(true); })
            .value();
    Workload(*engine, boards, *clock, 1000);
    const uint64_t want = stream->Stats().next_sequence - info->sequence;
    for (int i = 0; i < 30'000 && written.load() < want; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(written.load() == want);
  }
  CHECK_FALSE(failed.load());
  REQUIRE(writer->Sync().ok());

  EngineOptions options = Options(clock, nullptr);
  options.sweep_interval = 0;
  auto replica = LoadSnapshot(snapshot.path, options).value();
  absl::StatusOr<ChangeFileContents> saved = ReadChangeFile(log.path);
  REQUIRE(saved.ok());
  for (const ChangeRecord& record : saved->records) {
    const absl::Status status = replica->Apply(record);
    REQUIRE_MESSAGE(status.ok(), status);
  }
  std::vector<EntityId> universe;
  for (EntityId id = 1; id <= 25; ++id) universe.push_back(id);
  CheckSameState(*engine, replica->engine(), universe);
  CheckSameBoards(boards, replica->boards());
}

// A file of a few records, for the damage tests.
std::string SmallFile(const std::string& path, size_t* last_frame_start) {
  auto clock = std::make_shared<ManualClock>(kStart);
  auto stream = ChangeStream::Create({}).value();
  std::unique_ptr<InProcessFeedEngine> engine =
      NewManualEngine(clock, Options(clock, stream));
  REQUIRE(engine->Insert(1, {kStart, 1, 2}).ok());
  REQUIRE(engine->Insert(1, {kStart, 2, 2}).ok());
  const std::vector<ChangeRecordPtr> records = AllRecords(*stream);
  auto writer = ChangeFileWriter::Open(path).value();
  REQUIRE(writer->Append(absl::MakeConstSpan(records).first(1)).ok());
  *last_frame_start = writer->size();
  REQUIRE(writer->Append(absl::MakeConstSpan(records).subspan(1)).ok());
  return ReadBytes(path);
}

TEST_CASE("a torn last frame is dropped, and cut off on reopening") {
  TempPath file("torn");
  size_t last = 0;
  const std::string good = SmallFile(file.path, &last);
  for (size_t length = last; length < good.size(); ++length) {
    WriteBytes(file.path, good.substr(0, length));
    absl::StatusOr<ChangeFileContents> read = ReadChangeFile(file.path);
    INFO("length ", length);
    REQUIRE_MESSAGE(read.ok(), read.status());
    CHECK(read->records.size() == 1);
    CHECK(read->torn_tail == (length > last));
  }
  // A flipped byte in the last frame reads as a torn write too.
  std::string flipped = good;
  flipped[good.size() - 1] ^= 0x40;
  WriteBytes(file.path, flipped);
  CHECK(ReadChangeFile(file.path)->torn_tail);
  // Reopening cuts the torn frame off; appending continues cleanly.
  WriteBytes(file.path, good.substr(0, good.size() - 3));
  {
    auto writer = ChangeFileWriter::Open(file.path).value();
    CHECK(writer->size() == last);
    ChangeRecord extra;
    extra.sequence = 99;
    extra.owners = {5};
    REQUIRE(writer->Append({std::make_shared<const ChangeRecord>(extra)}).ok());
  }
  absl::StatusOr<ChangeFileContents> read = ReadChangeFile(file.path);
  REQUIRE(read.ok());
  CHECK_FALSE(read->torn_tail);
  REQUIRE(read->records.size() == 2);
  CHECK(read->records[1].sequence == 99);
}

TEST_CASE("damage before the last frame is DataLoss; foreign files refused") {
  TempPath file("damage");
  size_t last = 0;
  const std::string good = SmallFile(file.path, &last);
  for (size_t i = 12; i < last; ++i) {
    std::string bad = good;
    bad[i] ^= 0x01;
    WriteBytes(file.path, bad);
    absl::StatusOr<ChangeFileContents> read = ReadChangeFile(file.path);
    INFO("byte ", i);
    // A corrupted length can make the rest look like one torn frame;
    // anything else must be refused.
    if (read.ok()) {
      CHECK(read->torn_tail);
      CHECK(read->records.empty());
    } else {
      CHECK(read.status().code() == absl::StatusCode::kDataLoss);
    }
    CHECK(ChangeFileWriter::Open(file.path).status().code() ==
          (read.ok() ? absl::StatusCode::kOk : absl::StatusCode::kDataLoss));
  }
  WriteBytes(file.path, "not a change file at all");
  CHECK(ReadChangeFile(file.path).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(ChangeFileWriter::Open(file.path).status().code() ==
        absl::StatusCode::kInvalidArgument);
  std::string other_version = good;
  other_version[8] = 7;
  WriteBytes(file.path, other_version);
  absl::StatusOr<ChangeFileContents> read = ReadChangeFile(file.path);
  CHECK(read.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(read.status().message()).find("version 7") !=
        std::string::npos);
  CHECK(ReadChangeFile("/nonexistent-dir/x").status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(ChangeFileWriter::Open("").status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("a failed append is undone; the next one continues cleanly") {
  TempPath file("fault");
  size_t last = 0;
  const std::string good = SmallFile(file.path, &last);
  auto writer = ChangeFileWriter::Open(file.path).value();
  ChangeRecord big;
  big.sequence = 3;
  big.entry.payload.assign(64 * 1024, 'x');
  const ChangeRecordPtr record = std::make_shared<const ChangeRecord>(big);

  absl::Status failed;
  {
    FileSizeLimit limit(good.size() + 1000);
    failed = writer->Append({record});
  }

  CHECK(failed.code() == absl::StatusCode::kResourceExhausted);
  CHECK(writer->size() == good.size());
  CHECK(ReadBytes(file.path) == good);
  REQUIRE(writer->Append({record}).ok());
  absl::StatusOr<ChangeFileContents> read = ReadChangeFile(file.path);
  REQUIRE(read.ok());
  REQUIRE(read->records.size() == 3);
  CHECK(read->records[2].entry.payload.size() == 64 * 1024);
}

}  // namespace
}  // namespace feedcore
