// Many threads on one Redis Cluster engine at once: publishers, readers,
// and followers that follow and unfollow a publishing actor over and over.
// Invariants checked after the fact:
//   * no timeline ever holds an activity twice;
//   * a reader that has unfollowed the actor holds none of its activities
//     until it follows again, whatever fan-outs were in flight when it
//     unfollowed (the cross-slot ordering of docs/scale-out.md);
//   * a reader that ends up following it holds every activity published
//     after its last Follow returned;
//   * steady followers hold every activity of the actors they follow.
// Also exercises the client's connection pools and slot map from many
// threads (run under ThreadSanitizer by `make tsan`).
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "doctest/doctest.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/redis_cluster.h"
#include "redis/redis_cluster_seeds.h"

namespace feedcore {
namespace {

int Scale() {
  const char* scale = std::getenv("FEEDCORE_STRESS_SCALE");
  return scale == nullptr ? 1 : std::max(1, std::atoi(scale));
}

std::vector<StoredEntry> WholeTimeline(FeedEngine& engine, EntityId reader) {
  std::vector<StoredEntry> entries;
  ReadOptions read;
  read.limit = 200;
  do {
    absl::StatusOr<Page> page = engine.ReadTimeline(reader, read);
    REQUIRE(page.ok());
    entries.insert(entries.end(), page->entries.begin(), page->entries.end());
    read.cursor = page->next_cursor;
  } while (!read.cursor.empty());
  return entries;
}

TEST_CASE("publishers, readers and follow/unfollow churn on one engine") {
  RedisClusterOptions cluster;
  cluster.seed_nodes = testing::RedisClusterSeeds();
  cluster.key_prefix = testing::UniqueKeyPrefix("stress");
  EngineOptions options;
  options.clock = std::make_shared<ManualClock>(kMicrosPerDay);
  options.max_timeline_length = 100'000;  // nothing is trimmed
  absl::StatusOr<std::unique_ptr<FeedEngine>> created =
      CreateRedisClusterFeedEngine(cluster, options);
  REQUIRE(created.ok());
  FeedEngine& engine = **created;

  constexpr int kActors = 3;
  constexpr EntityId kFirstActor = 1;
  constexpr EntityId kFirstSteady = 100;
  constexpr int kSteady = 12;
  constexpr EntityId kFirstChurner = 200;
  constexpr int kChurners = 4;
  const int posts_per_actor = 1000 * Scale();

  for (int s = 0; s < kSteady; ++s) {
    for (int a = 0; a < kActors; ++a) {
      REQUIRE(engine.Follow(kFirstSteady + s, kFirstActor + a, {}).ok());
    }
  }

  std::atomic<bool> failed{false};
  std::atomic<int> publishers_running{kActors};
  // Per churner: the id of the first activity published after its last
  // Follow returned, and whether it follows at the end.
  std::mutex churn_mu;
  std::map<EntityId, bool> follows_at_end;
  std::map<EntityId, ActivityId> published_since_follow;
  std::atomic<ActivityId> last_published_by_first_actor{0};
  std::atomic<int> churn_rounds{0};
  std::atomic<bool> leaked{false};

  std::vector<std::thread> threads;
  for (int a = 0; a < kActors; ++a) {
    threads.emplace_back([&, a] {
      for (int i = 1; i <= posts_per_actor; ++i) {
        const ActivityId id = static_cast<ActivityId>(a) * 1'000'000 + i;
        absl::StatusOr<PublishResult> result = engine.Publish(
            {.id = id, .actor = kFirstActor + a, .ts = i, .payload = "x"});
        if (!result.ok() || !result->created) failed = true;
        if (a == 0) last_published_by_first_actor = id;
      }
      --publishers_running;
    });
  }
  for (int c = 0; c < kChurners; ++c) {
    threads.emplace_back([&, c] {
      const EntityId churner = kFirstChurner + c;
      bool following = false;
      ActivityId first_after_follow = 0;
      for (int round = 0; publishers_running > 0; ++round) {
        if (!following) {
          FollowOptions follow;
          follow.backfill = 0;
          if (!engine.Follow(churner, kFirstActor, follow).ok()) failed = true;
          // A publish that began after Follow returned must reach this
          // churner; the one in flight (the next id) may not, as back-fill
          // is off.
          first_after_follow = last_published_by_first_actor.load() + 2;
        } else {
          if (!engine.Unfollow(churner, kFirstActor).ok()) failed = true;
          // Until the next Follow nothing may arrive, although fan-outs
          // that read the follower list before the Unfollow are still
          // delivering.
          for (int look = 0; look < 3; ++look) {
            absl::StatusOr<Page> page = engine.ReadTimeline(churner, {});
            if (!page.ok() || !page->entries.empty()) leaked = true;
          }
        }
        following = !following;
        ++churn_rounds;
      }
      std::lock_guard lock(churn_mu);
      follows_at_end[churner] = following;
      published_since_follow[churner] = first_after_follow;
    });
  }
  threads.emplace_back([&] {
    // Readers page while everything changes: pages stay sorted and free of
    // duplicates.
    while (publishers_running > 0) {
      for (int s = 0; s < kSteady; s += 3) {
        std::vector<StoredEntry> entries =
            WholeTimeline(engine, kFirstSteady + s);
        std::set<ActivityId> seen;
        for (size_t i = 0; i < entries.size(); ++i) {
          if (!seen.insert(entries[i].activity_id).second) failed = true;
          if (i > 0 && entries[i - 1].ts < entries[i].ts) failed = true;
        }
      }
    }
  });
  for (std::thread& thread : threads) thread.join();
  REQUIRE_FALSE(failed.load());
  CHECK_FALSE(leaked.load());
  // The churn really overlapped the publishing.
  CHECK(churn_rounds.load() >= 10 * kChurners);

  for (int s = 0; s < kSteady; ++s) {
    std::vector<StoredEntry> entries = WholeTimeline(engine, kFirstSteady + s);
    std::set<ActivityId> ids;
    for (const StoredEntry& entry : entries) ids.insert(entry.activity_id);
    CHECK(ids.size() == entries.size());
    CHECK(entries.size() == static_cast<size_t>(kActors * posts_per_actor));
  }
  for (const auto& churn : follows_at_end) {
    // Named copies: doctest's INFO captures by reference, which clang does
    // not allow for structured bindings.
    const EntityId churner = churn.first;
    const bool following = churn.second;
    std::vector<StoredEntry> entries = WholeTimeline(engine, churner);
    std::set<ActivityId> ids;
    for (const StoredEntry& entry : entries) ids.insert(entry.activity_id);
    INFO("churner ", churner, " follows at end: ", following);
    CHECK(ids.size() == entries.size());
    if (!following) {
      CHECK(entries.empty());
      continue;
    }
    for (ActivityId id = published_since_follow[churner];
         id <= static_cast<ActivityId>(posts_per_actor); ++id) {
      CHECK(ids.count(id) == 1);
    }
  }
}

}  // namespace
}  // namespace feedcore
