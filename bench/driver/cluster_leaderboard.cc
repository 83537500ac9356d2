// The leaderboard scenario on Redis Cluster: what ordering ties by update
// costs (see cluster_leaderboard.h). Both boards have 16 partitions and the
// same members, scores and calls, so they differ only in the tie-break:
// under kEarlierUpdateFirst every write call first takes its update
// sequences (one INCRBY on the board's counter, a round trip to one node),
// and its set members are 16 bytes instead of 8. Scores are drawn from a
// narrow range so that ties are common, as on a real board.
#include "bench/driver/cluster_leaderboard.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "bench/driver/cluster_feed.h"
#include "bench/driver/interleave.h"
#include "bench/driver/report.h"
#include "bench/driver/stats.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "leaderboard";
constexpr size_t kMembers = 10'000;
// About ten members per score.
constexpr int64_t kScoreRange = 1'000;
constexpr size_t kRounds = 10;
constexpr size_t kCallsPerRound = 200;
constexpr size_t kBatch = 1'000;  // elements per IncrementMany
constexpr size_t kBatchesPerRound = 2;
constexpr size_t kTop = 100;

struct ClusterBoard {
  const char* system;
  std::unique_ptr<Leaderboard> board;
};

// Applies `increments` in IncrementMany calls of kBatch; the first failure.
absl::Status IncrementInBatches(Leaderboard& board,
                                absl::Span<const ScoreIncrement> increments) {
  for (size_t at = 0; at < increments.size(); at += kBatch) {
    for (const absl::StatusOr<int64_t>& result :
         board.IncrementMany(increments.subspan(
             at, std::min(kBatch, increments.size() - at)))) {
      if (!result.ok()) return result.status();
    }
  }
  return absl::OkStatus();
}

// Runs `systems` interleaved and reports them as `metric`, with the ratio
// of the update-ordered board to the member-ordered one.
void Measure(RunContext& context, const std::string& metric,
             std::string_view unit, std::vector<SystemUnderTest>& systems) {
  RunInterleaved(context, kScenario, metric, kRounds, systems);
  AddFigures(context, kScenario, metric, unit, systems);
  context.report.Compare(kScenario, metric, kClusterMemberTies,
                         kClusterUpdateTies, std::nullopt);
}

}  // namespace

void RunClusterTieBreaks(RunContext& context, std::mt19937_64& rng) {
  if (!context.redis_cluster.has_value()) return;
  // Opened for its key clean-up only: every key under its prefix,
  // the boards' included, is deleted when it goes.
  absl::StatusOr<std::unique_ptr<ClusterFeed>> keys =
      ClusterFeed::Open(*context.redis_cluster, "leaderboard-ties",
                        ClusterEngineOptions(EngineOptions{}));
  if (!keys.ok()) {
    context.answers.Fail(kScenario, kClusterMemberTies, keys.status());
    return;
  }
  std::vector<ClusterBoard> boards;
  for (const auto& [system, tie_break] :
       {std::pair{kClusterMemberTies, TieBreak::kLowerMemberFirst},
        std::pair{kClusterUpdateTies, TieBreak::kEarlierUpdateFirst}}) {
    absl::StatusOr<std::unique_ptr<Leaderboard>> board =
        OpenClusterBoard(*context.redis_cluster, (*keys)->key_prefix(), system,
                         {.partitions = 16, .tie_break = tie_break});
    if (!board.ok()) {
      context.answers.Fail(kScenario, system, board.status());
      return;
    }
    boards.push_back({system, *std::move(board)});
  }

  std::vector<ScoreIncrement> fill(kMembers);
  for (size_t i = 0; i < kMembers; ++i) {
    fill[i] = {i, static_cast<int64_t>(rng() % kScoreRange)};
  }
  const auto draw = [&rng](size_t count) {
    std::vector<ScoreIncrement> increments(count);
    for (ScoreIncrement& increment : increments) {
      increment = {rng() % kMembers, 1 + static_cast<int64_t>(rng() % 3)};
    }
    return increments;
  };
  const std::vector<ScoreIncrement> singles = draw(kRounds * kCallsPerRound);
  const std::vector<ScoreIncrement> batched =
      draw(kRounds * kBatchesPerRound * kBatch);
  std::vector<MemberId> asked(kRounds * kCallsPerRound);
  for (MemberId& member : asked) member = rng() % kMembers;

  for (ClusterBoard& board : boards) {
    if (absl::Status s = IncrementInBatches(*board.board, fill); !s.ok()) {
      context.answers.Fail(kScenario, board.system, s);
      return;
    }
  }

  {
    std::vector<SystemUnderTest> systems;
    for (ClusterBoard& board : boards) {
      Leaderboard* b = board.board.get();
      systems.push_back(
          {board.system,
           [b, &singles](size_t round,
                         std::vector<double>& samples) -> absl::Status {
             for (size_t i = round * kCallsPerRound;
                  i < (round + 1) * kCallsPerRound; ++i) {
               const auto start = Stopwatch::now();
               absl::StatusOr<int64_t> score =
                   b->Increment(singles[i].member, singles[i].delta);
               samples.push_back(MicrosSince(start));
               if (!score.ok()) return score.status();
             }
             return absl::OkStatus();
           },
           {},
           false});
    }
    Measure(context, "cluster Increment, by tie-break", "us", systems);
  }

  {
    std::vector<SystemUnderTest> systems;
    for (ClusterBoard& board : boards) {
      Leaderboard* b = board.board.get();
      systems.push_back(
          {board.system,
           [b, &batched](size_t round,
                         std::vector<double>& samples) -> absl::Status {
             for (size_t j = 0; j < kBatchesPerRound; ++j) {
               const absl::Span<const ScoreIncrement> batch =
                   absl::MakeConstSpan(batched).subspan(
                       (round * kBatchesPerRound + j) * kBatch, kBatch);
               const auto start = Stopwatch::now();
               absl::Status status = IncrementInBatches(*b, batch);
               samples.push_back(MicrosSince(start) * 1000.0 / kBatch);
               if (!status.ok()) return status;
             }
             return absl::OkStatus();
           },
           {},
           false});
    }
    Measure(context,
            absl::StrCat("cluster IncrementMany of ", kBatch,
                         ", per element, by tie-break"),
            "ns/op", systems);
  }

  {
    std::vector<SystemUnderTest> systems;
    for (ClusterBoard& board : boards) {
      Leaderboard* b = board.board.get();
      systems.push_back({board.system,
                         [b, &asked](size_t round, std::vector<double>& samples)
                             -> absl::Status {
                           for (size_t i = round * kCallsPerRound;
                                i < (round + 1) * kCallsPerRound; ++i) {
                             const auto start = Stopwatch::now();
                             absl::StatusOr<uint64_t> rank = b->Rank(asked[i]);
                             samples.push_back(MicrosSince(start));
                             if (!rank.ok()) return rank.status();
                           }
                           return absl::OkStatus();
                         },
                         {},
                         false});
    }
    Measure(context, "cluster Rank, by tie-break", "us", systems);
  }

  // The same calls leave the same scores; only the order of ties differs.
  std::vector<std::vector<int64_t>> tops;
  for (ClusterBoard& board : boards) {
    absl::StatusOr<std::vector<LeaderboardEntry>> top = board.board->TopK(kTop);
    if (!top.ok()) {
      context.answers.Fail(kScenario, board.system, top.status());
      return;
    }
    std::vector<int64_t>& scores = tops.emplace_back();
    for (const LeaderboardEntry& entry : *top) scores.push_back(entry.score);
  }
  context.answers.Check(kScenario, "cluster top-100 scores, by tie-break",
                        kClusterUpdateTies, tops[0], tops[1]);
  boards.clear();  // before the keys go
}

}  // namespace feedcore::bench
