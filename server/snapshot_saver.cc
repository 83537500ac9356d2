#include "snapshot_saver.h"

#include <chrono>
#include <cstdio>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"

namespace feedcore::server {
namespace {

int64_t UnixSecondsNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

SnapshotSaver::SnapshotSaver(std::string path, SaveFunction save)
    : path_(std::move(path)),
      save_(std::move(save)),
      last_save_unix_seconds_(UnixSecondsNow()) {}

SnapshotSaver::~SnapshotSaver() { WaitUntilIdle(); }

absl::Status SnapshotSaver::ClaimLocked(bool background) {
  if (!enabled()) {
    return absl::FailedPreconditionError(
        "snapshots are off: start the server with --snapshot_file");
  }
  if (saving_) {
    // Redis's wording when a background save runs.
    return absl::FailedPreconditionError(
        saving_in_background_ ? "Background save already in progress"
                              : "a save is already in progress");
  }
  saving_ = true;
  saving_in_background_ = background;
  return absl::OkStatus();
}

absl::Status SnapshotSaver::RunAndRelease() {
  absl::Status status;
  try {
    status = save_(path_);
  } catch (const std::exception& e) {
    // Out of memory, typically: the save fails, the server goes on.
    status = absl::ResourceExhaustedError(
        absl::StrCat("snapshot to ", path_, " failed: ", e.what()));
  }
  std::lock_guard lock(mutex_);
  if (status.ok()) {
    last_save_unix_seconds_ = UnixSecondsNow();
    ++successful_saves_;
  }
  if (saving_in_background_) last_background_status_ = status;
  saving_ = false;
  saving_in_background_ = false;
  idle_.notify_all();
  return status;
}

absl::Status SnapshotSaver::Save() {
  {
    std::lock_guard lock(mutex_);
    if (absl::Status status = ClaimLocked(false); !status.ok()) return status;
  }
  return RunAndRelease();
}

absl::Status SnapshotSaver::StartBackgroundSave() {
  std::unique_lock lock(mutex_);
  if (absl::Status status = ClaimLocked(true); !status.ok()) return status;
  // The previous background thread has released the slot, so it is
  // finishing or finished: joining it is quick.
  std::thread previous = std::move(background_);
  try {
    background_ = std::thread([this] {
      const absl::Status status = RunAndRelease();
      if (status.ok()) {
        std::fprintf(stderr, "feedcore-server: background save to %s done\n",
                     path_.c_str());
      } else {
        std::fprintf(stderr, "feedcore-server: background save failed: %s\n",
                     std::string(status.message()).c_str());
      }
    });
  } catch (const std::system_error& e) {
    saving_ = false;
    saving_in_background_ = false;
    idle_.notify_all();
    lock.unlock();
    if (previous.joinable()) previous.join();
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot start a background save: ", e.what()));
  }
  lock.unlock();
  if (previous.joinable()) previous.join();
  return absl::OkStatus();
}

void SnapshotSaver::WaitUntilIdle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return !saving_; });
  std::thread finished = std::move(background_);
  lock.unlock();
  if (finished.joinable()) finished.join();
}

int64_t SnapshotSaver::last_save_unix_seconds() const {
  std::lock_guard lock(mutex_);
  return last_save_unix_seconds_;
}

absl::Status SnapshotSaver::last_background_status() const {
  std::lock_guard lock(mutex_);
  return last_background_status_;
}

}  // namespace feedcore::server

namespace feedcore::server {

bool SnapshotSaver::background_save_running() const {
  std::lock_guard lock(mutex_);
  return saving_ && saving_in_background_;
}

uint64_t SnapshotSaver::successful_saves() const {
  std::lock_guard lock(mutex_);
  return successful_saves_;
}

}  // namespace feedcore::server
