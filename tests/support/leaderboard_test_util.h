// Helpers shared by the leaderboard tests: printing of leaderboard types in
// doctest's failure messages, board creation, and reading a whole board
// through its cursors.
#ifndef FEEDCORE_TESTS_LEADERBOARD_TEST_UTIL_H_
#define FEEDCORE_TESTS_LEADERBOARD_TEST_UTIL_H_

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/leaderboard.h"

namespace feedcore {

// Found by argument-dependent lookup, so doctest prints the values of a
// failed comparison instead of "{?}".
inline std::ostream& operator<<(std::ostream& os, const LeaderboardEntry& e) {
  os << "{m=" << e.member << " s=" << e.score << " r=" << e.rank;
  if (!e.metadata.empty()) os << " meta=" << e.metadata;
  return os << "}";
}

inline std::ostream& operator<<(std::ostream& os, const WriteResult& r) {
  static const char* const kOutcomes[] = {"added", "changed", "unchanged",
                                          "not applied"};
  const auto outcome = static_cast<size_t>(r.outcome);
  os << "{" << (outcome < 4 ? kOutcomes[outcome] : "?") << " ";
  if (r.score) {
    os << *r.score;
  } else {
    os << "absent";
  }
  return os << "}";
}

inline std::ostream& operator<<(std::ostream& os,
                                const std::vector<LeaderboardEntry>& v) {
  os << "[" << v.size() << ":";
  for (const LeaderboardEntry& e : v) os << " " << e;
  return os << "]";
}

namespace testing {

// A board with `options`; fails the test if creation fails.
inline std::unique_ptr<Leaderboard> NewBoard(LeaderboardOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Leaderboard>> board =
      Leaderboard::Create(options);
  REQUIRE_MESSAGE(board.ok(), board.status());
  return *std::move(board);
}

// IncrementMany's results as numbers or status codes, for comparisons that
// print.
inline std::vector<std::string> DescribeResults(
    const std::vector<absl::StatusOr<int64_t>>& results) {
  std::vector<std::string> out;
  for (const absl::StatusOr<int64_t>& r : results) {
    out.push_back(r.ok() ? std::to_string(*r)
                         : absl::StatusCodeToString(r.status().code()));
  }
  return out;
}

// Every entry of the board in `order`, `limit` per page, following cursors
// to the end. `pages` (if given) receives the number of pages read.
inline std::vector<LeaderboardEntry> ReadAllPages(const Leaderboard& board,
                                                  LeaderboardOrder order,
                                                  size_t limit,
                                                  size_t* pages = nullptr) {
  std::vector<LeaderboardEntry> out;
  LeaderboardReadOptions options;
  options.order = order;
  options.limit = limit;
  for (size_t count = 1;; ++count) {
    REQUIRE(count < 10'000'000);
    absl::StatusOr<LeaderboardPage> page = board.ReadPage(options);
    REQUIRE_MESSAGE(page.ok(), page.status());
    REQUIRE(page->entries.size() <= limit);
    out.insert(out.end(), page->entries.begin(), page->entries.end());
    if (page->next_cursor.empty()) {
      if (pages != nullptr) *pages = count;
      break;
    }
    REQUIRE(page->entries.size() == limit);
    options.cursor = page->next_cursor;
  }
  return out;
}

}  // namespace testing
}  // namespace feedcore

#endif  // FEEDCORE_TESTS_LEADERBOARD_TEST_UTIL_H_
