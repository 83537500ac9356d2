// ChangeLog: what a ChangeStream holds, with the append side the engine
// writes to.
//
// Records live in a deque of shared pointers indexed by sequence number
// (record i of the deque has sequence first_ + i), so a reader finds its
// position in O(1) and copies pointers, never records. One mutex guards the
// deque; it is a leaf lock, taken while the engine holds the lock of the
// state a record describes, which is what makes the sequence order agree
// with the order in which changes to the same state were made.
#ifndef FEEDCORE_SRC_STREAM_CHANGE_LOG_H_
#define FEEDCORE_SRC_STREAM_CHANGE_LOG_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/change_stream.h"

namespace feedcore::internal {

// What makes changes durable (durability/durable_log.h). A log with a gate
// hands it every record as it is appended, and each write call of the
// engine and the boards is bracketed by Admit and End (see WriteCall).
class WriteGate {
 public:
  virtual ~WriteGate() = default;
  // Takes `record` into the log. Called under the change log's mutex, in
  // sequence order; must not block on I/O.
  virtual void Append(const ChangeRecord& record) = 0;
  // Before a call changes anything: a token for End, or why it must not
  // (the log failed, or no disk space is reserved for it). Every record
  // the call appends comes after the token's sequence point; the gate
  // keeps the call's records off disk until it ends, so that a crash
  // leaves a call whole or absent.
  virtual absl::StatusOr<uint64_t> Admit() = 0;
  // Ends the call admitted with `token`. When it `succeeded`, returns once
  // everything appended so far is as durable as the policy promises, or
  // the error that prevents it.
  virtual absl::Status End(uint64_t token, bool succeeded) = 0;
};

class ChangeLog;

// One write call's bracket: admitted on construction, ended by Finish or,
// failing that, on destruction (as a failed call). Without a log or a gate
// it costs one load.
class WriteCall {
 public:
  explicit WriteCall(const ChangeLog* log);
  ~WriteCall();
  WriteCall(const WriteCall&) = delete;
  WriteCall& operator=(const WriteCall&) = delete;

  // OK, or why the call must not change anything.
  const absl::Status& admitted() const { return admitted_; }

  // Ends the call. REQUIRES: admitted().ok(), not finished yet.
  absl::Status Finish(bool succeeded);

 private:
  WriteGate* gate_ = nullptr;  // null: nothing to end
  uint64_t token_ = 0;
  absl::Status admitted_;
};

class ChangeLog final : public std::enable_shared_from_this<ChangeLog> {
 public:
  // REQUIRES: options validated, clock set.
  explicit ChangeLog(ChangeStreamOptions options);

  // Assigns the next sequence number and the current time to `record`,
  // retains it, drops what retention no longer allows and wakes waiting
  // readers. Returns the sequence number.
  uint64_t Append(ChangeRecord&& record);

  // The gate, or null.
  WriteGate* gate() const { return gate_.load(std::memory_order_acquire); }

  // Attaches `gate` (null detaches it). Every record appended after this
  // returns goes to it. Attach before any call runs: a call admitted
  // without a gate is not ended with one.
  void SetGate(WriteGate* gate);

  // While muted, Append records nothing and returns 0: for replaying a
  // durable log into the engine that records into this log.
  void SetMuted(bool muted);

  // From now on records go to the gate only and are never retained: for a
  // stream no reader can reach (a durable store's own).
  void StopRetaining();

  // Makes `next` the next sequence number. InvalidArgument unless nothing
  // was ever appended (a fresh stream) and `next` >= 1.
  absl::Status ContinueAt(uint64_t next);

  // The sequence number the next Append gets. Read while holding the lock
  // of some engine state, it splits that state's records into those
  // already applied (below) and those still to come (at or above).
  uint64_t NextSequence() const;

  absl::StatusOr<std::unique_ptr<ChangeReader>> NewReader(
      StreamPosition position) const;
  absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(
      StreamPosition position, size_t batch,
      std::function<void(absl::Span<const ChangeRecordPtr>)> on_records,
      std::function<void(const absl::Status&)> on_error) const;
  ChangeStreamStats Stats() const;

  // For readers: up to `max` records from `position` into `out`. OutOfRange
  // if `position` was dropped. Waits up to `timeout` when there is nothing
  // yet and `timeout` > 0, or until `*stop` is set (with `Wake`).
  absl::Status ReadFrom(uint64_t position, size_t max,
                        std::chrono::microseconds timeout, const bool* stop,
                        std::vector<ChangeRecordPtr>* out) const;
  // Wakes every waiting reader (for stopping subscriptions).
  void Wake() const;
  // Serializes the stop flags of subscriptions with their waits.
  std::mutex& wait_mutex() const { return mu_; }

 private:
  // Resolves a starting position to a sequence number, or an error.
  absl::StatusOr<uint64_t> Resolve(StreamPosition position) const;
  // Records dropped by retention, freed once the mutex is released.
  using Trimmed = absl::InlinedVector<ChangeRecordPtr, 4>;
  // Drops what retention no longer allows into `trimmed`. REQUIRES: mu_
  // held.
  void TrimLocked(Micros now, Trimmed* trimmed);
  static size_t BytesOf(const ChangeRecord& record);
  // REQUIRES: mu_ held.
  absl::Status DroppedError(uint64_t position) const;

  const ChangeStreamOptions options_;
  // std::mutex, for the condition variable; clang's analysis does not know
  // it, so what it guards is said here: everything below.
  mutable std::mutex mu_;
  mutable std::condition_variable appended_;
  mutable size_t waiters_ = 0;
  std::deque<ChangeRecordPtr> records_;
  std::deque<size_t> record_bytes_;
  uint64_t first_ = 1;  // sequence of records_[0]
  uint64_t next_ = 1;
  size_t bytes_ = 0;
  uint64_t dropped_ = 0;
  bool muted_ = false;
  bool retain_ = true;
  // Written under mu_; read without it by WriteCall.
  std::atomic<WriteGate*> gate_{nullptr};
};

inline WriteCall::WriteCall(const ChangeLog* log) {
  if (log == nullptr) return;
  WriteGate* gate = log->gate();
  if (gate == nullptr) return;
  absl::StatusOr<uint64_t> token = gate->Admit();
  if (!token.ok()) {
    admitted_ = token.status();
    return;
  }
  gate_ = gate;
  token_ = *token;
}

inline WriteCall::~WriteCall() {
  if (gate_ != nullptr) gate_->End(token_, false).IgnoreError();
}

inline absl::Status WriteCall::Finish(bool succeeded) {
  WriteGate* gate = gate_;
  gate_ = nullptr;
  return gate == nullptr ? absl::OkStatus() : gate->End(token_, succeeded);
}

// Runs `write` (returning a Status or a StatusOr) inside a WriteCall on
// `log`: the gate's refusal instead when it refuses, the gate's error when
// the write succeeded but could not be made durable, else the write's own
// result.
template <typename Write>
auto InWriteCall(const ChangeLog* log, Write&& write) -> decltype(write()) {
  WriteCall call(log);
  if (!call.admitted().ok()) return call.admitted();
  auto result = write();
  absl::Status durable = call.Finish(result.ok());
  if (result.ok() && !durable.ok()) return durable;
  return result;
}

// Validates `options` and fills in the clock.
absl::StatusOr<ChangeStreamOptions> ResolveChangeStreamOptions(
    ChangeStreamOptions options);

// The log a stream holds, for the engine and the registry that append to
// it; null for a null stream.
struct ChangeStreamAccess {
  static ChangeLog* Log(const ChangeStream* stream) {
    return stream == nullptr ? nullptr : stream->log_.get();
  }
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_STREAM_CHANGE_LOG_H_
