// Concurrency test of mute and block, on the backend FEEDCORE_TEST_BACKEND
// selects (conformance/backend.h): publishers keep publishing (with
// synchronous and asynchronous fan-out, and notifications to the users)
// while each user's thread mutes, unmutes, blocks and unblocks the actors
// it follows, with hybrid fan-out off and on. On the cluster this checks
// the ordering of docs/scale-out.md ("Mute and block") against fan-outs
// in flight, with fewer publishes and rounds, each a round trip or more.
//
// Checked while running: once Mute(u, a) or Block(u, a) returns, and until
// u's own thread lifts it, no read of u's timeline shows anything of a,
// however many of a's publishes are fanning out meanwhile; nor does u's
// notification feed, after a block or a mute with notifications. Follow
// across a block fails. Only u's thread changes u's relations and
// follows, so what it expects is exactly known.
// Checked afterwards: once every relation is lifted and every user follows
// every actor again, a publish reaches every user.
//
// Iteration counts are fixed (scaled by FEEDCORE_STRESS_SCALE, default 1)
// and every thread has a fixed seed; nothing waits on time.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <latch>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "conformance/backend.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/social_test_util.h"
#include "support/test_util.h"
#include "support/thread_failures.h"

namespace feedcore {
namespace {

constexpr EntityId kFirstActor = 1;
constexpr EntityId kActors = 4;
constexpr EntityId kFirstUser = 100;
constexpr EntityId kUsers = 8;
constexpr int kUserThreads = 4;  // two users each
constexpr int kPublishers = 2;
// Followers besides the users, so that each fan-out spans every shard and
// takes long enough for a Mute or Block to land in the middle of it.
constexpr EntityId kFirstAudience = 10'000;
constexpr EntityId kAudience = 400;

uint64_t Scale() { return testing::EnvU64("FEEDCORE_STRESS_SCALE", 1); }

// Activities of `actor` in `user`'s timeline and, with `notifications`,
// its notification feed.
size_t Visible(FeedEngine& engine, EntityId user, EntityId actor,
               bool notifications) {
  // Runs off the main thread: no doctest assertions; a failed read counts
  // as a million entries seen.
  constexpr size_t kFailedRead = 1'000'000;
  size_t n = 0;
  ReadOptions timeline;
  timeline.limit = engine.options().max_page_size;
  for (;;) {
    absl::StatusOr<Page> page = engine.ReadTimeline(user, timeline);
    if (!page.ok()) return kFailedRead;
    for (const StoredEntry& e : page->entries) n += e.actor == actor;
    if (page->next_cursor.empty()) break;
    timeline.cursor = page->next_cursor;
  }
  if (!notifications) return n;
  GroupReadOptions read;
  read.limit = engine.options().max_page_size;
  for (;;) {
    absl::StatusOr<GroupPage> page =
        engine.notifications()->ReadNotifications(user, read);
    if (!page.ok()) return kFailedRead;
    for (const FeedGroup& g : page->groups) {
      for (const EntityId a : g.recent_actors) n += a == actor;
    }
    if (page->next_cursor.empty()) return n;
    read.cursor = page->next_cursor;
  }
}

void Run(size_t hybrid_threshold) {
  auto clock = std::make_shared<ManualClock>(1'000'000'000);
  EngineOptions o;
  o.shards = 8;
  o.fanout_threads = 2;
  o.parallel_fanout_min_followers = 1;
  o.hybrid_fanout_threshold = hybrid_threshold;
  o.max_page_size = 1000;
  o.max_timeline_length = 400;
  o.notifications.max_length = 400;
  o.notifications.aggregated = false;
  o.sweep_interval = 0;
  o.clock = clock;
  absl::StatusOr<std::unique_ptr<FeedEngine>> made =
      testing::MakeEngine(std::move(o), "relations_stress");
  REQUIRE_MESSAGE(made.ok(), made.status());
  const std::unique_ptr<FeedEngine> engine = *std::move(made);
  for (EntityId u = kFirstUser; u < kFirstUser + kUsers; ++u) {
    for (EntityId a = kFirstActor; a < kFirstActor + kActors; ++a) {
      REQUIRE(engine->Follow(u, a).ok());
    }
  }
  if (hybrid_threshold == 0) {
    for (EntityId f = kFirstAudience; f < kFirstAudience + kAudience; ++f) {
      for (EntityId a = kFirstActor; a < kFirstActor + kActors; ++a) {
        REQUIRE(engine->Follow(f, a).ok());
      }
    }
  }
  const bool cluster = testing::OnCluster();
  const int publishes = static_cast<int>((cluster ? 300 : 1500) * Scale());
  const int rounds = static_cast<int>((cluster ? 24 : 60) * Scale());
  testing::Failures failures;
  std::atomic<int> hidden_checks{0};
  std::latch start(kPublishers + kUserThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kPublishers; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);
      start.arrive_and_wait();
      for (int i = 0; i < publishes; ++i) {
        const ActivityId id = (static_cast<uint64_t>(t + 1) << 32) | i;
        const EntityId actor = kFirstActor + rng() % kActors;
        PublishOptions options;
        if (rng() % 2 == 0)
          options.completion = FanoutCompletion::kAsynchronous;
        options.wait_when_queue_full = true;
        options.notify = {kFirstUser + rng() % kUsers,
                          kFirstUser + rng() % kUsers};
        const absl::StatusOr<PublishResult> r = engine->Publish(
            testing::MakeActivity(id, actor, static_cast<Micros>(i)), options);
        if (!r.ok())
          failures.Add(absl::StrCat("Publish: ", r.status().ToString()));
      }
    });
  }
  for (int t = 0; t < kUserThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(2000 + t);
      start.arrive_and_wait();
      for (int round = 0; round < rounds; ++round) {
        const EntityId user = kFirstUser + 2 * t + rng() % 2;
        const EntityId actor = kFirstActor + rng() % kActors;
        const bool block = rng() % 3 == 0;
        bool notifications = block;
        if (block) {
          const absl::StatusOr<RelationResult> r =
              engine->relations()->Block(user, actor);
          if (!r.ok() || !r->changed) {
            failures.Add(absl::StrCat("Block: ", r.status().ToString()));
            continue;
          }
        } else {
          MuteOptions mute;
          mute.notifications = notifications = rng() % 2 == 0;
          const absl::StatusOr<RelationResult> r =
              engine->relations()->Mute(user, actor, mute);
          if (!r.ok() || !r->changed) {
            failures.Add(absl::StrCat("Mute: ", r.status().ToString()));
            continue;
          }
        }
        // Publishes of the actor go on meanwhile: none may show.
        for (int look = 0; look < 3; ++look) {
          const size_t seen = Visible(*engine, user, actor, notifications);
          if (seen != 0) {
            failures.Add(absl::StrCat("user ", user, " sees ", seen,
                                      " entries of hidden actor ", actor,
                                      block ? " (blocked)" : " (muted)"));
          }
          hidden_checks.fetch_add(1, std::memory_order_relaxed);
        }
        RestoreOptions restore;
        restore.backfill = rng() % 4;
        if (block) {
          if (!absl::IsFailedPrecondition(
                  engine->Follow(user, actor).status())) {
            failures.Add("Follow across a block did not fail");
          }
          if (!engine->relations()->Unblock(user, actor, restore).ok() ||
              !engine->Follow(user, actor).ok()) {
            failures.Add("Unblock or the follow after it failed");
          }
        } else if (!engine->relations()->Unmute(user, actor, restore).ok()) {
          failures.Add("Unmute failed");
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  engine->WaitForFanout();
  failures.Report();
  CHECK(hidden_checks.load() == 3 * kUserThreads * rounds);
  // Everything is lifted and followed again: a publish reaches everyone.
  for (EntityId a = kFirstActor; a < kFirstActor + kActors; ++a) {
    const ActivityId id = (uint64_t{99} << 32) | a;
    REQUIRE(engine->Publish(testing::MakeActivity(id, a, 1'000'000)).ok());
  }
  ListOptions list;
  list.limit = 10;
  for (EntityId u = kFirstUser; u < kFirstUser + kUsers; ++u) {
    CHECK(engine->relations()->Blocked(u, list)->ids.empty());
    CHECK(engine->relations()->Muted(u, list)->actors.empty());
    const std::vector<StoredEntry> timeline =
        testing::WholeTimeline(*engine, u);
    for (EntityId a = kFirstActor; a < kFirstActor + kActors; ++a) {
      const ActivityId id = (uint64_t{99} << 32) | a;
      CHECK(testing::Contains(timeline, id));
    }
  }
}

TEST_CASE("mute and block race publishes of the hidden actor (copied)") {
  Run(0);
}

TEST_CASE("mute and block race publishes of the hidden actor (merged)") {
  Run(3);
}

}  // namespace
}  // namespace feedcore
