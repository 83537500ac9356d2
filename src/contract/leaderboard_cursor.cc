#include "contract/leaderboard_cursor.h"

#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "contract/cursor.h"
#include "contract/leaderboard_arguments.h"

namespace feedcore::internal {
namespace {

constexpr absl::string_view kWhat = "leaderboard cursor";
constexpr size_t kFields = 5;  // order, board, score, seq, member

}  // namespace

std::string EncodeLeaderboardCursor(const LeaderboardCursor& cursor) {
  const uint64_t fields[kFields] = {
      cursor.order == LeaderboardOrder::kBestFirst ? 0u : 1u, cursor.board_id,
      static_cast<uint64_t>(cursor.key.score), cursor.key.seq,
      cursor.key.member};
  return EncodeCursor(CursorKind::kLeaderboard, fields);
}

absl::StatusOr<LeaderboardCursor> DecodeLeaderboardCursor(
    absl::string_view text) {
  absl::StatusOr<std::array<uint64_t, kMaxCursorFields>> fields =
      DecodeCursor(text, CursorKind::kLeaderboard, kFields, kWhat);
  if (!fields.ok()) return fields.status();
  const auto& f = *fields;
  if (f[0] > 1) return ForeignLeaderboardCursor("unknown order");
  LeaderboardCursor cursor;
  cursor.order =
      f[0] == 0 ? LeaderboardOrder::kBestFirst : LeaderboardOrder::kWorstFirst;
  cursor.board_id = f[1];
  cursor.key.score = static_cast<int64_t>(f[2]);
  cursor.key.seq = f[3];
  cursor.key.member = f[4];
  return cursor;
}

absl::Status ForeignLeaderboardCursor(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid ", kWhat, ": ", why,
      "; pass back the next_cursor of a previous page of the same board in "
      "the same order unchanged, or an empty cursor for the first page"));
}

absl::StatusOr<std::optional<RankKey>> ValidateReadPage(
    const LeaderboardReadOptions& options, uint64_t board_id,
    size_t max_page_size) {
  if (absl::Status s = ValidateReadSize("LeaderboardReadOptions.limit",
                                        options.limit, 1, max_page_size);
      !s.ok()) {
    return s;
  }
  const bool best_first = options.order == LeaderboardOrder::kBestFirst;
  if (!best_first && options.order != LeaderboardOrder::kWorstFirst) {
    return absl::InvalidArgumentError(absl::StrCat(
        "LeaderboardReadOptions.order is ", static_cast<int>(options.order),
        "; it must be LeaderboardOrder::kBestFirst or "
        "LeaderboardOrder::kWorstFirst"));
  }
  if (options.cursor.empty()) return std::nullopt;
  absl::StatusOr<LeaderboardCursor> cursor =
      DecodeLeaderboardCursor(options.cursor);
  if (!cursor.ok()) return cursor.status();
  if (cursor->board_id != board_id) {
    return ForeignLeaderboardCursor("it was made by another leaderboard");
  }
  if (cursor->order != options.order) {
    return ForeignLeaderboardCursor(best_first
                                        ? "it was made for worst-first order"
                                        : "it was made for best-first order");
  }
  return cursor->key;
}

}  // namespace feedcore::internal
