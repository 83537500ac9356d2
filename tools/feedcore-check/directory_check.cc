#include "directory_check.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "append_only.h"
#include "base/durable_file.h"
#include "base/io_error.h"
#include "durability/recovery.h"
#include "feedcore/options.h"
#include "feedcore/snapshot.h"
#include "names_journal.h"
#include "stream/change_frame.h"

namespace feedcore::check {
namespace {

using internal::IoError;

struct Listing {
  std::vector<std::pair<uint64_t, std::string>> snapshots;  // by sequence
  std::vector<std::pair<uint64_t, std::string>> segments;   // by sequence
  std::string journal;                                      // empty: none
  std::vector<std::string> leftovers;
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
    if (name == "LOCK") continue;
    if (const uint64_t s = internal::SnapshotSequenceOf(name)) {
      listing.snapshots.emplace_back(s, path);
    } else if (const uint64_t s = internal::SegmentSequenceOf(name)) {
      listing.segments.emplace_back(s, path);
    } else if (name == server::kNamesJournalFile) {
      listing.journal = path;
    } else {
      listing.leftovers.push_back(path);
    }
  }
  if (error) return IoError("listing", directory, error.value());
  std::sort(listing.snapshots.begin(), listing.snapshots.end());
  std::sort(listing.segments.begin(), listing.segments.end());
  std::sort(listing.leftovers.begin(), listing.leftovers.end());
  return listing;
}

// The section count in a snapshot's header (bytes 12..15), read only after
// LoadSnapshot accepted the file.
uint64_t SnapshotSections(const std::string& bytes) {
  uint64_t sections = 0;
  for (size_t i = 0; i < 4 && 12 + i < bytes.size(); ++i) {
    sections |= uint64_t{static_cast<unsigned char>(bytes[12 + i])} << (8 * i);
  }
  return sections;
}

// Loads the snapshot at `path` as Open would, whatever the options it was
// written with: the file's shard count, the largest payload limit, no
// threads. Returns the replay start, or the loader's error.
absl::StatusOr<uint64_t> LoadForCheck(const std::string& path) {
  EngineOptions options;
  options.shards = 0;
  options.sweep_interval = 0;
  options.fanout_threads = 0;
  options.max_payload_bytes = kMaxPayloadBytesLimit;
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(path, options);
  if (!replica.ok()) return replica.status();
  return (*replica)->sequence();
}

void MoveAside(FileReport& file, std::string reason) {
  file.repair = Repair::kMoveAside;
  file.repair_reason = std::move(reason);
  file.keep_bytes = 0;
  file.dropped_bytes = file.size;
}

absl::Status CheckSnapshots(const Listing& listing, DirectoryReport& report,
                            std::optional<uint64_t>* newest_sequence) {
  for (size_t i = 0; i < listing.snapshots.size(); ++i) {
    const bool newest = i + 1 == listing.snapshots.size();
    FileReport file;
    file.kind = FileKind::kSnapshot;
    file.path = listing.snapshots[i].second;
    absl::StatusOr<std::string> bytes = internal::ReadWholeFile(file.path);
    if (!bytes.ok()) return bytes.status();
    file.size = bytes->size();
    absl::StatusOr<uint64_t> sequence = LoadForCheck(file.path);
    if (sequence.ok()) {
      file.frames = SnapshotSections(*bytes);
      file.first_sequence = *sequence;
      if (newest) *newest_sequence = *sequence;
    } else {
      file.damaged = true;
      file.problem = std::string(sequence.status().message());
      if (newest) {
        file.repair = Repair::kCannot;
        file.repair_reason =
            "Open loads the newest snapshot and the log before it is gone: "
            "restore the directory from a copy";
      } else {
        MoveAside(file, "an older snapshot, which Open does not read");
      }
    }
    report.files.push_back(std::move(file));
  }
  return absl::OkStatus();
}

// Recovery's rules for the segments (src/durability/recovery.cc): records
// follow without a gap from the first segment's name on, each segment
// starting where the one before it ended, and only whole batches count.
absl::Status CheckSegments(const Listing& listing, DirectoryReport& report) {
  bool after_gap = false;
  bool cut_before = false;  // the segment before was truncated
  uint64_t expected = 0;    // the next record's sequence; 0 before the first
  for (size_t i = 0; i < listing.segments.size(); ++i) {
    const auto& [first_sequence, path] = listing.segments[i];
    const bool last = i + 1 == listing.segments.size();
    FileReport file;
    file.kind = FileKind::kLogSegment;
    file.path = path;
    absl::StatusOr<std::string> bytes = internal::ReadWholeFile(path);
    if (!bytes.ok()) return bytes.status();
    file.size = bytes->size();
    if (last && !after_gap && file.size < internal::kChangeFileHeaderBytes) {
      // What a crash right after creating the segment leaves; Open deletes
      // it.
      report.leftovers.push_back(path);
      continue;
    }
    absl::StatusOr<internal::ChangeFrameReport> frames =
        internal::ReportChangeFrames(*bytes, path, first_sequence);
    if (after_gap) {
      if (frames.ok()) {
        file.frames = frames->records;
        file.first_sequence = frames->first_sequence;
        file.last_sequence = frames->last_sequence;
      }
      file.dropped_records = file.frames;
      MoveAside(file,
                "it follows a damaged or missing segment: its records come "
                "after a gap and can no longer be replayed");
      report.files.push_back(std::move(file));
      continue;
    }
    if (!frames.ok()) {
      file.damaged = true;
      file.damage_offset = 0;
      file.problem = std::string(frames.status().message());
      file.bytes_after = file.size;
      MoveAside(file, "its header is damaged, so none of it can be read");
      after_gap = true;
      report.files.push_back(std::move(file));
      continue;
    }
    file.frames = frames->records;
    file.first_sequence = frames->first_sequence;
    file.last_sequence = frames->last_sequence;
    if (expected != 0 && first_sequence != expected && cut_before) {
      file.dropped_records = frames->records;
      MoveAside(file,
                "its records follow those the repair of the segment before "
                "it drops, and could no longer be replayed");
      after_gap = true;
      report.files.push_back(std::move(file));
      continue;
    }
    if (expected != 0 && first_sequence != expected) {
      file.damaged = true;
      file.damage_offset = 0;
      file.problem = absl::StrCat("starts at sequence ", first_sequence,
                                  " but the log before it ends at ",
                                  expected - 1, ": records are missing");
      file.bytes_after = file.size;
      file.dropped_records = frames->records;
      MoveAside(file, "its records come after a gap");
      after_gap = true;
      report.files.push_back(std::move(file));
      continue;
    }
    const bool incomplete_batch = frames->committed_end != frames->clean_end;
    if (!frames->damage.empty() || incomplete_batch) {
      file.damaged = true;
      if (!frames->damage.empty()) {
        file.damage_offset = frames->clean_end;
        file.problem = frames->damage;
      } else {
        file.damage_offset = frames->committed_end;
        file.problem =
            "the records from here on have no batch end (a write cut short)";
      }
      file.bytes_after = file.size - *file.damage_offset;
      file.records_after = frames->records_after;
      file.open_repairs_it =
          last && (frames->damage.empty() || frames->torn_tail);
      file.frames = frames->committed_records;
      file.last_sequence = frames->committed_last_sequence;
      file.repair = Repair::kTruncate;
      file.keep_bytes = frames->committed_end;
      file.dropped_bytes = file.size - frames->committed_end;
      file.dropped_records =
          frames->records - frames->committed_records + frames->records_after;
      cut_before = true;
    } else {
      cut_before = false;
    }
    expected = file.frames > 0 ? file.last_sequence + 1 : first_sequence;
    report.files.push_back(std::move(file));
  }
  return absl::OkStatus();
}

absl::Status CheckJournal(const std::string& path, DirectoryReport& report) {
  FileReport file;
  file.kind = FileKind::kNamesJournal;
  file.path = path;
  absl::StatusOr<std::string> bytes = internal::ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  file.size = bytes->size();
  absl::StatusOr<server::NamesJournalReport> names =
      server::ReportNamesJournal(*bytes);
  if (!names.ok()) {
    file.damaged = true;
    file.damage_offset = 0;
    file.problem = std::string(names.status().message());
    file.bytes_after = file.size;
    if (absl::StrContains(names.status().message(), "format version")) {
      file.repair = Repair::kCannot;
      file.repair_reason = "it was written by another version of the server";
    } else {
      // Not a journal at all: an empty journal is what the server starts.
      file.repair = Repair::kTruncate;
      file.keep_bytes = 0;
      file.dropped_bytes = file.size;
    }
  } else {
    file.frames = names->records;
    if (!names->damage.empty()) {
      file.damaged = true;
      file.damage_offset = names->valid_bytes;
      file.problem = names->damage;
      file.bytes_after = file.size - names->valid_bytes;
      file.records_after = names->records_after;
      file.open_repairs_it = names->torn_tail;
      file.repair = Repair::kTruncate;
      file.keep_bytes = names->valid_bytes;
      file.dropped_bytes = file.bytes_after;
      file.dropped_records = names->records_after;
    }
  }
  report.files.push_back(std::move(file));
  return absl::OkStatus();
}

}  // namespace

bool DirectoryReport::Damaged() const {
  if (!unrepairable.empty()) return true;
  return std::any_of(files.begin(), files.end(), [](const FileReport& f) {
    return f.damaged || f.repair != Repair::kNone;
  });
}

bool DirectoryReport::Repairable() const {
  if (!unrepairable.empty()) return false;
  return std::none_of(files.begin(), files.end(), [](const FileReport& f) {
    return f.repair == Repair::kCannot;
  });
}

absl::StatusOr<DirectoryLock> DirectoryLock::Acquire(
    const std::string& directory, bool exclusive) {
  const std::string path = absl::StrCat(directory, "/LOCK");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return DirectoryLock(-1);
    return IoError("opening", path, errno);
  }
  if (::flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat(directory, " is in use by a running store or server (",
                       path, " is locked); stop it first"));
    }
    return IoError("locking", path, err);
  }
  return DirectoryLock(fd);
}

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<DirectoryReport> CheckDirectory(const std::string& directory) {
  absl::StatusOr<Listing> listing = ListDirectory(directory);
  if (!listing.ok()) return listing.status();
  DirectoryReport report;
  report.directory = directory;
  report.leftovers = listing->leftovers;
  std::optional<uint64_t> snapshot_sequence;
  if (absl::Status s = CheckSnapshots(*listing, report, &snapshot_sequence);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckSegments(*listing, report); !s.ok()) return s;
  if (listing->snapshots.empty() && !listing->segments.empty()) {
    report.unrepairable.push_back(
        absl::StrCat(directory,
                     " holds log segments but no snapshot; every store writes "
                     "one before its log"));
  }
  if (snapshot_sequence.has_value() && !listing->segments.empty() &&
      listing->segments.front().first > *snapshot_sequence) {
    report.unrepairable.push_back(absl::StrCat(
        "the log starts at sequence ", listing->segments.front().first, " (",
        listing->segments.front().second,
        ") but the newest snapshot needs it "
        "from ",
        *snapshot_sequence));
  }
  if (!listing->journal.empty()) {
    if (absl::Status s = CheckJournal(listing->journal, report); !s.ok()) {
      return s;
    }
  }
  return report;
}

absl::Status RepairDirectory(const DirectoryReport& report) {
  bool renamed = false;
  for (const FileReport& file : report.files) {
    if (file.repair == Repair::kTruncate) {
      const int fd = ::open(file.path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) return IoError("opening", file.path, errno);
      if (::ftruncate(fd, static_cast<off_t>(file.keep_bytes)) != 0 ||
          ::fdatasync(fd) != 0) {
        const int err = errno;
        ::close(fd);
        return IoError("truncating", file.path, err);
      }
      ::close(fd);
    } else if (file.repair == Repair::kMoveAside) {
      const std::string aside = file.path + kDamagedSuffix;
      if (::rename(file.path.c_str(), aside.c_str()) != 0) {
        return IoError(absl::StrCat("renaming ", file.path, " to"), aside,
                       errno);
      }
      renamed = true;
    }
  }
  if (renamed) {
    return internal::SyncDirectoryOf(absl::StrCat(report.directory, "/LOCK"));
  }
  return absl::OkStatus();
}

}  // namespace feedcore::check
