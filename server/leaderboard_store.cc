#include "leaderboard_store.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "names_journal.h"
#include "xxhash.h"

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

// A key's place in Scan's order: its hash, in 63 bits so that cursors
// (position + 1) fit an int64 for clients that parse them so.
uint64_t ScanPosition(absl::string_view key) {
  return XXH3_64bits(key.data(), key.size()) >> 1;
}

bool HasMembers(const SortedSet& set) {
  absl::StatusOr<size_t> size = set.board->Size();
  // A board that cannot answer is counted as holding members: the key is
  // never hidden while it may still hold data.
  return !size.ok() || *size > 0;
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
        absl::StatusOr<std::optional<int64_t>> score =
            board->ScoreIfPresent(id);
        return !score.ok() || score->has_value();
      }) {}

absl::StatusOr<std::unique_ptr<LeaderboardStore>> LeaderboardStore::Create(
    const LeaderboardOptions& options, uint64_t random_seed) {
  if (absl::Status status = CheckBoardOptions(options); !status.ok()) {
    return status;
  }
  auto registry = std::make_unique<LeaderboardRegistry>();
  LeaderboardRegistry* borrowed = registry.get();
  return std::unique_ptr<LeaderboardStore>(new LeaderboardStore(
      options, std::move(registry), borrowed, random_seed));
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
      new LeaderboardStore(options, nullptr, registry, kRandomSeed));
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
    store->scan_order_.emplace(ScanPosition(key), key);
    if (saved.expires_at > 0) store->expiries_[key] = saved.expires_at;
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
  {
    std::shared_lock lock(mutex_);
    const bool expired = ExpiredLocked(key);
    lock.unlock();
    // The expired set goes first: the key starts anew, without expiry.
    if (expired) {
      if (absl::StatusOr<bool> dropped = Delete(key); !dropped.ok()) {
        return dropped.status();
      }
    }
  }
  std::unique_lock lock(mutex_);
  if (auto it = sets_.find(key); it != sets_.end()) return it->second;
  return CreateLocked(key);
}

absl::StatusOr<std::shared_ptr<SortedSet>> LeaderboardStore::CreateLocked(
    absl::string_view key) {
  absl::StatusOr<std::shared_ptr<Leaderboard>> board =
      registry_.GetOrCreate(key, options_);
  if (!board.ok()) return board.status();
  auto set = std::make_shared<SortedSet>(*std::move(board));
  if (journal_ != nullptr) {
    set->members.AttachJournal(journal_, std::string(key));
  }
  scan_order_.emplace(ScanPosition(key), std::string(key));
  sets_.emplace(key, set);
  return set;
}

std::shared_ptr<SortedSet> LeaderboardStore::Find(absl::string_view key) const {
  std::shared_lock lock(mutex_);
  if (ExpiredLocked(key)) return nullptr;
  if (auto it = sets_.find(key); it != sets_.end()) return it->second;
  return nullptr;
}

bool LeaderboardStore::ExpiredLocked(absl::string_view key) const {
  if (expiries_.empty() || clock_ == nullptr) return false;
  auto it = expiries_.find(key);
  return it != expiries_.end() && it->second <= clock_->Now();
}

void LeaderboardStore::UseClock(std::shared_ptr<Clock> clock) {
  std::unique_lock lock(mutex_);
  clock_ = std::move(clock);
}

absl::StatusOr<bool> LeaderboardStore::SetExpiry(absl::string_view key,
                                                 Micros at) {
  std::unique_lock lock(mutex_);
  auto it = sets_.find(key);
  if (it == sets_.end() || ExpiredLocked(key) || !HasMembers(*it->second)) {
    return false;
  }
  if (journal_ != nullptr) {
    absl::StatusOr<uint64_t> position =
        journal_->Append({NamesRecordType::kExpire, std::string(key),
                          static_cast<uint64_t>(at), ""},
                         NamesJournal::IfAppendFails::kCallerChangesNothing);
    if (!position.ok()) return position.status();
    if (absl::Status s = journal_->SyncTo(*position); !s.ok()) return s;
  }
  if (at == 0) {
    expiries_.erase(key);
  } else {
    expiries_[key] = at;
  }
  return true;
}

std::optional<Micros> LeaderboardStore::ExpiryOf(absl::string_view key) const {
  std::shared_lock lock(mutex_);
  auto set = sets_.find(key);
  if (set == sets_.end() || ExpiredLocked(key) || !HasMembers(*set->second)) {
    return std::nullopt;
  }
  auto it = expiries_.find(key);
  return it == expiries_.end() ? 0 : it->second;
}

absl::StatusOr<size_t> LeaderboardStore::DeleteExpired(size_t budget) {
  std::vector<std::string> due;
  {
    std::shared_lock lock(mutex_);
    if (clock_ == nullptr) return 0;
    const Micros now = clock_->Now();
    for (const auto& [key, at] : expiries_) {
      if (due.size() >= budget) break;
      if (at <= now) due.push_back(key);
    }
  }
  size_t deleted = 0;
  for (const std::string& key : due) {
    absl::StatusOr<bool> dropped = Delete(key);
    if (!dropped.ok()) return dropped.status();
    ++deleted;
  }
  return deleted;
}

std::pair<size_t, Micros> LeaderboardStore::ExpiryStats() const {
  std::shared_lock lock(mutex_);
  if (expiries_.empty() || clock_ == nullptr) return {0, 0};
  const Micros now = clock_->Now();
  size_t keys = 0;
  Micros left = 0;
  for (const auto& [key, at] : expiries_) {
    if (at <= now) continue;
    ++keys;
    left += at - now;
  }
  return {keys, keys == 0 ? 0 : left / static_cast<Micros>(keys)};
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
  const bool existed = HasMembers(*set) && !ExpiredLocked(key);
  expiries_.erase(key);
  scan_order_.erase({ScanPosition(key), std::string(key)});
  sets_.erase(it);
  if (journal_ == nullptr) return existed;
  // No record of the old dictionary may follow the drop record.
  set->members.DetachJournal();
  // The drop reaches the journal only once the board's drop is durable:
  // otherwise a crash could bring the board back without its names.
  if (absl::Status s = sync_boards_(); !s.ok()) return s;
  absl::StatusOr<uint64_t> position =
      journal_->Append({NamesRecordType::kDrop, std::string(key), 0, ""});
  if (!position.ok()) return position.status();
  if (absl::Status s = journal_->SyncTo(*position); !s.ok()) return s;
  return existed;
}

absl::StatusOr<bool> LeaderboardStore::Rename(absl::string_view from,
                                              absl::string_view to,
                                              bool only_if_absent) {
  std::unique_lock lock(mutex_);
  auto source = sets_.find(from);
  if (source == sets_.end() || ExpiredLocked(from) ||
      !HasMembers(*source->second)) {
    return absl::NotFoundError("no such key");
  }
  auto target = sets_.find(to);
  const bool to_exists = target != sets_.end() && !ExpiredLocked(to) &&
                         HasMembers(*target->second);
  if (only_if_absent && to_exists) return false;
  if (from == to) return true;
  if (journal_ != nullptr) {
    // The store durable up to here, then the rename synced in the journal,
    // then the store's rename (see names_journal.h).
    if (absl::Status s = sync_boards_(); !s.ok()) return s;
    absl::StatusOr<uint64_t> generation = registry_.Generation(from);
    if (!generation.ok()) return generation.status();
    absl::StatusOr<uint64_t> position =
        journal_->Append({NamesRecordType::kRename, std::string(from),
                          *generation, std::string(to)},
                         NamesJournal::IfAppendFails::kCallerChangesNothing);
    if (!position.ok()) return position.status();
    if (absl::Status s = journal_->SyncAll(); !s.ok()) return s;
  }
  if (absl::Status s = registry_.Rename(from, to); !s.ok()) return s;
  std::shared_ptr<SortedSet> moved = std::move(source->second);
  std::optional<Micros> expiry;
  if (auto it = expiries_.find(from); it != expiries_.end()) {
    expiry = it->second;
    expiries_.erase(it);
  }
  scan_order_.erase({ScanPosition(from), std::string(from)});
  sets_.erase(source);
  expiries_.erase(to);
  auto [slot, inserted] = sets_.try_emplace(to);
  if (inserted) {
    scan_order_.emplace(ScanPosition(to), std::string(to));
  } else if (journal_ != nullptr) {
    // No record of the old dictionary may follow the rename's.
    slot->second->members.DetachJournal();
  }
  slot->second = std::move(moved);
  if (expiry.has_value()) expiries_[to] = *expiry;
  if (journal_ != nullptr) {
    slot->second->members.AttachJournal(journal_, std::string(to));
  }
  return true;
}

absl::StatusOr<size_t> LeaderboardStore::DeleteAll() {
  std::unique_lock lock(mutex_);
  size_t existed = 0;
  std::vector<std::pair<std::string, std::shared_ptr<SortedSet>>> dropped;
  // Key by key, as Delete: a key the registry refuses to drop stays, and
  // the keys before it are gone.
  absl::Status refused;
  for (auto it = sets_.begin(); it != sets_.end();) {
    if (absl::Status s = registry_.Drop(it->first);
        !s.ok() && !absl::IsNotFound(s)) {
      refused = s;
      ++it;
      continue;
    }
    if (HasMembers(*it->second) && !ExpiredLocked(it->first)) ++existed;
    expiries_.erase(it->first);
    scan_order_.erase({ScanPosition(it->first), it->first});
    dropped.emplace_back(it->first, std::move(it->second));
    sets_.erase(it++);
  }
  if (journal_ != nullptr && !dropped.empty()) {
    for (auto& [key, set] : dropped) set->members.DetachJournal();
    // As in Delete: the drops reach the journal once the boards' drops are
    // durable, and are synced once for all.
    if (absl::Status s = sync_boards_(); !s.ok()) return s;
    uint64_t last = 0;
    for (const auto& [key, set] : dropped) {
      absl::StatusOr<uint64_t> position =
          journal_->Append({NamesRecordType::kDrop, key, 0, ""});
      if (!position.ok()) return position.status();
      last = *position;
    }
    if (absl::Status s = journal_->SyncTo(last); !s.ok()) return s;
  }
  if (!refused.ok()) return refused;
  return existed;
}

bool LeaderboardStore::Exists(absl::string_view key) const {
  std::shared_ptr<SortedSet> set = Find(key);
  return set != nullptr && HasMembers(*set);
}

std::vector<std::string> LeaderboardStore::KeyNames() const {
  std::vector<std::pair<std::string, std::shared_ptr<SortedSet>>> sets;
  {
    std::shared_lock lock(mutex_);
    sets.reserve(sets_.size());
    for (const auto& [key, set] : sets_) {
      if (!ExpiredLocked(key)) sets.emplace_back(key, set);
    }
  }
  std::vector<std::string> names;
  names.reserve(sets.size());
  for (auto& [key, set] : sets) {
    if (HasMembers(*set)) names.push_back(std::move(key));
  }
  return names;
}

uint64_t LeaderboardStore::Scan(
    uint64_t cursor, size_t count,
    absl::FunctionRef<void(const std::string&)> visit) const {
  std::vector<std::pair<std::string, std::shared_ptr<SortedSet>>> batch;
  uint64_t next = 0;
  {
    std::shared_lock lock(mutex_);
    const uint64_t start = cursor == 0 ? 0 : cursor - 1;
    auto it = scan_order_.lower_bound({start, std::string()});
    // Keys of one position go out together, so a cursor never splits them.
    uint64_t last_position = 0;
    while (it != scan_order_.end() &&
           (batch.size() < std::max<size_t>(count, 1) ||
            it->first == last_position)) {
      auto set = sets_.find(it->second);
      // An expired key takes its place in the count, but is not visited.
      batch.emplace_back(it->second,
                         ExpiredLocked(it->second) ? nullptr : set->second);
      last_position = it->first;
      ++it;
    }
    if (it != scan_order_.end()) next = it->first + 1;
  }
  // Outside the lock: the sizes take the boards' locks.
  for (const auto& [key, set] : batch) {
    if (set != nullptr && HasMembers(*set)) visit(key);
  }
  return next;
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
      if (auto at = expiries_.find(key); at != expiries_.end()) {
        copy.expires_at = at->second;
      }
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

absl::StatusOr<size_t> LeaderboardStore::Replace(
    absl::string_view key,
    std::vector<std::pair<std::string, int64_t>> members) {
  std::unique_lock lock(mutex_);
  // The destination is a new key: without the old one's expiry, as in
  // Redis.
  expiries_.erase(key);
  if (auto it = sets_.find(key); it != sets_.end()) {
    if (absl::Status s = registry_.Drop(key); !s.ok() && !absl::IsNotFound(s)) {
      return s;
    }
    std::shared_ptr<SortedSet> old = std::move(it->second);
    scan_order_.erase({ScanPosition(key), std::string(key)});
    sets_.erase(it);
    if (journal_ != nullptr) {
      // As in Delete: the drop record follows the board's durable drop,
      // and precedes every record of the new dictionary.
      old->members.DetachJournal();
      if (absl::Status s = sync_boards_(); !s.ok()) return s;
      absl::StatusOr<uint64_t> position =
          journal_->Append({NamesRecordType::kDrop, std::string(key), 0, ""});
      if (!position.ok()) return position.status();
      if (absl::Status s = journal_->SyncTo(*position); !s.ok()) return s;
    }
  }
  if (members.empty()) return 0;
  absl::StatusOr<std::shared_ptr<SortedSet>> created = CreateLocked(key);
  if (!created.ok()) return created.status();
  std::shared_ptr<SortedSet> set = *std::move(created);
  std::vector<ScoreWrite> writes;
  writes.reserve(members.size());
  absl::Status interned;
  for (const auto& [name, score] : members) {
    absl::StatusOr<MemberId> id = set->members.InternUnsynced(name);
    if (!id.ok()) {
      interned = id.status();
      break;
    }
    ScoreWrite& write = writes.emplace_back();
    write.member = *id;
    write.value = score;
  }
  // Interned without a sync each: one sync of the names' records before
  // the board write that uses them (with fsync always, one fdatasync
  // instead of one per member). If it fails nothing is written.
  absl::Status written = set->members.SyncJournal();
  std::vector<absl::StatusOr<WriteResult>> results;
  if (written.ok()) results = set->board->WriteMany(writes);
  if (written.ok()) written = interned;
  for (size_t i = 0; i < writes.size(); ++i) {
    const bool on_board =
        i < results.size() && results[i].ok() && results[i]->score.has_value();
    if (i < results.size() && !results[i].ok() && written.ok()) {
      written = results[i].status();
    }
    set->members.Unpin(writes[i].member, /*maybe_absent=*/!on_board);
  }
  if (!written.ok()) return written;
  return writes.size();
}

uint64_t LeaderboardStore::Random(uint64_t bound) {
  internal::WriterLock lock(&random_mutex_);
  return std::uniform_int_distribution<uint64_t>(0, bound - 1)(random_);
}

size_t LeaderboardStore::size() const {
  std::shared_lock lock(mutex_);
  return sets_.size();
}

}  // namespace feedcore::server
