// Read markers: SetReadMarker moves a (user, feed) marker forward (or
// anywhere when forced), GetReadMarker returns it with the count of visible
// entries newer than it, counted as CountNewer counts (merged hybrid
// followees included); markers survive the graph node's other state going,
// and are carried by the change stream and by snapshots.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "feedcore/change_stream.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/snapshot.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::MakeActivity;
using testing::NewManualEngine;

constexpr size_t kMaxPage = 50;

EngineOptions Options(size_t hybrid_threshold = 0) {
  EngineOptions o;
  o.shards = 4;
  o.max_page_size = kMaxPage;
  o.default_backfill = 1000;
  o.hybrid_fanout_threshold = hybrid_threshold;
  return o;
}

ReadMarker Get(const InProcessFeedEngine& engine, EntityId user, const MarkedFeed& feed,
               size_t max_unread = kMaxPage) {
  const absl::StatusOr<ReadMarker> marker =
      engine.GetReadMarker(user, feed, max_unread);
  REQUIRE_MESSAGE(marker.ok(), marker.status());
  return *marker;
}

bool Set(InProcessFeedEngine& engine, EntityId user, const MarkedFeed& feed,
         EntryKey key, bool force = false) {
  const absl::StatusOr<bool> moved =
      engine.SetReadMarker(user, feed, key, {.force = force});
  REQUIRE_MESSAGE(moved.ok(), moved.status());
  return *moved;
}

// Every marker of `users` in their home feeds, the own feeds of `channels`
// and the world feed, with its unread count: what two engines holding the
// same markers and feeds answer alike.
std::vector<std::string> DescribeMarkers(
    const InProcessFeedEngine& engine, const std::vector<EntityId>& users,
    const std::vector<EntityId>& channels) {
  std::vector<std::string> lines;
  for (const EntityId user : users) {
    std::vector<MarkedFeed> feeds = {MarkedFeed::Home(user),
                                     MarkedFeed::World()};
    for (const EntityId c : channels) feeds.push_back(MarkedFeed::Own(c));
    for (const MarkedFeed& feed : feeds) {
      const ReadMarker m = Get(engine, user, feed);
      lines.push_back(absl::StrCat(
          user, " feed ", static_cast<int>(feed.type), "/", feed.owner, ": ",
          m.key ? absl::StrCat(m.key->ts, "/", m.key->activity_id) : "none",
          " unread ", m.unread, m.more_unread ? "+" : ""));
    }
  }
  return lines;
}

TEST_CASE("a home feed's marker moves forward unless forced") {
  auto clock = std::make_shared<ManualClock>(1'000);
  auto engine = NewManualEngine(clock, Options());
  for (ActivityId id = 1; id <= 5; ++id) {
    REQUIRE(engine->Insert(7, {static_cast<Micros>(10 * id), id, 3}).ok());
  }
  const MarkedFeed home = MarkedFeed::Home(7);

  ReadMarker m = Get(*engine, 7, home);
  CHECK_FALSE(m.key.has_value());
  CHECK(m.unread == 5);
  CHECK_FALSE(m.more_unread);

  CHECK(Set(*engine, 7, home, {30, 3}));
  m = Get(*engine, 7, home);
  CHECK(m.key == EntryKey{30, 3});
  CHECK(m.unread == 2);

  CHECK_FALSE(Set(*engine, 7, home, {30, 3}));  // where it is
  CHECK_FALSE(Set(*engine, 7, home, {20, 2}));  // backwards
  CHECK_FALSE(Set(*engine, 7, home, {30, 2}));  // same ts, lower id
  CHECK(Get(*engine, 7, home).key == EntryKey{30, 3});
  CHECK(Set(*engine, 7, home, {30, 4}));  // same ts, higher id
  CHECK(Get(*engine, 7, home).unread == 2);

  CHECK(Set(*engine, 7, home, {10, 1}, /*force=*/true));
  m = Get(*engine, 7, home, 3);
  CHECK(m.key == EntryKey{10, 1});
  CHECK(m.unread == 3);
  CHECK(m.more_unread);
  CHECK_FALSE(Set(*engine, 7, home, {10, 1}, /*force=*/true));

  // A marker past everything, and one not naming a stored entry.
  CHECK(Set(*engine, 7, home, {1'000'000, 0}));
  CHECK(Get(*engine, 7, home).unread == 0);
  CHECK(Set(*engine, 7, home, {25, 0}, true));
  CHECK(Get(*engine, 7, home).unread == 3);
}

TEST_CASE("unread counts only visible entries, as CountNewer") {
  auto clock = std::make_shared<ManualClock>(1'000);
  auto engine = NewManualEngine(clock, Options());
  REQUIRE(engine->Follow(1, 2).ok());
  REQUIRE(engine->Publish(MakeActivity(1, 2, 100, /*ttl=*/50)).ok());
  REQUIRE(engine->Publish(MakeActivity(2, 2, 200)).ok());
  REQUIRE(engine->Publish(MakeActivity(3, 2, 300)).ok());
  CHECK(Set(*engine, 1, MarkedFeed::Home(1), {50, 0}));
  CHECK(Get(*engine, 1, MarkedFeed::Home(1)).unread == 3);
  clock->Advance(50);  // activity 1 expires
  CHECK(Get(*engine, 1, MarkedFeed::Home(1)).unread == 2);
  CHECK(engine->CountNewer(1, {50, 0}, kMaxPage).value() == 2);
  REQUIRE(engine->Retract(2).ok());
  CHECK(Get(*engine, 1, MarkedFeed::Home(1)).unread == 1);
  // Unfollow takes the followee's entries, and so the unread count.
  REQUIRE(engine->Unfollow(1, 2).ok());
  CHECK(Get(*engine, 1, MarkedFeed::Home(1)).unread == 0);
}

TEST_CASE("a home feed counts the merged-at-read followees as reads do") {
  auto clock = std::make_shared<ManualClock>(1'000);
  auto flat = NewManualEngine(clock, Options());
  auto hybrid = NewManualEngine(clock, Options(/*hybrid_threshold=*/1));
  for (InProcessFeedEngine* engine : {flat.get(), hybrid.get()}) {
    REQUIRE(engine->Follow(1, 9).ok());
    REQUIRE(engine->Follow(2, 9).ok());  // 9 passes the hybrid threshold
    REQUIRE(engine->Follow(1, 8).ok());
    for (ActivityId id = 1; id <= 6; ++id) {
      REQUIRE(engine
                  ->Publish(MakeActivity(id, id % 2 == 0 ? 9 : 8,
                                         static_cast<Micros>(10 * id)))
                  .ok());
    }
    CHECK(Set(*engine, 1, MarkedFeed::Home(1), {25, 0}));
  }
  CHECK(hybrid->Publish(MakeActivity(7, 9, 70)).value().merged_at_read);
  REQUIRE(flat->Publish(MakeActivity(7, 9, 70)).ok());
  for (const size_t max_unread : {size_t{1}, size_t{3}, size_t{4}, kMaxPage}) {
    INFO("max_unread " << max_unread);
    const ReadMarker want = Get(*flat, 1, MarkedFeed::Home(1), max_unread);
    const ReadMarker got = Get(*hybrid, 1, MarkedFeed::Home(1), max_unread);
    CHECK(got.unread == want.unread);
    CHECK(got.more_unread == want.more_unread);
    CHECK(got.unread == hybrid->CountNewer(1, {25, 0}, max_unread).value());
  }
  CHECK(Get(*hybrid, 1, MarkedFeed::Home(1)).unread == 5);  // 3..7
}

TEST_CASE("own feeds of any entity and the world feed keep markers") {
  auto clock = std::make_shared<ManualClock>(1'000);
  auto engine = NewManualEngine(clock, Options());
  // Channel 50 is an entity whose own feed its members read.
  for (ActivityId id = 1; id <= 4; ++id) {
    REQUIRE(
        engine->Publish(MakeActivity(id, 50, static_cast<Micros>(id))).ok());
  }
  REQUIRE(engine->Publish(MakeActivity(5, 60, 5)).ok());
  CHECK(Set(*engine, 1, MarkedFeed::Own(50), {2, 2}));
  CHECK(Set(*engine, 2, MarkedFeed::Own(50), {4, 4}));
  CHECK(Set(*engine, 1, MarkedFeed::World(), {3, 3}));
  CHECK(Get(*engine, 1, MarkedFeed::Own(50)).unread == 2);
  CHECK(Get(*engine, 2, MarkedFeed::Own(50)).unread == 0);
  CHECK(Get(*engine, 1, MarkedFeed::World()).unread == 2);
  CHECK(Get(*engine, 2, MarkedFeed::World()).unread == 5);
  // A user may mark its own own feed too.
  CHECK(Set(*engine, 50, MarkedFeed::Own(50), {1, 1}));
  CHECK(Get(*engine, 50, MarkedFeed::Own(50)).unread == 3);
  // Each marker is its own: the home feed of 1 has none.
  CHECK_FALSE(Get(*engine, 1, MarkedFeed::Home(1)).key.has_value());
}

TEST_CASE("bad arguments fail naming them and change nothing") {
  auto clock = std::make_shared<ManualClock>(1'000);
  auto stream = ChangeStream::Create({}).value();
  EngineOptions o = Options();
  o.change_stream = stream;
  auto engine = NewManualEngine(clock, o);
  REQUIRE(engine->Insert(1, {10, 1, 3}).ok());
  CHECK(Set(*engine, 1, MarkedFeed::Home(1), {5, 0}));
  const uint64_t records = stream->Stats().next_sequence;

  auto set_fails = [&](EntityId user, MarkedFeed feed, EntryKey key,
                       const char* names) {
    for (const bool force : {false, true}) {
      const absl::Status status =
          engine->SetReadMarker(user, feed, key, {.force = force}).status();
      CHECK_MESSAGE(absl::IsInvalidArgument(status), status);
      CHECK_MESSAGE(status.message().find(names) != std::string::npos, status);
    }
  };
  set_fails(1, MarkedFeed::Home(1), {-1, 0}, "key.ts");
  set_fails(1, MarkedFeed::Home(2), {20, 0}, "feed.owner");
  set_fails(1, {FeedType::kWorld, 3}, {20, 0}, "feed.owner");
  set_fails(1, {FeedType::kNotification, 1}, {20, 0}, "feed.type");
  set_fails(1, {static_cast<FeedType>(9), 1}, {20, 0}, "feed.type");

  auto get_fails = [&](EntityId user, MarkedFeed feed, size_t max_unread,
                       const char* names) {
    const absl::Status status =
        engine->GetReadMarker(user, feed, max_unread).status();
    CHECK_MESSAGE(absl::IsInvalidArgument(status), status);
    CHECK_MESSAGE(status.message().find(names) != std::string::npos, status);
  };
  get_fails(1, MarkedFeed::Home(1), 0, "max_unread");
  get_fails(1, MarkedFeed::Home(1), kMaxPage + 1, "max_unread");
  get_fails(1, MarkedFeed::Home(2), 1, "feed.owner");
  get_fails(1, {FeedType::kWorld, 3}, 1, "feed.owner");
  get_fails(1, {FeedType::kNotification, 1}, 1, "feed.type");

  CHECK(stream->Stats().next_sequence == records);
  CHECK(Get(*engine, 1, MarkedFeed::Home(1)).key == EntryKey{5, 0});
}

TEST_CASE("a graph node that holds only markers is kept") {
  auto clock = std::make_shared<ManualClock>(1'000);
  auto engine = NewManualEngine(clock, Options());
  CHECK(Set(*engine, 1, MarkedFeed::World(), {7, 7}));
  // Following and unfollowing empties the node's follow state: the node
  // would be dropped were it not for the marker.
  REQUIRE(engine->Follow(1, 2).ok());
  REQUIRE(engine->Unfollow(1, 2).ok());
  REQUIRE(engine->Follow(3, 1).ok());
  REQUIRE(engine->Unfollow(3, 1).ok());
  CHECK(Get(*engine, 1, MarkedFeed::World()).key == EntryKey{7, 7});
  CHECK(engine->FollowingCount(1).value() == 0);
  CHECK(engine->FollowerCount(1).value() == 0);
}

// Markers set, forced, and left by follows that come and go, on a source
// recording into a stream.
void MarkerWorkload(InProcessFeedEngine& engine) {
  for (ActivityId id = 1; id <= 12; ++id) {
    REQUIRE(engine
                .Publish(MakeActivity(id, 100 + id % 3,
                                      static_cast<Micros>(10 * id)))
                .ok());
  }
  for (EntityId user = 1; user <= 6; ++user) {
    REQUIRE(engine.Follow(user, 100 + user % 3).ok());
    Set(engine, user, MarkedFeed::Home(user),
        {static_cast<Micros>(10 * user), user});
    Set(engine, user, MarkedFeed::Own(101), {static_cast<Micros>(5 * user), 0});
  }
  Set(engine, 1, MarkedFeed::World(), {60, 6});
  Set(engine, 1, MarkedFeed::World(), {30, 3}, /*force=*/true);
  Set(engine, 2, MarkedFeed::Home(2), {1, 0}, /*force=*/true);
  Set(engine, 3, MarkedFeed::Home(3), {1000, 0});
  REQUIRE(engine.Unfollow(4, 101).ok());  // 4's node then holds only markers
}

TEST_CASE("the change stream and snapshots carry markers") {
  const std::vector<EntityId> users = {1, 2, 3, 4, 5, 6, 7};
  const std::vector<EntityId> channels = {100, 101, 102};
  auto clock = std::make_shared<ManualClock>(1'000);
  auto stream = ChangeStream::Create({}).value();
  EngineOptions o = Options();
  o.change_stream = stream;
  auto source = NewManualEngine(clock, o);

  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string empty_path =
      (dir / absl::StrCat("read_marker_test_empty_", ::getpid())).string();
  const std::string full_path =
      (dir / absl::StrCat("read_marker_test_full_", ::getpid())).string();
  REQUIRE(SaveSnapshot(*source, empty_path).ok());
  MarkerWorkload(*source);

  // The records say what the header documents.
  auto reader = stream->NewReader(StreamPosition::TrimHorizon()).value();
  size_t marker_records = 0;
  EngineOptions replica_options = Options();
  replica_options.sweep_interval = 0;
  replica_options.clock = clock;
  auto replica = LoadSnapshot(empty_path, replica_options).value();
  for (;;) {
    const std::vector<ChangeRecordPtr> batch = reader->Read(1000).value();
    if (batch.empty()) break;
    for (const ChangeRecordPtr& r : batch) {
      if (r->kind == ChangeKind::kReadMarkerSet) {
        ++marker_records;
        CHECK(r->keys.size() == 1);
        if (r->entity == 1 && r->feed == FeedType::kWorld) {
          CHECK(r->other == 0);
        }
      }
      REQUIRE_MESSAGE(replica->Apply(*r).ok(), r->sequence);
    }
  }
  // 6 x 2, two world markers of 1, one forced home marker, one forward.
  CHECK(marker_records == 16);
  const std::vector<std::string> want =
      DescribeMarkers(*source, users, channels);
  CHECK(DescribeMarkers(replica->engine(), users, channels) == want);

  REQUIRE(SaveSnapshot(*source, full_path).ok());
  auto loaded = LoadSnapshot(full_path, replica_options).value();
  CHECK(DescribeMarkers(loaded->engine(), users, channels) == want);
  std::filesystem::remove(empty_path);
  std::filesystem::remove(full_path);
}

TEST_CASE("a malformed marker record is refused") {
  auto clock = std::make_shared<ManualClock>(1'000);
  auto stream = ChangeStream::Create({}).value();
  EngineOptions o = Options();
  o.change_stream = stream;
  auto source = NewManualEngine(clock, o);
  const std::string path = (std::filesystem::temp_directory_path() /
                            absl::StrCat("read_marker_test_bad_", ::getpid()))
                               .string();
  REQUIRE(SaveSnapshot(*source, path).ok());
  CHECK(Set(*source, 5, MarkedFeed::Own(9), {3, 3}));
  const ChangeRecordPtr good = stream->NewReader(StreamPosition::TrimHorizon())
                                   .value()
                                   ->Read(1)
                                   .value()[0];
  EngineOptions replica_options = Options();
  replica_options.sweep_interval = 0;
  auto replica = LoadSnapshot(path, replica_options).value();
  std::filesystem::remove(path);

  auto refused = [&](auto&& spoil) {
    ChangeRecord bad = *good;
    spoil(bad);
    const absl::Status status = replica->Apply(bad);
    CHECK_MESSAGE(absl::IsInvalidArgument(status), status);
  };
  refused([](ChangeRecord& r) { r.keys.clear(); });
  refused([](ChangeRecord& r) { r.keys.push_back(r.keys[0]); });
  refused([](ChangeRecord& r) { r.keys[0].ts = -1; });
  refused([](ChangeRecord& r) { r.feed = FeedType::kNotification; });
  refused([](ChangeRecord& r) {
    r.feed = FeedType::kHome;  // another user's home feed
  });
  refused([](ChangeRecord& r) {
    r.feed = FeedType::kWorld;  // owner 9, not 0
  });
  CHECK_FALSE(Get(replica->engine(), 5, MarkedFeed::Own(9)).key.has_value());
  REQUIRE(replica->Apply(*good).ok());
  CHECK(Get(replica->engine(), 5, MarkedFeed::Own(9)).key == EntryKey{3, 3});
}

}  // namespace
}  // namespace feedcore
