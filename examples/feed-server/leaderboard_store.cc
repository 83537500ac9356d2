#include "leaderboard_store.h"

#include <utility>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "names_journal.h"

namespace feedcore::server {
namespace {

// Every member on the set's board has a name in its dictionary: a loaded
// board and dictionary come from two files, which must agree.
absl::Status CheckEveryMemberNamed(const std::string& key,
                                   const SortedSet& set) {
  const size_t named = set.members.size();
  LeaderboardReadOptions read;
  read.limit = set.board->options().max_page_size;
  for (;;) {
    absl::StatusOr<LeaderboardPage> page = set.board->ReadPage(read);
    if (!page.ok()) return page.status();
    for (const LeaderboardEntry& entry : page->entries) {
      if (entry.member == 0 || entry.member > named) {
        return absl::DataLossError(absl::StrCat(
            "sorted-set key ", Quote(key), " holds member id ", entry.member,
            ", which has no name (", named, " names)"));
      }
    }
    if (page->next_cursor.empty()) return absl::OkStatus();
    read.cursor = std::move(page->next_cursor);
  }
}

absl::Status CheckBoardOptions(const LeaderboardOptions& options) {
  // Creating a throwaway board is the library's own check of the options.
  return Leaderboard::Create(options).status();
}

}  // namespace

absl::StatusOr<MemberId> MemberDictionary::Intern(absl::string_view name) {
  {
    std::shared_lock lock(mutex_);
    if (auto it = ids_.find(name); it != ids_.end()) {
      const MemberId id = it->second;
      NamesJournal* journal = journal_;
      lock.unlock();
      // The record that assigned the id may not be synced yet.
      if (journal != nullptr) {
        if (absl::Status s = journal->SyncAppended(); !s.ok()) return s;
      }
      return id;
    }
  }
  std::unique_lock lock(mutex_);
  if (auto it = ids_.find(name); it != ids_.end()) {
    const MemberId id = it->second;
    NamesJournal* journal = journal_;
    lock.unlock();
    if (journal != nullptr) {
      if (absl::Status s = journal->SyncAppended(); !s.ok()) return s;
    }
    return id;
  }
  const MemberId id = names_.size() + 1;
  NamesJournal* journal = journal_;
  uint64_t position = 0;
  if (journal != nullptr) {
    absl::StatusOr<uint64_t> appended = journal->Append(
        {NamesRecordType::kAssign, key_, id, std::string(name)});
    if (!appended.ok()) return appended.status();
    position = *appended;
  }
  ids_.emplace(name, id);
  names_.emplace_back(name);
  lock.unlock();
  // Synced outside the lock, so that concurrent assignments share one
  // fdatasync; readers that find the id meanwhile sync themselves.
  if (journal != nullptr) {
    if (absl::Status s = journal->SyncTo(position); !s.ok()) return s;
  }
  return id;
}

void MemberDictionary::AttachJournal(NamesJournal* journal, std::string key) {
  std::unique_lock lock(mutex_);
  journal_ = journal;
  key_ = std::move(key);
}

void MemberDictionary::DetachJournal() {
  std::unique_lock lock(mutex_);
  journal_ = nullptr;
}

std::optional<MemberId> MemberDictionary::Find(absl::string_view name) const {
  std::shared_lock lock(mutex_);
  if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  return std::nullopt;
}

std::vector<std::string> MemberDictionary::NamesOf(
    const std::vector<LeaderboardEntry>& entries) const {
  std::vector<std::string> names;
  names.reserve(entries.size());
  std::shared_lock lock(mutex_);
  for (const LeaderboardEntry& entry : entries) {
    const MemberId id = entry.member;
    names.push_back(id == 0 || id > names_.size() ? std::string()
                                                  : names_[id - 1]);
  }
  return names;
}

size_t MemberDictionary::size() const {
  std::shared_lock lock(mutex_);
  return names_.size();
}

std::vector<std::string> MemberDictionary::Names() const {
  std::shared_lock lock(mutex_);
  return std::vector<std::string>(names_.begin(), names_.end());
}

absl::Status MemberDictionary::Restore(std::vector<std::string> names) {
  std::unique_lock lock(mutex_);
  if (!names_.empty()) {
    return absl::InvalidArgumentError(
        "only an empty member dictionary can be restored");
  }
  ids_.reserve(names.size());
  for (std::string& name : names) {
    if (!ids_.try_emplace(name, names_.size() + 1).second) {
      const std::string message =
          absl::StrCat("member name ", Quote(name), " is given twice");
      ids_.clear();
      names_.clear();
      return absl::InvalidArgumentError(message);
    }
    names_.push_back(std::move(name));
  }
  return absl::OkStatus();
}

std::mutex& SortedSet::LockFor(absl::string_view member_name) {
  return member_locks[absl::HashOf(member_name) % kMemberLocks];
}

absl::StatusOr<std::unique_ptr<LeaderboardStore>> LeaderboardStore::Create(
    const LeaderboardOptions& options) {
  if (absl::Status status = CheckBoardOptions(options); !status.ok()) {
    return status;
  }
  auto registry = std::make_unique<LeaderboardRegistry>();
  LeaderboardRegistry* borrowed = registry.get();
  return std::unique_ptr<LeaderboardStore>(
      new LeaderboardStore(options, std::move(registry), borrowed));
}

absl::StatusOr<std::unique_ptr<LeaderboardStore>> LeaderboardStore::Restore(
    const LeaderboardOptions& options, LeaderboardRegistry* registry,
    std::vector<KeyMemberNames> names) {
  if (registry == nullptr) {
    return absl::InvalidArgumentError("LeaderboardStore needs a registry");
  }
  if (absl::Status status = CheckBoardOptions(options); !status.ok()) {
    return status;
  }
  std::unique_ptr<LeaderboardStore> store(
      new LeaderboardStore(options, nullptr, registry));
  absl::flat_hash_map<std::string, std::vector<std::string>> by_key;
  for (KeyMemberNames& key : names) {
    by_key.emplace(std::move(key.key), std::move(key.names));
  }
  for (const std::string& key : registry->Names()) {
    auto names_of_key = by_key.find(key);
    if (names_of_key == by_key.end()) {
      return absl::DataLossError(
          absl::StrCat("sorted-set key ", Quote(key), " has no member names"));
    }
    absl::StatusOr<std::shared_ptr<Leaderboard>> board = registry->Get(key);
    if (!board.ok()) return board.status();
    auto set = std::make_shared<SortedSet>();
    set->board = *std::move(board);
    if (absl::Status status =
            set->members.Restore(std::move(names_of_key->second));
        !status.ok()) {
      return absl::DataLossError(
          absl::StrCat("sorted-set key ", Quote(key), ": ", status.message()));
    }
    by_key.erase(names_of_key);
    if (absl::Status status = CheckEveryMemberNamed(key, *set); !status.ok()) {
      return status;
    }
    store->sets_.emplace(key, std::move(set));
  }
  if (!by_key.empty()) {
    return absl::DataLossError(
        absl::StrCat("member names are given for sorted-set key ",
                     Quote(by_key.begin()->first), ", which has no board"));
  }
  return store;
}

absl::StatusOr<std::shared_ptr<SortedSet>> LeaderboardStore::GetOrCreate(
    absl::string_view key) {
  if (std::shared_ptr<SortedSet> found = Find(key)) return found;
  std::unique_lock lock(mutex_);
  if (auto it = sets_.find(key); it != sets_.end()) return it->second;
  absl::StatusOr<std::shared_ptr<Leaderboard>> board =
      registry_.GetOrCreate(key, options_);
  if (!board.ok()) return board.status();
  auto set = std::make_shared<SortedSet>();
  set->board = *std::move(board);
  if (journal_ != nullptr)
    set->members.AttachJournal(journal_, std::string(key));
  sets_.emplace(key, set);
  return set;
}

std::shared_ptr<SortedSet> LeaderboardStore::Find(absl::string_view key) const {
  std::shared_lock lock(mutex_);
  if (auto it = sets_.find(key); it != sets_.end()) return it->second;
  return nullptr;
}

absl::StatusOr<bool> LeaderboardStore::Delete(absl::string_view key) {
  std::unique_lock lock(mutex_);
  auto it = sets_.find(key);
  if (it == sets_.end()) return false;
  // The registry and sets_ change together under mutex_, so the registry
  // holds the key exactly when sets_ does.
  if (absl::Status s = registry_.Drop(key); !s.ok() && !absl::IsNotFound(s)) {
    return s;
  }
  std::shared_ptr<SortedSet> set = std::move(it->second);
  sets_.erase(it);
  if (journal_ == nullptr) return true;
  // No record of the old dictionary may follow the drop record.
  set->members.DetachJournal();
  // The drop reaches the journal only once the board's drop is durable:
  // otherwise a crash could bring the board back without its names.
  if (absl::Status s = sync_boards_(); !s.ok()) return s;
  absl::StatusOr<uint64_t> position =
      journal_->Append({NamesRecordType::kDrop, std::string(key), 0, ""});
  if (!position.ok()) return position.status();
  if (absl::Status s = journal_->SyncTo(*position); !s.ok()) return s;
  return true;
}

void LeaderboardStore::AttachJournal(
    NamesJournal* journal, std::function<absl::Status()> sync_boards) {
  std::unique_lock lock(mutex_);
  journal_ = journal;
  sync_boards_ = std::move(sync_boards);
  for (auto& [key, set] : sets_) set->members.AttachJournal(journal, key);
}

std::vector<KeyMemberNames> LeaderboardStore::AllNames() const {
  std::shared_lock lock(mutex_);
  std::vector<KeyMemberNames> names;
  names.reserve(sets_.size());
  for (const auto& [key, set] : sets_) {
    names.push_back({key, set->members.Names()});
  }
  return names;
}

absl::StatusOr<std::vector<KeyMemberNames>> LeaderboardStore::SaveKeys(
    absl::FunctionRef<absl::Status(const LeaderboardRegistry&)> save) const {
  // Held shared: GetOrCreate of a new key and Delete wait, everything else
  // goes on.
  std::shared_lock lock(mutex_);
  if (absl::Status status = save(registry_); !status.ok()) return status;
  std::vector<KeyMemberNames> names;
  names.reserve(sets_.size());
  for (const auto& [key, set] : sets_) {
    names.push_back({key, set->members.Names()});
  }
  return names;
}

size_t LeaderboardStore::size() const {
  std::shared_lock lock(mutex_);
  return sets_.size();
}

}  // namespace feedcore::server
