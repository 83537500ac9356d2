// Page cursors of leaderboards, on the generic codec of cursor.h.
//
// A leaderboard cursor is the key of the last entry a page returned (score,
// update sequence, member), the order of the read, and the id of the board
// that made it: five 64-bit fields under CursorKind::kLeaderboard. Decoding
// checks the codec's length, encoding, checksum, version and kind, then
// that the order field is known; the board then checks that the cursor is
// its own and for the order asked for.
//
// Thread safety: pure functions.
#ifndef FEEDCORE_SRC_CONTRACT_LEADERBOARD_CURSOR_H_
#define FEEDCORE_SRC_CONTRACT_LEADERBOARD_CURSOR_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "contract/rank_key.h"
#include "feedcore/leaderboard.h"

// Exported from the shared libfeedcore for the Redis backend's library,
// which calls this one copy (CMakeLists.txt, feedcore_contract).
#pragma GCC visibility push(default)
namespace feedcore::internal {

// Position after `key` on board `board_id`, read in `order`.
struct LeaderboardCursor {
  uint64_t board_id = 0;
  LeaderboardOrder order = LeaderboardOrder::kBestFirst;
  RankKey key;

  friend bool operator==(const LeaderboardCursor&,
                         const LeaderboardCursor&) = default;
};

std::string EncodeLeaderboardCursor(const LeaderboardCursor& cursor);

// InvalidArgument with a reason for anything that is not a leaderboard
// cursor this version wrote.
absl::StatusOr<LeaderboardCursor> DecodeLeaderboardCursor(
    absl::string_view text);

// The message of a well-formed cursor used on the wrong board or order:
// InvalidArgument saying `why`.
absl::Status ForeignLeaderboardCursor(absl::string_view why);

// Checks a ReadPage request to board `board_id`, whose LeaderboardOptions
// say `max_page_size`, the same way for every backend: the limit in
// 1..max_page_size, a known order, and a cursor (if any) that decodes and
// was made by this board for this order. Returns the key the page starts
// after, or nullopt for the first page; InvalidArgument naming the
// offending field otherwise.
absl::StatusOr<std::optional<RankKey>> ValidateReadPage(
    const LeaderboardReadOptions& options, uint64_t board_id,
    size_t max_page_size);

}  // namespace feedcore::internal
#pragma GCC visibility pop

#endif  // FEEDCORE_SRC_CONTRACT_LEADERBOARD_CURSOR_H_
