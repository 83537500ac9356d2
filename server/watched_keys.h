// WatchedKeys: what WATCH needs to know, "has this key been written since
// the client watched it?", at no cost to writes while nobody watches.
//
// Each watched key has a version, and a count of the sessions watching it;
// a session remembers the version it saw (WatchList). The dispatcher
// calls Touch for the keys of every write command that may have changed
// them and TouchAll for commands that change every key (FLUSHDB); each
// gives the key a new version. EXEC aborts when a remembered version is
// no longer the key's. An unwatched key has no entry, and while no key is
// watched Touch returns after one relaxed load.
//
// Why a relaxed load suffices: a write touches after changing its key under
// the key's own lock, and a session that watched the key and then read it
// took that lock after registering; so either its read saw the write
// (nothing to abort for) or the write's lock came after the read's, and the
// registration happened before, so the write's load sees it.
//
// Versions come from one counter, so a key that is unwatched and watched
// again never repeats a version a session may still hold.
//
// Thread-safe.
#ifndef FEEDCORE_SERVER_WATCHED_KEYS_H_
#define FEEDCORE_SERVER_WATCHED_KEYS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"

namespace feedcore::server {

class WatchedKeys {
 public:
  // Registers one more watcher of `key` and returns its version.
  uint64_t Watch(absl::string_view key);
  // Removes one watcher of `key` (the key's entry goes with its last).
  void Unwatch(absl::string_view key);

  // Gives `key` a new version if anyone watches it.
  void Touch(absl::string_view key);
  // Gives every watched key a new version.
  void TouchAll();

  // Whether `key` still has `version`.
  bool Unchanged(absl::string_view key, uint64_t version) const;

  // Whether any key is watched (a hint: may lag a concurrent Watch).
  bool AnyWatched() const {
    return watched_keys_.load(std::memory_order_relaxed) != 0;
  }

 private:
  struct Entry {
    uint64_t version = 0;
    size_t watchers = 0;
  };

  mutable internal::SharedMutex mutex_;
  absl::flat_hash_map<std::string, Entry> keys_ ABSL_GUARDED_BY(mutex_);
  uint64_t last_version_ ABSL_GUARDED_BY(mutex_) = 0;
  // keys_.size(), readable without the mutex.
  std::atomic<size_t> watched_keys_{0};
};

// The keys one session watches, with the versions it saw. Unwatches them
// all when cleared or destroyed, so a closed connection leaves nothing
// behind. Move-only; not thread-safe (a session belongs to one connection).
class WatchList {
 public:
  WatchList() = default;
  ~WatchList() { Clear(); }
  WatchList(WatchList&& other) noexcept { *this = std::move(other); }
  WatchList& operator=(WatchList&& other) noexcept;
  WatchList(const WatchList&) = delete;
  WatchList& operator=(const WatchList&) = delete;

  // Watches `key` in `keys` (again is a no-op, as in Redis).
  void Add(WatchedKeys& keys, absl::string_view key);
  // Whether every watched key still has the version it had when watched.
  bool AllUnchanged() const;
  void Clear();
  size_t size() const { return watched_.size(); }

 private:
  WatchedKeys* keys_ = nullptr;
  std::vector<std::pair<std::string, uint64_t>> watched_;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_WATCHED_KEYS_H_
