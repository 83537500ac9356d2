// AppendOnlyFiles: what `--appendonly yes` keeps in `--dir`. The library's
// DurableStore (feedcore/durable_store.h) logs every change of the feed
// engine and the boards; the NamesJournal (names_journal.h) holds the
// sorted-set keys' member names, which the library does not know. Both use
// the `--appendfsync` policy, so an acknowledged write is as durable as its
// names.
//
// Open recovers both and joins them: each board of the recovered registry
// becomes a sorted-set key with the dictionary the journal gives it. Names
// of keys that have no board (a crash between a key's first name and its
// board's creation, or after the drop of a board and before the journal's
// drop record) are left out. A board member whose id has no name can only
// follow a machine crash with fsync everysec or no, when the store's log
// reached the disk further than the journal: such members are removed
// and counted (unnamed_members_removed), since no reply could name them.
// Then the journal is rewritten to the names of the members on the
// recovered boards.
//
// BGREWRITEAOF (StartRewrite) compacts both on a thread: the store's
// snapshot and log (DurableStore::Compact), then the journal.
//
// Thread-safe.
#ifndef FEEDCORE_SERVER_APPEND_ONLY_H_
#define FEEDCORE_SERVER_APPEND_ONLY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "feedcore/durable_store.h"
#include "feedcore/options.h"
#include "leaderboard_store.h"
#include "names_journal.h"

namespace feedcore::server {

struct AppendOnlyOptions {
  std::string directory;                          // --dir
  FsyncPolicy fsync = FsyncPolicy::kEverySecond;  // --appendfsync
  // DurabilityOptions::compact_after_bytes of the store.
  uint64_t compact_after_bytes = uint64_t{1} << 30;
};

// The journal's file name inside the directory.
inline constexpr char kNamesJournalFile[] = "names.fcjournal";

// What start-up recovered, beyond DurabilityStats.
struct NamesRecovery {
  uint64_t records = 0;
  bool torn_tail = false;
  uint64_t keys_without_board = 0;
  uint64_t unnamed_members_removed = 0;
  // 1 if the journal's last rename was lost by the store and made again.
  uint64_t renames_redone = 0;
  // EXECs whose names records were skipped: the crash kept their write
  // group from the store (names_journal.h, "Groups").
  uint64_t transactions_skipped = 0;
};

class AppendOnlyFiles {
 public:
  // Opens `options.directory` (see above) and returns the files and the
  // store of sorted-set keys over the recovered registry. The store's and
  // the journal's errors, naming the file (DataLoss for damage).
  struct Opened {
    std::unique_ptr<AppendOnlyFiles> files;
    std::unique_ptr<LeaderboardStore> boards;
  };
  static absl::StatusOr<Opened> Open(const AppendOnlyOptions& options,
                                     const EngineOptions& engine_options,
                                     const LeaderboardOptions& board_options);

  // Waits for a running rewrite.
  ~AppendOnlyFiles();
  AppendOnlyFiles(const AppendOnlyFiles&) = delete;
  AppendOnlyFiles& operator=(const AppendOnlyFiles&) = delete;

  DurableStore& store() { return *store_; }
  NamesJournal& journal() { return *journal_; }
  const AppendOnlyOptions& options() const { return options_; }
  const NamesRecovery& names_recovery() const { return names_recovery_; }

  // Starts BGREWRITEAOF's work on a thread: DurableStore::Compact, then
  // the journal's rewrite from `boards` (which must outlive the rewrite).
  // FailedPrecondition if one is running; the outcome is logged to stderr
  // and kept (last_rewrite_status).
  absl::Status StartRewrite(const LeaderboardStore* boards);

  // Blocks until no rewrite runs.
  void WaitForRewrite();

  // Runs `writes` (EXEC's queue) on this thread as one durable write of the
  // store (DurableStore::WriteGroup) and one group of the journal, with the
  // same tag: a crash keeps all of them or none, in the store and in the
  // names (names_journal.h, "Groups"). Meanwhile no journal rewrite
  // collects names, since it would drop names freed in the group before
  // the group is on disk. Returns the group's error (the store's write
  // error: the writes are then in memory only, and the files refuse
  // writes) or the journal's; a store that refuses to begin the group runs
  // `writes` alone, and each fails with its refusal. REQUIRES: no call in
  // `writes` waits for the store's disk beyond what was appended before
  // the group (the callers exclude the saves and the other admin
  // commands), and nothing else writes meanwhile (EXEC runs alone).
  absl::Status RunAsOneWrite(absl::FunctionRef<void()> writes);

  // OK, or why writes are refused: the store's write error, else the
  // journal's.
  absl::Status WriteError() const;

  struct RewriteState {
    bool in_progress = false;
    uint64_t rewrites = 0;      // finished, successful or not
    int64_t last_seconds = -1;  // duration of the last one
    absl::Status last_status;   // OK before the first
  };
  RewriteState rewrite_state() const;

 private:
  AppendOnlyFiles() = default;

  AppendOnlyOptions options_;
  std::unique_ptr<DurableStore> store_;
  std::unique_ptr<NamesJournal> journal_;
  NamesRecovery names_recovery_;

  mutable std::mutex mu_;
  RewriteState rewrite_;  // guarded by mu_
  std::thread rewriter_;  // guarded by mu_
  // Held shared by each RunAsOneWrite, alone by a rewrite's collecting.
  internal::SharedMutex group_mutex_;
  // While RunAsOneWrite runs `writes`: the boards' drops then need no
  // durable store before their journal records.
  std::atomic<bool> group_open_{false};
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_APPEND_ONLY_H_
