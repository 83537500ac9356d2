// SeasonalLeaderboard: a leaderboard that resets on a schedule (daily,
// weekly, monthly boards), keeps the last periods readable and tells the
// program the winners of each period that ends.
//
//   auto clock = std::make_shared<feedcore::SystemClock>();
//   auto registry = std::make_shared<feedcore::LeaderboardRegistry>();
//   feedcore::SeasonOptions options;
//   options.schedule = feedcore::SeasonSchedule::Weekly(/*weekday=*/1,
//                                                     /*hour=*/0);  // Mon
//                                                     00:00
//   options.keep_periods = 4;
//   options.on_rollover = [](const feedcore::EndedPeriod& ended) {
//     for (const auto& winner : ended.top) GrantReward(winner.member);
//   };
//   auto weekly = feedcore::SeasonalLeaderboard::Create(
//       "kills-weekly", options, registry, clock).value();
//   weekly->Current().value()->Increment(player, 3);
//   weekly->CurrentPeriod();   // {id, start, next_reset}
//   weekly->Period(id - 1);    // last week's board, read-only by contract
//
// Periods
// -------
// Time comes from the injected clock, in UTC. A period is numbered by a
// `PeriodId`: the number of whole periods between the schedule's first
// boundary at or after the Unix epoch and the period's start (negative
// before it). The id of the period containing an instant follows from the
// schedule alone, so every process with the same schedule and clock agrees
// on it, and a restarted program finds its periods again.
//
// Each period's board is a board of the registry named
// "<name>@<period id>", created with `SeasonOptions::board`. A registry
// that records into a change stream (DurableStore::boards()) keeps every
// period's board in its log and snapshots, so a restart restores the current
// period and the archived ones exactly. The store owns its registry; hand it
// over with an aliasing pointer that keeps the store alive:
//
//   std::shared_ptr<feedcore::DurableStore> store =
//       feedcore::DurableStore::Open(durability, {}).value();
//   std::shared_ptr<feedcore::LeaderboardRegistry> boards(store,
//                                                         &store->boards());
//
// A backend without a registry (the Redis Cluster one) passes a function
// that opens a board by name instead (the second Create).
//
// Rollover
// --------
// Every call but ReleaseRetired, BoardName and options first compares the
// clock with the next reset time (one atomic load, no lock). The first call
// at or past it takes this object's lock and rolls the board over:
//   1. the new period's board is created (empty: O(partitions)) and becomes
//      the one `Current()` returns;
//   2. the ended period's final top `final_top_k` is read (when there is an
//      `on_rollover`): O(final_top_k + partitions);
//   3. the periods older than the last `keep_periods` are dropped from the
//      registry and their boards moved to a retired list;
//   4. `on_rollover` runs, on the calling thread, after every lock of this
//      object is released, once per ended period the object saw current.
// A rollover that fails to create the new board (the registry's error)
// changes nothing, and the next call tries again. A drop that fails (a
// durable registry that refuses writes) is tried again at the next
// rollover. Create drops the boards of this name's periods older than the
// kept ones that the registry still holds (a restart after a long stop).
// None of this is in proportion to a board's members: freeing a retired
// board's memory is, so it happens in `ReleaseRetired()` (call it from a
// maintenance thread, as FeedEngine::EvictExpired) or when this object is
// destroyed. A program that wants the callback on time, not at the next
// call, calls `Rollover()` from a timer.
//
// When several periods pass without a call (a program stopped over a
// weekend), the rollover jumps to the current period and reports one
// EndedPeriod for the period that was current before, if its board exists.
// A boundary crossed while no program ran fires no callback: the ended
// period's board stays readable by id within keep_periods.
//
// Writes racing a rollover. A write goes to the board `Current()` returned;
// a thread that took that board just before the boundary may write it just
// after. Such a write lands in the ended period, and is in the
// EndedPeriod's top only if it came before the top was read. Programs that
// must refuse late scores compare the period id they hold with
// `CurrentPeriod().id`.
//
// Thread safety
// -------------
// Every method may be called from any thread. Lock order: this object's
// lock, then the registry's or a board's (a rollover reads the ended
// board's top under it, so that no concurrent ReleaseRetired can make the
// rollover's thread the one that frees a board); never this object's lock
// under either. Outside a rollover, `Current()` takes no lock of this
// object but a reader lock held for the copy of the current board's
// handle. `on_rollover` runs with no lock held and may call this object;
// callbacks of rollovers made by different threads may run concurrently.
#ifndef FEEDCORE_SEASONAL_LEADERBOARD_H_
#define FEEDCORE_SEASONAL_LEADERBOARD_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "feedcore/clock.h"
#include "feedcore/export.h"
#include "feedcore/leaderboard.h"
#include "feedcore/types.h"

namespace feedcore {

using PeriodId = int64_t;

// Most archived periods a seasonal board keeps readable.
inline constexpr size_t kMaxKeptPeriods = 1000;

// When a seasonal board resets, in UTC.
struct SeasonSchedule {
  enum class Unit : uint8_t {
    kHourly,   // at minute 0 of every hour
    kDaily,    // every day at `hour`:00
    kWeekly,   // every `weekday` (0 Sunday .. 6 Saturday) at `hour`:00
    kMonthly,  // the first day of every month at `hour`:00
    kFixed,    // every `duration` from `epoch`
  };
  Unit unit = Unit::kDaily;
  int hour = 0;         // 0..23; kDaily, kWeekly, kMonthly
  int weekday = 1;      // 0..6; kWeekly
  Micros epoch = 0;     // kFixed: a boundary
  Micros duration = 0;  // kFixed: > 0

  static SeasonSchedule Hourly() { return {.unit = Unit::kHourly}; }
  static SeasonSchedule Daily(int hour = 0) {
    return {.unit = Unit::kDaily, .hour = hour};
  }
  static SeasonSchedule Weekly(int weekday, int hour = 0) {
    return {.unit = Unit::kWeekly, .hour = hour, .weekday = weekday};
  }
  static SeasonSchedule Monthly(int hour = 0) {
    return {.unit = Unit::kMonthly, .hour = hour};
  }
  static SeasonSchedule Fixed(Micros epoch, Micros duration) {
    return {.unit = Unit::kFixed, .epoch = epoch, .duration = duration};
  }

  friend bool operator==(const SeasonSchedule&,
                         const SeasonSchedule&) = default;
};

// The unit's name as written in this header, e.g. "kDaily".
FEEDCORE_EXPORT const char* SeasonScheduleUnitName(SeasonSchedule::Unit unit);

// A period of a schedule: [start, next_reset).
struct SeasonPeriod {
  PeriodId id = 0;
  Micros start = 0;
  Micros next_reset = 0;

  friend bool operator==(const SeasonPeriod&, const SeasonPeriod&) = default;
};

// The period containing `now` under `schedule`. `InvalidArgument` for a
// schedule out of range. Pure; O(1).
FEEDCORE_EXPORT absl::StatusOr<SeasonPeriod> PeriodAt(
    const SeasonSchedule& schedule, Micros now);

// The period numbered `id` under `schedule`. `InvalidArgument` for a
// schedule out of range or a period outside the int64 microsecond range.
FEEDCORE_EXPORT absl::StatusOr<SeasonPeriod> PeriodById(
    const SeasonSchedule& schedule, PeriodId id);

// What on_rollover is told about a period that ended.
struct EndedPeriod {
  SeasonPeriod period;
  // Its board's best min(final_top_k, members) entries when it ended.
  std::vector<LeaderboardEntry> top;
  // OK, or why `top` could not be read (a server backend's error; `top` is
  // then empty and the board stays readable by id within keep_periods).
  // The in-process board never fails.
  absl::Status top_status;
};

// Opens the board named `board_name` with `options`, creating it if there
// is none, for a SeasonalLeaderboard whose periods do not live in a
// LeaderboardRegistry. On Redis Cluster:
//   [cluster](absl::string_view board_name, const LeaderboardOptions& o)
//       -> absl::StatusOr<std::shared_ptr<Leaderboard>> {
//     return CreateRedisClusterLeaderboard(cluster, board_name, o);
//   }
using SeasonBoardOpener =
    std::function<absl::StatusOr<std::shared_ptr<Leaderboard>>(
        absl::string_view board_name, const LeaderboardOptions& options)>;

struct SeasonOptions {
  SeasonSchedule schedule;
  // Ended periods kept readable besides the current one,
  // 0..kMaxKeptPeriods.
  size_t keep_periods = 1;
  // Entries of the ended period given to on_rollover,
  // 0..board.max_page_size (0: none read).
  size_t final_top_k = 10;
  // Called once per ended period (see "Rollover"); may be empty.
  std::function<void(const EndedPeriod&)> on_rollover;
  // The options of every period's board.
  LeaderboardOptions board;
};

class FEEDCORE_EXPORT SeasonalLeaderboard {
 public:
  // A seasonal board named `name` whose periods live in `registry` (see
  // "Periods"). Finds the current period's board and the kept ones if the
  // registry already holds them (a restart), and creates the current one
  // otherwise. `InvalidArgument` for an empty name, a name that leaves no
  // room for the period suffix within kMaxLeaderboardNameLength, or
  // options out of range; `AlreadyExists` if a period's board exists with
  // other options. `registry` and `clock` must not be null.
  static absl::StatusOr<std::unique_ptr<SeasonalLeaderboard>> Create(
      absl::string_view name, SeasonOptions options,
      std::shared_ptr<LeaderboardRegistry> registry,
      std::shared_ptr<const Clock> clock);

  // The same, over boards that `open_board` opens (see SeasonBoardOpener)
  // rather than a registry's. `open_board` is called at Create for the
  // current period and at each rollover for the new one, under this
  // object's lock: it may wait for a server, but must not call this object.
  // With no registry to look in, the readable periods are those this object
  // opened (after a restart, the current one only; older ones are opened by
  // the program under their BoardName), and a period that leaves the kept
  // ones is only released by this object: its data stays in the backend
  // until the program clears it (Clear(), or the backend's own expiry).
  // `InvalidArgument` for an empty `open_board`, and as the first Create.
  static absl::StatusOr<std::unique_ptr<SeasonalLeaderboard>> Create(
      absl::string_view name, SeasonOptions options,
      SeasonBoardOpener open_board, std::shared_ptr<const Clock> clock);

  ~SeasonalLeaderboard();
  SeasonalLeaderboard(const SeasonalLeaderboard&) = delete;
  SeasonalLeaderboard& operator=(const SeasonalLeaderboard&) = delete;

  // The current period's board, after a rollover if one is due. Fails only
  // when a due rollover cannot create the new period's board (the
  // registry's error), or when the clock has reached a period that ends
  // beyond the int64 microsecond range (InvalidArgument).
  absl::StatusOr<std::shared_ptr<Leaderboard>> Current();

  // The current period (after a rollover if one is due; the period still
  // current when that rollover fails, as Current() then reports).
  SeasonPeriod CurrentPeriod();

  // The board of period `id`: the current one or one of the kept ones.
  // `NotFound` for a period that is older than those kept, in the future,
  // or ended before this board existed.
  absl::StatusOr<std::shared_ptr<Leaderboard>> Period(PeriodId id);

  // The ids of the readable periods, oldest first, the current one last.
  std::vector<PeriodId> Periods();

  // Rolls over if due; returns whether it did. The same error as Current.
  absl::StatusOr<bool> Rollover();

  // Frees the boards of periods no longer kept, on the calling thread, and
  // returns how many. O(their members).
  size_t ReleaseRetired();

  // The registry name of period `id`'s board.
  std::string BoardName(PeriodId id) const;

  const SeasonOptions& options() const;

 private:
  struct State;
  explicit SeasonalLeaderboard(std::unique_ptr<State> state);
  const std::unique_ptr<State> state_;
};

}  // namespace feedcore

#endif  // FEEDCORE_SEASONAL_LEADERBOARD_H_
