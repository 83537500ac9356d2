// Overload by size: an entity with a million followers, and timelines
// written far past their cap. The follower list must stay exact when paged
// to its end; the count is kept, not counted; a publish of a producer that
// large is merged at read instead of copied a million times; a full
// timeline trims its oldest entries and turns away older ones, counting
// both. How long a page deep in the list and an unfollow take is measured
// by BM_FollowersPage and BM_UnfollowOfMillion (bench/social_benchmark.cc).
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::IdsOf;
using testing::MakeActivity;
using testing::Timeline;

constexpr EntityId kStar = 1;
constexpr EntityId kFirstFan = 1'000;
constexpr size_t kFans = 1'000'000;
constexpr size_t kPage = 1'000;

TEST_CASE("a million followers: exact list, O(1) count, merged at read") {
  EngineOptions o = testing::SocialFixture::Defaults();
  o.shards = 16;
  o.hybrid_fanout_threshold = 10'000;
  testing::SocialFixture f(o);
  FollowOptions no_backfill;
  no_backfill.backfill = 0;
  for (size_t i = 0; i < kFans; ++i) {
    const absl::StatusOr<FollowResult> r =
        f.engine->Follow(kFirstFan + i, kStar, no_backfill);
    if (!r.ok() || !r->created) FAIL("follow " << i << " failed");
  }
  CHECK(f.engine->FollowerCount(kStar).value() == kFans);
  CHECK(f.engine->Stats().value().follow_edges == kFans);

  // The publish is not copied a million times.
  const PublishResult published = f.Pub(MakeActivity(7, kStar, 100));
  CHECK(published.merged_at_read);
  CHECK(published.fanned_out == 0);
  CHECK(IdsOf(Timeline(*f.engine, kFirstFan + kFans / 2)) ==
        std::vector<ActivityId>{7});

  // Every follower exactly once, in full pages of kPage ids, each page
  // resuming where the cursor of the one before left off.
  ListOptions list;
  list.limit = kPage;
  std::vector<bool> seen(kFans, false);
  size_t total = 0, pages = 0, strangers = 0, repeats = 0, short_pages = 0;
  for (;;) {
    const absl::StatusOr<EntityPage> page = f.engine->Followers(kStar, list);
    REQUIRE_MESSAGE(page.ok(), page.status());
    ++pages;
    if (page->ids.size() != kPage) ++short_pages;
    // Counting rather than an assertion per id: a million doctest checks
    // would dominate the test's run time.
    for (const EntityId id : page->ids) {
      if (id < kFirstFan || id >= kFirstFan + kFans) {
        ++strangers;
      } else if (seen[id - kFirstFan]) {
        ++repeats;
      } else {
        seen[id - kFirstFan] = true;
      }
    }
    total += page->ids.size();
    if (page->next_cursor.empty()) break;
    list.cursor = page->next_cursor;
  }
  CHECK(strangers == 0);
  CHECK(repeats == 0);
  CHECK(short_pages == 0);
  CHECK(total == kFans);
  CHECK(pages == kFans / kPage);

  // Unfollowing one of a million removes exactly that edge, and the list
  // resumes past it: the first page now starts at the second fan.
  CHECK(f.Unf(kFirstFan, kStar).was_following);
  CHECK(f.engine->FollowerCount(kStar).value() == kFans - 1);
  CHECK(f.engine->Stats().value().follow_edges == kFans - 1);
  CHECK_FALSE(f.Unf(kFirstFan, kStar).was_following);
}

TEST_CASE("timelines at their cap trim the oldest and refuse older entries") {
  constexpr size_t kCap = 100;
  constexpr EntityId kOwners = 50;
  EngineOptions o;
  o.shards = 4;
  o.max_timeline_length = kCap;
  auto engine =
      testing::NewManualEngine(std::make_shared<ManualClock>(1'000), o);

  // Ten times the cap, newest last: every insert past the cap trims one.
  std::vector<EntityId> owners;
  for (EntityId owner = 1; owner <= kOwners; ++owner) owners.push_back(owner);
  InsertResult total;
  for (ActivityId id = 1; id <= 10 * kCap; ++id) {
    const absl::StatusOr<InsertResult> r =
        engine->InsertFanout(owners, {static_cast<Micros>(id), id, 9});
    REQUIRE(r.ok());
    total.inserted += r->inserted;
    total.trimmed += r->trimmed;
    total.rejected_by_cap += r->rejected_by_cap;
  }
  CHECK(total.inserted == kOwners * 10 * kCap);
  CHECK(total.trimmed == kOwners * 9 * kCap);
  CHECK(total.rejected_by_cap == 0);
  EngineStats stats = engine->Stats().value();
  CHECK(stats.entries == kOwners * kCap);
  CHECK(stats.trimmed == kOwners * 9 * kCap);

  // Each timeline holds exactly the newest kCap.
  for (EntityId owner = 1; owner <= kOwners; owner += 7) {
    const std::vector<StoredEntry> entries = testing::ReadAll(*engine, owner);
    REQUIRE(entries.size() == kCap);
    CHECK(entries.front().activity_id == 10 * kCap);
    CHECK(entries.back().activity_id == 9 * kCap + 1);
  }

  // An entry older than everything in a full timeline is refused at once,
  // counted, and changes nothing.
  const absl::StatusOr<InsertResult> old =
      engine->InsertFanout(owners, {1, 1, 9});
  REQUIRE(old.ok());
  CHECK(old->rejected_by_cap == kOwners);
  CHECK(old->inserted == 0);
  CHECK(old->trimmed == 0);
  CHECK(engine->Stats().value().entries == kOwners * kCap);
  CHECK(testing::ReadAll(*engine, 1).back().activity_id == 9 * kCap + 1);

  // A batch mixing both: the new entry trims one, the old one is refused.
  const absl::StatusOr<InsertResult> mixed = engine->InsertBatch(
      {{1, {static_cast<Micros>(20 * kCap), 20 * kCap, 9}}, {2, {2, 2, 9}}});
  REQUIRE(mixed.ok());
  CHECK(mixed->inserted == 1);
  CHECK(mixed->trimmed == 1);
  CHECK(mixed->rejected_by_cap == 1);
  CHECK(engine->Stats().value().entries == kOwners * kCap);
}

}  // namespace
}  // namespace feedcore
