#include "leaderboard_store.h"

#include <utility>

#include "absl/hash/hash.h"
#include "absl/status/status.h"

namespace feedcore::server {

MemberId MemberDictionary::Intern(absl::string_view name) {
  {
    std::shared_lock lock(mutex_);
    if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  }
  std::unique_lock lock(mutex_);
  auto [it, inserted] = ids_.try_emplace(name, names_.size() + 1);
  if (inserted) names_.emplace_back(name);
  return it->second;
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

std::mutex& SortedSet::LockFor(absl::string_view member_name) {
  return member_locks[absl::HashOf(member_name) % kMemberLocks];
}

absl::StatusOr<std::unique_ptr<LeaderboardStore>> LeaderboardStore::Create(
    const LeaderboardOptions& options) {
  // Creating a throwaway board is the library's own check of the options.
  if (auto probe = Leaderboard::Create(options); !probe.ok()) {
    return probe.status();
  }
  return std::unique_ptr<LeaderboardStore>(new LeaderboardStore(options));
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
  sets_.emplace(key, set);
  return set;
}

std::shared_ptr<SortedSet> LeaderboardStore::Find(absl::string_view key) const {
  std::shared_lock lock(mutex_);
  if (auto it = sets_.find(key); it != sets_.end()) return it->second;
  return nullptr;
}

bool LeaderboardStore::Delete(absl::string_view key) {
  std::unique_lock lock(mutex_);
  auto it = sets_.find(key);
  if (it == sets_.end()) return false;
  sets_.erase(it);
  // The registry and sets_ change together under mutex_, so the registry
  // holds the key exactly when sets_ does.
  registry_.Drop(key).IgnoreError();
  return true;
}

size_t LeaderboardStore::size() const {
  std::shared_lock lock(mutex_);
  return sets_.size();
}

}  // namespace feedcore::server
