// leaderboard: `members` members with random initial scores in
// [0, score_range), then
//   * four phases of `increments` increments each, freshly drawn: uniformly
//     chosen members, then Zipf-chosen members (a few hot members get most
//     updates), each distribution first with one call per increment and
//     then with one call per batch. Batches hold `redis_pipeline`
//     increments; Redis pipelines each batch in one round trip in every
//     phase, its best case. With one call per batch, feedcore applies it
//     with one Leaderboard::IncrementMany and std_map_mutex under one lock
//     acquisition, the in-process analogues of that round trip. The figure
//     is time per increment, one sample per batch;
//   * TopK(100) (Redis: ZRANGE lb 0 99 REV WITHSCORES), one sample a call;
//   * Rank of a random member (Redis: ZREVRANK), one sample a call.
// Answers compared: the top 100 (members and scores) after each phase and
// every rank. On Redis Cluster, what ordering ties by update costs there
// (cluster_leaderboard.h): Increment, IncrementMany and Rank on a board of
// each tie-break. Ties: feedcore orders equal scores by lower member id
// (TieBreak::kLowerMemberFirst); Redis orders them by member string, so
// its member names are fixed-width decimal strings of (10^w - 1 - member)
// and REV order puts the lower member first too.
#include "feedcore/leaderboard.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "bench/driver/cluster_leaderboard.h"
#include "bench/driver/interleave.h"
#include "bench/driver/leaderboard_baseline.h"
#include "bench/driver/leaderboard_fill.h"
#include "bench/driver/redis_member_names.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/workload.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "leaderboard";
constexpr char kKey[] = "lb";
constexpr size_t kTopK = 100;
constexpr size_t kRounds = 10;
constexpr int64_t kMaxDelta = 100;

// Consecutive increments of a phase, applied as one unit (one pipelined
// round trip for Redis).
using Batch = absl::Span<const ScoreIncrement>;

// Flattened (member, score) pairs: the answer compared across systems.
using TopAnswer = std::vector<int64_t>;

class RedisBoard {
 public:
  RedisBoard(RedisClient& client, size_t members)
      : client_(client), names_(members) {}

  void QueueIncrement(MemberId member, int64_t delta) {
    client_.Append({"ZINCRBY", kKey, absl::StrCat(delta), names_.Name(member)});
  }
  absl::Status Flush() { return client_.Flush(); }

  // One pipelined round trip for the whole batch.
  absl::Status IncrementAll(Batch batch) {
    for (const ScoreIncrement& increment : batch) {
      QueueIncrement(increment.member, increment.delta);
    }
    return Flush();
  }

  absl::StatusOr<TopAnswer> TopK(size_t k) {
    absl::StatusOr<RedisReply> reply = client_.Command(
        {"ZRANGE", kKey, "0", absl::StrCat(k - 1), "REV", "WITHSCORES"});
    if (!reply.ok()) return reply.status();
    TopAnswer answer;
    for (size_t i = 0; i + 1 < reply->elements.size(); i += 2) {
      MemberId member = 0;
      double score = 0;
      if (!names_.Parse(reply->elements[i].text, &member) ||
          !absl::SimpleAtod(reply->elements[i + 1].text, &score)) {
        return absl::InternalError("unexpected ZRANGE reply");
      }
      answer.push_back(static_cast<int64_t>(member));
      answer.push_back(static_cast<int64_t>(score));
    }
    return answer;
  }

  absl::StatusOr<int64_t> Rank(MemberId member) {
    absl::StatusOr<RedisReply> reply =
        client_.Command({"ZREVRANK", kKey, names_.Name(member)});
    if (!reply.ok()) return reply.status();
    if (reply->type != RedisReply::Type::kInteger) {
      return absl::NotFoundError(absl::StrCat("no rank for ", member));
    }
    return reply->integer;
  }

 private:
  RedisClient& client_;
  const RedisMemberNames names_;
};

TopAnswer Flatten(const std::vector<LeaderboardEntry>& top) {
  TopAnswer answer;
  for (const LeaderboardEntry& e : top) {
    answer.push_back(static_cast<int64_t>(e.member));
    answer.push_back(e.score);
  }
  return answer;
}

TopAnswer Flatten(const std::vector<std::pair<MemberId, int64_t>>& top) {
  TopAnswer answer;
  for (const auto& [member, score] : top) {
    answer.push_back(static_cast<int64_t>(member));
    answer.push_back(score);
  }
  return answer;
}

// The systems of the scenario. `redis` is empty when Redis does not run or
// a call to it failed.
struct Boards {
  Leaderboard& feedcore;
  StdMapLeaderboard& std_map;
  std::optional<RedisBoard>& redis;
};

// Compares every system's top kTopK with feedcore's.
void CheckTop(RunContext& context, Boards& boards, const std::string& when) {
  absl::StatusOr<std::vector<LeaderboardEntry>> top =
      boards.feedcore.TopK(kTopK);
  if (!top.ok()) {
    context.answers.Fail(kScenario, kFeedcore, top.status());
    return;
  }
  const TopAnswer expected = Flatten(*top);
  const std::string question = absl::StrCat("top ", kTopK, " ", when);
  context.answers.Check(kScenario, question, kStdMapMutex, expected,
                        Flatten(boards.std_map.TopK(kTopK)));
  if (boards.redis.has_value()) {
    absl::StatusOr<TopAnswer> answer = boards.redis->TopK(kTopK);
    if (!answer.ok()) {
      context.answers.Fail(kScenario, kRedis, answer.status());
      return;
    }
    context.answers.Check(kScenario, question, kRedis, expected, *answer);
  }
}

struct IncrementPhase {
  bool skewed = false;  // Zipf-chosen members; else uniform
  // feedcore and std_map_mutex take the batch in one call; else one call
  // per increment. Redis pipelines the batch in one round trip either way.
  bool call_per_batch = false;
};

// Per increment before per batch for each distribution: the first phase
// then draws and applies exactly the increments the scenario applied when
// it had per-increment phases only, which keeps old reports comparable.
constexpr IncrementPhase kIncrementPhases[] = {
    {.skewed = false, .call_per_batch = false},
    {.skewed = false, .call_per_batch = true},
    {.skewed = true, .call_per_batch = false},
    {.skewed = true, .call_per_batch = true},
};

std::string DistributionName(const IncrementPhase& phase) {
  return phase.skewed ? "zipf" : "uniform";
}

// The per-increment phases keep the names they had before the batched
// phases existed, so that reports of earlier runs still compare.
std::string MetricName(const IncrementPhase& phase, size_t batch) {
  if (!phase.call_per_batch) {
    return absl::StrCat("increment, ", DistributionName(phase));
  }
  return absl::StrCat("increment batch of ", batch, ", ",
                      DistributionName(phase));
}

std::string PhaseDescription(const IncrementPhase& phase, size_t batch) {
  if (!phase.call_per_batch) {
    return absl::StrCat(DistributionName(phase), " increments");
  }
  return absl::StrCat(DistributionName(phase), " increments in batches of ",
                      batch);
}

std::vector<ScoreIncrement> DrawIncrements(size_t count, size_t members,
                                           const ZipfSampler& zipf, bool skewed,
                                           std::mt19937_64& rng) {
  std::vector<ScoreIncrement> increments(count);
  for (ScoreIncrement& increment : increments) {
    increment.member = skewed ? zipf(rng) : rng() % members;
    increment.delta = 1 + static_cast<int64_t>(rng() % kMaxDelta);
  }
  return increments;
}

// A phase's increments cut into batches of `batch`, and the batches spread
// over up to kRounds interleaved rounds.
class BatchPlan {
 public:
  BatchPlan(Batch increments, size_t batch)
      : increments_(increments),
        batch_(batch),
        batches_((increments.size() + batch - 1) / batch),
        rounds_(std::min(kRounds, batches_)) {}

  size_t rounds() const { return rounds_; }

  // A system's run: `apply_batch` on each batch of the round, one
  // ns-per-increment sample per batch. The plan must outlive it.
  template <typename ApplyBatch>
  std::function<absl::Status(size_t, std::vector<double>&)> Timed(
      ApplyBatch apply_batch) const {
    return [this, apply_batch](size_t round,
                               std::vector<double>& samples) -> absl::Status {
      const size_t first = batches_ * round / rounds_;
      const size_t last = batches_ * (round + 1) / rounds_;
      for (size_t b = first; b < last; ++b) {
        const Batch batch = increments_.subspan(b * batch_, batch_);
        const auto start = Stopwatch::now();
        absl::Status status = apply_batch(batch);
        samples.push_back(MicrosSince(start) * 1000.0 /
                          static_cast<double>(batch.size()));
        if (!status.ok()) return status;
      }
      return absl::OkStatus();
    };
  }

 private:
  const Batch increments_;
  const size_t batch_;
  const size_t batches_;
  const size_t rounds_;
};

absl::Status IncrementEach(Leaderboard& board, Batch batch) {
  for (const ScoreIncrement& increment : batch) {
    absl::StatusOr<int64_t> score =
        board.Increment(increment.member, increment.delta);
    if (!score.ok()) return score.status();
  }
  return absl::OkStatus();
}

// Every element has a result of its own; one failed element fails the
// batch, as one failed Increment fails a per-increment batch.
absl::Status IncrementAll(Leaderboard& board, Batch batch) {
  const std::vector<absl::StatusOr<int64_t>> scores =
      board.IncrementMany(batch);
  if (scores.size() != batch.size()) {
    return absl::InternalError(absl::StrCat("IncrementMany returned ",
                                            scores.size(), " results for ",
                                            batch.size(), " increments"));
  }
  for (const absl::StatusOr<int64_t>& score : scores) {
    if (!score.ok()) return score.status();
  }
  return absl::OkStatus();
}

SystemUnderTest FeedcoreIncrements(const BatchPlan& plan, Leaderboard& board,
                                   bool call_per_batch) {
  if (call_per_batch) {
    return {kFeedcore,
            plan.Timed(
                [&board](Batch batch) { return IncrementAll(board, batch); }),
            {},
            false};
  }
  return {
      kFeedcore,
      plan.Timed([&board](Batch batch) { return IncrementEach(board, batch); }),
      {},
      false};
}

SystemUnderTest StdMapIncrements(const BatchPlan& plan,
                                 StdMapLeaderboard& std_map,
                                 bool call_per_batch) {
  if (call_per_batch) {
    return {kStdMapMutex,
            plan.Timed([&std_map](Batch batch) {
              std_map.IncrementMany(batch);
              return absl::OkStatus();
            }),
            {},
            false};
  }
  return {kStdMapMutex,
          plan.Timed([&std_map](Batch batch) {
            for (const ScoreIncrement& increment : batch) {
              std_map.Increment(increment.member, increment.delta);
            }
            return absl::OkStatus();
          }),
          {},
          false};
}

// Applies `increments` to every system, interleaved, adds the phase's
// figures and checks the top afterwards.
void RunIncrementPhase(RunContext& context, Boards& boards,
                       const IncrementPhase& phase, Batch increments,
                       size_t batch) {
  const BatchPlan plan(increments, batch);
  std::vector<SystemUnderTest> systems;
  systems.push_back(
      FeedcoreIncrements(plan, boards.feedcore, phase.call_per_batch));
  if (boards.redis.has_value()) {
    RedisBoard& redis = *boards.redis;
    systems.push_back({kRedis,
                       plan.Timed([&redis](Batch batch) {
                         return redis.IncrementAll(batch);
                       }),
                       {},
                       false});
  }
  systems.push_back(
      StdMapIncrements(plan, boards.std_map, phase.call_per_batch));
  const std::string description = PhaseDescription(phase, batch);
  RunInterleaved(context, kScenario, description, plan.rounds(), systems);
  // The increment target compares like with like: Redis's best case is
  // a pipeline of `batch` ZINCRBY per round trip, whose in-process
  // counterpart is one IncrementMany of the same batch. One Increment call
  // per increment is reported beside it, against the same pipeline.
  const std::optional<double> target =
      phase.call_per_batch ? std::optional<double>(20.0) : std::nullopt;
  AddFigures(context, kScenario, MetricName(phase, batch), "ns/op", systems,
             target);
  if (boards.redis.has_value() && systems[1].failed) boards.redis.reset();
  CheckTop(context, boards, absl::StrCat("after ", description));
}

}  // namespace

void RunLeaderboard(RunContext& context) {
  const DriverOptions& options = context.options;
  LeaderboardOptions board_options;
  board_options.tie_break = TieBreak::kLowerMemberFirst;
  absl::StatusOr<std::unique_ptr<Leaderboard>> created =
      Leaderboard::Create(board_options);
  if (!created.ok()) {
    context.answers.Fail(kScenario, kFeedcore, created.status());
    return;
  }
  Leaderboard& board = **created;
  StdMapLeaderboard std_map;
  std::unique_ptr<RedisClient> redis_client = ConnectRedis(context, kScenario);
  std::optional<RedisBoard> redis;
  if (redis_client != nullptr) redis.emplace(*redis_client, options.members);

  std::mt19937_64 rng(options.seed);
  if (!FillBoards(context, kScenario, rng, board, std_map, redis_client.get(),
                  redis)) {
    return;
  }

  Boards boards{board, std_map, redis};
  CheckTop(context, boards, "after adding members");

  const size_t batch = std::max<size_t>(1, options.redis_pipeline);
  const ZipfSampler zipf(options.members, options.zipf_exponent);
  for (const IncrementPhase& phase : kIncrementPhases) {
    const std::vector<ScoreIncrement> increments = DrawIncrements(
        options.increments, options.members, zipf, phase.skewed, rng);
    RunIncrementPhase(context, boards, phase, increments, batch);
  }

  // TopK(100).
  {
    const size_t per_round = std::max<size_t>(1, options.topk_calls / kRounds);
    TopAnswer feedcore_top, redis_top, std_map_top;
    std::vector<SystemUnderTest> systems;
    systems.push_back(
        {kFeedcore,
         [&](size_t, std::vector<double>& samples) -> absl::Status {
           for (size_t i = 0; i < per_round; ++i) {
             const auto start = Stopwatch::now();
             absl::StatusOr<std::vector<LeaderboardEntry>> top =
                 board.TopK(kTopK);
             samples.push_back(MicrosSince(start));
             if (!top.ok()) return top.status();
             if (i == 0) feedcore_top = Flatten(*top);
           }
           return absl::OkStatus();
         },
         {},
         false});
    if (redis.has_value()) {
      systems.push_back(
          {kRedis,
           [&](size_t, std::vector<double>& samples) -> absl::Status {
             for (size_t i = 0; i < per_round; ++i) {
               const auto start = Stopwatch::now();
               absl::StatusOr<TopAnswer> top = redis->TopK(kTopK);
               samples.push_back(MicrosSince(start));
               if (!top.ok()) return top.status();
               if (i == 0) redis_top = *std::move(top);
             }
             return absl::OkStatus();
           },
           {},
           false});
    }
    systems.push_back({kStdMapMutex,
                       [&](size_t, std::vector<double>& samples) {
                         for (size_t i = 0; i < per_round; ++i) {
                           const auto start = Stopwatch::now();
                           auto top = std_map.TopK(kTopK);
                           samples.push_back(MicrosSince(start));
                           if (i == 0) std_map_top = Flatten(top);
                         }
                         return absl::OkStatus();
                       },
                       {},
                       false});
    RunInterleaved(context, kScenario, "top-100", kRounds, systems);
    context.answers.Check(kScenario, "top 100 (timed calls)", kStdMapMutex,
                          feedcore_top, std_map_top);
    if (redis.has_value() && !systems[1].failed) {
      context.answers.Check(kScenario, "top 100 (timed calls)", kRedis,
                            feedcore_top, redis_top);
    }
    AddFigures(context, kScenario, absl::StrCat("top-", kTopK), "us", systems,
               /*redis_target=*/20.0);
  }

  // Rank of random members. The baseline's rank walks the set, O(rank),
  // so it answers only the first `baseline_rank_calls` of them.
  {
    std::vector<MemberId> asked(options.rank_calls);
    for (MemberId& member : asked) member = rng() % options.members;
    const size_t per_round = std::max<size_t>(1, asked.size() / kRounds);
    const size_t baseline_per_round =
        std::max<size_t>(1, options.baseline_rank_calls / kRounds);
    std::vector<int64_t> feedcore_ranks(asked.size(), -1),
        redis_ranks(asked.size(), -1), std_map_ranks(asked.size(), -1);
    auto ranked = [&](std::vector<int64_t>& ranks, size_t calls,
                      auto&& rank_of) {
      return [&, calls, rank_of](size_t round,
                                 std::vector<double>& samples) -> absl::Status {
        for (size_t i = round * per_round;
             i < round * per_round + calls && i < asked.size(); ++i) {
          const auto start = Stopwatch::now();
          absl::StatusOr<int64_t> rank = rank_of(asked[i]);
          samples.push_back(MicrosSince(start));
          if (!rank.ok()) return rank.status();
          ranks[i] = *rank;
        }
        return absl::OkStatus();
      };
    };
    std::vector<SystemUnderTest> systems;
    systems.push_back({kFeedcore,
                       ranked(feedcore_ranks, per_round,
                              [&](MemberId member) -> absl::StatusOr<int64_t> {
                                absl::StatusOr<uint64_t> rank =
                                    board.Rank(member);
                                if (!rank.ok()) return rank.status();
                                return static_cast<int64_t>(*rank);
                              }),
                       {},
                       false});
    if (redis.has_value()) {
      systems.push_back(
          {kRedis,
           ranked(redis_ranks, per_round,
                  [&](MemberId member) { return redis->Rank(member); }),
           {},
           false});
    }
    systems.push_back({kStdMapMutex,
                       ranked(std_map_ranks, baseline_per_round,
                              [&](MemberId member) -> absl::StatusOr<int64_t> {
                                std::optional<uint64_t> rank =
                                    std_map.Rank(member);
                                if (!rank.has_value())
                                  return absl::NotFoundError("absent");
                                return static_cast<int64_t>(*rank);
                              }),
                       {},
                       false});
    RunInterleaved(context, kScenario, "rank", kRounds, systems);
    // Only the ranks every system was asked for are compared.
    std::vector<int64_t> expected, redis_answer, expected_subset,
        std_map_answer;
    for (size_t i = 0; i < asked.size(); ++i) {
      expected.push_back(feedcore_ranks[i]);
      redis_answer.push_back(redis_ranks[i]);
      if (std_map_ranks[i] >= 0) {
        expected_subset.push_back(feedcore_ranks[i]);
        std_map_answer.push_back(std_map_ranks[i]);
      }
    }
    context.answers.Check(kScenario, "ranks of random members", kStdMapMutex,
                          expected_subset, std_map_answer);
    if (redis.has_value() && !systems[1].failed) {
      context.answers.Check(kScenario, "ranks of random members", kRedis,
                            expected, redis_answer);
    }
    AddFigures(context, kScenario, "rank", "us", systems);
  }

  RunClusterTieBreaks(context, rng);
}

}  // namespace feedcore::bench
