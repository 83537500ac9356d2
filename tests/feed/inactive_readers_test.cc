// Inactive readers (EngineOptions::inactive_after): who is made dormant and
// when, what a dormant reader holds and gets (nothing in timestamp order;
// copies of out-of-order publishes below its merge), that its pages are
// those of an engine that keeps every reader materialized (before and after
// its next read rebuilds it, at the cap too), the calls that meet a dormant
// reader (Retract, Unfollow, Remove, Mute and its expiry, Unmute, Block, a
// followee becoming merged at read), the change stream and snapshots, and
// the errors.
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "feedcore/snapshot.h"
#include "support/engine_state.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::IdsOf;
using testing::MakeActivity;
using testing::NewManualEngine;
using testing::WholeTimeline;

constexpr Micros kStart = 1'000'000'000;
constexpr Micros kIdle = 100;
constexpr EntityId kReader = 1;
constexpr EntityId kActor = 2;
constexpr EntityId kOther = 3;
constexpr EntityId kActiveReader = 4;

EngineOptions Options(Micros inactive_after = kIdle) {
  EngineOptions o;
  o.shards = 4;
  o.fanout_threads = 0;
  o.default_backfill = 1000;
  o.max_page_size = 1000;
  o.inactive_after = inactive_after;
  return o;
}

// An engine with inactive readers beside one without, fed the same calls:
// the second says what every read of the first must return.
struct Pair {
  explicit Pair(EngineOptions options = Options())
      : clock(std::make_shared<ManualClock>(kStart)),
        engine(NewManualEngine(clock, options)),
        reference(NewManualEngine(clock, [&] {
          EngineOptions o = options;
          o.inactive_after = 0;
          return o;
        }())) {}

  // Runs `call` on both engines.
  void Both(const std::function<void(InProcessFeedEngine&)>& call) {
    call(*engine);
    call(*reference);
  }
  void Follow(EntityId follower, EntityId followee) {
    Both([&](InProcessFeedEngine& e) {
      REQUIRE(e.Follow(follower, followee).ok());
    });
  }
  // Publishes `id` of `actor` at timestamp `ts`; returns the result of the
  // engine with inactive readers.
  PublishResult Publish(ActivityId id, EntityId actor, Micros ts) {
    const absl::StatusOr<PublishResult> reference_result =
        reference->Publish(MakeActivity(id, actor, ts));
    REQUIRE(reference_result.ok());
    const absl::StatusOr<PublishResult> r =
        engine->Publish(MakeActivity(id, actor, ts));
    REQUIRE_MESSAGE(r.ok(), r.status());
    return *r;
  }
  size_t Release() {
    const absl::StatusOr<size_t> n = engine->ReleaseInactiveReaders(100);
    REQUIRE_MESSAGE(n.ok(), n.status());
    return *n;
  }
  size_t Entries() const { return engine->Stats().value().entries; }
  // Reads `reader`'s whole timeline from both and checks they agree.
  std::vector<ActivityId> Read(EntityId reader) {
    const std::vector<StoredEntry> got = WholeTimeline(*engine, reader);
    CHECK(got == WholeTimeline(*reference, reader));
    return IdsOf(got);
  }

  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<InProcessFeedEngine> engine;
  std::unique_ptr<InProcessFeedEngine> reference;
};

TEST_CASE("an idle reader is made dormant, skipped, and rebuilt by a read") {
  Pair p;
  p.Follow(kReader, kActor);
  p.Follow(kReader, kOther);
  p.Follow(kActiveReader, kActor);
  for (ActivityId id = 10; id < 15; ++id) p.Publish(id, kActor, id);
  for (ActivityId id = 20; id < 25; ++id) p.Publish(id, kOther, id);
  const size_t all_copies = p.Entries();

  p.clock->Advance(kIdle / 2);
  p.Read(kActiveReader);
  CHECK(p.Release() == 0);  // nobody idle long enough yet
  p.clock->Advance(kIdle / 2 + 1);
  CHECK(p.Release() == 1);  // the reader; the other read meanwhile
  CHECK(p.Release() == 0);  // dormant already
  // Its ten copies left.
  CHECK(p.Entries() == all_copies - 10);

  // A publish in timestamp order skips it.
  CHECK(p.Publish(15, kActor, 15).fanned_out == 1);
  CHECK(p.Entries() == all_copies - 10 + 3);  // own, world, active reader

  // Its next read rebuilds it first, then answers as if nothing happened.
  CHECK(p.Read(kReader) ==
        std::vector<ActivityId>{24, 23, 22, 21, 20, 15, 14, 13, 12, 11, 10});
  CHECK(p.Entries() == all_copies + 3 + 1);
  CHECK(p.Publish(25, kOther, 25).fanned_out == 1);
}

TEST_CASE("CountNewer, ReadGroups and ReadRanked count as reads too") {
  EngineOptions options = Options();
  options.aggregation.enabled = true;
  Pair p(options);
  p.Follow(kReader, kActor);
  p.Publish(10, kActor, 10);
  const std::vector<std::function<void(InProcessFeedEngine&)>> reads = {
      [](InProcessFeedEngine& e) {
        REQUIRE(e.CountNewer(kReader, {0, 0}, 10).ok());
      },
      [](InProcessFeedEngine& e) { REQUIRE(e.ReadGroups(kReader, {}).ok()); },
      [](InProcessFeedEngine& e) {
        RankedReadOptions ranked;
        ranked.window = 10;
        REQUIRE(e.ReadRanked(kReader, ranked).ok());
      },
  };
  for (const auto& read : reads) {
    p.clock->Advance(kIdle + 1);
    CHECK(p.Release() == 1);
    const size_t dormant = p.Entries();
    read(*p.engine);  // rebuilds
    CHECK(p.Entries() == dormant + 1);
    p.clock->Advance(kIdle / 2);
    CHECK(p.Release() == 0);  // read kIdle / 2 ago
  }
}

TEST_CASE("out-of-order publishes below a dormant merge arrive as copies") {
  Pair p;
  p.Follow(kReader, kActor);
  p.Publish(1, kActor, 100);
  p.Publish(2, kActor, 200);
  p.clock->Advance(kIdle + 1);
  REQUIRE(p.Release() == 1);
  const size_t dormant = p.Entries();
  // Older than the oldest copy it held: the merge does not show it.
  p.Publish(3, kActor, 50);
  CHECK(p.Entries() == dormant + 3);  // own, world and the reader's copy
  // Between its copies: the merge shows it.
  p.Publish(4, kActor, 150);
  CHECK(p.Entries() == dormant + 3 + 2);
  CHECK(p.Read(kReader) == std::vector<ActivityId>{2, 4, 1, 3});
}

TEST_CASE("copies that differ from the own feed stay; reads stay exact") {
  Pair p;
  p.Follow(kReader, kActor);
  p.Follow(kReader, kOther);
  for (ActivityId id = 1; id <= 4; ++id) p.Publish(id, kActor, id);
  for (ActivityId id = 5; id <= 6; ++id) p.Publish(id, kOther, id);
  // The reader removed one copy of kActor's: its copies no longer match.
  p.Both([](InProcessFeedEngine& e) {
    REQUIRE(e.Remove(kReader, {2, 2}).ok());
  });
  const size_t before = p.Entries();
  p.clock->Advance(kIdle + 1);
  REQUIRE(p.Release() == 1);
  CHECK(p.Entries() == before - 2);  // only kOther's two copies left
  CHECK(p.Publish(7, kActor, 7).fanned_out == 0);
  CHECK(p.Read(kReader) == std::vector<ActivityId>{7, 6, 5, 4, 3, 1});
}

TEST_CASE("Retract, Unfollow and Mute reach a dormant reader") {
  Pair p;
  p.Follow(kReader, kActor);
  p.Follow(kReader, kOther);
  for (ActivityId id = 1; id <= 3; ++id) p.Publish(id, kActor, id);
  for (ActivityId id = 4; id <= 6; ++id) p.Publish(id, kOther, id);
  p.clock->Advance(kIdle + 1);
  REQUIRE(p.Release() == 1);
  p.Both([](InProcessFeedEngine& e) { REQUIRE(e.Retract(2).ok()); });
  CHECK(p.engine->FollowerCount(kActor).value() == 1);
  p.Both([](InProcessFeedEngine& e) { REQUIRE(e.Mute(kReader, kOther).ok()); });
  CHECK(p.Read(kReader) == std::vector<ActivityId>{3, 1});
  p.clock->Advance(kIdle + 1);
  REQUIRE(p.Release() == 1);
  p.Both([](InProcessFeedEngine& e) {
    REQUIRE(e.Unmute(kReader, kOther, {.backfill = 1}).ok());
  });
  p.Both([](InProcessFeedEngine& e) {
    REQUIRE(e.Unfollow(kReader, kActor).ok());
  });
  CHECK(p.Read(kReader) == std::vector<ActivityId>{6});
  CHECK(p.engine->FollowerCount(kActor).value() == 0);
}

TEST_CASE("a followee merged at read while its reader is dormant stays so") {
  EngineOptions options = Options();
  options.hybrid_fanout_threshold = 2;
  Pair p(options);
  p.Follow(kReader, kActor);
  p.Publish(1, kActor, 1);
  p.Publish(2, kActor, 2);
  p.clock->Advance(kIdle + 1);
  REQUIRE(p.Release() == 1);
  p.Follow(10, kActor);
  p.Follow(11, kActor);  // kActor is merged at read now
  p.Publish(3, kActor, 3);
  const size_t before = p.Entries();
  CHECK(p.Read(kReader) == std::vector<ActivityId>{3, 2, 1});
  CHECK(p.Entries() == before);  // nothing copied: the merge stays
  CHECK(p.Release() == 0);       // no copied followee left to release
}

TEST_CASE("at the cap, the rebuilt timeline is the newest of what it shows") {
  EngineOptions options = Options();
  options.max_timeline_length = 5;
  Pair p(options);
  for (EntityId actor = 10; actor < 13; ++actor) p.Follow(kReader, actor);
  ActivityId id = 1;
  for (int round = 0; round < 4; ++round) {
    for (EntityId actor = 10; actor < 13; ++actor) {
      p.Publish(id, actor, static_cast<Micros>(id));
      ++id;
    }
  }
  p.clock->Advance(kIdle + 1);
  REQUIRE(p.Release() == 1);
  for (int round = 0; round < 2; ++round) {
    for (EntityId actor = 10; actor < 13; ++actor) {
      p.Publish(id, actor, static_cast<Micros>(id));
      ++id;
    }
  }
  CHECK(p.Read(kReader) == std::vector<ActivityId>{18, 17, 16, 15, 14});
  p.Publish(id, 10, static_cast<Micros>(id));
  CHECK(p.Read(kReader) == std::vector<ActivityId>{19, 18, 17, 16, 15});
}

TEST_CASE("replicas and snapshots hold dormant readers as the source does") {
  auto clock = std::make_shared<ManualClock>(kStart);
  std::shared_ptr<ChangeStream> stream = testing::NewManualStream(clock);
  EngineOptions options = Options();
  options.change_stream = stream;
  std::unique_ptr<InProcessFeedEngine> source = NewManualEngine(clock, options);
  testing::TempPath empty("inactive-empty");
  REQUIRE(SaveSnapshot(*source, empty.path).ok());
  for (EntityId reader = 1; reader <= 6; ++reader) {
    for (EntityId actor = 7; actor <= 9; ++actor) {
      REQUIRE(source->Follow(reader, actor).ok());
    }
  }
  for (ActivityId id = 1; id <= 12; ++id) {
    REQUIRE(source->Publish(MakeActivity(id, 7 + id % 3, id)).ok());
  }
  REQUIRE(source->Remove(2, {4, 4}).ok());  // reader 2's copies of 8 differ
  clock->Advance(kIdle + 1);
  REQUIRE(source->ReadTimeline(3, {}).ok());  // reader 3 stays active
  REQUIRE(source->ReleaseInactiveReaders(100).value() == 5);
  REQUIRE(source->Publish(MakeActivity(13, 7, 13)).ok());
  REQUIRE(source->ReadTimeline(4, {}).ok());  // rebuilt
  testing::TempPath taken("inactive");
  REQUIRE(SaveSnapshot(*source, taken.path).ok());

  EngineOptions replica_options = Options();
  replica_options.clock = clock;
  replica_options.sweep_interval = 0;
  std::unique_ptr<Replica> replica =
      LoadSnapshot(empty.path, replica_options).value();
  auto reader = stream->NewReader(StreamPosition::TrimHorizon()).value();
  size_t dormant_records = 0;
  for (;;) {
    const std::vector<ChangeRecordPtr> batch = reader->Read(1000).value();
    if (batch.empty()) break;
    for (const ChangeRecordPtr& record : batch) {
      dormant_records += record->kind == ChangeKind::kDormantFollowee ||
                         record->kind == ChangeKind::kDormantFollower;
      const absl::Status status = replica->Apply(*record);
      REQUIRE_MESSAGE(status.ok(), status);
    }
  }
  CHECK(dormant_records > 0);
  std::unique_ptr<Replica> loaded =
      LoadSnapshot(taken.path, replica_options).value();
  // Before any read: the same copies held (dormant readers hold fewer).
  const size_t entries = source->Stats().value().entries;
  CHECK(replica->engine().Stats().value().entries == entries);
  CHECK(loaded->engine().Stats().value().entries == entries);
  // The reads rebuild every dormant reader alike.
  std::vector<EntityId> universe;
  for (EntityId e = 1; e <= 9; ++e) universe.push_back(e);
  testing::CheckSameState(*source, replica->engine(), universe);
  testing::CheckSameState(*source, loaded->engine(), universe);
}

// Reads `reader`'s home marker on both engines: its unread count is
// answered from the merge, without the rebuild a read does first.
void CheckUnread(Pair& p, EntityId reader) {
  const size_t max = p.engine->options().max_page_size;
  const absl::StatusOr<ReadMarker> got =
      p.engine->GetReadMarker(reader, MarkedFeed::Home(reader), max);
  const absl::StatusOr<ReadMarker> want =
      p.reference->GetReadMarker(reader, MarkedFeed::Home(reader), max);
  REQUIRE(got.ok());
  REQUIRE(want.ok());
  CHECK(got->unread == want->unread);
}

TEST_CASE("a muted followee's publishes do not shorten a rebuilt timeline") {
  EngineOptions options = Options();
  options.max_timeline_length = 20;
  options.default_backfill = 5;
  Pair p(options);
  p.Follow(kReader, kActor);
  p.Follow(kReader, kOther);
  p.Both([](InProcessFeedEngine& e) { REQUIRE(e.Mute(kReader, kOther).ok()); });
  ActivityId id = 1;
  for (; id <= 19; ++id) p.Publish(id, kActor, static_cast<Micros>(id));
  REQUIRE(p.Read(kReader).size() == 19);
  p.clock->Advance(kIdle + 1);
  REQUIRE(p.Release() == 1);
  for (int i = 0; i < 3; ++i, ++id) {
    p.Publish(id, kOther, static_cast<Micros>(id));
  }
  p.Publish(id, kActor, static_cast<Micros>(id));
  CheckUnread(p, kReader);
  CHECK(p.Read(kReader).size() == 20);
  CHECK(p.Read(kReader).size() == 20);
  ++id;
  p.Publish(id, kActor, static_cast<Micros>(id));
  CHECK(p.Read(kReader).size() == 20);
}

TEST_CASE("a mute that expires shows a dormant reader what it shows others") {
  // Muted before the reader goes idle, or while it is dormant.
  for (const bool muted_first : {true, false}) {
    INFO("muted before the reader is dormant: " << muted_first);
    Pair p;
    p.Follow(kReader, kActor);
    p.Follow(kReader, kOther);
    p.Publish(1, kActor, 1);
    p.Publish(2, kOther, 2);
    MuteOptions mute;
    mute.expires_at = p.clock->Now() + 3 * kIdle;
    auto mute_other = [&](InProcessFeedEngine& e) {
      REQUIRE(e.Mute(kReader, kOther, mute).ok());
    };
    if (muted_first) p.Both(mute_other);
    p.clock->Advance(kIdle + 1);
    REQUIRE(p.Release() == 1);
    if (!muted_first) p.Both(mute_other);
    p.Publish(3, kOther, 3);  // during the mute: never shown
    p.clock->Advance(2 * kIdle);
    p.Publish(4, kOther, 4);  // after it
    CheckUnread(p, kReader);
    CHECK(p.Read(kReader) == std::vector<ActivityId>{4, 1});
    p.Publish(5, kOther, 5);
    CHECK(p.Read(kReader) == std::vector<ActivityId>{5, 4, 1});
  }
}

TEST_CASE("Unmute of a dormant reader's followee, with and without back-fill") {
  for (const size_t backfill : {size_t{0}, size_t{1}, size_t{1000}}) {
    INFO("backfill " << backfill);
    Pair p;
    p.Follow(kReader, kActor);
    p.Follow(kReader, kOther);
    p.Publish(1, kActor, 1);
    p.Publish(2, kOther, 2);
    p.Both(
        [](InProcessFeedEngine& e) { REQUIRE(e.Mute(kReader, kOther).ok()); });
    p.clock->Advance(kIdle + 1);
    REQUIRE(p.Release() == 1);
    p.Publish(3, kOther, 3);
    p.Publish(4, kOther, 4);
    p.Both([&](InProcessFeedEngine& e) {
      REQUIRE(e.Unmute(kReader, kOther, {.backfill = backfill}).ok());
    });
    p.Publish(5, kOther, 5);
    CheckUnread(p, kReader);
    p.Read(kReader);
  }
}

TEST_CASE("Unfollow, Mute and Block of a dormant reader at a full timeline") {
  // Each removes kActor's entries; what the cap pushed out stays out.
  const std::vector<std::function<void(InProcessFeedEngine&)>> removals = {
      [](InProcessFeedEngine& e) { REQUIRE(e.Unfollow(kReader, kActor).ok()); },
      [](InProcessFeedEngine& e) { REQUIRE(e.Mute(kReader, kActor).ok()); },
      [](InProcessFeedEngine& e) { REQUIRE(e.Block(kReader, kActor).ok()); },
      [](InProcessFeedEngine& e) { REQUIRE(e.Block(kActor, kReader).ok()); },
  };
  for (size_t k = 0; k < removals.size(); ++k) {
    INFO("removal " << k);
    EngineOptions options = Options();
    options.max_timeline_length = 5;
    Pair p(options);
    p.Follow(kReader, kActor);
    p.Follow(kReader, kOther);
    for (ActivityId id = 1; id <= 5; ++id) {
      p.Publish(id, id % 2 == 1 ? kActor : kOther, static_cast<Micros>(id));
    }
    p.clock->Advance(kIdle + 1);
    REQUIRE(p.Release() == 1);
    p.Publish(6, kOther, 6);
    p.Publish(7, kOther, 7);
    p.Both(removals[k]);
    CheckUnread(p, kReader);
    CHECK(p.Read(kReader) == std::vector<ActivityId>{7, 6, 4});
    // Unblocked, the follows stay ended.
    p.Both([](InProcessFeedEngine& e) {
      REQUIRE(e.Unblock(kReader, kActor, {.backfill = 1000}).ok());
      REQUIRE(e.Unblock(kActor, kReader, {.backfill = 1000}).ok());
    });
    p.Publish(8, kActor, 8);
    p.Read(kReader);
  }
}

TEST_CASE("errors") {
  Pair off(Options(0));
  CHECK(absl::IsFailedPrecondition(
      off.engine->ReleaseInactiveReaders(10).status()));
  for (const Micros bad : {Micros{-1}, kMaxTtl + 1}) {
    EngineOptions o = Options(bad);
    const absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> engine =
        FeedEngine::Create(o);
    CHECK(absl::IsInvalidArgument(engine.status()));
    CHECK(engine.status().message().find("inactive_after") !=
          absl::string_view::npos);
  }
  Pair p;
  p.Follow(kReader, kActor);
  p.clock->Advance(kIdle + 1);
  CHECK(p.engine->ReleaseInactiveReaders(0).value() == 0);
  CHECK(p.Release() == 1);
}

}  // namespace
}  // namespace feedcore
