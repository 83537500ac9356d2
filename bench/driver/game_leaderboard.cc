// game-leaderboard: what a game server asks of a board beyond increments,
// on `members` members with random initial scores in [0, score_range):
//   * keep-best writes in batches of `redis_pipeline` (a match's results):
//     Leaderboard::WriteMany with WriteCondition::kIfBetter, Redis
//     pipelined `ZADD GT`, and the std::map baseline under one lock; the
//     figure is time per write, one sample per batch;
//   * a deep page: the 10 entries at ranks members - 10 .. members - 1
//     (ReadPage with an offset; Redis `ZRANGE lb <offset> <offset + 9> REV`;
//     the baseline walks its set to the offset, so it answers only
//     `baseline_rank_calls` of them);
//   * the members within a random score window of 1% of the score range
//     (CountInRange; Redis ZCOUNT);
//   * a friends' board: the best 10 of 300 random members (TopKAmong;
//     Redis ZMSCORE of the 300 and a sort in the client; the baseline looks
//     the 300 up under its lock and sorts);
//   * a member's percentile (Percentile; Redis ZREVRANK and ZCARD in one
//     round trip).
// Answers compared: the top 100 after the writes, every page, count,
// friends' top and percentile. Ties: as in the leaderboard scenario,
// kLowerMemberFirst on feedcore and fixed-width inverted names on Redis.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "bench/driver/interleave.h"
#include "bench/driver/leaderboard_baseline.h"
#include "bench/driver/leaderboard_fill.h"
#include "bench/driver/redis_member_names.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/workload.h"
#include "feedcore/leaderboard.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "game-leaderboard";
constexpr char kKey[] = "games";
constexpr size_t kRounds = 10;
constexpr size_t kPageSize = 10;
constexpr size_t kFriends = 300;
constexpr size_t kFriendsTop = 10;
constexpr size_t kCallsPerRound = 200;

// Flattened (member, score) pairs, or counts: what is compared.
using Answer = std::vector<int64_t>;

Answer Flatten(const std::vector<LeaderboardEntry>& entries) {
  Answer answer;
  for (const LeaderboardEntry& e : entries) {
    answer.push_back(static_cast<int64_t>(e.member));
    answer.push_back(e.score);
  }
  return answer;
}

class RedisGameBoard {
 public:
  RedisGameBoard(RedisClient& client, size_t members)
      : client_(client), names_(members) {}

  void QueueIncrement(MemberId member, int64_t delta) {
    client_.Append({"ZINCRBY", kKey, absl::StrCat(delta), names_.Name(member)});
  }
  absl::Status Flush() { return client_.Flush(); }

  // One pipelined round trip for the whole batch.
  absl::Status KeepBest(absl::Span<const ScoreWrite> writes) {
    for (const ScoreWrite& w : writes) {
      client_.Append(
          {"ZADD", kKey, "GT", absl::StrCat(w.value), names_.Name(w.member)});
    }
    return client_.Flush();
  }

  absl::StatusOr<Answer> Range(uint64_t first, uint64_t last) {
    absl::StatusOr<RedisReply> reply =
        client_.Command({"ZRANGE", kKey, absl::StrCat(first),
                         absl::StrCat(last), "REV", "WITHSCORES"});
    if (!reply.ok()) return reply.status();
    return Pairs(*reply, "ZRANGE");
  }

  absl::StatusOr<int64_t> Count(int64_t min, int64_t max) {
    absl::StatusOr<RedisReply> reply =
        client_.Command({"ZCOUNT", kKey, absl::StrCat(min), absl::StrCat(max)});
    if (!reply.ok()) return reply.status();
    return reply->integer;
  }

  // ZMSCORE of `members`, then the best `k` sorted in the client.
  absl::StatusOr<Answer> TopAmong(absl::Span<const MemberId> members,
                                  size_t k) {
    std::vector<std::string> args = {"ZMSCORE", kKey};
    for (MemberId m : members) args.push_back(names_.Name(m));
    std::vector<std::string_view> views(args.begin(), args.end());
    absl::StatusOr<RedisReply> reply = client_.Command(views);
    if (!reply.ok()) return reply.status();
    std::vector<std::pair<int64_t, MemberId>> found;  // (-score, member)
    for (size_t i = 0; i < reply->elements.size() && i < members.size(); ++i) {
      double score = 0;
      if (absl::SimpleAtod(reply->elements[i].text, &score)) {
        found.emplace_back(-static_cast<int64_t>(score), members[i]);
      }
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    Answer answer;
    for (size_t i = 0; i < found.size() && i < k; ++i) {
      answer.push_back(static_cast<int64_t>(found[i].second));
      answer.push_back(-found[i].first);
    }
    return answer;
  }

  // ZREVRANK and ZCARD in one round trip: the members ranked below.
  absl::StatusOr<int64_t> Below(MemberId member) {
    client_.Append({"ZREVRANK", kKey, names_.Name(member)});
    client_.Append({"ZCARD", kKey});
    std::vector<RedisReply> replies;
    if (absl::Status s = client_.Flush(&replies); !s.ok()) return s;
    if (replies.size() != 2) return absl::InternalError("two replies expected");
    return replies[1].integer - 1 - replies[0].integer;
  }

 private:
  absl::StatusOr<Answer> Pairs(const RedisReply& reply, const char* what) {
    Answer answer;
    for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
      MemberId member = 0;
      double score = 0;
      if (!names_.Parse(reply.elements[i].text, &member) ||
          !absl::SimpleAtod(reply.elements[i + 1].text, &score)) {
        return absl::InternalError(absl::StrCat("unexpected ", what, " reply"));
      }
      answer.push_back(static_cast<int64_t>(member));
      answer.push_back(static_cast<int64_t>(score));
    }
    return answer;
  }

  RedisClient& client_;
  const RedisMemberNames names_;
};

// A system that makes `calls_per_round` calls of `call(i)` per round, one
// sample each, keeping the answers of the calls it made.
template <typename Call>
SystemUnderTest PerCall(std::string name, size_t calls_per_round,
                        std::vector<Answer>& answers, Call call) {
  return {std::move(name),
          [calls_per_round, &answers, call](
              size_t round, std::vector<double>& samples) -> absl::Status {
            for (size_t i = round * calls_per_round;
                 i < (round + 1) * calls_per_round && i < answers.size(); ++i) {
              const auto start = Stopwatch::now();
              absl::StatusOr<Answer> answer = call(i);
              samples.push_back(MicrosSince(start));
              if (!answer.ok()) return answer.status();
              answers[i] = *std::move(answer);
            }
            return absl::OkStatus();
          },
          {},
          false};
}

// Compares every answer a system gave with feedcore's.
void CheckAnswers(RunContext& context, const std::string& what,
                  const std::string& system, const SystemUnderTest& run,
                  const std::vector<Answer>& expected,
                  const std::vector<Answer>& answers) {
  if (run.failed) return;
  std::vector<int64_t> want, got;
  for (size_t i = 0; i < answers.size(); ++i) {
    if (answers[i].empty() && !expected[i].empty()) continue;  // not asked
    want.insert(want.end(), expected[i].begin(), expected[i].end());
    got.insert(got.end(), answers[i].begin(), answers[i].end());
  }
  context.answers.Check(kScenario, what, system, want, got);
}

// Runs one read step on every system and reports and checks it.
struct ReadStep {
  std::string metric;
  size_t baseline_calls_per_round;  // 0: the baseline is not run
  std::function<absl::StatusOr<Answer>(size_t)> feedcore;
  std::function<absl::StatusOr<Answer>(size_t)> redis;
  std::function<absl::StatusOr<Answer>(size_t)> baseline;
};

void RunReadStep(RunContext& context, const ReadStep& step, bool with_redis) {
  const size_t calls = kCallsPerRound * kRounds;
  std::vector<Answer> feedcore(calls), redis(calls), baseline(calls);
  std::vector<SystemUnderTest> systems;
  systems.push_back(
      PerCall(kFeedcore, kCallsPerRound, feedcore, step.feedcore));
  if (with_redis) {
    systems.push_back(PerCall(kRedis, kCallsPerRound, redis, step.redis));
  }
  if (step.baseline_calls_per_round > 0) {
    systems.push_back(PerCall(kStdMapMutex, step.baseline_calls_per_round,
                              baseline, step.baseline));
  }
  RunInterleaved(context, kScenario, step.metric, kRounds, systems);
  size_t s = 1;
  if (with_redis) {
    CheckAnswers(context, step.metric, kRedis, systems[s++], feedcore, redis);
  }
  if (step.baseline_calls_per_round > 0) {
    CheckAnswers(context, step.metric, kStdMapMutex, systems[s], feedcore,
                 baseline);
  }
  AddFigures(context, kScenario, step.metric, "us", systems);
}

}  // namespace

void RunGameLeaderboard(RunContext& context) {
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
  std::optional<RedisGameBoard> redis;
  if (redis_client != nullptr) redis.emplace(*redis_client, options.members);

  std::mt19937_64 rng(options.seed + 1);
  if (!FillBoards(context, kScenario, rng, board, std_map, redis_client.get(),
                  redis)) {
    return;
  }
  const auto random_score = [&] {
    return static_cast<int64_t>(rng() %
                                static_cast<uint64_t>(options.score_range));
  };

  // Keep-best writes: a new score replaces the old one only when higher.
  {
    const size_t batch = std::max<size_t>(1, options.redis_pipeline);
    std::vector<ScoreWrite> writes(options.increments);
    for (ScoreWrite& w : writes) {
      w.member = rng() % options.members;
      w.value = random_score() + options.score_range / 2;
      w.condition = WriteCondition::kIfBetter;
    }
    const size_t batches = (writes.size() + batch - 1) / batch;
    const size_t rounds = std::min(kRounds, batches);
    const auto timed = [&](auto apply) {
      return [&, apply](size_t round,
                        std::vector<double>& samples) -> absl::Status {
        for (size_t b = batches * round / rounds;
             b < batches * (round + 1) / rounds; ++b) {
          const absl::Span<const ScoreWrite> part =
              absl::MakeConstSpan(writes).subspan(b * batch, batch);
          const auto start = Stopwatch::now();
          absl::Status status = apply(part);
          samples.push_back(MicrosSince(start) * 1000.0 /
                            static_cast<double>(part.size()));
          if (!status.ok()) return status;
        }
        return absl::OkStatus();
      };
    };
    std::vector<SystemUnderTest> systems;
    systems.push_back({kFeedcore,
                       timed([&](absl::Span<const ScoreWrite> part) {
                         for (const absl::StatusOr<WriteResult>& r :
                              board.WriteMany(part)) {
                           if (!r.ok()) return r.status();
                         }
                         return absl::OkStatus();
                       }),
                       {},
                       false});
    if (redis.has_value()) {
      systems.push_back({kRedis,
                         timed([&](absl::Span<const ScoreWrite> part) {
                           return redis->KeepBest(part);
                         }),
                         {},
                         false});
    }
    systems.push_back({kStdMapMutex,
                       timed([&](absl::Span<const ScoreWrite> part) {
                         std_map.KeepBestMany(part);
                         return absl::OkStatus();
                       }),
                       {},
                       false});
    RunInterleaved(context, kScenario, "keep-best writes", rounds, systems);
    AddFigures(context, kScenario,
               absl::StrCat("keep-best write batch of ", batch), "ns/op",
               systems);
    if (redis.has_value() && systems[1].failed) redis.reset();

    absl::StatusOr<std::vector<LeaderboardEntry>> top = board.TopK(100);
    if (!top.ok()) {
      context.answers.Fail(kScenario, kFeedcore, top.status());
      return;
    }
    std::vector<int64_t> baseline_top;
    for (const auto& [member, score] : std_map.TopK(100)) {
      baseline_top.push_back(static_cast<int64_t>(member));
      baseline_top.push_back(score);
    }
    context.answers.Check(kScenario, "top 100 after keep-best writes",
                          kStdMapMutex, Flatten(*top), baseline_top);
    if (redis.has_value()) {
      absl::StatusOr<Answer> redis_top = redis->Range(0, 99);
      if (redis_top.ok()) {
        context.answers.Check(kScenario, "top 100 after keep-best writes",
                              kRedis, Flatten(*top), *redis_top);
      }
    }
  }

  const size_t calls = kCallsPerRound * kRounds;
  const size_t baseline_per_round =
      std::max<size_t>(1, options.baseline_rank_calls / kRounds);
  const uint64_t deep =
      options.members > kPageSize ? options.members - kPageSize : 0;

  RunReadStep(
      context,
      {absl::StrCat("page of ", kPageSize, " at rank ", deep),
       baseline_per_round,
       [&](size_t) -> absl::StatusOr<Answer> {
         LeaderboardReadOptions read;
         read.limit = kPageSize;
         read.offset = deep;
         absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
         if (!page.ok()) return page.status();
         return Flatten(page->entries);
       },
       [&](size_t) { return redis->Range(deep, deep + kPageSize - 1); },
       [&](size_t) -> absl::StatusOr<Answer> {
         Answer answer;
         for (const auto& [member, score] : std_map.Page(deep, kPageSize)) {
           answer.push_back(static_cast<int64_t>(member));
           answer.push_back(score);
         }
         return answer;
       }},
      redis.has_value());

  std::vector<std::pair<int64_t, int64_t>> windows(calls);
  for (auto& [min, max] : windows) {
    min = random_score();
    max = min + options.score_range / 100;
  }
  RunReadStep(context,
              {"count in a score window",
               0,
               [&](size_t i) -> absl::StatusOr<Answer> {
                 absl::StatusOr<uint64_t> count = board.CountInRange(ScoreRange{
                     .min = windows[i].first, .max = windows[i].second});
                 if (!count.ok()) return count.status();
                 return Answer{static_cast<int64_t>(*count)};
               },
               [&](size_t i) -> absl::StatusOr<Answer> {
                 absl::StatusOr<int64_t> count =
                     redis->Count(windows[i].first, windows[i].second);
                 if (!count.ok()) return count.status();
                 return Answer{*count};
               },
               {}},
              redis.has_value());

  std::vector<std::vector<MemberId>> friends(calls);
  for (std::vector<MemberId>& set : friends) {
    set.resize(kFriends);
    for (MemberId& m : set) m = rng() % options.members;
  }
  RunReadStep(
      context,
      {absl::StrCat("best ", kFriendsTop, " of ", kFriends, " friends"),
       kCallsPerRound,
       [&](size_t i) -> absl::StatusOr<Answer> {
         absl::StatusOr<std::vector<LeaderboardEntry>> top =
             board.TopKAmong(friends[i], kFriendsTop);
         if (!top.ok()) return top.status();
         return Flatten(*top);
       },
       [&](size_t i) { return redis->TopAmong(friends[i], kFriendsTop); },
       [&](size_t i) -> absl::StatusOr<Answer> {
         Answer answer;
         for (const auto& [member, score] :
              std_map.TopAmong(friends[i], kFriendsTop)) {
           answer.push_back(static_cast<int64_t>(member));
           answer.push_back(score);
         }
         return answer;
       }},
      redis.has_value());

  std::vector<MemberId> asked(calls);
  for (MemberId& m : asked) m = rng() % options.members;
  const double members = static_cast<double>(options.members);
  RunReadStep(
      context,
      {"percentile",
       0,
       [&](size_t i) -> absl::StatusOr<Answer> {
         absl::StatusOr<double> percentile = board.Percentile(asked[i]);
         if (!percentile.ok()) return percentile.status();
         // Back to the count of members below, which Redis answers exactly.
         return Answer{static_cast<int64_t>(*percentile * members / 100 + 0.5)};
       },
       [&](size_t i) -> absl::StatusOr<Answer> {
         absl::StatusOr<int64_t> below = redis->Below(asked[i]);
         if (!below.ok()) return below.status();
         return Answer{*below};
       },
       {}},
      redis.has_value());
}

}  // namespace feedcore::bench
