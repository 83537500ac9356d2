// LeaderboardRegistry: a map name -> board under one reader/writer lock.
//
// Lookups share the lock; creating and dropping take it exclusively, for
// the time of one hash map operation. A board is built before the lock is
// taken (if another thread creates the same name meanwhile, the spare one
// is discarded after the lock is released), and destroyed after it is
// released, so the registry's lock is never held while any board's
// partition lock is taken.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "feedcore/leaderboard.h"
#include "leaderboard_options.h"
#include "mutex.h"

namespace feedcore {
namespace {

std::string Describe(const LeaderboardOptions& options) {
  return absl::StrCat("{partitions=", options.partitions, ", tie_break=",
                      options.tie_break == TieBreak::kEarlierUpdateFirst
                          ? "kEarlierUpdateFirst"
                          : "kLowerMemberFirst",
                      ", max_page_size=", options.max_page_size, "}");
}

absl::Status NoSuchBoard(absl::string_view name) {
  return absl::NotFoundError(
      absl::StrCat("no leaderboard named \"", name, "\" in the registry"));
}

}  // namespace

struct LeaderboardRegistry::State {
  mutable internal::SharedMutex mu;
  absl::flat_hash_map<std::string, std::shared_ptr<Leaderboard>> boards
      ABSL_GUARDED_BY(mu);
};

LeaderboardRegistry::LeaderboardRegistry()
    : state_(std::make_unique<State>()) {}

LeaderboardRegistry::~LeaderboardRegistry() = default;

absl::StatusOr<std::shared_ptr<Leaderboard>> LeaderboardRegistry::GetOrCreate(
    absl::string_view name, const LeaderboardOptions& options) {
  if (absl::Status s = internal::ValidateLeaderboardName(name); !s.ok()) {
    return s;
  }
  if (absl::Status s = internal::ValidateLeaderboardOptions(options); !s.ok()) {
    return s;
  }
  const auto check = [&](std::shared_ptr<Leaderboard> board)
      -> absl::StatusOr<std::shared_ptr<Leaderboard>> {
    if (board->options() != options) {
      return absl::AlreadyExistsError(absl::StrCat(
          "leaderboard \"", name, "\" exists with options ",
          Describe(board->options()), ", not the ", Describe(options),
          " asked for; use the same options, or Drop it first"));
    }
    return board;
  };
  {
    internal::ReaderLock lock(&state_->mu);
    auto it = state_->boards.find(name);
    if (it != state_->boards.end()) return check(it->second);
  }
  absl::StatusOr<std::unique_ptr<Leaderboard>> created =
      Leaderboard::Create(options);
  if (!created.ok()) return created.status();
  std::shared_ptr<Leaderboard> board = *std::move(created);
  std::shared_ptr<Leaderboard> existing;
  {
    internal::WriterLock lock(&state_->mu);
    auto [it, inserted] = state_->boards.try_emplace(name, board);
    if (!inserted) existing = it->second;
  }
  // Lost a race with another creator: `board` is discarded here, outside
  // the lock.
  if (existing != nullptr) return check(std::move(existing));
  return board;
}

absl::StatusOr<std::shared_ptr<Leaderboard>> LeaderboardRegistry::Get(
    absl::string_view name) const {
  internal::ReaderLock lock(&state_->mu);
  auto it = state_->boards.find(name);
  if (it == state_->boards.end()) return NoSuchBoard(name);
  return it->second;
}

absl::Status LeaderboardRegistry::Drop(absl::string_view name) {
  std::shared_ptr<Leaderboard> dropped;  // released after the lock
  {
    internal::WriterLock lock(&state_->mu);
    auto it = state_->boards.find(name);
    if (it == state_->boards.end()) return NoSuchBoard(name);
    dropped = std::move(it->second);
    state_->boards.erase(it);
  }
  return absl::OkStatus();
}

std::vector<std::string> LeaderboardRegistry::Names() const {
  std::vector<std::string> names;
  {
    internal::ReaderLock lock(&state_->mu);
    names.reserve(state_->boards.size());
    for (const auto& [name, board] : state_->boards) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

size_t LeaderboardRegistry::size() const {
  internal::ReaderLock lock(&state_->mu);
  return state_->boards.size();
}

}  // namespace feedcore
