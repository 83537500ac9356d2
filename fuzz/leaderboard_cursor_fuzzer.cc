// Fuzz target: leaderboard page cursors, as a client passes them back in
// LeaderboardReadOptions::cursor to ReadPage.
//
// The cursor is either the input's bytes or the input's numbers encoded
// with the cursor codec (any order, board id and key), on a board of three
// partitions with ties, extreme scores and both tie-break sequences. Every
// read is held to the reference model of tests/model/leaderboard_model.h, which
// saw the same writes:
//   * the read succeeds exactly when the cursor decodes and names this
//     board and this order; otherwise it is InvalidArgument;
//   * a page is the model's page after the cursor's key, ranks included,
//     with a next cursor exactly when more follow;
//   * a decoded cursor encodes and decodes back to itself.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "contract/cursor.h"
#include "contract/leaderboard_cursor.h"
#include "feedcore/leaderboard.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "leaderboard/leaderboard_impl.h"
#include "leaderboard/ranked_btree.h"
#include "model/leaderboard_model.h"

namespace feedcore::fuzz {
namespace {

using internal::CursorKind;
using internal::LeaderboardCursor;
using internal::RankKey;

constexpr size_t kMaxPageSize = 8;
constexpr MemberId kMembers = 50;

// A board and its model after the same writes.
struct BoardFixture {
  BoardFixture()
      : board({.partitions = 3,
               .tie_break = TieBreak::kEarlierUpdateFirst,
               .max_page_size = kMaxPageSize}),
        model(TieBreak::kEarlierUpdateFirst) {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    for (MemberId m = 1; m <= kMembers; ++m) {
      int64_t score = static_cast<int64_t>(m % 7) - 3;  // many ties
      if (m % 17 == 0) score = kMax - static_cast<int64_t>(m % 2);
      if (m % 19 == 0) score = kMin + static_cast<int64_t>(m % 2);
      FUZZ_CHECK(board.Set(m, score).ok());
      model.Set(m, score);
    }
    // Later changes give some members a newer update sequence.
    for (MemberId m = 3; m <= kMembers; m += 4) {
      FUZZ_CHECK(board.Increment(m, 1).ok());
      FUZZ_CHECK(model.Increment(m, 1).has_value());
    }
    sorted = model.Sorted();
  }

  internal::LeaderboardImpl board;
  testing::LeaderboardModel model;
  std::vector<RankKey> sorted;
};

}  // namespace
}  // namespace feedcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace feedcore;
  using namespace feedcore::fuzz;
  static const BoardFixture* const fixture = new BoardFixture();
  const internal::LeaderboardImpl& board = fixture->board;

  FuzzInput in(data, size);
  const bool structured = in.Bool();
  LeaderboardReadOptions read;
  read.order =
      in.Bool() ? LeaderboardOrder::kWorstFirst : LeaderboardOrder::kBestFirst;
  read.limit = 1 + in.Below(kMaxPageSize);
  if (structured) {
    // Mostly keys near the board's, sometimes anything at all.
    const uint64_t fields[] = {
        in.Below(4) == 0 ? in.U64() : in.Below(2),
        in.Below(4) == 0 ? in.U64() : board.board_id(),
        in.Below(4) == 0
            ? in.U64()
            : static_cast<uint64_t>(static_cast<int64_t>(in.Below(9)) - 4),
        in.Below(4) == 0 ? in.U64() : in.Below(2 * kMembers),
        in.Below(4) == 0 ? in.U64() : in.Below(kMembers + 2)};
    read.cursor = internal::EncodeCursor(CursorKind::kLeaderboard, fields);
  } else {
    read.cursor = in.Rest();
  }

  const absl::StatusOr<LeaderboardCursor> decoded =
      internal::DecodeLeaderboardCursor(read.cursor);
  if (decoded.ok()) {
    const absl::StatusOr<LeaderboardCursor> again =
        internal::DecodeLeaderboardCursor(
            internal::EncodeLeaderboardCursor(*decoded));
    FUZZ_CHECK(again.ok() && *again == *decoded);
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(decoded.status()));
  }

  const absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
  const bool first_page = read.cursor.empty();
  const bool accepted =
      first_page || (decoded.ok() && decoded->board_id == board.board_id() &&
                     decoded->order == read.order);
  FUZZ_CHECK(page.ok() == accepted);
  if (!page.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(page.status()));
    return 0;
  }
  bool more = false;
  RankKey last;
  FUZZ_CHECK(page->entries ==
             testing::ModelPage(fixture->sorted, read.order,
                                first_page
                                    ? std::nullopt
                                    : std::optional<RankKey>(decoded->key),
                                read.limit, &more, &last));
  FUZZ_CHECK(page->next_cursor.empty() == !more);
  return 0;
}
