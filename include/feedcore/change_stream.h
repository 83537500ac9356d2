// ChangeStream: every change of a feed engine, in order, with bounded
// retention, for consumers that follow along (search indexing, analytics,
// notifications) and for restoring a snapshot and resuming where it ended.
//
//   auto stream = feedcore::ChangeStream::Create({}).value();
//   feedcore::EngineOptions options;
//   options.change_stream = stream;
//   auto engine = feedcore::FeedEngine::Create(options).value();
//   auto reader =
//       stream->NewReader(feedcore::StreamPosition::TrimHorizon()).value();
//   for (const auto& record : reader->Read(100).value()) { ... }
//
// Records
// -------
// Each record is one change to one piece of engine state, made under that
// state's lock: a put into, or removal from, timelines of one shard; an
// activity stored, retracted or expired; one side of a follow edge. So a
// Publish appears as an activity record followed by puts (the actor's own
// feed, the world feed, and one record per shard group of followers), and a
// Follow as a follower record, a following record and the back-fill puts.
// Leaderboards of a LeaderboardRegistry made with the same stream record
// board creations, drops and renames, every score change (with its tie-break
// sequence), removals and per-partition clears. Replaying the records in
// sequence order into an engine (and registry) created with the same
// options reproduces the source exactly (see snapshot.h).
//
// Sequence numbers start at 1 and increase by exactly 1 per record, with no
// gaps: a reader that saw n and then m > n + 1 would know records were lost,
// and that never happens silently: reading past retention is an error.
//
// Retention
// ---------
// The stream keeps at most `max_records` records, about `max_bytes` bytes
// of them, and none older than `max_age` (by the stream's clock); the
// oldest go first. A reader positioned before the oldest retained record
// gets `OutOfRange` naming the oldest available sequence number: it must
// resynchronize (e.g. from a snapshot), never skip silently.
//
// Cost
// ----
// An engine without a stream pays one predictable branch per change. With
// a stream, each record costs an allocation and a short critical section on
// the stream's mutex, taken while the engine holds the lock of the state
// the record describes (the stream's mutex is a leaf: nothing else is
// locked under it).
//
// Thread safety
// -------------
// ChangeStream is thread-safe. A ChangeReader is used by one thread at a
// time. Readers never block writers beyond the copy of one batch of record
// pointers; a slow reader only risks falling behind retention.
#ifndef FEEDCORE_CHANGE_STREAM_H_
#define FEEDCORE_CHANGE_STREAM_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "feedcore/clock.h"
#include "feedcore/export.h"
#include "feedcore/leaderboard_options.h"
#include "feedcore/types.h"

namespace feedcore {

namespace internal {
class ChangeLog;
struct ChangeStreamAccess;
}  // namespace internal

enum class ChangeKind : uint8_t {
  // `entry` was put into the `feed` timelines of every id in `owners`
  // (insert, publish delivery, back-fill). Puts beyond a timeline's cap
  // trim it as the original put did.
  kTimelinePut = 1,
  // The key `(entry.ts, entry.activity_id)` was removed from the `feed`
  // timelines of `owners` (Remove, Retract).
  kTimelineRemove = 2,
  // Every entry whose actor is `other` was removed from the `feed`
  // timeline of `entity`: the home timeline (Unfollow, Block, Mute) or the
  // notification feed (Block, Mute with notifications).
  kTimelineRemoveActor = 3,
  // `keys` expired and were reclaimed from the `feed` timeline of
  // `entity`.
  kTimelineExpire = 4,
  // Publish stored the activity `entry` (`entry.payload` is its body);
  // `merged_at_read` says its followers get no copies; `owners` are the
  // entities it notified (PublishOptions::notify); `other` is the activity
  // it reposts (Activity::repost_of, 0: none).
  kActivityStore = 5,
  // The activity `entry.activity_id` was retracted (its payload dropped,
  // its id kept until it expires).
  kActivityRetract = 6,
  // The activities `keys[i].activity_id` expired and were dropped.
  kActivityExpire = 7,
  // `other` became a follower of `entity` (Follow); `score`, as a bit
  // pattern, the kinds the follow delivers (FollowOptions::kinds) when
  // fewer than every kind, else 0.
  kFollowerAdd = 8,
  // `other` stopped following `entity` (Unfollow); `merged_at_read` when
  // it kept its history (UnfollowOptions::keep_history): Retract still
  // purges its copies.
  kFollowerRemove = 9,
  // `entity` now follows `other`; `merged_at_read` when `other`'s activities
  // are merged into `entity`'s reads rather than copied, from the boundary
  // `keys[0]` on (the oldest key of `other` the reads show); `score` as in
  // kFollowerAdd.
  kFollowingAdd = 10,
  // `entity` no longer follows `other`.
  kFollowingRemove = 11,
  // `entity`'s reads now merge `other`'s own feed (hybrid fan-out) from the
  // boundary `keys[0]` on; for an `other` merged already, its boundary
  // moves to `keys[0]` (Unmute, Unblock).
  kMergeAdd = 12,
  // The fan-out mode of actor `entity` is now `mode`.
  kActorMode = 13,

  // Leaderboards of a LeaderboardRegistry made with a change stream. Each
  // names the board (`board`) and its `board_generation`, which tells a
  // board from an earlier one of the same name; `domain` is the partition.
  //
  // The registry created `board` with `board_options`.
  kBoardCreate = 14,
  // The registry dropped `board`.
  kBoardDrop = 15,
  // Member `entity` now has `score` (the score itself, whatever the
  // board's ScoreOrder); `update_sequence` orders it among equal scores
  // (TieBreak::kEarlierUpdateFirst). When `metadata` is set, the member's
  // metadata is now those bytes (empty: none); otherwise it is unchanged.
  // A change of metadata alone repeats the member's score and sequence.
  kScoreSet = 16,
  // Member `entity` was removed.
  kScoreRemove = 17,
  // Partition `domain` of the board was emptied (Clear records one per
  // partition).
  kBoardClear = 18,

  // Notification feeds (`domain` is the user's engine shard).
  //
  // Every group of `entity`'s notification feed was marked seen.
  kNotificationSeen = 19,
  // `entity` marked read (and seen) the group holding `keys[0]`, or every
  // group when `keys` is empty.
  kNotificationRead = 20,

  // Chat and social features (`domain` is the engine shard of `entity`).
  //
  // `entity`'s read marker in the feed (`feed`, owner `other`) is now
  // `keys[0]`; the mentions of `entity` there up to it are cleared.
  kReadMarkerSet = 21,
  // `entity` blocks `other` (recorded in `entity`'s shard).
  kBlockAdd = 22,
  // `entity` no longer blocks `other`.
  kBlockRemove = 23,
  // `entity` mutes `other`: `merged_at_read` carries
  // MuteOptions::notifications, `entry.expires_at` the mute's expiry (0:
  // none). Recorded in the shard of each side (`domain` tells which side
  // a record changes; once when both live in one shard).
  kMuteAdd = 24,
  // `entity` no longer mutes `other` (recorded as kMuteAdd is).
  kMuteRemove = 25,
  // The counters of activity `entry.activity_id` are now `counters`
  // (`domain` is its activity-store shard), changed at `entry.ts` by the
  // engine's clock (ranked reads compare it with a walk's start; `time` is
  // the stream's clock).
  kCountersSet = 26,

  // Inactive readers (EngineOptions::inactive_after).
  //
  // With `merged_at_read`: `entity`, a reader that stopped reading, merges
  // its followee `other` at read from `keys[0]` on (or its merge moves
  // there), and every entry of `other` at or above `keys[0]` left its home
  // timeline. Without: `entity` copies `other` again (the entries were put
  // by the kTimelinePut records before it). Recorded in `entity`'s shard.
  kDormantFollowee = 27,
  // `other`, a follower of `entity`, gets no copies of `entity`'s
  // publishes in timestamp order (`merged_at_read`), or gets them again
  // (not). Recorded in `entity`'s shard.
  kDormantFollower = 28,

  // A NameRegistry made with the stream (name_registry.h) assigned the id
  // `entity` to the name `name`.
  kNameAssign = 29,

  // The registry renamed `board` (generation `board_generation`) to `name`
  // (LeaderboardRegistry::Rename); the board keeps its generation, and its
  // later records name it `name`. A board named `name` before was dropped
  // by a kBoardDrop just before.
  kBoardRename = 30,

  // Edits and pins (EditsAndPins).
  //
  // Activity `entry.activity_id`'s payload is now `entry.payload`, edited at
  // `entry.edited_at` by the engine clock (`domain` is its activity-store
  // shard); nothing else of it changed.
  kActivityEdit = 31,
  // `entity` pinned the entry `entry` (its activity, ts and expiry) of its
  // own feed, above the pins it had (`domain` is `entity`'s shard).
  kPinAdd = 32,
  // `entity`'s pin of `entry.activity_id` ended (Unpin, a retract, or a Pin
  // that dropped the expired pins).
  kPinRemove = 33,
  // `entity` is mentioned by activity `keys[0]` in the own feed of `other`
  // (PublishOptions::mentions), recorded in `entity`'s shard.
  kMentionAdd = 34,

  // A DurableStore::WriteGroup that began with the tag `update_sequence`
  // (its first record, so a crash keeps it exactly when it keeps the
  // group), or the store's newest tag recorded again at Open and at each
  // compaction so that the log since the snapshot always holds it
  // (durable_store.h). No domain; no state but Replica::write_group_tag.
  kWriteGroupTag = 35,

  // Reactions (FeedReactions), recorded with the kCountersSet of the
  // counter they change (`domain` is the activity's store shard).
  //
  // `entity` reacted to activity `entry.activity_id` with kind `score` at
  // `entry.ts` by the engine clock; `other` is the reaction's notice id
  // (0: none).
  kReactionAdd = 36,
  // `entity`'s reaction `score` to `entry.activity_id` was taken back.
  kReactionRemove = 37,

  // Lists (FeedLists), recorded in the owner `entity`'s shard.
  //
  // `entity`'s list `other` was made, or its settings changed: named
  // `name`, exclusive when `merged_at_read` is set (ListSettings).
  kListSet = 38,
  // `entity`'s list `other` was deleted with its members.
  kListDelete = 39,
  // `owners[0]` became a member of `entity`'s list `other`.
  kListMemberAdd = 40,
  // `owners[0]` stopped being a member of `entity`'s list `other`.
  kListMemberRemove = 41,
};

// The kind's name as written in this header, e.g. "kTimelinePut".
FEEDCORE_EXPORT const char* ChangeKindName(ChangeKind kind);

enum class ActorMode : uint8_t {
  kCopied = 0,          // followers get copies (fan-out on write)
  kBecomingMerged = 1,  // passing the hybrid threshold
  kMerged = 2,          // followers merge it at read time
};

// The mode's name as written in this header, e.g. "kCopied".
FEEDCORE_EXPORT const char* ActorModeName(ActorMode mode);

// One change. Which fields are set depends on `kind` (see ChangeKind);
// the others keep their defaults.
struct ChangeRecord {
  uint64_t sequence = 0;
  // The stream clock's time when the record was appended.
  Micros time = 0;
  ChangeKind kind = ChangeKind::kTimelinePut;
  // The lock the change was made under (engine shard, activity-store shard
  // or leaderboard partition); restoring a snapshot uses it to skip what
  // the snapshot holds.
  uint32_t domain = 0;
  FeedType feed = FeedType::kHome;
  ActorMode mode = ActorMode::kCopied;
  bool merged_at_read = false;
  EntityId entity = 0;
  EntityId other = 0;
  std::vector<EntityId> owners;
  StoredEntry entry;
  std::vector<EntryKey> keys;
  std::string board;
  uint64_t board_generation = 0;
  LeaderboardOptions board_options;
  int64_t score = 0;
  uint64_t update_sequence = 0;
  std::optional<std::string> metadata;
  // kCountersSet: an activity's counters (ActivityCounters).
  std::vector<int64_t> counters;
  // kNameAssign: the name given the id `entity`.
  std::string name;

  friend bool operator==(const ChangeRecord&, const ChangeRecord&) = default;
};

using ChangeRecordPtr = std::shared_ptr<const ChangeRecord>;

// Where a reader starts.
struct StreamPosition {
  enum class Type {
    kTrimHorizon,    // the oldest retained record
    kLatest,         // the next record appended (nothing already there)
    kAtSequence,     // the record `sequence`
    kAfterSequence,  // the record after `sequence`
  };
  Type type = Type::kTrimHorizon;
  uint64_t sequence = 0;

  static StreamPosition TrimHorizon() { return {Type::kTrimHorizon, 0}; }
  static StreamPosition Latest() { return {Type::kLatest, 0}; }
  static StreamPosition AtSequence(uint64_t n) {
    return {Type::kAtSequence, n};
  }
  static StreamPosition AfterSequence(uint64_t n) {
    return {Type::kAfterSequence, n};
  }
};

// The position type's name as written in this header, e.g. "kTrimHorizon".
FEEDCORE_EXPORT const char* StreamPositionTypeName(StreamPosition::Type type);

struct ChangeStreamOptions {
  // Records retained, 1..2^40.
  size_t max_records = 1'000'000;
  // Approximate bytes of retained records (fixed size plus owners, keys,
  // payload and metadata), 1 KiB..2^48. The newest record is always kept,
  // however large.
  size_t max_bytes = size_t{256} << 20;
  // Records older than this are dropped; 0 keeps them regardless of age.
  Micros max_age = 0;
  // Time source for record times and `max_age`. Null: a SystemClock.
  std::shared_ptr<Clock> clock;
};

struct ChangeStreamStats {
  uint64_t oldest_sequence = 0;  // 0 when nothing is retained
  uint64_t next_sequence = 1;    // the sequence of the next record
  size_t records = 0;
  size_t bytes = 0;
  uint64_t dropped = 0;  // records dropped by retention so far
};

// Reads a stream in order from a position. Not thread-safe.
class FEEDCORE_EXPORT ChangeReader {
 public:
  virtual ~ChangeReader() = default;

  // Up to `max_records` (1..100000) records from the reader's position,
  // which then advances past them; empty when the reader is at the end.
  // OutOfRange (naming the oldest retained sequence) when retention has
  // dropped the record at the reader's position; the position is then
  // unchanged. InvalidArgument for a bad `max_records`.
  virtual absl::StatusOr<std::vector<ChangeRecordPtr>> Read(
      size_t max_records) = 0;

  // As Read, but waits up to `timeout` for a record when none is there.
  virtual absl::StatusOr<std::vector<ChangeRecordPtr>> ReadWait(
      size_t max_records, std::chrono::microseconds timeout) = 0;

  // The sequence number of the next record this reader returns.
  virtual uint64_t position() const = 0;

 protected:
  ChangeReader() = default;
};

// A push subscription: a thread of its own reads the stream and hands
// batches to the callback, in order. Destroying it stops the thread (after
// the callback in progress returns). If retention overtakes it, `on_error`
// gets the OutOfRange status and the subscription stops.
class FEEDCORE_EXPORT Subscription {
 public:
  virtual ~Subscription() = default;
  // The sequence number of the next record it delivers.
  virtual uint64_t position() const = 0;

 protected:
  Subscription() = default;
};

// The stream an engine and a registry record into. It has one
// implementation, so it is a concrete, final class: the library records
// through it without asking what it is, and a program that wants its own
// sink reads a ChangeStream (NewReader, Subscribe) instead of replacing it.
class FEEDCORE_EXPORT ChangeStream final {
 public:
  // InvalidArgument naming the option when one is out of range.
  static absl::StatusOr<std::shared_ptr<ChangeStream>> Create(
      ChangeStreamOptions options);

  ~ChangeStream();
  ChangeStream(const ChangeStream&) = delete;
  ChangeStream& operator=(const ChangeStream&) = delete;

  // A reader at `position`. OutOfRange (with the oldest retained sequence)
  // for an AtSequence/AfterSequence position that retention has dropped;
  // InvalidArgument for one beyond the next sequence to be written.
  // O(1); takes the stream's mutex briefly.
  absl::StatusOr<std::unique_ptr<ChangeReader>> NewReader(
      StreamPosition position) const;

  // Calls `on_records` from a thread of the subscription's own with every
  // batch (at most `batch` records, 1..100000) from `position` on. The
  // callback must not destroy its own Subscription. Errors as NewReader,
  // and InvalidArgument for a bad `batch`. Starts one thread.
  absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(
      StreamPosition position, size_t batch,
      std::function<void(absl::Span<const ChangeRecordPtr>)> on_records,
      std::function<void(const absl::Status&)> on_error) const;

  // Retention counters, exact at one instant. O(1); never fails.
  ChangeStreamStats Stats() const;

 private:
  friend struct internal::ChangeStreamAccess;
  // Inline, so that it is not exported: only Create builds a stream.
  explicit ChangeStream(std::shared_ptr<internal::ChangeLog> log)
      : log_(std::move(log)) {}

  const std::shared_ptr<internal::ChangeLog> log_;
};

}  // namespace feedcore

#endif  // FEEDCORE_CHANGE_STREAM_H_
