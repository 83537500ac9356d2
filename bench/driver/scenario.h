// What every scenario gets from the driver: the sizes to run at, where
// Redis and the Redis Cluster are (if they run), and where results and
// answer checks go.
#ifndef FEEDCORE_BENCH_DRIVER_SCENARIO_H_
#define FEEDCORE_BENCH_DRIVER_SCENARIO_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/driver/answer_checker.h"
#include "bench/driver/progress.h"
#include "bench/driver/report.h"

namespace feedcore::bench {

// Sizes and knobs, from the command line (see main.cc for each flag).
struct DriverOptions {
  // celebrity-post
  size_t followers = 210'000;
  size_t celebrity_rounds = 7;
  // timeline-read
  size_t followees = 300;
  size_t posts_per_followee = 100;
  size_t page_size = 50;
  size_t read_passes = 300;
  // mixed-feed
  size_t users = 200'000;
  size_t followees_per_user = 10;
  size_t mixed_ops = 100'000;
  size_t mixed_page_size = 20;
  std::vector<size_t> mixed_threads = {1, 2};
  // leaderboard
  size_t members = 1'000'000;
  // Initial scores are drawn from [0, score_range). A dense range (about
  // one member per score) makes most increments move the member past
  // others; a wide one leaves most increments in place.
  int64_t score_range = 1'000'000;
  size_t increments = 200'000;
  double zipf_exponent = 0.99;
  size_t topk_calls = 2'000;
  size_t rank_calls = 2'000;
  size_t baseline_rank_calls = 50;
  // memory
  size_t memory_entries = 1'000'000;
  size_t memory_per_timeline = 1'000;
  size_t memory_members = 1'000'000;
  size_t memory_edges = 1'000'000;
  // durability
  size_t durability_threads = 4;
  size_t durability_followers = 10;
  size_t durability_rounds = 5;
  size_t durability_ops = 50'000;       // per thread and round
  size_t durability_redis_ops = 5'000;  // Redis everysec
  size_t durability_sync_ops = 500;     // feedcore and Redis always
  std::string durability_dir;           // empty: the temporary directory
  std::string redis_server = "redis-server";
  // replica-wait: its own cluster, started with this script (3 masters
  // with a replica each); rounds of each measurement per system.
  std::string redis_cluster_script = "scripts/redis-cluster";
  size_t replica_wait_followers = 1'000;
  size_t replica_wait_rounds = 15;
  size_t replica_wait_inserts = 200;  // per round
  // change-stream-cluster: followers of the celebrity's and of the
  // ordinary account's timed publishes, rounds of each, XADDs per round of
  // the throughput measurement (`stream_rounds` rounds).
  size_t stream_followers = 210'000;
  size_t stream_rounds = 7;
  size_t stream_small_followers = 300;
  size_t stream_small_rounds = 201;
  size_t stream_xadds = 100'000;
  // grouped-read (also `followees` and `timeline_cap`)
  size_t grouped_rounds = 1000;
  // ranked-read (also `followees` and `timeline_cap`)
  size_t ranked_rounds = 1000;
  // contact-import
  size_t contacts = 2'000;
  size_t contact_posts = 3;
  size_t import_rounds = 9;
  // inactive-readers (also `followers`, `followees` and `page_size`)
  size_t inactive_rounds = 15;
  size_t returning_users = 101;
  size_t returning_posts = 20;
  // edit-and-deliver: the two actors of edit vs publish and its rounds;
  // the actor of the delivery comparison, how many of its followers'
  // timelines the subscription watches, and its rounds.
  size_t edit_followers = 100'000;
  size_t edit_small_followers = 1'000;
  size_t edit_rounds = 51;
  size_t delivery_followers = 10'000;
  size_t delivery_watched = 1'000;
  size_t delivery_rounds = 101;
  // chat-read-state: the reader's channels, messages in each, where its
  // marker is in each (1..chat_messages - 1), rounds.
  size_t chat_channels = 500;
  size_t chat_messages = 40;
  size_t chat_read = 20;
  size_t chat_rounds = 101;
  // reactions (also `followees` and `timeline_cap`): other users'
  // reactions to each post, rounds.
  size_t reaction_crowd = 20;
  size_t reaction_rounds = 1001;
  // filtered-read (also `followees` and `timeline_cap`): rounds of
  // filtered and unfiltered pages.
  size_t filtered_rounds = 1001;
  // all timelines
  size_t timeline_cap = 1'000;
  // Commands per Redis pipeline round trip (Redis's best case needs it);
  // also the leaderboard's increments per batch, so that a batch is one
  // round trip for Redis and one call for feedcore.
  size_t redis_pipeline = 1'000;
  uint64_t seed = 42;
};

// Where the driver's own Redis listens.
struct RedisEndpoint {
  std::string host;
  int port = 0;
};

// The Redis Cluster under "feedcore on Redis Cluster".
struct RedisClusterEndpoint {
  std::vector<std::string> seeds;  // "host:port"
  // Unique to this driver run, so that runs sharing a cluster never meet;
  // each scenario's engine appends its own name.
  std::string key_prefix;
  // RedisClusterOptions::wait_replicas of the engines opened on it.
  size_t wait_replicas = 0;
};

struct RunContext {
  const DriverOptions& options;
  const std::optional<RedisEndpoint>& redis;  // empty: Redis is not compared
  // Empty: feedcore on Redis Cluster is not compared.
  const std::optional<RedisClusterEndpoint>& redis_cluster;
  AnswerChecker& answers;
  Progress& progress;
  Report& report;
};

void RunCelebrityPost(RunContext& context);
void RunTimelineRead(RunContext& context);
void RunMutedRead(RunContext& context);
void RunMixedFeed(RunContext& context);
void RunLeaderboard(RunContext& context);
void RunGameLeaderboard(RunContext& context);
void RunMemory(RunContext& context);
void RunDurability(RunContext& context);
void RunContactImport(RunContext& context);
void RunInactiveReaders(RunContext& context);
void RunReplicaWait(RunContext& context);
void RunChangeStreamCluster(RunContext& context);
void RunGroupedRead(RunContext& context);
void RunRankedRead(RunContext& context);
void RunEditAndDeliver(RunContext& context);
void RunChatReadState(RunContext& context);
void RunReactions(RunContext& context);
void RunFilteredRead(RunContext& context);

// The measuring half of RunMemory, run in a fresh process of this program
// (--memory_child=timelines|graph|leaderboard): builds one structure and prints
// its resident memory growth and feedcore's own byte count. Returns the
// exit status.
int RunMemoryChild(const std::string& kind, const DriverOptions& options);

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_SCENARIO_H_
