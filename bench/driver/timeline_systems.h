// The timeline systems the feed scenarios compare, set up the same way in
// every scenario:
//   * feedcore: a FeedEngine, fan-out on write, no sweeper thread, a manual
//     clock (nothing expires during a run);
//   * feedcore on Redis Cluster (cluster_feed.h): the same options and
//     clock on the Redis Cluster backend;
//   * Redis: one sorted set per timeline (`tl:<owner>`, member = activity
//     id, score = ts), capped with ZREMRANGEBYRANK, activities stored once
//     (`act:<id>`), paged with ZRANGE ... BYSCORE REV LIMIT;
//   * the baselines of bench/baselines.h and merge_on_read_baseline.h.
// Timestamps are unique per activity in every workload, so Redis's score
// order (ties broken by member string) and feedcore's (ts, activity id)
// order agree.
#ifndef FEEDCORE_BENCH_DRIVER_TIMELINE_SYSTEMS_H_
#define FEEDCORE_BENCH_DRIVER_TIMELINE_SYSTEMS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/baselines.h"
#include "bench/driver/redis_client.h"
#include "feedcore/feedcore.h"

namespace feedcore::bench {

inline constexpr Micros kBenchStartTime = 1'700'000'000LL * kMicrosPerSecond;

// Makes `rounds` x `actors` posts, one by each of the actors `first_actor`,
// `first_actor` + 1, ... per round, so that posts interleave across actors
// in time as in a real feed: timestamps from kBenchStartTime on, strictly
// increasing (1..1000 us apart, drawn from `seed`), ids from 1. Hands each
// to `post`; stops at the first error and returns it.
absl::Status PostRoundRobin(
    EntityId first_actor, size_t actors, size_t rounds, uint64_t seed,
    const std::function<absl::Status(const Activity&)>& post);

// What FollowActors did on each engine: the first failure, or OK.
struct FollowOutcome {
  absl::Status in_process;
  absl::Status cluster;
};

// Makes `reader` follow the `count` actors from `first_actor` on, on
// `engine` and, unless null, on `cluster` too (no longer once it fails).
FollowOutcome FollowActors(FeedEngine& engine, FeedEngine* cluster,
                           EntityId reader, EntityId first_actor, size_t count);

struct FeedSetup {
  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<InProcessFeedEngine> engine;
};

// The library's defaults except: `cap` entries per timeline, no back-fill
// (scenarios follow before anything is published), no sweeper thread.
EngineOptions NewEngineOptions(std::shared_ptr<ManualClock> clock, size_t cap);

// An in-process engine with NewEngineOptions on a fresh manual clock.
absl::StatusOr<FeedSetup> NewFeedSetup(size_t cap);

BaselineOptions NewBaselineOptions(std::shared_ptr<ManualClock> clock,
                                   size_t cap);

// Activity ids of a page, in page order: the answer compared across
// systems.
std::vector<int64_t> PageIds(const Page& page);
std::vector<int64_t> PageIds(const BaselinePage& page);

class RedisTimelines {
 public:
  // `pipeline`: commands per round trip for bulk delivery.
  RedisTimelines(RedisClient& client, size_t cap, size_t pipeline);

  // Queues the activity body (stored once) and its delivery into every
  // timeline of `owners`, then waits for every reply: the point at which
  // every owner has it.
  absl::Status Publish(const Activity& activity,
                       absl::Span<const EntityId> owners);

  // Queues one delivery (ZADD + ZREMRANGEBYRANK); round-trips whenever
  // `pipeline` commands are queued. Call Flush to finish.
  absl::Status QueueDelivery(EntityId owner, Micros ts, ActivityId id);
  absl::Status Flush();

  // One page newest first, strictly older than `before_ts` when set.
  // Sets `*next_before` to the last entry's ts when the page is full.
  absl::StatusOr<std::vector<int64_t>> ReadPage(
      EntityId owner, std::optional<Micros> before_ts, size_t limit,
      std::optional<Micros>* next_before);

  RedisClient& client() { return client_; }

 private:
  absl::Status FlushIfFull();

  RedisClient& client_;
  const std::string trim_stop_;  // "-(cap+1)": keeps the newest `cap`
  const size_t pipeline_;
};

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_TIMELINE_SYSTEMS_H_
