// Tests of hybrid fan-out: an actor with more followers than
// hybrid_fanout_threshold is no longer copied into its followers'
// timelines, and their reads merge its own feed instead. Every test runs
// the same calls on two engines sharing one clock: `flat` (hybrid off:
// everything copied) and `hybrid`, and requires identical reads: every page
// in both orders with cursors (each engine's cursors work on the other),
// time windows, hydration, CountNewer and TTL expiry. Only where the cost
// is paid differs (Stats entries, FollowResult.backfilled,
// PublishResult.fanned_out, UnfollowResult.removed).
//
// Both engines back-fill far more than any actor publishes here, and no
// cap is reached: a hybrid reader sees the followee's whole own feed, so
// only a complete back-fill makes the copied view equal to it (a smaller
// back-fill count, or a cap, would make the two differ by design).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::IdsOf;
using testing::Limit;
using testing::MakeActivity;
using testing::NewManualEngine;
using testing::Timeline;

constexpr Micros kStart = 1'000'000'000;
constexpr size_t kBackfill = 10'000;

EngineOptions Options(size_t threshold) {
  EngineOptions o;
  o.shards = 8;
  o.hybrid_fanout_threshold = threshold;
  o.default_backfill = kBackfill;
  o.max_timeline_length = 100'000;
  o.max_page_size = 1000;
  return o;
}

bool StrictlyNewestFirst(const std::vector<StoredEntry>& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (std::pair(v[i - 1].ts, v[i - 1].activity_id) <=
        std::pair(v[i].ts, v[i].activity_id)) {
      return false;
    }
  }
  return true;
}

struct Twin {
  explicit Twin(size_t threshold)
      : clock(std::make_shared<ManualClock>(kStart)),
        flat(NewManualEngine(clock, Options(0))),
        hybrid(NewManualEngine(clock, Options(threshold))) {}

  // Publishes on both; returns the hybrid engine's result.
  PublishResult Pub(ActivityId id, EntityId actor, Micros ts, Micros ttl = 0) {
    const Activity a = MakeActivity(id, actor, ts, ttl);
    const absl::StatusOr<PublishResult> f = flat->Publish(a);
    const absl::StatusOr<PublishResult> h = hybrid->Publish(a);
    REQUIRE_MESSAGE(f.ok(), f.status());
    REQUIRE_MESSAGE(h.ok(), h.status());
    CHECK(f->created == h->created);
    CHECK_FALSE(f->merged_at_read);
    if (h->merged_at_read) {
      CHECK(h->fanned_out == 0);
    } else {
      CHECK(h->fanned_out == f->fanned_out);
    }
    return *h;
  }
  // Follows on both; returns the hybrid engine's result.
  FollowResult Fol(EntityId follower, EntityId followee) {
    const absl::StatusOr<FollowResult> f = flat->Follow(follower, followee);
    const absl::StatusOr<FollowResult> h = hybrid->Follow(follower, followee);
    REQUIRE_MESSAGE(f.ok(), f.status());
    REQUIRE_MESSAGE(h.ok(), h.status());
    CHECK(f->created == h->created);
    return *h;
  }
  // Unfollows on both; returns {flat, hybrid} results.
  std::pair<UnfollowResult, UnfollowResult> Unf(EntityId follower,
                                                EntityId followee) {
    const absl::StatusOr<UnfollowResult> f = flat->Unfollow(follower, followee);
    const absl::StatusOr<UnfollowResult> h =
        hybrid->Unfollow(follower, followee);
    REQUIRE_MESSAGE(f.ok(), f.status());
    REQUIRE_MESSAGE(h.ok(), h.status());
    CHECK(f->was_following == h->was_following);
    return {*f, *h};
  }
  void Retract(ActivityId id) {
    REQUIRE(flat->Retract(id).ok());
    REQUIRE(hybrid->Retract(id).ok());
  }

  // Every read of `reader` that the API offers, compared between the two.
  void CompareReader(EntityId reader) const {
    INFO("reader " << reader);
    const std::vector<StoredEntry> whole = Timeline(*flat, reader, Limit(1000));
    REQUIRE(Timeline(*hybrid, reader, Limit(1000)) == whole);
    CHECK(StrictlyNewestFirst(whole));
    const size_t n = whole.size();

    // Every page size, both orders, walking both engines in lockstep with
    // the cursors of one engine used on the other in turn.
    for (const ReadOrder order :
         {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
      for (size_t limit = 1; limit <= n + 1; ++limit) {
        INFO("limit " << limit
                      << (order == ReadOrder::kOldestFirst ? " oldest" : ""));
        ReadOptions r = Limit(limit);
        r.order = order;
        std::vector<StoredEntry> walked;
        for (int page_number = 0;; ++page_number) {
          const absl::StatusOr<Page> f = flat->ReadTimeline(reader, r);
          const absl::StatusOr<Page> h = hybrid->ReadTimeline(reader, r);
          REQUIRE_MESSAGE(f.ok(), f.status());
          REQUIRE_MESSAGE(h.ok(), h.status());
          REQUIRE(h->entries == f->entries);
          REQUIRE(h->next_cursor == f->next_cursor);
          walked.insert(walked.end(), f->entries.begin(), f->entries.end());
          if (f->next_cursor.empty()) break;
          REQUIRE(page_number <= static_cast<int>(n));
          r.cursor = page_number % 2 == 0 ? h->next_cursor : f->next_cursor;
        }
        if (order == ReadOrder::kOldestFirst) {
          std::reverse(walked.begin(), walked.end());
        }
        CHECK(walked == whole);
      }
    }

    // Time windows over the timestamps present (and just outside them).
    std::set<Micros> stamps = {0};
    for (const StoredEntry& e : whole) {
      stamps.insert(e.ts);
      stamps.insert(e.ts + 1);
    }
    const std::vector<Micros> ts(stamps.begin(), stamps.end());
    for (size_t i = 0; i < ts.size(); i += 2) {
      for (size_t j = i; j < ts.size(); j += 3) {
        for (const ReadOrder order :
             {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
          ReadOptions r = Limit(2);
          r.order = order;
          r.min_ts = ts[i];
          r.max_ts = ts[j];
          CHECK(Timeline(*hybrid, reader, r) == Timeline(*flat, reader, r));
        }
        ReadOptions only_max = Limit(3);
        only_max.max_ts = ts[j];
        CHECK(Timeline(*hybrid, reader, only_max) ==
              Timeline(*flat, reader, only_max));
      }
    }

    // Hydration.
    ReadOptions hydrate = Limit(4);
    hydrate.hydrate = true;
    const std::vector<StoredEntry> hydrated = Timeline(*flat, reader, hydrate);
    CHECK(Timeline(*hybrid, reader, hydrate) == hydrated);
    for (const StoredEntry& e : hydrated) {
      CHECK(e.payload == testing::PayloadOf(e.activity_id));
    }

    // CountNewer from every key and from the beginning.
    std::vector<std::pair<Micros, ActivityId>> keys = {{0, 0}};
    for (const StoredEntry& e : whole) keys.push_back({e.ts, e.activity_id});
    for (const auto& [key_ts, key_id] : keys) {
      for (const size_t max_count : {size_t{1}, size_t{3}, n + 1}) {
        const absl::StatusOr<size_t> f =
            flat->CountNewer(reader, {key_ts, key_id}, max_count);
        const absl::StatusOr<size_t> h =
            hybrid->CountNewer(reader, {key_ts, key_id}, max_count);
        REQUIRE(f.ok());
        REQUIRE(h.ok());
        CHECK(*h == *f);
      }
    }
  }

  void CompareAll(EntityId readers) const {
    for (EntityId reader = 1; reader <= readers; ++reader) {
      CompareReader(reader);
    }
  }

  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<InProcessFeedEngine> flat;
  std::unique_ptr<InProcessFeedEngine> hybrid;
};

constexpr EntityId kStar = 100;   // crosses the threshold
constexpr EntityId kSmall = 200;  // stays copied
constexpr EntityId kOther = 300;  // stays copied

// Readers 1..3 follow kStar and kSmall (with a threshold of 3, both still
// copied), reader 5 follows kOther; kStar and kSmall publish 1..6 with
// interleaved and equal timestamps.
void Prologue(Twin& t) {
  for (EntityId reader = 1; reader <= 3; ++reader) {
    t.Fol(reader, kStar);
    t.Fol(reader, kSmall);
  }
  t.Fol(5, kOther);
  for (ActivityId id = 1; id <= 6; ++id) {
    t.Pub(id, id % 2 == 0 ? kStar : kSmall, static_cast<Micros>(10 * (id / 2)));
  }
}

TEST_CASE("an actor past the threshold is merged at read, reads unchanged") {
  Twin t(3);
  Prologue(t);
  CHECK(t.hybrid->Stats().value().entries == t.flat->Stats().value().entries);
  t.CompareAll(5);

  // The fourth follower takes kStar past the threshold: no back-fill, its
  // reads merge kStar's own feed.
  const FollowResult crossing = t.Fol(4, kStar);
  CHECK(crossing.created);
  CHECK(crossing.backfilled == 0);
  t.CompareAll(5);

  const size_t flat_before = t.flat->Stats().value().entries;
  const size_t hybrid_before = t.hybrid->Stats().value().entries;
  for (ActivityId id = 7; id <= 14; ++id) {
    const EntityId actor = id % 2 == 0 ? kStar : kSmall;
    const PublishResult r =
        t.Pub(id, actor, static_cast<Micros>(10 * (id / 2)));
    CHECK(r.merged_at_read == (actor == kStar));
  }
  // Four kStar activities: 2 entries each (own, world) instead of 2 + 4.
  // Four kSmall activities: 2 + 3 followers each on both.
  CHECK(t.hybrid->Stats().value().entries == hybrid_before + 4 * 2 + 4 * 5);
  CHECK(t.flat->Stats().value().entries == flat_before + 4 * 6 + 4 * 5);
  CHECK(t.hybrid->Stats().value().follow_edges ==
        t.flat->Stats().value().follow_edges);
  t.CompareAll(5);
  // Copies from before the transition and the merged own feed hold the
  // same keys; reads hold each once (CompareReader checks strict order).
  CHECK(IdsOf(Timeline(*t.hybrid, 1)) ==
        std::vector<ActivityId>{14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
}

TEST_CASE("exactly the threshold's number of followers is still copied") {
  Twin t(3);
  for (EntityId reader = 1; reader <= 3; ++reader) t.Fol(reader, kStar);
  const PublishResult at = t.Pub(1, kStar, 10);
  CHECK_FALSE(at.merged_at_read);
  CHECK(at.fanned_out == 3);
  t.Fol(4, kStar);
  const PublishResult past = t.Pub(2, kStar, 20);
  CHECK(past.merged_at_read);
  CHECK(past.fanned_out == 0);
  t.CompareAll(4);
}

TEST_CASE("new followers after the crossing see the merged actor") {
  Twin t(2);
  Prologue(t);
  for (ActivityId id = 20; id < 30; ++id) {
    t.Pub(id, kStar, static_cast<Micros>(id));
  }
  for (EntityId reader = 6; reader <= 9; ++reader) {
    const FollowResult r = t.Fol(reader, kStar);
    CHECK(r.created);
    CHECK(r.backfilled == 0);  // merged, nothing copied
    t.Fol(reader, kOther);
  }
  t.Pub(40, kOther, 25);
  t.Pub(41, kStar, 26);
  for (EntityId reader = 1; reader <= 9; ++reader) t.CompareReader(reader);
  CHECK(Timeline(*t.hybrid, 9).size() == 3 + 10 + 1 + 1);
}

TEST_CASE("unfollowing a merged actor stops the merge and removes copies") {
  Twin t(3);
  Prologue(t);  // readers 1..3 hold copies of kStar's 2, 4 and 6
  t.Fol(4, kStar);
  t.Pub(7, kStar, 100);
  t.Pub(8, kSmall, 101);
  const size_t hybrid_entries = t.hybrid->Stats().value().entries;

  const auto [flat, hybrid] = t.Unf(1, kStar);
  CHECK(flat.was_following);
  CHECK(flat.removed == 4);    // 2, 4, 6 and 7
  CHECK(hybrid.removed == 3);  // the copies made before the crossing
  CHECK(t.hybrid->Stats().value().entries == hybrid_entries - 3);
  for (const StoredEntry& e : Timeline(*t.hybrid, 1)) {
    CHECK(e.actor != kStar);
  }
  t.Pub(9, kStar, 102);
  t.CompareAll(5);
  CHECK(IdsOf(Timeline(*t.hybrid, 1)) == std::vector<ActivityId>{8, 5, 3, 1});

  // Following again merges the whole own feed again.
  const FollowResult again = t.Fol(1, kStar);
  CHECK(again.backfilled == 0);
  t.CompareAll(5);
  CHECK(Timeline(*t.hybrid, 1).size() == 9);
}

TEST_CASE("an actor stays merged at read after losing followers") {
  Twin t(2);
  for (EntityId reader = 1; reader <= 3; ++reader) t.Fol(reader, kStar);
  CHECK(t.Pub(1, kStar, 10).merged_at_read);
  t.Unf(1, kStar);
  t.Unf(2, kStar);
  CHECK(t.hybrid->FollowerCount(kStar).value() == 1);
  const PublishResult r = t.Pub(2, kStar, 20);
  CHECK(r.merged_at_read);
  CHECK(r.fanned_out == 0);
  // Even with no follower left.
  t.Unf(3, kStar);
  CHECK(t.Pub(3, kStar, 30).merged_at_read);
  t.Fol(1, kStar);
  t.CompareAll(3);
  CHECK(IdsOf(Timeline(*t.hybrid, 1)) == std::vector<ActivityId>{3, 2, 1});
}

TEST_CASE("merged and copied entries expire alike") {
  Twin t(1);
  // Several merged actors and one copied actor, equal timestamps across
  // them, mixed TTLs.
  t.Fol(1, kStar);
  t.Fol(2, kStar);  // kStar merged
  t.Fol(1, kOther);
  t.Fol(2, kOther);  // kOther merged
  t.Fol(1, kSmall);  // one follower: copied
  const std::vector<EntityId> actors = {kStar, kOther, kSmall};
  for (ActivityId id = 1; id <= 30; ++id) {
    t.Pub(id, actors[id % 3], static_cast<Micros>(id / 4),
          /*ttl=*/static_cast<Micros>(10 + (id * 37) % 90));
  }
  for (Micros step = 0; step < 12; ++step) {
    INFO("now " << t.clock->Now());
    t.CompareAll(2);
    if (step % 4 == 3) {
      t.flat->EvictExpired(1'000'000).value();
      t.hybrid->EvictExpired(1'000'000).value();
      t.CompareAll(2);
    }
    t.clock->Advance(9);
  }
  CHECK(Timeline(*t.hybrid, 1).empty());
  t.flat->EvictExpired(1'000'000).value();
  t.hybrid->EvictExpired(1'000'000).value();
  CHECK(t.hybrid->Stats().value().entries == 0);
  CHECK(t.flat->Stats().value().entries == 0);
}

TEST_CASE("retracting keeps merged and copied reads equal") {
  Twin t(3);
  Prologue(t);
  t.Fol(4, kStar);  // kStar merged from now on
  t.Pub(7, kStar, 100);
  t.Pub(8, kStar, 101);
  t.Retract(4);  // copied before the crossing
  t.Retract(8);  // merged
  t.Retract(3);  // kSmall, copied
  t.CompareAll(5);
}

}  // namespace
}  // namespace feedcore
