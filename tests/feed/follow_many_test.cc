// Tests of FollowMany and UnfollowMany (results per pair equal to those of
// Follow and Unfollow called pair by pair, validation of every pair before
// anything changes, repeated pairs, the switch to merge-at-read inside a
// batch, replicas fed by the change stream) and of Unfollow keeping the
// history already delivered (copies kept, Retract still reaching them, the
// entries a merged followee showed kept as copies).
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/change_stream.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/snapshot.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::IdsOf;
using testing::MakeActivity;
using testing::NewManualEngine;
using testing::Timeline;

constexpr Micros kStart = testing::SocialFixture::kStart;

EngineOptions Options(size_t threshold) {
  EngineOptions o;
  o.shards = 4;
  o.max_timeline_length = 12;
  o.default_backfill = 3;
  o.hybrid_fanout_threshold = threshold;
  return o;
}

// Random pairs over `entities` entities, repeats included.
std::vector<FollowPair> RandomPairs(std::mt19937_64& rng, size_t n,
                                    EntityId entities) {
  std::vector<FollowPair> pairs;
  for (size_t i = 0; i < n; ++i) {
    const EntityId a = 1 + rng() % entities;
    EntityId b = 1 + rng() % entities;
    if (b == a) b = a % entities + 1;
    pairs.push_back({a, b});
  }
  return pairs;
}

void CheckSameFeeds(const InProcessFeedEngine& a, const InProcessFeedEngine& b,
                    EntityId entities) {
  for (EntityId e = 1; e <= entities; ++e) {
    INFO("entity " << e);
    CHECK(Timeline(a, e) == Timeline(b, e));
    CHECK(testing::FollowingSet(a, e) == testing::FollowingSet(b, e));
    CHECK(testing::FollowerSet(a, e) == testing::FollowerSet(b, e));
  }
}

TEST_CASE("FollowMany and UnfollowMany give the results of one call per pair") {
  for (const size_t threshold : {size_t{0}, size_t{2}}) {
    INFO("threshold " << threshold);
    auto clock = std::make_shared<ManualClock>(kStart);
    auto batched = NewManualEngine(clock, Options(threshold));
    auto single = NewManualEngine(clock, Options(threshold));
    std::mt19937_64 rng(11 + threshold);
    constexpr EntityId kEntities = 10;
    ActivityId next_id = 0;
    for (int round = 0; round < 40; ++round) {
      for (int p = 0; p < 6; ++p) {
        const Activity a =
            MakeActivity(++next_id, 1 + rng() % kEntities,
                         kStart + static_cast<Micros>(rng() % 1000));
        REQUIRE(batched->Publish(a).ok());
        REQUIRE(single->Publish(a).ok());
      }
      const std::vector<FollowPair> pairs =
          RandomPairs(rng, 1 + rng() % 8, kEntities);
      FollowOptions options;
      options.backfill = rng() % 5;
      if (round % 3 != 2) {
        const std::vector<FollowResult> got =
            batched->FollowMany(pairs, options).value();
        REQUIRE(got.size() == pairs.size());
        for (size_t i = 0; i < pairs.size(); ++i) {
          const FollowResult want =
              single->Follow(pairs[i].follower, pairs[i].followee, options)
                  .value();
          CHECK(got[i].created == want.created);
          CHECK(got[i].backfilled == want.backfilled);
          CHECK_FALSE(got[i].blocked);
        }
      } else {
        UnfollowOptions unfollow;
        unfollow.keep_history = rng() % 2 == 0;
        const std::vector<UnfollowResult> got =
            batched->UnfollowMany(pairs, unfollow).value();
        REQUIRE(got.size() == pairs.size());
        for (size_t i = 0; i < pairs.size(); ++i) {
          const UnfollowResult want =
              single->Unfollow(pairs[i].follower, pairs[i].followee, unfollow)
                  .value();
          CHECK(got[i].was_following == want.was_following);
          CHECK(got[i].removed == want.removed);
        }
      }
      CheckSameFeeds(*batched, *single, kEntities);
    }
  }
}

TEST_CASE("a repeated pair is followed once; the second says so") {
  testing::SocialFixture f;
  f.Pub(1, 2, kStart);
  const std::vector<FollowPair> pairs = {{1, 2}, {3, 2}, {1, 2}};
  const std::vector<FollowResult> got = f.engine->FollowMany(pairs).value();
  CHECK(got[0].created);
  CHECK(got[0].backfilled == 1);
  CHECK(got[1].created);
  CHECK_FALSE(got[2].created);
  CHECK(got[2].backfilled == 0);
  CHECK(f.engine->FollowerCount(2).value() == 2);
  const std::vector<UnfollowResult> gone =
      f.engine->UnfollowMany(pairs).value();
  CHECK(gone[0].was_following);
  CHECK(gone[0].removed == 1);
  CHECK(gone[1].was_following);
  CHECK_FALSE(gone[2].was_following);
  CHECK(f.engine->FollowerCount(2).value() == 0);
}

TEST_CASE("every pair is validated before anything changes") {
  testing::SocialFixture f;
  const std::vector<FollowPair> bad = {{1, 2}, {3, 3}};
  const absl::Status self = f.engine->FollowMany(bad).status();
  CHECK(absl::IsInvalidArgument(self));
  CHECK(self.message().find("pairs[1]") != std::string::npos);
  CHECK(absl::IsInvalidArgument(f.engine->UnfollowMany(bad).status()));
  FollowOptions too_many;
  too_many.backfill = kMaxTimelineLengthLimit + 1;
  CHECK(absl::IsInvalidArgument(
      f.engine->FollowMany(std::vector<FollowPair>{{1, 2}}, too_many)
          .status()));
  const std::vector<FollowPair> huge(kMaxFollowBatch + 1, FollowPair{1, 2});
  CHECK(absl::IsInvalidArgument(f.engine->FollowMany(huge).status()));
  CHECK(absl::IsInvalidArgument(f.engine->UnfollowMany(huge).status()));
  CHECK(f.engine->FollowingCount(1).value() == 0);
  CHECK(f.engine->FollowMany({}).value().empty());
}

TEST_CASE("a batch that crosses the hybrid threshold merges as Follow does") {
  EngineOptions o = Options(3);
  testing::SocialFixture f(o);
  for (ActivityId id = 1; id <= 6; ++id) {
    f.Pub(id, 100, kStart + static_cast<Micros>(id));
  }
  std::vector<FollowPair> pairs;
  for (EntityId e = 1; e <= 6; ++e) pairs.push_back({e, 100});
  FollowOptions two;
  two.backfill = 2;
  f.engine->FollowMany(pairs, two).value();
  CHECK(f.Pub(7, 100, kStart + 7).merged_at_read);
  for (EntityId e = 1; e <= 6; ++e) {
    INFO("follower " << e);
    // Whatever the mode each follower met: two back-filled, then the new.
    CHECK(IdsOf(Timeline(*f.engine, e)) == std::vector<ActivityId>{7, 6, 5});
  }
  // Out of order: below every boundary, so every follower gets it.
  CHECK(f.Pub(8, 100, kStart + 5).merged_at_read);
  for (EntityId e = 1; e <= 6; ++e) {
    CHECK(IdsOf(Timeline(*f.engine, e)) == std::vector<ActivityId>{7, 6, 8, 5});
  }
  CHECK(f.engine->Retract(8).ok());
  for (EntityId e = 1; e <= 6; ++e) {
    CHECK(IdsOf(Timeline(*f.engine, e)) == std::vector<ActivityId>{7, 6, 5});
  }
}

TEST_CASE("unfollow keeping history keeps the copies; Retract still reaches") {
  for (const size_t threshold : {size_t{0}, size_t{1}}) {
    INFO("threshold " << threshold);
    testing::SocialFixture f(Options(threshold));
    f.Pub(1, 9, kStart + 1);
    f.Pub(2, 9, kStart + 2);
    f.Fol(1, 9);
    f.Fol(2, 9);  // with threshold 1, 9 is merged from here
    f.Pub(3, 9, kStart + 3);
    UnfollowOptions keep;
    keep.keep_history = true;
    const UnfollowResult r = f.engine->Unfollow(2, 9, keep).value();
    CHECK(r.was_following);
    CHECK(r.removed == 0);
    CHECK(IdsOf(Timeline(*f.engine, 2)) == std::vector<ActivityId>{3, 2, 1});
    f.Pub(4, 9, kStart + 4);  // published after: not delivered
    CHECK(IdsOf(Timeline(*f.engine, 2)) == std::vector<ActivityId>{3, 2, 1});
    CHECK(f.engine->Retract(2).ok());
    CHECK(IdsOf(Timeline(*f.engine, 2)) == std::vector<ActivityId>{3, 1});
    // Following again and leaving for good removes everything of 9.
    f.Fol(2, 9);
    CHECK(f.Unf(2, 9).was_following);
    CHECK(Timeline(*f.engine, 2).empty());
  }
}

TEST_CASE("a replica fed by the stream holds what batch calls made") {
  auto stream = ChangeStream::Create({}).value();
  auto clock = std::make_shared<ManualClock>(kStart);
  EngineOptions o = Options(2);
  o.change_stream = stream;
  auto source = NewManualEngine(clock, o);
  testing::TempPath file("follow-many-replica");
  REQUIRE(SaveSnapshot(*source, file.path).ok());
  EngineOptions replica_options = Options(2);
  replica_options.clock = clock;
  std::unique_ptr<Replica> replica =
      LoadSnapshot(file.path, replica_options).value();
  std::mt19937_64 rng(5);
  constexpr EntityId kEntities = 8;
  ActivityId next_id = 0;
  for (int round = 0; round < 30; ++round) {
    for (int p = 0; p < 4; ++p) {
      REQUIRE(
          source
              ->Publish(MakeActivity(++next_id, 1 + rng() % kEntities,
                                     kStart + static_cast<Micros>(rng() % 500)))
              .ok());
    }
    const std::vector<FollowPair> pairs = RandomPairs(rng, 5, kEntities);
    if (round % 3 == 2) {
      UnfollowOptions unfollow;
      unfollow.keep_history = rng() % 2 == 0;
      REQUIRE(source->UnfollowMany(pairs, unfollow).ok());
    } else {
      REQUIRE(source->FollowMany(pairs).ok());
    }
  }
  std::unique_ptr<ChangeReader> reader =
      stream->NewReader(StreamPosition::TrimHorizon()).value();
  for (;;) {
    const std::vector<ChangeRecordPtr> records = reader->Read(1000).value();
    if (records.empty()) break;
    for (const ChangeRecordPtr& record : records) {
      REQUIRE(replica->Apply(*record).ok());
    }
  }
  CheckSameFeeds(*source, replica->engine(), kEntities);

  // A snapshot keeps the merge boundaries and what each actor published:
  // the loaded engine then copies an out-of-order publish to the same
  // followers as the source.
  testing::TempPath later("follow-many-snapshot");
  REQUIRE(SaveSnapshot(*source, later.path).ok());
  std::unique_ptr<Replica> loaded =
      LoadSnapshot(later.path, replica_options).value();
  CheckSameFeeds(*source, loaded->engine(), kEntities);
  for (EntityId actor = 1; actor <= kEntities; ++actor) {
    const Activity old = MakeActivity(++next_id, actor, kStart + 250);
    REQUIRE(source->Publish(old).ok());
    REQUIRE(loaded->engine().Publish(old).ok());
  }
  CheckSameFeeds(*source, loaded->engine(), kEntities);
}

}  // namespace
}  // namespace feedcore
