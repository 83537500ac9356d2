// leaderboard: `members` members with random initial scores in
// [0, score_range), then
//   * increments of uniformly chosen members, and of Zipf-chosen members
//     (a few hot members get most updates), in batches of
//     `redis_pipeline` (one pipelined round trip for Redis); the figure is
//     time per increment, one sample per batch;
//   * TopK(100) (Redis: ZRANGE lb 0 99 REV WITHSCORES), one sample a call;
//   * Rank of a random member (Redis: ZREVRANK), one sample a call.
// Answers compared: the top 100 (members and scores) after each phase and
// every rank. Ties: feedcore orders equal scores by lower member id
// (TieBreak::kLowerMemberFirst); Redis orders them by member string, so
// its member names are fixed-width decimal strings of (10^w - 1 - member)
// and REV order puts the lower member first too.
#include "feedcore/leaderboard.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/driver/interleave.h"
#include "bench/driver/leaderboard_baseline.h"
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

struct Increment {
  MemberId member;
  int64_t delta;
};

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

  // Initial scores, untimed.
  std::mt19937_64 rng(options.seed);
  for (MemberId member = 0; member < options.members; ++member) {
    const int64_t score = static_cast<int64_t>(
        rng() % static_cast<uint64_t>(options.score_range));
    if (absl::Status s = board.Set(member, score); !s.ok()) {
      context.answers.Fail(kScenario, kFeedcore, s);
      return;
    }
    std_map.Increment(member, score);
    if (redis.has_value()) {
      redis->QueueIncrement(member, score);
      if (redis_client->pending() >= options.redis_pipeline) {
        if (absl::Status s = redis->Flush(); !s.ok()) {
          context.answers.Fail(kScenario, kRedis, s);
          redis.reset();
        }
      }
    }
    if (member % 8192 == 0) {
      context.progress.Update(kScenario, "adding members", member,
                              options.members);
    }
  }
  if (redis.has_value()) {
    if (absl::Status s = redis->Flush(); !s.ok()) {
      context.answers.Fail(kScenario, kRedis, s);
      redis.reset();
    }
  }

  auto check_top = [&](const std::string& when) {
    absl::StatusOr<std::vector<LeaderboardEntry>> top = board.TopK(kTopK);
    if (!top.ok()) {
      context.answers.Fail(kScenario, kFeedcore, top.status());
      return;
    }
    const TopAnswer expected = Flatten(*top);
    const std::string question = absl::StrCat("top ", kTopK, " ", when);
    context.answers.Check(kScenario, question, kStdMapMutex, expected,
                          Flatten(std_map.TopK(kTopK)));
    if (redis.has_value()) {
      absl::StatusOr<TopAnswer> answer = redis->TopK(kTopK);
      if (!answer.ok()) {
        context.answers.Fail(kScenario, kRedis, answer.status());
        return;
      }
      context.answers.Check(kScenario, question, kRedis, expected, *answer);
    }
  };
  check_top("after adding members");

  // Increments: uniform, then Zipf-skewed.
  const size_t batch = std::max<size_t>(1, options.redis_pipeline);
  const ZipfSampler zipf(options.members, options.zipf_exponent);
  for (const bool skewed : {false, true}) {
    std::vector<Increment> increments(options.increments);
    for (Increment& inc : increments) {
      inc.member = skewed ? zipf(rng) : rng() % options.members;
      inc.delta = 1 + static_cast<int64_t>(rng() % kMaxDelta);
    }
    const size_t batches = (increments.size() + batch - 1) / batch;
    const size_t rounds = std::min(kRounds, batches);
    // Runs the batches of round `round`, one ns/op sample per batch.
    auto batched = [&](auto&& apply_batch) {
      return [&, apply_batch](size_t round,
                              std::vector<double>& samples) -> absl::Status {
        const size_t first = batches * round / rounds;
        const size_t last = batches * (round + 1) / rounds;
        for (size_t b = first; b < last; ++b) {
          const size_t begin = b * batch;
          const size_t end = std::min(increments.size(), begin + batch);
          const auto start = Stopwatch::now();
          absl::Status status = apply_batch(begin, end);
          samples.push_back(MicrosSince(start) * 1000.0 /
                            static_cast<double>(end - begin));
          if (!status.ok()) return status;
        }
        return absl::OkStatus();
      };
    };
    std::vector<SystemUnderTest> systems;
    systems.push_back({kFeedcore,
                       batched([&](size_t begin, size_t end) {
                         for (size_t i = begin; i < end; ++i) {
                           absl::StatusOr<int64_t> score = board.Increment(
                               increments[i].member, increments[i].delta);
                           if (!score.ok()) return score.status();
                         }
                         return absl::OkStatus();
                       }),
                       {},
                       false});
    if (redis.has_value()) {
      systems.push_back({kRedis,
                         batched([&](size_t begin, size_t end) {
                           for (size_t i = begin; i < end; ++i) {
                             redis->QueueIncrement(increments[i].member,
                                                   increments[i].delta);
                           }
                           return redis->Flush();
                         }),
                         {},
                         false});
    }
    systems.push_back({kStdMapMutex,
                       batched([&](size_t begin, size_t end) {
                         for (size_t i = begin; i < end; ++i) {
                           std_map.Increment(increments[i].member,
                                             increments[i].delta);
                         }
                         return absl::OkStatus();
                       }),
                       {},
                       false});
    const std::string kind = skewed ? "zipf" : "uniform";
    RunInterleaved(context, kScenario, absl::StrCat("increments (", kind, ")"),
                   rounds, systems);
    AddFigures(context, kScenario, absl::StrCat("increment, ", kind), "ns/op",
               systems, /*redis_target=*/20.0);
    if (redis.has_value() && systems[1].failed) redis.reset();
    check_top(absl::StrCat("after ", kind, " increments"));
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
}

}  // namespace feedcore::bench
