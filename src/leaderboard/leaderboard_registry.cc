// LeaderboardRegistry: a map name -> board under one reader/writer lock.
//
// Lookups share the lock; creating, dropping and renaming take it
// exclusively, for the time of one hash map operation. A board is built
// before the lock is taken (if another thread creates the same name
// meanwhile, the spare one is discarded after the lock is released), and
// destroyed after it is released. Only a recorded Rename takes a board's
// partition locks under the registry's lock (the registry's lock comes
// first; nothing takes it holding a partition lock).
//
// With a change log, creations, drops and renames are recorded under the
// registry's lock (the log's mutex is a leaf), which orders them with the
// listing a snapshot takes under the same lock.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/mutex.h"
#include "contract/leaderboard_arguments.h"
#include "feedcore/change_stream.h"
#include "feedcore/leaderboard.h"
#include "leaderboard/leaderboard_impl.h"
#include "leaderboard/leaderboard_registry_access.h"
#include "stream/change_log.h"

namespace feedcore {
namespace {

absl::Status NoSuchBoard(absl::string_view name) {
  return absl::NotFoundError(
      absl::StrCat("no leaderboard named \"", name, "\" in the registry"));
}

}  // namespace

struct LeaderboardRegistry::State {
  explicit State(std::shared_ptr<ChangeStream> stream)
      : stream(std::move(stream)),
        log(internal::ChangeStreamAccess::Log(this->stream.get())) {}

  struct Entry {
    std::shared_ptr<internal::LeaderboardImpl> board;
    uint64_t generation = 0;
  };

  // Records a creation or a drop. REQUIRES: `mu` held exclusively, log.
  void RecordLocked(ChangeKind kind, const std::string& name,
                    const Entry& entry) const {
    ChangeRecord record;
    record.kind = kind;
    record.board = name;
    record.board_generation = entry.generation;
    record.board_options = entry.board->options();
    log->Append(std::move(record));
  }

  // Moves the board at `it` to `to` (dropping and returning the board named
  // `to`, if any), recording both. REQUIRES: `mu` held exclusively, `it` a
  // board of `boards`, not named `to`.
  std::shared_ptr<internal::LeaderboardImpl> RenameLocked(
      absl::flat_hash_map<std::string, Entry>::iterator it, std::string to)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::shared_ptr<internal::LeaderboardImpl> dropped;
    Entry moved = std::move(it->second);
    boards.erase(it);
    auto [target, inserted] = boards.try_emplace(to);
    if (!inserted) {
      if (log != nullptr)
        RecordLocked(ChangeKind::kBoardDrop, to, target->second);
      dropped = std::move(target->second.board);
    }
    target->second = std::move(moved);
    if (log != nullptr) target->second.board->RecordRename(std::move(to));
    return dropped;
  }

  const std::shared_ptr<ChangeStream> stream;
  internal::ChangeLog* const log;  // null: nothing recorded
  mutable internal::SharedMutex mu;
  absl::flat_hash_map<std::string, Entry> boards ABSL_GUARDED_BY(mu);
  uint64_t next_generation ABSL_GUARDED_BY(mu) = 1;
};

LeaderboardRegistry::LeaderboardRegistry()
    : state_(std::make_unique<State>(nullptr)) {}

LeaderboardRegistry::LeaderboardRegistry(
    std::shared_ptr<ChangeStream> change_stream)
    : state_(std::make_unique<State>(std::move(change_stream))) {}

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
          internal::DescribeLeaderboardOptions(board->options()), ", not the ",
          internal::DescribeLeaderboardOptions(options),
          " asked for; use the same options, or Drop it first"));
    }
    return board;
  };
  {
    internal::ReaderLock lock(&state_->mu);
    auto it = state_->boards.find(name);
    if (it != state_->boards.end()) return check(it->second.board);
  }
  internal::WriteCall call(state_->log);
  if (!call.admitted().ok()) return call.admitted();
  auto board = std::make_shared<internal::LeaderboardImpl>(options);
  std::shared_ptr<Leaderboard> existing;
  {
    internal::WriterLock lock(&state_->mu);
    auto [it, inserted] = state_->boards.try_emplace(name);
    if (!inserted) {
      existing = it->second.board;
    } else {
      it->second.board = board;
      it->second.generation = state_->next_generation++;
      if (state_->log != nullptr) {
        board->StartRecording(state_->log, std::string(name),
                              it->second.generation);
        state_->RecordLocked(ChangeKind::kBoardCreate, it->first, it->second);
      }
    }
  }
  // Lost a race with another creator: `board` is discarded here, outside
  // the lock.
  if (existing != nullptr) return check(std::move(existing));
  if (absl::Status s = call.Finish(true); !s.ok()) return s;
  return board;
}

absl::StatusOr<std::shared_ptr<Leaderboard>> LeaderboardRegistry::Get(
    absl::string_view name) const {
  internal::ReaderLock lock(&state_->mu);
  auto it = state_->boards.find(name);
  if (it == state_->boards.end()) return NoSuchBoard(name);
  return it->second.board;
}

absl::Status LeaderboardRegistry::Drop(absl::string_view name) {
  internal::WriteCall call(state_->log);
  if (!call.admitted().ok()) return call.admitted();
  std::shared_ptr<internal::LeaderboardImpl> dropped;  // freed after the lock
  {
    internal::WriterLock lock(&state_->mu);
    auto it = state_->boards.find(name);
    if (it == state_->boards.end()) return NoSuchBoard(name);
    if (state_->log != nullptr) {
      state_->RecordLocked(ChangeKind::kBoardDrop, it->first, it->second);
    }
    dropped = std::move(it->second.board);
    state_->boards.erase(it);
  }
  return call.Finish(true);
}

absl::StatusOr<uint64_t> LeaderboardRegistry::Generation(
    absl::string_view name) const {
  internal::ReaderLock lock(&state_->mu);
  auto it = state_->boards.find(name);
  if (it == state_->boards.end()) return NoSuchBoard(name);
  return it->second.generation;
}

absl::Status LeaderboardRegistry::Rename(absl::string_view from,
                                         absl::string_view to) {
  if (absl::Status s = internal::ValidateLeaderboardName(to); !s.ok()) {
    return s;
  }
  internal::WriteCall call(state_->log);
  if (!call.admitted().ok()) return call.admitted();
  std::shared_ptr<internal::LeaderboardImpl> dropped;  // freed after the lock
  {
    internal::WriterLock lock(&state_->mu);
    auto it = state_->boards.find(from);
    if (it == state_->boards.end()) return NoSuchBoard(from);
    if (from != to) dropped = state_->RenameLocked(it, std::string(to));
  }
  return call.Finish(true);
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

namespace feedcore::internal {

ChangeLog* RegistryAccess::log(const LeaderboardRegistry& registry) {
  return registry.state_->log;
}

uint64_t RegistryAccess::List(const LeaderboardRegistry& registry,
                              std::vector<BoardRef>* boards) {
  const auto& state = *registry.state_;
  ReaderLock lock(&state.mu);
  const uint64_t cut = state.log != nullptr ? state.log->NextSequence() : 0;
  boards->clear();
  boards->reserve(state.boards.size());
  for (const auto& [name, entry] : state.boards) {
    boards->push_back({name, entry.generation, entry.board});
  }
  std::sort(
      boards->begin(), boards->end(),
      [](const BoardRef& a, const BoardRef& b) { return a.name < b.name; });
  return cut;
}

std::shared_ptr<LeaderboardImpl> RegistryAccess::Find(
    const LeaderboardRegistry& registry, const std::string& name,
    uint64_t generation) {
  const auto& state = *registry.state_;
  ReaderLock lock(&state.mu);
  auto it = state.boards.find(name);
  if (it == state.boards.end() || it->second.generation != generation) {
    return nullptr;
  }
  return it->second.board;
}

std::shared_ptr<LeaderboardImpl> RegistryAccess::Install(
    LeaderboardRegistry& registry, const std::string& name,
    const LeaderboardOptions& options, uint64_t generation, bool record) {
  auto& state = *registry.state_;
  auto board = std::make_shared<LeaderboardImpl>(options);
  std::shared_ptr<LeaderboardImpl> replaced;  // freed after the lock
  WriterLock lock(&state.mu);
  LeaderboardRegistry::State::Entry& entry = state.boards[name];
  replaced = std::move(entry.board);
  entry.board = board;
  entry.generation = generation;
  state.next_generation = std::max(state.next_generation, generation + 1);
  if (state.log != nullptr) {
    board->StartRecording(state.log, name, generation);
    if (record) state.RecordLocked(ChangeKind::kBoardCreate, name, entry);
  }
  return board;
}

void RegistryAccess::Drop(LeaderboardRegistry& registry,
                          const std::string& name, uint64_t generation) {
  auto& state = *registry.state_;
  std::shared_ptr<LeaderboardImpl> dropped;  // freed after the lock
  WriterLock lock(&state.mu);
  auto it = state.boards.find(name);
  if (it == state.boards.end() || it->second.generation != generation) return;
  if (state.log != nullptr) {
    state.RecordLocked(ChangeKind::kBoardDrop, name, it->second);
  }
  dropped = std::move(it->second.board);
  state.boards.erase(it);
}

void RegistryAccess::Rename(LeaderboardRegistry& registry,
                            const std::string& from, uint64_t generation,
                            const std::string& to) {
  auto& state = *registry.state_;
  std::shared_ptr<LeaderboardImpl> dropped;  // freed after the lock
  WriterLock lock(&state.mu);
  auto it = state.boards.find(from);
  if (it == state.boards.end() || it->second.generation != generation ||
      from == to) {
    return;
  }
  dropped = state.RenameLocked(it, to);
}

void RegistryAccess::ReserveGenerations(LeaderboardRegistry& registry,
                                        uint64_t next) {
  auto& state = *registry.state_;
  WriterLock lock(&state.mu);
  state.next_generation = std::max(state.next_generation, next);
}

uint64_t RegistryAccess::NextGeneration(const LeaderboardRegistry& registry) {
  const auto& state = *registry.state_;
  ReaderLock lock(&state.mu);
  return state.next_generation;
}

}  // namespace feedcore::internal
