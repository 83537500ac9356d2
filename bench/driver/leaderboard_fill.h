// The untimed start of the leaderboard scenarios: every member gets a random
// score on every system.
#ifndef FEEDCORE_BENCH_DRIVER_LEADERBOARD_FILL_H_
#define FEEDCORE_BENCH_DRIVER_LEADERBOARD_FILL_H_

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>

#include "absl/status/status.h"
#include "bench/driver/leaderboard_baseline.h"
#include "bench/driver/redis_client.h"
#include "bench/driver/report.h"
#include "bench/driver/scenario.h"
#include "feedcore/leaderboard.h"

namespace feedcore::bench {

// Gives members 0 .. options.members - 1 scores drawn uniformly from
// [0, options.score_range) by `rng`, on `board`, `std_map` and, when
// `redis` holds a board (any type with QueueIncrement(member, score) and
// Flush()), on Redis in pipelines of options.redis_pipeline commands over
// `client`. A Redis failure is reported and empties `redis`; a feedcore
// failure is reported and returns false.
template <typename RedisBoardType>
bool FillBoards(RunContext& context, std::string_view scenario,
                std::mt19937_64& rng, Leaderboard& board,
                StdMapLeaderboard& std_map, RedisClient* client,
                std::optional<RedisBoardType>& redis) {
  const DriverOptions& options = context.options;
  const auto flush = [&] {
    if (absl::Status s = redis->Flush(); !s.ok()) {
      context.answers.Fail(scenario, kRedis, s);
      redis.reset();
    }
  };
  for (MemberId member = 0; member < options.members; ++member) {
    const int64_t score = static_cast<int64_t>(
        rng() % static_cast<uint64_t>(options.score_range));
    if (absl::Status s = board.Set(member, score); !s.ok()) {
      context.answers.Fail(scenario, kFeedcore, s);
      return false;
    }
    std_map.Increment(member, score);
    if (redis.has_value()) {
      redis->QueueIncrement(member, score);
      if (client->pending() >= options.redis_pipeline) flush();
    }
    if (member % 8192 == 0) {
      context.progress.Update(scenario, "adding members", member,
                              options.members);
    }
  }
  if (redis.has_value()) flush();
  return true;
}

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_LEADERBOARD_FILL_H_
