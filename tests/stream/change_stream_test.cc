// Tests of the change stream: option validation, every iterator position,
// retention by count, bytes and age (and the OutOfRange error that replaces
// a silent gap), several readers at their own pace, waiting reads, push
// subscriptions, and the records each engine call produces.
#include "feedcore/change_stream.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::MakeActivity;
using testing::NewManualEngine;

constexpr Micros kStart = 1'000'000'000;

std::shared_ptr<ChangeStream> NewStream(ChangeStreamOptions options = {}) {
  absl::StatusOr<std::shared_ptr<ChangeStream>> stream =
      ChangeStream::Create(std::move(options));
  REQUIRE_MESSAGE(stream.ok(), stream.status());
  return *stream;
}

std::vector<ChangeRecordPtr> ReadAll(ChangeReader& reader) {
  std::vector<ChangeRecordPtr> all;
  for (;;) {
    absl::StatusOr<std::vector<ChangeRecordPtr>> batch = reader.Read(7);
    REQUIRE_MESSAGE(batch.ok(), batch.status());
    if (batch->empty()) return all;
    all.insert(all.end(), batch->begin(), batch->end());
  }
}

// A stream and an engine that records into it, both on one manual clock.
struct StreamFixture {
  explicit StreamFixture(ChangeStreamOptions stream_options = {},
                         EngineOptions options = {})
      : clock(std::make_shared<ManualClock>(kStart)) {
    stream_options.clock = clock;
    stream = NewStream(std::move(stream_options));
    options.shards = options.shards == 0 ? 4 : options.shards;
    options.change_stream = stream;
    options.fanout_threads = 0;
    engine = NewManualEngine(clock, std::move(options));
  }
  // Every record from `from` on.
  std::vector<ChangeRecordPtr> From(uint64_t from) {
    auto reader = stream->NewReader(StreamPosition::AtSequence(from));
    REQUIRE_MESSAGE(reader.ok(), reader.status());
    return ReadAll(**reader);
  }
  uint64_t Next() const { return stream->Stats().next_sequence; }

  std::shared_ptr<ManualClock> clock;
  std::shared_ptr<ChangeStream> stream;
  std::unique_ptr<InProcessFeedEngine> engine;
};

TEST_CASE("options are validated and name the field") {
  ChangeStreamOptions o;
  o.max_records = 0;
  absl::StatusOr<std::shared_ptr<ChangeStream>> s = ChangeStream::Create(o);
  CHECK(s.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.status().message()).find("max_records") !=
        std::string::npos);
  o = {};
  o.max_bytes = 10;
  s = ChangeStream::Create(o);
  CHECK(s.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.status().message()).find("max_bytes") !=
        std::string::npos);
  o = {};
  o.max_age = -1;
  s = ChangeStream::Create(o);
  CHECK(s.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.status().message()).find("max_age") != std::string::npos);
}

// The engine records through the stream it is given without asking what it
// is; that is sound only because nothing else can be a ChangeStream.
static_assert(std::is_final_v<ChangeStream>);

TEST_CASE("an empty stream: every position reads nothing, AT(1) is valid") {
  std::shared_ptr<ChangeStream> stream = NewStream();
  const ChangeStreamStats stats = stream->Stats();
  CHECK(stats.oldest_sequence == 0);
  CHECK(stats.next_sequence == 1);
  for (StreamPosition p :
       {StreamPosition::TrimHorizon(), StreamPosition::Latest(),
        StreamPosition::AtSequence(1), StreamPosition::AfterSequence(0)}) {
    auto reader = stream->NewReader(p);
    REQUIRE_MESSAGE(reader.ok(), reader.status());
    CHECK((*reader)->position() == 1);
    CHECK(ReadAll(**reader).empty());
  }
  CHECK(stream->NewReader(StreamPosition::AtSequence(0)).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(stream->NewReader(StreamPosition::AtSequence(2)).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(stream->NewReader(StreamPosition::AfterSequence(1)).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("positions: trim horizon, latest, at and after a sequence") {
  StreamFixture f;
  for (ActivityId id = 1; id <= 5; ++id) {
    REQUIRE(
        f.engine->Insert(10, {kStart + static_cast<Micros>(id), id, 3}).ok());
  }
  // One record per single insert.
  REQUIRE(f.Next() == 6);
  auto horizon = f.stream->NewReader(StreamPosition::TrimHorizon());
  auto latest = f.stream->NewReader(StreamPosition::Latest());
  auto at3 = f.stream->NewReader(StreamPosition::AtSequence(3));
  auto after3 = f.stream->NewReader(StreamPosition::AfterSequence(3));
  REQUIRE(horizon.ok());
  REQUIRE(latest.ok());
  REQUIRE(at3.ok());
  REQUIRE(after3.ok());
  std::vector<ChangeRecordPtr> all = ReadAll(**horizon);
  REQUIRE(all.size() == 5);
  for (size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i]->sequence == i + 1);
    CHECK(all[i]->kind == ChangeKind::kTimelinePut);
    CHECK(all[i]->owners == std::vector<EntityId>{10});
    CHECK(all[i]->entry.activity_id == i + 1);
  }
  CHECK(ReadAll(**latest).empty());
  CHECK(ReadAll(**at3).front()->sequence == 3);
  CHECK((*after3)->Read(100)->front()->sequence == 4);
  // A reader at the end sees what is appended later, and LATEST reads only
  // that.
  REQUIRE(f.engine->Insert(10, {kStart + 9, 9, 3}).ok());
  CHECK(ReadAll(**horizon).size() == 1);
  const std::vector<ChangeRecordPtr> fresh = ReadAll(**latest);
  REQUIRE(fresh.size() == 1);
  CHECK(fresh[0]->sequence == 6);
  CHECK((*latest)->position() == 7);
}

TEST_CASE("read batch size is validated") {
  StreamFixture f;
  auto reader = f.stream->NewReader(StreamPosition::TrimHorizon());
  REQUIRE(reader.ok());
  CHECK((*reader)->Read(0).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK((*reader)->Read(100'001).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK((*reader)->position() == 1);
}

TEST_CASE("retention by record count: dropped positions are OutOfRange") {
  ChangeStreamOptions o;
  o.max_records = 3;
  StreamFixture f(o);
  auto early = f.stream->NewReader(StreamPosition::TrimHorizon());
  REQUIRE(early.ok());
  for (ActivityId id = 1; id <= 10; ++id) {
    REQUIRE(
        f.engine->Insert(1, {kStart + static_cast<Micros>(id), id, 2}).ok());
  }
  const ChangeStreamStats stats = f.stream->Stats();
  CHECK(stats.records == 3);
  CHECK(stats.oldest_sequence == 8);
  CHECK(stats.next_sequence == 11);
  CHECK(stats.dropped == 7);
  // The reader that fell behind gets an error naming the oldest available,
  // and stays where it was.
  absl::StatusOr<std::vector<ChangeRecordPtr>> batch = (*early)->Read(10);
  CHECK(batch.status().code() == absl::StatusCode::kOutOfRange);
  CHECK(std::string(batch.status().message()).find("oldest available is 8") !=
        std::string::npos);
  CHECK((*early)->position() == 1);
  // Opening at a dropped position fails the same way; the horizon works.
  CHECK(f.stream->NewReader(StreamPosition::AtSequence(7)).status().code() ==
        absl::StatusCode::kOutOfRange);
  CHECK(f.stream->NewReader(StreamPosition::AfterSequence(6)).status().code() ==
        absl::StatusCode::kOutOfRange);
  auto horizon = f.stream->NewReader(StreamPosition::TrimHorizon());
  REQUIRE(horizon.ok());
  const std::vector<ChangeRecordPtr> kept = ReadAll(**horizon);
  REQUIRE(kept.size() == 3);
  CHECK(kept[0]->sequence == 8);
  CHECK(kept[2]->sequence == 10);
}

TEST_CASE("retention by bytes keeps at least the newest record") {
  ChangeStreamOptions o;
  o.max_bytes = 1024;
  StreamFixture f(o);
  Activity big = MakeActivity(1, 5, kStart);
  big.payload.assign(4000, 'x');
  REQUIRE(f.engine->Publish(big).ok());
  const ChangeStreamStats stats = f.stream->Stats();
  CHECK(stats.records >= 1);
  CHECK(stats.next_sequence == 4);  // activity, own feed, world feed
  // Small records fit many to a KiB; the big one was dropped by them.
  for (ActivityId id = 2; id <= 4; ++id) {
    REQUIRE(f.engine->Insert(1, {kStart, id, 2}).ok());
  }
  CHECK(f.stream->Stats().bytes <= 1024);
  CHECK(f.stream->Stats().oldest_sequence > 1);
}

TEST_CASE("retention by age uses the stream's clock") {
  ChangeStreamOptions o;
  o.max_age = 10 * kMicrosPerSecond;
  StreamFixture f(o);
  REQUIRE(f.engine->Insert(1, {kStart, 1, 2}).ok());
  REQUIRE(f.engine->Insert(1, {kStart, 2, 2}).ok());
  f.clock->Advance(5 * kMicrosPerSecond);
  REQUIRE(f.engine->Insert(1, {kStart, 3, 2}).ok());
  CHECK(f.stream->Stats().records == 3);
  f.clock->Advance(6 * kMicrosPerSecond);
  REQUIRE(f.engine->Insert(1, {kStart, 4, 2}).ok());
  const ChangeStreamStats stats = f.stream->Stats();
  CHECK(stats.records == 2);
  CHECK(stats.oldest_sequence == 3);
  const std::vector<ChangeRecordPtr> kept = f.From(3);
  REQUIRE(kept.size() == 2);
  CHECK(kept[0]->time == kStart + 5 * kMicrosPerSecond);
  CHECK(kept[1]->time == kStart + 11 * kMicrosPerSecond);
}

TEST_CASE("records of every engine call") {
  EngineOptions options;
  options.default_backfill = 10;
  StreamFixture f({}, options);
  InProcessFeedEngine& e = *f.engine;

  SUBCASE("publish: the activity, then own feed, world feed, followers") {
    REQUIRE(e.Follow(2, 1).ok());
    REQUIRE(e.Follow(3, 1).ok());
    const uint64_t from = f.Next();
    REQUIRE(e.Publish(MakeActivity(100, 1, kStart)).ok());
    const std::vector<ChangeRecordPtr> r = f.From(from);
    REQUIRE(r.size() >= 4);
    CHECK(r[0]->kind == ChangeKind::kActivityStore);
    CHECK(r[0]->entry.activity_id == 100);
    CHECK(r[0]->entry.actor == 1);
    CHECK(r[0]->entry.payload == testing::PayloadOf(100));
    CHECK_FALSE(r[0]->merged_at_read);
    CHECK(r[0]->domain >= 4);  // an activity-store domain
    CHECK(r[1]->kind == ChangeKind::kTimelinePut);
    CHECK(r[1]->feed == FeedType::kOwn);
    CHECK(r[1]->owners == std::vector<EntityId>{1});
    CHECK(r[2]->feed == FeedType::kWorld);
    CHECK(r[2]->owners == std::vector<EntityId>{0});
    std::set<EntityId> reached;
    for (size_t i = 3; i < r.size(); ++i) {
      CHECK(r[i]->kind == ChangeKind::kTimelinePut);
      CHECK(r[i]->feed == FeedType::kHome);
      CHECK(r[i]->entry.activity_id == 100);
      CHECK(r[i]->domain < 4);
      reached.insert(r[i]->owners.begin(), r[i]->owners.end());
    }
    CHECK(reached == std::set<EntityId>{2, 3});
  }
  SUBCASE("follow with back-fill, unfollow with removal") {
    REQUIRE(e.Publish(MakeActivity(7, 1, kStart)).ok());
    const uint64_t from = f.Next();
    REQUIRE(e.Follow(2, 1).ok());
    std::vector<ChangeRecordPtr> r = f.From(from);
    REQUIRE(r.size() == 3);
    CHECK(r[0]->kind == ChangeKind::kFollowerAdd);
    CHECK(r[0]->entity == 1);
    CHECK(r[0]->other == 2);
    CHECK(r[1]->kind == ChangeKind::kFollowingAdd);
    CHECK(r[1]->entity == 2);
    CHECK(r[1]->other == 1);
    CHECK(r[2]->kind == ChangeKind::kTimelinePut);
    CHECK(r[2]->owners == std::vector<EntityId>{2});
    CHECK(r[2]->entry.activity_id == 7);
    // Following again changes nothing and records nothing.
    const uint64_t again = f.Next();
    REQUIRE(e.Follow(2, 1).ok());
    CHECK(f.Next() == again);
    REQUIRE(e.Unfollow(2, 1).ok());
    r = f.From(again);
    REQUIRE(r.size() == 3);
    CHECK(r[0]->kind == ChangeKind::kFollowerRemove);
    CHECK(r[1]->kind == ChangeKind::kFollowingRemove);
    CHECK(r[2]->kind == ChangeKind::kTimelineRemoveActor);
    CHECK(r[2]->entity == 2);
    CHECK(r[2]->other == 1);
  }
  SUBCASE("retract: tombstone, then removals") {
    REQUIRE(e.Follow(2, 1).ok());
    REQUIRE(e.Publish(MakeActivity(9, 1, kStart)).ok());
    const uint64_t from = f.Next();
    REQUIRE(e.Retract(9).ok());
    const std::vector<ChangeRecordPtr> r = f.From(from);
    REQUIRE(r.size() == 4);
    CHECK(r[0]->kind == ChangeKind::kActivityRetract);
    CHECK(r[0]->entry.activity_id == 9);
    CHECK(r[1]->kind == ChangeKind::kTimelineRemove);
    CHECK(r[1]->feed == FeedType::kOwn);
    CHECK(r[2]->feed == FeedType::kWorld);
    CHECK(r[3]->feed == FeedType::kHome);
    CHECK(r[3]->owners == std::vector<EntityId>{2});
    // Retracting again records nothing.
    const uint64_t again = f.Next();
    REQUIRE(e.Retract(9).ok());
    CHECK(f.Next() == again);
  }
  SUBCASE("expiry of entries and activities") {
    REQUIRE(e.Publish(MakeActivity(5, 1, kStart, kMicrosPerSecond)).ok());
    InsertOptions short_ttl;
    short_ttl.ttl = kMicrosPerSecond;
    REQUIRE(e.Insert(8, {kStart, 6, 1}, short_ttl).ok());
    f.clock->Advance(2 * kMicrosPerSecond);
    const uint64_t from = f.Next();
    REQUIRE(e.EvictExpired(1000).value() == 3);
    const std::vector<ChangeRecordPtr> r = f.From(from);
    size_t timeline_keys = 0;
    size_t activity_keys = 0;
    for (const ChangeRecordPtr& record : r) {
      if (record->kind == ChangeKind::kTimelineExpire) {
        timeline_keys += record->keys.size();
      } else {
        REQUIRE(record->kind == ChangeKind::kActivityExpire);
        REQUIRE(record->keys.size() == 1);
        CHECK(record->keys[0].activity_id == 5);
        ++activity_keys;
      }
    }
    CHECK(timeline_keys == 3);
    CHECK(activity_keys == 1);
  }
  SUBCASE("batch inserts and removes; failed calls record nothing") {
    const uint64_t from = f.Next();
    std::vector<EntityId> owners;
    for (EntityId o = 1; o <= 40; ++o) owners.push_back(o);
    REQUIRE(e.InsertFanout(owners, {kStart, 1, 99}).ok());
    std::set<EntityId> reached;
    for (const ChangeRecordPtr& r : f.From(from)) {
      CHECK(r->kind == ChangeKind::kTimelinePut);
      reached.insert(r->owners.begin(), r->owners.end());
    }
    CHECK(reached.size() == 40);
    const uint64_t before_errors = f.Next();
    CHECK(e.Insert(1, {-1, 1, 1}).status().code() ==
          absl::StatusCode::kInvalidArgument);
    CHECK(e.Remove(1, {kStart, 12345}).code() == absl::StatusCode::kNotFound);
    CHECK(e.Follow(3, 3).status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(e.Retract(424242).code() == absl::StatusCode::kNotFound);
    CHECK(f.Next() == before_errors);
    REQUIRE(e.Remove(7, {kStart, 1}).ok());
    const std::vector<ChangeRecordPtr> r = f.From(before_errors);
    REQUIRE(r.size() == 1);
    CHECK(r[0]->kind == ChangeKind::kTimelineRemove);
    CHECK(r[0]->owners == std::vector<EntityId>{7});
    CHECK(r[0]->entry.ts == kStart);
    CHECK(r[0]->entry.activity_id == 1);
  }
}

// Board "arena" (4 partitions) in a registry that records into a fresh
// stream.
struct RecordedArena {
  std::shared_ptr<ChangeStream> stream = NewStream();
  LeaderboardRegistry registry{stream};
  LeaderboardOptions options{.partitions = 4};
  std::shared_ptr<Leaderboard> board =
      registry.GetOrCreate("arena", options).value();
};

TEST_CASE("leaderboard records: create, scores, clear, drop") {
  RecordedArena arena;
  REQUIRE(arena.board->Set(10, 500).ok());
  REQUIRE(arena.board->Set(10, 500).ok());  // unchanged: no record
  REQUIRE(arena.board->Increment(11, 7).ok());
  REQUIRE(arena.board->Increment(11, 0).ok());  // unchanged: no record
  REQUIRE(arena.board->Increment(11, 3).ok());
  REQUIRE(arena.board->Increment(11, std::numeric_limits<int64_t>::max())
              .status()
              .code() == absl::StatusCode::kOutOfRange);  // no record
  REQUIRE(arena.board->Remove(10).ok());
  REQUIRE(arena.board->Remove(10).code() == absl::StatusCode::kNotFound);
  REQUIRE(arena.board->Clear().ok());
  REQUIRE(arena.registry.Drop("arena").ok());
  std::shared_ptr<Leaderboard> again =
      arena.registry.GetOrCreate("arena", arena.options).value();
  // A handle to the dropped board still records, under its generation.
  REQUIRE(arena.board->Set(12, 1).ok());

  auto reader = arena.stream->NewReader(StreamPosition::TrimHorizon());
  REQUIRE(reader.ok());
  const std::vector<ChangeRecordPtr> r = ReadAll(**reader);
  REQUIRE(r.size() == 12);
  CHECK(r[0]->kind == ChangeKind::kBoardCreate);
  CHECK(r[0]->board == "arena");
  CHECK(r[0]->board_options == arena.options);
  const uint64_t first_generation = r[0]->board_generation;
  CHECK(r[1]->kind == ChangeKind::kScoreSet);
  CHECK(r[1]->entity == 10);
  CHECK(r[1]->score == 500);
  CHECK(r[2]->kind == ChangeKind::kScoreSet);
  CHECK(r[2]->entity == 11);
  CHECK(r[2]->score == 7);
  CHECK(r[3]->score == 10);
  CHECK(r[3]->update_sequence > r[2]->update_sequence);
  CHECK(r[4]->kind == ChangeKind::kScoreRemove);
  CHECK(r[4]->entity == 10);
  for (size_t p = 0; p < 4; ++p) {
    CHECK(r[5 + p]->kind == ChangeKind::kBoardClear);
    CHECK(r[5 + p]->domain == p);
  }
  CHECK(r[9]->kind == ChangeKind::kBoardDrop);
  CHECK(r[9]->board_generation == first_generation);
  CHECK(r[10]->kind == ChangeKind::kBoardCreate);
  CHECK(r[10]->board_generation != first_generation);
  CHECK(r[11]->kind == ChangeKind::kScoreSet);
  CHECK(r[11]->board_generation == first_generation);
  for (const ChangeRecordPtr& record : r) CHECK(record->board == "arena");

  // Boards made outside a recording registry record nothing.
  LeaderboardRegistry quiet;
  REQUIRE(quiet.GetOrCreate("q")->get()->Set(1, 1).ok());
  REQUIRE(Leaderboard::Create({}).value()->Set(1, 1).ok());
  CHECK(arena.stream->Stats().next_sequence == 13);
}

TEST_CASE("leaderboard records: IncrementMany records each change it makes") {
  RecordedArena arena;
  const std::vector<ScoreIncrement> batch = {
      {21, 5},
      {22, 0},                                    // a new member at 0: recorded
      {21, 0},                                    // unchanged: no record
      {21, std::numeric_limits<int64_t>::max()},  // overflow: no record
      {21, -2}};
  const std::vector<absl::StatusOr<int64_t>> results =
      arena.board->IncrementMany(batch);
  REQUIRE(results.size() == batch.size());
  CHECK(results[3].status().code() == absl::StatusCode::kOutOfRange);

  auto reader = arena.stream->NewReader(StreamPosition::TrimHorizon());
  REQUIRE(reader.ok());
  const std::vector<ChangeRecordPtr> r = ReadAll(**reader);
  REQUIRE(r.size() == 4);  // the board's creation and three scores
  CHECK(r[0]->kind == ChangeKind::kBoardCreate);
  std::vector<int64_t> scores_of_21;
  for (size_t i = 1; i < r.size(); ++i) {
    CHECK(r[i]->kind == ChangeKind::kScoreSet);
    if (r[i]->entity == 21) scores_of_21.push_back(r[i]->score);
    if (r[i]->entity == 22) CHECK(r[i]->score == 0);
  }
  // A member's records come in the order of its elements.
  CHECK(scores_of_21 == std::vector<int64_t>{5, 3});
}

TEST_CASE("leaderboard records: conditional writes, metadata, score order") {
  auto stream = ChangeStream::Create({}).value();
  LeaderboardRegistry registry{stream};
  const LeaderboardOptions options{.partitions = 2,
                                   .score_order = ScoreOrder::kLowerFirst,
                                   .max_metadata_bytes = 8};
  std::shared_ptr<Leaderboard> board =
      registry.GetOrCreate("laps", options).value();
  REQUIRE(board->Write({.member = 1, .value = 90, .metadata = "ann"}).ok());
  // Not better on a lower-first board: not applied, no record.
  REQUIRE(board
              ->Write({.member = 1,
                       .value = 95,
                       .condition = WriteCondition::kIfBetter,
                       .metadata = "x"})
              ->outcome == WriteOutcome::kNotApplied);
  REQUIRE(board
              ->Write({.member = 1,
                       .value = 80,
                       .condition = WriteCondition::kIfBetter})
              ->outcome == WriteOutcome::kChanged);
  // The same score and the same metadata: nothing to record.
  REQUIRE(board->Write({.member = 1, .value = 80, .metadata = "ann"}).ok());
  REQUIRE(board->SetMetadata(1, "bo").ok());
  REQUIRE(board->SetMetadata(1, "").ok());
  REQUIRE(board->SetMetadata(1, "").ok());  // none already: no record

  auto reader = stream->NewReader(StreamPosition::TrimHorizon());
  REQUIRE(reader.ok());
  const std::vector<ChangeRecordPtr> r = ReadAll(**reader);
  REQUIRE(r.size() == 5);
  CHECK(r[0]->kind == ChangeKind::kBoardCreate);
  CHECK(r[0]->board_options == options);
  CHECK(r[1]->score == 90);  // the score, not the tree's rank score
  CHECK(r[1]->metadata == "ann");
  CHECK(r[2]->score == 80);
  CHECK_FALSE(r[2]->metadata.has_value());  // unchanged metadata
  for (size_t i = 3; i < 5; ++i) {
    CHECK(r[i]->kind == ChangeKind::kScoreSet);
    CHECK(r[i]->score == 80);
    CHECK(r[i]->update_sequence == r[2]->update_sequence);
  }
  CHECK(r[3]->metadata == "bo");
  CHECK(r[4]->metadata == "");
}

TEST_CASE("several readers, each at its own pace") {
  StreamFixture f;
  auto fast = f.stream->NewReader(StreamPosition::TrimHorizon());
  auto slow = f.stream->NewReader(StreamPosition::TrimHorizon());
  REQUIRE(fast.ok());
  REQUIRE(slow.ok());
  for (ActivityId id = 1; id <= 50; ++id) {
    REQUIRE(f.engine->Insert(id % 7, {kStart, id, 1}).ok());
  }
  CHECK(ReadAll(**fast).size() == 50);
  CHECK((*slow)->Read(10)->size() == 10);
  CHECK((*slow)->position() == 11);
  CHECK(ReadAll(**slow).size() == 40);
}

TEST_CASE("ReadWait returns as soon as a record arrives") {
  StreamFixture f;
  auto reader = f.stream->NewReader(StreamPosition::Latest());
  REQUIRE(reader.ok());
  absl::StatusOr<std::vector<ChangeRecordPtr>> empty =
      (*reader)->ReadWait(10, std::chrono::milliseconds(1));
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE(f.engine->Insert(1, {kStart, 1, 2}).ok());
  });
  absl::StatusOr<std::vector<ChangeRecordPtr>> got =
      (*reader)->ReadWait(10, std::chrono::seconds(30));
  writer.join();
  REQUIRE(got.ok());
  REQUIRE(got->size() == 1);
  CHECK((*got)[0]->sequence == 1);
}

TEST_CASE("a subscription delivers every record in order") {
  StreamFixture f;
  std::mutex mu;
  std::vector<uint64_t> seen;
  std::atomic<size_t> count{0};
  absl::StatusOr<std::unique_ptr<Subscription>> sub = f.stream->Subscribe(
      StreamPosition::TrimHorizon(), 16,
      [&](absl::Span<const ChangeRecordPtr> batch) {
        std::lock_guard<std::mutex> lock(mu);
        for (const ChangeRecordPtr& r : batch) seen.push_back(r->sequence);
        count.fetch_add(batch.size());
      },
      nullptr);
  REQUIRE_MESSAGE(sub.ok(), sub.status());
  for (ActivityId id = 1; id <= 200; ++id) {
    REQUIRE(f.engine->Insert(id, {kStart, id, 1}).ok());
  }
  for (int i = 0; i < 30'000 && count.load() < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  sub->reset();
  std::lock_guard<std::mutex> lock(mu);
  REQUIRE(seen.size() == 200);
  for (size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == i + 1);
}

TEST_CASE("a subscription overtaken by retention reports OutOfRange") {
  ChangeStreamOptions o;
  o.max_records = 2;
  StreamFixture f(o);
  for (ActivityId id = 1; id <= 5; ++id) {
    REQUIRE(f.engine->Insert(1, {kStart, id, 1}).ok());
  }
  // Subscribing at a dropped position fails at once.
  CHECK(f.stream
            ->Subscribe(
                StreamPosition::AtSequence(1), 8,
                [](absl::Span<const ChangeRecordPtr>) {}, nullptr)
            .status()
            .code() == absl::StatusCode::kOutOfRange);
  CHECK(f.stream->Subscribe(StreamPosition::TrimHorizon(), 8, nullptr, nullptr)
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
  // A subscriber whose callback is blocked falls behind.
  std::mutex gate;
  std::unique_lock<std::mutex> hold(gate);
  std::atomic<bool> failed{false};
  std::atomic<int> calls{0};
  absl::StatusOr<std::unique_ptr<Subscription>> sub = f.stream->Subscribe(
      StreamPosition::TrimHorizon(), 1,
      [&](absl::Span<const ChangeRecordPtr>) {
        calls.fetch_add(1);
        std::lock_guard<std::mutex> wait(gate);
      },
      [&](const absl::Status& status) {
        CHECK(status.code() == absl::StatusCode::kOutOfRange);
        failed.store(true);
      });
  REQUIRE(sub.ok());
  for (int i = 0; i < 30'000 && calls.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (ActivityId id = 6; id <= 20; ++id) {
    REQUIRE(f.engine->Insert(1, {kStart, id, 1}).ok());
  }
  hold.unlock();
  for (int i = 0; i < 30'000 && !failed.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(failed.load());
}

}  // namespace
}  // namespace feedcore
