// Concurrency tests of Leaderboard, run under ThreadSanitizer in CI.
//
// * Many threads increment shared members while readers take TopK, Rank,
//   Around and pages: every answer must be sorted, duplicate-free and
//   ranked consecutively, and afterwards every score must equal the sum of
//   the deltas the writers applied to it. Half the writers send their
//   increments in IncrementMany batches, whose elements for one member
//   must apply in order.
// * A pair writer increments member a, then member b (in a lower
//   partition), over and over, so that at every instant a - b is 0 or 1.
//   Readers that see a global snapshot can never observe anything else; a
//   read that locked partitions one after another could.
// * Writers that Set, Remove and Clear race with the same readers; the
//   partitions must be consistent at the end.
// * Keep-best writers (Write and WriteMany with kIfBetter, on both score
//   orders) race on a few members: each result must be consistent with its
//   value, a reader must never see a member's score get worse, and each
//   member must end with the best score written and that write's metadata.
//   Only-if-absent writers racing to add one member add it once.
//
// Iteration counts are fixed (scaled by FEEDCORE_STRESS_SCALE, default 1)
// and every thread has a fixed seed; nothing waits on time.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <latch>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/leaderboard.h"
#include "leaderboard/leaderboard_impl.h"
#include "support/leaderboard_test_util.h"
#include "support/test_util.h"
#include "support/thread_failures.h"

namespace feedcore {
namespace {

uint64_t Scale() { return testing::EnvU64("FEEDCORE_STRESS_SCALE", 1); }

using testing::Failures;

// Checks that `entries` is a run of consecutive ranks starting at
// `first_rank` (ascending when best-first, descending otherwise), sorted by
// score accordingly, with no member twice.
void CheckRun(const std::vector<LeaderboardEntry>& entries, uint64_t first_rank,
              bool best_first, const char* what, Failures* failures) {
  std::unordered_set<MemberId> seen;
  for (size_t i = 0; i < entries.size(); ++i) {
    const LeaderboardEntry& e = entries[i];
    const uint64_t rank = best_first ? first_rank + i : first_rank - i;
    if (e.rank != rank) {
      failures->Add(std::string(what) + ": rank " + std::to_string(e.rank) +
                    " at position " + std::to_string(i) + ", expected " +
                    std::to_string(rank));
      return;
    }
    if (!seen.insert(e.member).second) {
      failures->Add(std::string(what) + ": member " + std::to_string(e.member) +
                    " twice");
      return;
    }
    if (i > 0) {
      const int64_t prev = entries[i - 1].score;
      if (best_first ? prev < e.score : prev > e.score) {
        failures->Add(std::string(what) + ": scores out of order at " +
                      std::to_string(i));
        return;
      }
    }
  }
}

// One round of every cross-partition read, each checked on its own.
void ReadEverything(const Leaderboard& board, std::mt19937_64& rng,
                    MemberId members, Failures* failures) {
  absl::StatusOr<std::vector<LeaderboardEntry>> top =
      board.TopK(1 + rng() % 200);
  if (!top.ok()) {
    failures->Add("TopK: " + top.status().ToString());
    return;
  }
  CheckRun(*top, 0, true, "TopK", failures);

  const MemberId member = rng() % members;
  absl::StatusOr<uint64_t> rank = board.Rank(member);
  if (!rank.ok() && rank.status().code() != absl::StatusCode::kNotFound) {
    failures->Add("Rank: " + rank.status().ToString());
  }
  absl::StatusOr<std::vector<LeaderboardEntry>> around =
      board.Around(member, rng() % 8, rng() % 8);
  if (around.ok()) {
    if (around->empty()) {
      failures->Add("Around: empty");
    } else {
      CheckRun(*around, around->front().rank, true, "Around", failures);
    }
  } else if (around.status().code() != absl::StatusCode::kNotFound) {
    failures->Add("Around: " + around.status().ToString());
  }

  LeaderboardReadOptions read;
  read.order = rng() % 2 == 0 ? LeaderboardOrder::kBestFirst
                              : LeaderboardOrder::kWorstFirst;
  read.limit = 1 + rng() % 100;
  for (int pages = 0; pages < 4; ++pages) {
    absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
    if (!page.ok()) {
      failures->Add("ReadPage: " + page.status().ToString());
      return;
    }
    if (!page->entries.empty()) {
      CheckRun(page->entries, page->entries.front().rank,
               read.order == LeaderboardOrder::kBestFirst, "ReadPage",
               failures);
    }
    if (page->next_cursor.empty()) break;
    read.cursor = page->next_cursor;
  }
}

TEST_CASE(
    "concurrent increments, single and batched, add up; reads stay sorted "
    "and exact") {
  constexpr int kWriters = 4;
  constexpr int kReaders = 2;
  constexpr MemberId kMembers = 2000;
  const uint64_t increments = 20'000 * Scale();
  INFO("seeds: writer w uses 1000 + w, reader r 2000 + r");
  for (size_t partitions : {1, 16}) {
    CAPTURE(partitions);
    internal::LeaderboardImpl board({.partitions = partitions});
    // The pair: b in a lower partition than a (with 16 partitions).
    MemberId a = kMembers, b = kMembers + 1;
    if (partitions > 1) {
      while (board.PartitionOf(b) >= board.PartitionOf(a)) ++b;
    }
    REQUIRE(b < kMembers + 100);  // below the writers' own members
    constexpr int64_t kPairStart = 1'000'000'000'000;
    REQUIRE(board.Set(a, kPairStart).ok());
    REQUIRE(board.Set(b, kPairStart).ok());
    std::vector<std::vector<int64_t>> sums(kWriters,
                                           std::vector<int64_t>(kMembers, 0));
    std::vector<int64_t> own_batches(kWriters, 0);
    std::atomic<int> writers_running{kWriters + 1};
    std::latch start(kWriters + kReaders + 1);
    Failures failures;
    std::vector<std::thread> threads;
    // Odd writers send their increments in IncrementMany batches, some
    // longer than the 128 elements applied under one lock hold. Each batch
    // also raises the writer's own member twice, by 1 each time: nobody
    // else touches it, so its two results must be consecutive.
    const auto own_member = [&](int w) { return kMembers + 100 + w; };
    for (int w = 0; w < kWriters; ++w) {
      threads.emplace_back([&, w] {
        std::mt19937_64 rng(1000 + w);
        start.arrive_and_wait();
        std::vector<ScoreIncrement> batch;
        for (uint64_t i = 0; i < increments;) {
          batch.clear();
          const size_t size = w % 2 == 0 ? 1 : 1 + rng() % 300;
          for (size_t j = 0; j < size && i < increments; ++j, ++i) {
            // Half the increments go to 20 hot members.
            const MemberId m = rng() % 2 == 0 ? rng() % 20 : rng() % kMembers;
            batch.push_back({m, static_cast<int64_t>(rng() % 21) - 5});
          }
          if (w % 2 == 0) {
            absl::StatusOr<int64_t> got =
                board.Increment(batch[0].member, batch[0].delta);
            if (!got.ok()) {
              failures.Add("Increment: " + got.status().ToString());
              break;
            }
          } else {
            const size_t first_own = rng() % (batch.size() + 1);
            batch.insert(batch.begin() + first_own, {own_member(w), 1});
            const size_t second_own =
                first_own + 1 + rng() % (batch.size() - first_own);
            batch.insert(batch.begin() + second_own, {own_member(w), 1});
            const std::vector<absl::StatusOr<int64_t>> got =
                board.IncrementMany(batch);
            if (got.size() != batch.size()) {
              failures.Add("IncrementMany: wrong number of results");
              break;
            }
            for (const absl::StatusOr<int64_t>& result : got) {
              if (!result.ok()) {
                failures.Add("IncrementMany: " + result.status().ToString());
              }
            }
            if (!got[first_own].ok() || !got[second_own].ok() ||
                *got[second_own] != *got[first_own] + 1) {
              failures.Add("IncrementMany applied one member out of order");
            }
            batch.erase(batch.begin() + second_own);
            batch.erase(batch.begin() + first_own);
            ++own_batches[w];
          }
          for (const ScoreIncrement& increment : batch) {
            sums[w][increment.member] += increment.delta;
          }
        }
        writers_running.fetch_sub(1);
      });
    }
    // The pair writer: a - b is 0 or 1 at every instant.
    const uint64_t pair_steps = increments / 2;
    threads.emplace_back([&] {
      start.arrive_and_wait();
      for (uint64_t i = 0; i < pair_steps; ++i) {
        if (!board.Increment(a, 1).ok() || !board.Increment(b, 1).ok()) {
          failures.Add("pair Increment failed");
          break;
        }
      }
      writers_running.fetch_sub(1);
    });
    for (int r = 0; r < kReaders; ++r) {
      threads.emplace_back([&, r] {
        std::mt19937_64 rng(2000 + r);
        start.arrive_and_wait();
        do {
          ReadEverything(board, rng, kMembers, &failures);
          // The pair leads the board by far, so a small top-k holds both,
          // read at one instant.
          absl::StatusOr<std::vector<LeaderboardEntry>> top =
              board.TopK(2 + rng() % 20);
          if (!top.ok() || top->size() < 2) {
            failures.Add("TopK of the pair failed");
            break;
          }
          const LeaderboardEntry& first = (*top)[0];
          const LeaderboardEntry& second = (*top)[1];
          const int64_t score_a =
              first.member == a ? first.score : second.score;
          const int64_t score_b =
              first.member == b ? first.score : second.score;
          if ((first.member != a && first.member != b) ||
              (second.member != a && second.member != b) ||
              score_a - score_b < 0 || score_a - score_b > 1) {
            failures.Add("pair seen as " + std::to_string(first.member) + "=" +
                         std::to_string(first.score) + " " +
                         std::to_string(second.member) + "=" +
                         std::to_string(second.score));
          }
        } while (writers_running.load() > 0);
      });
    }
    for (std::thread& t : threads) t.join();
    failures.Report();

    for (MemberId m = 0; m < kMembers; ++m) {
      int64_t expected = 0;
      bool touched = false;
      for (int w = 0; w < kWriters; ++w) expected += sums[w][m];
      for (int w = 0; w < kWriters; ++w) touched |= sums[w][m] != 0;
      absl::StatusOr<int64_t> score = board.Score(m);
      if (score.ok()) {
        CHECK(*score == expected);
      } else {
        CHECK(!touched);
      }
    }
    for (int w = 1; w < kWriters; w += 2) {
      CHECK(board.Score(own_member(w)).value() == 2 * own_batches[w]);
    }
    CHECK(board.Score(a).value() ==
          kPairStart + static_cast<int64_t>(pair_steps));
    CHECK(board.Score(b).value() ==
          kPairStart + static_cast<int64_t>(pair_steps));
    CHECK(board.CheckInvariants());
  }
}

TEST_CASE("Set, Remove and Clear race with readers") {
  constexpr int kWriters = 3;
  constexpr int kReaders = 2;
  constexpr MemberId kMembers = 500;
  const uint64_t operations = 20'000 * Scale();
  INFO("seeds: writer w uses 3000 + w, reader r 4000 + r");
  internal::LeaderboardImpl board({.partitions = 8});
  std::atomic<int> writers_running{kWriters};
  std::latch start(kWriters + kReaders);
  Failures failures;
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937_64 rng(3000 + w);
      start.arrive_and_wait();
      for (uint64_t i = 0; i < operations; ++i) {
        const MemberId m = rng() % kMembers;
        const uint64_t op = rng() % 1000;
        if (op < 500) {
          if (!board.Set(m, static_cast<int64_t>(rng() % 100) - 50).ok()) {
            failures.Add("Set failed");
          }
        } else if (op < 800) {
          if (!board.Increment(m, static_cast<int64_t>(rng() % 7) - 3).ok()) {
            failures.Add("Increment failed");
          }
        } else if (op < 999) {
          const absl::Status s = board.Remove(m);
          if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
            failures.Add("Remove: " + s.ToString());
          }
        } else {
          REQUIRE(board.Clear().ok());
        }
      }
      writers_running.fetch_sub(1);
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937_64 rng(4000 + r);
      start.arrive_and_wait();
      do {
        ReadEverything(board, rng, kMembers, &failures);
        const size_t size = board.Size().value();
        if (size > kMembers) failures.Add("Size above the member count");
      } while (writers_running.load() > 0);
    });
  }
  for (std::thread& t : threads) t.join();
  failures.Report();
  CHECK(board.CheckInvariants());
  const std::vector<LeaderboardEntry> all = testing::ReadAllPages(
      board, LeaderboardOrder::kBestFirst, board.options().max_page_size);
  CHECK(all.size() == board.Size().value());
  for (const LeaderboardEntry& e : all) {
    CHECK(board.Score(e.member).value() == e.score);
    CHECK(board.Rank(e.member).value() == e.rank);
  }
}

TEST_CASE("keep-best writers racing on a few members keep the best") {
  constexpr int kWriters = 4;
  constexpr MemberId kMembers = 3;
  const uint64_t writes = 20'000 * Scale();
  INFO("seeds: writer w uses 6000 + w");
  for (ScoreOrder order : {ScoreOrder::kHigherFirst, ScoreOrder::kLowerFirst}) {
    CAPTURE(static_cast<int>(order));
    const auto better = [order](int64_t a, int64_t b) {
      return order == ScoreOrder::kHigherFirst ? a > b : a < b;
    };
    internal::LeaderboardImpl board(
        {.partitions = 2, .score_order = order, .max_metadata_bytes = 24});
    // Per writer, the best value it wrote to each member.
    std::vector<std::vector<std::optional<int64_t>>> best(
        kWriters, std::vector<std::optional<int64_t>>(kMembers));
    std::atomic<int> writers_running{kWriters};
    std::latch start(kWriters + 1);
    Failures failures;
    std::vector<std::thread> threads;
    for (int w = 0; w < kWriters; ++w) {
      threads.emplace_back([&, w] {
        std::mt19937_64 rng(6000 + w);
        start.arrive_and_wait();
        const auto check = [&](const ScoreWrite& write,
                               const absl::StatusOr<WriteResult>& got) {
          if (!got.ok() || !got->score.has_value()) {
            failures.Add("keep-best write failed or left no score");
            return;
          }
          const bool applied = got->outcome == WriteOutcome::kAdded ||
                               got->outcome == WriteOutcome::kChanged;
          if (applied ? *got->score != write.value
                      : better(write.value, *got->score)) {
            failures.Add("a keep-best result contradicts its value");
          }
        };
        for (uint64_t i = 0; i < writes;) {
          std::vector<ScoreWrite> batch(w % 2 == 0 ? 1 : 1 + rng() % 16);
          for (ScoreWrite& write : batch) {
            write.member = rng() % kMembers;
            write.value = static_cast<int64_t>(rng() % 2'000'000) - 1'000'000;
            write.condition = WriteCondition::kIfBetter;
            write.metadata = std::to_string(write.value);
            std::optional<int64_t>& mine = best[w][write.member];
            if (!mine || better(write.value, *mine)) mine = write.value;
          }
          if (batch.size() == 1) {
            check(batch[0], board.Write(batch[0]));
          } else {
            const std::vector<absl::StatusOr<WriteResult>> got =
                board.WriteMany(batch);
            for (size_t j = 0; j < batch.size(); ++j) check(batch[j], got[j]);
          }
          i += batch.size();
        }
        writers_running.fetch_sub(1);
      });
    }
    // A member's score may only get better.
    threads.emplace_back([&] {
      std::vector<std::optional<int64_t>> seen(kMembers);
      start.arrive_and_wait();
      do {
        for (MemberId m = 0; m < kMembers; ++m) {
          const absl::StatusOr<int64_t> score = board.Score(m);
          if (!score.ok()) continue;  // not written yet
          if (seen[m] && better(*seen[m], *score)) {
            failures.Add("a keep-best score got worse");
          }
          seen[m] = *score;
        }
      } while (writers_running.load() > 0);
    });
    for (std::thread& t : threads) t.join();
    failures.Report();
    for (MemberId m = 0; m < kMembers; ++m) {
      std::optional<int64_t> want;
      for (int w = 0; w < kWriters; ++w) {
        if (best[w][m] && (!want || better(*best[w][m], *want))) {
          want = best[w][m];
        }
      }
      REQUIRE(want.has_value());
      CHECK(board.Score(m).value() == *want);
      CHECK(board.Metadata(m).value() == std::to_string(*want));
    }
    CHECK(board.CheckInvariants());
  }
}

TEST_CASE("only-if-absent writers racing to add a member add it once") {
  constexpr int kWriters = 4;
  const uint64_t rounds = 5'000 * Scale();
  internal::LeaderboardImpl board({.partitions = 4});
  std::vector<std::atomic<int>> added(rounds);
  std::latch start(kWriters);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      start.arrive_and_wait();
      for (uint64_t round = 0; round < rounds; ++round) {
        const absl::StatusOr<WriteResult> got =
            board.Write({.member = round,
                         .value = w,
                         .condition = WriteCondition::kIfAbsent});
        if (got.ok() && got->outcome == WriteOutcome::kAdded) {
          added[round].fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  uint64_t once = 0;
  for (const std::atomic<int>& count : added) once += count.load() == 1;
  CHECK(once == rounds);
  CHECK(board.Size().value() == rounds);
}

TEST_CASE("a registry shared by threads") {
  INFO("seeds: thread t uses 5000 + t");
  LeaderboardRegistry registry;
  constexpr int kThreads = 4;
  const int rounds = static_cast<int>(500 * Scale());
  std::latch start(kThreads);
  Failures failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(5000 + t);
      start.arrive_and_wait();
      for (int i = 0; i < rounds; ++i) {
        const std::string name = "mode-" + std::to_string(rng() % 8);
        switch (rng() % 4) {
          case 0: {
            const absl::Status s = registry.Drop(name);
            if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
              failures.Add("Drop: " + s.ToString());
            }
            break;
          }
          case 1:
            (void)registry.Names();
            break;
          default: {
            absl::StatusOr<std::shared_ptr<Leaderboard>> board =
                registry.GetOrCreate(name, {.partitions = 4});
            if (!board.ok()) {
              failures.Add("GetOrCreate: " + board.status().ToString());
              break;
            }
            // The handle stays valid even if another thread drops it now.
            if (!(*board)->Increment(rng() % 50, 1).ok()) {
              failures.Add("Increment on a registry board failed");
            }
            (void)(*board)->TopK(10);
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  failures.Report();
  CHECK(registry.size() <= 8);
}

}  // namespace
}  // namespace feedcore
