// Rank styles: competition and dense ranks in every read that reports a
// rank (Rank, TopK, Around, ReadPage in both orders), at page boundaries
// that cut tie groups, after removes, moves and Clear, through the replay
// calls, and across a snapshot and a replica.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "contract/leaderboard_arguments.h"
#include "feedcore/change_stream.h"
#include "feedcore/clock.h"
#include "feedcore/leaderboard.h"
#include "feedcore/snapshot.h"
#include "leaderboard/leaderboard_impl.h"
#include "support/engine_state.h"
#include "support/leaderboard_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using internal::LeaderboardImpl;

std::vector<uint64_t> RanksOf(const std::vector<LeaderboardEntry>& entries) {
  std::vector<uint64_t> ranks;
  for (const LeaderboardEntry& e : entries) ranks.push_back(e.rank);
  return ranks;
}

std::vector<MemberId> MembersOf(const std::vector<LeaderboardEntry>& entries) {
  std::vector<MemberId> members;
  for (const LeaderboardEntry& e : entries) members.push_back(e.member);
  return members;
}

// Members 1..10 with scores 100 100 100 90 90 80 80 80 80 70, tied members
// ordered by id (kLowerMemberFirst), so the unique order is 1..10.
std::unique_ptr<LeaderboardImpl> TiedBoard(RankStyle style,
                                           size_t partitions = 4) {
  auto board = std::make_unique<LeaderboardImpl>(
      LeaderboardOptions{.partitions = partitions,
                         .tie_break = TieBreak::kLowerMemberFirst,
                         .max_page_size = 100,
                         .rank_style = style});
  const int64_t scores[] = {100, 100, 100, 90, 90, 80, 80, 80, 80, 70};
  for (MemberId m = 1; m <= 10; ++m) REQUIRE(board->Set(m, scores[m - 1]).ok());
  return board;
}

// The ranks of members 1..10 of TiedBoard in each style.
const std::vector<uint64_t> kUniqueRanks = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
const std::vector<uint64_t> kCompetitionRanks = {0, 0, 0, 3, 3, 5, 5, 5, 5, 9};
const std::vector<uint64_t> kDenseRanks = {0, 0, 0, 1, 1, 2, 2, 2, 2, 3};

const std::vector<uint64_t>& ExpectedRanks(RankStyle style) {
  return style == RankStyle::kUnique        ? kUniqueRanks
         : style == RankStyle::kCompetition ? kCompetitionRanks
                                            : kDenseRanks;
}

constexpr RankStyle kStyles[] = {RankStyle::kUnique, RankStyle::kCompetition,
                                 RankStyle::kDense};

TEST_CASE("Rank and TopK report the board's rank style") {
  for (RankStyle style : kStyles) {
    for (size_t partitions : {size_t{1}, size_t{4}}) {
      CAPTURE(static_cast<int>(style));
      CAPTURE(partitions);
      auto board = TiedBoard(style, partitions);
      const std::vector<uint64_t>& want = ExpectedRanks(style);
      for (MemberId m = 1; m <= 10; ++m) {
        CHECK(board->Rank(m).value() == want[m - 1]);
      }
      CHECK(RanksOf(board->TopK(10).value()) == want);
      // A top-k that ends inside a tie group.
      CHECK(RanksOf(board->TopK(7).value()) ==
            std::vector<uint64_t>(want.begin(), want.begin() + 7));
      CHECK(board->CheckInvariants());
    }
  }
}

TEST_CASE("pages that start and end inside tie groups, in both orders") {
  for (RankStyle style : kStyles) {
    const std::vector<uint64_t>& want = ExpectedRanks(style);
    for (size_t limit = 1; limit <= 10; ++limit) {
      CAPTURE(static_cast<int>(style));
      CAPTURE(limit);
      auto board = TiedBoard(style);
      const std::vector<LeaderboardEntry> best =
          testing::ReadAllPages(*board, LeaderboardOrder::kBestFirst, limit);
      CHECK(MembersOf(best) ==
            std::vector<MemberId>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
      CHECK(RanksOf(best) == want);
      const std::vector<LeaderboardEntry> worst =
          testing::ReadAllPages(*board, LeaderboardOrder::kWorstFirst, limit);
      CHECK(RanksOf(worst) ==
            std::vector<uint64_t>(want.rbegin(), want.rend()));
    }
  }
}

TEST_CASE("Around across tie groups") {
  for (RankStyle style : kStyles) {
    CAPTURE(static_cast<int>(style));
    auto board = TiedBoard(style);
    const std::vector<uint64_t>& want = ExpectedRanks(style);
    for (MemberId m = 1; m <= 10; ++m) {
      for (size_t before : {size_t{0}, size_t{1}, size_t{3}}) {
        for (size_t after : {size_t{0}, size_t{2}, size_t{5}}) {
          CAPTURE(m);
          CAPTURE(before);
          CAPTURE(after);
          const std::vector<LeaderboardEntry> around =
              board->Around(m, before, after).value();
          const size_t from = m - 1 >= before ? m - 1 - before : 0;
          const size_t to = std::min<size_t>(10, m + after);
          CHECK(RanksOf(around) ==
                std::vector<uint64_t>(want.begin() + from, want.begin() + to));
        }
      }
    }
  }
}

TEST_CASE("dense ranks follow removes, moves and Clear") {
  for (RankStyle style : {RankStyle::kCompetition, RankStyle::kDense}) {
    CAPTURE(static_cast<int>(style));
    auto board = TiedBoard(style);
    // Removing the only member of a score closes the gap in dense ranks.
    REQUIRE(board->Remove(4).ok());
    REQUIRE(board->Remove(5).ok());
    CHECK(board->Rank(6).value() == (style == RankStyle::kDense ? 1u : 3u));
    CHECK(board->Rank(10).value() == (style == RankStyle::kDense ? 2u : 7u));
    // Moving a member to a new score opens one; onto an existing one, not.
    REQUIRE(board->Set(1, 95).ok());
    CHECK(board->Rank(6).value() == (style == RankStyle::kDense ? 2u : 3u));
    REQUIRE(board->Increment(10, 10).ok());  // 80: joins 6..9
    CHECK(board->Rank(10).value() == board->Rank(6).value());
    CHECK(RanksOf(board->TopK(10).value()) ==
          (style == RankStyle::kDense
               ? std::vector<uint64_t>{0, 0, 1, 2, 2, 2, 2, 2}
               : std::vector<uint64_t>{0, 0, 2, 3, 3, 3, 3, 3}));
    // IncrementMany moves several members, some twice.
    const std::vector<ScoreIncrement> batch = {
        {2, 1}, {3, -5}, {6, 20}, {2, -1}, {11, 95}};
    for (const absl::StatusOr<int64_t>& r : board->IncrementMany(batch)) {
      REQUIRE(r.ok());
    }
    // Scores now: 1:95 2:100 3:95 6:100 7..10:80 11:95.
    CHECK(RanksOf(board->TopK(10).value()) ==
          (style == RankStyle::kDense
               ? std::vector<uint64_t>{0, 0, 1, 1, 1, 2, 2, 2, 2}
               : std::vector<uint64_t>{0, 0, 2, 2, 2, 5, 5, 5, 5}));
    CHECK(board->CheckInvariants());
    REQUIRE(board->Clear().ok());
    CHECK(board->CheckInvariants());
    REQUIRE(board->Set(5, -1).ok());
    REQUIRE(board->Set(6, -2).ok());
    CHECK(board->Rank(6).value() == 1);
    CHECK(board->CheckInvariants());
  }
}

TEST_CASE("replayed changes keep the distinct-score index") {
  LeaderboardImpl board({.partitions = 4,
                         .tie_break = TieBreak::kLowerMemberFirst,
                         .rank_style = RankStyle::kDense});
  for (MemberId m = 1; m <= 40; ++m) {
    board.ApplyScore(m, static_cast<int64_t>(m % 5), 0);
  }
  CHECK(board.CheckInvariants());
  board.ApplyScore(1, 100, 0);  // a move to a new score
  board.ApplyRemove(2);
  board.ApplyRemove(2);  // absent: nothing
  CHECK(board.CheckInvariants());
  CHECK(board.Rank(4).value() == 1);  // 4, below 100 only
  // Clearing one partition takes its members' scores out of the index.
  const size_t p = board.PartitionOf(7);
  board.ApplyClear(p);
  CHECK(board.CheckInvariants());
  CHECK(board.Rank(7).status().code() == absl::StatusCode::kNotFound);
  // A partition copied out and loaded into another board.
  LeaderboardImpl copy({.partitions = 4,
                        .tie_break = TieBreak::kLowerMemberFirst,
                        .rank_style = RankStyle::kDense});
  for (size_t q = 0; q < 4; ++q) {
    std::string bytes;
    board.SerializePartition(q, nullptr, &bytes);
    REQUIRE(copy.LoadPartition(q, bytes).ok());
  }
  CHECK(copy.CheckInvariants());
  CHECK(copy.TopK(40).value() == board.TopK(40).value());
}

TEST_CASE("a dense board round-trips through a snapshot and a replica") {
  const auto clock = std::make_shared<ManualClock>(1'000'000);
  std::shared_ptr<ChangeStream> stream = ChangeStream::Create({}).value();
  EngineOptions engine_options;
  engine_options.change_stream = stream;
  std::unique_ptr<InProcessFeedEngine> engine =
      testing::NewManualEngine(clock, engine_options);
  LeaderboardRegistry registry(stream);
  std::shared_ptr<Leaderboard> board =
      registry
          .GetOrCreate("dense",
                       {.partitions = 3, .rank_style = RankStyle::kDense})
          .value();
  std::shared_ptr<Leaderboard> competition =
      registry
          .GetOrCreate("competition",
                       {.partitions = 2, .rank_style = RankStyle::kCompetition})
          .value();
  for (MemberId m = 1; m <= 50; ++m) {
    REQUIRE(board->Set(m, static_cast<int64_t>(m % 6)).ok());
    REQUIRE(competition->Set(m, static_cast<int64_t>(m % 4)).ok());
  }
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("feedcore-rank-style-" + std::to_string(::getpid())))
          .string();
  absl::StatusOr<SnapshotInfo> info = SaveSnapshot(*engine, path, &registry);
  REQUIRE_MESSAGE(info.ok(), info.status());
  // Changes after the snapshot reach the replica through the stream: a
  // score emptied, a new one, a clear and a refill.
  REQUIRE(board->Remove(6).ok());
  REQUIRE(board->Remove(12).ok());
  REQUIRE(board->Set(1, 1000).ok());
  REQUIRE(competition->Clear().ok());
  REQUIRE(competition->Set(9, 3).ok());
  REQUIRE(competition->Set(10, 3).ok());

  EngineOptions replica_options;
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(path, replica_options);
  std::filesystem::remove(path);
  REQUIRE_MESSAGE(replica.ok(), replica.status());
  auto reader =
      stream->NewReader(StreamPosition::AtSequence((*replica)->sequence()));
  REQUIRE(reader.ok());
  for (;;) {
    absl::StatusOr<std::vector<ChangeRecordPtr>> batch = (*reader)->Read(1000);
    REQUIRE(batch.ok());
    if (batch->empty()) break;
    for (const ChangeRecordPtr& record : *batch) {
      const absl::Status status = (*replica)->Apply(*record);
      REQUIRE_MESSAGE(status.ok(), status);
    }
  }
  std::shared_ptr<Leaderboard> loaded =
      (*replica)->boards().Get("dense").value();
  CHECK(loaded->options().rank_style == RankStyle::kDense);
  CHECK(loaded->TopK(100).value() == board->TopK(100).value());
  CHECK(board->Rank(5).value() == 1);  // 1000, then 5
  CHECK(loaded->Rank(5).value() == 1);
  std::shared_ptr<Leaderboard> loaded_competition =
      (*replica)->boards().Get("competition").value();
  CHECK(loaded_competition->options().rank_style == RankStyle::kCompetition);
  CHECK(loaded_competition->TopK(100).value() ==
        competition->TopK(100).value());
  testing::CheckSameBoards(registry, (*replica)->boards());
  auto* impl = dynamic_cast<LeaderboardImpl*>(loaded.get());
  REQUIRE(impl != nullptr);
  CHECK(impl->CheckInvariants());
}

}  // namespace
}  // namespace feedcore
