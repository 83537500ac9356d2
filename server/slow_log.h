// SlowLog: the commands that took longer than a threshold, newest first,
// as Redis's SLOWLOG keeps them: an id, when the command started (unix
// seconds on the engine clock), how long it ran, its arguments (at most
// kMaxArguments, each cut at kMaxArgumentBytes with a note of what was
// left out) and the client's address and name.
//
// The threshold and the length are atomics, so that CONFIG SET can change
// them while commands run. Only a slow command takes the mutex.
//
// Thread-safe.
#ifndef FEEDCORE_SERVER_SLOW_LOG_H_
#define FEEDCORE_SERVER_SLOW_LOG_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/mutex.h"

namespace feedcore::server {

struct SlowLogEntry {
  uint64_t id = 0;
  int64_t unix_seconds = 0;
  int64_t micros = 0;
  std::vector<std::string> args;
  std::string client_address;
  std::string client_name;
};

class SlowLog {
 public:
  static constexpr size_t kMaxArguments = 32;
  static constexpr size_t kMaxArgumentBytes = 128;

  // Redis's defaults: slower than 10 ms, the last 128 such commands.
  explicit SlowLog(int64_t slower_than_micros = 10'000, size_t max_len = 128)
      : slower_than_micros_(slower_than_micros), max_len_(max_len) {}

  // Whether a command that ran `micros` belongs in the log (a negative
  // threshold keeps nothing, 0 everything).
  bool IsSlow(int64_t micros) const {
    const int64_t threshold =
        slower_than_micros_.load(std::memory_order_relaxed);
    return threshold >= 0 && micros >= threshold;
  }

  void Add(absl::Span<const std::string> args, int64_t unix_seconds,
           int64_t micros, std::string client_address, std::string client_name);

  // The newest `count` entries (all of them for a negative count).
  std::vector<SlowLogEntry> Newest(int64_t count) const;
  size_t size() const;
  void Reset();

  void set_slower_than_micros(int64_t micros) {
    slower_than_micros_.store(micros, std::memory_order_relaxed);
  }
  void set_max_len(size_t max_len);
  int64_t slower_than_micros() const {
    return slower_than_micros_.load(std::memory_order_relaxed);
  }
  size_t max_len() const { return max_len_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> slower_than_micros_;
  std::atomic<size_t> max_len_;
  mutable internal::SharedMutex mutex_;
  std::deque<SlowLogEntry> entries_ ABSL_GUARDED_BY(mutex_);  // newest first
  uint64_t next_id_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SLOW_LOG_H_
