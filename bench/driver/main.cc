// feedcore-bench: runs named scenarios against feedcore, Redis and the
// in-process baselines in one process run, checks that every system gave
// the same answers, and prints and writes the figures. The feed scenarios
// and the leaderboard also run feedcore's Redis Cluster backend, on a
// private cluster.
//
//   feedcore-bench [--scenario=all|NAME[,NAME...]] [--small] [--json=FILE]
//                  [--markdown=FILE] [--chart_data=FILE] [--redis=false]
//                  [--redis_cluster=false] [size flags, see --help]
//
// Scenarios: celebrity-post, timeline-read, muted-read, mixed-feed,
// leaderboard, game-leaderboard, memory, durability, contact-import,
// inactive-readers, replica-wait, change-stream-cluster, grouped-read,
// ranked-read, edit-and-deliver, chat-read-state. Exit status: 0 when every
// answer matched, 1 on a mismatch or a failed call, 2 on a bad command line.
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/driver/cluster_feed.h"
#include "bench/driver/local_redis_cluster.h"
#include "bench/driver/redis_client.h"
#include "bench/driver/redis_server.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"

ABSL_FLAG(std::string, scenario, "all",
          "all, or a comma-separated list of: celebrity-post, timeline-read, "
          "mixed-feed, leaderboard, game-leaderboard, memory, durability, "
          "contact-import, inactive-readers, replica-wait, "
          "change-stream-cluster, grouped-read, ranked-read, "
          "edit-and-deliver, chat-read-state");
ABSL_FLAG(bool, small, false,
          "tiny sizes for a smoke test of a few seconds (size flags are "
          "ignored)");
ABSL_FLAG(std::string, json, "", "write every figure as JSON to this file");
ABSL_FLAG(std::string, markdown, "",
          "write the tables of this run as a Markdown page to this file, "
          "replacing it (make bench: docs/benchmark-results.md)");
ABSL_FLAG(std::string, chart_data, "",
          "write the feedcore/Redis ratios for gnuplot to this file");
ABSL_FLAG(bool, redis, true, "compare with a redis-server started here");
ABSL_FLAG(std::string, redis_server, "redis-server",
          "redis-server binary (looked up in PATH)");
// The source tree's scripts/redis-cluster, found wherever the driver runs.
#ifndef FEEDCORE_REDIS_CLUSTER_SCRIPT
#define FEEDCORE_REDIS_CLUSTER_SCRIPT "scripts/redis-cluster"
#endif
ABSL_FLAG(bool, redis_cluster, true,
          "compare with feedcore on a Redis Cluster (celebrity-post, "
          "timeline-read, muted-read, replica-wait, grouped-read, "
          "ranked-read, edit-and-deliver, chat-read-state): a private "
          "cluster started with "
          "--redis_cluster_script, or the one at "
          "--redis_cluster_seeds");
ABSL_FLAG(std::string, redis_cluster_script, FEEDCORE_REDIS_CLUSTER_SCRIPT,
          "script that starts (`start DIR`) and stops (`stop DIR`) the "
          "private cluster");
ABSL_FLAG(std::vector<std::string>, redis_cluster_seeds, {},
          "host:port[,host:port...] of an existing Redis Cluster to use "
          "instead of a private one; only keys under this run's own prefix "
          "(fcbench-<pid>-<time>) are written, and they are deleted after "
          "each scenario");
ABSL_FLAG(std::string, commit, "", "commit id to print with the figures");
ABSL_FLAG(std::string, memory_child, "",
          "internal: measure one structure's memory in this process "
          "(timelines or leaderboard) and print it; used by the memory "
          "scenario");

ABSL_FLAG(size_t, followers, 210'000, "celebrity-post: followers");
ABSL_FLAG(size_t, celebrity_rounds, 7, "celebrity-post: timed publishes");
ABSL_FLAG(size_t, followees, 300, "timeline-read: actors the reader follows");
ABSL_FLAG(size_t, posts_per_followee, 100, "timeline-read: posts per actor");
ABSL_FLAG(size_t, page_size, 50, "timeline-read: entries per page");
ABSL_FLAG(size_t, read_passes, 300,
          "timeline-read: passes through the whole timeline");
ABSL_FLAG(size_t, users, 200'000, "mixed-feed: users");
ABSL_FLAG(size_t, followees_per_user, 10, "mixed-feed: follows per user");
ABSL_FLAG(size_t, mixed_ops, 100'000,
          "mixed-feed: operations per system and thread count");
ABSL_FLAG(size_t, mixed_page_size, 20, "mixed-feed: entries per read");
ABSL_FLAG(std::vector<std::string>, mixed_threads,
          std::vector<std::string>({"1", "2"}), "mixed-feed: thread counts");
ABSL_FLAG(size_t, members, 1'000'000, "leaderboard: members");
ABSL_FLAG(int64_t, score_range, 1'000'000,
          "leaderboard: initial scores are drawn from [0, score_range)");
ABSL_FLAG(size_t, increments, 200'000,
          "leaderboard: increments per phase (uniform, then Zipf members; "
          "each once with one call per increment and once with one call "
          "per batch of --redis_pipeline)");
ABSL_FLAG(double, zipf_exponent, 0.99, "leaderboard: skew of Zipf increments");
ABSL_FLAG(size_t, topk_calls, 2'000, "leaderboard: TopK(100) calls");
ABSL_FLAG(size_t, rank_calls, 2'000, "leaderboard: Rank calls");
ABSL_FLAG(size_t, baseline_rank_calls, 50,
          "leaderboard: Rank calls of the std::map baseline (O(rank) each)");
ABSL_FLAG(size_t, memory_entries, 1'000'000, "memory: timeline entries");
ABSL_FLAG(size_t, memory_per_timeline, 1'000, "memory: entries per timeline");
ABSL_FLAG(size_t, memory_members, 1'000'000, "memory: leaderboard members");
ABSL_FLAG(size_t, memory_edges, 1'000'000, "memory: follow edges");
ABSL_FLAG(size_t, durability_threads, 4,
          "durability: writer threads (concurrent calls share fsyncs)");
ABSL_FLAG(size_t, durability_followers, 10,
          "durability: followers of each publishing actor");
ABSL_FLAG(size_t, durability_rounds, 5, "durability: rounds per system");
ABSL_FLAG(size_t, durability_ops, 50'000,
          "durability: calls per thread and round in memory and with "
          "everysec");
ABSL_FLAG(size_t, durability_redis_ops, 5'000,
          "durability: calls per thread and round on Redis appendfsync "
          "everysec");
ABSL_FLAG(size_t, durability_sync_ops, 500,
          "durability: calls per thread and round with always (feedcore and "
          "Redis)");
ABSL_FLAG(std::string, durability_dir, "",
          "durability: where the stores and Redis's append-only files go "
          "(default: the temporary directory); the disk measured");
ABSL_FLAG(size_t, timeline_cap, 1'000, "entries kept per timeline");
ABSL_FLAG(size_t, redis_pipeline, 1'000,
          "Redis commands per round trip; also the leaderboard's increments "
          "per batch");
ABSL_FLAG(size_t, contacts, 2'000, "contact-import: contacts per import");
ABSL_FLAG(size_t, import_rounds, 9, "contact-import: timed imports");
ABSL_FLAG(size_t, inactive_rounds, 15,
          "inactive-readers: timed publishes to --followers followers");
ABSL_FLAG(size_t, returning_users, 101,
          "inactive-readers: returning users (one timed first page each)");
ABSL_FLAG(size_t, returning_posts, 20,
          "inactive-readers: posts of each of the --followees actors a "
          "returning user follows");
ABSL_FLAG(size_t, replica_wait_followers, 1'000,
          "replica-wait: followers of the timed publishes");
ABSL_FLAG(size_t, replica_wait_rounds, 15,
          "replica-wait: timed rounds per system (a publish and "
          "--replica_wait_inserts inserts each)");
ABSL_FLAG(size_t, replica_wait_inserts, 200,
          "replica-wait: timed single inserts per round");
ABSL_FLAG(size_t, stream_followers, 210'000,
          "change-stream-cluster: followers of the timed publishes");
ABSL_FLAG(size_t, stream_rounds, 7,
          "change-stream-cluster: timed rounds per variant (a publish, or "
          "--stream_xadds XADDs)");
ABSL_FLAG(size_t, stream_small_followers, 300,
          "change-stream-cluster: followers of the ordinary account");
ABSL_FLAG(size_t, stream_small_rounds, 201,
          "change-stream-cluster: timed rounds per variant of the ordinary "
          "account's publish");
ABSL_FLAG(size_t, stream_xadds, 100'000,
          "change-stream-cluster: XADDs per round of the throughput "
          "measurement");
ABSL_FLAG(size_t, grouped_rounds, 1000,
          "grouped-read: rounds of grouped, timeline and notification reads "
          "(then as many of publishes with and without a notification)");
ABSL_FLAG(size_t, ranked_rounds, 1000,
          "ranked-read: rounds of counter calls, ranked pages and timeline "
          "pages");
ABSL_FLAG(size_t, edit_followers, 100'000,
          "edit-and-deliver: followers of the larger actor of edit vs "
          "publish");
ABSL_FLAG(size_t, edit_small_followers, 1'000,
          "edit-and-deliver: followers of the smaller actor of edit vs "
          "publish");
ABSL_FLAG(size_t, edit_rounds, 51,
          "edit-and-deliver: rounds of a Publish and an EditActivity per "
          "actor");
ABSL_FLAG(size_t, delivery_followers, 10'000,
          "edit-and-deliver: followers of the actor publishing with and "
          "without a delivery subscription");
ABSL_FLAG(size_t, delivery_watched, 1'000,
          "edit-and-deliver: of those followers, timelines the subscription "
          "watches");
ABSL_FLAG(size_t, delivery_rounds, 101,
          "edit-and-deliver: timed publishes per engine (--delivery_rounds x "
          "--delivery_watched at most kMaxDeliveryQueueCapacity)");
ABSL_FLAG(size_t, chat_channels, 500,
          "chat-read-state: channels the reader is in");
ABSL_FLAG(size_t, chat_messages, 40, "chat-read-state: messages per channel");
ABSL_FLAG(size_t, chat_read, 20,
          "chat-read-state: the message of each channel the reader's marker "
          "is at (1..--chat_messages - 1)");
ABSL_FLAG(size_t, chat_rounds, 101,
          "chat-read-state: timed reads of the whole read state per system");
ABSL_FLAG(size_t, reaction_crowd, 20,
          "reactions: other users' reactions to each post");
ABSL_FLAG(size_t, reaction_rounds, 1001,
          "reactions: rounds of a page with and without its reactions");
ABSL_FLAG(size_t, filtered_rounds, 1001,
          "filtered-read: rounds of filtered and unfiltered pages");
ABSL_FLAG(uint64_t, seed, 42, "seed of every random workload");

namespace feedcore::bench {
namespace {

struct NamedScenario {
  const char* name;
  void (*run)(RunContext&);
  bool uses_redis_cluster;
};

constexpr NamedScenario kScenarios[] = {
    {"celebrity-post", RunCelebrityPost, true},
    {"timeline-read", RunTimelineRead, true},
    {"muted-read", RunMutedRead, true},
    {"mixed-feed", RunMixedFeed, false},
    {"leaderboard", RunLeaderboard, true},
    {"game-leaderboard", RunGameLeaderboard, false},
    {"memory", RunMemory, false},
    {"durability", RunDurability, false},
    {"contact-import", RunContactImport, false},
    {"inactive-readers", RunInactiveReaders, false},
    {"replica-wait", RunReplicaWait, true},
    {"change-stream-cluster", RunChangeStreamCluster, true},
    {"grouped-read", RunGroupedRead, true},
    {"ranked-read", RunRankedRead, true},
    {"edit-and-deliver", RunEditAndDeliver, true},
    {"chat-read-state", RunChatReadState, true},
    {"reactions", RunReactions, false},
    {"filtered-read", RunFilteredRead, false},
};

DriverOptions SmallOptions() {
  DriverOptions o;
  o.followers = 2'000;
  o.celebrity_rounds = 3;
  o.followees = 30;
  o.posts_per_followee = 40;
  o.read_passes = 5;
  o.users = 2'000;
  o.mixed_ops = 2'000;
  o.members = 10'000;
  o.increments = 5'000;
  o.topk_calls = 50;
  o.rank_calls = 50;
  o.baseline_rank_calls = 20;
  o.memory_entries = 20'000;
  o.memory_per_timeline = 100;
  o.memory_members = 10'000;
  o.memory_edges = 20'000;
  o.timeline_cap = 1'000;
  o.durability_threads = 2;
  o.durability_followers = 5;
  o.durability_rounds = 2;
  o.durability_ops = 300;
  o.durability_redis_ops = 100;
  o.durability_sync_ops = 20;
  o.contacts = 200;
  o.import_rounds = 3;
  o.inactive_rounds = 3;
  o.returning_users = 5;
  o.returning_posts = 5;
  o.redis_server = absl::GetFlag(FLAGS_redis_server);
  o.redis_cluster_script = absl::GetFlag(FLAGS_redis_cluster_script);
  o.replica_wait_rounds = 3;
  o.replica_wait_inserts = 20;
  o.stream_followers = 2'000;
  o.stream_rounds = 3;
  o.stream_small_followers = 50;
  o.stream_small_rounds = 3;
  o.stream_xadds = 2'000;
  o.grouped_rounds = 5;
  o.ranked_rounds = 5;
  o.edit_followers = 2'000;
  o.edit_small_followers = 100;
  o.edit_rounds = 3;
  o.delivery_followers = 500;
  o.delivery_watched = 50;
  o.delivery_rounds = 3;
  o.chat_channels = 20;
  o.chat_messages = 12;
  o.chat_read = 4;
  o.chat_rounds = 3;
  o.reaction_crowd = 3;
  o.reaction_rounds = 3;
  o.filtered_rounds = 3;
  return o;
}

absl::StatusOr<DriverOptions> OptionsFromFlags() {
  if (absl::GetFlag(FLAGS_small)) return SmallOptions();
  DriverOptions o;
  o.followers = absl::GetFlag(FLAGS_followers);
  o.celebrity_rounds = absl::GetFlag(FLAGS_celebrity_rounds);
  o.followees = absl::GetFlag(FLAGS_followees);
  o.posts_per_followee = absl::GetFlag(FLAGS_posts_per_followee);
  o.page_size = absl::GetFlag(FLAGS_page_size);
  o.read_passes = absl::GetFlag(FLAGS_read_passes);
  o.users = absl::GetFlag(FLAGS_users);
  o.followees_per_user = absl::GetFlag(FLAGS_followees_per_user);
  o.mixed_ops = absl::GetFlag(FLAGS_mixed_ops);
  o.mixed_page_size = absl::GetFlag(FLAGS_mixed_page_size);
  o.mixed_threads.clear();
  for (const std::string& text : absl::GetFlag(FLAGS_mixed_threads)) {
    size_t threads = 0;
    if (!absl::SimpleAtoi(text, &threads) || threads == 0 || threads > 64) {
      return absl::InvalidArgumentError(
          absl::StrCat("--mixed_threads: '", text, "' is not 1..64"));
    }
    o.mixed_threads.push_back(threads);
  }
  o.members = absl::GetFlag(FLAGS_members);
  o.score_range = absl::GetFlag(FLAGS_score_range);
  o.increments = absl::GetFlag(FLAGS_increments);
  o.zipf_exponent = absl::GetFlag(FLAGS_zipf_exponent);
  o.topk_calls = absl::GetFlag(FLAGS_topk_calls);
  o.rank_calls = absl::GetFlag(FLAGS_rank_calls);
  o.baseline_rank_calls = absl::GetFlag(FLAGS_baseline_rank_calls);
  o.memory_entries = absl::GetFlag(FLAGS_memory_entries);
  o.memory_per_timeline = absl::GetFlag(FLAGS_memory_per_timeline);
  o.memory_members = absl::GetFlag(FLAGS_memory_members);
  o.memory_edges = absl::GetFlag(FLAGS_memory_edges);
  o.durability_threads = absl::GetFlag(FLAGS_durability_threads);
  o.durability_followers = absl::GetFlag(FLAGS_durability_followers);
  o.durability_rounds = absl::GetFlag(FLAGS_durability_rounds);
  o.durability_ops = absl::GetFlag(FLAGS_durability_ops);
  o.contacts = absl::GetFlag(FLAGS_contacts);
  o.import_rounds = absl::GetFlag(FLAGS_import_rounds);
  o.inactive_rounds = absl::GetFlag(FLAGS_inactive_rounds);
  o.returning_users = absl::GetFlag(FLAGS_returning_users);
  o.returning_posts = absl::GetFlag(FLAGS_returning_posts);
  o.durability_redis_ops = absl::GetFlag(FLAGS_durability_redis_ops);
  o.durability_sync_ops = absl::GetFlag(FLAGS_durability_sync_ops);
  o.durability_dir = absl::GetFlag(FLAGS_durability_dir);
  o.redis_server = absl::GetFlag(FLAGS_redis_server);
  o.redis_cluster_script = absl::GetFlag(FLAGS_redis_cluster_script);
  o.replica_wait_followers = absl::GetFlag(FLAGS_replica_wait_followers);
  o.replica_wait_rounds = absl::GetFlag(FLAGS_replica_wait_rounds);
  o.replica_wait_inserts = absl::GetFlag(FLAGS_replica_wait_inserts);
  o.stream_followers = absl::GetFlag(FLAGS_stream_followers);
  o.stream_rounds = absl::GetFlag(FLAGS_stream_rounds);
  o.stream_small_followers = absl::GetFlag(FLAGS_stream_small_followers);
  o.stream_small_rounds = absl::GetFlag(FLAGS_stream_small_rounds);
  o.stream_xadds = absl::GetFlag(FLAGS_stream_xadds);
  o.grouped_rounds = absl::GetFlag(FLAGS_grouped_rounds);
  o.ranked_rounds = absl::GetFlag(FLAGS_ranked_rounds);
  o.edit_followers = absl::GetFlag(FLAGS_edit_followers);
  o.edit_small_followers = absl::GetFlag(FLAGS_edit_small_followers);
  o.edit_rounds = absl::GetFlag(FLAGS_edit_rounds);
  o.delivery_followers = absl::GetFlag(FLAGS_delivery_followers);
  o.delivery_watched = absl::GetFlag(FLAGS_delivery_watched);
  o.delivery_rounds = absl::GetFlag(FLAGS_delivery_rounds);
  o.chat_channels = absl::GetFlag(FLAGS_chat_channels);
  o.chat_messages = absl::GetFlag(FLAGS_chat_messages);
  o.chat_read = absl::GetFlag(FLAGS_chat_read);
  o.chat_rounds = absl::GetFlag(FLAGS_chat_rounds);
  o.reaction_crowd = absl::GetFlag(FLAGS_reaction_crowd);
  o.reaction_rounds = absl::GetFlag(FLAGS_reaction_rounds);
  o.filtered_rounds = absl::GetFlag(FLAGS_filtered_rounds);
  o.timeline_cap = absl::GetFlag(FLAGS_timeline_cap);
  o.redis_pipeline = absl::GetFlag(FLAGS_redis_pipeline);
  o.seed = absl::GetFlag(FLAGS_seed);
  if (o.followers == 0 || o.followees == 0 || o.posts_per_followee == 0 ||
      o.page_size == 0 || o.page_size > 1000 || o.users < 2 || o.members == 0 ||
      o.score_range <= 0 || o.timeline_cap == 0 || o.redis_pipeline == 0 ||
      o.memory_entries == 0 || o.memory_members == 0 || o.memory_edges == 0 ||
      o.mixed_threads.empty() || o.durability_threads == 0 ||
      o.durability_threads > 64 || o.durability_rounds == 0 ||
      o.durability_ops == 0 || o.durability_redis_ops == 0 ||
      o.durability_sync_ops == 0 || o.contacts == 0 ||
      o.contacts > kMaxFollowBatch || o.import_rounds == 0 ||
      o.inactive_rounds == 0 || o.returning_users == 0 ||
      o.returning_posts == 0 || o.replica_wait_followers == 0 ||
      o.replica_wait_rounds == 0 || o.replica_wait_inserts == 0 ||
      o.stream_followers == 0 || o.stream_rounds == 0 ||
      o.stream_small_followers == 0 || o.stream_small_rounds == 0 ||
      o.stream_xadds == 0 || o.grouped_rounds == 0 || o.ranked_rounds == 0 ||
      o.edit_followers == 0 || o.edit_small_followers == 0 ||
      o.edit_rounds == 0 || o.delivery_followers == 0 ||
      o.delivery_watched == 0 || o.delivery_rounds == 0 ||
      o.chat_channels == 0 || o.chat_rounds == 0 || o.chat_read == 0 ||
      o.chat_read >= o.chat_messages || o.reaction_rounds == 0 ||
      o.filtered_rounds == 0 || o.timeline_cap < 50) {
    return absl::InvalidArgumentError(
        "sizes must be positive (--page_size at most 1000, --chat_read "
        "below --chat_messages, --timeline_cap at least 50)");
  }
  // edit-and-deliver waits for every delivery its callback is due: they
  // must all fit in the subscription's queue, so that none can be dropped.
  if (o.delivery_watched > o.delivery_followers ||
      o.delivery_rounds > kMaxDeliveryQueueCapacity / o.delivery_watched) {
    return absl::InvalidArgumentError(
        "--delivery_watched must be at most --delivery_followers, and "
        "--delivery_rounds x --delivery_watched at most "
        "kMaxDeliveryQueueCapacity (1048576)");
  }
  return o;
}

absl::StatusOr<std::vector<const NamedScenario*>> SelectScenarios(
    const std::string& list) {
  std::vector<const NamedScenario*> selected;
  if (list == "all") {
    for (const NamedScenario& s : kScenarios) selected.push_back(&s);
    return selected;
  }
  for (const absl::string_view name : absl::StrSplit(list, ',')) {
    const NamedScenario* found = nullptr;
    for (const NamedScenario& s : kScenarios) {
      if (name == s.name) found = &s;
    }
    if (found == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown scenario '", name, "'"));
    }
    selected.push_back(found);
  }
  return selected;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Compares feedcore with Redis and in-process baselines on feed and "
      "leaderboard workloads.\nUsage: feedcore-bench [--scenario=all] "
      "[--small] [--json=FILE] [--markdown=FILE]");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 1) {
    std::fprintf(stderr, "feedcore-bench: unexpected argument '%s'\n", args[1]);
    return 2;
  }
  absl::StatusOr<DriverOptions> options = OptionsFromFlags();
  if (const std::string kind = absl::GetFlag(FLAGS_memory_child);
      !kind.empty()) {
    return options.ok() ? RunMemoryChild(kind, *options) : 2;
  }
  absl::StatusOr<std::vector<const NamedScenario*>> scenarios =
      SelectScenarios(absl::GetFlag(FLAGS_scenario));
  if (!options.ok() || !scenarios.ok()) {
    std::fprintf(stderr, "feedcore-bench: %s\n",
                 (!options.ok() ? options.status() : scenarios.status())
                     .message()
                     .data());
    return 2;
  }

  MachineInfo machine = CollectMachineInfo();
  machine.command = absl::StrJoin(argv, argv + argc, " ");
  machine.commit = absl::GetFlag(FLAGS_commit);
  Report report;
  AnswerChecker answers;
  Progress progress;

  // Redis: started here, stopped when `server` goes out of scope (also on
  // every early return), or left out with the reason said.
  std::unique_ptr<RedisServer> server;
  std::optional<RedisEndpoint> redis;
  if (!absl::GetFlag(FLAGS_redis)) {
    report.Note("Redis not compared (--redis=false)");
  } else if (!RedisClient::Compiled()) {
    report.Note(
        "Redis not compared: feedcore-bench was built without hiredis "
        "(scripts/install-deps, then configure again)");
  } else {
    absl::StatusOr<std::unique_ptr<RedisServer>> started =
        RedisServer::Start(absl::GetFlag(FLAGS_redis_server));
    if (!started.ok()) {
      report.Note(absl::StrCat("Redis not compared: could not start it: ",
                               started.status().message()));
    } else {
      server = *std::move(started);
      redis = RedisEndpoint{server->host(), server->port()};
      absl::StatusOr<std::unique_ptr<RedisClient>> client =
          RedisClient::Connect(redis->host, redis->port);
      if (client.ok()) {
        absl::StatusOr<RedisReply> info =
            (*client)->Command({"INFO", "server"});
        if (info.ok()) {
          const size_t at = info->text.find("redis_version:");
          if (at != std::string::npos) {
            const size_t begin = at + 14;
            machine.redis_version = info->text.substr(
                begin, info->text.find_first_of("\r\n", begin) - begin);
          }
        }
      }
      std::fprintf(stderr, "feedcore-bench: redis-server %s on %s:%d\n",
                   machine.redis_version.c_str(), redis->host.c_str(),
                   redis->port);
    }
  }
  // feedcore on Redis Cluster: a private cluster started here and stopped
  // when `cluster` goes out of scope (or by its guardian process, if the
  // driver dies), or an existing one, or left out with the reason said.
  // Started only for the scenarios that use it: it takes seconds.
  std::unique_ptr<LocalRedisCluster> cluster;
  std::optional<RedisClusterEndpoint> redis_cluster;
  bool cluster_used = false;
  for (const NamedScenario* scenario : *scenarios) {
    cluster_used = cluster_used || scenario->uses_redis_cluster;
  }
  const char* const kClusterNotCompared =
      "feedcore on Redis Cluster not compared";
  if (!cluster_used) {
    // No scenario of this run has it.
  } else if (!absl::GetFlag(FLAGS_redis_cluster)) {
    report.Note(absl::StrCat(kClusterNotCompared, " (--redis_cluster=false)"));
  } else if (!ClusterFeed::Compiled()) {
    report.Note(absl::StrCat(
        kClusterNotCompared,
        ": feedcore-bench was built without feedcore::redis_cluster (it "
        "needs hiredis: scripts/install-deps, then configure again)"));
  } else {
    std::vector<std::string> seeds = absl::GetFlag(FLAGS_redis_cluster_seeds);
    std::string kind;
    if (!seeds.empty()) {
      kind = absl::StrCat("existing, seeds ", absl::StrJoin(seeds, ","));
    } else {
      const std::string script = absl::GetFlag(FLAGS_redis_cluster_script);
      std::fprintf(stderr, "feedcore-bench: starting a Redis Cluster (%s)\n",
                   script.c_str());
      absl::StatusOr<std::unique_ptr<LocalRedisCluster>> started =
          LocalRedisCluster::Start(script);
      if (!started.ok()) {
        report.Note(absl::StrCat(
            kClusterNotCompared,
            ": could not start a cluster: ", started.status().message()));
      } else {
        cluster = *std::move(started);
        seeds = cluster->seeds();
        kind = "private, started with scripts/redis-cluster";
      }
    }
    if (!seeds.empty()) {
      absl::StatusOr<std::string> described = ClusterFeed::Describe(seeds);
      if (!described.ok()) {
        report.Note(absl::StrCat(
            kClusterNotCompared, ": the cluster at ", absl::StrJoin(seeds, ","),
            " does not answer: ", described.status().message()));
      } else {
        redis_cluster = RedisClusterEndpoint{
            seeds, absl::StrCat("fcbench-", getpid(), "-", std::time(nullptr))};
        machine.redis_cluster = absl::StrCat(*described, ", ", kind);
        std::fprintf(stderr, "feedcore-bench: Redis Cluster of %s on %s\n",
                     described->c_str(), absl::StrJoin(seeds, ",").c_str());
      }
    }
  }
  for (const std::string& note : report.notes()) {
    std::fprintf(stderr, "feedcore-bench: %s\n", note.c_str());
  }

  RunContext context{*options, redis, redis_cluster, answers, progress, report};
  for (const NamedScenario* scenario : *scenarios) {
    std::fprintf(stderr, "feedcore-bench: running %s\n", scenario->name);
    const auto start = Stopwatch::now();
    scenario->run(context);
    progress.Clear();
    std::fprintf(stderr, "feedcore-bench: %s done in %.1f s\n", scenario->name,
                 MicrosSince(start) / 1e6);
  }
  report.ComputeRatios();
  report.Note(absl::StrCat("answers compared: ", answers.comparisons(),
                           ", mismatches: ", answers.mismatches(),
                           ", failed calls: ", answers.failures()));
  report.PrintTable(stdout, machine);

  int exit_code = answers.ok() ? 0 : 1;
  auto write = [&](const std::string& path, const absl::Status& status) {
    if (status.ok()) {
      std::fprintf(stderr, "feedcore-bench: wrote %s\n", path.c_str());
    } else {
      std::fprintf(stderr, "feedcore-bench: %s\n", status.ToString().c_str());
      exit_code = 1;
    }
  };
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    write(path, report.WriteJson(path, machine, answers.ok()));
  }
  if (!answers.ok()) {
    std::fprintf(stderr,
                 "\nfeedcore-bench: FAILED: %zu answer mismatch(es), %zu "
                 "failed call(s); the figures of this run are not written "
                 "to Markdown or the chart.\n",
                 answers.mismatches(), answers.failures());
    return exit_code;
  }
  if (const std::string path = absl::GetFlag(FLAGS_markdown); !path.empty()) {
    write(path, report.WriteMarkdown(path, machine));
  }
  if (const std::string path = absl::GetFlag(FLAGS_chart_data); !path.empty()) {
    write(path, report.WriteChartData(path));
  }
  return exit_code;
}

}  // namespace
}  // namespace feedcore::bench

int main(int argc, char** argv) { return feedcore::bench::Main(argc, argv); }
