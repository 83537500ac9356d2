// The options a leaderboard is made with, and the types they name: the
// member id, the score order, the rank style, the tie-break and the hard
// limits. The change stream (change_stream.h) records boards' options, so
// it includes this header, not the whole leaderboard API (leaderboard.h).
#ifndef FEEDCORE_LEADERBOARD_OPTIONS_H_
#define FEEDCORE_LEADERBOARD_OPTIONS_H_

#include <cstddef>
#include <cstdint>

#include "feedcore/export.h"
#include "feedcore/types.h"

namespace feedcore {

// A ranked member: a player, a team, an image. Any 64-bit id.
using MemberId = EntityId;

// Hard limits on LeaderboardOptions.
inline constexpr size_t kMaxLeaderboardPartitions = 1024;
inline constexpr size_t kMaxLeaderboardPageSizeLimit = 100'000;
// Longest name a LeaderboardRegistry accepts, in bytes.
inline constexpr size_t kMaxLeaderboardNameLength = 1024;

// Longest metadata a board can be asked to keep per member, in bytes.
inline constexpr size_t kMaxMemberMetadataLimit = 4096;
// Most members TopKAmong, RankAmong and AroundAmong accept in one call.
inline constexpr size_t kMaxAmongMembers = 100'000;

// Which scores are better (see "Scores and order" in leaderboard.h).
enum class ScoreOrder : uint8_t {
  kHigherFirst,  // points, kills, XP
  kLowerFirst,   // lap times, golf strokes, deaths
};

// The order's name as written here, e.g. "kHigherFirst".
FEEDCORE_EXPORT const char* ScoreOrderName(ScoreOrder order);

// How ranks treat tied scores (see "Ranks" in leaderboard.h).
enum class RankStyle : uint8_t {
  kUnique,       // every member its own rank: 0, 1, 2 (ties by tie_break)
  kCompetition,  // tied scores share a rank, the next skips: 0, 0, 2
  kDense,        // tied scores share a rank, the next follows: 0, 0, 1
};

// The style's name as written here, e.g. "kUnique".
FEEDCORE_EXPORT const char* RankStyleName(RankStyle style);

// How members with equal scores are ordered (see leaderboard.h).
enum class TieBreak {
  kEarlierUpdateFirst,  // reached the score first, then lower member id
  kLowerMemberFirst,    // lower member id
};

// The tie-break's name as written here, e.g. "kEarlierUpdateFirst".
FEEDCORE_EXPORT const char* TieBreakName(TieBreak tie_break);

struct LeaderboardOptions {
  // Write partitions, 1..kMaxLeaderboardPartitions. More partitions let
  // more threads update scores at once without waiting on each other; each
  // cross-partition read (rank, top-k, neighbours, pages) takes every
  // partition's lock and does a little work per partition (a rank is one
  // O(log n) descent per partition; a top-k reads up to partitions - 1
  // entries beyond k). Around 4 x the number of writing threads is a good
  // start.
  size_t partitions = 16;

  TieBreak tie_break = TieBreak::kEarlierUpdateFirst;

  // Largest `k` of TopK, `limit` of ReadPage and `before`/`after` of Around,
  // 1..kMaxLeaderboardPageSizeLimit. Bounds the work of a single read and
  // so how long it holds the partition locks.
  size_t max_page_size = 1000;

  // Which scores rank first. Fixed for the board's life.
  ScoreOrder score_order = ScoreOrder::kHigherFirst;

  // The rank every read reports. kDense keeps a count of the members of
  // each score, partitioned by score, so each score change also takes the
  // index's locks of the old and the new score (one after the other) and
  // updates them in O(log distinct scores): choose it only when dense
  // ranks are shown.
  RankStyle rank_style = RankStyle::kUnique;

  // Longest metadata (display name, country: opaque bytes) the board keeps
  // per member, 0..kMaxMemberMetadataLimit; 0 keeps none, and a write that
  // carries metadata is refused. Metadata costs memory only for the members
  // that have some.
  size_t max_metadata_bytes = 0;

  friend bool operator==(const LeaderboardOptions&,
                         const LeaderboardOptions&) = default;
};

}  // namespace feedcore

#endif  // FEEDCORE_LEADERBOARD_OPTIONS_H_
