// SeasonalLeaderboard over the public Leaderboard and LeaderboardRegistry
// API (or a SeasonBoardOpener), so that it works on every backend and
// inherits whatever the registry records (DurableStore::boards()).
//
// Two locks. `mu` serializes rollovers and guards the kept and retired
// periods. `current_mu` guards only the current period and its board: the
// fast path of every call is an atomic load of the next reset time, and
// then, for Current(), a reader lock of `current_mu` held for one
// shared_ptr copy (std::atomic<std::shared_ptr> would spare that lock, but
// libstdc++ 12's is reported as racing by ThreadSanitizer). `current_mu` is
// a leaf: it is taken under `mu`, never the other way round.
#include "feedcore/seasonal_leaderboard.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/mutex.h"
#include "contract/leaderboard_arguments.h"
#include "leaderboard/seasons/season_schedule.h"

namespace feedcore {
namespace {

// The longest "@<period id>" suffix: "@-9223372036854775808".
constexpr size_t kMaxPeriodSuffixLength = 21;

// Where the periods' boards live.
class PeriodBoards {
 public:
  virtual ~PeriodBoards() = default;
  // The board named `name`, created with `options` if there is none.
  virtual absl::StatusOr<std::shared_ptr<Leaderboard>> Open(
      absl::string_view name, const LeaderboardOptions& options) = 0;
  // The board named `name`, or null if there is none (or no way to look).
  virtual std::shared_ptr<Leaderboard> Find(absl::string_view name) = 0;
  // Takes `name` off the boards that Find and Open see.
  virtual absl::Status Drop(absl::string_view name) = 0;
  // Every board name that starts with `prefix`.
  virtual std::vector<std::string> NamesStartingWith(
      absl::string_view prefix) = 0;
};

class RegistryBoards final : public PeriodBoards {
 public:
  explicit RegistryBoards(std::shared_ptr<LeaderboardRegistry> registry)
      : registry_(std::move(registry)) {}

  absl::StatusOr<std::shared_ptr<Leaderboard>> Open(
      absl::string_view name, const LeaderboardOptions& options) override {
    return registry_->GetOrCreate(name, options);
  }
  std::shared_ptr<Leaderboard> Find(absl::string_view name) override {
    absl::StatusOr<std::shared_ptr<Leaderboard>> board = registry_->Get(name);
    return board.ok() ? *std::move(board) : nullptr;
  }
  absl::Status Drop(absl::string_view name) override {
    absl::Status status = registry_->Drop(name);
    // Another seasonal board over the same registry dropped it first.
    return absl::IsNotFound(status) ? absl::OkStatus() : status;
  }
  std::vector<std::string> NamesStartingWith(
      absl::string_view prefix) override {
    std::vector<std::string> names = registry_->Names();
    std::erase_if(names, [&](const std::string& name) {
      return !absl::StartsWith(name, prefix);
    });
    return names;
  }

 private:
  const std::shared_ptr<LeaderboardRegistry> registry_;
};

class OpenedBoards final : public PeriodBoards {
 public:
  explicit OpenedBoards(SeasonBoardOpener open) : open_(std::move(open)) {}

  absl::StatusOr<std::shared_ptr<Leaderboard>> Open(
      absl::string_view name, const LeaderboardOptions& options) override {
    absl::StatusOr<std::shared_ptr<Leaderboard>> board = open_(name, options);
    if (board.ok() && *board == nullptr) {
      return absl::InternalError(absl::StrCat(
          "the SeasonBoardOpener returned no board for \"", name, "\""));
    }
    return board;
  }
  std::shared_ptr<Leaderboard> Find(absl::string_view) override {
    return nullptr;
  }
  absl::Status Drop(absl::string_view) override { return absl::OkStatus(); }
  std::vector<std::string> NamesStartingWith(absl::string_view) override {
    return {};
  }

 private:
  const SeasonBoardOpener open_;
};

absl::Status ValidateSeasonOptions(absl::string_view name,
                                   const SeasonOptions& options) {
  if (name.empty()) {
    return absl::InvalidArgumentError(
        "the seasonal leaderboard's name is empty");
  }
  if (name.size() > kMaxLeaderboardNameLength - kMaxPeriodSuffixLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the seasonal leaderboard's name is ", name.size(),
        " bytes; it must be at most ",
        kMaxLeaderboardNameLength - kMaxPeriodSuffixLength,
        " so that \"<name>@<period id>\" fits in kMaxLeaderboardNameLength (",
        kMaxLeaderboardNameLength, ")"));
  }
  if (absl::Status s = internal::ValidateSeasonSchedule(options.schedule);
      !s.ok()) {
    return s;
  }
  if (options.keep_periods > kMaxKeptPeriods) {
    return absl::InvalidArgumentError(
        absl::StrCat("SeasonOptions.keep_periods is ", options.keep_periods,
                     "; it must be 0..", kMaxKeptPeriods));
  }
  if (absl::Status s = internal::ValidateLeaderboardOptions(options.board);
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("SeasonOptions.board: ", s.message()));
  }
  if (options.final_top_k > options.board.max_page_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("SeasonOptions.final_top_k is ", options.final_top_k,
                     "; it must be 0..SeasonOptions.board.max_page_size (",
                     options.board.max_page_size, ")"));
  }
  return absl::OkStatus();
}

absl::Status OtherOptions(absl::string_view board_name,
                          const LeaderboardOptions& found,
                          const LeaderboardOptions& wanted) {
  return absl::AlreadyExistsError(absl::StrCat(
      "leaderboard \"", board_name, "\" exists with options ",
      internal::DescribeLeaderboardOptions(found), ", not the ",
      internal::DescribeLeaderboardOptions(wanted),
      " of SeasonOptions.board; use the same options, or Drop it first"));
}

// `id - n`, or the lowest id when that would be lower.
PeriodId SaturatingMinus(PeriodId id, size_t n) {
  const PeriodId lowest = std::numeric_limits<PeriodId>::min();
  return id < lowest + static_cast<PeriodId>(n) ? lowest
                                                : id - static_cast<PeriodId>(n);
}

}  // namespace

struct SeasonalLeaderboard::State {
  struct KeptPeriod {
    PeriodId id = 0;
    std::shared_ptr<Leaderboard> board;
  };

  State(std::string name, SeasonOptions options,
        std::unique_ptr<PeriodBoards> boards,
        std::shared_ptr<const Clock> clock)
      : name(std::move(name)),
        options(std::move(options)),
        boards(std::move(boards)),
        clock(std::move(clock)) {}

  // Validates, finds the kept periods' boards, opens the current one and
  // drops those older than the kept ones (see Create).
  static absl::StatusOr<std::unique_ptr<State>> Make(
      absl::string_view name, SeasonOptions options,
      std::unique_ptr<PeriodBoards> boards, std::shared_ptr<const Clock> clock);

  std::string BoardName(PeriodId id) const {
    return absl::StrCat(name, "@", id);
  }

  // Rolls over if the clock has reached the next reset; see the header's
  // "Rollover". Returns whether this call did.
  absl::StatusOr<bool> MaybeRollOver() ABSL_LOCKS_EXCLUDED(mu, current_mu);

  // Steps 1 to 3 of a rollover to the period containing `now`. Sets
  // `*ended` to what on_rollover is to be told.
  absl::Status RollOverLocked(Micros now, std::optional<EndedPeriod>* ended)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) ABSL_LOCKS_EXCLUDED(current_mu);

  // Drops the boards of the kept periods older than `oldest_kept`, moving
  // their handles to `retired`, and retries the drops that failed before.
  void DropOlderThanLocked(PeriodId oldest_kept)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  SeasonPeriod Current() const ABSL_LOCKS_EXCLUDED(current_mu) {
    internal::ReaderLock lock(&current_mu);
    return current_period;
  }

  const std::string name;
  const SeasonOptions options;
  const std::unique_ptr<PeriodBoards> boards;
  const std::shared_ptr<const Clock> clock;

  // current_period.next_reset, read without a lock by every call.
  std::atomic<Micros> next_reset{0};

  mutable internal::SharedMutex mu;
  mutable internal::SharedMutex current_mu ABSL_ACQUIRED_AFTER(mu);
  SeasonPeriod current_period ABSL_GUARDED_BY(current_mu);
  std::shared_ptr<Leaderboard> current_board ABSL_GUARDED_BY(current_mu);

  // Ended periods still readable, ascending by id.
  std::vector<KeptPeriod> kept ABSL_GUARDED_BY(mu);
  // Boards no longer kept, freed by ReleaseRetired.
  std::vector<std::shared_ptr<Leaderboard>> retired ABSL_GUARDED_BY(mu);
  // Names whose Drop failed, tried again at the next rollover.
  std::vector<std::string> undropped ABSL_GUARDED_BY(mu);
};

absl::StatusOr<bool> SeasonalLeaderboard::State::MaybeRollOver() {
  const Micros now = clock->Now();
  if (now < next_reset.load(std::memory_order_acquire)) return false;
  std::optional<EndedPeriod> ended;
  {
    internal::WriterLock lock(&mu);
    // Another thread may have rolled over while this one waited.
    if (now < next_reset.load(std::memory_order_relaxed)) return false;
    if (absl::Status s = RollOverLocked(now, &ended); !s.ok()) return s;
  }
  if (ended.has_value()) options.on_rollover(*ended);
  return true;
}

absl::Status SeasonalLeaderboard::State::RollOverLocked(
    Micros now, std::optional<EndedPeriod>* ended) {
  absl::StatusOr<SeasonPeriod> target = PeriodAt(options.schedule, now);
  if (!target.ok()) return target.status();
  absl::StatusOr<std::shared_ptr<Leaderboard>> board =
      boards->Open(BoardName(target->id), options.board);
  if (!board.ok()) return board.status();

  // 1. The new board becomes current.
  SeasonPeriod ended_period;
  std::shared_ptr<Leaderboard> ended_board;
  {
    internal::WriterLock lock(&current_mu);
    ended_period = current_period;
    ended_board = std::move(current_board);
    current_period = *target;
    current_board = *std::move(board);
  }
  next_reset.store(target->next_reset, std::memory_order_release);

  // 2. The ended period's final top, read before anything can release it.
  if (options.on_rollover) {
    EndedPeriod& report = ended->emplace();
    report.period = ended_period;
    if (options.final_top_k > 0) {
      absl::StatusOr<std::vector<LeaderboardEntry>> top =
          ended_board->TopK(options.final_top_k);
      if (top.ok()) {
        report.top = *std::move(top);
      } else {
        report.top_status = top.status();
      }
    }
  }

  // 3. Keep what the window holds: the ended period, and the periods
  // skipped over whose boards another program made, then drop the rest.
  const PeriodId oldest_kept =
      SaturatingMinus(target->id, options.keep_periods);
  kept.push_back({ended_period.id, std::move(ended_board)});
  for (PeriodId id = std::max(ended_period.id + 1, oldest_kept);
       id < target->id; ++id) {
    std::shared_ptr<Leaderboard> skipped = boards->Find(BoardName(id));
    if (skipped != nullptr && skipped->options() == options.board) {
      kept.push_back({id, std::move(skipped)});
    }
  }
  DropOlderThanLocked(oldest_kept);
  return absl::OkStatus();
}

void SeasonalLeaderboard::State::DropOlderThanLocked(PeriodId oldest_kept) {
  std::vector<std::string> failed;
  for (std::string& name : undropped) {
    if (!boards->Drop(name).ok()) failed.push_back(std::move(name));
  }
  const auto first_kept = std::find_if(
      kept.begin(), kept.end(),
      [&](const KeptPeriod& period) { return period.id >= oldest_kept; });
  for (auto it = kept.begin(); it != first_kept; ++it) {
    std::string name = BoardName(it->id);
    if (!boards->Drop(name).ok()) failed.push_back(std::move(name));
    retired.push_back(std::move(it->board));
  }
  kept.erase(kept.begin(), first_kept);
  undropped = std::move(failed);
}

SeasonalLeaderboard::SeasonalLeaderboard(std::unique_ptr<State> state)
    : state_(std::move(state)) {}

SeasonalLeaderboard::~SeasonalLeaderboard() = default;

absl::StatusOr<std::unique_ptr<SeasonalLeaderboard>>
SeasonalLeaderboard::Create(absl::string_view name, SeasonOptions options,
                            std::shared_ptr<LeaderboardRegistry> registry,
                            std::shared_ptr<const Clock> clock) {
  if (registry == nullptr) {
    return absl::InvalidArgumentError(
        "the seasonal leaderboard's registry is null");
  }
  absl::StatusOr<std::unique_ptr<State>> state = State::Make(
      name, std::move(options),
      std::make_unique<RegistryBoards>(std::move(registry)), std::move(clock));
  if (!state.ok()) return state.status();
  return std::unique_ptr<SeasonalLeaderboard>(
      new SeasonalLeaderboard(*std::move(state)));
}

absl::StatusOr<std::unique_ptr<SeasonalLeaderboard>>
SeasonalLeaderboard::Create(absl::string_view name, SeasonOptions options,
                            SeasonBoardOpener open_board,
                            std::shared_ptr<const Clock> clock) {
  if (!open_board) {
    return absl::InvalidArgumentError(
        "the seasonal leaderboard's SeasonBoardOpener is empty");
  }
  absl::StatusOr<std::unique_ptr<State>> state = State::Make(
      name, std::move(options),
      std::make_unique<OpenedBoards>(std::move(open_board)), std::move(clock));
  if (!state.ok()) return state.status();
  return std::unique_ptr<SeasonalLeaderboard>(
      new SeasonalLeaderboard(*std::move(state)));
}

absl::StatusOr<std::unique_ptr<SeasonalLeaderboard::State>>
SeasonalLeaderboard::State::Make(absl::string_view name, SeasonOptions options,
                                 std::unique_ptr<PeriodBoards> boards,
                                 std::shared_ptr<const Clock> clock) {
  if (clock == nullptr) {
    return absl::InvalidArgumentError(
        "the seasonal leaderboard's clock is null");
  }
  if (absl::Status s = ValidateSeasonOptions(name, options); !s.ok()) return s;
  absl::StatusOr<SeasonPeriod> period =
      PeriodAt(options.schedule, clock->Now());
  if (!period.ok()) return period.status();

  auto state = std::make_unique<State>(std::string(name), std::move(options),
                                       std::move(boards), std::move(clock));
  const SeasonOptions& opts = state->options;
  const PeriodId oldest_kept = SaturatingMinus(period->id, opts.keep_periods);
  std::vector<State::KeptPeriod> kept;
  for (PeriodId id = oldest_kept; id < period->id; ++id) {
    const std::string board_name = state->BoardName(id);
    std::shared_ptr<Leaderboard> board = state->boards->Find(board_name);
    if (board == nullptr) continue;
    if (board->options() != opts.board) {
      return OtherOptions(board_name, board->options(), opts.board);
    }
    kept.push_back({id, std::move(board)});
  }
  absl::StatusOr<std::shared_ptr<Leaderboard>> current =
      state->boards->Open(state->BoardName(period->id), opts.board);
  if (!current.ok()) return current.status();

  {
    internal::WriterLock lock(&state->mu);
    state->kept = std::move(kept);
    // The boards of periods before the kept ones, left by a program that
    // stopped for longer than the kept periods span.
    const std::string prefix = absl::StrCat(state->name, "@");
    for (std::string& board_name : state->boards->NamesStartingWith(prefix)) {
      PeriodId id = 0;
      const absl::string_view suffix =
          absl::string_view(board_name).substr(prefix.size());
      if (absl::SimpleAtoi(suffix, &id) && absl::StrCat(id) == suffix &&
          id < oldest_kept) {
        state->undropped.push_back(std::move(board_name));
      }
    }
    state->DropOlderThanLocked(oldest_kept);
  }
  {
    internal::WriterLock lock(&state->current_mu);
    state->current_period = *period;
    state->current_board = *std::move(current);
  }
  state->next_reset.store(period->next_reset, std::memory_order_release);
  return state;
}

absl::StatusOr<std::shared_ptr<Leaderboard>> SeasonalLeaderboard::Current() {
  if (absl::StatusOr<bool> rolled = state_->MaybeRollOver(); !rolled.ok()) {
    return rolled.status();
  }
  internal::ReaderLock lock(&state_->current_mu);
  return state_->current_board;
}

SeasonPeriod SeasonalLeaderboard::CurrentPeriod() {
  // A failed rollover leaves the period that is still current, which is
  // what this returns; Current() reports the error.
  state_->MaybeRollOver().IgnoreError();
  return state_->Current();
}

absl::StatusOr<std::shared_ptr<Leaderboard>> SeasonalLeaderboard::Period(
    PeriodId id) {
  if (absl::StatusOr<bool> rolled = state_->MaybeRollOver(); !rolled.ok()) {
    return rolled.status();
  }
  internal::ReaderLock lock(&state_->mu);
  {
    internal::ReaderLock current_lock(&state_->current_mu);
    if (id == state_->current_period.id) return state_->current_board;
  }
  for (const State::KeptPeriod& kept : state_->kept) {
    if (kept.id == id) return kept.board;
  }
  return absl::NotFoundError(absl::StrCat(
      "period ", id, " of seasonal leaderboard \"", state_->name,
      "\" is not readable: it is older than the ", state_->options.keep_periods,
      " kept, in the future, or ended before this board existed"));
}

std::vector<PeriodId> SeasonalLeaderboard::Periods() {
  // As CurrentPeriod: after a failed rollover, the periods still readable.
  state_->MaybeRollOver().IgnoreError();
  internal::ReaderLock lock(&state_->mu);
  std::vector<PeriodId> ids;
  ids.reserve(state_->kept.size() + 1);
  for (const State::KeptPeriod& kept : state_->kept) ids.push_back(kept.id);
  internal::ReaderLock current_lock(&state_->current_mu);
  ids.push_back(state_->current_period.id);
  return ids;
}

absl::StatusOr<bool> SeasonalLeaderboard::Rollover() {
  return state_->MaybeRollOver();
}

size_t SeasonalLeaderboard::ReleaseRetired() {
  std::vector<std::shared_ptr<Leaderboard>> released;
  {
    internal::WriterLock lock(&state_->mu);
    released.swap(state_->retired);
  }
  // The boards are freed here, outside the lock (unless the program still
  // holds handles to them).
  return released.size();
}

std::string SeasonalLeaderboard::BoardName(PeriodId id) const {
  return state_->BoardName(id);
}

const SeasonOptions& SeasonalLeaderboard::options() const {
  return state_->options;
}

}  // namespace feedcore
