// What feedcore-check finds in a store directory, and what --fix does
// about it.
//
// A directory is what DurableStore keeps (snapshot-<n>.fcsnap,
// log-<n>.fclog, LOCK; docs/formats.md) and, for feedcore-server's
// `--appendonly yes`, its names journal (names.fcjournal). CheckDirectory
// reads every file without changing anything, with the library's own
// readers: LoadSnapshot for snapshots, ReportChangeFrames for log
// segments, ReportNamesJournal for the journal. It finds what
// DurableStore::Open and the server refuse, and what they would cut off
// themselves (a torn tail).
//
// The repair of each file keeps everything before its first damaged frame:
//   * a log segment is truncated after its last whole batch before the
//     damage (recovery applies whole batches only), so Open replays it;
//   * the segments after a damaged or missing one are moved aside (renamed
//     to NAME.damaged, which Open does not read): their records follow a
//     gap in the sequence and can never be replayed;
//   * a segment whose header is damaged is moved aside, as is an older
//     snapshot that does not load (Open reads the newest only);
//   * the names journal is truncated before its damaged frame (the server
//     then drops the board members whose names were lost, and counts them);
//   * the newest snapshot, a journal of another version and a log that
//     starts after the snapshot cannot be repaired: nothing before the
//     damage can stand in for them. The report says so and --fix leaves
//     the directory to a restore from a copy.
//
// Errors: CheckDirectory fails only when the directory cannot be read
// (naming it); damage is reported, never an error. RepairDirectory returns
// the first I/O error, naming the file; the repairs before it are done.
//
// Thread safety: free functions over a directory that no store has open
// (LockDirectory makes sure of that); not for concurrent use on one
// directory.
//
// Cost: every file is read whole, and every snapshot is loaded into an
// engine (memory about that of the store).
#ifndef FEEDCORE_TOOLS_FEEDCORE_CHECK_DIRECTORY_CHECK_H_
#define FEEDCORE_TOOLS_FEEDCORE_CHECK_DIRECTORY_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace feedcore::check {

enum class FileKind { kSnapshot, kLogSegment, kNamesJournal };

enum class Repair {
  kNone,
  kTruncate,   // to `keep_bytes`
  kMoveAside,  // renamed to path + kDamagedSuffix
  kCannot,     // damage that no repair of this file can undo
};

inline constexpr char kDamagedSuffix[] = ".damaged";

struct FileReport {
  std::string path;
  FileKind kind = FileKind::kLogSegment;
  uint64_t size = 0;
  // Whole frames before the damage (records of a log segment or of the
  // journal; sections of a snapshot, counted only when it loads).
  uint64_t frames = 0;
  // What the file says about the sequence: a snapshot's replay start, a
  // segment's first and last record (0: none).
  uint64_t first_sequence = 0;
  uint64_t last_sequence = 0;

  bool damaged = false;
  // Where the first damaged frame starts (unknown for a snapshot, whose
  // loader names the section instead), what is wrong, and what follows
  // from there: bytes, and whole records after the damaged frame (a lower
  // bound, found by following the length fields).
  std::optional<uint64_t> damage_offset;
  std::string problem;
  uint64_t bytes_after = 0;
  uint64_t records_after = 0;
  // The damage is a torn tail that Open cuts off by itself.
  bool open_repairs_it = false;

  Repair repair = Repair::kNone;
  std::string repair_reason;  // for kMoveAside and kCannot
  uint64_t keep_bytes = 0;    // kTruncate: the size afterwards
  uint64_t dropped_bytes = 0;
  uint64_t dropped_records = 0;  // whole records the repair drops
};

struct DirectoryReport {
  std::string directory;
  // Snapshots by sequence, then log segments by first sequence, then the
  // names journal.
  std::vector<FileReport> files;
  // Files Open deletes itself (what an interrupted save or segment
  // creation left), and names it does not read.
  std::vector<std::string> leftovers;
  // Damage between files that no repair fixes (a log without a snapshot,
  // a log that starts after the snapshot).
  std::vector<std::string> unrepairable;

  // Whether anything needs a repair or cannot be repaired.
  bool Damaged() const;
  // Whether RepairDirectory leaves a directory that Open accepts.
  bool Repairable() const;
};

// Holds the directory's LOCK with flock, as DurableStore::Open does, so
// that no store opens it meanwhile: shared for a check, exclusive for a
// repair. FailedPrecondition when a running store holds it. A directory
// without a LOCK file (never opened by a store) gets none.
class DirectoryLock {
 public:
  static absl::StatusOr<DirectoryLock> Acquire(const std::string& directory,
                                               bool exclusive);
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&&) = delete;
  ~DirectoryLock();

 private:
  explicit DirectoryLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Reads every file of `directory` (see above). NotFound or the system's
// error, naming the directory, when it cannot be listed.
absl::StatusOr<DirectoryReport> CheckDirectory(const std::string& directory);

// Carries out `report`'s repairs (truncations synced, renames followed by
// a sync of the directory). REQUIRES: report.Repairable().
absl::Status RepairDirectory(const DirectoryReport& report);

}  // namespace feedcore::check

#endif  // FEEDCORE_TOOLS_FEEDCORE_CHECK_DIRECTORY_CHECK_H_
