// The capabilities each backend reports (FeedEngine::Supports): every call
// of a capability reported missing fails with Unimplemented naming it and
// changes nothing; every one reported present works. Runs against both
// backends (FEEDCORE_TEST_BACKEND).

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/backend.h"
#include "conformance/feed_conformance_util.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/snapshot.h"
#include "feedcore/stats.h"
#include "feedcore/types.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::Env;
using testing::IdsOf;
using testing::MakeActivity;
using testing::OnCluster;
using testing::Options;
using testing::Own;
using testing::Timeline;

// Checks that every call of `capability` on `env`'s engine works, or fails
// with Unimplemented naming it, as Supports says.
void CheckCapability(Env& env, FeedCapability capability) {
  const bool present = env.engine->Supports(capability);
  const std::string name = FeedCapabilityName(capability);
  INFO(name << (present ? " (reported present)" : " (reported missing)"));
  auto missing = [&](const absl::Status& status) {
    INFO(status);
    CHECK(absl::IsUnimplemented(status));
    CHECK(std::string(status.message()).find(name) != std::string::npos);
  };
  switch (capability) {
    case FeedCapability::kNotifications: {
      PublishOptions notify;
      notify.notify = {7};
      const absl::StatusOr<PublishResult> r =
          env.engine->Publish(MakeActivity(20, 5, 20), notify);
      if (!present) {
        missing(r.status());
        CHECK(Own(*env.engine, 5).empty());  // nothing was published
        missing(env.engine->ReadNotifications(7, {}).status());
        missing(env.engine->GetNotificationCounts(7).status());
        missing(env.engine->MarkSeen(7).status());
        missing(env.engine->MarkRead(7, {20, 20}).status());
        missing(env.engine->MarkAllRead(7).status());
        return;
      }
      REQUIRE_MESSAGE(r.ok(), r.status());
      CHECK(r->notified == 1);
      const absl::StatusOr<GroupPage> bell =
          env.engine->ReadNotifications(7, {});
      REQUIRE_MESSAGE(bell.ok(), bell.status());
      CHECK(bell->groups.size() == 1);
      CHECK(env.engine->GetNotificationCounts(7).value() ==
            NotificationCounts{.unseen = 1, .unread = 1, .groups = 1});
      CHECK(env.engine->MarkSeen(7).value() ==
            NotificationCounts{.unseen = 0, .unread = 1, .groups = 1});
      CHECK(env.engine->MarkRead(7, {20, 20}).value() ==
            NotificationCounts{.unseen = 0, .unread = 0, .groups = 1});
      CHECK(env.engine->MarkAllRead(7).value() ==
            NotificationCounts{.unseen = 0, .unread = 0, .groups = 1});
      return;
    }
    case FeedCapability::kGroupedReads: {
      env.Ins(1, {30, 30, 5});
      const absl::StatusOr<GroupPage> groups = env.engine->ReadGroups(1, {});
      if (!present) return missing(groups.status());
      REQUIRE_MESSAGE(groups.ok(), groups.status());
      REQUIRE(groups->groups.size() == 1);
      return;
    }
    case FeedCapability::kEviction: {
      InsertOptions ttl;
      ttl.ttl = 10;
      env.Ins(2, {40, 40, 5}, ttl);
      env.clock->Advance(10);
      const absl::StatusOr<size_t> evicted = env.engine->EvictExpired(100);
      if (!present) return missing(evicted.status());
      CHECK(evicted.value() == 1);
      return;
    }
    case FeedCapability::kStats: {
      env.Ins(3, {50, 50, 5});
      const absl::StatusOr<EngineStats> stats = env.engine->Stats();
      if (!present) return missing(stats.status());
      REQUIRE_MESSAGE(stats.ok(), stats.status());
      CHECK(stats->entries >= 1);
      CHECK(stats->timelines >= 1);
      return;
    }
    case FeedCapability::kSnapshots: {
      env.Ins(4, {60, 60, 5});
      testing::TempPath file("capability.snap");
      const absl::StatusOr<SnapshotInfo> saved =
          SaveSnapshot(*env.engine, file.path);
      if (!present) return missing(saved.status());
      REQUIRE_MESSAGE(saved.ok(), saved.status());
      CHECK(saved->file_bytes > 0);
      EngineOptions options = env.engine->options();
      options.shards = 0;
      options.sweep_interval = 0;
      absl::StatusOr<std::unique_ptr<Replica>> loaded =
          LoadSnapshot(file.path, options);
      REQUIRE_MESSAGE(loaded.ok(), loaded.status());
      CHECK(IdsOf(Timeline((*loaded)->engine(), 4)) ==
            std::vector<ActivityId>{60});
      return;
    }
    case FeedCapability::kInactiveReaders: {
      // The engines here run with EngineOptions::inactive_after 0.
      const absl::StatusOr<size_t> released =
          env.engine->ReleaseInactiveReaders(10);
      if (!present) return missing(released.status());
      CHECK(absl::IsFailedPrecondition(released.status()));
      CHECK(std::string(released.status().message()).find("inactive_after") !=
            std::string::npos);
      return;
    }
    case FeedCapability::kMuteBlock: {
      REQUIRE(env.engine->Follow(8, 9).ok());
      REQUIRE(env.engine->Publish(MakeActivity(70, 9, 70)).ok());
      const absl::StatusOr<RelationResult> muted = env.engine->Mute(8, 9);
      if (!present) {
        missing(muted.status());
        CHECK(IdsOf(Timeline(*env.engine, 8)) == std::vector<ActivityId>{70});
        missing(env.engine->Unmute(8, 9).status());
        missing(env.engine->Block(8, 9).status());
        missing(env.engine->Unblock(8, 9).status());
        missing(env.engine->Muted(8, {}).status());
        missing(env.engine->Blocked(8, {}).status());
        return;
      }
      REQUIRE_MESSAGE(muted.ok(), muted.status());
      CHECK(muted->changed);
      CHECK(Timeline(*env.engine, 8).empty());
      CHECK(env.engine->Muted(8, {}).value().actors.size() == 1);
      CHECK(env.engine->Block(8, 9).value().follows_ended == 1);
      CHECK(env.engine->Blocked(8, {}).value().ids == std::vector<EntityId>{9});
      return;
    }
    case FeedCapability::kReadMarkers: {
      env.Ins(10, {80, 80, 5});
      env.Ins(10, {90, 90, 5});
      const absl::StatusOr<bool> set =
          env.engine->SetReadMarker(10, MarkedFeed::Home(10), {80, 80});
      if (!present) {
        missing(set.status());
        missing(
            env.engine->GetReadMarker(10, MarkedFeed::Home(10), 10).status());
        return;
      }
      REQUIRE_MESSAGE(set.ok(), set.status());
      CHECK(*set);
      const ReadMarker marker =
          env.engine->GetReadMarker(10, MarkedFeed::Home(10), 10).value();
      CHECK(marker.key == EntryKey{80, 80});
      CHECK(marker.unread == 1);
      return;
    }
    case FeedCapability::kRankedReads: {
      REQUIRE(env.engine->Publish(MakeActivity(100, 11, 100)).ok());
      const absl::StatusOr<ActivityCounters> counters =
          env.engine->IncrementCounter(100, 0, 3);
      if (!present) {
        missing(counters.status());
        missing(env.engine->GetCounters(100).status());
        missing(env.engine->ReadRanked(11, {}).status());
        return;
      }
      REQUIRE_MESSAGE(counters.ok(), counters.status());
      CHECK((*counters)[0] == 3);
      CHECK(env.engine->GetCounters(100).value() == *counters);
      env.Ins(12, {100, 100, 11});
      RankedReadOptions ranked;
      ranked.window = 10;  // the default 200 is above this engine's cap
      const absl::StatusOr<RankedPage> page =
          env.engine->ReadRanked(12, ranked);
      REQUIRE_MESSAGE(page.ok(), page.status());
      REQUIRE(page->entries.size() == 1);
      CHECK(page->entries[0].counters == *counters);
      return;
    }
  }
  FAIL("a capability this test does not know: " << name);
}

TEST_CASE("each capability works where reported, is Unimplemented elsewhere") {
  for (FeedCapability capability : kAllFeedCapabilities) {
    EngineOptions options = Options(100);
    // What ReadGroups needs besides the capability.
    options.aggregation.enabled = true;
    Env env(options);
    CheckCapability(env, capability);
  }
}

TEST_CASE("which capabilities each backend has") {
  Env env(Options(100));
  for (FeedCapability capability : kAllFeedCapabilities) {
    INFO(FeedCapabilityName(capability));
    const bool on_cluster = capability == FeedCapability::kReadMarkers ||
                            capability == FeedCapability::kGroupedReads ||
                            capability == FeedCapability::kNotifications ||
                            capability == FeedCapability::kRankedReads ||
                            capability == FeedCapability::kMuteBlock;
    // In process: every capability.
    CHECK(env.engine->Supports(capability) == (!OnCluster() || on_cluster));
  }
}

}  // namespace
}  // namespace feedcore
