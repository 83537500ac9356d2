// Tests of feedcore-check's directory check and repair on a DurableStore
// written by the library with small log segments: a clean directory is
// clean; a flipped byte in a middle frame of a middle segment is reported
// at that frame's offset, the repair truncates that segment after its last
// whole batch and moves the later segments aside, and the store then opens
// with every write before the damage; a segment cut in the middle of a
// frame is reported there as a torn tail; damage that cannot be repaired
// (the newest snapshot) is reported as such and the repair is refused; a
// missing middle segment moves the segments after it aside.
#include "directory_check.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "feedcore/durable_store.h"
#include "feedcore/leaderboard.h"
#include "stream/change_frame.h"
#include "support/file_test_util.h"

namespace feedcore::check {
namespace {

using testing::ReadBytes;
using testing::TempDir;
using testing::WriteBytes;

constexpr MemberId kMembers = 60000;  // about three 1 MiB segments

DurabilityOptions Durability(const std::string& directory) {
  DurabilityOptions durability;
  durability.directory = directory;
  durability.fsync = FsyncPolicy::kNever;  // synced when the store closes
  durability.segment_bytes = kMinLogSegmentBytes;
  durability.compact_after_bytes = 0;
  return durability;
}

EngineOptions Engine() {
  EngineOptions options;
  options.shards = 2;
  options.sweep_interval = 0;
  options.fanout_threads = 0;
  return options;
}

// Member m gets score m, one call each, in order; a Sync after every
// kBatch calls makes the log's writer end a batch there.
constexpr MemberId kBatch = 100;
void WriteStore(const std::string& directory) {
  auto store = DurableStore::Open(Durability(directory), Engine());
  REQUIRE(store.ok());
  auto board = (*store)->boards().GetOrCreate("arena");
  REQUIRE(board.ok());
  for (MemberId m = 1; m <= kMembers; ++m) {
    REQUIRE((*board)->Set(m, static_cast<int64_t>(m)).ok());
    if (m % kBatch == 0) REQUIRE((*store)->Sync().ok());
  }
}

// How many members, from 1 on, the reopened store holds with their
// scores; checks that none after them is there.
MemberId RecoveredPrefix(const std::string& directory) {
  auto store = DurableStore::Open(Durability(directory), Engine());
  REQUIRE(store.ok());
  auto board = (*store)->boards().GetOrCreate("arena");
  REQUIRE(board.ok());
  MemberId prefix = 0;
  while (prefix < kMembers && (*board)->Score(prefix + 1).ok()) {
    CHECK(*(*board)->Score(prefix + 1) == static_cast<int64_t>(prefix + 1));
    ++prefix;
  }
  CHECK(*(*board)->Size() == prefix);
  return prefix;
}

std::vector<const FileReport*> Segments(const DirectoryReport& report) {
  std::vector<const FileReport*> segments;
  for (const FileReport& file : report.files) {
    if (file.kind == FileKind::kLogSegment) segments.push_back(&file);
  }
  return segments;
}

uint64_t RecordsIn(const DirectoryReport& report) {
  uint64_t records = 0;
  for (const FileReport* segment : Segments(report)) {
    records += segment->frames;
  }
  return records;
}

// The body length in the frame header at `offset`.
uint32_t FrameLength(const std::string& bytes, size_t offset) {
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i) {
    length |= uint32_t{static_cast<unsigned char>(bytes[offset + i])}
              << (8 * i);
  }
  return length;
}

// Offsets of the frames of the change file `bytes`, walking the lengths.
std::vector<size_t> FrameOffsets(const std::string& bytes) {
  std::vector<size_t> offsets;
  size_t offset = internal::kChangeFileHeaderBytes;
  while (offset + internal::kChangeFrameHeaderBytes <= bytes.size()) {
    offsets.push_back(offset);
    offset += internal::kChangeFrameHeaderBytes + FrameLength(bytes, offset);
  }
  return offsets;
}

// Where the last batch end before `offset` ends (the header's end if none).
size_t CommittedBefore(const std::string& bytes, size_t offset) {
  size_t committed = internal::kChangeFileHeaderBytes;
  for (size_t frame : FrameOffsets(bytes)) {
    if (frame >= offset) break;
    if (FrameLength(bytes, frame) == 0) {
      committed = frame + internal::kChangeFrameHeaderBytes;
    }
  }
  return committed;
}

TEST_CASE("a flipped byte in a middle segment: reported, repaired, reopened") {
  TempDir dir("check");
  WriteStore(dir.path());
  absl::StatusOr<DirectoryReport> clean = CheckDirectory(dir.path());
  REQUIRE(clean.ok());
  CHECK_FALSE(clean->Damaged());
  const std::vector<const FileReport*> segments = Segments(*clean);
  REQUIRE(segments.size() >= 3);
  // Records that are not a member's Set: the board's creation.
  const uint64_t other_records = RecordsIn(*clean) - kMembers;

  // A byte in the middle of the body of a record frame in the middle of
  // the second segment.
  const std::string path = segments[1]->path;
  std::string bytes = ReadBytes(path);
  const std::vector<size_t> frames = FrameOffsets(bytes);
  // A record frame inside a batch (the frame before it is a record too),
  // so that the repair drops the whole records before it in its batch.
  size_t index = frames.size() / 2;
  while (FrameLength(bytes, frames[index]) == 0 ||
         FrameLength(bytes, frames[index - 1]) == 0) {
    ++index;
  }
  const size_t damaged = frames[index];
  bytes[damaged + internal::kChangeFrameHeaderBytes + 1] ^= 0x40;
  WriteBytes(path, bytes);
  CHECK(DurableStore::Open(Durability(dir.path()), Engine()).status().code() ==
        absl::StatusCode::kDataLoss);

  absl::StatusOr<DirectoryReport> report = CheckDirectory(dir.path());
  REQUIRE(report.ok());
  CHECK(report->Damaged());
  CHECK(report->Repairable());
  const std::vector<const FileReport*> after = Segments(*report);
  REQUIRE(after.size() == segments.size());
  CHECK_FALSE(after[0]->damaged);
  CHECK(after[0]->repair == Repair::kNone);
  CHECK(after[1]->path == path);
  CHECK(after[1]->damaged);
  CHECK(after[1]->damage_offset == damaged);
  CHECK(after[1]->problem == "frame fails its checksum");
  CHECK(after[1]->bytes_after == bytes.size() - damaged);
  CHECK(after[1]->records_after > 0);
  CHECK(after[1]->repair == Repair::kTruncate);
  // Cut after the last batch end before the damaged frame: recovery
  // applies whole batches only.
  const size_t keep = CommittedBefore(bytes, damaged);
  CHECK(keep < damaged);
  CHECK(after[1]->keep_bytes == keep);
  CHECK(after[1]->dropped_bytes == bytes.size() - keep);
  for (size_t i = 2; i < after.size(); ++i) {
    CHECK_FALSE(after[i]->damaged);
    CHECK(after[i]->repair == Repair::kMoveAside);
  }

  REQUIRE(RepairDirectory(*report).ok());
  CHECK(std::filesystem::file_size(path) == keep);
  CHECK(std::filesystem::exists(after[2]->path + kDamagedSuffix));
  absl::StatusOr<DirectoryReport> repaired = CheckDirectory(dir.path());
  REQUIRE(repaired.ok());
  CHECK_FALSE(repaired->Damaged());
  const uint64_t kept = RecordsIn(*repaired);
  CHECK(kept == after[0]->frames + after[1]->frames);
  CHECK(RecoveredPrefix(dir.path()) == kept - other_records);
}

TEST_CASE("a last segment cut in the middle of a frame is a torn tail") {
  TempDir dir("check");
  WriteStore(dir.path());
  absl::StatusOr<DirectoryReport> clean = CheckDirectory(dir.path());
  REQUIRE(clean.ok());
  const uint64_t other_records = RecordsIn(*clean) - kMembers;
  const std::string path = Segments(*clean).back()->path;
  std::string bytes = ReadBytes(path);
  const std::vector<size_t> frames = FrameOffsets(bytes);
  // Inside the last record frame (the frame before the final batch end).
  const size_t cut_frame = frames[frames.size() - 2];
  bytes.resize(cut_frame + 5);
  WriteBytes(path, bytes);

  absl::StatusOr<DirectoryReport> report = CheckDirectory(dir.path());
  REQUIRE(report.ok());
  const FileReport* last = Segments(*report).back();
  CHECK(last->path == path);
  CHECK(last->damaged);
  CHECK(last->open_repairs_it);
  CHECK(last->damage_offset == cut_frame);
  CHECK(last->problem == "incomplete frame header");
  CHECK(last->bytes_after == 5);
  const size_t keep = CommittedBefore(bytes, cut_frame);
  CHECK(last->keep_bytes == keep);
  REQUIRE(RepairDirectory(*report).ok());
  absl::StatusOr<DirectoryReport> repaired = CheckDirectory(dir.path());
  REQUIRE(repaired.ok());
  CHECK_FALSE(repaired->Damaged());
  // The last batch, cut short, is gone; every batch before it is there.
  const uint64_t kept = RecordsIn(*repaired) - other_records;
  CHECK(kept < kMembers);
  CHECK(kept >= kMembers - kBatch);
  CHECK(RecoveredPrefix(dir.path()) == kept);
}

TEST_CASE("a missing middle segment: the later ones are moved aside") {
  TempDir dir("check");
  WriteStore(dir.path());
  absl::StatusOr<DirectoryReport> clean = CheckDirectory(dir.path());
  REQUIRE(clean.ok());
  const uint64_t other_records = RecordsIn(*clean) - kMembers;
  const std::vector<const FileReport*> segments = Segments(*clean);
  REQUIRE(segments.size() >= 3);
  const uint64_t first_records = segments[0]->frames;
  const std::string third = segments[2]->path;
  std::filesystem::remove(segments[1]->path);

  absl::StatusOr<DirectoryReport> report = CheckDirectory(dir.path());
  REQUIRE(report.ok());
  const std::vector<const FileReport*> after = Segments(*report);
  REQUIRE(after.size() == segments.size() - 1);
  CHECK(after[1]->path == third);
  CHECK(after[1]->damaged);
  CHECK(after[1]->damage_offset == 0);
  CHECK(after[1]->problem.find("records are missing") != std::string::npos);
  CHECK(after[1]->repair == Repair::kMoveAside);
  for (size_t i = 2; i < after.size(); ++i) {
    CHECK(after[i]->repair == Repair::kMoveAside);
  }
  REQUIRE(RepairDirectory(*report).ok());
  CHECK(std::filesystem::exists(third + kDamagedSuffix));
  CHECK(RecoveredPrefix(dir.path()) == first_records - other_records);
}

TEST_CASE("a damaged newest snapshot cannot be repaired") {
  TempDir dir("check");
  {
    auto store = DurableStore::Open(Durability(dir.path()), Engine());
    REQUIRE(store.ok());
    REQUIRE((*store)->boards().GetOrCreate("arena").ok());
    REQUIRE((*store)->Compact().ok());
  }
  absl::StatusOr<DirectoryReport> clean = CheckDirectory(dir.path());
  REQUIRE(clean.ok());
  REQUIRE(clean->files.front().kind == FileKind::kSnapshot);
  const std::string path = clean->files.front().path;
  CHECK(clean->files.front().frames > 0);
  std::string bytes = ReadBytes(path);
  bytes[bytes.size() / 2] ^= 0x01;
  WriteBytes(path, bytes);
  absl::StatusOr<DirectoryReport> report = CheckDirectory(dir.path());
  REQUIRE(report.ok());
  CHECK(report->files.front().damaged);
  CHECK(report->files.front().repair == Repair::kCannot);
  CHECK_FALSE(report->Repairable());
}

TEST_CASE("a missing directory is an error naming it") {
  absl::StatusOr<DirectoryReport> report =
      CheckDirectory("/nonexistent/feedcore-check");
  CHECK_FALSE(report.ok());
  CHECK(report.status().message().find("/nonexistent/feedcore-check") !=
        std::string::npos);
}

}  // namespace
}  // namespace feedcore::check
