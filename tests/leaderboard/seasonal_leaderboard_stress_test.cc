// Concurrency test of SeasonalLeaderboard, run under ThreadSanitizer in CI:
// writers take Current() and increment it while the main thread moves a
// ManualClock across period boundaries, so that rollovers happen inside
// the writers' calls, racing each other and a reader of the periods. Every
// write must land in exactly the board Current() returned, each board must
// end with the sum of the writes made to it, and every period that was
// current but the last must be reported once.
//
// Iteration counts are fixed (scaled by FEEDCORE_STRESS_SCALE, default 1);
// nothing waits on time. The clock and the writers move in step: the clock
// passes boundary b once the writers have made b phases of writes, and a
// writer starts phase b only when the clock is at most half a phase behind,
// so that every boundary is crossed while writers are calling Current().
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/clock.h"
#include "feedcore/leaderboard.h"
#include "feedcore/seasonal_leaderboard.h"
#include "support/test_util.h"
#include "support/thread_failures.h"

namespace feedcore {
namespace {

using testing::Failures;

constexpr Micros kDay = int64_t{86'400} * 1'000'000;
constexpr int kWriters = 4;
constexpr int kMembersPerWriter = 50;
constexpr int kBoundaries = 100;

TEST_CASE("writers across rollovers: every write lands in one period") {
  // Writes per writer and phase.
  const int64_t phase =
      static_cast<int64_t>(40 * testing::EnvU64("FEEDCORE_STRESS_SCALE", 1));
  const int64_t writes_per_writer = phase * (kBoundaries + 1);
  auto clock = std::make_shared<ManualClock>(19'723 * kDay);
  auto registry = std::make_shared<LeaderboardRegistry>();
  SeasonOptions options;
  options.keep_periods = kMaxKeptPeriods;
  options.final_top_k = 5;
  options.board.partitions = 4;
  std::mutex reports_mu;
  std::multiset<PeriodId> reported;
  options.on_rollover = [&](const EndedPeriod& ended) {
    std::lock_guard<std::mutex> lock(reports_mu);
    reported.insert(ended.period.id);
  };
  auto seasonal =
      SeasonalLeaderboard::Create("stress", options, registry, clock);
  REQUIRE_MESSAGE(seasonal.ok(), seasonal.status());

  Failures failures;
  std::atomic<int64_t> writes_done{0};
  std::atomic<int64_t> boundaries_passed{0};
  std::atomic<bool> writing{true};
  // Per writer: board -> the sum of the increments it made there.
  std::vector<std::map<const Leaderboard*, int64_t>> tallies(kWriters);
  // Handles keep each board's address unique while the tallies name it.
  std::vector<std::vector<std::shared_ptr<Leaderboard>>> held(kWriters);

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int64_t i = 0; i < writes_per_writer; ++i) {
        while (boundaries_passed.load(std::memory_order_acquire) <
               (i - phase / 2) / phase) {
          std::this_thread::yield();
        }
        absl::StatusOr<std::shared_ptr<Leaderboard>> board =
            (*seasonal)->Current();
        if (!board.ok()) {
          failures.Check(board.status(), "Current");
          break;
        }
        const MemberId member = w * kMembersPerWriter + i % kMembersPerWriter;
        const int64_t delta = 1 + i % 7;
        failures.Check((*board)->Increment(member, delta).status(),
                       "Increment");
        int64_t& tally = tallies[w][board->get()];
        if (tally == 0) held[w].push_back(*board);
        tally += delta;
        writes_done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  threads.emplace_back([&] {
    while (writing.load(std::memory_order_relaxed)) {
      const std::vector<PeriodId> ids = (*seasonal)->Periods();
      if (ids.empty()) failures.Add("Periods() listed no current period");
      for (PeriodId id : ids) {
        if (!(*seasonal)->Period(id).ok()) failures.Add("Period(listed id)");
      }
      (*seasonal)->ReleaseRetired();
    }
  });

  for (int64_t boundary = 1; boundary <= kBoundaries; ++boundary) {
    while (writes_done.load(std::memory_order_relaxed) <
           boundary * phase * kWriters) {
      std::this_thread::yield();
    }
    clock->Advance(kDay);
    boundaries_passed.store(boundary, std::memory_order_release);
  }
  for (int w = 0; w < kWriters; ++w) threads[w].join();
  writing.store(false, std::memory_order_relaxed);
  threads.back().join();
  failures.Report();

  // Each board holds exactly what was written to it.
  std::map<const Leaderboard*, int64_t> expected;
  for (const auto& tally : tallies) {
    for (const auto& [board, sum] : tally) expected[board] += sum;
  }
  const std::vector<PeriodId> periods = (*seasonal)->Periods();
  int64_t written = 0;
  for (int w = 0; w < kWriters; ++w) {
    for (const auto& [board, sum] : tallies[w]) written += sum;
  }
  int64_t found = 0;
  size_t boards_written = 0;
  for (PeriodId id : periods) {
    CAPTURE(id);
    std::shared_ptr<Leaderboard> board = (*seasonal)->Period(id).value();
    const std::vector<LeaderboardEntry> entries =
        board->TopK(board->options().max_page_size).value();
    int64_t sum = 0;
    for (const LeaderboardEntry& e : entries) sum += e.score;
    const auto it = expected.find(board.get());
    CHECK(sum == (it == expected.end() ? 0 : it->second));
    if (it != expected.end()) ++boards_written;
    found += sum;
  }
  CHECK(boards_written == expected.size());
  CHECK(found == written);
  // Every period that was current and then ended is reported once: all
  // listed periods but the current one.
  std::multiset<PeriodId> ended(periods.begin(), periods.end() - 1);
  CHECK(reported == ended);
  CHECK(periods.back() == 19'723 + kBoundaries);
  // The writers called Current() in every period.
  CHECK(periods.size() == kBoundaries + 1);
}

}  // namespace
}  // namespace feedcore
