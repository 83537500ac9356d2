// Concurrency test of shared ranks, run under ThreadSanitizer in CI: writers
// Set, Increment (alone and in batches), Remove and Clear on kDense and
// kCompetition boards while readers take TopK, Around, pages and Among
// reads. Every read sees one snapshot, so the ranks it reports must agree
// with the entries it returns: on a read that starts at the leader they
// are determined by the scores alone (dense: +1 at each new score;
// competition: the position of the first of each score), and within any
// read they stay equal across a tie and step by the rule at each new score.
// Afterwards the distinct-score index must match the partitions exactly.
//
// Iteration counts are fixed (scaled by FEEDCORE_STRESS_SCALE, default 1)
// and every thread has a fixed seed; nothing waits on time.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/leaderboard.h"
#include "leaderboard/leaderboard_impl.h"
#include "support/test_util.h"
#include "support/thread_failures.h"

namespace feedcore {
namespace {

using testing::Failures;

uint64_t Scale() { return testing::EnvU64("FEEDCORE_STRESS_SCALE", 1); }

constexpr MemberId kMembers = 400;

// Checks the ranks of `entries`, consecutive entries best first. With
// `from_top` the first is the leader, so the ranks are fully determined.
void CheckRanks(RankStyle style, const std::vector<LeaderboardEntry>& entries,
                bool from_top, const char* what, Failures* failures) {
  for (size_t i = 0; i < entries.size(); ++i) {
    const LeaderboardEntry& e = entries[i];
    uint64_t want = 0;
    if (i == 0) {
      if (!from_top) continue;
      want = 0;
    } else if (e.score == entries[i - 1].score) {
      want = entries[i - 1].rank;
    } else if (style == RankStyle::kDense) {
      want = entries[i - 1].rank + 1;
    } else if (from_top) {
      want = i;
    } else {
      // Competition: one more than the previous rank at least, and the
      // previous group's first rank plus its size within the read.
      size_t group = i;
      while (group > 0 && entries[group - 1].score == entries[i - 1].score) {
        --group;
      }
      if (group == 0) {
        if (e.rank < entries[i - 1].rank + i) {
          failures->Add(std::string(what) + ": competition rank too small");
          return;
        }
        continue;
      }
      want = entries[i - 1].rank + (i - group);
    }
    if (e.rank != want) {
      failures->Add(std::string(what) + ": rank " + std::to_string(e.rank) +
                    " at position " + std::to_string(i) + ", expected " +
                    std::to_string(want));
      return;
    }
    if (i > 0 && entries[i - 1].score < e.score) {
      failures->Add(std::string(what) + ": scores out of order");
      return;
    }
  }
}

void Read(const internal::LeaderboardImpl& board, RankStyle style,
          std::mt19937_64& rng, Failures* failures) {
  // The whole board in one read: every rank is determined.
  absl::StatusOr<std::vector<LeaderboardEntry>> all = board.TopK(kMembers);
  if (!all.ok()) return failures->Check(all.status(), "TopK");
  CheckRanks(style, *all, /*from_top=*/true, "TopK", failures);

  const MemberId member = rng() % kMembers;
  absl::StatusOr<std::vector<LeaderboardEntry>> around =
      board.Around(member, rng() % 20, rng() % 20);
  if (around.ok()) {
    CheckRanks(style, *around, /*from_top=*/false, "Around", failures);
  } else if (around.status().code() != absl::StatusCode::kNotFound) {
    failures->Check(around.status(), "Around");
  }

  LeaderboardReadOptions read;
  read.limit = 1 + rng() % 50;
  read.order = rng() % 2 == 0 ? LeaderboardOrder::kBestFirst
                              : LeaderboardOrder::kWorstFirst;
  for (int pages = 0; pages < 3; ++pages) {
    absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
    if (!page.ok()) return failures->Check(page.status(), "ReadPage");
    std::vector<LeaderboardEntry> entries = page->entries;
    if (read.order == LeaderboardOrder::kWorstFirst) {
      std::reverse(entries.begin(), entries.end());
    }
    CheckRanks(
        style, entries,
        /*from_top=*/pages == 0 && read.order == LeaderboardOrder::kBestFirst,
        "ReadPage", failures);
    if (page->next_cursor.empty()) break;
    read.cursor = page->next_cursor;
  }

  std::vector<MemberId> friends(1 + rng() % 60);
  for (MemberId& id : friends) id = rng() % (kMembers + 20);
  absl::StatusOr<std::vector<LeaderboardEntry>> among =
      board.TopKAmong(friends, kMembers);
  if (!among.ok()) return failures->Check(among.status(), "TopKAmong");
  CheckRanks(style, *among, /*from_top=*/true, "TopKAmong", failures);
}

void Write(internal::LeaderboardImpl& board, std::mt19937_64& rng,
           int iterations) {
  for (int i = 0; i < iterations; ++i) {
    const MemberId member = rng() % kMembers;
    const uint64_t op = rng() % 1000;
    // Few distinct scores, so that tie groups form, split and vanish.
    const auto score = [&rng] { return static_cast<int64_t>(rng() % 30); };
    if (op < 400) {
      board.Set(member, score()).IgnoreError();
    } else if (op < 700) {
      board.Increment(member, static_cast<int64_t>(rng() % 5) - 2)
          .IgnoreError();
    } else if (op < 800) {
      std::vector<ScoreIncrement> batch(1 + rng() % 30);
      for (ScoreIncrement& increment : batch) {
        increment = {rng() % kMembers, static_cast<int64_t>(rng() % 5) - 2};
      }
      board.IncrementMany(batch);
    } else if (op < 998) {
      board.Remove(member).IgnoreError();
    } else {
      board.Clear().IgnoreError();
    }
  }
}

void RunStress(RankStyle style, size_t partitions) {
  CAPTURE(static_cast<int>(style));
  CAPTURE(partitions);
  internal::LeaderboardImpl board({.partitions = partitions,
                                   .max_page_size = kMembers,
                                   .rank_style = style});
  Failures failures;
  const int iterations = static_cast<int>(4000 * Scale());
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&board, t, iterations] {
      std::mt19937_64 rng(1000 + static_cast<uint64_t>(t));
      Write(board, rng, iterations);
    });
  }
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&board, &failures, style, t, iterations] {
      std::mt19937_64 rng(2000 + static_cast<uint64_t>(t));
      for (int i = 0; i < iterations / 10 && !failures.any(); ++i) {
        Read(board, style, rng, &failures);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  failures.Report();
  CHECK(board.CheckInvariants());
}

TEST_CASE("dense boards: ranks agree with the entries of each read") {
  RunStress(RankStyle::kDense, 1);
  RunStress(RankStyle::kDense, 8);
}

TEST_CASE("competition boards: ranks agree with the entries of each read") {
  RunStress(RankStyle::kCompetition, 8);
}

}  // namespace
}  // namespace feedcore
