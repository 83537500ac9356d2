#include "append_only.h"

#include <chrono>
#include <cstdio>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace feedcore::server {
namespace {

// Removes from `board` every member whose id has no name among `named`
// names. Returns how many it removed.
absl::StatusOr<uint64_t> RemoveUnnamedMembers(Leaderboard& board,
                                              size_t named) {
  std::vector<MemberId> unnamed;
  LeaderboardReadOptions read;
  read.limit = board.options().max_page_size;
  for (;;) {
    absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
    if (!page.ok()) return page.status();
    for (const LeaderboardEntry& entry : page->entries) {
      if (entry.member == 0 || entry.member > named) {
        unnamed.push_back(entry.member);
      }
    }
    if (page->next_cursor.empty()) break;
    read.cursor = std::move(page->next_cursor);
  }
  for (MemberId id : unnamed) {
    if (absl::Status s = board.Remove(id); !s.ok() && !absl::IsNotFound(s)) {
      return s;
    }
  }
  return unnamed.size();
}

}  // namespace

absl::StatusOr<AppendOnlyFiles::Opened> AppendOnlyFiles::Open(
    const AppendOnlyOptions& options, const EngineOptions& engine_options,
    const LeaderboardOptions& board_options) {
  std::unique_ptr<AppendOnlyFiles> files(new AppendOnlyFiles());
  files->options_ = options;
  DurabilityOptions durability;
  durability.directory = options.directory;
  durability.fsync = options.fsync;
  durability.compact_after_bytes = options.compact_after_bytes;
  absl::StatusOr<std::unique_ptr<DurableStore>> store =
      DurableStore::Open(durability, engine_options);
  if (!store.ok()) return store.status();
  files->store_ = *std::move(store);

  NamesJournalContents contents;
  absl::StatusOr<std::unique_ptr<NamesJournal>> journal = NamesJournal::Open(
      absl::StrCat(options.directory, "/", kNamesJournalFile), options.fsync,
      &contents);
  if (!journal.ok()) return journal.status();
  files->journal_ = *std::move(journal);
  NamesRecovery& recovery = files->names_recovery_;
  recovery.records = contents.records;
  recovery.torn_tail = contents.torn_tail;

  // Join: exactly the registry's boards, each with its journal names.
  LeaderboardRegistry& registry = files->store_->boards();
  absl::flat_hash_map<std::string, std::vector<std::string>> by_key;
  for (KeyMemberNames& key : contents.keys) {
    by_key.emplace(std::move(key.key), std::move(key.names));
  }
  std::vector<KeyMemberNames> joined;
  for (const std::string& key : registry.Names()) {
    KeyMemberNames names{key, {}};
    if (auto it = by_key.find(key); it != by_key.end()) {
      names.names = std::move(it->second);
      by_key.erase(it);
    }
    absl::StatusOr<std::shared_ptr<Leaderboard>> board = registry.Get(key);
    if (!board.ok()) return board.status();
    absl::StatusOr<uint64_t> removed =
        RemoveUnnamedMembers(**board, names.names.size());
    if (!removed.ok()) return removed.status();
    recovery.unnamed_members_removed += *removed;
    joined.push_back(std::move(names));
  }
  recovery.keys_without_board = by_key.size();
  if (recovery.unnamed_members_removed > 0) {
    // The removals are store writes: durable before the journal forgets.
    if (absl::Status s = files->store_->Sync(); !s.ok()) return s;
  }
  absl::StatusOr<std::unique_ptr<LeaderboardStore>> boards =
      LeaderboardStore::Restore(board_options, &registry, std::move(joined));
  if (!boards.ok()) return boards.status();
  LeaderboardStore* store_of_keys = boards->get();
  if (absl::Status s = files->journal_->Rewrite(
          [store_of_keys] { return store_of_keys->AllNames(); });
      !s.ok()) {
    return s;
  }
  DurableStore* durable = files->store_.get();
  (*boards)->AttachJournal(files->journal_.get(),
                           [durable] { return durable->Sync(); });
  return Opened{std::move(files), *std::move(boards)};
}

AppendOnlyFiles::~AppendOnlyFiles() { WaitForRewrite(); }

absl::Status AppendOnlyFiles::StartRewrite(const LeaderboardStore* boards) {
  std::unique_lock lock(mu_);
  if (rewrite_.in_progress) {
    // Redis's wording.
    return absl::FailedPreconditionError(
        "Background append only file rewriting already in progress");
  }
  std::thread previous = std::move(rewriter_);
  rewrite_.in_progress = true;
  try {
    rewriter_ = std::thread([this, boards] {
      const auto start = std::chrono::steady_clock::now();
      absl::Status status = store_->Compact();
      if (status.ok()) {
        status = journal_->Rewrite([boards] { return boards->AllNames(); });
      }
      const int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::steady_clock::now() - start)
                                  .count();
      if (status.ok()) {
        std::fprintf(stderr,
                     "feedcore-server: background append-only rewrite done\n");
      } else {
        std::fprintf(stderr,
                     "feedcore-server: background append-only rewrite "
                     "failed: %s\n",
                     std::string(status.message()).c_str());
      }
      std::lock_guard done(mu_);
      rewrite_.in_progress = false;
      ++rewrite_.rewrites;
      rewrite_.last_seconds = seconds;
      rewrite_.last_status = status;
    });
  } catch (const std::system_error& e) {
    rewrite_.in_progress = false;
    lock.unlock();
    if (previous.joinable()) previous.join();
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot start a background rewrite: ", e.what()));
  }
  lock.unlock();
  // It has finished (in_progress was false): joining is quick.
  if (previous.joinable()) previous.join();
  return absl::OkStatus();
}

void AppendOnlyFiles::WaitForRewrite() {
  std::unique_lock lock(mu_);
  std::thread running = std::move(rewriter_);
  lock.unlock();
  if (running.joinable()) running.join();
}

absl::Status AppendOnlyFiles::WriteError() const {
  DurabilityStats stats = store_->Stats();
  if (!stats.write_error.ok()) return stats.write_error;
  return journal_->Stats().write_error;
}

AppendOnlyFiles::RewriteState AppendOnlyFiles::rewrite_state() const {
  std::lock_guard lock(mu_);
  return rewrite_;
}

}  // namespace feedcore::server
