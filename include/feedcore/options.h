// Options for creating an engine, inserting and reading.
//
// Every field has a default that suits a social feed; each comment says what
// the field trades off and its valid range. Out-of-range values are rejected
// with `InvalidArgument` naming the field; nothing is clamped silently.
#ifndef FEEDCORE_OPTIONS_H_
#define FEEDCORE_OPTIONS_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "feedcore/clock.h"
#include "feedcore/export.h"
#include "feedcore/types.h"

namespace feedcore {

class ChangeStream;

// Longest time-to-live accepted anywhere (100 years): keeps `now + ttl` far
// from overflowing.
inline constexpr Micros kMaxTtl = 100LL * 365 * kMicrosPerDay;
// Hard limits on the options below.
inline constexpr size_t kMaxShards = 65536;
inline constexpr size_t kMaxTimelineLengthLimit = 10'000'000;
inline constexpr size_t kMaxPageSizeLimit = 100'000;
inline constexpr size_t kMaxPayloadBytesLimit = 64 << 20;
inline constexpr size_t kMaxFanoutThreads = 256;
inline constexpr size_t kMaxFanoutQueueCapacity = 1 << 20;

inline constexpr size_t kMaxGroupListLimit = 1000;
inline constexpr size_t kMaxNotifyRecipients = 100'000;
// Most entities one activity may mention (PublishOptions::mentions).
inline constexpr size_t kMaxMentionRecipients = 1'000;
// Mentions kept per (entity, channel); older ones are dropped beyond it,
// so ReadMarker::mentions counts at most this many.
inline constexpr size_t kMaxMentionsPerFeed = 100;
// Largest RepostOptions::window.
inline constexpr size_t kMaxRepostWindow = 1000;

// Grouped (aggregated) reads: see FeedEngine::ReadGroups.
struct AggregationOptions {
  // Keep every timeline's entries indexed by group key, so that
  // ReadGroups works. Costs memory per entry (see docs/architecture.md);
  // off, group keys are dropped at insert and ReadGroups fails.
  bool enabled = false;

  // Width of the time bucket of the default group key, 1..kMaxTtl
  // microseconds: activities with the same verb and object group together
  // when `ts / time_bucket` is the same (a day by default: "liked your
  // photo today").
  Micros time_bucket = kMicrosPerDay;

  // Computes the group key of a published activity, once per Publish (not
  // per follower). Null means the default: 0 (ungrouped) for an activity
  // with neither verb nor object, otherwise a non-zero hash of verb, object
  // and time bucket. Must be thread-safe and deterministic.
  std::function<GroupKey(const Activity&)> group_key;

  // Most recent distinct actors a FeedGroup lists, 1..kMaxGroupListLimit.
  size_t max_group_actors = 5;
  // Most recent entries a FeedGroup lists, 1..kMaxGroupListLimit.
  size_t max_group_entries = 10;
};

// Notification feeds: see FeedEngine::ReadNotifications.
struct NotificationOptions {
  // True: notifications that share a group key (as AggregationOptions
  // computes it: its `group_key` function, or verb, object and time
  // bucket) collapse into one group, "Alice and 4 others liked your
  // photo". False: a flat feed, every notification its own group. Either
  // way the group lists are bounded by AggregationOptions'
  // max_group_actors and max_group_entries; AggregationOptions::enabled
  // need not be set.
  bool aggregated = true;

  // Notifications kept per user, 1..kMaxTimelineLengthLimit; beyond it the
  // oldest are dropped (and leave their groups). A bell rarely shows more
  // than a few dozen.
  size_t max_length = 100;

  // Called after a publish delivered a notification, once per recipient
  // with its counts right after the delivery, from the publishing thread
  // with no engine lock held. For pushing the badge to a connected client.
  // Must be thread-safe; the same rules as `on_delivery` apply to what it
  // may call. Null: no calls.
  std::function<void(EntityId recipient, const NotificationCounts& counts)>
      on_notify;
};

// Reposts shown once: see "Reposts" at the top of feed_engine.h.
struct RepostOptions {
  // A repost (an activity with Activity::repost_of set) is left out of a
  // reader's home timeline while the activity it reposts, or an older
  // repost of it, is among the `window` entries just older than it there
  // (Mastodon's rule, at 40). 0..kMaxRepostWindow; 0 shows every repost.
  size_t window = 0;
  // The kinds reposts are published with (Activity::kind). A read looks
  // up what an entry reposts only for entries of these kinds, so that a
  // timeline without reposts reads at the usual cost; with a window, a
  // repost of another kind is refused at publish. Must keep at least one
  // kind when `window` is set.
  KindFilter kinds = KindFilter::Only({});
};

struct EngineOptions {
  // Number of lock shards, 1..kMaxShards. 0 picks the smallest power of two
  // that is at least 4 x the hardware threads. More shards mean less lock
  // contention between writers and a little more fixed memory per shard.
  size_t shards = 0;

  // Time-to-live of an entry when its insert does not say otherwise,
  // 1..kMaxTtl microseconds.
  Micros default_ttl = 30 * kMicrosPerDay;

  // Entries kept per timeline, 1..kMaxTimelineLengthLimit. Beyond it the
  // oldest entries are trimmed at insert time. Expired entries not yet
  // reclaimed count towards it (trimming takes the oldest, whatever their
  // expiry). A feed rarely pages past a
  // few hundred items; the cap bounds memory per reader. An actor's own
  // feed keeps this many of each kind (Activity::kind), trimming the oldest
  // of the new entry's kind, so that a follow of some kinds
  // (FollowOptions::kinds) finds there every entry its copies would hold.
  size_t max_timeline_length = 1000;

  // Largest `ReadOptions::limit` accepted, 1..kMaxPageSizeLimit. Bounds the
  // work and the memory of a single read call.
  size_t max_page_size = 1000;

  // How often the background sweeper evicts expired entries. 0 starts no
  // thread at all: the host then calls `FeedEngine::EvictExpired` itself.
  // Expired entries are never returned either way; the sweeper only
  // reclaims their memory. Must be 0 or 1 ms..1 day. The interval is real
  // (wall) time; the decision of what expired uses `clock`.
  Micros sweep_interval = kMicrosPerSecond;

  // Most entries the sweeper reclaims per pass, 1..2^32. Bounds the work of
  // one pass; whatever the budget, eviction (by the sweeper or by
  // EvictExpired) holds a shard's lock for at most 64 entries at a time and
  // then lets waiting readers and writers in.
  size_t sweep_budget = 100'000;

  // Source of time. Null means a `SystemClock`.
  std::shared_ptr<Clock> clock;

  // --- Social graph and fan-out ---

  // Hybrid fan-out: an actor with more followers than this is no longer
  // copied into its followers' timelines; their reads merge its own feed
  // instead. Trades read cost for write cost on very large producers.
  // 0 turns it off (always copy). Once an actor passes the threshold it
  // stays merged-at-read, even if it later loses followers. Readers see
  // the same pages whatever the threshold (feed_engine.h says how, and the
  // one sequence at a full timeline where they may not).
  size_t hybrid_fanout_threshold = 0;

  // Inactive readers: a reader whose last read of its timeline is older
  // than this, by `clock`, is made dormant at the sweeper's next pass
  // (feed_engine.h, "Inactive readers"): fan-out skips it and its
  // timeline's copies are dropped until its next read rebuilds them.
  // 0 turns it off; otherwise 1..kMaxTtl. A reader's clock
  // starts when it first follows, and again when a snapshot is loaded.
  Micros inactive_after = 0;

  // Recent activities of the followee copied into the follower's timeline
  // by Follow, unless FollowOptions says otherwise;
  // 0..kMaxTimelineLengthLimit (at most max_timeline_length are copied).
  size_t default_backfill = 20;

  // Entries kept per shard in the world feed (all activity),
  // 1..kMaxTimelineLengthLimit. The world feed holds at least the newest
  // `world_timeline_length` activities overall.
  size_t world_timeline_length = 10000;

  // Largest payload Publish accepts, 0..kMaxPayloadBytesLimit.
  size_t max_payload_bytes = 64 * 1024;

  // Worker threads that share large fan-outs with the publishing thread,
  // 0..256. 0 starts no threads: every fan-out runs on the publisher.
  size_t fanout_threads = 1;

  // Fan-outs to at least this many followers are split into per-shard
  // tasks and run on the workers as well; smaller ones run inline.
  // 1..2^32.
  size_t parallel_fanout_min_followers = 4096;

  // Fan-out tasks that may wait in the queue, 1..1048576. When full, an
  // asynchronous Publish waits or fails, by PublishOptions.
  size_t fanout_queue_capacity = 1024;

  // Called after a publish put an activity's key into a group of
  // followers' timelines (one call per shard group, from whichever thread
  // delivered it, with no engine lock held; not for back-fill, and not for
  // followers of merged-at-read actors, who can poll CountNewer). For pushing
  // notifications. Must be thread-safe. It may read from the engine
  // (ReadTimeline, CountNewer...) but must not call Publish, Follow, Unfollow
  // or Retract: those may wait for the very delivery that is running the
  // callback. Null: no calls. It runs inside the fan-out, so a slow one
  // slows the publish: a program pushing to clients subscribes through
  // FeedDeliveries (feed_facets.h) instead, which also tells of the
  // entries of merged-at-read actors and never waits.
  std::function<void(absl::Span<const EntityId> timelines,
                     const TimelineEntry& entry)>
      on_delivery;

  // True: the callbacks of FeedDeliveries subscriptions run on a thread of
  // the engine's, started by the first Subscribe. False: they run when the
  // host calls FeedDeliveries::DispatchDeliveries.
  bool background_deliveries = true;

  // Grouped reads; off by default.
  AggregationOptions aggregation;

  // Notification feeds (PublishOptions::notify).
  NotificationOptions notifications;

  // Reposts shown once in home timelines; off by default.
  RepostOptions reposts;

  // Where every change is recorded (see change_stream.h); null records
  // nothing and costs nothing. Several engines may share one stream only
  // if nothing replays it (records do not say which engine made them).
  std::shared_ptr<ChangeStream> change_stream;
};

struct FollowOptions {
  // Recent activities to copy; unset means EngineOptions::default_backfill.
  // 0..kMaxTimelineLengthLimit (at most max_timeline_length are copied).
  std::optional<size_t> backfill;
  // The kinds of the followee's activities the follow delivers, to copies,
  // merged reads and back-fill alike ("hide this account's reposts":
  // KindFilter::Except({the program's repost kind})); back-fill copies the
  // newest `backfill` of those kinds. Unset: every kind on a new follow;
  // following again keeps the follow's kinds. Following again with other
  // kinds fails with FailedPrecondition and changes nothing (Unfollow, then
  // Follow, to change them). InvalidArgument for a filter that keeps no
  // kind or names one above kMaxActivityKind.
  std::optional<KindFilter> kinds;
};

enum class FanoutCompletion {
  kSynchronous,   // Publish returns after every follower timeline has it
  kAsynchronous,  // large fan-outs finish in the background; see
                  // FeedEngine::WaitForFanout
};

// The completion's name as written in this header, e.g. "kSynchronous".
FEEDCORE_EXPORT const char* FanoutCompletionName(FanoutCompletion completion);

struct PublishOptions {
  FanoutCompletion completion = FanoutCompletion::kSynchronous;
  // For asynchronous fan-out when the task queue is full: true waits for
  // room, false fails with ResourceExhausted having changed nothing.
  bool wait_when_queue_full = true;
  // Entities whose notification feed also gets the activity (the owner of
  // the photo that was liked, the people mentioned), at most
  // kMaxNotifyRecipients; duplicates are harmless. Delivered before
  // Publish returns, whatever `completion` says. Retract removes the
  // activity from these feeds too.
  std::vector<EntityId> notify;
  // Entities the activity mentions, at most kMaxMentionRecipients;
  // duplicates are harmless. Each gets a mention in the activity's
  // channel, its actor's own feed (MarkedFeed::Own(actor)), which
  // GetReadMarker and ListReadMarkers count until the entity's marker
  // there passes it (ReadMarker::mentions), unless its notifications
  // refuse the actor (a block, or a mute of notifications) or its marker
  // there is at or past the activity. Recorded before Publish returns.
  // InvalidArgument for more than kMaxMentionRecipients.
  std::vector<EntityId> mentions;
};

// Paging through follower or followee lists.
struct ListOptions {
  // Ids per page, 1..EngineOptions::max_page_size.
  size_t limit = 100;
  std::string cursor;
};

struct InsertOptions {
  // Time-to-live of the inserted entry, 1..kMaxTtl. 0 means the engine's
  // `default_ttl`. Ignored when `expires_at` is set.
  Micros ttl = 0;
  // Absolute expiry time; must be later than now. For copying an entry
  // that already has an expiry (e.g. back-filling an existing activity).
  std::optional<Micros> expires_at;
};

enum class ReadOrder {
  kNewestFirst,  // descending (ts, activity_id): the usual feed order
  kOldestFirst,  // ascending (ts, activity_id)
};

// The order's name as written in this header, e.g. "kNewestFirst".
FEEDCORE_EXPORT const char* ReadOrderName(ReadOrder order);

// Paging through groups (FeedEngine::ReadGroups, ReadNotifications),
// newest group first.
struct GroupReadOptions {
  // Groups per page, 1..EngineOptions::max_page_size.
  size_t limit = 25;
  // Empty for the first page; otherwise the previous page's `next_cursor`.
  std::string cursor;
  // Fill the `payload` of each group's listed entries (FeedGroup::recent)
  // from the activity store, as ReadOptions::hydrate does.
  bool hydrate = false;
  // The kinds of activity the groups are made of (KindFilter); every kind
  // unless set. A group then holds, counts and lists only its entries of
  // those kinds and is placed by the newest of them; a group with none is
  // left out. Notification groups keep their seen and read flags. A
  // filtered read groups the visible entries at read time: O(n) for a feed
  // of n entries, where an unfiltered one pages the group index. The
  // cursor is bound to the filter, as ReadOptions::kinds says.
  KindFilter kinds;
};

struct ReadOptions {
  // Entries per page, 1..EngineOptions::max_page_size.
  size_t limit = 50;
  // Empty for the first page; otherwise the `next_cursor` of the previous
  // page of the same timeline, read in the same order.
  std::string cursor;
  ReadOrder order = ReadOrder::kNewestFirst;
  // Optional inclusive time window on `ts`. When both are set,
  // min_ts <= max_ts is required.
  std::optional<Micros> min_ts;
  std::optional<Micros> max_ts;
  // Fill each entry's `payload` from the activity store, looked up by
  // activity id (an entry put with the low-level Insert calls under a
  // published activity's id gets that activity's payload).
  bool hydrate = false;
  // The kinds of activity the page keeps (KindFilter); every kind unless
  // set. A cursor is bound to its read's filter: another filter's cursor
  // is refused with InvalidArgument.
  KindFilter kinds;
};

}  // namespace feedcore

#endif  // FEEDCORE_OPTIONS_H_
