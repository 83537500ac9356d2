// DurableLog: the change log's write gate that puts every record into log
// segment files in a directory, with an fsync policy and group commit.
//
// Data flow: ChangeLog::Append (under the change log's mutex) encodes each
// record's frame into `buffer_`; one writer thread takes the buffer,
// writes it to the current segment and, as the policy says, syncs it.
// Under kAlways a call's End waits for `synced_` to reach what was
// appended when it ended, so all callers waiting at once share the
// writer's next fdatasync (group commit).
//
// Whole calls: a call's records are interleaved with other calls' in
// sequence order, so the writer takes frames only up to a boundary that
// splits no call: before the first call still running (`in_flight_`, by
// the sequence point at which each was admitted), and never inside the
// records of a call that has ended. The second part matters because a call
// that ended may have been admitted before the first call still running
// and yet have appended records after that call's start (it was
// descheduled halfway): cutting before the running call alone would write
// the ended call's first records and not its last ones. So each call's
// last record is tracked (the appending thread's, see Append), and ended
// calls whose records reach past the start of a later call are folded
// into `hold_start_`..`hold_last_`, which the boundary stays before. What
// reaches the disk is then a prefix of the sequence made of finished
// calls: a crash leaves every call whole or absent, never a Publish's
// activity without its feeds. A call made inside another on the same
// thread (a DurableStore::WriteGroup's calls) is part of the outer one:
// the boundary stays before the outer call's start until it ends, and only
// the outer call waits for the sync.
//
// Disk space: a segment is created with 1 MiB reserved (fallocate,
// keeping the file size; the whole segment if it is smaller), and doubles
// its reservation, up to its size, each time it is half used; the next
// segment is made ready in the background once the current one is half
// full. So a store that writes little holds little disk, and a full disk
// is found while the current reservation still has room. When a
// reservation fails (disk full, file size limit), Admit refuses new writes
// with ResourceExhausted until the writer's retry (every pass, at least
// once a second) succeeds; writes already admitted still have the rest of
// the current reservation, and, with no room for the next segment, go on
// in the current one past its size.
//
// Failures: a write that finds no room (ResourceExhausted: disk full,
// quota, file size limit) is cut back to the last whole frame and kept
// (`retry_`); new calls are refused with `space_error_`, calls waiting for
// the batch get that error, and each pass (at least once a second) writes
// the batch again until it fits, after which writes resume: the records
// already applied in memory reach the disk, in order, as Redis's
// everysec writes do. Any other error writing, syncing or creating a
// segment for records already applied is sticky (`error_`): every waiting
// and later Commit and every later Admit returns it.
//
// Locking: one mutex, the change log's (`mu_`), guards the log's state
// too, so that buffering a record costs no second lock. It stays a leaf:
// write calls take it in Admit and End with no other lock held, and the
// writer thread holds it only to take the buffer and publish progress,
// never during I/O.
#ifndef FEEDCORE_SRC_DURABILITY_DURABLE_LOG_H_
#define FEEDCORE_SRC_DURABILITY_DURABLE_LOG_H_

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/durable_store.h"
#include "stream/change_log.h"

namespace feedcore::internal {

// The system calls the log makes on segment files, replaceable so that
// tests can make them fail the way a full or broken disk does. Each returns
// 0 (or bytes written) or -1 with errno set, as the system call does.
class SegmentFileCalls {
 public:
  virtual ~SegmentFileCalls() = default;
  virtual int Reserve(int fd, off_t bytes);
  virtual ssize_t Write(int fd, const char* data, size_t size);
  virtual int Sync(int fd);
};

// A log segment on disk: `log-<first_sequence>.fclog`.
struct LogSegment {
  uint64_t first_sequence = 0;
  std::string path;
  uint64_t bytes = 0;
};

// `directory/log-<first_sequence>.fclog`.
std::string LogSegmentPath(const std::string& directory,
                           uint64_t first_sequence);

class DurableLog final : public WriteGate {
 public:
  struct Config {
    std::string directory;
    FsyncPolicy fsync = FsyncPolicy::kEverySecond;
    uint64_t segment_bytes = 0;
    // Live segments in order; the last one (if any) is continued, the
    // others are kept for Stats and deleted by DropSegmentsBefore.
    std::vector<LogSegment> segments;
    // The sequence of the next record appended.
    uint64_t next_sequence = 1;
    // Segment bytes written since the newest snapshot.
    uint64_t bytes_since_snapshot = 0;
    // Null: the real system calls.
    std::shared_ptr<SegmentFileCalls> calls;
    // The mutex of the change log this gate is attached to
    // (ChangeLog::wait_mutex()), which guards the log's state too.
    std::mutex* mutex = nullptr;
  };

  // Opens (or creates) the segment to continue and starts the writer.
  static absl::StatusOr<std::unique_ptr<DurableLog>> Start(Config config);

  // Writes and syncs what is buffered, then stops the writer.
  ~DurableLog() override;

  void Append(const ChangeRecord& record) override;
  absl::StatusOr<uint64_t> Admit() override;
  // Whether the calling thread is inside a write call of this log.
  bool InCall() const;
  absl::Status End(uint64_t token, bool succeeded) override;

  // Returns once everything appended so far is written and synced, after
  // a whole pass of the writer (which also retries reserving space).
  absl::Status Sync();

  // Makes a new segment start after the last whole call (Boundary), and
  // returns the sequence it starts at: the records appended from now on go
  // to it (and those appended before that a call still needs), every
  // record below it is in an older segment. The switch happens when the
  // writer reaches it (Sync waits for it).
  uint64_t StartNewSegment();

  // Deletes every segment whose first sequence is below `sequence` (they
  // hold only records below it) and resets the bytes counted since the
  // snapshot to those of the segments kept. The directory is synced.
  absl::Status DropSegmentsBefore(uint64_t sequence);

  // Fills the log's fields of `stats`.
  void AddStats(DurabilityStats* stats) const;

 private:
  explicit DurableLog(Config config);  // REQUIRES: config.mutex

  // What the writer takes from the buffer in one go.
  struct Batch {
    std::string bytes;
    uint64_t first_sequence = 0;
    uint64_t last_sequence = 0;
    // A new segment starts at byte `split` of `bytes` with sequence
    // `split_sequence`; 0 when none does.
    uint64_t split_sequence = 0;
    size_t split = 0;
    bool sync = false;
    // How far a write that ran out of space got: bytes of `bytes` on disk,
    // and whether the split's roll was made.
    size_t written = 0;
    bool rolled = false;
  };

  // Calls admitted at one sequence point: `calls` of them not ended yet,
  // and the last record any of them appended (0: none yet).
  struct InFlight {
    uint64_t start = 0;
    uint32_t calls = 0;
    uint64_t last = 0;
  };

  void WriterLoop();
  // Takes from the buffer every frame up to the boundary. REQUIRES: mu_.
  Batch TakeBatch();
  // The last sequence the writer may take: everything before the first
  // call still running. REQUIRES: mu_.
  uint64_t Boundary() const;
  // Whether the callers waiting in End can all be served by one sync: the
  // boundary has passed the newest of their targets. Waiting for that,
  // rather than syncing each finished call's records as soon as they can
  // be taken, is what makes concurrent callers share a sync. REQUIRES: mu_.
  bool CommitDue() const;
  // Whether some buffered frame is at or before the boundary. REQUIRES:
  // mu_.
  bool Takeable() const;
  // Bytes of the buffer's frames up to `sequence`. REQUIRES: mu_.
  size_t BytesThrough(uint64_t sequence) const;
  // Writes `batch` to the segments, rolling where it must. Writer only.
  // On failure, batch.written and batch.rolled say how far it got; a
  // failed append leaves the segment as it was before that append.
  absl::Status WriteBatch(Batch& batch);
  absl::Status WriteToCurrent(const char* data, size_t size);
  // Syncs and closes the current segment and opens the one starting at
  // `first_sequence`. Writer only.
  absl::Status Roll(uint64_t first_sequence);
  // What a new segment reserves: kFirstReservationBytes, at most its size.
  uint64_t FirstReservation() const;
  // Whether the current segment's reservation should grow (half of it is
  // used), and whether the spare should be made (half of the segment is).
  // Writer only.
  bool GrowthDue() const;
  bool SpareDue() const;
  // Grows the current segment's reservation to twice what it holds or
  // uses, at most segment_bytes_. Writer only (and Start).
  absl::Status ReserveAhead();
  // Grows the current reservation and makes the spare segment (header
  // written, space reserved) as they are due, recording in `space_error_`
  // the first failure or that there was none. Writer only.
  void ReserveRoom();
  static absl::Status NoRoom(const absl::Status& cause);
  // Creates a segment file with its header and FirstReservation() bytes
  // reserved.
  absl::StatusOr<int> CreateSegmentFile(const std::string& path);
  void Fail(absl::Status status);

  const std::string directory_;
  const FsyncPolicy fsync_;
  const uint64_t segment_bytes_;
  const std::shared_ptr<SegmentFileCalls> calls_;

  // The writer's own: the current segment and the spare, and how long the
  // last write and sync took (the commit delay is a part of it).
  int fd_ = -1;
  std::chrono::microseconds last_sync_duration_{0};
  uint64_t current_bytes_ = 0;
  uint64_t reserved_ = 0;  // bytes reserved in the current segment
  int spare_fd_ = -1;
  uint64_t spare_reserved_ = 0;
  std::string spare_path_;

  // The change log's mutex (Config::mutex): a leaf lock, taken by the
  // change log's Append around Append here.
  std::mutex& mu_;
  std::condition_variable work_;      // the writer waits here
  std::condition_variable progress_;  // committers and Sync wait here
  std::string buffer_;
  std::string spare_buffer_;  // empty, with the capacity of an old buffer
  uint64_t buffer_first_ = 0;
  uint64_t appended_ = 0;
  uint64_t written_ = 0;
  uint64_t synced_ = 0;
  uint64_t sync_wanted_ = 0;    // a Sync waits for synced_ to reach it
  uint64_t commit_wanted_ = 0;  // the newest target of a call in End
  // Calls waiting in End, by target, that no sync has served yet; their
  // number; and that number when the last sync ended (those it served and
  // those still waiting: the callers the next sync can expect).
  std::map<uint64_t, size_t> waiting_;
  size_t unserved_ = 0;
  size_t cohort_ = 0;
  uint64_t sync_requests_ = 0;    // Sync calls so far
  uint64_t passed_requests_ = 0;  // sync_requests_ as the last pass took it
  uint64_t passes_ = 0;           // writer passes completed
  bool writing_ = false;          // a pass is between taking and publishing
  uint64_t split_sequence_ = 0;
  size_t split_offset_ = 0;
  uint64_t current_first_ = 0;  // the current segment's first sequence
  std::vector<LogSegment> segments_;
  uint64_t bytes_since_snapshot_ = 0;
  uint64_t fsyncs_ = 0;
  std::deque<InFlight> in_flight_;  // by start, ascending
  // Ended calls popped from `in_flight_` whose records span
  // hold_start_..hold_last_ (0: none): the boundary never falls inside.
  uint64_t hold_start_ = 0;
  uint64_t hold_last_ = 0;
  // The last record appended by a thread outside any call of this log (a
  // fan-out worker delivering for a publisher's call, say): counted as the
  // last record of every call running when it was appended.
  uint64_t orphan_last_ = 0;
  bool stop_ = false;
  absl::Status error_;        // sticky
  absl::Status space_error_;  // until ReserveRoom succeeds
  // A batch that found no room, written again by the next pass; while it
  // waits, no other batch is taken.
  std::optional<Batch> retry_;
  uint64_t room_failures_ = 0;  // batches kept for retry so far

  std::thread writer_;
};

// DurableStore::Open with the log's system calls replaced by `calls` (null:
// the real ones), for tests of a failing disk.
absl::StatusOr<std::unique_ptr<DurableStore>> OpenDurableStore(
    DurabilityOptions durability, EngineOptions engine_options,
    std::shared_ptr<SegmentFileCalls> calls);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_DURABILITY_DURABLE_LOG_H_
