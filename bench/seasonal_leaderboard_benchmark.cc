// Micro-benchmarks of SeasonalLeaderboard (results in
// docs/benchmark-results.md):
//
//   BM_SeasonalCurrent/threads:<T>
//       Current() when no rollover is due: the clock check (one atomic
//       load) and the copy of the current board's handle, on 1 and 2
//       threads sharing one seasonal board.
//   BM_SeasonalRollover/members:<N>/warm:<0|1>
//       One rollover of a daily board whose ending period holds N members
//       (1,000 and 1,000,000, 16 partitions) in a LeaderboardRegistry:
//       the new period's board created, the ended board's top 10 read, the
//       period older than the one kept dropped. The ending board is filled
//       and the retired boards freed with the timer paused. With warm:1 the
//       board's top 10 is read once more, paused, before the rollover (a
//       board whose leaders players are looking at); with warm:0 the
//       rollover's read of the top is the first since a fill that pushed
//       the top out of the CPU's caches, so it pays for the cache and TLB
//       misses of one descent per partition, which grow with the trees'
//       depth (log n), not with n.
//
// By default each benchmark runs 5 repetitions and reports only the
// aggregates; `--benchmark_*` flags on the command line override that.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/benchmark_main.h"
#include "feedcore/clock.h"
#include "feedcore/leaderboard.h"
#include "feedcore/seasonal_leaderboard.h"

namespace feedcore::bench {
namespace {

constexpr Micros kDay = int64_t{86'400} * 1'000'000;
constexpr Micros kNoon = int64_t{19'723} * kDay + kDay / 2;

std::unique_ptr<SeasonalLeaderboard> NewDaily(
    std::shared_ptr<LeaderboardRegistry> registry,
    std::shared_ptr<ManualClock> clock, size_t* rollovers) {
  SeasonOptions options;
  options.schedule = SeasonSchedule::Daily();
  options.keep_periods = 1;
  options.final_top_k = 10;
  options.on_rollover = [rollovers](const EndedPeriod& ended) {
    if (ended.top.size() != 10 && ended.top.size() != 0) Die("short top");
    ++*rollovers;
  };
  absl::StatusOr<std::unique_ptr<SeasonalLeaderboard>> seasonal =
      SeasonalLeaderboard::Create("bench", options, std::move(registry),
                                  std::move(clock));
  if (!seasonal.ok()) Die(seasonal.status().ToString());
  return *std::move(seasonal);
}

// One seasonal board shared by the threads of BM_SeasonalCurrent.
struct SharedSeasonal {
  SharedSeasonal()
      : clock(std::make_shared<ManualClock>(kNoon)),
        seasonal(NewDaily(std::make_shared<LeaderboardRegistry>(), clock,
                          &rollovers)) {}
  size_t rollovers = 0;
  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<SeasonalLeaderboard> seasonal;
};

void BM_SeasonalCurrent(benchmark::State& state, SharedSeasonal* shared) {
  for (auto _ : state) {
    absl::StatusOr<std::shared_ptr<Leaderboard>> board =
        shared->seasonal->Current();
    benchmark::DoNotOptimize(board);
  }
  state.SetItemsProcessed(state.iterations());
  if (shared->rollovers != 0) Die("a rollover happened with the clock stopped");
}

void BM_SeasonalRollover(benchmark::State& state) {
  const auto members = static_cast<MemberId>(state.range(0));
  const bool warm = state.range(1) != 0;
  std::vector<ScoreIncrement> fill;
  fill.reserve(members);
  std::mt19937_64 rng(20240101);
  for (MemberId m = 0; m < members; ++m) {
    fill.push_back({m, static_cast<int64_t>(rng() % 1'000'000)});
  }
  auto clock = std::make_shared<ManualClock>(kNoon);
  auto registry = std::make_shared<LeaderboardRegistry>();
  size_t rollovers = 0;
  std::unique_ptr<SeasonalLeaderboard> seasonal =
      NewDaily(registry, clock, &rollovers);
  for (auto _ : state) {
    state.PauseTiming();
    seasonal->ReleaseRetired();
    absl::StatusOr<std::shared_ptr<Leaderboard>> board = seasonal->Current();
    if (!board.ok()) Die(board.status().ToString());
    (*board)->IncrementMany(fill);
    if ((*board)->Size().value() != fill.size()) Die("board not filled");
    if (warm && (*board)->TopK(10).value().size() != 10) Die("no top 10");
    clock->Advance(kDay);
    state.ResumeTiming();
    absl::StatusOr<bool> rolled = seasonal->Rollover();
    if (!rolled.ok() || !*rolled) Die("no rollover");
  }
  if (rollovers != static_cast<size_t>(state.iterations())) {
    Die("rollovers not reported");
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["boards_in_registry"] = static_cast<double>(registry->size());
}

void RegisterAll(SharedSeasonal* shared) {
  benchmark::RegisterBenchmark(
      "BM_SeasonalCurrent",
      [shared](benchmark::State& state) { BM_SeasonalCurrent(state, shared); })
      ->Threads(1)
      ->Threads(2);
  // Few iterations: each refills the ending board with the timer paused.
  benchmark::RegisterBenchmark("BM_SeasonalRollover", BM_SeasonalRollover)
      ->ArgNames({"members", "warm"})
      ->ArgsProduct({{1'000, 1'000'000}, {0, 1}})
      ->Iterations(4)
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace
}  // namespace feedcore::bench

int main(int argc, char** argv) {
  if (!feedcore::bench::InitializeWithDefaults(argc, argv)) return 1;
  feedcore::bench::SharedSeasonal shared;
  feedcore::bench::RegisterAll(&shared);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
