// Concurrency test of grouped and notification feeds: publishers put
// likes and comments of a few objects into one reader's home timeline (by
// fan-out) and notification feed (by notify) while other threads page both
// as groups, and one opens the bell (MarkSeen, MarkRead, MarkAllRead).
//
// Checked while running: within a walk, places (the key of a group's
// newest entry) strictly decrease and no group shows twice, since nothing
// leaves a feed here (no retraction, expiry or cap); every count a group
// states agrees with its listed entries where those are complete; the
// counts of the bell never exceed its groups, and read implies seen.
// Checked afterwards: both feeds' groups equal the groups worked out from
// the flat timeline, and the bell's counts equal its flags.
//
// Iteration counts are fixed (scaled by FEEDCORE_STRESS_SCALE, default 1)
// and every thread has a fixed seed; nothing waits on time.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "feedcore/feed_engine.h"
#include "model/feed_model.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::AllGroups;
using testing::ReferenceGroups;
using testing::WholeTimeline;

constexpr EntityId kReader = 1;
constexpr size_t kPublishers = 2;
constexpr size_t kMaxActors = 3;
constexpr size_t kMaxEntries = 4;

uint64_t Scale() { return testing::EnvU64("FEEDCORE_STRESS_SCALE", 1); }

EngineOptions Options(std::shared_ptr<ManualClock> clock) {
  EngineOptions o;
  o.shards = 4;
  o.clock = std::move(clock);
  o.sweep_interval = 0;
  o.fanout_threads = 1;
  o.max_timeline_length = 100'000;  // nothing is trimmed
  o.aggregation.enabled = true;
  o.aggregation.max_group_actors = kMaxActors;
  o.aggregation.max_group_entries = kMaxEntries;
  o.notifications.max_length = 100'000;
  return o;
}

// The checks a walk can make while the feed changes under it.
void CheckWalk(const std::vector<FeedGroup>& groups) {
  std::set<GroupKey> keys;
  for (size_t i = 0; i < groups.size(); ++i) {
    const FeedGroup& g = groups[i];
    REQUIRE_FALSE(g.recent.empty());
    if (i > 0) {
      const StoredEntry& before = groups[i - 1].recent.front();
      const StoredEntry& here = g.recent.front();
      REQUIRE(std::make_pair(here.ts, here.activity_id) <
              std::make_pair(before.ts, before.activity_id));
    }
    if (g.key != 0) REQUIRE(keys.insert(g.key).second);
    REQUIRE(g.recent.size() == std::min(g.activity_count, kMaxEntries));
    REQUIRE(g.actor_count <= g.activity_count);
    REQUIRE(g.recent_actors.size() == std::min(g.actor_count, kMaxActors));
    REQUIRE((!g.read || g.seen));
  }
}

std::vector<FeedGroup> WalkNotifications(InProcessFeedEngine& engine, size_t limit) {
  std::vector<FeedGroup> out;
  GroupReadOptions read;
  read.limit = limit;
  for (;;) {
    absl::StatusOr<GroupPage> page = engine.ReadNotifications(kReader, read);
    REQUIRE(page.ok());
    out.insert(out.end(), page->groups.begin(), page->groups.end());
    if (page->next_cursor.empty()) return out;
    read.cursor = page->next_cursor;
  }
}

TEST_CASE("grouped and notification feeds under concurrent publishes") {
  auto clock = std::make_shared<ManualClock>(1'000'000'000);
  std::unique_ptr<InProcessFeedEngine> engine =
      testing::NewManualEngine(clock, Options(clock));
  for (EntityId actor = 10; actor < 10 + 2 * kPublishers; ++actor) {
    REQUIRE(engine->Follow(kReader, actor).ok());
  }
  const uint64_t per_publisher = 10000 * Scale();
  std::atomic<size_t> publishers_left{kPublishers};
  std::vector<std::thread> threads;
  for (size_t p = 0; p < kPublishers; ++p) {
    threads.emplace_back([&, p] {
      std::mt19937_64 rng(100 + p);
      PublishOptions bell;
      bell.notify = {kReader};
      for (uint64_t i = 0; i < per_publisher; ++i) {
        Activity a = testing::MakeActivity(
            (p + 1) * 1'000'000 + i, 10 + 2 * p + rng() % 2,
            1'000'000'000 + static_cast<Micros>(rng() % 5000));
        // A quarter ungrouped; the rest likes or comments of 8 objects.
        if (rng() % 4 != 0) {
          a.verb = 1 + rng() % 2;
          a.object = 1 + rng() % 8;
        }
        REQUIRE(engine->Publish(a, bell).ok());
      }
      publishers_left.fetch_sub(1);
    });
  }
  threads.emplace_back([&] {
    std::mt19937_64 rng(7);
    while (publishers_left.load() > 0) {
      CheckWalk(AllGroups(*engine, kReader, 1 + rng() % 20));
    }
  });
  threads.emplace_back([&] {
    std::mt19937_64 rng(8);
    while (publishers_left.load() > 0) {
      const std::vector<FeedGroup> groups =
          WalkNotifications(*engine, 1 + rng() % 20);
      CheckWalk(groups);
      const NotificationCounts counts =
          engine->GetNotificationCounts(kReader).value();
      REQUIRE(counts.unseen <= counts.groups);
      REQUIRE(counts.unread <= counts.groups);
      switch (rng() % 3) {
        case 0:
          engine->MarkSeen(kReader).value();
          break;
        case 1:
          engine->MarkAllRead(kReader).value();
          break;
        default:
          if (!groups.empty()) {
            const StoredEntry& e = groups[rng() % groups.size()].recent[0];
            REQUIRE(engine->MarkRead(kReader, {e.ts, e.activity_id}).ok());
          }
      }
    }
  });
  for (std::thread& t : threads) t.join();
  engine->WaitForFanout();

  const std::vector<StoredEntry> flat = WholeTimeline(*engine, kReader);
  REQUIRE(flat.size() == kPublishers * per_publisher);
  const std::vector<FeedGroup> want =
      ReferenceGroups(flat, kMaxActors, kMaxEntries);
  CHECK(AllGroups(*engine, kReader, 7) == want);
  // The bell holds the same activities and groups, with flags of its own.
  std::vector<FeedGroup> bell = WalkNotifications(*engine, 7);
  REQUIRE(bell.size() == want.size());
  size_t unseen = 0;
  size_t unread = 0;
  for (FeedGroup& g : bell) {
    unseen += !g.seen;
    unread += !g.read;
    g.seen = false;
    g.read = false;
  }
  CHECK(bell == want);
  const NotificationCounts counts =
      engine->GetNotificationCounts(kReader).value();
  CHECK(counts.unseen == unseen);
  CHECK(counts.unread == unread);
  CHECK(counts.groups == want.size());
}

}  // namespace
}  // namespace feedcore
