// Conformance cases of the Leaderboard's conditional writes, metadata and
// score order, on each backend (see backend.h): Write and WriteMany under
// every condition, op and order against the reference model's Write,
// their errors, metadata written with scores and alone, and every read of
// a lower-first board. Ties are TieBreak::kLowerMemberFirst, which both
// backends keep.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/backend.h"
#include "conformance/leaderboard_conformance_util.h"
#include "feedcore/leaderboard.h"
#include "model/leaderboard_model.h"
#include "support/leaderboard_test_util.h"

namespace feedcore {

namespace {

using testing::CheckInvalid;
using testing::Contains;
using testing::Entries;
using testing::kExact;
using testing::kMax;
using testing::kMin;
using testing::LeaderboardModel;
using testing::MakeBoard;
using testing::NewBackendBoard;
using testing::OnCluster;
using testing::Options;
using testing::Scores;

constexpr WriteCondition kConditions[] = {
    WriteCondition::kAlways,           WriteCondition::kIfAbsent,
    WriteCondition::kIfPresent,        WriteCondition::kIfBetter,
    WriteCondition::kIfWorse,          WriteCondition::kIfPresentAndBetter,
    WriteCondition::kIfPresentAndWorse};
constexpr ScoreOrder kOrders[] = {ScoreOrder::kHigherFirst,
                                  ScoreOrder::kLowerFirst};

int64_t HighestScore() { return testing::OnCluster() ? kExact : kMax; }
int64_t LowestScore() { return testing::OnCluster() ? -kExact : kMin; }

LeaderboardOptions OrderOptions(size_t partitions, ScoreOrder order,
                                size_t max_metadata_bytes = 0) {
  LeaderboardOptions options = Options(partitions);
  options.score_order = order;
  options.max_metadata_bytes = max_metadata_bytes;
  return options;
}

// The board `scores` describes on a board of `order`, best first.
Entries RankedIn(const Scores& scores, ScoreOrder order) {
  Entries out;
  for (const auto& [member, score] : scores) out.push_back({member, score, 0});
  std::sort(out.begin(), out.end(),
            [order](const LeaderboardEntry& a, const LeaderboardEntry& b) {
              if (a.score != b.score) {
                return order == ScoreOrder::kHigherFirst ? a.score > b.score
                                                         : a.score < b.score;
              }
              return a.member < b.member;
            });
  for (size_t i = 0; i < out.size(); ++i) out[i].rank = i;
  return out;
}

// Checks `got` against what the model says `write` does.
void CheckWrite(const absl::StatusOr<WriteResult>& got,
                const absl::StatusOr<WriteResult>& want,
                const ScoreWrite& write) {
  INFO("member " << write.member << " op " << static_cast<int>(write.op)
                 << " value " << write.value << " condition "
                 << static_cast<int>(write.condition));
  REQUIRE_MESSAGE(got.ok() == want.ok(), got.status());
  if (want.ok()) {
    CHECK(*got == *want);
  } else {
    CHECK(got.status().code() == absl::StatusCode::kOutOfRange);
  }
}

TEST_CASE("Write: every condition, op and order, absent and present") {
  for (ScoreOrder order : kOrders) {
    CAPTURE(static_cast<int>(order));
    auto board = NewBackendBoard(OrderOptions(3, order));
    LeaderboardModel model(LeaderboardOptions{
        .tie_break = TieBreak::kLowerMemberFirst, .score_order = order});
    MemberId next_member = 1;
    for (WriteOp op : {WriteOp::kSet, WriteOp::kIncrement}) {
      for (WriteCondition condition : kConditions) {
        // Absent, then present at 10 with a result above, equal to and
        // below 10: "better" is above on a higher-first board only.
        for (int64_t target :
             {int64_t{-1}, int64_t{25}, int64_t{10}, int64_t{-4}}) {
          const MemberId member = next_member++ * 0x9E3779B97F4A7C15ull;
          ScoreWrite write{.member = member, .op = op, .condition = condition};
          if (target == -1) {
            write.value = 7;
          } else {
            REQUIRE(board->Set(member, 10).ok());
            model.Set(member, 10);
            write.value = op == WriteOp::kSet ? target : target - 10;
          }
          const absl::StatusOr<WriteResult> want =
              model.Write(write, LowestScore(), HighestScore());
          CheckWrite(board->Write(write), want, write);
          const std::optional<int64_t> score = model.Score(member);
          const absl::StatusOr<int64_t> got = board->Score(member);
          REQUIRE(got.ok() == score.has_value());
          if (score.has_value()) CHECK(*got == *score);
        }
      }
    }
    // The board holds exactly what the model does, in the board's order.
    Scores scores;
    for (const internal::RankKey& key : model.Sorted()) {
      scores[key.member] = internal::ScoreOfRankScore(key.score, order);
    }
    CHECK(testing::All(*board) == RankedIn(scores, order));
  }
}

TEST_CASE("Write: keep-best on both orders, and increments by zero") {
  for (ScoreOrder order : kOrders) {
    CAPTURE(static_cast<int>(order));
    auto board = NewBackendBoard(OrderOptions(4, order));
    const bool higher = order == ScoreOrder::kHigherFirst;
    const ScoreWrite best{
        .member = 5, .value = 100, .condition = WriteCondition::kIfBetter};
    CHECK(board->Write(best).value() == WriteResult{WriteOutcome::kAdded, 100});
    ScoreWrite higher_score = best;
    higher_score.value = 150;
    ScoreWrite lower_score = best;
    lower_score.value = 50;
    // Only the better of the two applies; the other reports the score kept.
    CHECK(board->Write(higher ? lower_score : higher_score).value() ==
          WriteResult{WriteOutcome::kNotApplied, 100});
    CHECK(board->Write(higher ? higher_score : lower_score).value() ==
          WriteResult{WriteOutcome::kChanged, higher ? 150 : 50});
    // The same score is not better: not applied.
    ScoreWrite same = best;
    same.value = higher ? 150 : 50;
    CHECK(board->Write(same).value() ==
          WriteResult{WriteOutcome::kNotApplied, higher ? 150 : 50});
    // An unconditional increment by 0 holds and changes nothing.
    const ScoreWrite zero{.member = 5, .op = WriteOp::kIncrement, .value = 0};
    CHECK(board->Write(zero).value() ==
          WriteResult{WriteOutcome::kUnchanged, higher ? 150 : 50});
    // On an absent member an increment starts from 0.
    const ScoreWrite add{.member = 6, .op = WriteOp::kIncrement, .value = -3};
    CHECK(board->Write(add).value() == WriteResult{WriteOutcome::kAdded, -3});
    CHECK(board->Size().value() == 2);
  }
}

TEST_CASE("Write: results past the backend's range are OutOfRange") {
  auto board = NewBackendBoard(Options(3));
  const int64_t high = HighestScore();
  const int64_t low = LowestScore();
  REQUIRE(board->Set(1, high - 1).ok());
  REQUIRE(board->Set(2, low + 1).ok());
  const ScoreWrite over{.member = 1, .op = WriteOp::kIncrement, .value = 2};
  const ScoreWrite under{.member = 2, .op = WriteOp::kIncrement, .value = -2};
  const ScoreWrite far{.member = 3, .op = WriteOp::kIncrement, .value = kMax};
  for (const ScoreWrite& write : {over, under}) {
    const absl::StatusOr<WriteResult> got = board->Write(write);
    CHECK_MESSAGE(got.status().code() == absl::StatusCode::kOutOfRange,
                  got.status());
  }
  // int64 overflow on both backends, whatever the condition says after.
  REQUIRE(board->Set(3, 1).ok());
  CHECK(board->Write(far).status().code() == absl::StatusCode::kOutOfRange);
  ScoreWrite better = far;
  better.condition = WriteCondition::kIfBetter;
  CHECK(board->Write(better).status().code() == absl::StatusCode::kOutOfRange);
  // Exactly at the ends is fine.
  ScoreWrite to_end = over;
  to_end.value = 1;
  CHECK(board->Write(to_end).value() ==
        WriteResult{WriteOutcome::kChanged, high});
  if (OnCluster()) {
    const ScoreWrite set_far{.member = 4, .value = kExact + 1};
    const absl::StatusOr<WriteResult> got = board->Write(set_far);
    CHECK(got.status().code() == absl::StatusCode::kOutOfRange);
    CHECK(Contains(got.status(), "2^53"));
  }
  // Nothing of the refused writes stuck.
  CHECK(board->Score(1).value() == high);
  CHECK(board->Score(2).value() == low + 1);
  CHECK(board->Score(3).value() == 1);
  CHECK(board->Score(4).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("Write and WriteMany validate before changing anything") {
  auto board = NewBackendBoard(OrderOptions(3, ScoreOrder::kHigherFirst, 8));
  auto bare = NewBackendBoard(Options(3));
  ScoreWrite bad_op{.member = 1, .op = static_cast<WriteOp>(9), .value = 1};
  ScoreWrite bad_condition{
      .member = 1, .value = 1, .condition = static_cast<WriteCondition>(42)};
  ScoreWrite long_metadata{.member = 1, .value = 1, .metadata = "123456789"};
  CheckInvalid(board->Write(bad_op).status(), "ScoreWrite.op");
  CheckInvalid(board->Write(bad_condition).status(), "ScoreWrite.condition");
  CheckInvalid(board->Write(long_metadata).status(), "ScoreWrite.metadata");
  ScoreWrite some_metadata{.member = 1, .value = 1, .metadata = "x"};
  CheckInvalid(bare->Write(some_metadata).status(), "ScoreWrite.metadata");
  CHECK(board->Size().value() == 0);
  CHECK(bare->Size().value() == 0);

  // In a batch, the bad element fails alone.
  const std::vector<ScoreWrite> batch = {
      {.member = 2, .value = 5}, bad_op, {.member = 3, .value = 6}};
  const std::vector<absl::StatusOr<WriteResult>> got = board->WriteMany(batch);
  REQUIRE(got.size() == 3);
  CHECK(got[0].value() == WriteResult{WriteOutcome::kAdded, 5});
  CheckInvalid(got[1].status(), "ScoreWrite.op");
  CHECK(got[2].value() == WriteResult{WriteOutcome::kAdded, 6});
  CHECK(board->Size().value() == 2);
  CHECK(board->WriteMany({}).empty());
}

TEST_CASE("WriteMany equals one Write per element, in order per member") {
  for (ScoreOrder order : kOrders) {
    CAPTURE(static_cast<int>(order));
    auto board = NewBackendBoard(OrderOptions(5, order));
    LeaderboardModel model(LeaderboardOptions{
        .tie_break = TieBreak::kLowerMemberFirst, .score_order = order});
    std::vector<ScoreWrite> batch;
    uint64_t x = 12345;
    const auto next = [&x](uint64_t n) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      return (x >> 33) % n;
    };
    for (int i = 0; i < 300; ++i) {
      ScoreWrite write;
      write.member = 1 + next(12) * 0x9E3779B97F4A7C15ull;
      write.op = next(2) == 0 ? WriteOp::kSet : WriteOp::kIncrement;
      write.value = static_cast<int64_t>(next(21)) - 10;
      if (next(50) == 0) write.value = HighestScore();
      write.condition = kConditions[next(7)];
      batch.push_back(write);
    }
    const std::vector<absl::StatusOr<WriteResult>> got =
        board->WriteMany(batch);
    REQUIRE(got.size() == batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      CAPTURE(i);
      CheckWrite(got[i], model.Write(batch[i], LowestScore(), HighestScore()),
                 batch[i]);
    }
    Scores scores;
    for (const internal::RankKey& key : model.Sorted()) {
      scores[key.member] = internal::ScoreOfRankScore(key.score, order);
    }
    CHECK(testing::All(*board) == RankedIn(scores, order));
  }
}

TEST_CASE("metadata: written with scores and alone, dropped with members") {
  auto board = NewBackendBoard(OrderOptions(3, ScoreOrder::kHigherFirst, 16));
  // Written when the write applies, even with the score unchanged.
  CHECK(board->Write({.member = 1, .value = 10, .metadata = "alice"})
            .value()
            .outcome == WriteOutcome::kAdded);
  CHECK(board->Metadata(1).value() == "alice");
  CHECK(board->Write({.member = 1, .value = 10, .metadata = "alice/fr"})
            .value()
            .outcome == WriteOutcome::kUnchanged);
  CHECK(board->Metadata(1).value() == "alice/fr");
  // Not written when the condition fails.
  CHECK(board
            ->Write({.member = 1,
                     .value = 5,
                     .condition = WriteCondition::kIfBetter,
                     .metadata = "nope"})
            .value()
            .outcome == WriteOutcome::kNotApplied);
  CHECK(board->Metadata(1).value() == "alice/fr");
  // Untouched by writes that carry none; removed by an empty one.
  REQUIRE(board->Increment(1, 5).ok());
  REQUIRE(board->Set(1, 40).ok());
  CHECK(board->Metadata(1).value() == "alice/fr");
  CHECK(board->Write({.member = 1, .value = 40, .metadata = ""}).ok());
  CHECK(board->Metadata(1).value().empty());

  // SetMetadata: only for members on the board, with the limits.
  CHECK(board->SetMetadata(1, "bob").ok());
  CHECK(board->Metadata(1).value() == "bob");
  CHECK(board->Score(1).value() == 40);
  CHECK(board->SetMetadata(2, "ghost").code() == absl::StatusCode::kNotFound);
  CHECK(board->Metadata(2).status().code() == absl::StatusCode::kNotFound);
  CHECK(board->Score(2).status().code() == absl::StatusCode::kNotFound);
  CheckInvalid(board->SetMetadata(1, std::string(17, 'x')), "metadata");
  CHECK(board->SetMetadata(1, std::string(16, 'x')).ok());
  CHECK(board->Metadata(1).value() == std::string(16, 'x'));
  CHECK(board->SetMetadata(1, "").ok());
  CHECK(board->Metadata(1).value().empty());

  // Dropped with the member, and by Clear.
  REQUIRE(board->SetMetadata(1, "carol").ok());
  REQUIRE(board->Remove(1).ok());
  REQUIRE(board->Set(1, 3).ok());
  CHECK(board->Metadata(1).value().empty());
  REQUIRE(board->SetMetadata(1, "dave").ok());
  REQUIRE(board->Clear().ok());
  REQUIRE(board->Set(1, 3).ok());
  CHECK(board->Metadata(1).value().empty());

  // A board that keeps none refuses every metadata call.
  auto bare = NewBackendBoard(Options(3));
  REQUIRE(bare->Set(1, 1).ok());
  CheckInvalid(bare->SetMetadata(1, "x"), "max_metadata_bytes");
  CheckInvalid(bare->Metadata(1).status(), "max_metadata_bytes");
  LeaderboardReadOptions read;
  read.with_metadata = true;
  CheckInvalid(bare->ReadPage(read).status(), "max_metadata_bytes");
}

TEST_CASE("metadata in pages, only when asked for") {
  auto board = NewBackendBoard(OrderOptions(4, ScoreOrder::kHigherFirst, 32));
  Scores scores;
  for (MemberId m = 1; m <= 40; ++m) {
    const MemberId member = m * 0x9E3779B97F4A7C15ull;
    scores[member] = static_cast<int64_t>(m % 7);
    REQUIRE(board
                ->Write({.member = member,
                         .value = scores[member],
                         .metadata = m % 3 == 0 ? std::string()
                                                : "name-" + std::to_string(m)})
                .ok());
  }
  const Entries plain = testing::Ranked(scores);
  for (LeaderboardOrder order :
       {LeaderboardOrder::kBestFirst, LeaderboardOrder::kWorstFirst}) {
    LeaderboardReadOptions read;
    read.order = order;
    read.limit = 7;
    Entries with;
    Entries without;
    for (;;) {
      read.with_metadata = true;
      const LeaderboardPage page = board->ReadPage(read).value();
      read.with_metadata = false;
      const LeaderboardPage bare = board->ReadPage(read).value();
      with.insert(with.end(), page.entries.begin(), page.entries.end());
      without.insert(without.end(), bare.entries.begin(), bare.entries.end());
      CHECK(page.next_cursor == bare.next_cursor);
      if (page.next_cursor.empty()) break;
      read.cursor = page.next_cursor;
    }
    if (order == LeaderboardOrder::kWorstFirst) {
      std::reverse(with.begin(), with.end());
      std::reverse(without.begin(), without.end());
    }
    CHECK(without == plain);
    REQUIRE(with.size() == plain.size());
    for (size_t i = 0; i < with.size(); ++i) {
      CHECK(with[i].member == plain[i].member);
      CHECK(with[i].rank == plain[i].rank);
      CHECK(with[i].metadata == board->Metadata(with[i].member).value());
    }
  }
}

TEST_CASE("a lower-first board: every read follows the order") {
  auto board = NewBackendBoard(OrderOptions(3, ScoreOrder::kLowerFirst));
  CHECK(board->options().score_order == ScoreOrder::kLowerFirst);
  Scores scores;
  for (MemberId m = 1; m <= 30; ++m) {
    const MemberId member = m * 0x9E3779B97F4A7C15ull;
    scores[member] = static_cast<int64_t>(m % 9) * 10 - 40;
  }
  testing::Fill(*board, scores);
  scores[7] = -1000;  // an absent member added by an increment
  CHECK(board->Increment(7, -1000).value() == -1000);
  const Entries ranked = RankedIn(scores, ScoreOrder::kLowerFirst);
  CHECK(testing::All(*board) == ranked);
  CHECK(board->TopK(5).value() == testing::Slice(ranked, 0, 5));
  CHECK(testing::ReadAllPages(*board, LeaderboardOrder::kWorstFirst, 4) ==
        testing::Reversed(ranked));
  for (size_t i : {size_t{0}, size_t{11}, ranked.size() - 1}) {
    CAPTURE(i);
    const MemberId member = ranked[i].member;
    CHECK(board->Score(member).value() == ranked[i].score);
    CHECK(board->Rank(member).value() == i);
    CHECK(board->Around(member, 2, 3).value() ==
          testing::Slice(ranked, i >= 2 ? i - 2 : 0, i + 4));
  }
  CHECK(board->Rank(7).value() == 0);

  // The other order on the same backend is another board.
  auto other = NewBackendBoard(OrderOptions(3, ScoreOrder::kHigherFirst));
  testing::Fill(*other, scores);
  CHECK(testing::All(*other) == testing::Ranked(scores));
  if (OnCluster()) {
    // A board's order is recorded: opening it in the other order fails.
    LeaderboardOptions flipped = OrderOptions(3, ScoreOrder::kHigherFirst);
    const RedisClusterOptions cluster =
        testing::TestClusterOptions("lb-order-recorded");
    REQUIRE(CreateRedisClusterLeaderboard(
                cluster, "b", OrderOptions(3, ScoreOrder::kLowerFirst))
                .ok());
    const absl::StatusOr<std::unique_ptr<Leaderboard>> reopened =
        CreateRedisClusterLeaderboard(cluster, "b", flipped);
    REQUIRE_FALSE(reopened.ok());
    CHECK(reopened.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(Contains(reopened.status(), "score_order"));
  }
}

}  // namespace
}  // namespace feedcore
