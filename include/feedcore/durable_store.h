// DurableStore: a feed engine and a leaderboard registry whose every change
// is written to an append-only log in a directory, and which come back by
// themselves after the process dies.
//
//   feedcore::DurabilityOptions durability;
//   durability.directory = "/var/lib/game/feedcore";
//   durability.fsync = feedcore::FsyncPolicy::kAlways;
//   auto store = feedcore::DurableStore::Open(durability, {}).value();
//   store->engine().Publish(...);         // on disk when it returns
//   store->boards().GetOrCreate("arena").value()->Increment(player, 10);
//   feedcore::EntityId alice = store->names().Resolve("alice").value();
//
// What is guaranteed
// ------------------
// Every change the engine, the registry's boards or the name registry
// (name_registry.h: each new name) make is appended to the log as the
// change stream's records (change_stream.h), in sequence order,
// before the call that made it returns. When the call returns OK:
//   kAlways       the change is on stable storage (fdatasync). Concurrent
//                 callers share one fdatasync (group commit): the call
//                 waits for a sync that covers everything appended when
//                 it ended, including records of calls that were still
//                 running then.
//   kEverySecond  a background thread writes the log and syncs it once a
//                 second (sooner when a MiB is waiting): a crash of the
//                 process or the machine loses at most about the last
//                 second of acknowledged changes.
//   kNever        the same thread writes once a second and never syncs;
//                 the system flushes when it chooses.
// A crash leaves every call whole or absent: the log reaches the disk only
// up to points between calls, each write ending in a batch end, and
// recovery applies whole batches.
// Asynchronous fan-out (FanoutCompletion::kAsynchronous) is durable once it
// has run: the activity itself is logged before Publish returns, followers'
// copies when WaitForFanout returns (with kAlways, Sync() after it).
//
// A change that cannot be logged fails and changes nothing: each write
// first checks that the log is healthy and that disk space for it is
// reserved (log segments are preallocated ahead of the writes), and fails
// with ResourceExhausted (disk full, file size limit) or Unavailable (an
// earlier I/O error) before touching memory. A write of records already
// applied in memory that finds the disk full anyway (ResourceExhausted) is
// kept and written again at least once a second: until it fits, the calls
// waiting for it fail with that error and new writes are refused; then
// writes resume by themselves, and the kept records reach the disk in
// order. Any other I/O error while writing or syncing records already
// applied cannot be undone: the calls waiting for that sync fail with the
// error, the store refuses every later write (reads go on), and after a
// restart the state is what reached the disk. See docs/reliability.md.
//
// Recovery
// --------
// Open loads the newest snapshot in the directory and applies the log
// records after its sequence. A log that ends in an incomplete record or
// batch (a write cut short by the crash) is cut back to its last whole
// batch.
// Damage anywhere else (a checksum mismatch followed by more data, a
// missing segment, a snapshot that does not load) fails Open with DataLoss
// naming the file and the offset: nothing is skipped silently.
//
// Compaction
// ----------
// When the log written since the newest snapshot outgrows
// `compact_after_bytes`, a background thread saves a new snapshot (one
// engine shard or board partition copied at a time: writers wait only for
// the copy of their own shard) and, once it is durable, deletes the log
// segments and the snapshot it covers. `Compact()` does the same at once.
//
// Files
// -----
// `snapshot-<sequence>.fcsnap` (snapshot.h's format, written to a temporary
// name, synced and renamed: a crash leaves the previous one or the new one)
// and `log-<first sequence>.fclog` (change_file.h's format). The store
// takes an exclusive lock on `LOCK` in the directory: a second Open of the
// same directory, in this process or another, fails with
// FailedPrecondition. Byte layouts: docs/formats.md.
//
// Thread safety
// -------------
// Every method may be called from any thread; engine() and boards() are as
// thread-safe as any engine and registry. Destroying the store writes and
// syncs what is buffered (whatever the policy) and stops its threads; no
// call on the engine or a board may run meanwhile.
//
// Cost
// ----
// Each change costs its change-stream record (built by the engine, see
// change_stream.h) encoded into the log buffer under the change log's
// mutex, about 30 bytes for a score change; each call takes that mutex
// once more to enter and once to leave. kAlways adds the wait for one
// fdatasync per group of concurrent writers.
#ifndef FEEDCORE_DURABLE_STORE_H_
#define FEEDCORE_DURABLE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/change_stream.h"
#include "feedcore/export.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/name_registry.h"
#include "feedcore/options.h"

namespace feedcore {

// When a logged change reaches stable storage (see above). Named after
// Redis's appendfsync always / everysec / no.
enum class FsyncPolicy : uint8_t {
  kAlways = 0,
  kEverySecond = 1,
  kNever = 2,
};

// "always", "everysec" or "no".
FEEDCORE_EXPORT const char* FsyncPolicyName(FsyncPolicy policy);

// Hard limits on DurabilityOptions.
inline constexpr uint64_t kMinLogSegmentBytes = uint64_t{1} << 20;
inline constexpr uint64_t kMaxLogSegmentBytes = uint64_t{1} << 34;

struct DurabilityOptions {
  // Where the log and snapshots live; created (one level) if missing.
  // Must not be empty.
  std::string directory;

  FsyncPolicy fsync = FsyncPolicy::kEverySecond;

  // Log bytes written since the newest snapshot beyond which a snapshot is
  // taken in the background and the log it covers deleted. 0 never
  // compacts by itself (Compact() still does); otherwise at least
  // `segment_bytes`.
  uint64_t compact_after_bytes = uint64_t{1} << 30;

  // Size at which a log segment is closed and the next begins,
  // kMinLogSegmentBytes..kMaxLogSegmentBytes. Disk space is reserved
  // ahead of the writes, 1 MiB when a segment is created (the whole
  // segment if smaller), doubled up to this size each time half of it is
  // used: a full disk is found before a write needs the space, and a store
  // that writes little holds little disk. A change larger than a segment
  // gets a segment of its own.
  uint64_t segment_bytes = uint64_t{64} << 20;
};

struct DurabilityStats {
  FsyncPolicy fsync = FsyncPolicy::kEverySecond;
  // The last record appended to the log buffer, handed to the system
  // (write), and known to be on stable storage (fdatasync). 0: none yet.
  uint64_t appended_sequence = 0;
  uint64_t written_sequence = 0;
  uint64_t synced_sequence = 0;
  // Bytes and files of the log now on disk (every live segment).
  uint64_t log_bytes = 0;
  uint64_t log_segments = 0;
  // Log bytes written since the newest snapshot (what compaction bounds).
  uint64_t log_bytes_since_snapshot = 0;
  uint64_t fsyncs = 0;
  // The newest snapshot's sequence and size; 0 before the first.
  uint64_t snapshot_sequence = 0;
  uint64_t snapshot_bytes = 0;
  uint64_t compactions = 0;
  bool compacting = false;
  // What the last Open recovered: log records read and applied (records
  // the snapshot already held are read but not applied), log bytes read,
  // whether a torn tail was cut, and how long it took by the engine's
  // clock.
  uint64_t recovered_records = 0;
  uint64_t recovered_bytes = 0;
  bool recovered_torn_tail = false;
  Micros recovery_micros = 0;
  // The largest tag of a write group the store holds (see
  // BeginWriteGroup): recovered, or of a group begun since. 0: none.
  uint64_t write_group_tag = 0;
  // OK, or why the store refuses writes.
  absl::Status write_error;
};

class FEEDCORE_EXPORT DurableStore {
 public:
  // Opens `durability.directory`: recovers what it holds (see above) into
  // an engine made with `engine_options`, or starts empty. The engine
  // options must agree with what the directory was written with
  // (LoadSnapshot's rules, snapshot.h); `engine_options.change_stream`, if
  // set, receives every change made after recovery (a fresh stream, or one
  // no other engine writes; its sequence numbers continue the log's).
  //
  // InvalidArgument for an empty directory name or options out of range
  // (naming the field); FailedPrecondition when another store holds the
  // directory; DataLoss naming the file and offset of damage; the system's
  // I/O errors (Unavailable, NotFound, ResourceExhausted) naming the file. A
  // failed Open changes nothing on disk except cutting a torn log tail and
  // deleting log segments whose every record the snapshot holds.
  static absl::StatusOr<std::unique_ptr<DurableStore>> Open(
      DurabilityOptions durability, EngineOptions engine_options);

  virtual ~DurableStore() = default;
  DurableStore(const DurableStore&) = delete;
  DurableStore& operator=(const DurableStore&) = delete;

  virtual InProcessFeedEngine& engine() = 0;
  virtual LeaderboardRegistry& boards() = 0;
  // The names of entities, logged and snapshotted with the rest.
  virtual NameRegistry& names() = 0;

  // Returns once every change appended so far is on stable storage,
  // whatever the policy (inside a write group: every change appended
  // before it). The store's write error if it has one.
  virtual absl::Status Sync() = 0;

  // Several calls made durable as one (a server's transaction): every
  // write call the thread that began it makes until Close reaches the
  // log with the others or not at all, so a crash leaves all of them or
  // none. Calls inside the group return without waiting for a sync;
  // Close ends the group and returns as a call would (under kAlways, once
  // all of it is synced), with the store's write error if there is one.
  // Destroying an open group ends it without waiting. While it is open no
  // record of any thread reaches the disk past its start, so keep it short,
  // and make no call in it that waits for the disk beyond Sync (Compact,
  // WaitForFanout with kAlways): it would wait for the group itself. One
  // open group per thread; not thread-safe itself.
  class WriteGroup {
   public:
    virtual ~WriteGroup() = default;
    virtual absl::Status Close() = 0;
  };
  // Begins a group on this thread. The store's refusal (an earlier write
  // error, no disk space reserved) if it would refuse a write;
  // FailedPrecondition if this thread is in a write call or group already.
  absl::StatusOr<std::unique_ptr<WriteGroup>> BeginWriteGroup() {
    return BeginWriteGroup(0);
  }
  // The same, with a tag (0: none) for a program that keeps files of its
  // own beside the store and must learn after a crash whether a group
  // reached the store: the tag is the group's first record
  // (ChangeKind::kWriteGroupTag), so it is durable exactly when the whole
  // group is, and Stats().write_group_tag after the next Open is the
  // largest tag of a group the crash kept. The store records its largest
  // tag again at Open and at each compaction, so deleting the log never
  // loses it. A tag must exceed Stats().write_group_tag (InvalidArgument
  // otherwise); a refused group consumes no tag.
  virtual absl::StatusOr<std::unique_ptr<WriteGroup>> BeginWriteGroup(
      uint64_t tag) = 0;

  // Saves a snapshot now and deletes the log and snapshot it covers;
  // returns when that is durable. FailedPrecondition if the store refuses
  // writes; once a tagged group was used, also the refusal of the tag's
  // new record (no disk space reserved); the snapshot's I/O errors
  // otherwise (the log is then kept).
  virtual absl::Status Compact() = 0;

  // Counters, each exact when read. O(1).
  virtual DurabilityStats Stats() const = 0;

 protected:
  DurableStore() = default;
};

}  // namespace feedcore

#endif  // FEEDCORE_DURABLE_STORE_H_
