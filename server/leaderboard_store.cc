#include "leaderboard_store.h"

#include <utility>

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
  LeaderboardReadOptions read;
  read.limit = set.board->options().max_page_size;
  for (;;) {
    absl::StatusOr<LeaderboardPage> page = set.board->ReadPage(read);
    if (!page.ok()) return page.status();
    for (const LeaderboardEntry& entry : page->entries) {
      if (!set.members.Contains(entry.member)) {
        return absl::DataLossError(absl::StrCat(
            "sorted-set key ", Quote(key), " holds member id ", entry.member,
            ", which has no name (", set.members.size(), " names)"));
      }
    }
    if (page->next_cursor.empty()) return absl::OkStatus();
    read.cursor = std::move(page->next_cursor);
  }
}

// A save copies a dictionary after its board, so it may name members added
// in between, which the saved board does not hold: they are not kept.
// (Ids are checked against the board before the dictionary allocates
// anything for them.)
void DropNamesNotOnBoard(const Leaderboard& board, KeyMemberNames& saved) {
  if (!saved.ids.empty() && saved.ids.size() != saved.names.size()) {
    return;  // malformed: Restore says so
  }
  if (saved.ids.empty()) {
    saved.ids.reserve(saved.names.size());
    for (size_t i = 0; i < saved.names.size(); ++i) saved.ids.push_back(i + 1);
  }
  size_t kept = 0;
  for (size_t i = 0; i < saved.ids.size(); ++i) {
    if (!board.Score(saved.ids[i]).ok()) continue;
    if (kept != i) {  // a self-move would empty the name
      saved.ids[kept] = saved.ids[i];
      saved.names[kept] = std::move(saved.names[i]);
    }
    ++kept;
  }
  saved.ids.resize(kept);
  saved.names.resize(kept);
}

absl::Status CheckBoardOptions(const LeaderboardOptions& options) {
  // Creating a throwaway board is the library's own check of the options.
  return Leaderboard::Create(options).status();
}

}  // namespace

SortedSet::SortedSet(std::shared_ptr<Leaderboard> board_of_key)
    : board(std::move(board_of_key)),
      // Only NotFound means absent: a board that cannot answer keeps the
      // name, so no member can be left without one.
      members([board = board.get()](MemberId id) {
        return !absl::IsNotFound(board->Score(id).status());
      }) {}

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
  absl::flat_hash_map<std::string, KeyMemberNames> by_key;
  for (KeyMemberNames& key : names) {
    std::string name = key.key;
    by_key.emplace(std::move(name), std::move(key));
  }
  for (const std::string& key : registry->Names()) {
    auto names_of_key = by_key.find(key);
    if (names_of_key == by_key.end()) {
      return absl::DataLossError(
          absl::StrCat("sorted-set key ", Quote(key), " has no member names"));
    }
    absl::StatusOr<std::shared_ptr<Leaderboard>> board = registry->Get(key);
    if (!board.ok()) return board.status();
    auto set = std::make_shared<SortedSet>(*std::move(board));
    KeyMemberNames& saved = names_of_key->second;
    DropNamesNotOnBoard(*set->board, saved);
    if (absl::Status status =
            set->members.Restore(saved.ids, std::move(saved.names));
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
  auto set = std::make_shared<SortedSet>(*std::move(board));
  if (journal_ != nullptr) {
    set->members.AttachJournal(journal_, std::string(key));
  }
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

absl::StatusOr<std::vector<KeyMemberNames>> LeaderboardStore::SaveKeys(
    absl::FunctionRef<absl::Status(const LeaderboardRegistry&)> save) const {
  // Held shared: GetOrCreate of a new key and Delete wait, everything else
  // goes on.
  std::shared_lock lock(mutex_);
  // Names released from here on stay until every dictionary is copied, so
  // each member of a board as saved has its name in the copy.
  for (const auto& [key, set] : sets_) set->members.HoldReleases();
  absl::Status saved = save(registry_);
  std::vector<KeyMemberNames> names;
  if (saved.ok()) {
    names.reserve(sets_.size());
    for (const auto& [key, set] : sets_) {
      KeyMemberNames& copy = names.emplace_back();
      copy.key = key;
      set->members.CopyNames(copy.ids, copy.names);
    }
  }
  for (const auto& [key, set] : sets_) set->members.ResumeReleases();
  if (!saved.ok()) return saved;
  return names;
}

MemberNameStats LeaderboardStore::NameStats() const {
  std::vector<std::shared_ptr<SortedSet>> sets;
  {
    std::shared_lock lock(mutex_);
    sets.reserve(sets_.size());
    for (const auto& [key, set] : sets_) sets.push_back(set);
  }
  MemberNameStats total;
  for (const std::shared_ptr<SortedSet>& set : sets) {
    const MemberNameStats one = set->members.stats();
    total.names += one.names;
    total.bytes += one.bytes;
  }
  return total;
}

size_t LeaderboardStore::size() const {
  std::shared_lock lock(mutex_);
  return sets_.size();
}

}  // namespace feedcore::server
