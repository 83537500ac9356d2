// Conformance cases of read markers (SetReadMarker, GetReadMarker,
// ListReadMarkers) on the
// backend FEEDCORE_TEST_BACKEND selects (conformance/backend.h): both the
// in-process engine and the Redis Cluster one keep markers, and are held
// to one reading of feed_engine.h: monotonic unless forced, unread counts
// of visible entries capped at max_unread, home, own and world feeds, all of
// a user's markers paged with their counts, and bad arguments refused
// naming them, changing nothing. Mentions are counted in process; the
// cluster refuses a publish that mentions (Unimplemented).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/backend.h"
#include "conformance/feed_conformance_util.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/social_test_util.h"

namespace feedcore {
namespace {

using testing::Env;
using testing::kStart;
using testing::MakeActivity;
using testing::OnCluster;
using testing::Options;

ReadMarker Get(const FeedEngine& engine, EntityId user, const MarkedFeed& feed,
               size_t max_unread = 50) {
  const absl::StatusOr<ReadMarker> marker =
      engine.read_markers()->GetReadMarker(user, feed, max_unread);
  REQUIRE_MESSAGE(marker.ok(), marker.status());
  return *marker;
}

bool Set(FeedEngine& engine, EntityId user, const MarkedFeed& feed,
         EntryKey key, bool force = false) {
  const absl::StatusOr<bool> moved =
      engine.read_markers()->SetReadMarker(user, feed, key, {.force = force});
  REQUIRE_MESSAGE(moved.ok(), moved.status());
  return *moved;
}

TEST_CASE("a marker moves forward unless forced; unread counts what is newer") {
  Env env(Options(100));
  REQUIRE(env.engine->read_markers() != nullptr);
  FeedEngine& engine = *env.engine;
  for (ActivityId id = 1; id <= 6; ++id) {
    env.Ins(1, {kStart + static_cast<Micros>(id), id, 9});
  }
  // One that expires soon.
  InsertOptions short_lived;
  short_lived.ttl = 10;
  env.Ins(1, {kStart + 7, 7, 9}, short_lived);
  const MarkedFeed home = MarkedFeed::Home(1);
  ReadMarker m = Get(engine, 1, home);
  CHECK_FALSE(m.key.has_value());
  CHECK(m.unread == 7);

  CHECK(Set(engine, 1, home, {kStart + 3, 3}));
  CHECK_FALSE(Set(engine, 1, home, {kStart + 3, 3}));
  CHECK_FALSE(Set(engine, 1, home, {kStart + 2, 2}));
  CHECK_FALSE(Set(engine, 1, home, {kStart + 3, 2}));
  m = Get(engine, 1, home, 2);
  CHECK(m.key == EntryKey{kStart + 3, 3});
  CHECK(m.unread == 2);
  CHECK(m.more_unread);
  CHECK(Get(engine, 1, home).unread == 4);
  env.clock->Advance(10);
  CHECK(Get(engine, 1, home).unread == 3);

  CHECK(Set(engine, 1, home, {kStart + 1, 1}, /*force=*/true));
  CHECK(Get(engine, 1, home).unread == 5);
  CHECK(Set(engine, 1, home, {kStart + 100, 0}));
  m = Get(engine, 1, home);
  CHECK(m.key == EntryKey{kStart + 100, 0});
  CHECK(m.unread == 0);
  CHECK_FALSE(m.more_unread);
}

TEST_CASE("markers in own feeds and the world feed are the user's own") {
  Env env(Options(100));
  FeedEngine& engine = *env.engine;
  for (ActivityId id = 1; id <= 4; ++id) {
    REQUIRE(
        engine.Publish(MakeActivity(id, 50, kStart + static_cast<Micros>(id)))
            .ok());
  }
  REQUIRE(engine.Publish(MakeActivity(5, 60, kStart + 5)).ok());
  CHECK(Set(engine, 1, MarkedFeed::Own(50), {kStart + 2, 2}));
  CHECK(Set(engine, 2, MarkedFeed::Own(50), {kStart + 4, 4}));
  CHECK(Set(engine, 1, MarkedFeed::World(), {kStart + 3, 3}));
  CHECK(Get(engine, 1, MarkedFeed::Own(50)).unread == 2);
  CHECK(Get(engine, 2, MarkedFeed::Own(50)).unread == 0);
  CHECK(Get(engine, 1, MarkedFeed::World()).unread == 2);
  CHECK(Get(engine, 2, MarkedFeed::World()).unread == 5);
  CHECK_FALSE(Get(engine, 1, MarkedFeed::Own(60)).key.has_value());
  CHECK_FALSE(Get(engine, 1, MarkedFeed::Home(1)).key.has_value());
}

TEST_CASE("bad marker arguments are refused naming them") {
  Env env(Options(100));
  FeedEngine& engine = *env.engine;
  CHECK(Set(engine, 1, MarkedFeed::Home(1), {kStart, 1}));
  auto refused = [](const absl::Status& status, const std::string& names) {
    CHECK_MESSAGE(absl::IsInvalidArgument(status), status);
    CHECK_MESSAGE(status.message().find(names) != std::string::npos, status);
  };
  refused(engine.read_markers()
              ->SetReadMarker(1, MarkedFeed::Home(1), {-1, 0})
              .status(),
          "key.ts");
  refused(engine.read_markers()
              ->SetReadMarker(1, MarkedFeed::Home(2), {kStart + 1, 0})
              .status(),
          "feed.owner");
  refused(engine.read_markers()
              ->SetReadMarker(1, {FeedType::kWorld, 7}, {kStart + 1, 0})
              .status(),
          "feed.owner");
  refused(engine.read_markers()
              ->SetReadMarker(1, {FeedType::kNotification, 1}, {kStart + 1, 0},
                              {.force = true})
              .status(),
          "feed.type");
  refused(
      engine.read_markers()->GetReadMarker(1, MarkedFeed::Home(1), 0).status(),
      "max_unread");
  refused(engine.read_markers()
              ->GetReadMarker(1, MarkedFeed::Home(1),
                              engine.options().max_page_size + 1)
              .status(),
          "max_unread");
  refused(
      engine.read_markers()->GetReadMarker(1, MarkedFeed::Home(3), 1).status(),
      "feed.owner");
  CHECK(Get(engine, 1, MarkedFeed::Home(1)).key == EntryKey{kStart, 1});
}

TEST_CASE("all of a user's markers come a page at a time with their counts") {
  Env env(Options(100));
  FeedEngine& engine = *env.engine;
  ReadMarkers& markers = *engine.read_markers();
  // Channels 50..56 with 1..7 messages; the user has read the first of each.
  for (EntityId channel = 50; channel < 57; ++channel) {
    for (ActivityId n = 0; n <= channel - 50; ++n) {
      const ActivityId id = channel * 100 + n;
      env.Pub(id, channel, kStart + static_cast<Micros>(id));
    }
    CHECK(Set(engine, 1, MarkedFeed::Own(channel),
              {kStart + static_cast<Micros>(channel * 100), channel * 100}));
  }
  CHECK(Set(engine, 1, MarkedFeed::World(), {kStart, 0}));
  CHECK(Set(engine, 1, MarkedFeed::Home(1), {kStart, 0}));
  CHECK(Set(engine, 2, MarkedFeed::Own(50), {kStart, 0}));  // another user's

  ReadStateOptions list;
  list.limit = 3;
  list.max_unread = 4;
  std::vector<FeedReadState> all;
  std::vector<std::string> cursors;
  for (int pages = 0; pages < 10; ++pages) {
    const absl::StatusOr<ReadStatePage> page = markers.ListReadMarkers(1, list);
    REQUIRE_MESSAGE(page.ok(), page.status());
    all.insert(all.end(), page->feeds.begin(), page->feeds.end());
    if (page->next_cursor.empty()) break;
    list.cursor = page->next_cursor;
    cursors.push_back(page->next_cursor);
  }
  CHECK(cursors.size() == 2);
  // Home first, then the own feeds by owner, then the world feed.
  REQUIRE(all.size() == 9);
  CHECK(all[0].feed == MarkedFeed::Home(1));
  CHECK(all[0].marker.unread == 0);
  for (EntityId channel = 50; channel < 57; ++channel) {
    const FeedReadState& state = all[1 + channel - 50];
    CHECK(state.feed == MarkedFeed::Own(channel));
    const ReadMarker one = Get(engine, 1, state.feed, 4);
    CHECK(state.marker.key == one.key);
    CHECK(state.marker.unread == one.unread);
    CHECK(state.marker.more_unread == one.more_unread);
    CHECK(state.marker.unread == std::min<size_t>(channel - 50, 4));
    CHECK(state.marker.more_unread == (channel - 50 > 4));
  }
  CHECK(all[8].feed == MarkedFeed::World());
  CHECK(all[8].marker.unread == 4);
  CHECK(all[8].marker.more_unread);

  // A user with no markers has an empty list.
  const absl::StatusOr<ReadStatePage> none =
      markers.ListReadMarkers(3, ReadStateOptions{});
  REQUIRE(none.ok());
  CHECK(none->feeds.empty());
  CHECK(none->next_cursor.empty());

  auto refused = [](const absl::Status& status, const std::string& names) {
    CHECK_MESSAGE(absl::IsInvalidArgument(status), status);
    CHECK_MESSAGE(status.message().find(names) != std::string::npos, status);
  };
  ReadStateOptions bad;
  bad.limit = 0;
  refused(markers.ListReadMarkers(1, bad).status(), "limit");
  bad.limit = engine.options().max_page_size + 1;
  refused(markers.ListReadMarkers(1, bad).status(), "limit");
  bad = {};
  bad.max_unread = 0;
  refused(markers.ListReadMarkers(1, bad).status(), "max_unread");
  bad = {};
  bad.cursor = cursors[0];
  refused(markers.ListReadMarkers(2, bad).status(), "another user");
  bad.cursor = "not a cursor";
  refused(markers.ListReadMarkers(1, bad).status(), "cursor");
}

TEST_CASE("mentions count in the channel until the marker passes them") {
  Env env(Options(100));
  FeedEngine& engine = *env.engine;
  PublishOptions mention_1_and_2;
  mention_1_and_2.mentions = {1, 2, 1};  // a repeat is harmless
  if (OnCluster()) {
    const absl::Status refused =
        engine.Publish(MakeActivity(1, 50, kStart + 1), mention_1_and_2)
            .status();
    CHECK_MESSAGE(absl::IsUnimplemented(refused), refused);
    CHECK(refused.message().find("mentions") != std::string::npos);
    CHECK(engine.ReadOwn(50, {}).value().entries.empty());
    return;
  }
  REQUIRE(engine.relations()->Block(2, 50).ok());
  for (ActivityId id = 1; id <= 4; ++id) {
    REQUIRE(engine
                .Publish(MakeActivity(id, 50, kStart + static_cast<Micros>(id)),
                         id % 2 == 1 ? mention_1_and_2 : PublishOptions{})
                .ok());
  }
  // Mentioned by 1 and 3; user 2 blocks the channel and is not told.
  ReadMarker m = Get(engine, 1, MarkedFeed::Own(50));
  CHECK(m.unread == 4);
  CHECK(m.mentions == 2);
  CHECK(Get(engine, 2, MarkedFeed::Own(50)).mentions == 0);
  CHECK(Get(engine, 1, MarkedFeed::Own(51)).mentions == 0);
  // A mentioned channel is listed without a marker.
  const absl::StatusOr<ReadStatePage> listed =
      engine.read_markers()->ListReadMarkers(1, ReadStateOptions{});
  REQUIRE(listed.ok());
  REQUIRE(listed->feeds.size() == 1);
  CHECK(listed->feeds[0].feed == MarkedFeed::Own(50));
  CHECK_FALSE(listed->feeds[0].marker.key.has_value());
  CHECK(listed->feeds[0].marker.mentions == 2);
  // The marker clears what it passes; a retracted one stops counting.
  CHECK(Set(engine, 1, MarkedFeed::Own(50), {kStart + 2, 2}));
  CHECK(Get(engine, 1, MarkedFeed::Own(50)).mentions == 1);
  REQUIRE(engine.Retract(3).ok());
  CHECK(Get(engine, 1, MarkedFeed::Own(50)).mentions == 0);
  // Forced back, the marker does not bring cleared mentions back.
  CHECK(Set(engine, 1, MarkedFeed::Own(50), {kStart, 0}, /*force=*/true));
  CHECK(Get(engine, 1, MarkedFeed::Own(50)).mentions == 0);
  // A mention older than the marker is not kept.
  REQUIRE(
      engine.Publish(MakeActivity(9, 50, kStart - 5), mention_1_and_2).ok());
  CHECK(Get(engine, 1, MarkedFeed::Own(50)).mentions == 0);

  PublishOptions too_many;
  too_many.mentions.assign(kMaxMentionRecipients + 1, 1);
  const absl::Status refused =
      engine.Publish(MakeActivity(10, 50, kStart + 10), too_many).status();
  CHECK_MESSAGE(absl::IsInvalidArgument(refused), refused);
  CHECK(refused.message().find("mentions") != std::string::npos);
  CHECK(engine.ReadOwn(50, {}).value().entries.size() == 4);  // 1, 2, 4, 9
}

}  // namespace
}  // namespace feedcore
