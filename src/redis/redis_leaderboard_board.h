// The Leaderboard of the Redis Cluster backend (redis_cluster.h), shared by
// the files that implement it: redis_leaderboard.cc (layout, Set,
// Increment, Remove, Clear, ranks, top-k, neighbours, pages),
// redis_leaderboard_writes.cc (conditional writes, metadata, update
// sequences), redis_leaderboard_queries.cc (score ranges, percentiles,
// reads among given members, competition ranks) and
// redis_leaderboard_create.cc (opening a board).
//
// Thread safety: every method may be called from any number of threads at
// once; the object holds only constants and its ClusterClient, which is
// thread-safe.
#ifndef FEEDCORE_REDIS_REDIS_LEADERBOARD_BOARD_H_
#define FEEDCORE_REDIS_REDIS_LEADERBOARD_BOARD_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "contract/rank_key.h"
#include "feedcore/leaderboard.h"
#include "redis/cluster_client.h"
#include "redis/key_slot.h"
#include "redis/leaderboard_codec.h"
#include "redis/redis_leaderboard.h"

namespace feedcore::redis {

// The board's scripts, loaded on every node.
struct LeaderboardScripts {
  Script read;
  Script increment;
  Script write;
  Script remove;
  Script metadata;
  Script lookup;
};

// Rank scores between two bounds, inclusive (see leaderboard_codec.h).
struct RankBounds {
  int64_t low = -kMaxExactScore;
  int64_t high = kMaxExactScore;

  bool Contains(int64_t rank_score) const {
    return rank_score >= low && rank_score <= high;
  }
};

// The rank scores of the board scores in `range` on a board of `order`,
// clamped to +-2^53 (where every stored score lies); nullopt when no
// score this board can hold is in it.
std::optional<RankBounds> RankBoundsOf(const ScoreRange& range,
                                       ScoreOrder order);

class RedisLeaderboard final : public Leaderboard {
 public:
  RedisLeaderboard(std::unique_ptr<ClusterClient> client,
                   const LeaderboardOptions& options, LeaderboardKeys keys,
                   LeaderboardScripts scripts);

  // kEarlierUpdateFirst only: reads and Clear are atomic per partition,
  // and dense ranks would need the distinct scores of every partition (see
  // redis_cluster.h).
  bool Supports(LeaderboardCapability capability) const override {
    return capability == LeaderboardCapability::kEarlierUpdateFirst;
  }

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
  absl::StatusOr<uint64_t> CountInRange(const ScoreRange& range) const override;
  absl::StatusOr<double> Percentile(MemberId member) const override;
  absl::StatusOr<std::vector<LeaderboardEntry>> TopKAmong(
      absl::Span<const MemberId> members, size_t k) const override;
  absl::StatusOr<uint64_t> RankAmong(
      MemberId member, absl::Span<const MemberId> members) const override;
  absl::StatusOr<std::vector<LeaderboardEntry>> AroundAmong(
      MemberId member, absl::Span<const MemberId> members, size_t before,
      size_t after) const override;
  absl::StatusOr<size_t> Size() const override;
  const LeaderboardOptions& options() const override { return options_; }

 private:
  // Where kLeaderboardReadScript locates: a key; before every entry; after
  // every entry; before every entry of a rank score (and after all better
  // ones); after every entry of a rank score.
  enum class Mode { kKey, kFirst, kLast, kBeforeScore, kAfterScore };

  // One partition's part of a merge: fetched entries in walk order.
  struct Walk {
    size_t partition = 0;
    std::vector<internal::RankKey> buffer;
    size_t next = 0;
    bool more = false;  // the partition may hold entries past the buffer
    size_t chunk = 0;   // entries the last fetch asked for
    RankBounds bounds;  // the walk ends at the first entry outside
  };

  size_t PartitionOf(MemberId member) const {
    return LeaderboardPartitionOf(member, options_.partitions);
  }
  const std::string& KeyOf(MemberId member) const {
    return keys_.partitions[PartitionOf(member)];
  }
  std::string NodeOf(const std::string& key) const {
    return client_->NodeOf(KeySlot(key));
  }
  ScoreOrder order() const { return options_.score_order; }
  TieBreak tie_break() const { return options_.tie_break; }
  // Whether the board orders ties by update (TieBreak::kEarlierUpdateFirst):
  // its set members carry update sequences, looked up in sequence hashes.
  bool sequenced() const {
    return options_.tie_break == TieBreak::kEarlierUpdateFirst;
  }
  // The keys a script of partition `p` takes: its sorted set, its metadata
  // hash if `metadata`, and its sequence hash on a sequenced board (last,
  // as leaderboard_scripts.h expects).
  std::vector<std::string> ScriptKeys(size_t p, bool metadata) const;
  // The first of `count` (> 0) consecutive update sequences, taken from the
  // board's counter in one round trip. A sequence is never handed out
  // twice (barring a failover that loses the counter's latest increments),
  // so a lost reply only leaves a gap.
  absl::StatusOr<uint64_t> TakeSequences(size_t count) const;
  LeaderboardEntry Entry(const internal::RankKey& key, uint64_t rank) const {
    return EntryOf(key, rank, order());
  }

  // `member`'s key (rank score, update sequence, member); NotFound if
  // absent. One round trip.
  absl::StatusOr<internal::RankKey> KeyOfMember(MemberId member) const;

  Command ReadCommand(size_t partition, Mode mode, const internal::RankKey& key,
                      size_t above, size_t below) const;
  // `seq` is the write's update sequence on a sequenced board (else unused).
  Command IncrementCommand(MemberId member, int64_t delta, uint64_t seq) const;
  // What Increment returns for kLeaderboardIncrementScript's `reply`.
  absl::StatusOr<int64_t> IncrementResult(MemberId member, int64_t delta,
                                          const Reply& reply) const;
  // InvalidArgument or OutOfRange when `write` cannot be sent.
  absl::Status ValidateWrite(const ScoreWrite& write) const;
  // `idempotent`: the client may send it again after an unclear failure
  // (a Set, which converges; see TakeSequences for its sequence).
  Command WriteCommand(const ScoreWrite& write, uint64_t seq,
                       bool idempotent = false) const;
  absl::StatusOr<WriteResult> WriteResultOf(const ScoreWrite& write,
                                            const Reply& reply) const;
  // InvalidArgument unless the board keeps metadata of `size` bytes;
  // `what` names the argument.
  absl::Status ValidateMetadata(absl::string_view what, size_t size) const;

  // kLeaderboardReadScript on every partition, in one round trip.
  absl::StatusOr<std::vector<Located>> ReadAll(Mode mode,
                                               const internal::RankKey& key,
                                               size_t above,
                                               size_t below) const;
  // A walk over what `located` fetched of partition `p`, which asked for
  // `asked` entries in the walk's direction, ending before the first entry
  // outside `bounds`.
  static Walk WalkOf(size_t p, Located& located, bool best_first, size_t asked,
                     const RankBounds& bounds);
  // Emits up to `want` entries of the walks merged in walk order (best
  // first or worst first), refilling a walk that runs dry while its
  // partition may hold more. Entries of `skip` are passed over.
  absl::Status Merge(
      std::vector<Walk>& walks, bool best_first, size_t want,
      std::optional<MemberId> skip,
      const std::function<void(const internal::RankKey&)>& emit) const;
  // Locates `member` in every partition (with the given entries either
  // side): the home partition's answer says it is there at the score
  // read. `rank` gets the member's rank.
  absl::StatusOr<std::vector<Located>> LocateMember(MemberId member,
                                                    size_t above, size_t below,
                                                    internal::RankKey* key,
                                                    uint64_t* rank) const;

  // The number of members with a rank score above `rank_score` (a better
  // score), over every partition in one round trip.
  absl::StatusOr<uint64_t> CountBetter(int64_t rank_score) const;
  // Turns the unique ranks of `entries`, consecutive entries of the board
  // best first, into the board's RankStyle. Costs one round trip when the
  // first entry is not the leader and the style is kCompetition.
  absl::Status ApplyRankStyle(std::vector<LeaderboardEntry>& entries) const;
  // Fills the metadata of `entries`: one HMGET per partition, pipelined.
  absl::Status FillMetadata(std::vector<LeaderboardEntry>& entries) const;
  // The keys of the distinct members of `members` (and `also`) that are
  // on the board, best first: one ZMSCORE per partition, pipelined.
  absl::StatusOr<std::vector<internal::RankKey>> KeysAmong(
      absl::Span<const MemberId> members, std::optional<MemberId> also) const;
  // Entries of `sorted[from, to)` with their ranks among `sorted` in the
  // board's RankStyle.
  std::vector<LeaderboardEntry> EntriesAmong(
      const std::vector<internal::RankKey>& sorted, size_t from,
      size_t to) const;
  // InvalidArgument unless `members` is short enough for `call`.
  static absl::Status ValidateAmong(absl::string_view call,
                                    absl::Span<const MemberId> members);

  const std::unique_ptr<ClusterClient> client_;
  const LeaderboardOptions options_;
  const LeaderboardKeys keys_;
  const uint64_t board_id_;
  const LeaderboardScripts scripts_;
};

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_REDIS_LEADERBOARD_BOARD_H_
