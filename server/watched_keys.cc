#include "watched_keys.h"

#include <algorithm>

namespace feedcore::server {

uint64_t WatchedKeys::Watch(absl::string_view key) {
  internal::WriterLock lock(&mutex_);
  auto [it, inserted] = keys_.try_emplace(key);
  if (inserted) {
    it->second.version = ++last_version_;
    watched_keys_.store(keys_.size(), std::memory_order_relaxed);
  }
  ++it->second.watchers;
  return it->second.version;
}

void WatchedKeys::Unwatch(absl::string_view key) {
  internal::WriterLock lock(&mutex_);
  auto it = keys_.find(key);
  if (it == keys_.end()) return;
  if (--it->second.watchers == 0) {
    keys_.erase(it);
    watched_keys_.store(keys_.size(), std::memory_order_relaxed);
  }
}

void WatchedKeys::Touch(absl::string_view key) {
  if (!AnyWatched()) return;
  internal::WriterLock lock(&mutex_);
  if (auto it = keys_.find(key); it != keys_.end()) {
    it->second.version = ++last_version_;
  }
}

void WatchedKeys::TouchAll() {
  if (!AnyWatched()) return;
  internal::WriterLock lock(&mutex_);
  for (auto& [key, entry] : keys_) entry.version = ++last_version_;
}

bool WatchedKeys::Unchanged(absl::string_view key, uint64_t version) const {
  internal::WriterLock lock(&mutex_);
  auto it = keys_.find(key);
  return it != keys_.end() && it->second.version == version;
}

WatchList& WatchList::operator=(WatchList&& other) noexcept {
  if (this != &other) {
    Clear();
    keys_ = other.keys_;
    watched_ = std::move(other.watched_);
    other.watched_.clear();
  }
  return *this;
}

void WatchList::Add(WatchedKeys& keys, absl::string_view key) {
  keys_ = &keys;
  const bool already =
      std::any_of(watched_.begin(), watched_.end(),
                  [key](const std::pair<std::string, uint64_t>& w) {
                    return w.first == key;
                  });
  if (already) return;
  const uint64_t version = keys.Watch(key);
  watched_.emplace_back(std::string(key), version);
}

bool WatchList::AllUnchanged() const {
  for (const auto& [key, version] : watched_) {
    if (!keys_->Unchanged(key, version)) return false;
  }
  return true;
}

void WatchList::Clear() {
  for (const auto& [key, version] : watched_) keys_->Unwatch(key);
  watched_.clear();
}

}  // namespace feedcore::server
