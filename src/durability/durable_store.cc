// DurableStore (see include/feedcore/durable_store.h): opening a directory
// (lock, recovery, log), compaction, and shutting down in the right order.
//
// Compaction, and why its steps come in this order:
//  1. The log starts a new segment at S0: every record below S0 is in an
//     older segment.
//  2. A snapshot is saved under a temporary name. Each domain's cut is
//     taken after step 1, so the snapshot's sequence is at least S0.
//  3. The log is synced: every record below any domain's cut is on disk
//     before the snapshot that relies on it can be found.
//  4. The snapshot is renamed to snapshot-<S0> and the directory synced.
//  5. Segments starting below S0 and older snapshots are deleted.
// A crash between any two steps leaves a directory that recovers: before
// step 4 the old snapshot and every segment are there; after it the new
// snapshot and the segments from S0 on.
#include "feedcore/durable_store.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/durable_file.h"
#include "base/io_error.h"
#include "durability/durable_log.h"
#include "durability/recovery.h"
#include "stream/change_frame.h"
#include "stream/change_log.h"

namespace feedcore {

const char* FsyncPolicyName(FsyncPolicy policy) {
  switch (policy) {
    case FsyncPolicy::kAlways:
      return "always";
    case FsyncPolicy::kEverySecond:
      return "everysec";
    case FsyncPolicy::kNever:
      return "no";
  }
  return "unknown";
}

namespace internal {
namespace {

absl::Status ValidateDurability(const DurabilityOptions& options) {
  if (options.directory.empty()) {
    return absl::InvalidArgumentError(
        "DurabilityOptions::directory is empty; name the directory that "
        "holds the log");
  }
  if (options.fsync != FsyncPolicy::kAlways &&
      options.fsync != FsyncPolicy::kEverySecond &&
      options.fsync != FsyncPolicy::kNever) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DurabilityOptions::fsync is ", static_cast<int>(options.fsync),
        "; it must be kAlways, kEverySecond or kNever"));
  }
  if (options.segment_bytes < kMinLogSegmentBytes ||
      options.segment_bytes > kMaxLogSegmentBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DurabilityOptions::segment_bytes is ", options.segment_bytes,
        "; it must be ", kMinLogSegmentBytes, "..", kMaxLogSegmentBytes));
  }
  if (options.compact_after_bytes != 0 &&
      options.compact_after_bytes < options.segment_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("DurabilityOptions::compact_after_bytes is ",
                     options.compact_after_bytes,
                     "; it must be 0 or at least segment_bytes (",
                     options.segment_bytes, ")"));
  }
  return absl::OkStatus();
}

// The directory's LOCK file, held with flock for the store's life.
absl::StatusOr<int> LockDirectory(const std::string& directory) {
  if (::mkdir(directory.c_str(), 0755) != 0 && errno != EEXIST) {
    return IoError("creating directory", directory, errno);
  }
  const std::string path = absl::StrCat(directory, "/LOCK");
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("opening", path, errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat(directory, " is in use by another DurableStore (", path,
                       " is locked)"));
    }
    return IoError("locking", path, err);
  }
  return fd;
}

class DurableStoreImpl final : public DurableStore {
 public:
  DurableStoreImpl(DurabilityOptions options, int lock_fd,
                   std::shared_ptr<ChangeStream> stream, ChangeLog* log,
                   Recovered recovered, Micros recovery_micros)
      : options_(std::move(options)),
        lock_fd_(lock_fd),
        stream_(std::move(stream)),
        log_(log),
        replica_(std::move(recovered.replica)),
        snapshot_(recovered.snapshot),
        write_group_tag_(replica_->write_group_tag()) {
    stats_.snapshot_sequence = replica_->sequence();
    stats_.snapshot_bytes = recovered.snapshot_bytes;
    stats_.recovered_records = recovered.records_read;
    stats_.recovered_bytes = recovered.bytes_read;
    stats_.recovered_torn_tail = recovered.torn_tail;
    stats_.recovery_micros = recovery_micros;
  }

  ~DurableStoreImpl() override {
    {
      std::lock_guard<std::mutex> lock(compactor_mu_);
      stop_ = true;
    }
    compactor_wake_.notify_all();
    if (compactor_.joinable()) compactor_.join();
    // The engine's pool and sweeper may still append while it goes.
    replica_.reset();
    log_->SetGate(nullptr);
    durable_.reset();  // writes and syncs what is buffered
    ::close(lock_fd_);
  }

  absl::Status Start(DurableLog::Config config) {
    absl::StatusOr<std::unique_ptr<DurableLog>> durable =
        DurableLog::Start(std::move(config));
    if (!durable.ok()) return durable.status();
    durable_ = *std::move(durable);
    log_->SetGate(durable_.get());
    // Into the new log: the recovery may have deleted the segments that
    // held the tag (recovery.cc).
    if (absl::Status s = RecordWriteGroupTag(); !s.ok()) return s;
    if (options_.compact_after_bytes > 0) {
      compactor_ = std::thread([this] { CompactorLoop(); });
    }
    return absl::OkStatus();
  }

  // The replica's engine gates its own writes on log_'s gate
  // (feed/feed_write_gate.cc).
  InProcessFeedEngine& engine() override { return replica_->engine(); }
  LeaderboardRegistry& boards() override { return replica_->boards(); }
  NameRegistry& names() override { return replica_->names(); }

  absl::Status Sync() override { return durable_->Sync(); }

  absl::StatusOr<std::unique_ptr<WriteGroup>> BeginWriteGroup(
      uint64_t tag) override {
    if (durable_->InCall()) {
      return absl::FailedPreconditionError(
          "this thread is in a write call or a write group already");
    }
    // Held from the check to the record, so that tags reach the log in
    // increasing order.
    std::unique_lock<std::mutex> tag_lock(tag_mu_, std::defer_lock);
    if (tag != 0) {
      tag_lock.lock();
      if (tag <= write_group_tag_) {
        return absl::InvalidArgumentError(absl::StrCat(
            "write group tag ", tag, " is not above the store's largest, ",
            write_group_tag_));
      }
    }
    auto group = std::make_unique<Group>(log_);
    if (!group->call.admitted().ok()) return group->call.admitted();
    if (tag != 0) {
      log_->Append(WriteGroupTagRecord(tag));
      write_group_tag_ = tag;
    }
    return group;
  }

  absl::Status Compact() override {
    std::lock_guard<std::mutex> lock(compact_mu_);
    if (absl::Status s = Stats().write_error; !s.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot compact: ", s.message()));
    }
    SetCompacting(true);
    absl::Status status = CompactLocked();
    SetCompacting(false);
    return status;
  }

  DurabilityStats Stats() const override {
    DurabilityStats stats;
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      stats = stats_;
    }
    durable_->AddStats(&stats);
    std::lock_guard<std::mutex> lock(tag_mu_);
    stats.write_group_tag = write_group_tag_;
    return stats;
  }

 private:
  static ChangeRecord WriteGroupTagRecord(uint64_t tag) {
    ChangeRecord record;
    record.kind = ChangeKind::kWriteGroupTag;
    record.update_sequence = tag;
    return record;
  }

  // Appends the largest tag again, as a call of its own (nothing without
  // a tag): so that the log after a compaction's snapshot holds it.
  absl::Status RecordWriteGroupTag() {
    {
      std::lock_guard<std::mutex> lock(tag_mu_);
      if (write_group_tag_ == 0) return absl::OkStatus();
    }
    WriteCall call(log_);
    if (!call.admitted().ok()) return call.admitted();
    {
      // Not held for Finish: under kAlways it waits for the disk, which an
      // open group holds back, and the group's thread may read Stats().
      std::lock_guard<std::mutex> lock(tag_mu_);
      log_->Append(WriteGroupTagRecord(write_group_tag_));
    }
    return call.Finish(true);
  }

  // The group is one write call, its calls nested in it (durable_log.h).
  struct Group final : WriteGroup {
    explicit Group(const ChangeLog* log) : call(log) {}
    absl::Status Close() override {
      if (closed) return absl::OkStatus();
      closed = true;
      return call.Finish(true);
    }
    WriteCall call;
    bool closed = false;
  };

  absl::Status CompactLocked() {
    const std::string& directory = options_.directory;
    const uint64_t first_kept = durable_->StartNewSegment();
    // Before the snapshot's Sync below makes it durable; the segments
    // deleted after it may hold the only other record of the tag.
    if (absl::Status s = RecordWriteGroupTag(); !s.ok()) return s;
    const std::string temporary = SnapshotInProgressPath(directory);
    absl::StatusOr<SnapshotInfo> info = SaveSnapshot(
        replica_->engine(), temporary, &replica_->boards(), &replica_->names());
    if (!info.ok()) return info.status();
    if (absl::Status s = durable_->Sync(); !s.ok()) return s;
    const std::string path = SnapshotPath(directory, first_kept);
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
      return IoError(absl::StrCat("renaming ", temporary, " to"), path, errno);
    }
    if (absl::Status s = SyncDirectoryOf(path); !s.ok()) return s;
    if (absl::Status s = durable_->DropSegmentsBefore(first_kept); !s.ok()) {
      return s;
    }
    if (snapshot_.path != path && ::unlink(snapshot_.path.c_str()) != 0 &&
        errno != ENOENT) {
      return IoError("deleting", snapshot_.path, errno);
    }
    snapshot_ = {first_kept, path};
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.snapshot_sequence = info->sequence;
    stats_.snapshot_bytes = info->file_bytes;
    ++stats_.compactions;
    return absl::OkStatus();
  }

  void SetCompacting(bool compacting) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.compacting = compacting;
  }

  // Compacts whenever the log since the snapshot passes the bound. A failed
  // compaction keeps the log; it is tried again on the next check.
  void CompactorLoop() {
    std::unique_lock<std::mutex> lock(compactor_mu_);
    while (!stop_) {
      compactor_wake_.wait_for(lock, std::chrono::milliseconds(100));
      if (stop_) break;
      DurabilityStats stats;
      durable_->AddStats(&stats);
      if (stats.log_bytes_since_snapshot < options_.compact_after_bytes ||
          !stats.write_error.ok()) {
        continue;
      }
      lock.unlock();
      Compact().IgnoreError();  // the log stays; Stats shows the state
      lock.lock();
    }
  }

  const DurabilityOptions options_;
  const int lock_fd_;
  const std::shared_ptr<ChangeStream> stream_;
  ChangeLog* const log_;
  std::unique_ptr<Replica> replica_;
  std::unique_ptr<DurableLog> durable_;

  std::mutex compact_mu_;  // one compaction at a time
  SnapshotFile snapshot_;  // guarded by compact_mu_

  mutable std::mutex stats_mu_;
  DurabilityStats stats_;  // the store's own fields; the log fills the rest

  // Taken before the change log's mutex (a leaf), never under it.
  mutable std::mutex tag_mu_;
  uint64_t write_group_tag_;  // guarded by tag_mu_

  std::mutex compactor_mu_;
  std::condition_variable compactor_wake_;
  bool stop_ = false;
  std::thread compactor_;
};

}  // namespace
}  // namespace internal

absl::StatusOr<std::unique_ptr<DurableStore>> DurableStore::Open(
    DurabilityOptions durability, EngineOptions engine_options) {
  return internal::OpenDurableStore(std::move(durability),
                                    std::move(engine_options), nullptr);
}

namespace internal {

absl::StatusOr<std::unique_ptr<DurableStore>> OpenDurableStore(
    DurabilityOptions durability, EngineOptions engine_options,
    std::shared_ptr<SegmentFileCalls> calls) {
  if (absl::Status s = ValidateDurability(durability); !s.ok()) {
    return s;
  }
  const bool own_stream = engine_options.change_stream == nullptr;
  if (own_stream) {
    ChangeStreamOptions stream_options;
    stream_options.clock = engine_options.clock;
    absl::StatusOr<std::shared_ptr<ChangeStream>> stream =
        ChangeStream::Create(stream_options);
    if (!stream.ok()) return stream.status();
    engine_options.change_stream = *std::move(stream);
  }
  std::shared_ptr<ChangeStream> stream = engine_options.change_stream;
  ChangeLog* log = ChangeStreamAccess::Log(stream.get());
  // Only the durable log reads a stream of the store's own.
  if (own_stream) log->StopRetaining();
  if (log->NextSequence() != 1 || log->Stats().records != 0) {
    return absl::InvalidArgumentError(
        "EngineOptions::change_stream already holds records; a durable "
        "store needs a stream nothing has written to");
  }
  absl::StatusOr<int> lock_fd = LockDirectory(durability.directory);
  if (!lock_fd.ok()) return lock_fd.status();

  std::shared_ptr<Clock> clock = engine_options.clock != nullptr
                                     ? engine_options.clock
                                     : std::make_shared<SystemClock>();
  const Micros started = clock->Now();
  log->SetMuted(true);
  absl::StatusOr<Recovered> recovered =
      Recover(durability.directory, engine_options);
  log->SetMuted(false);
  if (!recovered.ok()) {
    ::close(*lock_fd);
    return recovered.status();
  }
  if (absl::Status s = log->ContinueAt(recovered->next_sequence); !s.ok()) {
    ::close(*lock_fd);
    return s;
  }
  DurableLog::Config config;
  config.directory = durability.directory;
  config.fsync = durability.fsync;
  config.segment_bytes = durability.segment_bytes;
  config.segments = recovered->segments;
  config.calls = std::move(calls);
  config.mutex = &log->wait_mutex();
  config.next_sequence = recovered->next_sequence;
  for (const LogSegment& segment : config.segments) {
    config.bytes_since_snapshot += segment.bytes - kChangeFileHeaderBytes;
  }
  const Micros recovery_micros = clock->Now() - started;
  auto store = std::make_unique<DurableStoreImpl>(
      std::move(durability), *lock_fd, std::move(stream), log,
      *std::move(recovered), recovery_micros);
  if (absl::Status s = store->Start(std::move(config)); !s.ok()) return s;
  return std::unique_ptr<DurableStore>(std::move(store));
}

}  // namespace internal
}  // namespace feedcore
