// The facets each backend has (feed_facets.h): in process every one, on
// the Redis Cluster every one but FeedMaintenance. Each facet a backend
// hands out works through the FeedEngine it came from; what the cluster
// lacks it says at creation (and so for the repost window, as the
// cluster keeps no activity kinds). Runs against both backends
// (FEEDCORE_TEST_BACKEND).

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/backend.h"
#include "conformance/feed_conformance_util.h"
#include "feedcore/feed_engine.h"
#include "feedcore/feed_facets.h"
#include "feedcore/options.h"
#include "feedcore/stats.h"
#include "feedcore/types.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::Env;
using testing::IdsOf;
using testing::MakeActivity;
using testing::OnCluster;
using testing::Options;
using testing::Timeline;

TEST_CASE("which facets each backend has") {
  Env env(Options(100));
  CHECK(env.engine->notifications() != nullptr);
  CHECK(env.engine->relations() != nullptr);
  CHECK(env.engine->read_markers() != nullptr);
  CHECK(env.engine->ranked() != nullptr);
  // The cluster's memory is the cluster's: no maintenance facet.
  CHECK((env.engine->maintenance() != nullptr) == !OnCluster());
  // Nor deliveries, reactions or lists, which live in the engine's process.
  CHECK((env.engine->deliveries() != nullptr) == !OnCluster());
  CHECK((env.engine->reactions() != nullptr) == !OnCluster());
  CHECK((env.engine->lists() != nullptr) == !OnCluster());
}

TEST_CASE("notification feeds") {
  Env env(Options(100));
  NotificationFeeds& bell = *env.engine->notifications();
  PublishOptions notify;
  notify.notify = {7};
  const absl::StatusOr<PublishResult> r =
      env.engine->Publish(MakeActivity(20, 5, 20), notify);
  REQUIRE_MESSAGE(r.ok(), r.status());
  CHECK(r->notified == 1);
  const absl::StatusOr<GroupPage> page = bell.ReadNotifications(7, {});
  REQUIRE_MESSAGE(page.ok(), page.status());
  CHECK(page->groups.size() == 1);
  CHECK(bell.GetNotificationCounts(7).value() ==
        NotificationCounts{.unseen = 1, .unread = 1, .groups = 1});
  CHECK(bell.MarkSeen(7).value() ==
        NotificationCounts{.unseen = 0, .unread = 1, .groups = 1});
  CHECK(bell.MarkRead(7, {20, 20}).value() ==
        NotificationCounts{.unseen = 0, .unread = 0, .groups = 1});
  CHECK(bell.MarkAllRead(7).value() ==
        NotificationCounts{.unseen = 0, .unread = 0, .groups = 1});
}

TEST_CASE("grouped reads are core") {
  EngineOptions options = Options(100);
  options.aggregation.enabled = true;
  Env env(options);
  env.Ins(1, {30, 30, 5, 4});
  env.Ins(1, {31, 31, 6, 4});
  const absl::StatusOr<GroupPage> groups = env.engine->ReadGroups(1, {});
  REQUIRE_MESSAGE(groups.ok(), groups.status());
  REQUIRE(groups->groups.size() == 1);
  CHECK(groups->groups[0].activity_count == 2);
}

TEST_CASE("relations") {
  Env env(Options(100));
  FeedRelations& relations = *env.engine->relations();
  REQUIRE(env.engine->Follow(8, 9).ok());
  REQUIRE(env.engine->Publish(MakeActivity(70, 9, 70)).ok());
  const absl::StatusOr<RelationResult> muted = relations.Mute(8, 9);
  REQUIRE_MESSAGE(muted.ok(), muted.status());
  CHECK(muted->changed);
  CHECK(Timeline(*env.engine, 8).empty());
  CHECK(relations.Muted(8, {}).value().actors.size() == 1);
  CHECK(relations.Unmute(8, 9).value().changed);
  CHECK(relations.Block(8, 9).value().follows_ended == 1);
  CHECK(relations.Blocked(8, {}).value().ids == std::vector<EntityId>{9});
  CHECK(absl::IsFailedPrecondition(env.engine->Follow(8, 9).status()));
  CHECK(relations.Unblock(8, 9).value().changed);
}

TEST_CASE("read markers") {
  Env env(Options(100));
  ReadMarkers& markers = *env.engine->read_markers();
  env.Ins(10, {80, 80, 5});
  env.Ins(10, {90, 90, 5});
  const absl::StatusOr<bool> set =
      markers.SetReadMarker(10, MarkedFeed::Home(10), {80, 80});
  REQUIRE_MESSAGE(set.ok(), set.status());
  CHECK(*set);
  const ReadMarker marker =
      markers.GetReadMarker(10, MarkedFeed::Home(10), 10).value();
  CHECK(marker.key == EntryKey{80, 80});
  CHECK(marker.unread == 1);
}

TEST_CASE("counters and ranked reads") {
  Env env(Options(100));
  RankedFeeds& ranked = *env.engine->ranked();
  REQUIRE(env.engine->Publish(MakeActivity(100, 11, 100)).ok());
  const absl::StatusOr<ActivityCounters> counters =
      ranked.IncrementCounter(100, 0, 3);
  REQUIRE_MESSAGE(counters.ok(), counters.status());
  CHECK((*counters)[0] == 3);
  CHECK(ranked.GetCounters(100).value() == *counters);
  env.Ins(12, {100, 100, 11});
  RankedReadOptions read;
  read.window = 10;  // the default 200 is above this engine's cap
  const absl::StatusOr<RankedPage> page = ranked.ReadRanked(12, read);
  REQUIRE_MESSAGE(page.ok(), page.status());
  REQUIRE(page->entries.size() == 1);
  CHECK(page->entries[0].counters == *counters);
}

TEST_CASE("maintenance, where the backend has it") {
  Env env(Options(100));
  FeedMaintenance* maintenance = env.engine->maintenance();
  if (maintenance == nullptr) {
    // What needs it is refused when the engine is made.
    EngineOptions inactive = Options(100);
    inactive.inactive_after = kMicrosPerHour;
    const absl::StatusOr<std::unique_ptr<FeedEngine>> refused =
        testing::MakeEngine(inactive, "facets");
    CHECK(absl::IsUnimplemented(refused.status()));
    CHECK(std::string(refused.status().message()).find("inactive_after") !=
          std::string::npos);
    return;
  }
  InsertOptions ttl;
  ttl.ttl = 10;
  env.Ins(2, {40, 40, 5}, ttl);
  env.Ins(2, {41, 41, 5});
  CHECK(maintenance->Stats().value().entries == 2);
  env.clock->Advance(10);
  CHECK(maintenance->EvictExpired(100).value() == 1);
  CHECK(maintenance->Stats().value().entries == 1);
  CHECK(IdsOf(Timeline(*env.engine, 2)) == std::vector<ActivityId>{41});
  // The engines here run with EngineOptions::inactive_after 0.
  const absl::StatusOr<size_t> released =
      maintenance->ReleaseInactiveReaders(10);
  CHECK(absl::IsFailedPrecondition(released.status()));
  CHECK(std::string(released.status().message()).find("inactive_after") !=
        std::string::npos);
}

TEST_CASE("reposts shown once, where the backend keeps kinds") {
  EngineOptions options = Options(100);
  options.reposts.window = 2;
  options.reposts.kinds = KindFilter::Only({1});
  Activity repost = MakeActivity(21, 6, 21);
  repost.kind = 1;
  repost.repost_of = 20;
  if (OnCluster()) {
    // Its members carry no kind: the window and a repost are refused.
    const absl::StatusOr<std::unique_ptr<FeedEngine>> refused =
        testing::MakeEngine(options, "facets");
    CHECK(absl::IsUnimplemented(refused.status()));
    CHECK(std::string(refused.status().message()).find("reposts.window") !=
          std::string::npos);
    Env env(Options(100));
    repost.kind = 0;  // a kind other than 0 is refused first
    const absl::Status refused_repost = env.engine->Publish(repost).status();
    CHECK(absl::IsUnimplemented(refused_repost));
    CHECK(std::string(refused_repost.message()).find("repost_of") !=
          std::string::npos);
    return;
  }
  Env env(options);
  env.Fol(1, 5);
  env.Fol(1, 6);
  env.Pub(20, 5, 20);
  REQUIRE(env.Pub(repost).created);
  CHECK(IdsOf(Timeline(*env.engine, 1)) == std::vector<ActivityId>{20});
}

}  // namespace
}  // namespace feedcore
