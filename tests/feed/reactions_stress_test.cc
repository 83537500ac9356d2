// Reactions racing each other and retracts: threads react and take back
// reactions of the same users to the same activities, with and without
// notices, while another retracts activities and others read reactors and
// "did I react". Afterwards every live activity's counters equal its
// reactors per kind, each user's kinds agree with the reactor lists, and
// the actor's notification feed holds a notice exactly for each reaction
// that still has one. The ThreadSanitizer job runs it (label stress);
// FEEDCORE_STRESS_SCALE scales the iteration counts.

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/social.h"
#include "support/social_test_util.h"
#include "support/test_util.h"
#include "support/thread_failures.h"

namespace feedcore {
namespace {

constexpr Micros kStart = 1000 * kMicrosPerHour;
constexpr EntityId kActor = 1;
constexpr ActivityId kActivities = 40;
constexpr EntityId kUsers = 6;
// Notice ids: each writer hands out its own range.
constexpr ActivityId kNoticeBase = 1'000'000;
constexpr ActivityId kNoticesPerWriter = 1'000'000;

TEST_CASE("reactions, notices and retracts race and stay consistent") {
  const uint64_t scale = testing::EnvU64("FEEDCORE_STRESS_SCALE", 1);
  auto clock = std::make_shared<ManualClock>(kStart);
  EngineOptions options;
  options.shards = 4;
  options.fanout_threads = 0;
  options.notifications.max_length = 10'000;
  std::unique_ptr<InProcessFeedEngine> engine =
      testing::NewManualEngine(clock, options);
  for (ActivityId id = 1; id <= kActivities; ++id) {
    REQUIRE(engine->Publish(testing::MakeActivity(id, kActor, kStart)).ok());
  }

  testing::Failures failures;
  std::atomic<bool> running{true};
  auto writer = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    ActivityId next_notice = kNoticeBase + seed * kNoticesPerWriter;
    for (uint64_t i = 0; i < 4000 * scale; ++i) {
      const EntityId user = 2 + rng() % kUsers;
      const ActivityId id = 1 + rng() % kActivities;
      const ReactionKind kind = rng() % 2;
      if (rng() % 2 == 0) {
        ReactOptions notice;
        if (rng() % 2 == 0) notice.notice_id = ++next_notice;
        const absl::Status s = engine->React(user, id, kind, notice).status();
        if (!s.ok() && !absl::IsNotFound(s)) failures.Check(s, "React");
      } else {
        const absl::Status s = engine->Unreact(user, id, kind).status();
        if (!s.ok() && !absl::IsNotFound(s)) failures.Check(s, "Unreact");
      }
    }
  };
  auto retracter = [&] {
    for (ActivityId id = 1; id <= kActivities; id += 4) {
      failures.Check(engine->Retract(id), "Retract");
      std::this_thread::yield();
    }
  };
  auto reader = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<ActivityId> ids;
    for (ActivityId id = 1; id <= kActivities; ++id) ids.push_back(id);
    while (running.load(std::memory_order_relaxed)) {
      const absl::StatusOr<std::vector<ReactionKinds>> own =
          engine->GetOwnReactions(2 + rng() % kUsers, ids);
      if (!own.ok() || own->size() != ids.size()) {
        failures.Add("GetOwnReactions");
      }
      ListOptions list;
      list.limit = 2;
      const absl::Status s =
          engine->ReadReactors(1 + rng() % kActivities, rng() % 2, list)
              .status();
      if (!s.ok() && !absl::IsNotFound(s)) failures.Check(s, "ReadReactors");
    }
  };
  std::vector<std::thread> writers;
  for (uint64_t w = 0; w < 3; ++w) writers.emplace_back(writer, w);
  std::thread reads(reader, 99);
  std::thread retracts(retracter);
  for (std::thread& t : writers) t.join();
  retracts.join();
  running.store(false);
  reads.join();
  failures.Report();

  for (ActivityId id = 1; id <= kActivities; ++id) {
    INFO("activity ", id);
    const absl::StatusOr<ActivityCounters> counters = engine->GetCounters(id);
    if (id % 4 == 1) {  // retracted
      CHECK(absl::IsNotFound(counters.status()));
      continue;
    }
    REQUIRE(counters.ok());
    for (ReactionKind kind = 0; kind < 2; ++kind) {
      ListOptions list;
      list.limit = 100;
      const ReactorPage page = engine->ReadReactors(id, kind, list).value();
      CHECK(page.next_cursor.empty());
      CHECK((*counters)[kind] == static_cast<int64_t>(page.reactors.size()));
      for (const Reactor& r : page.reactors) {
        const std::vector<ActivityId> one = {id};
        CHECK((engine->GetOwnReactions(r.user, one).value()[0] >> kind & 1) ==
              1);
      }
    }
  }
  // Every notice in the actor's feed belongs to a reaction still there:
  // each user's reactions with notices are at most the live reactions, and
  // no notice outlives its reaction or its activity.
  size_t live_reactions = 0;
  for (ActivityId id = 1; id <= kActivities; ++id) {
    if (id % 4 == 1) continue;
    const ActivityCounters c = engine->GetCounters(id).value();
    live_reactions += static_cast<size_t>(c[0] + c[1]);
  }
  GroupReadOptions read;
  read.limit = 1000;
  size_t notices = 0;
  for (std::string cursor;;) {
    read.cursor = cursor;
    const GroupPage page = engine->ReadNotifications(kActor, read).value();
    for (const FeedGroup& g : page.groups) {
      for (const StoredEntry& e : g.recent) {
        ++notices;
        CHECK(e.activity_id > kNoticeBase);
        CHECK(e.actor != kActor);
      }
    }
    if (page.next_cursor.empty()) break;
    cursor = page.next_cursor;
  }
  CHECK(notices <= live_reactions);
  // Taking every reaction back leaves no notice.
  for (ActivityId id = 1; id <= kActivities; ++id) {
    if (id % 4 == 1) continue;
    for (EntityId user = 2; user < 2 + kUsers; ++user) {
      for (ReactionKind kind = 0; kind < 2; ++kind) {
        REQUIRE(engine->Unreact(user, id, kind).ok());
      }
    }
  }
  CHECK(engine->GetNotificationCounts(kActor).value().groups == 0);
}

}  // namespace
}  // namespace feedcore
