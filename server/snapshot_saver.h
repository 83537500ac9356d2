// SnapshotSaver: when and how often the server saves, apart from what a
// save writes. At most one save runs at a time, in the foreground (SAVE,
// SNAPSHOT, the save on exit) or on a background thread (BGSAVE); a second
// one is refused, as Redis refuses a save during BGSAVE. It remembers the
// time of the last successful save (LASTSAVE).
//
// Thread-safe. The destructor waits for a background save.
#ifndef FEEDCORE_SERVER_SNAPSHOT_SAVER_H_
#define FEEDCORE_SERVER_SNAPSHOT_SAVER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"

namespace feedcore::server {

class SnapshotSaver {
 public:
  // Writes one snapshot to the given path (ServerData::Save in the server;
  // tests pass their own).
  using SaveFunction = std::function<absl::Status(const std::string& path)>;

  // Saves to `path` with `save`. An empty `path` turns snapshots off:
  // every save then fails with FailedPrecondition. LASTSAVE starts at the
  // time of construction (the server's start), as in Redis.
  SnapshotSaver(std::string path, SaveFunction save);
  ~SnapshotSaver();
  SnapshotSaver(const SnapshotSaver&) = delete;
  SnapshotSaver& operator=(const SnapshotSaver&) = delete;

  bool enabled() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

  // Saves on the calling thread. FailedPrecondition if snapshots are off
  // or another save is running; otherwise the save's own error.
  absl::Status Save();

  // Starts a save on a background thread and returns at once.
  // FailedPrecondition as for Save; ResourceExhausted if no thread can be
  // started. The outcome is printed to stderr (as Redis logs it) and
  // kept for last_background_status().
  absl::Status StartBackgroundSave();

  // Blocks until no save runs (the background one included).
  void WaitUntilIdle();

  // Unix time, in seconds, of the last successful save.
  int64_t last_save_unix_seconds() const;

  // The outcome of the last background save that finished (OK before
  // the first).
  absl::Status last_background_status() const;

  // Whether a BGSAVE is running, and how many saves have succeeded.
  bool background_save_running() const;
  uint64_t successful_saves() const;

 private:
  // Takes the single save slot, or says why it cannot.
  absl::Status ClaimLocked(bool background);
  absl::Status RunAndRelease();

  const std::string path_;
  const SaveFunction save_;

  mutable std::mutex mutex_;
  std::condition_variable idle_;
  bool saving_ = false;
  bool saving_in_background_ = false;
  int64_t last_save_unix_seconds_;
  uint64_t successful_saves_ = 0;
  absl::Status last_background_status_;
  std::thread background_;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SNAPSHOT_SAVER_H_
