// LeaderboardImpl: the in-memory Leaderboard.
//
// Layout. N partitions, each on its own cache line. A member lives
// in partition XXH3_64bits(member) % N. A partition is a lock and a pointer
// to its data: the RankedBtree of its members (best first, an
// order-statistic B+tree) and a flat hash map member -> (score, update
// sequence), the member's current RankKey less the member. Both hold rank
// scores (score_order.h): the score itself on a kHigherFirst board, ~score
// on a kLowerFirst one, so that the tree's best-first order is the board's
// on either; scores are turned into rank scores where a write enters and
// back where an entry or a score leaves (EntryOf, Score), and increments
// and their overflow checks are computed on scores. Entries move
// between and within the tree's leaves, so the map keeps no pointer into
// the tree: a write or a read that needs the member's place descends to its
// key, whose upper levels are in cache. The data sits behind a pointer so
// that Clear() can exchange it for an empty one under the locks and free
// the old one after releasing them.
//
// Metadata. A third structure per partition, a flat hash map member ->
// bytes, holds the members that have metadata and nothing else: an empty
// map allocates nothing, so a board or a member without metadata pays no
// memory for it, and the tree and the member map, which every write and
// read walks, stay as compact as on a board without metadata. It goes with
// the member (Remove) and with the partition's data (Clear).
//
// Update sequence. With TieBreak::kEarlierUpdateFirst every score change
// takes the next value of one per-board atomic counter while holding its
// partition's lock, so per member the sequence follows the order in which
// its changes were applied. With kLowerMemberFirst the sequence is 0 for
// everyone and the counter is never touched.
//
// Ranks. The reads compute unique ranks (members above); with
// RankStyle::kCompetition or kDense a pass over the entries, with the
// snapshot still held, turns them into the board's style (StyleRanks).
// A kDense board also keeps a DistinctScoreIndex (distinct_score_index.h):
// every write that adds, moves or removes a member reports the change of
// its rank score to it (RankScoreMoved).
//
// Top. TopK(k) for k up to BoardTopCache::kEntries returns a merged copy
// of the board's best entries while no partition's best entries changed
// since it was merged (leaderboard_top_cache.h), without any lock; every
// write that changes a partition's best entries increments that
// partition's top version (NoteTopChange), which the copy is checked
// against. Otherwise it merges under the snapshot and publishes the copy.
//
// Lock order. Cross-partition reads take every partition lock shared in
// ascending index (SharedSnapshot); Clear takes them all exclusively in the
// same order; everything else holds exactly one partition lock. Under a
// partition lock a write may take one shard lock of the DistinctScoreIndex
// at a time, and the leaf pool's lock.
#ifndef FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_IMPL_H_
#define FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_IMPL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/mutex.h"
#include "contract/score_order.h"
#include "feedcore/leaderboard.h"
#include "leaderboard/leaderboard_range.h"
#include "leaderboard/leaderboard_top_cache.h"
#include "leaderboard/ranked_btree.h"
#include "memory/huge_page_allocator.h"
#include "memory/huge_page_pool.h"
#include "stream/change_log.h"

namespace feedcore::internal {

class DistinctScoreIndex;

class LeaderboardImpl final : public Leaderboard {
 public:
  // REQUIRES: ValidateLeaderboardOptions(options).ok().
  explicit LeaderboardImpl(const LeaderboardOptions& options);
  ~LeaderboardImpl() override;

  bool Supports(LeaderboardCapability) const override { return true; }

  absl::Status Set(MemberId member, int64_t score) override;
  absl::StatusOr<int64_t> Increment(MemberId member, int64_t delta) override;
  std::vector<absl::StatusOr<int64_t>> IncrementMany(
      absl::Span<const ScoreIncrement> increments) override;
  absl::StatusOr<WriteResult> Write(const ScoreWrite& write) override;
  std::vector<absl::StatusOr<WriteResult>> WriteMany(
      absl::Span<const ScoreWrite> writes) override;
  absl::Status SetMetadata(MemberId member,
                           absl::string_view metadata) override;
  absl::StatusOr<std::string> Metadata(MemberId member) const override;
  absl::Status Remove(MemberId member) override;
  absl::Status Clear() override;
  absl::StatusOr<int64_t> Score(MemberId member) const override;
  absl::StatusOr<std::optional<int64_t>> ScoreIfPresent(
      MemberId member) const override;
  absl::StatusOr<uint64_t> Rank(MemberId member) const override;
  absl::StatusOr<std::vector<LeaderboardEntry>> TopK(size_t k) const override;
  absl::StatusOr<std::vector<LeaderboardEntry>> Around(
      MemberId member, size_t before, size_t after) const override;
  absl::StatusOr<LeaderboardPage> ReadPage(
      const LeaderboardReadOptions& options) const override;
  absl::StatusOr<size_t> Size() const override;
  absl::StatusOr<uint64_t> CountInRange(const ScoreRange& range) const override;
  absl::StatusOr<double> Percentile(MemberId member) const override;
  absl::StatusOr<std::vector<LeaderboardEntry>> TopKAmong(
      absl::Span<const MemberId> members, size_t k) const override;
  absl::StatusOr<uint64_t> RankAmong(
      MemberId member, absl::Span<const MemberId> members) const override;
  absl::StatusOr<std::vector<LeaderboardEntry>> AroundAmong(
      MemberId member, absl::Span<const MemberId> members, size_t before,
      size_t after) const override;
  const LeaderboardOptions& options() const override { return options_; }

  // TopK by the merge under the snapshot, never from the cache, that also
  // adds to `*entries_read` the number of entries its merge read from the
  // partitions (at most k + partitions - 1).
  absl::StatusOr<std::vector<LeaderboardEntry>> TopKCounted(
      size_t k, size_t* entries_read) const;

  // TopK's read of its copy of the board's best entries alone: fills
  // `*out` (empty on entry) and returns true when the copy holds the
  // current top k (see leaderboard_top_cache.h); false, `*out` empty,
  // otherwise. REQUIRES: 1 <= k <= max_page_size.
  bool TopKFromCopy(size_t k, std::vector<LeaderboardEntry>* out) const;

  // The naive scatter-gather top-k, for comparison in tests and
  // benchmarks: under the same snapshot, copies the best k entries of every
  // partition (up to partitions x k reads, added to `*entries_read`), sorts
  // them and keeps the best k. Same result as TopK.
  absl::StatusOr<std::vector<LeaderboardEntry>> TopKReadingKPerPartition(
      size_t k, size_t* entries_read) const;

  // ReadPage that also adds to `*work` the entries it read and the tree
  // descents it made: O(partitions x log n) descents and at most
  // limit + partitions entries beyond the selection's (see SelectAmong),
  // whatever the offset or the range.
  absl::StatusOr<LeaderboardPage> ReadPageCounted(
      const LeaderboardReadOptions& options, ReadWork* work) const;

  // Identifies this board in its cursors; unique within the process.
  uint64_t board_id() const { return board_id_; }
  size_t PartitionOf(MemberId member) const;
  // Members per partition, under one snapshot.
  std::vector<size_t> PartitionSizes() const;
  // Checks every partition's tree and that its map holds exactly its
  // entries with their keys, each in the right partition, and on a kDense
  // board the DistinctScoreIndex against them. For tests.
  bool CheckInvariants() const;

  // --- Change stream and snapshots (leaderboard_replay.cc) ---

  // Records every later change of this board in `log` as board `name`,
  // generation `generation`. Called once, before the board is shared.
  void StartRecording(ChangeLog* log, std::string name, uint64_t generation);

  // Records kBoardRename to `name` and names the board `name` in every
  // later record, under all the partition locks, so no record of a write
  // names the board's old name after the rename's record or its new name
  // before. REQUIRES: recording.
  void RecordRename(std::string name);

  // Make a recorded change exactly as recorded (and record it, if this
  // board records).
  // `score` is the score (not the rank score); a non-null `metadata`
  // replaces the member's metadata (empty: none).
  void ApplyScore(MemberId member, int64_t score, uint64_t update_sequence,
                  const std::string* metadata = nullptr);
  void ApplyRemove(MemberId member);
  void ApplyClear(size_t partition);

  // Appends partition `p`'s members (member, score, update sequence) and
  // their metadata, copied under its lock held shared, to `out` (layout in
  // leaderboard_replay.cc), and returns `log`'s next
  // sequence number read under that lock (0 without a log).
  uint64_t SerializePartition(size_t p, const ChangeLog* log,
                              std::string* out) const;
  // Loads what SerializePartition wrote into an empty partition. DataLoss
  // naming what is wrong when `bytes` is malformed.
  absl::Status LoadPartition(size_t p, std::string_view bytes);
  // The next update sequence this board would hand out.
  uint64_t next_update_sequence() const {
    return next_seq_.load(std::memory_order_relaxed) + 1;
  }

 private:
  using Position = RankedBtree::Position;

  // A member's current key, less the member (the map's key).
  struct Placed {
    int64_t score;  // the rank score
    uint64_t seq;
  };

  using MemberMap =
      absl::flat_hash_map<MemberId, Placed, absl::Hash<MemberId>,
                          std::equal_to<MemberId>,
                          HugePageAllocator<std::pair<const MemberId, Placed>>>;

  // Only the members with metadata, never an empty string.
  using MetadataMap = absl::flat_hash_map<MemberId, std::string>;

  struct PartitionData {
    explicit PartitionData(HugePagePool* leaf_pool) : tree(leaf_pool) {}
    RankedBtree tree;
    MemberMap members;
    MetadataMap metadata;
    // The key of the tree's entry at position BoardTopCache::kEntries - 1,
    // the last of the partition's best entries; none while the tree holds
    // fewer. A change whose old or new key ranks at or above it changes
    // the partition's best entries (NoteTopChange).
    std::optional<RankKey> top_edge;
  };

  struct alignas(64) Partition {
    // The lock order of docs/architecture.md, checked by clang
    // (-Wthread-safety-beta): a write that creates or frees a leaf takes the
    // board's leaf pool lock under this one.
    mutable SharedMutex mu ABSL_ACQUIRED_BEFORE(HugePagePool::mu_);
    std::unique_ptr<PartitionData> data ABSL_GUARDED_BY(mu);
    // Incremented, with `mu` held exclusively, by every write that changes
    // the partition's best BoardTopCache::kEntries entries; read without
    // the lock by TopK (leaderboard_top_cache.h). On a line of its own, so
    // that writers taking `mu` do not take the line from those readers.
    alignas(64) std::atomic<uint64_t> top_version{0};
  };

  class SharedSnapshot;
  // Names Partition::mu in its lock order and reads under SharedSnapshot.
  friend class DistinctScoreIndex;

  // Where a page starts (leaderboard_range_reads.cc).
  struct PageStart {
    // Best-first: the rank of the page's first entry; worst-first: one
    // more than that.
    uint64_t rank = 0;
    // Entries from the page's first to the range's end, in read order.
    uint64_t remaining = 0;
  };
  // Sets runs[p], for every partition p, to p's first entry of the page
  // `options` asks for after `after` (nullopt: from the start), in
  // `options.order` (invalid when p has none): its first entry in the range
  // past the cursor and the offset, which it finds with SelectAmong. A
  // merge of the runs in that order gives the page, for up to `remaining`
  // entries. O(partitions x log n) (the selection's rounds aside).
  PageStart StartPage(const SharedSnapshot& snapshot,
                      const LeaderboardReadOptions& options,
                      const std::optional<RankKey>& after, Position* runs,
                      ReadWork* work) const;

  // The entry of the tree key `key` (its rank score turned back into the
  // score) at rank `rank`.
  LeaderboardEntry EntryOf(const RankKey& key, uint64_t rank) const;
  int64_t ToRankScore(int64_t score) const {
    return RankScoreOf(score, options_.score_order);
  }
  int64_t ToScore(int64_t rank_score) const {
    return ScoreOfRankScore(rank_score, options_.score_order);
  }

  struct Recording {
    ChangeLog* log;
    // Changed only by RecordRename, holding every partition lock; read by
    // Record, holding one.
    std::string name;
    uint64_t generation;
  };
  // The writes themselves; the public calls run them inside a WriteCall
  // (stream/change_log.h).
  absl::Status SetInMemory(MemberId member, int64_t score);
  absl::StatusOr<int64_t> IncrementInMemory(MemberId member, int64_t delta);
  std::vector<absl::StatusOr<int64_t>> IncrementManyInMemory(
      absl::Span<const ScoreIncrement> increments);
  absl::StatusOr<WriteResult> WriteInMemory(const ScoreWrite& write);
  // Applies the elements whose result is OK (the others failed
  // validation), replacing each result with the element's own.
  void WriteManyInMemory(absl::Span<const ScoreWrite> writes,
                         absl::StatusOr<WriteResult>* results);
  absl::Status SetMetadataInMemory(MemberId member, absl::string_view metadata);
  absl::Status RemoveInMemory(MemberId member);
  absl::Status ClearInMemory();
  // The change log recorded into, or null.
  const ChangeLog* log() const;
  // InvalidArgument naming the field unless `write` can be applied here:
  // a known op and condition, metadata that the board keeps.
  absl::Status ValidateWrite(const ScoreWrite& write) const;
  // InvalidArgument unless the board keeps metadata of `size` bytes;
  // `field` names the argument.
  absl::Status ValidateMetadata(absl::string_view field, size_t size) const;

  // Appends a record of a change to `partition` (whose lock is held
  // exclusively); `score` is the score, not the rank score, and a non-null
  // `metadata` the member's new metadata. REQUIRES: recording_.
  void Record(ChangeKind kind, size_t partition, MemberId member, int64_t score,
              uint64_t update_sequence,
              const std::string* metadata = nullptr) const;
  // Puts `member` at `key` in `data`, partition p's (inserting or moving
  // it).
  void PlaceLocked(size_t p, PartitionData& data, MemberId member,
                   const RankKey& key);
  // A write in partition `p`, whose lock is held exclusively and whose data
  // is `data`, moved a member from key `from` to key `to` (null: absent),
  // the tree already changed: when either key is among the partition's
  // best entries (at or above data.top_edge, which is from before the
  // change), increments the partition's top version and finds the new
  // edge. Every change of the partition's best entries passes here: an
  // entry leaving them had its old key at or above the edge, one entering
  // them has its new key above the old edge.
  void NoteTopChange(size_t p, PartitionData& data, const RankKey* from,
                     const RankKey* to);
  // Increments partition p's top version; its lock is held exclusively.
  void BumpTopVersion(size_t p);
  // The sum of every partition's top version, each loaded with acquire.
  uint64_t TopVersionSum() const;
  // The best min(k, members) entries under `snapshot`, in the board's rank
  // style, merged lazily; adds the entries read to `*entries_read`.
  std::vector<LeaderboardEntry> MergeTop(const SharedSnapshot& snapshot,
                                         size_t k, size_t* entries_read) const;

  // A member's rank score went from `from` to `to` (none: absent); keeps
  // the DistinctScoreIndex of a kDense board. Called by every write that
  // changes a member's key, after the tree and map took the change, with
  // the member's partition lock held exclusively.
  void RankScoreMoved(std::optional<int64_t> from, std::optional<int64_t> to);

  // --- Rank styles (leaderboard_rank_style.cc), under `snapshot` ---

  // The rank, in the board's style, of the member with key `key` whose
  // unique rank is `unique_rank`.
  uint64_t StyledRank(const SharedSnapshot& snapshot, const RankKey& key,
                      uint64_t unique_rank) const;
  // Turns the unique ranks of `entries`, consecutive entries of the board
  // in best-first order (or worst-first when !best_first), into the
  // board's style. At most one descent: for the best entry.
  void StyleRanks(const SharedSnapshot& snapshot,
                  absl::Span<LeaderboardEntry> entries, bool best_first) const;
  // The number of members with a better score than `rank_score`, and the
  // number of distinct better scores (kDense boards only).
  uint64_t CountBetterScores(const SharedSnapshot& snapshot,
                             int64_t rank_score) const;
  uint64_t CountDistinctBetterScores(const SharedSnapshot& snapshot,
                                     int64_t rank_score) const;

  // --- Friends' boards (leaderboard_among.cc) ---

  // The keys of the distinct ids of `members`, and of `also` if given,
  // that are on the board, read under one snapshot, in no order.
  std::vector<RankKey> KeysAmong(absl::Span<const MemberId> members,
                                 std::optional<MemberId> also) const;

  // The update sequence for a score change being applied now.
  uint64_t NextSeq();

  // Every write to a member ends here, in partition `p` whose lock is held
  // exclusively: gives `member`, whose map slot is `it` (just emplaced when
  // `added`), the rank score `rank_score` and, when `metadata` is not null,
  // the metadata `*metadata` (empty: none), and records what changed.
  // `take_seq(current)` gives the update sequence of a score change,
  // `current` being the member's sequence before it (0 when absent); it is
  // called only when the score changes. `hint`: the RankedBtree::WriteHint
  // started for this write, or null. If memory runs out (std::bad_alloc),
  // nothing has changed.
  template <typename TakeSeq>
  WriteOutcome StoreLocked(PartitionData& data, size_t p, MemberId member,
                           MemberMap::iterator it, bool added,
                           int64_t rank_score,
                           const RankedBtree::WriteHint* hint,
                           TakeSeq&& take_seq, const std::string* metadata);
  // Adds `delta` to `member`'s score (StoreLocked's arguments).
  template <typename TakeSeq>
  absl::StatusOr<int64_t> IncrementLocked(PartitionData& data, size_t p,
                                          MemberId member, int64_t delta,
                                          const RankedBtree::WriteHint* hint,
                                          TakeSeq&& take_seq);
  // Applies the validated `write` (StoreLocked's arguments).
  template <typename TakeSeq>
  absl::StatusOr<WriteResult> WriteLocked(PartitionData& data, size_t p,
                                          const ScoreWrite& write,
                                          const RankedBtree::WriteHint* hint,
                                          TakeSeq&& take_seq);
  // IncrementMany and WriteMany: sorts `elements` by partition (stably)
  // and calls `run(p, part, indexes, first_seq, results)` for each run of
  // up to 128 elements of one partition, `indexes` being positions in
  // `part` (a part of `elements`, whose results start at `results`).
  // `skip(i)` leaves element i out (its result already set). Element i of
  // `part` takes update sequence first_seq + i (kEarlierUpdateFirst).
  template <typename Element, typename Result, typename Skip, typename Run>
  void ApplyInRuns(absl::Span<const Element> elements, Result* results,
                   Skip&& skip, Run&& run);
  // Applies the elements `indexes` (positions in `elements`, all of
  // partition `p`, in the order given) under one hold of p's lock, with
  // the memory of later elements prefetched while earlier ones apply:
  // `apply(data, i, hint, take_seq)` applies element i.
  template <typename Element, typename Apply>
  void ApplyRun(size_t p, absl::Span<const Element> elements,
                absl::Span<const uint32_t> indexes, uint64_t first_seq,
                Apply&& apply);
  // Merges `runs` (one start position per partition, invalid for none),
  // which continue with next() when `best_first` and prev() otherwise,
  // calling `emit(key)` on the first `want` entries in that order. Adds the
  // entries it read to `*entries_read`. With `probe`, reads one entry past
  // the last emitted one so that it can return whether any entry follows;
  // without, returns false.
  template <typename Emit>
  static bool Merge(absl::Span<const Position> runs, bool best_first,
                    size_t want, bool probe, size_t* entries_read, Emit&& emit);

  const LeaderboardOptions options_;
  const uint64_t board_id_;
  // The leaves of every partition's tree. Declared before partitions_,
  // which must be destroyed first.
  HugePagePool leaf_pool_{sizeof(RankedBtree::Leaf)};
  const std::unique_ptr<Partition[]> partitions_;
  // Next update sequence (kEarlierUpdateFirst only). Own cache line, away
  // from the read-only fields above: every writer of every partition
  // increments it.
  alignas(64) std::atomic<uint64_t> next_seq_{0};
  // The board's best entries as of the partitions' top versions.
  mutable BoardTopCache top_cache_;
  // The distinct scores of a kDense board; null on other boards.
  const std::unique_ptr<DistinctScoreIndex> distinct_scores_;
  // Set before the board is shared; null when nothing is recorded.
  std::unique_ptr<Recording> recording_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_IMPL_H_
