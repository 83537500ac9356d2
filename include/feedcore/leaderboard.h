// Leaderboard: members ranked by an integer score, write-sharded so that
// heavy concurrent score updates do not meet on one lock, with exact ranks.
//
//   auto board = feedcore::Leaderboard::Create({.partitions = 16}).value();
//   board->Increment(/*member=*/42, /*delta=*/150).value();  // 150
//   board->Set(7, 900).IgnoreError();  // cannot fail in memory
//   board->TopK(10).value();     // [{7, 900, rank 0}, {42, 150, rank 1}]
//   board->Rank(42).value();     // 1: one member ranks above 42
//   board->Around(42, 5, 5).value();  // up to 5 neighbours either side
//   board->IncrementMany({{42, 10}, {7, 5}});  // [160, 905]: one call
//
// `Create` builds the in-process board described here; the same interface
// is also implemented on a Redis Cluster (redis_cluster.h), with the
// differences listed there.
//
// Several independent boards (one per game mode, per region, per season)
// live in a `LeaderboardRegistry` under names, or anywhere the program keeps
// the handles `Create` returns.
//
// Scores and order
// ----------------
// A score is an `int64_t`; every value is valid, negatives included. Integers,
// not doubles: game scores need exact sums, and an increment that would leave
// the int64 range is reported as an error instead of wrapping or rounding.
//
// Members are ordered by the better score first: the higher one on a
// `ScoreOrder::kHigherFirst` board (the default), the lower one on a
// `kLowerFirst` board (lap times, golf). Every read follows the board's
// order: rank 0, TopK, Around, pages and their cursors, "better" in
// conditional writes. Ties are broken by
// `LeaderboardOptions::tie_break`:
//   * `kEarlierUpdateFirst` (the default): the member who reached the score
//     first ranks above. Each board numbers the score changes it applies
//     (an update sequence, not wall time, so the order is exact and
//     reproducible); a member carries the number of the change that gave it
//     its current score. A `Set` to the score it already has, or an
//     `Increment` by 0, changes nothing and keeps the member's place.
//   * `kLowerMemberFirst`: the lower member id ranks above.
// Either way the lower member id decides last, so the order is a strict
// total order: every member has exactly one rank, and the same sequence of
// calls on one thread always gives the same board.
//
// Ranks
// -----
// A rank is 0-based. The leader has rank 0. `LeaderboardOptions::rank_style`
// chooses what every read that reports a rank reports:
//   * kUnique (the default): the number of members ranked above, ties
//     ordered by the tie-break: scores 900, 900, 800 rank 0, 1, 2.
//   * kCompetition: the number of members with a better score, so tied
//     scores share a rank and the next rank skips: 0, 0, 2 (shown 1, 1, 3).
//   * kDense: the number of distinct better scores: 0, 0, 1 (shown 1, 1, 2).
// The order of entries in a read is the same for all three.
//
// Metadata
// --------
// A board created with `max_metadata_bytes > 0` keeps a short byte string
// per member (display name, country, avatar id), written with a score
// (`ScoreWrite::metadata`) or alone (`SetMetadata`), removed with the
// member, and returned by reads that ask for it. It is recorded in the
// change stream and snapshots like the score.
//
// Partitions
// ----------
// A member lives in partition `XXH3_64bits(member) % partitions`. Each
// partition has its own lock, an order-statistic B+tree of its members
// (updates and counting the members above a key are O(log n)), and a
// member -> score map (score lookups are O(1)). Writes touch one partition.
// Reads that need the whole board (ranks, top-k, neighbours, pages) combine the
// partitions: a rank is the sum over partitions of the members ranking
// above; a top-k or a page is a lazy k-way merge of the partitions' sorted
// lists that reads at most k + partitions - 1 entries (a page learns from
// counts, not by reading, whether another page follows).
//
// Consistency
// -----------
// Every read that spans partitions (`Rank`, `TopK`, `Around`, `ReadPage`,
// `Size`, `CountInRange`, `Percentile`, the `...Among` reads) takes every
// partition's lock shared, in ascending partition order, and keeps them all
// until it has its answer: it sees one global snapshot of the board, in which
// each write happened either completely or not at all. The answer is exactly
// the board's state at one instant between the call and its return (the reads
// are linearizable). A per-partition snapshot (locking, reading and releasing
// one partition after another) would hold each lock for less time, but a lazy
// merge must go back to every partition until it is done, and a rank compares
// one key against all of them; with per-partition snapshots a top-k could be a
// ranking that never existed (A shown above B although B led A at every
// moment). The price is that a cross-partition read delays writers on every
// partition for its duration, which is microseconds for a top-100 and grows
// with the page size (bounded by `max_page_size`). `Score` and every write lock
// one partition. A `TopK` of at most 128 entries takes no lock when no write
// has changed any partition's best entries since an earlier `TopK` merged them
// under the locks: it returns that copy, checked without a lock, which is the
// same answer at an instant within the call.
//
// Paging
// ------
// `ReadPage` walks the whole board best-first or worst-first, a page at a
// time. The opaque `next_cursor` names the last entry returned (its score,
// update sequence and member), so paging is keyset-based: members whose
// scores do not change while a reader pages are each returned exactly once,
// with no duplicates or skips, whatever else is written meanwhile. A member
// whose score changes mid-way is returned where its current key places it
// relative to the cursor: it may appear twice (moved from the part already
// read to the part still ahead) or not at all (moved the other way). Ranks
// in a page are the ranks at the instant that page was read. A cursor is
// only valid on the board (and in the order) that made it; `Clear()` does
// not invalidate cursors, which then simply continue from their position.
//
// Errors
// ------
// Every call validates its arguments before changing anything: a call that
// returns an error has changed nothing. `NotFound` for a member that is not
// on the board (`Score`, `Rank`, `Around`, `Remove`, `Percentile`,
// `Metadata`, `SetMetadata`); `OutOfRange` for an
// increment whose result would not fit in int64; `InvalidArgument` for a
// bad option, a `k`, `limit`, `before` or `after` out of range, or a cursor
// that is malformed, damaged, from another board or for the other order.
// Messages name the offending argument.
//
// Thread safety
// -------------
// Every method of `Leaderboard` and `LeaderboardRegistry` may be called from
// any number of threads at once. Writes to members in different partitions
// never wait for each other (with `kEarlierUpdateFirst` they do share one
// atomic counter, the update sequence). Lock order: a call that holds more than
// one partition lock (every cross-partition read shared, `Clear` exclusive)
// takes them in ascending partition index and holds no other lock of the board;
// writes hold one partition lock; the registry's lock is never held while a
// partition lock is taken, nor taken while one is held. Readers share the
// standard library's reader/writer lock, which on Linux lets new readers in
// while a writer waits: a continuous overlap of cross-partition readers
// from many threads can delay writers.
#ifndef FEEDCORE_LEADERBOARD_H_
#define FEEDCORE_LEADERBOARD_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "feedcore/export.h"
#include "feedcore/leaderboard_options.h"
#include "feedcore/types.h"

namespace feedcore {

class ChangeStream;
namespace internal {
class RegistryAccess;
}  // namespace internal

// What a conditional write does to the score.
enum class WriteOp : uint8_t {
  kSet,        // the score becomes `value`
  kIncrement,  // the score becomes score + `value` (absent: `value`)
};

// The operation's name as written in this header, e.g. "kSet".
FEEDCORE_EXPORT const char* WriteOpName(WriteOp op);

// When a conditional write applies; the names of Redis's ZADD flags are
// given for each. "Better" follows the board's score order: higher on a
// kHigherFirst board, lower on a kLowerFirst one. For kIncrement the
// comparison is between the score after the increment and the one before.
enum class WriteCondition : uint8_t {
  kAlways,              // (no flag)
  kIfAbsent,            // NX: only adds, never changes a member
  kIfPresent,           // XX: only changes, never adds
  kIfBetter,            // GT on a higher-first board: keep-best; adds
  kIfWorse,             // LT on a higher-first board; adds
  kIfPresentAndBetter,  // XX GT
  kIfPresentAndWorse,   // XX LT
};

// The condition's name as written in this header, e.g. "kIfAbsent".
FEEDCORE_EXPORT const char* WriteConditionName(WriteCondition condition);

// One conditional write; see Leaderboard::Write.
struct ScoreWrite {
  MemberId member = 0;
  WriteOp op = WriteOp::kSet;
  // The score for kSet, the delta (negative to decrement) for kIncrement.
  int64_t value = 0;
  WriteCondition condition = WriteCondition::kAlways;
  // When set, and the write applies, the member's metadata becomes these
  // bytes (empty removes it), even if the score stays the same. Refused on
  // a board whose max_metadata_bytes is 0 or below the size.
  std::optional<std::string> metadata = std::nullopt;

  friend bool operator==(const ScoreWrite&, const ScoreWrite&) = default;
};

enum class WriteOutcome : uint8_t {
  kAdded,       // the member was absent and now has `score`
  kChanged,     // the member's score changed to `score`
  kUnchanged,   // the condition held, but the score stayed (same score,
                // increment by 0); metadata, if given, was written
  kNotApplied,  // the condition did not hold: nothing was written
};

// The outcome's name as written in this header, e.g. "kAdded".
FEEDCORE_EXPORT const char* WriteOutcomeName(WriteOutcome outcome);

struct WriteResult {
  WriteOutcome outcome = WriteOutcome::kNotApplied;
  // The member's score after the call; none when it is not on the board
  // (kIfPresent and friends on an absent member).
  std::optional<int64_t> score;

  friend bool operator==(const WriteResult&, const WriteResult&) = default;
};

// Scores between two bounds, by number (not by rank order: on a kLowerFirst
// board too, `min` is the smaller score). The default is every score:
// minus and plus infinity are the int64 limits, inclusive. A range whose
// minimum exceeds its maximum is empty, not an error.
struct ScoreRange {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  bool min_exclusive = false;  // ( instead of [
  bool max_exclusive = false;  // ) instead of ]

  friend bool operator==(const ScoreRange&, const ScoreRange&) = default;
};

// One element of Leaderboard::IncrementMany: add `delta` to `member`.
struct ScoreIncrement {
  MemberId member = 0;
  int64_t delta = 0;

  friend bool operator==(const ScoreIncrement&,
                         const ScoreIncrement&) = default;
};

// A member's place on the board.
struct LeaderboardEntry {
  MemberId member = 0;
  int64_t score = 0;
  // 0-based, in the board's RankStyle (see "Ranks"), at the instant of the
  // read.
  uint64_t rank = 0;
  // The member's metadata, when the read asked for it; otherwise empty.
  std::string metadata = {};

  friend bool operator==(const LeaderboardEntry&,
                         const LeaderboardEntry&) = default;
};

enum class LeaderboardOrder {
  kBestFirst,   // rank 0 first
  kWorstFirst,  // last rank first
};

// The order's name as written in this header, e.g. "kBestFirst".
FEEDCORE_EXPORT const char* LeaderboardOrderName(LeaderboardOrder order);

struct LeaderboardReadOptions {
  // Entries per page, 1..LeaderboardOptions::max_page_size.
  size_t limit = 50;
  // Empty for the first page; otherwise the `next_cursor` of the previous
  // page of the same board, read in the same order and range.
  std::string cursor;
  LeaderboardOrder order = LeaderboardOrder::kBestFirst;
  // Only members whose score is in `range` (a page by score: ZRANGE BYSCORE).
  ScoreRange range;
  // Entries skipped, in `order` and within `range`, after the cursor's
  // position (or the start) before the page begins: a page starting at any
  // rank. Offsets beyond the range give an empty page. Costs a few rounds
  // (O(log n) at worst) of O(partitions x log n) each, of a selection among
  // the partitions; never time in proportion to the offset.
  uint64_t offset = 0;
  // Fill LeaderboardEntry::metadata.
  bool with_metadata = false;
  // Whether the page carries the cursor of the next one. A caller that
  // wants this page and no further (a read of a given count, as ZRANGE)
  // sets it false and saves encoding a cursor; `next_cursor` is then empty
  // even when entries follow.
  bool with_next_cursor = true;
};

// What a backend offers beyond what every Leaderboard does; see
// Leaderboard::Supports.
enum class LeaderboardCapability : uint8_t {
  // TieBreak::kEarlierUpdateFirst: one update order across the whole
  // board. A backend without it refuses to create a board with that
  // tie-break (`Unimplemented`). The Redis Cluster backend has it, at the
  // cost of one more round trip per write call (redis_cluster.h).
  kEarlierUpdateFirst = 0,
  // A guarantee rather than a call: every read across partitions (Rank,
  // TopK, Around, ReadPage, Size) sees one snapshot of the whole board, and
  // Clear is atomic (see "Consistency" above). Without it each partition is
  // read, and cleared, atomically on its own, and nothing fails. The Redis
  // Cluster backend lacks it.
  kBoardSnapshotReads = 1,
  // RankStyle::kDense: ranks that count the distinct better scores. A
  // backend without it refuses to create a board with that rank style
  // (`Unimplemented`). The Redis Cluster backend lacks it: the distinct
  // scores above a member are spread over every partition, and no
  // partition can count them without reading them.
  kDenseRanks = 2,
};
inline constexpr LeaderboardCapability kAllLeaderboardCapabilities[] = {
    LeaderboardCapability::kEarlierUpdateFirst,
    LeaderboardCapability::kBoardSnapshotReads,
    LeaderboardCapability::kDenseRanks};

// The capability's name as written in this header, e.g. "kEarlierUpdateFirst".
FEEDCORE_EXPORT const char* LeaderboardCapabilityName(
    LeaderboardCapability capability);

// One page of a board. `next_cursor` is opaque; it is empty when no entry
// follows this page (at the instant it was read) or the read asked for
// none (LeaderboardReadOptions::with_next_cursor).
struct LeaderboardPage {
  std::vector<LeaderboardEntry> entries;
  std::string next_cursor;
};

class FEEDCORE_EXPORT Leaderboard {
 public:
  // Creates an empty board. `InvalidArgument` naming the option when one is
  // out of range. Cheap: about 1 KB per partition, no threads.
  static absl::StatusOr<std::unique_ptr<Leaderboard>> Create(
      const LeaderboardOptions& options = {});

  virtual ~Leaderboard() = default;
  Leaderboard(const Leaderboard&) = delete;
  Leaderboard& operator=(const Leaderboard&) = delete;

  // Whether this board's backend has `capability`. Constant for the
  // board's lifetime; O(1), never blocks.
  virtual bool Supports(LeaderboardCapability capability) const = 0;

  // Gives `member` the score `score`, adding the member if absent.
  // O(log n) expected; O(1) when the new score keeps the member between its
  // two neighbours. Always OK for the in-memory board; the status is for
  // backends that can fail.
  virtual absl::Status Set(MemberId member, int64_t score) = 0;

  // Adds `delta` (which may be negative) to `member`'s score and returns the
  // new score; an absent member is added with score `delta`. `OutOfRange`,
  // changing nothing, if the sum would not fit in int64.
  virtual absl::StatusOr<int64_t> Increment(MemberId member, int64_t delta) = 0;

  // Many increments in one call, the way a Redis client pipelines ZINCRBY
  // (a game server applying a tick's score changes, a counter flushing what
  // it aggregated). Result i is what Increment(increments[i].member,
  // increments[i].delta) returns: the new score, or `OutOfRange` for that
  // element alone, which then changes nothing while the others still
  // apply. There is no error for the call as a whole; an empty span returns
  // an empty vector.
  //
  // Order and atomicity. Elements naming the same member apply in the
  // order given, so its results are the running sums. Each element is
  // atomic, like an Increment, but the call is not: a concurrent read may
  // see some elements applied and others not yet, and not necessarily a
  // prefix (elements of different partitions apply in partition order).
  // With kEarlierUpdateFirst the elements are numbered in the order given
  // when the call begins: members that reach equal scores within one call
  // rank in the order of their elements, and ahead of members that other
  // threads move to that score while the call runs.
  //
  // The in-memory board sorts the elements by partition, takes each
  // partition's lock once per run of up to 128 of its elements, and
  // fetches the memory later elements need while it applies earlier ones,
  // so that their cache misses overlap: on a board larger than the CPU's
  // caches, about twice the rate of one Increment call per element
  // (docs/benchmark-results.md, "leaderboard"). Writers of other partitions
  // never wait for it; readers and writers of a partition wait at most one run.
  virtual std::vector<absl::StatusOr<int64_t>> IncrementMany(
      absl::Span<const ScoreIncrement> increments);

  // A conditional write, atomic per member: the condition is checked and
  // the score written under one hold of the member's partition, so two
  // keep-best writes racing on one member leave the better score, and an
  // only-if-absent write adds the member at most once. The result says
  // what happened and the score after it. Errors, changing nothing:
  // `OutOfRange` for an increment whose result would not fit in int64
  // (checked after the presence conditions: kIfAbsent on a member that is
  // there, or kIfPresent... on one that is not, is kNotApplied whatever
  // the increment);
  // `InvalidArgument` for an op or condition out of range, or metadata on a
  // board that keeps none or longer than max_metadata_bytes. A condition
  // that does not hold is not an error (kNotApplied). With
  // kEarlierUpdateFirst, only a write that changes the score moves the
  // member behind those who reached that score first. O(log n) expected.
  virtual absl::StatusOr<WriteResult> Write(const ScoreWrite& write) = 0;

  // Many conditional writes in one call, with IncrementMany's rules:
  // result i is what Write(writes[i]) returns, elements of one member
  // apply in the order given, each element is atomic, the call is not.
  // The in-memory board takes each partition's lock once per run of its
  // elements, as IncrementMany does.
  virtual std::vector<absl::StatusOr<WriteResult>> WriteMany(
      absl::Span<const ScoreWrite> writes);

  // Replaces `member`'s metadata (empty removes it) without touching its
  // score or place. `NotFound` if the member is not on the board;
  // `InvalidArgument` as for ScoreWrite::metadata.
  virtual absl::Status SetMetadata(MemberId member,
                                   absl::string_view metadata) = 0;

  // `member`'s metadata (empty if it has none). `NotFound` if the member
  // is not on the board; `InvalidArgument` on a board that keeps none.
  virtual absl::StatusOr<std::string> Metadata(MemberId member) const = 0;

  // Removes `member` from the board. `NotFound` if it is not on it.
  virtual absl::Status Remove(MemberId member) = 0;

  // Removes every member (a season reset). With
  // LeaderboardCapability::kBoardSnapshotReads it is atomic: a
  // cross-partition read sees the board either entirely before or entirely
  // after; without it, each partition is cleared atomically, and a failure
  // (`Unavailable` on a server backend) may leave some partitions cleared
  // and others not: call it again. Always OK in process, where the memory
  // of the removed members is released after the locks are dropped, so
  // writers wait only for the exchange, not for the release.
  virtual absl::Status Clear() = 0;

  // `member`'s score. `NotFound` if it is not on the board. Locks one
  // partition.
  virtual absl::StatusOr<int64_t> Score(MemberId member) const = 0;
  // Score for a caller that expects absence (whether a removed member is
  // back, ZSCORE of a missing member): nullopt if `member` is not on the
  // board, without building an error. Locks one partition; fails only as
  // Score does for other reasons (a server backend's errors).
  virtual absl::StatusOr<std::optional<int64_t>> ScoreIfPresent(
      MemberId member) const = 0;

  // `member`'s exact global rank (0-based). `NotFound` if absent.
  // O(partitions x log n).
  virtual absl::StatusOr<uint64_t> Rank(MemberId member) const = 0;

  // The best min(k, members) entries, best first, ranks 0, 1, 2...
  // `InvalidArgument` unless 1 <= k <= max_page_size. Reads at most
  // k + partitions - 1 entries: O(partitions + k log partitions). In
  // process, with k <= 128 and no write to the board's best entries since
  // a TopK of at least k: a copy of that answer, O(partitions + k), no lock.
  virtual absl::StatusOr<std::vector<LeaderboardEntry>> TopK(
      size_t k) const = 0;

  // `member` with up to `before` entries ranked immediately above it and
  // up to `after` ranked immediately below, best first, with their ranks
  // (fewer near either end of the board). `NotFound` if `member` is absent;
  // `InvalidArgument` if `before` or `after` exceeds max_page_size.
  virtual absl::StatusOr<std::vector<LeaderboardEntry>> Around(
      MemberId member, size_t before, size_t after) const = 0;

  // One page of the board in `options.order`, within `options.range`,
  // starting `options.offset` entries after the cursor (or the start); see
  // "Paging" above. O(partitions x log n + limit x log partitions), whatever
  // the range; an offset adds a selection of a few rounds of
  // O(partitions x log n) each (see `offset`), whatever the offset.
  // `InvalidArgument` for a limit of 0 or above max_page_size, metadata
  // asked of a board that keeps none, or a cursor that is malformed,
  // damaged, from another board or for the other order.
  virtual absl::StatusOr<LeaderboardPage> ReadPage(
      const LeaderboardReadOptions& options) const = 0;

  // The number of members whose score is in `range` (ZCOUNT).
  // O(partitions x log n). Never fails in process.
  virtual absl::StatusOr<uint64_t> CountInRange(
      const ScoreRange& range) const = 0;

  // The percentile rank of `member`: the percentage (0 to 100) of the
  // board's members that rank below it, where a member tied with it ranks
  // below only with RankStyle::kUnique. The only member of a board is at 0;
  // the leader of 100 distinct scores at 99. `NotFound` if absent.
  // O(partitions x log n).
  virtual absl::StatusOr<double> Percentile(MemberId member) const = 0;

  // A friends' board: the board restricted to `members` (followees, a
  // clan; ids that are not on the board are skipped, duplicates count
  // once). The best min(k, present members), best first, with ranks among
  // them in the board's RankStyle. `InvalidArgument` unless
  // 1 <= k <= max_page_size and members.size() <= kMaxAmongMembers. One
  // snapshot of the board, exact; O(|members| x log |members|) plus one
  // score lookup per member, independent of the board's size.
  virtual absl::StatusOr<std::vector<LeaderboardEntry>> TopKAmong(
      absl::Span<const MemberId> members, size_t k) const = 0;

  // `member`'s rank among `members` plus itself. `NotFound` if `member`
  // is not on the board; limits as TopKAmong.
  virtual absl::StatusOr<uint64_t> RankAmong(
      MemberId member, absl::Span<const MemberId> members) const = 0;

  // Around(member, before, after) among `members` plus `member` itself.
  virtual absl::StatusOr<std::vector<LeaderboardEntry>> AroundAmong(
      MemberId member, absl::Span<const MemberId> members, size_t before,
      size_t after) const = 0;

  // Number of members. In process, O(partitions) under every partition's
  // lock and never fails; a server backend asks each partition (one
  // pipelined round trip per node) and fails with its errors (e.g.
  // `Unavailable`) rather than guess.
  virtual absl::StatusOr<size_t> Size() const = 0;

  // The options the board runs with.
  virtual const LeaderboardOptions& options() const = 0;

 protected:
  Leaderboard() = default;
};

// Named leaderboards of one program, e.g. one per game mode. Creating a
// board is cheap, so a registry may hold thousands.
//
// Ownership: the registry holds one reference to each board it lists;
// callers get shared handles. `Drop` takes a name off the registry at once,
// but the board stays valid for every handle still held and is destroyed
// when the last one goes. A name that is dropped and created again names a
// new, empty board. A board tells its own cursors from those of every other
// board alive at the same time; a stale cursor of a destroyed board can be
// taken by a board later created at the same address as a position in it
// (a cursor is only a key position: that can misplace a page, never expose
// anything).
class FEEDCORE_EXPORT LeaderboardRegistry {
 public:
  LeaderboardRegistry();
  // A registry whose boards record every change (scores set and removed,
  // partitions cleared, boards created and dropped) in `change_stream`
  // (see change_stream.h), so that snapshots and replicas can include them.
  // Null records nothing. Writes
  // through a handle to a dropped board are still recorded, under that board's
  // generation, which a replica ignores.
  explicit LeaderboardRegistry(std::shared_ptr<ChangeStream> change_stream);
  ~LeaderboardRegistry();
  LeaderboardRegistry(const LeaderboardRegistry&) = delete;
  LeaderboardRegistry& operator=(const LeaderboardRegistry&) = delete;

  // The board named `name`, created with `options` if there is none.
  // `InvalidArgument` for an empty name, one longer than
  // kMaxLeaderboardNameLength, or invalid options; `AlreadyExists` if a
  // board of that name exists with different options.
  absl::StatusOr<std::shared_ptr<Leaderboard>> GetOrCreate(
      absl::string_view name, const LeaderboardOptions& options = {});

  // The board named `name`; `NotFound` if there is none.
  absl::StatusOr<std::shared_ptr<Leaderboard>> Get(
      absl::string_view name) const;

  // Takes `name` off the registry; `NotFound` if there is no such board.
  absl::Status Drop(absl::string_view name);

  // A number that tells the board named `name` from every other board the
  // registry has held, under any name (the `board_generation` of its
  // records); kept by Rename and across snapshots and a DurableStore's
  // restarts. `NotFound` if there is no such board.
  absl::StatusOr<uint64_t> Generation(absl::string_view name) const;

  // Gives the board named `from` the name `to`, as Redis's RENAME does a
  // key: handles to it stay valid and keep their board, and a board already
  // named `to` is dropped (as Drop would) in the same step, so no caller
  // sees both names missing or both names on one board. Renaming a board to
  // its own name changes nothing. `NotFound` if there is no board `from`;
  // `InvalidArgument` for a `to` that GetOrCreate would refuse. With a
  // change stream it records the drop of `to` and the rename. Cost: a hash
  // map move, plus each of the board's partition locks taken in turn, so
  // writes to the board wait for it.
  absl::Status Rename(absl::string_view from, absl::string_view to);

  // The names of every board, sorted.
  std::vector<std::string> Names() const;

  // Number of boards.
  size_t size() const;

 private:
  friend class internal::RegistryAccess;
  struct State;
  const std::unique_ptr<State> state_;
};

}  // namespace feedcore

#endif  // FEEDCORE_LEADERBOARD_H_
