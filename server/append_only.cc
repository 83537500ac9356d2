#include "append_only.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace feedcore::server {
namespace {

// Removes from `board` every member whose id has no name in `named`.
// Returns how many it removed.
absl::StatusOr<uint64_t> RemoveUnnamedMembers(
    Leaderboard& board, const absl::flat_hash_set<MemberId>& named) {
  std::vector<MemberId> unnamed;
  LeaderboardReadOptions read;
  read.limit = board.options().max_page_size;
  for (;;) {
    absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
    if (!page.ok()) return page.status();
    for (const LeaderboardEntry& entry : page->entries) {
      if (!named.contains(entry.member)) {
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

// Makes every change whose call has returned durable. With fsync always
// each one was synced before its call returned, so there is nothing to
// wait for and no sync is spent on it.
absl::Status SyncStore(DurableStore& store, FsyncPolicy policy) {
  if (policy == FsyncPolicy::kAlways) return store.Stats().write_error;
  return store.Sync();
}

// DurableStore::Compact, unless the log holds nothing since the store's
// snapshot: a new snapshot would then be the same state written again.
absl::Status CompactStore(DurableStore& store) {
  const DurabilityStats stats = store.Stats();
  if (!stats.write_error.ok()) return stats.write_error;
  if (stats.log_bytes_since_snapshot == 0) return absl::OkStatus();
  return store.Compact();
}

// A journal rewrite's names: those live once the store is durable, so no
// name whose member's removal could still be lost is left out.
std::function<absl::StatusOr<std::vector<KeyMemberNames>>()> LiveNames(
    const LeaderboardStore* boards, DurableStore* durable, FsyncPolicy policy) {
  return [boards, durable, policy] {
    return boards->SaveKeys([durable, policy](const LeaderboardRegistry&) {
      return SyncStore(*durable, policy);
    });
  };
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
      files->store_->Stats().write_group_tag, &contents);
  if (!journal.ok()) return journal.status();
  files->journal_ = *std::move(journal);
  NamesRecovery& recovery = files->names_recovery_;
  recovery.records = contents.records;
  recovery.torn_tail = contents.torn_tail;
  recovery.transactions_skipped = contents.groups_skipped;

  // The journal's last rename, if the store lost it, is made again: the
  // journal decides (names_journal.h). The board then still has the old
  // key and the generation the record names; otherwise none has both.
  LeaderboardRegistry& registry = files->store_->boards();
  if (const std::optional<NamesRename>& rename = contents.last_rename;
      rename.has_value()) {
    absl::StatusOr<uint64_t> generation = registry.Generation(rename->from);
    if (generation.ok() && *generation == rename->generation) {
      if (absl::Status s = registry.Rename(rename->from, rename->to); !s.ok()) {
        return s;
      }
      ++recovery.renames_redone;
    }
  }

  // Join: exactly the registry's boards, each with its journal names.
  absl::flat_hash_map<std::string, KeyMemberNames> by_key;
  for (KeyMemberNames& key : contents.keys) {
    std::string name = key.key;
    by_key.emplace(std::move(name), std::move(key));
  }
  // Names of ids no board holds (see names_journal.h, "Frees") are left to
  // LeaderboardStore::Restore, which drops them.
  std::vector<KeyMemberNames> joined;
  for (const std::string& key : registry.Names()) {
    KeyMemberNames names{key, {}, {}};
    if (auto it = by_key.find(key); it != by_key.end()) {
      names = std::move(it->second);
      by_key.erase(it);
    }
    absl::StatusOr<std::shared_ptr<Leaderboard>> board = registry.Get(key);
    if (!board.ok()) return board.status();
    const absl::flat_hash_set<MemberId> named(names.ids.begin(),
                                              names.ids.end());
    absl::StatusOr<uint64_t> removed = RemoveUnnamedMembers(**board, named);
    if (!removed.ok()) return removed.status();
    recovery.unnamed_members_removed += *removed;
    joined.push_back(std::move(names));
  }
  recovery.keys_without_board = by_key.size();
  if (recovery.unnamed_members_removed > 0 || recovery.renames_redone > 0) {
    // The removals and renames are store writes: durable before the
    // journal forgets.
    if (absl::Status s = SyncStore(*files->store_, options.fsync); !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<std::unique_ptr<LeaderboardStore>> boards =
      LeaderboardStore::Restore(board_options, &registry, std::move(joined));
  if (!boards.ok()) return boards.status();
  // Before any id is given: the journal then names no id twice (see
  // names_journal.h, "Frees").
  DurableStore* durable = files->store_.get();
  if (absl::Status s = files->journal_->Rewrite(
          LiveNames(boards->get(), durable, options.fsync));
      !s.ok()) {
    return s;
  }
  AppendOnlyFiles* raw = files.get();
  (*boards)->AttachJournal(files->journal_.get(), [raw] {
    // In a group the drop's record needs no durable store first: the
    // group's tag decides (names_journal.h, "Groups").
    if (raw->group_open_.load(std::memory_order_relaxed)) {
      return absl::OkStatus();
    }
    return SyncStore(*raw->store_, raw->options_.fsync);
  });
  return Opened{std::move(files), *std::move(boards)};
}

AppendOnlyFiles::~AppendOnlyFiles() { WaitForRewrite(); }

absl::Status AppendOnlyFiles::RunAsOneWrite(absl::FunctionRef<void()> writes) {
  internal::ReaderLock no_rewrite(&group_mutex_);
  // One above the store's largest: EXECs run one at a time.
  const uint64_t tag = store_->Stats().write_group_tag + 1;
  absl::StatusOr<std::unique_ptr<DurableStore::WriteGroup>> group =
      store_->BeginWriteGroup(tag);
  if (!group.ok()) {
    writes();  // each write meets the store's refusal
    return absl::OkStatus();
  }
  absl::StatusOr<uint64_t> begun =
      journal_->Append({NamesRecordType::kGroupBegin, "", tag, ""},
                       NamesJournal::IfAppendFails::kCallerChangesNothing);
  if (!begun.ok()) {
    // Nothing written in the group: it ends with nothing in it.
    (*group)->Close().IgnoreError();
    return begun.status();
  }
  group_open_.store(true, std::memory_order_relaxed);
  writes();
  group_open_.store(false, std::memory_order_relaxed);
  absl::Status closed = (*group)->Close();
  // Appended whatever the close answered: the end only bounds the group,
  // the store's tag decides whether it happened.
  absl::StatusOr<uint64_t> ended =
      journal_->Append({NamesRecordType::kGroupEnd, "", tag, ""});
  if (!closed.ok()) return closed;
  return ended.status();
}

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
      absl::Status status = CompactStore(*store_);
      if (status.ok()) {
        status = journal_->Rewrite(
            [this, collect = LiveNames(boards, store_.get(), options_.fsync)] {
              internal::WriterLock no_group(&group_mutex_);
              return collect();
            });
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
