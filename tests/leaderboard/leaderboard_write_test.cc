// Unit tests of the write side of Leaderboard beyond Set and Increment:
// boards ranked lower-first, conditional writes (every op under every
// condition, on absent and present members, better, worse and equal),
// WriteMany, and per-member metadata, each error path checked to change
// nothing.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/leaderboard.h"
#include "support/leaderboard_test_util.h"

namespace feedcore {
namespace {

using testing::DescribeResults;
using testing::NewBoard;
using testing::ReadAllPages;
using Entries = std::vector<LeaderboardEntry>;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

bool Contains(const absl::Status& status, const std::string& text) {
  return std::string(status.message()).find(text) != std::string::npos;
}

Entries All(const Leaderboard& board,
            LeaderboardOrder order = LeaderboardOrder::kBestFirst) {
  return ReadAllPages(board, order, board.options().max_page_size);
}

// The whole board best-first with every member's metadata.
Entries AllWithMetadata(const Leaderboard& board) {
  Entries out;
  LeaderboardReadOptions read;
  read.limit = board.options().max_page_size;
  read.with_metadata = true;
  for (;;) {
    const absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    out.insert(out.end(), page->entries.begin(), page->entries.end());
    if (page->next_cursor.empty()) return out;
    read.cursor = page->next_cursor;
  }
}

constexpr WriteCondition kConditions[] = {
    WriteCondition::kAlways,
    WriteCondition::kIfAbsent,
    WriteCondition::kIfPresent,
    WriteCondition::kIfBetter,
    WriteCondition::kIfWorse,
    WriteCondition::kIfPresentAndBetter,
    WriteCondition::kIfPresentAndWorse};

TEST_CASE("kLowerFirst: the lowest score leads every read") {
  auto board = NewBoard({.partitions = 3,
                         .max_page_size = 4,
                         .score_order = ScoreOrder::kLowerFirst});
  // Lap times; 2 and 4 tie at 70 (2 reached it first).
  REQUIRE(board->Set(1, 90).ok());
  REQUIRE(board->Set(2, 70).ok());
  REQUIRE(board->Set(3, kMax).ok());
  REQUIRE(board->Set(4, 70).ok());
  REQUIRE(board->Set(5, kMin).ok());
  REQUIRE(board->Set(6, -3).ok());
  const Entries best = {{5, kMin, 0}, {6, -3, 1}, {2, 70, 2},
                        {4, 70, 3},   {1, 90, 4}, {3, kMax, 5}};
  CHECK(board->TopK(4).value() == Entries(best.begin(), best.begin() + 4));
  CHECK(board->Rank(5).value() == 0);
  CHECK(board->Rank(4).value() == 3);
  CHECK(board->Rank(3).value() == 5);
  CHECK(board->Score(3).value() == kMax);
  CHECK(board->Score(5).value() == kMin);
  CHECK(board->Around(2, 1, 2).value() ==
        Entries{{6, -3, 1}, {2, 70, 2}, {4, 70, 3}, {1, 90, 4}});
  for (size_t limit : {1, 2, 4}) {
    CAPTURE(limit);
    CHECK(ReadAllPages(*board, LeaderboardOrder::kBestFirst, limit) == best);
    CHECK(ReadAllPages(*board, LeaderboardOrder::kWorstFirst, limit) ==
          Entries(best.rbegin(), best.rend()));
  }
  // Moving a member moves it the other way from a higher-first board.
  CHECK(board->Increment(1, -100).value() == -10);
  CHECK(board->Rank(1).value() == 1);
  CHECK(board->Increment(5, 1).value() == kMin + 1);
  CHECK(board->Rank(5).value() == 0);
}

TEST_CASE("kLowerFirst: Increment overflow at both ends changes nothing") {
  auto board = NewBoard({.partitions = 2,
                         .score_order = ScoreOrder::kLowerFirst});
  REQUIRE(board->Set(1, kMax - 5).ok());
  REQUIRE(board->Set(2, kMin + 5).ok());
  const Entries before = All(*board);
  CHECK(board->Increment(1, 6).status().code() ==
        absl::StatusCode::kOutOfRange);
  CHECK(board->Increment(1, kMax).status().code() ==
        absl::StatusCode::kOutOfRange);
  CHECK(board->Increment(2, -6).status().code() ==
        absl::StatusCode::kOutOfRange);
  CHECK(board->Increment(2, kMin).status().code() ==
        absl::StatusCode::kOutOfRange);
  CHECK(DescribeResults(board->IncrementMany({{1, 6}, {2, -6}})) ==
        std::vector<std::string>{"OUT_OF_RANGE", "OUT_OF_RANGE"});
  CHECK(All(*board) == before);
  CHECK(board->Increment(1, 5).value() == kMax);
  CHECK(board->Increment(2, -5).value() == kMin);
  CHECK(board->Increment(3, kMin).value() == kMin);
  CHECK(All(*board) ==
        Entries{{2, kMin, 0}, {3, kMin, 1}, {1, kMax, 2}});
}

TEST_CASE("kLowerFirst and kHigherFirst boards page in opposite orders") {
  auto high = NewBoard({.partitions = 4});
  auto low = NewBoard({.partitions = 4, .score_order = ScoreOrder::kLowerFirst});
  std::mt19937_64 rng(17);
  for (MemberId m = 0; m < 300; ++m) {
    const int64_t score = static_cast<int64_t>(rng() % 50) - 25;
    REQUIRE(high->Set(m, score).ok());
    REQUIRE(low->Set(m, score).ok());
  }
  const auto members = [](const Entries& entries) {
    std::vector<MemberId> out;
    for (const LeaderboardEntry& e : entries) out.push_back(e.member);
    return out;
  };
  const auto scores = [](const Entries& entries) {
    std::vector<int64_t> out;
    for (const LeaderboardEntry& e : entries) out.push_back(e.score);
    return out;
  };
  // Same ties (set in the same order), opposite score order: the worst
  // first of one has the scores of the best first of the other.
  const Entries low_best = ReadAllPages(*low, LeaderboardOrder::kBestFirst, 7);
  const Entries high_worst =
      ReadAllPages(*high, LeaderboardOrder::kWorstFirst, 7);
  CHECK(scores(low_best) == scores(high_worst));
  CHECK(members(low_best).size() == 300);
  for (size_t i = 1; i < low_best.size(); ++i) {
    REQUIRE(low_best[i - 1].score <= low_best[i].score);
    REQUIRE(low_best[i].rank == i);
  }
}

// Writes `write` to a fresh board of `order` on which member 1 has 100 (if
// `present`) and member 2 has 100 (always), and checks the result, the
// score after, the metadata and that the rest of the board is as it was.
void CheckWrite(ScoreOrder order, bool present, const ScoreWrite& write,
                const WriteResult& want) {
  auto board = NewBoard(
      {.partitions = 2, .score_order = order, .max_metadata_bytes = 8});
  if (present) {
    REQUIRE(board->Write({.member = 1, .value = 100, .metadata = "old"})
                .value() == WriteResult{WriteOutcome::kAdded, 100});
  }
  REQUIRE(board->Set(2, 100).ok());
  const absl::StatusOr<WriteResult> got = board->Write(write);
  REQUIRE_MESSAGE(got.ok(), got.status());
  CHECK(*got == want);
  const absl::StatusOr<int64_t> score = board->Score(1);
  CHECK(score.ok() == want.score.has_value());
  if (want.score) CHECK(*score == *want.score);
  if (want.score) {
    const bool applied = want.outcome != WriteOutcome::kNotApplied;
    CHECK(board->Metadata(1).value() ==
          (applied ? "new" : present ? "old" : ""));
  }
  // Member 2 tied with member 1 at 100 after it (when 1 was present):
  // only a changed score moves member 1 behind it.
  if (want.score == 100) {
    const bool moved = want.outcome == WriteOutcome::kAdded ||
                       want.outcome == WriteOutcome::kChanged;
    CHECK(board->Rank(1).value() == (moved ? 1u : 0u));
  }
  CHECK(board->Size().value() == (want.score ? 2u : 1u));
}

TEST_CASE("Write: every op under every condition") {
  for (ScoreOrder order : {ScoreOrder::kHigherFirst, ScoreOrder::kLowerFirst}) {
    CAPTURE(static_cast<int>(order));
    const bool high = order == ScoreOrder::kHigherFirst;
    // The scores a write can leave member 1 (at 100) with.
    const int64_t better = high ? 150 : 50;
    const int64_t worse = high ? 50 : 150;
    for (WriteOp op : {WriteOp::kSet, WriteOp::kIncrement}) {
      CAPTURE(static_cast<int>(op));
      const bool set = op == WriteOp::kSet;
      for (WriteCondition condition : kConditions) {
        CAPTURE(static_cast<int>(condition));
        const bool adds = condition == WriteCondition::kAlways ||
                          condition == WriteCondition::kIfAbsent ||
                          condition == WriteCondition::kIfBetter ||
                          condition == WriteCondition::kIfWorse;
        const bool takes_better = condition == WriteCondition::kAlways ||
                                  condition == WriteCondition::kIfPresent ||
                                  condition == WriteCondition::kIfBetter ||
                                  condition == WriteCondition::kIfPresentAndBetter;
        const bool takes_worse = condition == WriteCondition::kAlways ||
                                 condition == WriteCondition::kIfPresent ||
                                 condition == WriteCondition::kIfWorse ||
                                 condition == WriteCondition::kIfPresentAndWorse;
        const bool takes_equal = condition == WriteCondition::kAlways ||
                                 condition == WriteCondition::kIfPresent;
        const auto write = [&](int64_t value) {
          return ScoreWrite{.member = 1,
                            .op = op,
                            .value = value,
                            .condition = condition,
                            .metadata = "new"};
        };
        const WriteResult kept{WriteOutcome::kNotApplied, 100};
        // Absent: the score is the value, for a set and an increment alike.
        CheckWrite(order, false, write(better),
                   adds ? WriteResult{WriteOutcome::kAdded, better}
                        : WriteResult{WriteOutcome::kNotApplied, {}});
        // Present, a better, a worse and the same score.
        CheckWrite(order, true, write(set ? better : better - 100),
                   takes_better ? WriteResult{WriteOutcome::kChanged, better}
                                : kept);
        CheckWrite(order, true, write(set ? worse : worse - 100),
                   takes_worse ? WriteResult{WriteOutcome::kChanged, worse}
                               : kept);
        CheckWrite(order, true, write(set ? 100 : 0),
                   takes_equal ? WriteResult{WriteOutcome::kUnchanged, 100}
                               : kept);
      }
    }
  }
}

TEST_CASE("Write validates op, condition and metadata first") {
  auto board = NewBoard({.partitions = 2, .max_metadata_bytes = 4});
  auto bare = NewBoard({.partitions = 2});
  REQUIRE(board->Set(1, 10).ok());
  REQUIRE(bare->Set(1, 10).ok());
  struct Case {
    Leaderboard* board;
    ScoreWrite write;
    const char* why;
  };
  const Case cases[] = {
      {board.get(), {.member = 1, .op = static_cast<WriteOp>(2)},
       "ScoreWrite.op is 2"},
      {board.get(),
       {.member = 1, .condition = static_cast<WriteCondition>(7)},
       "ScoreWrite.condition is 7"},
      {board.get(), {.member = 1, .metadata = "12345"},
       "ScoreWrite.metadata is 5 bytes"},
      {bare.get(), {.member = 1, .metadata = "a"},
       "LeaderboardOptions.max_metadata_bytes is 0"},
      {bare.get(), {.member = 1, .metadata = ""},
       "LeaderboardOptions.max_metadata_bytes is 0"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.why);
    const Entries before = All(*c.board);
    const absl::StatusOr<WriteResult> got = c.board->Write(c.write);
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_MESSAGE(Contains(got.status(), c.why), got.status());
    CHECK(All(*c.board) == before);
    const std::vector<absl::StatusOr<WriteResult>> many =
        c.board->WriteMany({c.write});
    REQUIRE(many.size() == 1);
    CHECK(many[0].status() == got.status());
  }
  CHECK(board->Metadata(1).value().empty());
}

TEST_CASE("Write: overflow is OutOfRange when the presence test passes") {
  for (ScoreOrder order : {ScoreOrder::kHigherFirst, ScoreOrder::kLowerFirst}) {
    auto board = NewBoard({.partitions = 2, .score_order = order});
    REQUIRE(board->Set(1, kMax).ok());
    REQUIRE(board->Set(2, kMin).ok());
    const Entries before = All(*board);
    for (WriteCondition condition : kConditions) {
      CAPTURE(static_cast<int>(condition));
      const ScoreWrite up{.member = 1,
                          .op = WriteOp::kIncrement,
                          .value = 1,
                          .condition = condition};
      ScoreWrite down = up;
      down.member = 2;
      down.value = -1;
      for (const ScoreWrite& write : {up, down}) {
        const absl::StatusOr<WriteResult> got = board->Write(write);
        if (condition == WriteCondition::kIfAbsent) {
          // The member is there: the increment is never computed.
          CHECK(got.value().outcome == WriteOutcome::kNotApplied);
        } else {
          CHECK(got.status().code() == absl::StatusCode::kOutOfRange);
          CHECK_MESSAGE(Contains(got.status(), "would overflow"),
                        got.status());
        }
      }
    }
    CHECK(All(*board) == before);
  }
}

TEST_CASE("Write: equal scores keep the member's place") {
  auto board = NewBoard({.partitions = 4, .max_metadata_bytes = 16});
  REQUIRE(board->Set(1, 50).ok());
  REQUIRE(board->Set(2, 50).ok());
  // Unchanged: 1 stays ahead of 2, even with new metadata.
  CHECK(board->Write({.member = 1, .value = 50, .metadata = "x"}).value() ==
        WriteResult{WriteOutcome::kUnchanged, 50});
  CHECK(board->Write({.member = 1, .op = WriteOp::kIncrement}).value() ==
        WriteResult{WriteOutcome::kUnchanged, 50});
  CHECK(board->Rank(1).value() == 0);
  // Changed away and back: now behind 2.
  CHECK(board->Write({.member = 1, .value = 51}).value().outcome ==
        WriteOutcome::kChanged);
  CHECK(board->Write({.member = 1, .op = WriteOp::kIncrement, .value = -1})
            .value() == WriteResult{WriteOutcome::kChanged, 50});
  CHECK(board->Rank(1).value() == 1);
  CHECK(board->Metadata(1).value() == "x");
}

TEST_CASE("WriteMany: per-element results, one member's elements in order") {
  auto board = NewBoard({.partitions = 3, .max_metadata_bytes = 4});
  REQUIRE(board->Set(1, kMax - 1).ok());
  const std::vector<ScoreWrite> writes = {
      {.member = 1, .op = WriteOp::kIncrement, .value = 2},  // overflow
      {.member = 2, .value = 10, .condition = WriteCondition::kIfPresent},
      {.member = 2, .value = 10, .condition = WriteCondition::kIfAbsent},
      {.member = 2, .value = 5, .condition = WriteCondition::kIfBetter},
      {.member = 2, .value = 20, .condition = WriteCondition::kIfBetter,
       .metadata = "toolong"},  // invalid: changes nothing
      {.member = 2, .op = WriteOp::kIncrement, .value = 3, .metadata = "ab"},
      {.member = 3, .op = static_cast<WriteOp>(9)},  // invalid
      {.member = 1, .op = WriteOp::kIncrement, .value = 1},
  };
  const std::vector<absl::StatusOr<WriteResult>> got = board->WriteMany(writes);
  REQUIRE(got.size() == writes.size());
  CHECK(got[0].status().code() == absl::StatusCode::kOutOfRange);
  CHECK(got[1].value() == WriteResult{WriteOutcome::kNotApplied, {}});
  CHECK(got[2].value() == WriteResult{WriteOutcome::kAdded, 10});
  CHECK(got[3].value() == WriteResult{WriteOutcome::kNotApplied, 10});
  CHECK(got[4].status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(got[5].value() == WriteResult{WriteOutcome::kChanged, 13});
  CHECK(got[6].status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(got[7].value() == WriteResult{WriteOutcome::kChanged, kMax});
  CHECK(board->Metadata(2).value() == "ab");
  CHECK(board->Size().value() == 2);
  CHECK(board->WriteMany({}).empty());
}

TEST_CASE("WriteMany equals one Write per element") {
  // Runs longer than one lock hold, hot members, every condition.
  for (size_t partitions : {1, 3, 16}) {
    for (ScoreOrder order :
         {ScoreOrder::kHigherFirst, ScoreOrder::kLowerFirst}) {
      CAPTURE(partitions);
      const LeaderboardOptions options{.partitions = partitions,
                                       .score_order = order,
                                       .max_metadata_bytes = 2};
      auto batched = NewBoard(options);
      auto one_by_one = NewBoard(options);
      std::mt19937_64 rng(partitions * 11 + static_cast<int>(order));
      for (int call = 0; call < 12; ++call) {
        std::vector<ScoreWrite> batch(rng() % 1500);
        for (ScoreWrite& write : batch) {
          write.member = rng() % 4 == 0 ? rng() % 8 : rng() % 2000;
          write.op = rng() % 2 == 0 ? WriteOp::kSet : WriteOp::kIncrement;
          write.value = static_cast<int64_t>(rng() % 41) - 20;
          write.condition = kConditions[rng() % 7];
          if (rng() % 4 == 0) write.metadata = std::string(rng() % 3, 'm');
        }
        const std::vector<absl::StatusOr<WriteResult>> results =
            batched->WriteMany(batch);
        REQUIRE(results.size() == batch.size());
        for (size_t i = 0; i < batch.size(); ++i) {
          const absl::StatusOr<WriteResult> want = one_by_one->Write(batch[i]);
          REQUIRE(results[i].status() == want.status());
          if (want.ok()) REQUIRE(*results[i] == *want);
        }
      }
      CHECK(AllWithMetadata(*batched) == AllWithMetadata(*one_by_one));
    }
  }
}

TEST_CASE("metadata: written, read, replaced, removed with the member") {
  auto board = NewBoard({.partitions = 3, .max_metadata_bytes = 6});
  REQUIRE(board->Set(1, 30).ok());
  REQUIRE(board->Set(2, 20).ok());
  CHECK(board->Metadata(1).value().empty());
  CHECK(board->SetMetadata(1, "alice").ok());
  CHECK(board->SetMetadata(2, std::string("b\0b", 3)).ok());
  CHECK(board->Metadata(1).value() == "alice");
  CHECK(board->Metadata(2).value() == std::string("b\0b", 3));
  CHECK(board->Score(1).value() == 30);  // the score is untouched

  // Errors change nothing.
  CHECK(board->SetMetadata(3, "x").code() == absl::StatusCode::kNotFound);
  CHECK(board->Metadata(3).status().code() == absl::StatusCode::kNotFound);
  const absl::Status too_long = board->SetMetadata(1, "1234567");
  CHECK(too_long.code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(too_long, "metadata is 7 bytes"), too_long);
  CHECK(board->Metadata(1).value() == "alice");
  CHECK(board->Size().value() == 2);

  // Reads fill it only when asked.
  LeaderboardReadOptions read;
  read.limit = 10;
  CHECK(board->ReadPage(read).value().entries ==
        Entries{{1, 30, 0}, {2, 20, 1}});
  read.with_metadata = true;
  CHECK(board->ReadPage(read).value().entries ==
        Entries{{1, 30, 0, "alice"}, {2, 20, 1, std::string("b\0b", 3)}});
  read.order = LeaderboardOrder::kWorstFirst;
  read.limit = 1;
  CHECK(board->ReadPage(read).value().entries ==
        Entries{{2, 20, 1, std::string("b\0b", 3)}});

  // Set and Increment keep it; empty removes it; Remove and Clear drop it.
  REQUIRE(board->Set(1, 31).ok());
  REQUIRE(board->Increment(1, 1).ok());
  CHECK(board->Metadata(1).value() == "alice");
  CHECK(board->SetMetadata(1, "").ok());
  CHECK(board->Metadata(1).value().empty());
  CHECK(board->Write({.member = 2, .value = 20, .metadata = ""}).value() ==
        WriteResult{WriteOutcome::kUnchanged, 20});
  CHECK(board->Metadata(2).value().empty());
  REQUIRE(board->SetMetadata(1, "again").ok());
  REQUIRE(board->Remove(1).ok());
  REQUIRE(board->Set(1, 5).ok());
  CHECK(board->Metadata(1).value().empty());
  REQUIRE(board->SetMetadata(1, "again").ok());
  REQUIRE(board->Clear().ok());
  REQUIRE(board->Set(1, 5).ok());
  CHECK(board->Metadata(1).value().empty());
}

TEST_CASE("metadata on a board that keeps none is InvalidArgument") {
  auto board = NewBoard({.partitions = 2});
  REQUIRE(board->Set(1, 1).ok());
  const absl::Status set = board->SetMetadata(1, "x");
  CHECK(set.code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(set, "max_metadata_bytes is 0"), set);
  // Validation first: even for an absent member.
  CHECK(board->SetMetadata(9, "x").code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(board->Metadata(1).status().code() ==
        absl::StatusCode::kInvalidArgument);
  LeaderboardReadOptions read;
  read.with_metadata = true;
  const absl::StatusOr<LeaderboardPage> page = board->ReadPage(read);
  CHECK(page.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(Contains(page.status(), "with_metadata"), page.status());
}

}  // namespace
}  // namespace feedcore
