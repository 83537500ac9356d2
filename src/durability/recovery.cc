#include "durability/recovery.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/durable_file.h"
#include "base/io_error.h"
#include "feedcore/change_stream.h"
#include "feedcore/leaderboard.h"
#include "stream/change_frame.h"

namespace feedcore::internal {
namespace {

constexpr absl::string_view kSnapshotPrefix = "snapshot-";
constexpr absl::string_view kSnapshotSuffix = ".fcsnap";
constexpr absl::string_view kSegmentPrefix = "log-";
constexpr absl::string_view kSegmentSuffix = ".fclog";

// The sequence in `name` = prefix + decimal + suffix, or 0.
uint64_t SequenceIn(absl::string_view name, absl::string_view prefix,
                    absl::string_view suffix) {
  if (!absl::ConsumePrefix(&name, prefix) ||
      !absl::ConsumeSuffix(&name, suffix) || name.empty() || name.size() > 20 ||
      !std::all_of(name.begin(), name.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return 0;
  }
  uint64_t sequence = 0;
  return absl::SimpleAtoi(name, &sequence) ? sequence : 0;
}

struct Listing {
  std::vector<SnapshotFile> snapshots;  // by sequence
  std::vector<LogSegment> segments;     // by first sequence
};

absl::StatusOr<Listing> ListDirectory(const std::string& directory) {
  Listing listing;
  std::error_code error;
  std::filesystem::directory_iterator it(directory, error);
  if (error) return IoError("listing", directory, error.value());
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (error) return IoError("listing", directory, error.value());
    const std::string name = it->path().filename().string();
    const std::string path = it->path().string();
    // What an interrupted save or segment roll left: never a live file.
    if (absl::EndsWith(name, ".tmp") ||
        path == SnapshotInProgressPath(directory)) {
      if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        return IoError("deleting", path, errno);
      }
      continue;
    }
    if (const uint64_t s = SnapshotSequenceOf(name)) {
      listing.snapshots.push_back({s, path});
    } else if (const uint64_t first = SegmentSequenceOf(name)) {
      listing.segments.push_back({first, path, 0});
    }
  }
  if (error) return IoError("listing", directory, error.value());
  std::sort(listing.snapshots.begin(), listing.snapshots.end(),
            [](const SnapshotFile& a, const SnapshotFile& b) {
              return a.sequence < b.sequence;
            });
  std::sort(listing.segments.begin(), listing.segments.end(),
            [](const LogSegment& a, const LogSegment& b) {
              return a.first_sequence < b.first_sequence;
            });
  return listing;
}

// Saves the snapshot of an empty engine and registry made with `options`,
// so that an empty directory starts like any other.
absl::StatusOr<SnapshotFile> SaveEmptySnapshot(const std::string& directory,
                                               EngineOptions options) {
  absl::StatusOr<std::shared_ptr<ChangeStream>> stream =
      ChangeStream::Create({});
  if (!stream.ok()) return stream.status();
  options.change_stream = *stream;
  options.sweep_interval = 0;
  options.fanout_threads = 0;
  absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> engine =
      FeedEngine::Create(options);
  if (!engine.ok()) return engine.status();
  LeaderboardRegistry boards(*stream);
  const std::string temporary = SnapshotInProgressPath(directory);
  absl::StatusOr<SnapshotInfo> info =
      SaveSnapshot(**engine, temporary, &boards);
  if (!info.ok()) return info.status();
  SnapshotFile file{info->sequence, SnapshotPath(directory, info->sequence)};
  if (::rename(temporary.c_str(), file.path.c_str()) != 0) {
    return IoError(absl::StrCat("renaming ", temporary, " to"), file.path,
                   errno);
  }
  if (absl::Status s = SyncDirectoryOf(file.path); !s.ok()) return s;
  return file;
}

// Reads `segment`, applying its records to `recovered->replica`.
// `*expected` is the sequence the next record must have.
absl::Status ReplaySegment(LogSegment& segment, bool first, bool last,
                           uint64_t* expected, Recovered* recovered) {
  absl::StatusOr<std::string> bytes = ReadWholeFile(segment.path);
  if (!bytes.ok()) return bytes.status();
  if (!first && segment.first_sequence != *expected) {
    return absl::DataLossError(absl::StrCat(
        "log segment ", segment.path, " starts at sequence ",
        segment.first_sequence, " but the segment before it ends at ",
        *expected - 1, ": records are missing"));
  }
  *expected = segment.first_sequence;
  // Records are applied a batch at a time: a crash in the middle of a
  // write can leave whole frames of a batch without its end, and those
  // belong to calls that did not all reach the disk.
  std::vector<ChangeRecord> batch;
  uint64_t scanned = *expected;
  size_t committed_end = kChangeFileHeaderBytes;
  size_t clean_end = 0;
  bool torn = false;
  absl::Status scanned_status = ScanChangeFrames(
      *bytes, segment.path,
      [&](ChangeRecord&& record, size_t offset) -> absl::Status {
        if (record.sequence != scanned) {
          return absl::DataLossError(absl::StrCat(
              "log segment ", segment.path, " is damaged: the record at byte ",
              offset, " has sequence ", record.sequence, ", expected ",
              scanned));
        }
        ++scanned;
        batch.push_back(std::move(record));
        return absl::OkStatus();
      },
      &clean_end, &torn,
      [&](size_t end) -> absl::Status {
        for (const ChangeRecord& record : batch) {
          if (absl::Status s = recovered->replica->Apply(record); !s.ok()) {
            return absl::DataLossError(
                absl::StrCat("log segment ", segment.path, ": record ",
                             record.sequence, " (in the batch ending at byte ",
                             end, ") does not apply: ", s.message()));
          }
          ++recovered->records_read;
        }
        batch.clear();
        *expected = scanned;
        committed_end = end;
        return absl::OkStatus();
      });
  if (!scanned_status.ok()) return scanned_status;
  if (torn || committed_end != clean_end) {
    if (!last) {
      return absl::DataLossError(absl::StrCat(
          "log segment ", segment.path, " ends in an incomplete batch at byte ",
          committed_end, " but is not the last segment"));
    }
    if (::truncate(segment.path.c_str(), static_cast<off_t>(committed_end)) !=
        0) {
      return IoError("cutting the torn end off", segment.path, errno);
    }
    recovered->torn_tail = true;
  }
  clean_end = committed_end;
  segment.bytes = clean_end;
  recovered->bytes_read += clean_end;
  return absl::OkStatus();
}

}  // namespace

uint64_t SnapshotSequenceOf(absl::string_view file_name) {
  return SequenceIn(file_name, kSnapshotPrefix, kSnapshotSuffix);
}

uint64_t SegmentSequenceOf(absl::string_view file_name) {
  return SequenceIn(file_name, kSegmentPrefix, kSegmentSuffix);
}

std::string SnapshotPath(const std::string& directory, uint64_t sequence) {
  return absl::StrCat(directory, "/", kSnapshotPrefix, sequence,
                      kSnapshotSuffix);
}

std::string SnapshotInProgressPath(const std::string& directory) {
  return absl::StrCat(directory, "/snapshot-in-progress", kSnapshotSuffix);
}

absl::StatusOr<Recovered> Recover(const std::string& directory,
                                  const EngineOptions& options) {
  absl::StatusOr<Listing> listing = ListDirectory(directory);
  if (!listing.ok()) return listing.status();
  if (listing->snapshots.empty()) {
    if (!listing->segments.empty()) {
      return absl::DataLossError(absl::StrCat(
          directory, " holds log segments (the first is ",
          listing->segments.front().path,
          ") but no snapshot; every store writes one before its log"));
    }
    absl::StatusOr<SnapshotFile> empty = SaveEmptySnapshot(directory, options);
    if (!empty.ok()) return empty.status();
    listing->snapshots.push_back(*std::move(empty));
  }
  Recovered recovered;
  recovered.snapshot = listing->snapshots.back();
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(recovered.snapshot.path, options);
  if (!replica.ok()) return replica.status();
  recovered.replica = *std::move(replica);
  std::error_code size_error;
  recovered.snapshot_bytes =
      std::filesystem::file_size(recovered.snapshot.path, size_error);

  std::vector<LogSegment>& segments = listing->segments;
  // A crash right after a segment was created can leave it shorter than
  // its header: it never held a record.
  if (!segments.empty()) {
    std::error_code error;
    const uint64_t size =
        std::filesystem::file_size(segments.back().path, error);
    if (!error && size < kChangeFileHeaderBytes) {
      if (::unlink(segments.back().path.c_str()) != 0) {
        return IoError("deleting", segments.back().path, errno);
      }
      segments.pop_back();
      recovered.torn_tail = true;
    }
  }
  const uint64_t snapshot_sequence = recovered.replica->sequence();
  if (!segments.empty() &&
      segments.front().first_sequence > snapshot_sequence) {
    return absl::DataLossError(absl::StrCat(
        "the log in ", directory, " starts at sequence ",
        segments.front().first_sequence, " (", segments.front().path,
        ") but snapshot ", recovered.snapshot.path, " needs it from ",
        snapshot_sequence));
  }
  uint64_t expected = snapshot_sequence;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (absl::Status s =
            ReplaySegment(segments[i], i == 0, i + 1 == segments.size(),
                          &expected, &recovered);
        !s.ok()) {
      return s;
    }
  }
  // A log that ends before the snapshot's sequence (a torn tail cut back
  // past it, or segments a compaction did not get to delete) holds only
  // records the snapshot has. Continuing its last segment would put the
  // next record, at the snapshot's sequence, after a gap that the next
  // recovery reads as records missing: the segments go, and the log starts
  // a new one there. Oldest first, so that an interruption leaves a run
  // that still recovers.
  if (expected < snapshot_sequence && !segments.empty()) {
    for (const LogSegment& segment : segments) {
      if (::unlink(segment.path.c_str()) != 0 && errno != ENOENT) {
        return IoError("deleting", segment.path, errno);
      }
    }
    if (absl::Status s = SyncDirectoryOf(segments.front().path); !s.ok()) {
      return s;
    }
    segments.clear();
  }
  recovered.segments = std::move(segments);
  recovered.next_sequence = std::max(expected, snapshot_sequence);
  return recovered;
}

}  // namespace feedcore::internal
