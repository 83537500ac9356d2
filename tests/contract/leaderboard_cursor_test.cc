// Tests of the leaderboard cursor codec: round trips of extreme keys, and
// rejection of cursors of other kinds and of unknown orders.
#include "contract/leaderboard_cursor.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "contract/cursor.h"

namespace feedcore::internal {
namespace {

bool Contains(const absl::Status& status, const std::string& text) {
  return std::string(status.message()).find(text) != std::string::npos;
}

TEST_CASE("round trip, extreme values included") {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
  const LeaderboardCursor cursors[] = {
      {1, LeaderboardOrder::kBestFirst, {0, 0, 0}},
      {7, LeaderboardOrder::kWorstFirst, {-5, 3, 9}},
      {kU64Max, LeaderboardOrder::kBestFirst, {kMin, kU64Max, kU64Max}},
      {2, LeaderboardOrder::kWorstFirst, {kMax, 0, kU64Max}},
  };
  for (const LeaderboardCursor& c : cursors) {
    const std::string text = EncodeLeaderboardCursor(c);
    absl::StatusOr<LeaderboardCursor> back = DecodeLeaderboardCursor(text);
    REQUIRE_MESSAGE(back.ok(), back.status());
    CHECK(*back == c);
  }
}

TEST_CASE("cursors of other kinds are rejected") {
  const uint64_t fields[] = {0, 1, 2, 3, 4};
  for (CursorKind kind : {CursorKind::kTimeline, CursorKind::kFollowList}) {
    absl::StatusOr<LeaderboardCursor> decoded =
        DecodeLeaderboardCursor(EncodeCursor(kind, fields));
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_MESSAGE(Contains(decoded.status(), "another kind"), decoded.status());
  }
  // Right kind, wrong number of fields.
  const uint64_t four[] = {0, 1, 2, 3};
  absl::StatusOr<LeaderboardCursor> short_one =
      DecodeLeaderboardCursor(EncodeCursor(CursorKind::kLeaderboard, four));
  CHECK(short_one.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(short_one.status(), "length"), short_one.status());
}

TEST_CASE("an unknown order is rejected") {
  const uint64_t fields[] = {2, 1, 0, 0, 0};
  absl::StatusOr<LeaderboardCursor> decoded =
      DecodeLeaderboardCursor(EncodeCursor(CursorKind::kLeaderboard, fields));
  REQUIRE_FALSE(decoded.ok());
  CHECK(decoded.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(decoded.status(), "invalid leaderboard cursor"),
                decoded.status());
  CHECK_MESSAGE(Contains(decoded.status(), "unknown order"), decoded.status());
}

}  // namespace
}  // namespace feedcore::internal
