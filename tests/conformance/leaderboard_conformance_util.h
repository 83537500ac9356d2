// Helpers of the Leaderboard conformance cases
// (leaderboard_conformance_test.cc, leaderboard_conformance_read_test.cc):
// boards on the selected backend, expected boards worked out with the reference
// model from plain member -> score maps, and the backends' score ranges.
#ifndef FEEDCORE_TESTS_CONFORMANCE_LEADERBOARD_CONFORMANCE_UTIL_H_
#define FEEDCORE_TESTS_CONFORMANCE_LEADERBOARD_CONFORMANCE_UTIL_H_

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/backend.h"
#include "feedcore/leaderboard.h"
#include "model/leaderboard_model.h"
#include "support/leaderboard_test_util.h"

namespace feedcore::testing {

inline constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
// The cluster keeps scores as doubles, exact up to this magnitude.
inline constexpr int64_t kExact = int64_t{1} << 53;

using Scores = std::map<MemberId, int64_t>;
using Entries = std::vector<LeaderboardEntry>;

inline bool Contains(const absl::Status& status, const std::string& text) {
  return std::string(status.message()).find(text) != std::string::npos;
}

inline LeaderboardOptions Options(size_t partitions,
                                  size_t max_page_size = 1000) {
  return {.partitions = partitions,
          .tie_break = TieBreak::kLowerMemberFirst,
          .max_page_size = max_page_size};
}

// A board on the selected backend; fails the test if creation fails.
inline std::unique_ptr<Leaderboard> NewBackendBoard(
    const LeaderboardOptions& options) {
  absl::StatusOr<std::unique_ptr<Leaderboard>> board =
      MakeBoard(options, "lb-unit");
  REQUIRE_MESSAGE(board.ok(), board.status());
  return *std::move(board);
}

// The board `scores` describes, best first: higher score, then lower id.
inline Entries Ranked(const Scores& scores) {
  LeaderboardModel model(TieBreak::kLowerMemberFirst);
  for (const auto& [member, score] : scores) model.Set(member, score);
  const std::vector<internal::RankKey> sorted = model.Sorted();
  return ModelEntries(sorted, 0, sorted.size());
}

inline Entries Slice(const Entries& all, size_t from, size_t to) {
  to = std::min(to, all.size());
  return Entries(all.begin() + static_cast<ptrdiff_t>(std::min(from, to)),
                 all.begin() + static_cast<ptrdiff_t>(to));
}

inline Entries Reversed(Entries entries) {
  std::reverse(entries.begin(), entries.end());
  return entries;
}

// The whole board best-first, in pages as large as the board allows.
inline Entries All(const Leaderboard& board) {
  return ReadAllPages(board, LeaderboardOrder::kBestFirst,
                      board.options().max_page_size);
}

inline void Fill(Leaderboard& board, const Scores& scores) {
  for (const auto& entry : scores) {
    REQUIRE_MESSAGE(board.Set(entry.first, entry.second).ok(),
                    "member " << entry.first);
  }
}

// `count` members 1..count whose scores repeat every `spread` members, so
// that most scores are shared; the ids are spread over the id range to land
// in every partition.
inline Scores TiedScores(size_t count, int64_t spread) {
  Scores scores;
  for (size_t i = 1; i <= count; ++i) {
    const MemberId member = i * 0x9E3779B97F4A7C15ull;
    scores[member] = static_cast<int64_t>(i) % spread - spread / 2;
  }
  return scores;
}

inline void CheckInvalid(const absl::Status& status, const std::string& text) {
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(status, text), status);
}

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_CONFORMANCE_LEADERBOARD_CONFORMANCE_UTIL_H_
