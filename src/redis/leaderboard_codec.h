// How the Redis Cluster leaderboard writes members and scores into its
// sorted sets, and reads them and its scripts' replies back (see
// redis_leaderboard.cc for the layout).
//
// Three forms of a score meet here. The board's score is what callers see.
// The stored score is what the sorted set holds: the negated score on a
// ScoreOrder::kHigherFirst board, the score itself on a kLowerFirst one, so
// that ascending set order is best first on both. The rank score, which
// the merges and cursors carry in internal::RankKey, is minus the stored
// score: higher ranks first, as RanksAbove orders keys. All three are
// exact integers within +-2^53, so the negations never overflow.
//
// Thread safety: pure functions.
#ifndef FEEDCORE_REDIS_LEADERBOARD_CODEC_H_
#define FEEDCORE_REDIS_LEADERBOARD_CODEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "contract/rank_key.h"
#include "feedcore/leaderboard.h"
#include "redis/reply.h"

namespace feedcore::redis {

// The largest score magnitude a double holds exactly, with every integer
// below it.
inline constexpr int64_t kMaxExactScore = int64_t{1} << 53;

// A member as its sorted-set member: 8 big-endian bytes, which compare as
// bytes as the ids do as numbers.
std::string MemberBytes(MemberId member);

// An update sequence as 8 big-endian bytes (the value a partition's
// sequence hash keeps per member), likewise in numeric order as bytes.
std::string SequenceBytes(uint64_t seq);

// The sorted-set member of `key`. Under TieBreak::kLowerMemberFirst it is
// the member's 8 bytes (key.seq is 0). Under kEarlierUpdateFirst it is the
// update sequence's 8 bytes followed by the member's: Redis orders equal
// scores by member bytes, so equal scores then rank by sequence, then by
// id, exactly as internal::RanksAbove orders keys.
std::string SetMemberBytes(const internal::RankKey& key, TieBreak tie_break);

// Whether `score` is one this backend can keep exactly (+-2^53).
bool ScoreInRange(int64_t score);

absl::Status MemberNotFound(MemberId member);

// A board score and its rank score; each is the other's inverse.
inline int64_t RankScoreOf(int64_t score, ScoreOrder order) {
  return order == ScoreOrder::kHigherFirst ? score : -score;
}
inline int64_t ScoreOfRankScore(int64_t rank_score, ScoreOrder order) {
  return RankScoreOf(rank_score, order);
}
// What the scripts multiply a stored score by to get the board's score.
inline const char* StoredScoreFactor(ScoreOrder order) {
  return order == ScoreOrder::kHigherFirst ? "-1" : "1";
}

// The entry of `key` (whose score is a rank score) at `rank`.
LeaderboardEntry EntryOf(const internal::RankKey& key, uint64_t rank,
                         ScoreOrder order);

// A well-formed reply whose contents make no sense for this board: someone
// else wrote its keys, or the script and the code disagree.
absl::Status Unexpected(absl::string_view what, absl::string_view detail);

// Redis answered `what` with an error reply. Memory pressure and a busy or
// read-only node are worth a retry later; anything else means the key is
// not what this board wrote (WRONGTYPE) or a bug.
absl::Status ErrorReply(absl::string_view what, const Reply& reply,
                        absl::string_view node);

// A stored score back to its rank score. Redis prints scores
// as integers up to 2^52 and with %.17g beyond, so both parsings are needed.
absl::StatusOr<int64_t> ParseStoredScore(absl::string_view text,
                                         absl::string_view what);

// An update sequence of 8 big-endian bytes, as SequenceBytes writes it.
absl::StatusOr<uint64_t> ParseSequence(const Reply& reply,
                                       absl::string_view what);

// A sorted-set member back to the key's sequence and member: 8 bytes (the
// member, sequence 0) or 16 (sequence, then member); see SetMemberBytes.
absl::Status ParseSetMember(const Reply& reply, absl::string_view what,
                            internal::RankKey* key);

// One partition's answer to kLeaderboardReadScript.
struct Located {
  uint64_t pos = 0;
  bool present = false;
  std::optional<int64_t> current;        // the located member's score, if any
  std::vector<internal::RankKey> above;  // set order: best first
  std::vector<internal::RankKey> below;
};

// kLeaderboardReadScript's `reply` from `node`, checked and parsed.
absl::StatusOr<Located> ParseLocated(const Reply& reply,
                                     absl::string_view node);

// kLeaderboardWriteScript's answer, before it becomes a WriteResult.
struct ScriptWrite {
  enum class Status { kApplied, kNotApplied, kOutOfRange };
  Status status = Status::kNotApplied;
  WriteOutcome outcome = WriteOutcome::kNotApplied;
  // The score after the write (kApplied, kNotApplied on a present member)
  // or before it (kOutOfRange).
  std::optional<int64_t> score;
};

// kLeaderboardWriteScript's `reply` for `member`, from `node`.
absl::StatusOr<ScriptWrite> ParseWriteReply(const Reply& reply, MemberId member,
                                            absl::string_view node);

// A metadata value of `what`'s reply: a string, or nil for none.
absl::StatusOr<std::string> ParseMetadataValue(const Reply& reply,
                                               absl::string_view what);

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_LEADERBOARD_CODEC_H_
