// SeasonalLeaderboard driven by a ManualClock: rollover exactly at the
// boundary, the ended period's final top reported once, periods skipped at
// once, the bound of kept periods and the retired list, a restart over the
// same registry (in memory and through a DurableStore), the calls a
// rollover makes on a large board (counted through a SeasonBoardOpener),
// and every argument error.
#include "feedcore/seasonal_leaderboard.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/clock.h"
#include "feedcore/durable_store.h"
#include "feedcore/leaderboard.h"
#include "support/counting_leaderboard.h"
#include "support/file_test_util.h"
#include "support/leaderboard_test_util.h"

namespace feedcore {
namespace {

using testing::CountingLeaderboard;
using testing::TempDir;

constexpr Micros kDay = int64_t{86'400} * 1'000'000;
// 2024-01-01T12:00Z: noon of day 19723 since the epoch.
constexpr PeriodId kFirstDay = 19'723;
constexpr Micros kNoon = kFirstDay * kDay + kDay / 2;

std::unique_ptr<SeasonalLeaderboard> CreateOrFail(
    absl::string_view name, SeasonOptions options,
    std::shared_ptr<LeaderboardRegistry> registry,
    std::shared_ptr<const Clock> clock) {
  absl::StatusOr<std::unique_ptr<SeasonalLeaderboard>> seasonal =
      SeasonalLeaderboard::Create(name, std::move(options), std::move(registry),
                                  std::move(clock));
  REQUIRE_MESSAGE(seasonal.ok(), seasonal.status());
  return *std::move(seasonal);
}

std::shared_ptr<Leaderboard> CurrentOrFail(SeasonalLeaderboard& seasonal) {
  absl::StatusOr<std::shared_ptr<Leaderboard>> board = seasonal.Current();
  REQUIRE_MESSAGE(board.ok(), board.status());
  return *std::move(board);
}

// A daily board named "kills" with `keep` periods kept, reporting each
// ended period into `ended`.
struct Daily {
  explicit Daily(size_t keep = 1, Micros start = kNoon)
      : clock(std::make_shared<ManualClock>(start)),
        registry(std::make_shared<LeaderboardRegistry>()) {
    options.schedule = SeasonSchedule::Daily();
    options.keep_periods = keep;
    options.final_top_k = 3;
    options.board.tie_break = TieBreak::kLowerMemberFirst;
    options.on_rollover = [this](const EndedPeriod& period) {
      ended.push_back(period);
    };
    seasonal = CreateOrFail("kills", options, registry, clock);
  }

  std::shared_ptr<ManualClock> clock;
  std::shared_ptr<LeaderboardRegistry> registry;
  SeasonOptions options;
  std::vector<EndedPeriod> ended;
  std::unique_ptr<SeasonalLeaderboard> seasonal;
};

TEST_CASE("the current period's board is <name>@<id> in the registry") {
  Daily daily;
  CHECK(daily.seasonal->CurrentPeriod() ==
        SeasonPeriod{kFirstDay, kFirstDay * kDay, (kFirstDay + 1) * kDay});
  CHECK(daily.seasonal->BoardName(kFirstDay) == "kills@19723");
  CHECK(daily.seasonal->BoardName(-3) == "kills@-3");
  CHECK(daily.registry->Names() == std::vector<std::string>{"kills@19723"});
  std::shared_ptr<Leaderboard> board = CurrentOrFail(*daily.seasonal);
  CHECK(board == daily.registry->Get("kills@19723").value());
  CHECK(board->options() == daily.options.board);
  CHECK(daily.seasonal->Period(kFirstDay).value() == board);
  CHECK(daily.seasonal->Periods() == std::vector<PeriodId>{kFirstDay});
  CHECK(daily.seasonal->Rollover().value() == false);
  CHECK(daily.ended.empty());
}

TEST_CASE("a rollover happens exactly at the boundary, reported once") {
  Daily daily;
  std::shared_ptr<Leaderboard> first = CurrentOrFail(*daily.seasonal);
  for (MemberId member = 1; member <= 5; ++member) {
    REQUIRE(first->Set(member, static_cast<int64_t>(member) * 10).ok());
  }
  // One microsecond before midnight: still the first day.
  daily.clock->Set((kFirstDay + 1) * kDay - 1);
  CHECK(CurrentOrFail(*daily.seasonal) == first);
  CHECK(daily.seasonal->CurrentPeriod().id == kFirstDay);
  CHECK(daily.ended.empty());
  // Midnight.
  daily.clock->Set((kFirstDay + 1) * kDay);
  std::shared_ptr<Leaderboard> second = CurrentOrFail(*daily.seasonal);
  CHECK(second != first);
  CHECK(second->Size().value() == 0);
  CHECK(daily.seasonal->CurrentPeriod().id == kFirstDay + 1);
  REQUIRE(daily.ended.size() == 1);
  CHECK(daily.ended[0].period ==
        SeasonPeriod{kFirstDay, kFirstDay * kDay, (kFirstDay + 1) * kDay});
  CHECK(daily.ended[0].top_status.ok());
  CHECK(daily.ended[0].top ==
        std::vector<LeaderboardEntry>{{.member = 5, .score = 50, .rank = 0},
                                      {.member = 4, .score = 40, .rank = 1},
                                      {.member = 3, .score = 30, .rank = 2}});
  // Later calls in the same period report nothing more.
  CHECK(daily.seasonal->Rollover().value() == false);
  CHECK(CurrentOrFail(*daily.seasonal) == second);
  daily.seasonal->Periods();
  CHECK(daily.ended.size() == 1);
  // The ended period stays readable, with its scores.
  CHECK(daily.seasonal->Period(kFirstDay).value() == first);
  CHECK(first->Score(5).value() == 50);
  CHECK(daily.seasonal->Periods() ==
        std::vector<PeriodId>{kFirstDay, kFirstDay + 1});
}

TEST_CASE("Rollover() rolls over when due and says so") {
  Daily daily;
  daily.clock->Advance(kDay);
  CHECK(daily.seasonal->Rollover().value() == true);
  CHECK(daily.ended.size() == 1);
  CHECK(daily.seasonal->Rollover().value() == false);
  CHECK(daily.seasonal->CurrentPeriod().id == kFirstDay + 1);
}

TEST_CASE("an empty ended period reports an empty top; final_top_k 0 none") {
  SUBCASE("empty board") {
    Daily daily;
    daily.clock->Advance(kDay);
    CHECK(daily.seasonal->Rollover().value());
    REQUIRE(daily.ended.size() == 1);
    CHECK(daily.ended[0].top.empty());
  }
  SUBCASE("final_top_k 0") {
    auto clock = std::make_shared<ManualClock>(kNoon);
    auto registry = std::make_shared<LeaderboardRegistry>();
    SeasonOptions options;
    options.final_top_k = 0;
    std::vector<EndedPeriod> ended;
    options.on_rollover = [&](const EndedPeriod& e) { ended.push_back(e); };
    auto seasonal = CreateOrFail("s", options, registry, clock);
    REQUIRE(CurrentOrFail(*seasonal)->Set(1, 1).ok());
    clock->Advance(kDay);
    CHECK(seasonal->Rollover().value());
    REQUIRE(ended.size() == 1);
    CHECK(ended[0].period.id == kFirstDay);
    CHECK(ended[0].top.empty());
  }
}

TEST_CASE("several periods passed at once: one report, the window kept") {
  Daily daily(/*keep=*/2);
  REQUIRE(CurrentOrFail(*daily.seasonal)->Set(7, 70).ok());
  daily.clock->Advance(kDay);
  REQUIRE(CurrentOrFail(*daily.seasonal)->Set(8, 80).ok());
  REQUIRE(daily.ended.size() == 1);
  // Five days without a call.
  daily.clock->Advance(5 * kDay);
  std::shared_ptr<Leaderboard> current = CurrentOrFail(*daily.seasonal);
  CHECK(daily.seasonal->CurrentPeriod().id == kFirstDay + 6);
  // One report, for the period that was current before.
  REQUIRE(daily.ended.size() == 2);
  CHECK(daily.ended[1].period.id == kFirstDay + 1);
  CHECK(daily.ended[1].top ==
        std::vector<LeaderboardEntry>{{.member = 8, .score = 80, .rank = 0}});
  // Days 4 and 5 never had boards; days 0 and 1 are older than the two
  // kept: dropped from the registry and retired.
  CHECK(daily.seasonal->Periods() == std::vector<PeriodId>{kFirstDay + 6});
  CHECK(daily.registry->Names() == std::vector<std::string>{"kills@19729"});
  for (PeriodId id : {kFirstDay, kFirstDay + 1, kFirstDay + 4, kFirstDay + 7}) {
    CAPTURE(id);
    CHECK(daily.seasonal->Period(id).status().code() ==
          absl::StatusCode::kNotFound);
  }
  CHECK(daily.seasonal->ReleaseRetired() == 2);
  CHECK(daily.seasonal->ReleaseRetired() == 0);
}

TEST_CASE("keep_periods bounds the readable periods and the registry") {
  Daily daily(/*keep=*/2);
  std::vector<std::shared_ptr<Leaderboard>> boards;
  for (int day = 0; day < 5; ++day) {
    boards.push_back(CurrentOrFail(*daily.seasonal));
    REQUIRE(boards.back()->Set(day, day).ok());
    daily.clock->Advance(kDay);
  }
  const PeriodId now = kFirstDay + 5;
  CHECK(daily.seasonal->CurrentPeriod().id == now);
  CHECK(daily.seasonal->Periods() ==
        std::vector<PeriodId>{now - 2, now - 1, now});
  CHECK(daily.registry->Names() ==
        std::vector<std::string>{"kills@19726", "kills@19727", "kills@19728"});
  CHECK(daily.seasonal->Period(now - 2).value() == boards[3]);
  CHECK(daily.seasonal->Period(now - 1).value() == boards[4]);
  CHECK(daily.seasonal->Period(now - 3).status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(daily.ended.size() == 5);
  // Three periods left the window; their boards wait for ReleaseRetired
  // (the test's own handles keep them alive past it).
  CHECK(daily.seasonal->ReleaseRetired() == 3);
  CHECK(boards[0]->Score(0).value() == 0);
}

TEST_CASE("keep_periods 0: the ended board is still reported, then retired") {
  Daily daily(/*keep=*/0);
  REQUIRE(CurrentOrFail(*daily.seasonal)->Set(3, 33).ok());
  daily.clock->Advance(kDay);
  CHECK(daily.seasonal->Rollover().value());
  REQUIRE(daily.ended.size() == 1);
  CHECK(daily.ended[0].top.size() == 1);
  CHECK(daily.seasonal->Periods() == std::vector<PeriodId>{kFirstDay + 1});
  CHECK(daily.registry->Names() == std::vector<std::string>{"kills@19724"});
  CHECK(daily.seasonal->ReleaseRetired() == 1);
}

TEST_CASE("on_rollover runs with no lock held and may call the board") {
  auto clock = std::make_shared<ManualClock>(kNoon);
  auto registry = std::make_shared<LeaderboardRegistry>();
  SeasonalLeaderboard* self = nullptr;
  std::vector<PeriodId> seen;
  SeasonOptions options;
  options.on_rollover = [&](const EndedPeriod& ended) {
    seen = self->Periods();
    CHECK(self->Current().ok());
    CHECK(self->Period(ended.period.id).ok());
    CHECK(self->Rollover().value() == false);
  };
  auto seasonal = CreateOrFail("s", options, registry, clock);
  self = seasonal.get();
  clock->Advance(kDay);
  CHECK(seasonal->Rollover().value());
  CHECK(seen == std::vector<PeriodId>{kFirstDay, kFirstDay + 1});
}

TEST_CASE("a restart over the same registry finds the periods again") {
  Daily daily(/*keep=*/3);
  std::vector<std::shared_ptr<Leaderboard>> boards;
  for (int day = 0; day < 3; ++day) {
    boards.push_back(CurrentOrFail(*daily.seasonal));
    REQUIRE(boards.back()->Set(100 + day, day).ok());
    daily.clock->Advance(kDay);
  }
  boards.push_back(CurrentOrFail(*daily.seasonal));
  const std::vector<PeriodId> periods = daily.seasonal->Periods();
  daily.seasonal.reset();

  std::vector<EndedPeriod> ended;
  SeasonOptions options = daily.options;
  options.on_rollover = [&](const EndedPeriod& e) { ended.push_back(e); };
  auto again = CreateOrFail("kills", options, daily.registry, daily.clock);
  CHECK(again->Periods() == periods);
  for (size_t i = 0; i < periods.size(); ++i) {
    CHECK(again->Period(periods[i]).value() == boards[i]);
  }
  CHECK(CurrentOrFail(*again) == boards.back());
  // The restarted object reports the period it saw current.
  daily.clock->Advance(kDay);
  CHECK(again->Rollover().value());
  REQUIRE(ended.size() == 1);
  CHECK(ended[0].period.id == periods.back());
}

TEST_CASE("a restart after a long stop drops the periods no longer kept") {
  Daily daily(/*keep=*/1);
  daily.clock->Advance(kDay);
  CHECK(daily.seasonal->Rollover().value());
  daily.seasonal.reset();
  CHECK(daily.registry->Names() ==
        std::vector<std::string>{"kills@19723", "kills@19724"});
  // Another seasonal board whose name shares the prefix is not touched.
  REQUIRE(daily.registry->GetOrCreate("kills@x@1").ok());
  // Ten days later the program starts again: both periods are too old.
  daily.clock->Advance(10 * kDay);
  std::vector<EndedPeriod> ended;
  SeasonOptions options = daily.options;
  options.on_rollover = [&](const EndedPeriod& e) { ended.push_back(e); };
  auto again = CreateOrFail("kills", options, daily.registry, daily.clock);
  CHECK(again->Periods() == std::vector<PeriodId>{kFirstDay + 11});
  CHECK(daily.registry->Names() ==
        std::vector<std::string>{"kills@19734", "kills@x@1"});
  // A boundary crossed while no program ran fires no callback.
  CHECK(ended.empty());
}

TEST_CASE("a period's board with other options is AlreadyExists") {
  auto clock = std::make_shared<ManualClock>(kNoon);
  auto registry = std::make_shared<LeaderboardRegistry>();
  SeasonOptions options;
  options.keep_periods = 1;
  SUBCASE("the current period at Create") {
    REQUIRE(registry->GetOrCreate("s@19723", {.partitions = 3}).ok());
    auto seasonal = SeasonalLeaderboard::Create("s", options, registry, clock);
    CHECK(seasonal.status().code() == absl::StatusCode::kAlreadyExists);
    CHECK(registry->Names() == std::vector<std::string>{"s@19723"});
  }
  SUBCASE("a kept period at Create") {
    REQUIRE(registry->GetOrCreate("s@19722", {.partitions = 3}).ok());
    auto seasonal = SeasonalLeaderboard::Create("s", options, registry, clock);
    CHECK(seasonal.status().code() == absl::StatusCode::kAlreadyExists);
    CHECK(registry->Names() == std::vector<std::string>{"s@19722"});
  }
  SUBCASE("the new period at a rollover: nothing changes, then it retries") {
    std::vector<EndedPeriod> ended;
    options.on_rollover = [&](const EndedPeriod& e) { ended.push_back(e); };
    auto seasonal = CreateOrFail("s", options, registry, clock);
    std::shared_ptr<Leaderboard> first = CurrentOrFail(*seasonal);
    REQUIRE(registry->GetOrCreate("s@19724", {.partitions = 3}).ok());
    clock->Advance(kDay);
    CHECK(seasonal->Current().status().code() ==
          absl::StatusCode::kAlreadyExists);
    CHECK(seasonal->Rollover().status().code() ==
          absl::StatusCode::kAlreadyExists);
    CHECK(seasonal->CurrentPeriod().id == kFirstDay);
    CHECK(seasonal->Periods() == std::vector<PeriodId>{kFirstDay});
    CHECK(ended.empty());
    REQUIRE(registry->Drop("s@19724").ok());
    CHECK(CurrentOrFail(*seasonal) != first);
    CHECK(seasonal->CurrentPeriod().id == kFirstDay + 1);
    CHECK(ended.size() == 1);
  }
}

TEST_CASE("arguments out of range are InvalidArgument and change nothing") {
  auto clock = std::make_shared<ManualClock>(kNoon);
  auto registry = std::make_shared<LeaderboardRegistry>();
  const auto check = [&](absl::string_view name, const SeasonOptions& options,
                         std::shared_ptr<LeaderboardRegistry> reg,
                         std::shared_ptr<const Clock> clk,
                         const std::string& mentions) {
    CAPTURE(mentions);
    auto seasonal = SeasonalLeaderboard::Create(name, options, reg, clk);
    REQUIRE(!seasonal.ok());
    CHECK(seasonal.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(seasonal.status().message()).find(mentions) !=
          std::string::npos);
    CHECK(registry->size() == 0);
  };
  const SeasonOptions fine;
  check("", fine, registry, clock, "name is empty");
  check(std::string(kMaxLeaderboardNameLength - 20, 'n'), fine, registry, clock,
        "name is");
  check("s", fine, nullptr, clock, "registry is null");
  check("s", fine, registry, nullptr, "clock is null");
  SeasonOptions options = fine;
  options.keep_periods = kMaxKeptPeriods + 1;
  check("s", options, registry, clock, "SeasonOptions.keep_periods");
  options = fine;
  options.board.max_page_size = 5;
  options.final_top_k = 6;
  check("s", options, registry, clock, "SeasonOptions.final_top_k");
  options = fine;
  options.board.partitions = 0;
  check("s", options, registry, clock, "LeaderboardOptions.partitions");
  options = fine;
  options.schedule = SeasonSchedule::Weekly(8);
  check("s", options, registry, clock, "SeasonSchedule.weekday");
  options = fine;
  options.schedule = SeasonSchedule::Fixed(0, 0);
  check("s", options, registry, clock, "SeasonSchedule.duration");
  // The clock at the end of time: no period holds it.
  check("s", fine, registry,
        std::make_shared<ManualClock>(std::numeric_limits<Micros>::max()),
        "outside the int64 microsecond range");
  auto opened =
      SeasonalLeaderboard::Create("s", fine, SeasonBoardOpener(), clock);
  CHECK(opened.status().code() == absl::StatusCode::kInvalidArgument);
  // The longest name that leaves room for any period id.
  CHECK(SeasonalLeaderboard::Create(
            std::string(kMaxLeaderboardNameLength - 21, 'n'), fine, registry,
            clock)
            .ok());
}

// A rollover's work does not depend on the ended board's size: one TopK of
// final_top_k entries, one new board, nothing else on any board. Counted
// through a SeasonBoardOpener that wraps each board.
TEST_CASE("a rollover of a large board reads only its top") {
  auto clock = std::make_shared<ManualClock>(kNoon);
  std::map<std::string, std::shared_ptr<CountingLeaderboard>> opened;
  SeasonBoardOpener open = [&](absl::string_view name,
                               const LeaderboardOptions& options)
      -> absl::StatusOr<std::shared_ptr<Leaderboard>> {
    auto inner = Leaderboard::Create(options);
    if (!inner.ok()) return inner.status();
    auto board = std::make_shared<CountingLeaderboard>(*std::move(inner));
    opened[std::string(name)] = board;
    return board;
  };
  SeasonOptions options;
  options.keep_periods = 0;
  options.final_top_k = 10;
  std::vector<EndedPeriod> ended;
  options.on_rollover = [&](const EndedPeriod& e) { ended.push_back(e); };
  absl::StatusOr<std::unique_ptr<SeasonalLeaderboard>> seasonal =
      SeasonalLeaderboard::Create("big", options, open, clock);
  REQUIRE_MESSAGE(seasonal.ok(), seasonal.status());
  REQUIRE(opened.size() == 1);
  CountingLeaderboard& big = *opened.at("big@19723");
  constexpr MemberId kMembers = 200'000;
  std::vector<ScoreIncrement> fill;
  for (MemberId m = 0; m < kMembers; ++m) {
    fill.push_back({m, static_cast<int64_t>(m % 1000)});
  }
  big.inner().IncrementMany(fill);
  REQUIRE(big.inner().Size().value() == kMembers);

  clock->Advance(kDay);
  CHECK((*seasonal)->Rollover().value());
  CHECK(opened.size() == 2);
  CHECK(big.Calls() == std::map<std::string, int>{{"TopK", 1}});
  CHECK(big.LargestTopK() == 10);
  CHECK(opened.at("big@19724")->Calls().empty());
  REQUIRE(ended.size() == 1);
  CHECK(ended[0].top.size() == 10);
  CHECK(ended[0].top[0].score == 999);
  // Retired, not freed: the rollover's thread never frees a board.
  CHECK(big.inner().Size().value() == kMembers);
  CHECK((*seasonal)->ReleaseRetired() == 1);
}

TEST_CASE("through a SeasonBoardOpener, readable periods are those opened") {
  auto clock = std::make_shared<ManualClock>(kNoon);
  auto registry = std::make_shared<LeaderboardRegistry>();
  int calls = 0;
  SeasonBoardOpener open = [&](absl::string_view name,
                               const LeaderboardOptions& options) {
    ++calls;
    return registry->GetOrCreate(name, options);
  };
  SeasonOptions options;
  options.keep_periods = 2;
  // A board of yesterday exists, but the opener offers no way to find it.
  REQUIRE(registry->GetOrCreate("o@19722").ok());
  auto seasonal = SeasonalLeaderboard::Create("o", options, open, clock);
  REQUIRE(seasonal.ok());
  CHECK(calls == 1);
  CHECK((*seasonal)->Periods() == std::vector<PeriodId>{kFirstDay});
  clock->Advance(3 * kDay);
  CHECK((*seasonal)->Rollover().value());
  CHECK(calls == 2);
  CHECK((*seasonal)->Periods() == std::vector<PeriodId>{kFirstDay + 3});
  // The period that left the window is released, not dropped.
  CHECK(registry->Get("o@19723").ok());
  CHECK((*seasonal)->ReleaseRetired() == 1);
  SeasonBoardOpener null_board = [](absl::string_view,
                                    const LeaderboardOptions&) {
    return absl::StatusOr<std::shared_ptr<Leaderboard>>(nullptr);
  };
  CHECK(SeasonalLeaderboard::Create("o", options, null_board, clock)
            .status()
            .code() == absl::StatusCode::kInternal);
}

EngineOptions StoreEngineOptions(std::shared_ptr<ManualClock> clock) {
  EngineOptions options;
  options.shards = 2;
  options.sweep_interval = 0;
  options.clock = std::move(clock);
  return options;
}

DurabilityOptions StoreDurability(const std::string& directory) {
  DurabilityOptions durability;
  durability.directory = directory;
  durability.fsync = FsyncPolicy::kNever;
  durability.segment_bytes = kMinLogSegmentBytes;
  durability.compact_after_bytes = 0;
  return durability;
}

// The store's registry, keeping the store alive as long as it is used.
std::shared_ptr<LeaderboardRegistry> BoardsOf(
    std::shared_ptr<DurableStore> store) {
  LeaderboardRegistry* boards = &store->boards();
  return std::shared_ptr<LeaderboardRegistry>(std::move(store), boards);
}

std::shared_ptr<DurableStore> OpenStore(const std::string& directory,
                                        std::shared_ptr<ManualClock> clock) {
  absl::StatusOr<std::unique_ptr<DurableStore>> store =
      DurableStore::Open(StoreDurability(directory), StoreEngineOptions(clock));
  REQUIRE_MESSAGE(store.ok(), store.status());
  return *std::move(store);
}

TEST_CASE("a DurableStore restores the current and archived periods") {
  TempDir dir("seasons-durable");
  auto clock = std::make_shared<ManualClock>(kNoon);
  SeasonOptions options;
  options.keep_periods = 2;
  std::map<PeriodId, std::vector<LeaderboardEntry>> written;
  {
    std::shared_ptr<DurableStore> store = OpenStore(dir.path(), clock);
    auto seasonal = CreateOrFail("arena", options, BoardsOf(store), clock);
    for (int day = 0; day < 4; ++day) {
      std::shared_ptr<Leaderboard> board = CurrentOrFail(*seasonal);
      for (MemberId m = 1; m <= 3; ++m) {
        REQUIRE(board->Increment(m, day * 10 + static_cast<int64_t>(m)).ok());
      }
      written[seasonal->CurrentPeriod().id] = board->TopK(10).value();
      if (day < 3) clock->Advance(kDay);
    }
    CHECK(seasonal->Periods() ==
          std::vector<PeriodId>{kFirstDay + 1, kFirstDay + 2, kFirstDay + 3});
  }
  {
    std::shared_ptr<DurableStore> store = OpenStore(dir.path(), clock);
    CHECK(store->boards().Names() == std::vector<std::string>{"arena@19724",
                                                              "arena@19725",
                                                              "arena@19726"});
    auto seasonal = CreateOrFail("arena", options, BoardsOf(store), clock);
    CHECK(seasonal->Periods() ==
          std::vector<PeriodId>{kFirstDay + 1, kFirstDay + 2, kFirstDay + 3});
    for (PeriodId id : seasonal->Periods()) {
      CAPTURE(id);
      CHECK(seasonal->Period(id).value()->TopK(10).value() == written.at(id));
    }
    // Two days later, only the newest of them is still kept; the drop is
    // logged too.
    clock->Advance(2 * kDay);
    CHECK(seasonal->Rollover().value());
    CHECK(seasonal->Periods() ==
          std::vector<PeriodId>{kFirstDay + 3, kFirstDay + 5});
  }
  std::shared_ptr<DurableStore> store = OpenStore(dir.path(), clock);
  CHECK(store->boards().Names() ==
        std::vector<std::string>{"arena@19726", "arena@19728"});
}

}  // namespace
}  // namespace feedcore
