#include "durability/durable_log.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/durable_file.h"
#include "base/io_error.h"
#include "base/mutex.h"
#include "stream/change_frame.h"

namespace feedcore::internal {
namespace {

// Under kEverySecond and kNever, the writer wakes early when this much is
// buffered, which bounds the buffer between wakes.
constexpr size_t kWakeBytes = size_t{1} << 20;
constexpr auto kInterval = std::chrono::seconds(1);
// The longest a kAlways sync waits for more callers to join it.
constexpr std::chrono::microseconds kMaxCommitDelay(500);
// A new segment reserves this much (or its whole size, if smaller), and
// doubles its reservation each time it is half used: a store that writes
// little holds little disk.
constexpr uint64_t kFirstReservationBytes = uint64_t{1} << 20;

// The write call the current thread is in: of which log, how deeply
// nested, and the last record the thread appended to that log since. Set
// by Admit, read by Append and End, so that each call's last record is
// known without the engine saying which records are whose.
struct ThreadCall {
  const DurableLog* log = nullptr;
  uint32_t depth = 0;
  uint64_t last = 0;
  uint64_t outer_start = 0;  // the outermost call's token
};
thread_local ThreadCall thread_call;

absl::Status Refused(const absl::Status& cause) {
  return absl::Status(
      cause.code(),
      absl::StrCat("the durable log refuses writes: ", cause.message()));
}

}  // namespace

int SegmentFileCalls::Reserve(int fd, off_t bytes) {
  // FALLOC_FL_KEEP_SIZE: the file's size stays that of its frames, so a
  // reader never sees the reserved blocks as data.
  if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, bytes) == 0) return 0;
  // A file system that cannot reserve still takes writes.
  return errno == EOPNOTSUPP ? 0 : -1;
}

ssize_t SegmentFileCalls::Write(int fd, const char* data, size_t size) {
  return ::write(fd, data, size);
}

int SegmentFileCalls::Sync(int fd) { return ::fdatasync(fd); }

std::string LogSegmentPath(const std::string& directory,
                           uint64_t first_sequence) {
  return absl::StrCat(directory, "/log-", first_sequence, ".fclog");
}

DurableLog::DurableLog(Config config)
    : directory_(std::move(config.directory)),
      fsync_(config.fsync),
      segment_bytes_(config.segment_bytes),
      calls_(config.calls != nullptr ? std::move(config.calls)
                                     : std::make_shared<SegmentFileCalls>()),
      mu_(*config.mutex),
      segments_(std::move(config.segments)),
      bytes_since_snapshot_(config.bytes_since_snapshot) {
  appended_ = written_ = synced_ = config.next_sequence - 1;
}

absl::StatusOr<std::unique_ptr<DurableLog>> DurableLog::Start(Config config) {
  const uint64_t next = config.next_sequence;
  std::unique_ptr<DurableLog> log(new DurableLog(std::move(config)));
  if (log->segments_.empty()) {
    const std::string path = LogSegmentPath(log->directory_, next);
    absl::StatusOr<int> fd = log->CreateSegmentFile(path);
    if (!fd.ok()) return fd.status();
    log->fd_ = *fd;
    log->reserved_ = log->FirstReservation();
    log->segments_.push_back({next, path, kChangeFileHeaderBytes});
    if (absl::Status s = SyncDirectoryOf(path); !s.ok()) return s;
  } else {
    const LogSegment& last = log->segments_.back();
    log->fd_ = ::open(last.path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (log->fd_ < 0) return IoError("opening", last.path, errno);
  }
  log->current_first_ = log->segments_.back().first_sequence;
  log->current_bytes_ = log->segments_.back().bytes;
  // A segment continued from before reserves again, what its size calls for.
  if (log->reserved_ == 0) {
    if (absl::Status s = log->ReserveAhead(); !s.ok()) log->space_error_ = s;
  }
  log->writer_ = std::thread([raw = log.get()] { raw->WriterLoop(); });
  return log;
}

DurableLog::~DurableLog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_.notify_all();
  // Not started when Start failed.
  if (writer_.joinable()) writer_.join();
  if (fd_ >= 0) ::close(fd_);
  if (spare_fd_ >= 0) {
    ::close(spare_fd_);
    ::unlink(spare_path_.c_str());
  }
}

void DurableLog::Append(const ChangeRecord& record) {
  // mu_ is the change log's mutex, which its Append holds: one lock a
  // record, not two.
  if (buffer_.empty()) buffer_first_ = record.sequence;
  if (!AppendChangeFrame(record, &buffer_)) {
    // A body over 4 GiB cannot be framed; the call that made it fails when it
    // ends, and so does every later one, rather than losing it quietly.
    if (error_.ok()) {
      error_ = absl::ResourceExhaustedError(
          absl::StrCat("change record ", record.sequence,
                       " is larger than a log frame's ", "4 GiB"));
    }
  }
  appended_ = record.sequence;
  if (thread_call.log == this && thread_call.depth > 0) {
    thread_call.last = record.sequence;
  } else {
    orphan_last_ = record.sequence;
  }
  if (buffer_.size() >= kWakeBytes && Takeable()) work_.notify_one();
}

bool DurableLog::InCall() const {
  return thread_call.log == this && thread_call.depth > 0;
}

absl::StatusOr<uint64_t> DurableLog::Admit() {
  LockSpinning(mu_);  // held as briefly as the change log's appends
  std::lock_guard<std::mutex> lock(mu_, std::adopt_lock);
  if (!error_.ok()) return Refused(error_);
  if (!space_error_.ok()) return Refused(space_error_);
  // Every record of the call will come after this point.
  const uint64_t start = appended_ + 1;
  if (!in_flight_.empty() && in_flight_.back().start == start) {
    ++in_flight_.back().calls;
  } else {
    in_flight_.push_back({start, 1, 0});
  }
  if (thread_call.log == this) {
    ++thread_call.depth;  // nested: its records count for the outer call too
  } else if (thread_call.log == nullptr) {
    thread_call = {this, 1, 0, start};
  }  // else inside a call of another log: End assumes the worst
  return start;
}

absl::Status DurableLog::End(uint64_t token, bool succeeded) {
  LockSpinning(mu_);
  std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
  auto it = std::lower_bound(in_flight_.begin(), in_flight_.end(), token,
                             [](const InFlight& entry, uint64_t start) {
                               return entry.start < start;
                             });
  // The call's last record: the last this thread appended since it was
  // admitted, and any record appended meanwhile by a thread outside every
  // call (a fan-out worker may be delivering for this one).
  uint64_t last = 0;
  // A call inside another (a DurableStore::WriteGroup) does not wait: its
  // records cannot reach the disk before the outer call ends, which waits.
  const bool nested = thread_call.log == this && thread_call.depth > 1;
  if (thread_call.log == this && thread_call.depth > 0) {
    if (thread_call.last >= token) last = thread_call.last;
    if (--thread_call.depth == 0) thread_call = {};
  } else {
    last = appended_;  // not tracked on this thread: assume the worst
  }
  if (orphan_last_ >= token) last = std::max(last, orphan_last_);
  if (it != in_flight_.end() && it->start == token && it->calls > 0) {
    --it->calls;
    it->last = std::max(it->last, last);
  }
  // Ended calls leave the front; one whose records reach past the start
  // of the next call joins the hold, which the boundary stays before
  // (see Boundary).
  while (!in_flight_.empty() && in_flight_.front().calls == 0) {
    const InFlight done = in_flight_.front();
    in_flight_.pop_front();
    if (done.last == 0) continue;  // appended nothing
    if (hold_last_ >= done.start) {
      hold_last_ = std::max(hold_last_, done.last);
    } else {
      // The old hold ends before this call began, so before every call
      // still listed: no boundary from now on falls inside it.
      hold_start_ = done.start;
      hold_last_ = done.last;
    }
  }
  const bool wait = succeeded && fsync_ == FsyncPolicy::kAlways && !nested;
  // The call's records are among those appended so far (which may include
  // records of calls still running: the wait covers them too).
  const uint64_t target = appended_;
  if (wait) commit_wanted_ = std::max(commit_wanted_, target);
  if (Takeable() &&
      (CommitDue() || sync_wanted_ > synced_ || buffer_.size() >= kWakeBytes)) {
    work_.notify_one();
  }
  if (!wait) return absl::OkStatus();
  ++waiting_[target];
  if (++unserved_ >= cohort_) work_.notify_one();
  // A batch kept for lack of room holds back this call's records too.
  const uint64_t room_failures = room_failures_;
  progress_.wait(lock, [&] {
    return synced_ >= target || !error_.ok() || room_failures_ > room_failures;
  });
  if (synced_ < target) {  // failed: the writer did not count it served
    if (--waiting_[target] == 0) waiting_.erase(target);
    --unserved_;
    return !error_.ok() ? error_ : space_error_;
  }
  return absl::OkStatus();
}

uint64_t DurableLog::Boundary() const {
  const uint64_t before_running =
      in_flight_.empty() ? appended_ : in_flight_.front().start - 1;
  // Cutting before the first running call is not enough: a call that
  // began before it and has ended may have appended records after its
  // start (it was descheduled halfway), and the cut would write that
  // call's first records without its last. Those calls make up the hold;
  // when it reaches past the cut, the cut moves before the hold.
  return hold_last_ > before_running ? hold_start_ - 1 : before_running;
}

bool DurableLog::CommitDue() const {
  return commit_wanted_ > synced_ && Boundary() >= commit_wanted_;
}

bool DurableLog::Takeable() const {
  return !buffer_.empty() && Boundary() >= buffer_first_;
}

size_t DurableLog::BytesThrough(uint64_t sequence) const {
  if (sequence >= appended_) return buffer_.size();
  size_t offset = 0;
  for (uint64_t s = buffer_first_; s <= sequence; ++s) {
    uint32_t length = 0;
    for (size_t i = 0; i < 4; ++i) {
      length |=
          static_cast<uint32_t>(static_cast<unsigned char>(buffer_[offset + i]))
          << (8 * i);
    }
    offset += kChangeFrameHeaderBytes + length;
  }
  return offset;
}

absl::Status DurableLog::Sync() {
  // Inside a call (a write group), what came before it: the call's own
  // records cannot reach the disk before it ends.
  const uint64_t before_call = InCall() ? thread_call.outer_start - 1 : 0;
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = InCall() ? before_call : appended_;
  sync_wanted_ = std::max(sync_wanted_, target);
  // Counted, not compared by sequence: a Sync with nothing new to write
  // still needs a pass (it also retries reserving space).
  ++sync_requests_;
  // A pass that already took its batch may have missed this request.
  const uint64_t pass = passes_ + (writing_ ? 2 : 1);
  work_.notify_one();
  progress_.wait(lock, [&] {
    return (passes_ >= pass && (synced_ >= target || retry_.has_value())) ||
           !error_.ok();
  });
  if (!error_.ok()) return error_;
  return synced_ >= target ? absl::OkStatus() : space_error_;
}

uint64_t DurableLog::StartNewSegment() {
  std::lock_guard<std::mutex> lock(mu_);
  // An empty current segment already starts there.
  if (buffer_.empty() && written_ < current_first_) return current_first_;
  if (split_sequence_ == 0) {
    // The new segment starts after the last record no call still needs
    // (Boundary), not after the last record appended: WriteBatch writes
    // the records before the split and those after it with separate
    // writes, around the roll, and a crash between them leaves the log
    // ending at the split, which must not fall inside a call (the calls
    // running now, or ended ones in the hold, have records on both sides
    // of appended_ + 1). The boundary never moves back, so no call ever
    // straddles it. The records between it and appended_ go to the new
    // segment; a snapshot cut after this call is still at or after it.
    const uint64_t boundary = Boundary();
    split_sequence_ = boundary + 1;
    split_offset_ = buffer_.empty() || boundary < buffer_first_
                        ? 0
                        : BytesThrough(boundary);
  }
  return split_sequence_;
}

absl::Status DurableLog::DropSegmentsBefore(uint64_t sequence) {
  std::vector<std::string> doomed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<LogSegment> kept;
    bytes_since_snapshot_ = 0;
    for (LogSegment& segment : segments_) {
      if (segment.first_sequence < sequence &&
          segment.first_sequence != current_first_) {
        doomed.push_back(std::move(segment.path));
      } else {
        bytes_since_snapshot_ += segment.bytes - kChangeFileHeaderBytes;
        kept.push_back(std::move(segment));
      }
    }
    segments_ = std::move(kept);
  }
  for (const std::string& path : doomed) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return IoError("deleting", path, errno);
    }
  }
  if (doomed.empty()) return absl::OkStatus();
  return SyncDirectoryOf(doomed.front());
}

void DurableLog::AddStats(DurabilityStats* stats) const {
  std::lock_guard<std::mutex> lock(mu_);
  stats->fsync = fsync_;
  stats->appended_sequence = appended_;
  stats->written_sequence = written_;
  stats->synced_sequence = synced_;
  stats->log_segments = segments_.size();
  stats->log_bytes = 0;
  for (const LogSegment& segment : segments_) stats->log_bytes += segment.bytes;
  stats->log_bytes_since_snapshot = bytes_since_snapshot_;
  stats->fsyncs = fsyncs_;
  stats->write_error = !error_.ok() ? error_ : space_error_;
}

void DurableLog::WriterLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  auto last_sync = std::chrono::steady_clock::now();
  for (;;) {
    // Never true while nothing can be done: a buffer held back by a call
    // in flight waits for that call's End.
    auto ready = [&] {
      if (stop_ || sync_requests_ > passed_requests_) return true;
      // A batch that found no room is tried again on the timer below, not
      // as fast as the loop can spin.
      if (retry_.has_value()) return false;
      return Takeable() &&
             (CommitDue() || sync_wanted_ > synced_ || split_sequence_ != 0 ||
              buffer_.size() >= kWakeBytes);
    };
    // A space error is retried once a second even when no write comes.
    if (fsync_ == FsyncPolicy::kAlways && space_error_.ok()) {
      work_.wait(lock, ready);
    } else {
      work_.wait_for(lock, kInterval, ready);
    }
    if (fsync_ == FsyncPolicy::kAlways && CommitDue() && !stop_ &&
        unserved_ < cohort_) {
      // The callers the last sync released are about to end calls of their
      // own. Waiting a fraction of a sync for them lets one sync serve
      // them and those waiting now together (commit delay); without it,
      // two halves of the callers take turns, each with a sync of its own.
      const auto delay = std::min(last_sync_duration_ / 2, kMaxCommitDelay);
      work_.wait_for(lock, delay,
                     [&] { return stop_ || unserved_ >= cohort_; });
    }
    const auto now = std::chrono::steady_clock::now();
    const bool retrying = retry_.has_value();
    Batch batch = retrying ? *std::move(retry_) : TakeBatch();
    retry_.reset();
    const bool stopping = stop_;
    const bool unsynced = batch.last_sequence > synced_;
    batch.sync =
        unsynced &&
        (fsync_ == FsyncPolicy::kAlways || stopping || sync_wanted_ > synced_ ||
         (fsync_ == FsyncPolicy::kEverySecond && now - last_sync >= kInterval));
    const bool failed = !error_.ok();
    passed_requests_ = sync_requests_;
    writing_ = true;
    const bool want_room =
        !failed && !stopping &&
        (GrowthDue() || SpareDue() || !space_error_.ok() || retrying);
    lock.unlock();

    absl::Status status;
    if (!failed) status = WriteBatch(batch);
    if (batch.sync) {
      last_sync = now;
      last_sync_duration_ =
          std::chrono::duration_cast<std::chrono::microseconds>(
              std::chrono::steady_clock::now() - now);
    }
    if (status.ok() && want_room) ReserveRoom();

    lock.lock();
    if (!failed) {
      if (status.ok()) {
        written_ = std::max(written_, batch.last_sequence);
        if (batch.sync) {
          synced_ = written_;
          ++fsyncs_;
          // Those it serves and those still waiting: the callers the next
          // sync can expect back.
          cohort_ = unserved_;
          while (!waiting_.empty() && waiting_.begin()->first <= synced_) {
            unserved_ -= waiting_.begin()->second;
            waiting_.erase(waiting_.begin());
          }
        }
      } else if (absl::IsResourceExhausted(status) && !stopping) {
        // No room: refuse new calls, fail those waiting for it, and try
        // the same batch again on the next pass.
        space_error_ = NoRoom(status);
        retry_ = std::move(batch);
        ++room_failures_;
      } else {
        Fail(std::move(status));
      }
    }
    batch.bytes.clear();
    if (spare_buffer_.capacity() < batch.bytes.capacity()) {
      spare_buffer_.swap(batch.bytes);
    }
    writing_ = false;
    ++passes_;
    progress_.notify_all();
    if (stopping && buffer_.empty() && !retry_.has_value()) return;
  }
}

DurableLog::Batch DurableLog::TakeBatch() {
  Batch batch;
  // At stop no call may be running: everything goes.
  const uint64_t boundary = stop_ ? appended_ : Boundary();
  const uint64_t last =
      buffer_.empty() || boundary < buffer_first_ ? 0 : boundary;
  const size_t take = last == 0 ? 0 : BytesThrough(last);
  if (take == buffer_.size()) {
    // The buffer keeps the capacity of the one before it: appends under
    // the change log's mutex rarely reallocate.
    batch.bytes.swap(spare_buffer_);
    batch.bytes.swap(buffer_);
  } else {
    // What stays (the records of calls still running) is usually short:
    // copy it, not the part taken.
    batch.bytes.swap(buffer_);
    buffer_.swap(spare_buffer_);
    buffer_.assign(batch.bytes, take, std::string::npos);
    batch.bytes.resize(take);
  }
  batch.first_sequence = buffer_first_;
  if (last != 0) buffer_first_ = last + 1;
  // Each write ends at a whole-call point; a batch end there lets
  // recovery drop what a crash cut off in the middle of a write.
  if (!batch.bytes.empty()) AppendBatchEnd(&batch.bytes);
  batch.last_sequence = std::max(written_, last);
  if (split_sequence_ != 0 && split_offset_ <= take) {
    batch.split_sequence = split_sequence_;
    batch.split = split_offset_;
    if (batch.split > 0 && batch.split < take) {
      // The old segment's part is a write of its own.
      std::string end;
      AppendBatchEnd(&end);
      batch.bytes.insert(batch.split, end);
      batch.split += end.size();
    } else if (batch.split == take && take > 0) {
      batch.split = batch.bytes.size();  // the batch end stays with it
    }
    split_sequence_ = 0;
    split_offset_ = 0;
  } else if (split_sequence_ != 0) {
    split_offset_ -= take;
  }
  return batch;
}

absl::Status DurableLog::WriteBatch(Batch& batch) {
  const char* data = batch.bytes.data();
  const size_t size = batch.bytes.size();
  if (batch.split_sequence != 0 && !batch.rolled) {
    if (batch.written < batch.split) {
      if (absl::Status s =
              WriteToCurrent(data + batch.written, batch.split - batch.written);
          !s.ok()) {
        return s;
      }
      batch.written = batch.split;
    }
    if (absl::Status s = Roll(batch.split_sequence); !s.ok()) return s;
    batch.rolled = true;
  } else if (batch.written == 0 && size > 0 &&
             current_bytes_ >= segment_bytes_) {
    if (absl::Status s = Roll(batch.first_sequence); !s.ok()) return s;
  }
  if (batch.written < size) {
    if (absl::Status s =
            WriteToCurrent(data + batch.written, size - batch.written);
        !s.ok()) {
      return s;
    }
    batch.written = size;
  }
  if (batch.sync && calls_->Sync(fd_) != 0) {
    return IoError("flushing", LogSegmentPath(directory_, current_first_),
                   errno);
  }
  return absl::OkStatus();
}

absl::Status DurableLog::WriteToCurrent(const char* data, size_t size) {
  const size_t total = size;
  while (size > 0) {
    const ssize_t n = calls_->Write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string path = LogSegmentPath(directory_, current_first_);
      absl::Status status = IoError("appending to", path, errno);
      // Out of room: cut off what part of the append reached the file, so
      // that writing it again later leaves whole frames only. Unless that
      // fails too, the error is one a retry can clear.
      if (absl::IsResourceExhausted(status) &&
          (::ftruncate(fd_, static_cast<off_t>(current_bytes_)) != 0 ||
           ::lseek(fd_, static_cast<off_t>(current_bytes_), SEEK_SET) !=
               static_cast<off_t>(current_bytes_))) {
        status = absl::UnavailableError(
            absl::StrCat("cutting back a failed append to ", path, ": ",
                         std::strerror(errno)));
      }
      return status;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  current_bytes_ += total;
  std::lock_guard<std::mutex> lock(mu_);
  segments_.back().bytes += total;
  bytes_since_snapshot_ += total;
  return absl::OkStatus();
}

absl::Status DurableLog::Roll(uint64_t first_sequence) {
  if (first_sequence == current_first_) return absl::OkStatus();
  const std::string old_path = LogSegmentPath(directory_, current_first_);
  // The old segment is synced whatever the policy: recovery then finds a
  // torn tail only in the last segment.
  if (calls_->Sync(fd_) != 0) return IoError("flushing", old_path, errno);
  const std::string path = LogSegmentPath(directory_, first_sequence);
  int fd = -1;
  if (spare_fd_ >= 0) {
    if (::rename(spare_path_.c_str(), path.c_str()) != 0) {
      return IoError(absl::StrCat("renaming ", spare_path_, " to"), path,
                     errno);
    }
    fd = spare_fd_;
    spare_fd_ = -1;
    reserved_ = spare_reserved_;
  } else {
    absl::StatusOr<int> created = CreateSegmentFile(path);
    if (!created.ok()) {
      // No room for another file: the records stay in the current one,
      // which grows past its size (recovery reads a segment of any size),
      // and new writes are refused until ReserveRoom finds room again.
      std::lock_guard<std::mutex> lock(mu_);
      space_error_ = NoRoom(created.status());
      return absl::OkStatus();
    }
    fd = *created;
    reserved_ = FirstReservation();
  }
  ::close(fd_);
  fd_ = fd;
  current_bytes_ = kChangeFileHeaderBytes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    current_first_ = first_sequence;
    segments_.push_back({first_sequence, path, kChangeFileHeaderBytes});
  }
  return SyncDirectoryOf(path);
}

uint64_t DurableLog::FirstReservation() const {
  return std::min(segment_bytes_, kFirstReservationBytes);
}

bool DurableLog::GrowthDue() const {
  return reserved_ < segment_bytes_ && current_bytes_ * 2 >= reserved_;
}

bool DurableLog::SpareDue() const {
  return spare_fd_ < 0 && current_bytes_ * 2 >= segment_bytes_;
}

absl::Status DurableLog::ReserveAhead() {
  const uint64_t wanted = std::min(
      segment_bytes_,
      std::max({FirstReservation(), 2 * reserved_, 2 * current_bytes_}));
  if (wanted <= reserved_) return absl::OkStatus();
  if (calls_->Reserve(fd_, static_cast<off_t>(wanted)) != 0) {
    return IoError(absl::StrCat("reserving ", wanted, " bytes in"),
                   LogSegmentPath(directory_, current_first_), errno);
  }
  reserved_ = wanted;
  return absl::OkStatus();
}

absl::Status DurableLog::NoRoom(const absl::Status& cause) {
  return absl::Status(cause.code(),
                      absl::StrCat("no room for the log: ", cause.message()));
}

void DurableLog::ReserveRoom() {
  absl::Status status;
  if (GrowthDue()) status = ReserveAhead();
  if (status.ok() && SpareDue()) {
    spare_path_ = absl::StrCat(directory_, "/log-spare.tmp");
    absl::StatusOr<int> fd = CreateSegmentFile(spare_path_);
    if (fd.ok()) {
      spare_fd_ = *fd;
      spare_reserved_ = FirstReservation();
    } else {
      status = fd.status();
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  space_error_ = status.ok() ? status : NoRoom(status);
}

absl::StatusOr<int> DurableLog::CreateSegmentFile(const std::string& path) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("creating", path, errno);
  absl::Status status;
  const std::string header = ChangeFileHeader();
  const uint64_t reservation = FirstReservation();
  if (calls_->Reserve(fd, static_cast<off_t>(reservation)) != 0) {
    status = IoError(absl::StrCat("reserving ", reservation, " bytes in"), path,
                     errno);
  } else if (calls_->Write(fd, header.data(), header.size()) !=
             static_cast<ssize_t>(header.size())) {
    status = IoError("writing the header of", path, errno);
  }
  if (!status.ok()) {
    ::close(fd);
    ::unlink(path.c_str());
    return status;
  }
  return fd;
}

void DurableLog::Fail(absl::Status status) {
  if (error_.ok()) error_ = std::move(status);
}

}  // namespace feedcore::internal
