#include "slow_log.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace feedcore::server {

void SlowLog::Add(absl::Span<const std::string> args, int64_t unix_seconds,
                  int64_t micros, std::string client_address,
                  std::string client_name) {
  SlowLogEntry entry;
  entry.unix_seconds = unix_seconds;
  entry.micros = micros;
  entry.client_address = std::move(client_address);
  entry.client_name = std::move(client_name);
  // Redis's shortening: the last kept argument says how many are left
  // out, a long one how many bytes.
  const size_t kept =
      args.size() > kMaxArguments ? kMaxArguments - 1 : args.size();
  for (size_t i = 0; i < kept; ++i) {
    const std::string& arg = args[i];
    if (arg.size() > kMaxArgumentBytes) {
      entry.args.push_back(absl::StrCat(arg.substr(0, kMaxArgumentBytes),
                                        "... (", arg.size() - kMaxArgumentBytes,
                                        " more bytes)"));
    } else {
      entry.args.push_back(arg);
    }
  }
  if (kept < args.size()) {
    entry.args.push_back(
        absl::StrCat("... (", args.size() - kept, " more arguments)"));
  }
  internal::WriterLock lock(&mutex_);
  entry.id = next_id_++;
  entries_.push_front(std::move(entry));
  while (entries_.size() > max_len()) entries_.pop_back();
}

std::vector<SlowLogEntry> SlowLog::Newest(int64_t count) const {
  internal::WriterLock lock(&mutex_);
  const size_t n = count < 0
                       ? entries_.size()
                       : std::min(entries_.size(), static_cast<size_t>(count));
  return std::vector<SlowLogEntry>(entries_.begin(), entries_.begin() + n);
}

size_t SlowLog::size() const {
  internal::WriterLock lock(&mutex_);
  return entries_.size();
}

void SlowLog::Reset() {
  internal::WriterLock lock(&mutex_);
  entries_.clear();
}

void SlowLog::set_max_len(size_t max_len) {
  max_len_.store(max_len, std::memory_order_relaxed);
  internal::WriterLock lock(&mutex_);
  while (entries_.size() > max_len) entries_.pop_back();
}

}  // namespace feedcore::server
