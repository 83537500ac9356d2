// A small engine with a bit of everything, built the same way every time,
// for the fuzz targets that only read: entities following each other, one
// actor popular enough to be merged at read (hybrid fan-out), activities
// with equal timestamps, some expired but not evicted, one retracted, and a
// long follower list. No threads: no sweeper and no fan-out workers.
#ifndef FEEDCORE_FUZZ_FEED_FIXTURE_H_
#define FEEDCORE_FUZZ_FEED_FIXTURE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/types.h"
#include "fuzz_check.h"

namespace feedcore::fuzz {

struct FeedFixture {
  // Entities 1..kEntities publish and follow; kPopular is followed by them
  // all and by kExtraFollowers more (ids from kFirstExtraFollower on).
  static constexpr EntityId kEntities = 8;
  static constexpr EntityId kPopular = 1;
  static constexpr EntityId kFirstExtraFollower = 1000;
  static constexpr size_t kExtraFollowers = 40;
  static constexpr ActivityId kActivities = 60;
  static constexpr Micros kLatestTs = 100;
  static constexpr size_t kMaxPageSize = 8;
  static constexpr size_t kShards = 4;
  static constexpr Micros kStart = 1'000'000;

  FeedFixture() : clock(std::make_shared<ManualClock>(kStart)) {
    EngineOptions options;
    options.shards = kShards;
    options.max_page_size = kMaxPageSize;
    options.sweep_interval = 0;
    options.fanout_threads = 0;
    options.hybrid_fanout_threshold = 12;
    options.default_ttl = 1000;
    options.clock = clock;
    engine = FeedEngine::Create(options).value();

    for (EntityId a = 1; a <= kEntities; ++a) {
      for (EntityId b = 1; b <= kEntities; ++b) {
        if (a != b && (a + b) % 3 != 0) Follow(a, b);
      }
    }
    for (size_t i = 0; i < kExtraFollowers; ++i) {
      Follow(kFirstExtraFollower + i, kPopular);
    }
    for (ActivityId id = 1; id <= kActivities; ++id) {
      Activity activity;
      activity.id = id;
      activity.actor = 1 + id % kEntities;
      // Steps of 2 with every fifth activity sharing its predecessor's
      // timestamp: keys that differ only in the activity id.
      activity.ts = static_cast<Micros>(id * kLatestTs / kActivities) -
                    (id % 5 == 0 ? 1 : 0);
      activity.payload = "activity " + std::to_string(id);
      // Every seventh expires before the clock's final time.
      activity.ttl = id % 7 == 0 ? 10 : 0;
      FUZZ_CHECK(engine->Publish(activity).ok());
    }
    FUZZ_CHECK(engine->Retract(kActivities / 2).ok());
    clock->Advance(50);  // the short-lived ones are now expired, not evicted
  }

  void Follow(EntityId follower, EntityId followee) {
    FollowOptions options;
    options.backfill = 5;
    FUZZ_CHECK(engine->Follow(follower, followee, options).ok());
  }

  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<InProcessFeedEngine> engine;
};

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_FEED_FIXTURE_H_
