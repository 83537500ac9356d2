#include "stream/change_log.h"

#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/mutex.h"

namespace feedcore {

absl::StatusOr<std::shared_ptr<ChangeStream>> ChangeStream::Create(
    ChangeStreamOptions options) {
  absl::StatusOr<ChangeStreamOptions> resolved =
      internal::ResolveChangeStreamOptions(std::move(options));
  if (!resolved.ok()) return resolved.status();
  // The constructor is private, so make_shared cannot reach it.
  return std::shared_ptr<ChangeStream>(new ChangeStream(
      std::make_shared<internal::ChangeLog>(*std::move(resolved))));
}

ChangeStream::~ChangeStream() = default;

absl::StatusOr<std::unique_ptr<ChangeReader>> ChangeStream::NewReader(
    StreamPosition position) const {
  return log_->NewReader(position);
}

absl::StatusOr<std::unique_ptr<Subscription>> ChangeStream::Subscribe(
    StreamPosition position, size_t batch,
    std::function<void(absl::Span<const ChangeRecordPtr>)> on_records,
    std::function<void(const absl::Status&)> on_error) const {
  return log_->Subscribe(position, batch, std::move(on_records),
                         std::move(on_error));
}

ChangeStreamStats ChangeStream::Stats() const { return log_->Stats(); }

namespace internal {
namespace {

constexpr size_t kMaxBatch = 100'000;

absl::Status ValidateBatch(size_t max_records) {
  if (max_records == 0 || max_records > kMaxBatch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_records is ", max_records, "; it must be 1..", kMaxBatch));
  }
  return absl::OkStatus();
}

class LogReader final : public ChangeReader {
 public:
  LogReader(std::shared_ptr<const ChangeLog> log, uint64_t position)
      : log_(std::move(log)), position_(position) {}

  absl::StatusOr<std::vector<ChangeRecordPtr>> Read(
      size_t max_records) override {
    return ReadWait(max_records, std::chrono::microseconds(0));
  }

  absl::StatusOr<std::vector<ChangeRecordPtr>> ReadWait(
      size_t max_records, std::chrono::microseconds timeout) override {
    if (absl::Status status = ValidateBatch(max_records); !status.ok()) {
      return status;
    }
    std::vector<ChangeRecordPtr> out;
    absl::Status status =
        log_->ReadFrom(position_, max_records, timeout, nullptr, &out);
    if (!status.ok()) return status;
    position_ += out.size();
    return out;
  }

  uint64_t position() const override { return position_; }

 private:
  const std::shared_ptr<const ChangeLog> log_;
  uint64_t position_;
};

class LogSubscription final : public Subscription {
 public:
  LogSubscription(
      std::shared_ptr<const ChangeLog> log, uint64_t position, size_t batch,
      std::function<void(absl::Span<const ChangeRecordPtr>)> on_records,
      std::function<void(const absl::Status&)> on_error)
      : log_(std::move(log)),
        position_(position),
        thread_([this, batch, on_records = std::move(on_records),
                 on_error = std::move(on_error)] {
          Run(batch, on_records, on_error);
        }) {}

  ~LogSubscription() override {
    {
      std::lock_guard<std::mutex> lock(log_->wait_mutex());
      stop_ = true;
    }
    log_->Wake();
    thread_.join();
  }

  uint64_t position() const override {
    return position_.load(std::memory_order_acquire);
  }

 private:
  void Run(
      size_t batch,
      const std::function<void(absl::Span<const ChangeRecordPtr>)>& on_records,
      const std::function<void(const absl::Status&)>& on_error) {
    std::vector<ChangeRecordPtr> records;
    for (;;) {
      records.clear();
      // Long waits are fine: stopping wakes the wait.
      absl::Status status =
          log_->ReadFrom(position_.load(std::memory_order_relaxed), batch,
                         std::chrono::seconds(3600), &stop_, &records);
      if (!status.ok()) {
        if (on_error) on_error(status);
        return;
      }
      {
        std::lock_guard<std::mutex> lock(log_->wait_mutex());
        if (stop_) return;
      }
      if (records.empty()) continue;
      on_records(absl::MakeConstSpan(records));
      position_.fetch_add(records.size(), std::memory_order_release);
    }
  }

  const std::shared_ptr<const ChangeLog> log_;
  std::atomic<uint64_t> position_;
  // Guarded by the log's wait mutex.
  bool stop_ = false;
  std::thread thread_;  // last: started once everything above is set
};

}  // namespace

absl::StatusOr<ChangeStreamOptions> ResolveChangeStreamOptions(
    ChangeStreamOptions options) {
  if (options.max_records == 0 || options.max_records > (size_t{1} << 40)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ChangeStreamOptions.max_records is ", options.max_records,
                     "; it must be 1..2^40"));
  }
  if (options.max_bytes < 1024 || options.max_bytes > (size_t{1} << 48)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ChangeStreamOptions.max_bytes is ", options.max_bytes,
                     "; it must be 1 KiB..2^48"));
  }
  if (options.max_age < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ChangeStreamOptions.max_age is ", options.max_age,
                     "; it must be >= 0 (0: no age limit)"));
  }
  if (options.clock == nullptr) options.clock = std::make_shared<SystemClock>();
  return options;
}

ChangeLog::ChangeLog(ChangeStreamOptions options)
    : options_(std::move(options)) {}

size_t ChangeLog::BytesOf(const ChangeRecord& record) {
  return sizeof(ChangeRecord) + 32 /* shared_ptr control block */ +
         record.owners.size() * sizeof(EntityId) +
         record.keys.size() * sizeof(EntryKey) + record.entry.payload.size() +
         (record.metadata ? record.metadata->size() : 0) + record.name.size();
}

void ChangeLog::SetGate(WriteGate* gate) {
  std::lock_guard<std::mutex> lock(mu_);
  gate_.store(gate, std::memory_order_release);
}

void ChangeLog::StopRetaining() {
  std::lock_guard<std::mutex> lock(mu_);
  retain_ = false;
}

void ChangeLog::SetMuted(bool muted) {
  std::lock_guard<std::mutex> lock(mu_);
  muted_ = muted;
}

absl::Status ChangeLog::ContinueAt(uint64_t next) {
  std::lock_guard<std::mutex> lock(mu_);
  if (next_ != 1 || !records_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the change stream already holds records (next sequence ", next_,
        "); a durable store needs a stream nothing has written to"));
  }
  if (next == 0) {
    return absl::InvalidArgumentError("sequence numbers start at 1");
  }
  first_ = next;
  next_ = next;
  return absl::OkStatus();
}

uint64_t ChangeLog::Append(ChangeRecord&& record) {
  // Everything that can be done outside the mutex is: it is one lock for
  // every writer of the engine.
  const Micros now = options_.clock->Now();
  record.time = now;
  if (!retain_) {  // set before any writer starts; never cleared
    LockSpinning(mu_);
    std::lock_guard<std::mutex> lock(mu_, std::adopt_lock);
    if (muted_) return 0;
    record.sequence = next_++;
    first_ = next_;
    if (WriteGate* gate = gate_.load(std::memory_order_relaxed)) {
      gate->Append(record);
    }
    return record.sequence;
  }
  const size_t bytes = BytesOf(record);
  auto shared = std::make_shared<ChangeRecord>(std::move(record));
  Trimmed trimmed;  // freed after the mutex is released
  uint64_t sequence = 0;
  {
    LockSpinning(mu_);
    std::lock_guard<std::mutex> lock(mu_, std::adopt_lock);
    if (muted_) return 0;
    sequence = next_++;
    shared->sequence = sequence;
    if (WriteGate* gate = gate_.load(std::memory_order_relaxed)) {
      gate->Append(*shared);
    }
    records_.push_back(std::move(shared));
    record_bytes_.push_back(bytes);
    bytes_ += bytes;
    TrimLocked(now, &trimmed);
    if (waiters_ > 0) appended_.notify_all();
  }
  return sequence;
}

void ChangeLog::TrimLocked(Micros now, Trimmed* trimmed) {
  const Micros oldest_kept = options_.max_age > 0
                                 ? now - options_.max_age
                                 : std::numeric_limits<Micros>::min();
  // The newest record always stays, so a reader at LATEST before it was
  // appended can still read it.
  while (records_.size() > 1 && (records_.size() > options_.max_records ||
                                 bytes_ > options_.max_bytes ||
                                 records_.front()->time < oldest_kept)) {
    bytes_ -= record_bytes_.front();
    trimmed->push_back(std::move(records_.front()));
    records_.pop_front();
    record_bytes_.pop_front();
    ++first_;
    ++dropped_;
  }
}

uint64_t ChangeLog::NextSequence() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_;
}

absl::Status ChangeLog::DroppedError(uint64_t position) const {
  return absl::OutOfRangeError(
      absl::StrCat("change stream: sequence ", position,
                   " is no longer retained; the oldest available is ", first_,
                   " (resynchronize from a snapshot)"));
}

absl::StatusOr<uint64_t> ChangeLog::Resolve(StreamPosition position) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t sequence = 0;
  switch (position.type) {
    case StreamPosition::Type::kTrimHorizon:
      return first_;
    case StreamPosition::Type::kLatest:
      return next_;
    case StreamPosition::Type::kAtSequence:
      sequence = position.sequence;
      break;
    case StreamPosition::Type::kAfterSequence:
      if (position.sequence == std::numeric_limits<uint64_t>::max()) {
        return absl::InvalidArgumentError(
            "change stream: AFTER_SEQUENCE of the largest sequence number");
      }
      sequence = position.sequence + 1;
      break;
    default:
      return absl::InvalidArgumentError(
          "change stream: unknown StreamPosition type");
  }
  if (sequence == 0) {
    return absl::InvalidArgumentError(
        "change stream: sequence numbers start at 1; AT_SEQUENCE(0) names "
        "nothing");
  }
  if (sequence > next_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "change stream: sequence ", sequence,
        " has not been written yet; the next record will be ", next_));
  }
  if (sequence < first_) return DroppedError(sequence);
  return sequence;
}

absl::StatusOr<std::unique_ptr<ChangeReader>> ChangeLog::NewReader(
    StreamPosition position) const {
  absl::StatusOr<uint64_t> start = Resolve(position);
  if (!start.ok()) return start.status();
  return std::unique_ptr<ChangeReader>(
      new LogReader(shared_from_this(), *start));
}

absl::StatusOr<std::unique_ptr<Subscription>> ChangeLog::Subscribe(
    StreamPosition position, size_t batch,
    std::function<void(absl::Span<const ChangeRecordPtr>)> on_records,
    std::function<void(const absl::Status&)> on_error) const {
  if (absl::Status status = ValidateBatch(batch); !status.ok()) return status;
  if (!on_records) {
    return absl::InvalidArgumentError(
        "change stream: Subscribe needs an on_records callback");
  }
  absl::StatusOr<uint64_t> start = Resolve(position);
  if (!start.ok()) return start.status();
  return std::unique_ptr<Subscription>(
      new LogSubscription(shared_from_this(), *start, batch,
                          std::move(on_records), std::move(on_error)));
}

absl::Status ChangeLog::ReadFrom(uint64_t position, size_t max,
                                 std::chrono::microseconds timeout,
                                 const bool* stop,
                                 std::vector<ChangeRecordPtr>* out) const {
  std::unique_lock<std::mutex> lock(mu_);
  if (position >= next_ && timeout.count() > 0) {
    ++waiters_;
    appended_.wait_for(lock, timeout, [&] {
      return next_ > position || (stop != nullptr && *stop);
    });
    --waiters_;
  }
  if (position < first_) return DroppedError(position);
  const uint64_t end = std::min<uint64_t>(next_, position + max);
  out->reserve(out->size() + (end > position ? end - position : 0));
  for (uint64_t s = position; s < end; ++s) {
    out->push_back(records_[s - first_]);
  }
  return absl::OkStatus();
}

void ChangeLog::Wake() const {
  std::lock_guard<std::mutex> lock(mu_);
  appended_.notify_all();
}

ChangeStreamStats ChangeLog::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  ChangeStreamStats stats;
  stats.oldest_sequence = records_.empty() ? 0 : first_;
  stats.next_sequence = next_;
  stats.records = records_.size();
  stats.bytes = bytes_;
  stats.dropped = dropped_;
  return stats;
}

}  // namespace internal
}  // namespace feedcore
