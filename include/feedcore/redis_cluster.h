// The Redis Cluster backend: the same FeedEngine and Leaderboard interfaces,
// with the data kept in a Redis Cluster instead of this process's memory.
//
// Use it when one process's memory is not enough, or when several server
// processes must share the same feeds and boards. Code written against
// FeedEngine and Leaderboard runs unchanged on either backend:
//
//   feedcore::RedisClusterOptions cluster{.seed_nodes = {"10.0.0.1:6379"}};
//   auto engine = feedcore::CreateRedisClusterFeedEngine(cluster, {}).value();
//   auto board = feedcore::CreateRedisClusterLeaderboard(
//       cluster, "season-7",
//       {.partitions = 16, .tie_break = feedcore::TieBreak::kLowerMemberFirst})
//       .value();
//
// How each structure maps onto Redis keys, and why, is written down in
// docs/scale-out.md. In short: a timeline is a sorted set whose key carries
// its owner's id as a hash tag, so everything of one entity lives in one
// slot; an activity is stored once; fan-out groups the followers by the
// node that owns their slot and pipelines each group; a leaderboard's
// partitions are sorted sets on different slots, merged by the same lazy
// scatter-gather as in memory.
//
// What differs from the in-process backend
// ----------------------------------------
// * Every call can fail with `Unavailable` (a node cannot be reached, the
//   cluster is down, a timeout) or `Internal` (an unexpected reply), with a
//   message naming the node. After an `Unavailable` a write may have been
//   applied in part; every write is safe to retry: Publish is idempotent by
//   activity id (a retry completes the fan-out and never duplicates an
//   entry), Follow, Unfollow, Retract, Set and Remove converge.
//   `Leaderboard::Increment` is the exception: it is retried only when the
//   command certainly did not reach Redis, so an `Unavailable` from it may
//   or may not have applied the increment. `IncrementMany` follows the same
//   rule element by element: a failure is that element's result (the
//   message says whether it may have been applied), and the other elements
//   still apply. Its elements are pipelined per node, a few round trips
//   per call; a member's elements apply in the order given, and one that
//   could only be sent again after a later element of its member had run
//   fails with `Unavailable` instead (rare: the node's state changed
//   between the two).
// * When a master fails and the cluster promotes its replica, the same
//   object follows: calls meanwhile are retried (the dead node, then
//   CLUSTERDOWN while the cluster decides) and succeed once the replica
//   has taken over, if `max_attempts` with its backoff outlasts the
//   failover (the node timeout plus about two seconds); otherwise they
//   fail with `Unavailable` and succeed when called again. Writes the dead
//   master acknowledged but had not yet replicated are lost, unless
//   `wait_replicas` is set (see RedisClusterOptions).
// * A call that spans several entities (a fan-out, a follow with its
//   back-fill, a leaderboard read across partitions) is atomic per slot,
//   not as a whole: another client can observe it half done. A leaderboard
//   read takes a snapshot per partition, not one of the whole board.
// * Facets (feed_facets.h): the engine, a RedisClusterFeedEngine, has
//   the core and every facet but FeedReactions, FeedDeliveries and
//   FeedMaintenance (reactions() and deliveries() are null: both live
//   beside the in-process store and fan-out): ReadMarkers (a hash per
//   user, keyed by feed), NotificationFeeds, RankedFeeds (counters in the
//   activity's hash; IncrementCounter costs two round trips, the second
//   dating the change with the engine clock once it is applied; a ranked
//   page reads its window's counters in one pipeline and ranks them here,
//   as in process), FeedRelations (a user's mutes and blocks are a
//   sorted set in its slot, checked by the scripts that deliver to it;
//   Mute and Unmute are one script each, Unmute's back-fill as Follow's;
//   Block takes three round trips; Block, Mute and Unmute are not resent
//   after an unclear failure, since a resend of one that went through
//   answers "nothing changed") and EditsAndPins (EditActivity is one
//   script on the activity's hash, which hydrated reads read the edit time
//   from too; a user's pins are a list in its slot: Pin takes three round
//   trips, reading the activity, pinning, then reading its state again so
//   that a racing Retract leaves no pin; Unpin and ReadPinned take one,
//   plus a pipeline to hydrate; Retract ends the pin in the round trip
//   that removes the own feed's copy). A publish with
//   PublishOptions::mentions is refused with `Unimplemented`, so mention
//   counts stay 0. No FeedMaintenance: expired
//   entries are skipped by every read, dropped by the writes that meet
//   them and by the key's own expiry; the memory is the cluster's (INFO,
//   MEMORY USAGE); `inactive_after` is refused at creation with
//   `Unimplemented`. No SaveSnapshot (it takes an InProcessFeedEngine):
//   use Redis persistence.
//   Of the leaderboard's capabilities (LeaderboardCapability) it has
//   kEarlierUpdateFirst (below); `Supports` says so. A board with
//   `RankStyle::kDense` (kDenseRanks: the
//   distinct better scores are spread over every partition) is refused at
//   creation with `Unimplemented`; reads across partitions and Clear are
//   atomic per partition only (no kBoardSnapshotReads).
// * `TieBreak::kEarlierUpdateFirst` (the default) ranks ties as in process,
//   by an update sequence that one counter key per board hands out: every
//   write call (Set, Increment, Write; a batch once for all its elements,
//   numbered in the order given) first takes its numbers there, one more
//   round trip, to a key that every write of the board goes through. A
//   call that returns before another begins has the lower number, from
//   any client; calls that overlap rank by the numbers they took, which
//   may differ from the order their writes reached the nodes. Only a
//   change of score (or an addition) gives a member a new number, and
//   never one below its own. A Set retried after an unclear failure
//   reuses its number, so a retry of one that was applied changes
//   nothing, its place included. A failover that loses the counter's
//   latest increments (see `wait_replicas`) reuses those numbers.
//   kLowerMemberFirst costs nothing extra: it is Redis's own order.
// * Leaderboard features mapped with a cost of their own: a ReadPage
//   `with_metadata` reads the metadata in one more round trip, after the
//   scores; kCompetition ranks cost one count of the better scores for the
//   first entry of a read not starting at the top. Not mapped, refused
//   with `Unimplemented` naming it: `LeaderboardReadOptions::offset`
//   above 0 (a position across partitions would take dozens of round
//   trips; page with cursors, or by score with `range`).
// * `Write`, like `Increment`, is retried only when the command certainly
//   did not reach Redis; `WriteMany` follows IncrementMany's rules.
// * A board's score order and tie-break are recorded with its partition
//   count: opening it with the other `score_order` or `tie_break` is
//   `FailedPrecondition`.
// * Hybrid fan-out (`hybrid_fanout_threshold`) shows the same pages as in
//   process, with the same exception (feed_engine.h), at a cost of its
//   own. A read of a home timeline first reads the reader's merged
//   followees (one round trip more, merged or not); a reader that merges
//   some then reads the sizes of its timeline and their own feeds (one
//   pipelined round trip; one more when together they hold more than
//   max_timeline_length, to find the oldest entry the cap keeps) and each
//   merged own feed (one round trip each). A publish notes its key in the
//   actor's state (one round trip). The Follow that takes an actor past
//   the threshold tells every follower before it returns (O(followers));
//   if it fails half-way, publishes keep copying until a retry of that
//   Follow finishes the switch.
// * Grouped reads and notification feeds give the in-process answers
//   (the same grouping code runs on the client), at a cost of their own: a
//   ReadGroups page reads the whole visible home timeline (up to
//   max_timeline_length entries, merged as ReadTimeline), and every
//   notification call runs one script that scans the user's notification
//   feed (up to NotificationOptions::max_length) for expired entries:
//   O(feed) per call instead of O(log n + page) and O(1). A Publish with
//   `notify` also records its recipients beside the activity, for
//   Retract.
// * Refused at creation with `InvalidArgument` naming the option: a
//   change stream (one ordered record per change, atomic with it, would
//   put every write through one slot; docs/scale-out.md, "The change
//   stream").
//   `fanout_threads` and `FanoutCompletion::kAsynchronous` are accepted,
//   but the fan-out always completes inside Publish, so WaitForFanout
//   returns at once.
// * Counts and sizes (`FollowerCount`, `FollowingCount`,
//   `Leaderboard::Size`) are read from the cluster and fail with its
//   errors; `Leaderboard::Clear` clears each partition atomically, and when
//   it fails some partitions may be cleared and others not (call it
//   again).
// * Scores are exact only within +-2^53 (Redis keeps them as doubles): a
//   Set, Increment or Write outside that range is `OutOfRange`.
// * `Followers` pages by ascending id (one sorted set per entity), where
//   the in-process engine pages by shard, then id; both are stable and
//   keyset-paged, and a walk is to be paged on the backend that began it.
//
// Thread safety: the objects these functions return may be used from any
// number of threads at once, as the in-process ones. Each holds its own
// pool of connections.
#ifndef FEEDCORE_REDIS_CLUSTER_H_
#define FEEDCORE_REDIS_CLUSTER_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "feedcore/export.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/options.h"
#include "feedcore/types.h"

namespace feedcore {
namespace redis {
class RedisFeedEngine;
}  // namespace redis

struct RedisClusterOptions {
  // "host:port" of one or more cluster nodes; the rest of the cluster is
  // discovered from them (CLUSTER SLOTS). At least one.
  std::vector<std::string> seed_nodes;
  // Every key this backend writes starts with this prefix, so several
  // applications (or tests) can share one cluster. Must not contain '{' or
  // '}' (they would change which slot a key hashes to). 1..64 bytes.
  std::string key_prefix = "fc";
  // Connecting to a node, and waiting for one reply. 1 ms .. 10 minutes.
  Micros connect_timeout = 1 * kMicrosPerSecond;
  Micros command_timeout = 2 * kMicrosPerSecond;
  // Idle connections kept per node, 1..1024. A call takes one connection
  // per node it talks to for its duration; more are opened when every
  // kept one is busy, and closed when returned beyond this number.
  size_t connections_per_node = 4;
  // Attempts per command when a node cannot be reached or the cluster is
  // reconfiguring (TRYAGAIN, CLUSTERDOWN), 1..100, with exponential
  // backoff from `retry_backoff` up to `max_retry_backoff` between
  // attempts. MOVED and ASK redirections are followed without counting as
  // attempts (up to 16 per command).
  size_t max_attempts = 3;
  Micros retry_backoff = 20 * kMicrosPerMillisecond;
  Micros max_retry_backoff = 1 * kMicrosPerSecond;
  // Commands sent to one node before reading their replies. Bounds the
  // memory of a large fan-out; 1..100,000.
  size_t pipeline_depth = 1024;
  // Replica acknowledgement of writes, 0..64 replicas. Redis replicates
  // asynchronously: a master acknowledges a write before its replicas have
  // it, and when the master dies and a replica takes over (see "Replicas
  // and failover" in docs/scale-out.md) the writes the replica had not yet
  // received are lost, acknowledged or not. With `wait_replicas` above 0,
  // a call that writes sends `WAIT wait_replicas wait_timeout` on each node
  // it wrote to, pipelined behind its writes on the same connection, and
  // succeeds only when that many replicas of each such node acknowledged
  // every write of the call. Guarantee: a write whose call succeeded
  // survives the failover of its master to any of the replicas that
  // acknowledged it (with one replica per master, to that replica). When
  // fewer acknowledge within `wait_timeout`, the call fails with
  // `Unavailable` naming the node and how many replicas acknowledged: the
  // write was applied on the master and may or may not survive a failover;
  // retrying it is safe wherever retrying an Unavailable is (see above).
  // Reads never wait. Cost: each call that writes waits, per node, for
  // the replication round trip to the slowest replica counted (on one
  // machine about the cost of one more round trip; the replica-wait
  // scenario of docs/benchmark-results.md measures it).
  // A master without enough replicas makes every write fail.
  size_t wait_replicas = 0;
  // How long WAIT waits for the replicas, 1 ms .. below `command_timeout`
  // (the reply must come before the connection gives up on it). Checked
  // only when `wait_replicas` is above 0. Rounded up to milliseconds.
  Micros wait_timeout = 500 * kMicrosPerMillisecond;
};

// The engine CreateRedisClusterFeedEngine returns: the core and every
// facet but FeedMaintenance (see "Facets" above).
class FEEDCORE_EXPORT RedisClusterFeedEngine : public FeedEngine,
                                               public NotificationFeeds,
                                               public FeedRelations,
                                               public ReadMarkers,
                                               public RankedFeeds,
                                               public EditsAndPins {
 public:
  using FeedEngine::edits_and_pins;
  using FeedEngine::notifications;
  using FeedEngine::ranked;
  using FeedEngine::read_markers;
  using FeedEngine::relations;
  NotificationFeeds* notifications() final { return this; }
  FeedRelations* relations() final { return this; }
  ReadMarkers* read_markers() final { return this; }
  RankedFeeds* ranked() final { return this; }
  EditsAndPins* edits_and_pins() final { return this; }

 private:
  // Only the library's backend derives from it.
  friend class redis::RedisFeedEngine;
  RedisClusterFeedEngine() = default;
};

// A FeedEngine whose feeds and social graph live in the cluster. `engine`
// is validated as for FeedEngine::Create, and refused with
// `InvalidArgument` for what this backend does not map (see above).
// `Unavailable` when no seed node answers or the cluster does not cover
// every slot.
FEEDCORE_EXPORT absl::StatusOr<std::unique_ptr<RedisClusterFeedEngine>>
CreateRedisClusterFeedEngine(const RedisClusterOptions& cluster,
                             EngineOptions engine);

// The leaderboard called `name` (1..kMaxLeaderboardNameLength bytes) in the
// cluster: every process that opens the same name with the same key prefix
// shares the board. Its partition count, score order and tie-break are
// recorded in the cluster on first use; opening it with a different one is
// `FailedPrecondition`.
// `InvalidArgument` for bad options; `Unimplemented` for
// `RankStyle::kDense`.
FEEDCORE_EXPORT absl::StatusOr<std::unique_ptr<Leaderboard>>
CreateRedisClusterLeaderboard(const RedisClusterOptions& cluster,
                              absl::string_view name,
                              const LeaderboardOptions& options);

}  // namespace feedcore

#endif  // FEEDCORE_REDIS_CLUSTER_H_
