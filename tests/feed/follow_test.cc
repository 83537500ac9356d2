// Tests of the social graph: Follow and Unfollow (results, no-ops, errors),
// back-fill (count option, cap, expiry of the copies), unfollow removal
// (exactly the followee's entries), the Followers and Following lists
// (paging through every page boundary, cursor errors) and the counts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
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
using testing::NewManualEngine;
using testing::Own;
using testing::Social;
using testing::Timeline;
using testing::WholeList;

constexpr Micros kStart = testing::SocialFixture::kStart;

struct Fixture : testing::SocialFixture {
  using SocialFixtureOf::Pub;
  using SocialFixtureOf::SocialFixtureOf;
  // Publishes activity `id` of `actor` at `ts`; requires it to be new.
  void Pub(ActivityId id, EntityId actor, Micros ts, Micros ttl = 0) {
    REQUIRE(SocialFixtureOf::Pub(id, actor, ts, ttl).created);
  }
};

// The ids `first`, `first`-1, ..., `first`-n+1.
std::vector<ActivityId> Descending(ActivityId first, size_t n) {
  std::vector<ActivityId> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(first - i);
  return ids;
}

TEST_CASE("follow creates one edge; following again is a no-op") {
  Fixture f;
  const FollowResult first = f.Fol(1, 2);
  CHECK(first.created);
  CHECK(first.backfilled == 0);
  CHECK(f.engine->FollowerCount(2).value() == 1);
  CHECK(f.engine->FollowingCount(1).value() == 1);
  CHECK(f.engine->FollowerCount(1).value() == 0);
  CHECK(f.engine->FollowingCount(2).value() == 0);
  CHECK(WholeList(*f.engine, true, 2) == std::vector<EntityId>{1});
  CHECK(WholeList(*f.engine, false, 1) == std::vector<EntityId>{2});
  CHECK(f.engine->Stats().value().follow_edges == 1);

  // Activities published after the first follow reached the follower; a
  // second follow neither creates anything nor back-fills again.
  f.Pub(100, 2, 10);
  f.Pub(101, 2, 11);
  const auto before = Social(f.engine->Stats().value());
  const std::vector<StoredEntry> timeline = Timeline(*f.engine, 1);
  CHECK(IdsOf(timeline) == std::vector<ActivityId>{101, 100});
  const FollowResult again = f.Fol(1, 2, /*backfill=*/50);
  CHECK_FALSE(again.created);
  CHECK(again.backfilled == 0);
  CHECK(Social(f.engine->Stats().value()) == before);
  CHECK(Timeline(*f.engine, 1) == timeline);
  CHECK(f.engine->FollowerCount(2).value() == 1);
}

TEST_CASE("follow is directed: a follows b does not make b follow a") {
  Fixture f;
  f.Fol(1, 2);
  f.Pub(100, 1, 10);  // 1's activity: 2 does not follow 1
  f.Pub(200, 2, 20);
  CHECK(IdsOf(Timeline(*f.engine, 2)).empty());
  CHECK(IdsOf(Timeline(*f.engine, 1)) == std::vector<ActivityId>{200});
  // Mutual follows are two edges.
  f.Fol(2, 1, 0);
  CHECK(f.engine->Stats().value().follow_edges == 2);
  CHECK(f.engine->FollowerCount(1).value() == 1);
  CHECK(f.engine->FollowerCount(2).value() == 1);
}

TEST_CASE("unfollow reports what it undid; unfollowing again is a no-op") {
  Fixture f;
  f.Fol(1, 2);
  f.Pub(100, 2, 10);
  f.Pub(101, 2, 11);
  f.Pub(102, 2, 12);
  const UnfollowResult first = f.Unf(1, 2);
  CHECK(first.was_following);
  CHECK(first.removed == 3);
  CHECK(Timeline(*f.engine, 1).empty());
  CHECK(f.engine->FollowerCount(2).value() == 0);
  CHECK(f.engine->FollowingCount(1).value() == 0);
  CHECK(f.engine->Stats().value().follow_edges == 0);
  CHECK(WholeList(*f.engine, true, 2).empty());
  CHECK(WholeList(*f.engine, false, 1).empty());

  const auto before = Social(f.engine->Stats().value());
  const UnfollowResult again = f.Unf(1, 2);
  CHECK_FALSE(again.was_following);
  CHECK(again.removed == 0);
  // Never followed, and entities nobody has heard of.
  const UnfollowResult never = f.Unf(1, 3);
  CHECK_FALSE(never.was_following);
  CHECK(never.removed == 0);
  const UnfollowResult unknown = f.Unf(777, 888);
  CHECK_FALSE(unknown.was_following);
  CHECK(Social(f.engine->Stats().value()) == before);

  // After unfollowing, new activities no longer arrive.
  f.Pub(103, 2, 13);
  CHECK(Timeline(*f.engine, 1).empty());
  // The followee's own feed is untouched by the unfollow.
  CHECK(IdsOf(Own(*f.engine, 2)) ==
        std::vector<ActivityId>{103, 102, 101, 100});
}

TEST_CASE("unfollowing a followee without entries removes nothing") {
  Fixture f;
  f.Fol(1, 2);
  const UnfollowResult r = f.Unf(1, 2);
  CHECK(r.was_following);
  CHECK(r.removed == 0);
  CHECK(f.engine->Stats().value().follow_edges == 0);
}

TEST_CASE("following or unfollowing oneself is an invalid argument") {
  Fixture f;
  f.Pub(100, 5, 10);
  const auto before = Social(f.engine->Stats().value());
  const absl::StatusOr<FollowResult> follow = f.engine->Follow(5, 5);
  CHECK(absl::IsInvalidArgument(follow.status()));
  CHECK_FALSE(follow.status().message().empty());
  const absl::StatusOr<UnfollowResult> unfollow = f.engine->Unfollow(5, 5);
  CHECK(absl::IsInvalidArgument(unfollow.status()));
  CHECK(Social(f.engine->Stats().value()) == before);
  CHECK(f.engine->FollowerCount(5).value() == 0);
  CHECK(f.engine->FollowingCount(5).value() == 0);
  CHECK(Timeline(*f.engine, 5).empty());
}

TEST_CASE("back-fill copies the followee's newest activities") {
  EngineOptions o = Fixture::Defaults();
  o.default_backfill = 20;
  Fixture f(o);
  constexpr EntityId kActor = 50;
  // 30 activities, published in a shuffled timestamp order, so "newest"
  // means the key order, not the order of publishing.
  std::vector<ActivityId> ids;
  for (ActivityId id = 1; id <= 30; ++id) ids.push_back(id);
  std::rotate(ids.begin(), ids.begin() + 11, ids.end());
  for (const ActivityId id : ids) f.Pub(id, kActor, static_cast<Micros>(id));

  SUBCASE("default count") {
    const FollowResult r = f.Fol(1, kActor);
    CHECK(r.backfilled == 20);
    CHECK(IdsOf(Timeline(*f.engine, 1)) == Descending(30, 20));
  }
  SUBCASE("zero copies nothing") {
    const FollowResult r = f.Fol(1, kActor, 0);
    CHECK(r.created);
    CHECK(r.backfilled == 0);
    CHECK(Timeline(*f.engine, 1).empty());
    // Later activities still arrive.
    f.Pub(31, kActor, 31);
    CHECK(IdsOf(Timeline(*f.engine, 1)) == std::vector<ActivityId>{31});
  }
  SUBCASE("an explicit count") {
    const FollowResult r = f.Fol(1, kActor, 5);
    CHECK(r.backfilled == 5);
    CHECK(IdsOf(Timeline(*f.engine, 1)) == Descending(30, 5));
  }
  SUBCASE("more than the followee has copies everything") {
    const FollowResult r = f.Fol(1, kActor, 1000);
    CHECK(r.backfilled == 30);
    CHECK(IdsOf(Timeline(*f.engine, 1)) == Descending(30, 30));
  }
  SUBCASE("the largest accepted count") {
    const FollowResult r = f.Fol(1, kActor, kMaxTimelineLengthLimit);
    CHECK(r.backfilled == 30);
  }
  SUBCASE("a count above kMaxTimelineLengthLimit is rejected") {
    const auto before = Social(f.engine->Stats().value());
    FollowOptions bad;
    bad.backfill = kMaxTimelineLengthLimit + 1;
    const absl::StatusOr<FollowResult> r = f.engine->Follow(1, kActor, bad);
    CHECK(absl::IsInvalidArgument(r.status()));
    CHECK(r.status().message().find("backfill") != std::string::npos);
    // Nothing changed: no edge, no copies.
    CHECK(Social(f.engine->Stats().value()) == before);
    CHECK(f.engine->FollowerCount(kActor).value() == 0);
    CHECK(f.engine->FollowingCount(1).value() == 0);
    CHECK(Timeline(*f.engine, 1).empty());
  }
  // The entries are the followee's, with their own timestamps and actor.
  for (const StoredEntry& e : Timeline(*f.engine, 1)) {
    CHECK(e.actor == kActor);
    CHECK(e.ts == static_cast<Micros>(e.activity_id));
  }
}

TEST_CASE("the engine's default_backfill applies when FollowOptions is unset") {
  EngineOptions o = Fixture::Defaults();
  o.default_backfill = 3;
  Fixture f(o);
  for (ActivityId id = 1; id <= 10; ++id) f.Pub(id, 7, 100 + id);
  CHECK(f.Fol(1, 7).backfilled == 3);
  CHECK(IdsOf(Timeline(*f.engine, 1)) == Descending(10, 3));

  EngineOptions none = Fixture::Defaults();
  none.default_backfill = 0;
  Fixture g(none);
  for (ActivityId id = 1; id <= 10; ++id) g.Pub(id, 7, 100 + id);
  CHECK(g.Fol(1, 7).backfilled == 0);
  CHECK(Timeline(*g.engine, 1).empty());
  // An explicit count overrides a default of zero.
  CHECK(g.Fol(2, 7, 4).backfilled == 4);
}

TEST_CASE("back-fill is bounded by max_timeline_length") {
  EngineOptions o = Fixture::Defaults();
  o.max_timeline_length = 10;
  Fixture f(o);
  for (ActivityId id = 1; id <= 25; ++id) f.Pub(id, 7, 100 + id);
  // The own feed itself holds the newest 10.
  CHECK(IdsOf(Own(*f.engine, 7)) == Descending(25, 10));
  const FollowResult r = f.Fol(1, 7, 1000);
  CHECK(r.backfilled == 10);
  CHECK(IdsOf(Timeline(*f.engine, 1)) == Descending(25, 10));
  CHECK(f.engine->Stats().value().trimmed == 15);  // only the own feed trimmed
}

TEST_CASE("back-fill copies only visible activities") {
  Fixture f;
  f.Pub(1, 7, 10, /*ttl=*/100);
  f.Pub(2, 7, 20, /*ttl=*/1000);
  f.Pub(3, 7, 30, /*ttl=*/100);
  f.Pub(4, 7, 40);
  REQUIRE(f.engine->Retract(4).ok());
  f.clock->Advance(100);  // 1 and 3 expire (not yet evicted)
  const FollowResult r = f.Fol(1, 7, 10);
  CHECK(r.backfilled == 1);
  CHECK(IdsOf(Timeline(*f.engine, 1)) == std::vector<ActivityId>{2});
  // Expired entries that were never copied are not removed by an unfollow.
  CHECK(f.Unf(1, 7).removed == 1);
}

TEST_CASE("back-filled copies keep the activity's expiry") {
  Fixture f;
  f.Pub(1, 7, 10, /*ttl=*/100);  // expires at kStart + 100
  f.Pub(2, 7, 20, /*ttl=*/300);  // expires at kStart + 300
  f.Pub(3, 7, 30);               // the default TTL
  const Micros default_expiry = kStart + f.engine->options().default_ttl;
  f.clock->Advance(60);
  CHECK(f.Fol(1, 7, 10).backfilled == 3);
  const std::vector<StoredEntry> copied = Timeline(*f.engine, 1);
  REQUIRE(copied.size() == 3);
  CHECK(copied[0] == StoredEntry{30, 3, 7, default_expiry, 0, {}, 0});
  CHECK(copied[1] == StoredEntry{20, 2, 7, kStart + 300, 0, {}, 0});
  CHECK(copied[2] == StoredEntry{10, 1, 7, kStart + 100, 0, {}, 0});
  // The copies are exactly the own feed's entries.
  CHECK(copied == Own(*f.engine, 7));

  f.clock->Set(kStart + 100);
  CHECK(IdsOf(Timeline(*f.engine, 1)) == std::vector<ActivityId>{3, 2});
  f.clock->Set(kStart + 300);
  CHECK(IdsOf(Timeline(*f.engine, 1)) == std::vector<ActivityId>{3});
  // Eviction reclaims the expired copies with the originals: 2 copies plus
  // 2 own-feed and 2 world-feed entries.
  CHECK(f.engine->EvictExpired(1'000'000).value() == 6);
  CHECK(f.engine->Stats().value().entries == 3);
}

TEST_CASE("unfollow removes exactly the followee's entries") {
  Fixture f;
  constexpr EntityId kReader = 1, kOther = 9;
  constexpr EntityId kA = 20, kB = 30;
  f.Fol(kReader, kA);
  f.Fol(kReader, kB);
  f.Fol(kOther, kA);
  // Interleaved activities of both followees, some at equal timestamps.
  for (ActivityId i = 0; i < 12; ++i) {
    f.Pub(1000 + i, i % 3 == 0 ? kB : kA, static_cast<Micros>(100 + i / 2));
  }
  // An entry put directly by the host with another actor.
  REQUIRE(f.engine->Insert(kReader, {105, 5000, 77}).ok());

  const std::vector<StoredEntry> before = Timeline(*f.engine, kReader);
  const std::vector<StoredEntry> other_before = Timeline(*f.engine, kOther);
  const std::vector<StoredEntry> own_before = Own(*f.engine, kA);
  size_t of_a = 0;
  std::vector<StoredEntry> want;
  for (const StoredEntry& e : before) {
    if (e.actor == kA) {
      ++of_a;
    } else {
      want.push_back(e);
    }
  }
  REQUIRE(of_a == 8);
  const size_t entries_before = f.engine->Stats().value().entries;

  const UnfollowResult r = f.Unf(kReader, kA);
  CHECK(r.was_following);
  CHECK(r.removed == of_a);
  CHECK(Timeline(*f.engine, kReader) == want);
  CHECK(f.engine->Stats().value().entries == entries_before - of_a);
  // Nobody else's feeds changed.
  CHECK(Timeline(*f.engine, kOther) == other_before);
  CHECK(Own(*f.engine, kA) == own_before);
  // The other followee still arrives; the unfollowed one does not.
  f.Pub(2000, kA, 500);
  f.Pub(2001, kB, 501);
  CHECK(Timeline(*f.engine, kReader).front().activity_id == 2001);
  CHECK(Timeline(*f.engine, kOther).front().activity_id == 2000);

  // Following again back-fills the followee's activities once more.
  const FollowResult again = f.Fol(kReader, kA, 100);
  CHECK(again.created);
  CHECK(again.backfilled == 9);
  CHECK(Timeline(*f.engine, kReader).size() == want.size() + 1 + 9);
}

// Walks `entity`'s list with every page size 1..n+1 and checks the pages
// against the full list.
void CheckEveryPageSize(const InProcessFeedEngine& engine, bool followers,
                        EntityId entity, const std::set<EntityId>& want) {
  const size_t n = want.size();
  const std::vector<EntityId> reference =
      WholeList(engine, followers, entity, n + 1);
  CHECK(std::set<EntityId>(reference.begin(), reference.end()) == want);
  CHECK(reference.size() == n);
  if (!followers) {
    CHECK(std::is_sorted(reference.begin(), reference.end()));
  }
  for (size_t limit = 1; limit <= n + 1; ++limit) {
    INFO("limit " << limit << (followers ? " followers" : " following"));
    ListOptions options;
    options.limit = limit;
    std::vector<EntityId> got;
    size_t pages = 0;
    while (true) {
      const absl::StatusOr<EntityPage> page =
          followers ? engine.Followers(entity, options)
                    : engine.Following(entity, options);
      REQUIRE_MESSAGE(page.ok(), page.status());
      ++pages;
      const size_t remaining = n - got.size();
      CHECK(page->ids.size() == std::min(limit, remaining));
      got.insert(got.end(), page->ids.begin(), page->ids.end());
      CHECK(page->next_cursor.empty() == (got.size() == n));
      if (page->next_cursor.empty()) break;
      REQUIRE(pages <= n);
      options.cursor = page->next_cursor;
    }
    // The same stable order whatever the page size: no skip, no repeat.
    CHECK(got == reference);
    CHECK(pages == std::max<size_t>(1, (n + limit - 1) / limit));
  }
}

TEST_CASE("followers and following page through every boundary") {
  Fixture f;
  constexpr EntityId kStar = 1000;
  constexpr EntityId kFan = 2000;
  std::set<EntityId> followers, following;
  // Ids spread over the shards, not in order.
  for (EntityId i = 0; i < 13; ++i) {
    const EntityId id = (i * 7919 + 13) % 997 + 1;
    followers.insert(id);
    following.insert(id + 5000);
  }
  for (const EntityId id : followers) f.Fol(id, kStar);
  for (const EntityId id : following) f.Fol(kFan, id);
  CHECK(f.engine->FollowerCount(kStar).value() == 13);
  CHECK(f.engine->FollowingCount(kFan).value() == 13);
  CheckEveryPageSize(*f.engine, true, kStar, followers);
  CheckEveryPageSize(*f.engine, false, kFan, following);

  // Empty lists: one empty page, no cursor.
  for (const bool which : {true, false}) {
    const absl::StatusOr<EntityPage> empty =
        which ? f.engine->Followers(424242, {})
              : f.engine->Following(424242, {});
    REQUIRE(empty.ok());
    CHECK(empty->ids.empty());
    CHECK(empty->next_cursor.empty());
  }
}

TEST_CASE("list paging stays exact while the list changes between pages") {
  Fixture f;
  constexpr EntityId kStar = 1000;
  for (EntityId id = 1; id <= 20; ++id) f.Fol(id, kStar);
  for (EntityId id = 101; id <= 120; ++id) f.Fol(1, id);

  SUBCASE("followers") {
    const std::vector<EntityId> order = WholeList(*f.engine, true, kStar);
    ListOptions options;
    options.limit = 5;
    absl::StatusOr<EntityPage> page = f.engine->Followers(kStar, options);
    REQUIRE(page.ok());
    std::vector<EntityId> got = page->ids;
    // Remove one already returned and one not yet returned.
    const EntityId seen = order[2];
    const EntityId unseen = order[12];
    f.Unf(seen, kStar);
    f.Unf(unseen, kStar);
    options.cursor = page->next_cursor;
    while (!options.cursor.empty()) {
      page = f.engine->Followers(kStar, options);
      REQUIRE_MESSAGE(page.ok(), page.status());
      got.insert(got.end(), page->ids.begin(), page->ids.end());
      options.cursor = page->next_cursor;
    }
    std::vector<EntityId> want = order;
    want.erase(std::find(want.begin(), want.end(), unseen));
    CHECK(got == want);
  }
  SUBCASE("following") {
    ListOptions options;
    options.limit = 5;
    absl::StatusOr<EntityPage> page = f.engine->Following(1, options);
    REQUIRE(page.ok());
    CHECK(page->ids == std::vector<EntityId>{101, 102, 103, 104, 105});
    std::vector<EntityId> got = page->ids;
    f.Unf(1, 103);  // already returned
    f.Unf(1, 110);  // not yet returned
    f.Fol(1, 50);   // before the cursor: not returned
    f.Fol(1, 200);  // after the cursor: returned
    options.cursor = page->next_cursor;
    while (!options.cursor.empty()) {
      page = f.engine->Following(1, options);
      REQUIRE_MESSAGE(page.ok(), page.status());
      got.insert(got.end(), page->ids.begin(), page->ids.end());
      options.cursor = page->next_cursor;
    }
    std::vector<EntityId> want;
    for (EntityId id = 101; id <= 120; ++id) {
      if (id != 110) want.push_back(id);
    }
    want.push_back(200);
    want.push_back(1000);  // 1 is one of kStar's followers
    CHECK(got == want);
  }
}

TEST_CASE("list cursor and limit errors") {
  EngineOptions o = Fixture::Defaults();
  o.max_page_size = 10;
  Fixture f(o);
  for (EntityId id = 1; id <= 5; ++id) {
    f.Fol(id, 1000);
    f.Fol(id, 1001);
    f.Fol(2000, id + 10);
    f.Fol(2001, id + 10);
  }
  ListOptions two;
  two.limit = 2;
  const absl::StatusOr<EntityPage> followers = f.engine->Followers(1000, two);
  const absl::StatusOr<EntityPage> following = f.engine->Following(2000, two);
  REQUIRE(followers.ok());
  REQUIRE(following.ok());
  REQUIRE_FALSE(followers->next_cursor.empty());
  REQUIRE_FALSE(following->next_cursor.empty());
  // A real timeline cursor, to be misused.
  f.Pub(1, 11, 10);
  f.Pub(2, 12, 11);
  const absl::StatusOr<Page> two_items = f.engine->ReadTimeline(2000, Limit(1));
  REQUIRE(two_items.ok());
  REQUIRE_FALSE(two_items->next_cursor.empty());

  auto expect_invalid = [&](bool list_followers, EntityId entity,
                            ListOptions options) {
    const absl::StatusOr<EntityPage> r =
        list_followers ? f.engine->Followers(entity, options)
                       : f.engine->Following(entity, options);
    CHECK(absl::IsInvalidArgument(r.status()));
    CHECK_FALSE(r.status().message().empty());
  };
  auto with_cursor = [](std::string cursor) {
    ListOptions options;
    options.limit = 2;
    options.cursor = std::move(cursor);
    return options;
  };
  SUBCASE("garbage") {
    expect_invalid(true, 1000, with_cursor("not a cursor"));
    expect_invalid(false, 2000, with_cursor("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
    std::string damaged = followers->next_cursor;
    damaged[damaged.size() / 2] =
        damaged[damaged.size() / 2] == 'A' ? 'B' : 'A';
    expect_invalid(true, 1000, with_cursor(damaged));
    expect_invalid(true, 1000,
                   with_cursor(followers->next_cursor.substr(0, 10)));
  }
  SUBCASE("another entity's cursor") {
    expect_invalid(true, 1001, with_cursor(followers->next_cursor));
    expect_invalid(false, 2001, with_cursor(following->next_cursor));
  }
  SUBCASE("a follower cursor used for following, and the reverse") {
    expect_invalid(false, 1000, with_cursor(followers->next_cursor));
    expect_invalid(true, 2000, with_cursor(following->next_cursor));
  }
  SUBCASE("a timeline cursor") {
    expect_invalid(true, 2000, with_cursor(two_items->next_cursor));
    expect_invalid(false, 2000, with_cursor(two_items->next_cursor));
  }
  SUBCASE("a list cursor used for a timeline") {
    ReadOptions r;
    r.cursor = following->next_cursor;
    CHECK(absl::IsInvalidArgument(f.engine->ReadTimeline(2000, r).status()));
  }
  SUBCASE("limit") {
    ListOptions zero;
    zero.limit = 0;
    expect_invalid(true, 1000, zero);
    expect_invalid(false, 2000, zero);
    ListOptions over;
    over.limit = 11;
    expect_invalid(true, 1000, over);
    expect_invalid(false, 2000, over);
    ListOptions max;
    max.limit = 10;
    const absl::StatusOr<EntityPage> all = f.engine->Followers(1000, max);
    REQUIRE(all.ok());
    CHECK(all->ids.size() == 5);
    CHECK(all->next_cursor.empty());
  }
  SUBCASE("the valid cursors continue where they stopped") {
    const absl::StatusOr<EntityPage> next =
        f.engine->Following(2000, with_cursor(following->next_cursor));
    REQUIRE(next.ok());
    CHECK(next->ids == std::vector<EntityId>{13, 14});
  }
}

TEST_CASE("counts and follow_edges follow every change") {
  Fixture f;
  // A random-looking but fixed graph over 30 entities.
  std::set<std::pair<EntityId, EntityId>> edges;
  uint64_t x = 12345;
  auto next = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  for (int step = 0; step < 600; ++step) {
    const EntityId a = 1 + next() % 30;
    const EntityId b = 1 + next() % 30;
    if (a == b) continue;
    if (next() % 3 == 0) {
      const UnfollowResult r = f.Unf(a, b);
      CHECK(r.was_following == (edges.erase({a, b}) == 1));
    } else {
      const FollowResult r = f.Fol(a, b, 0);
      CHECK(r.created == edges.insert({a, b}).second);
    }
  }
  REQUIRE(edges.size() > 20);
  CHECK(f.engine->Stats().value().follow_edges == edges.size());
  for (EntityId e = 1; e <= 31; ++e) {
    std::set<EntityId> followers, following;
    for (const auto& [a, b] : edges) {
      if (b == e) followers.insert(a);
      if (a == e) following.insert(b);
    }
    INFO("entity " << e);
    CHECK(f.engine->FollowerCount(e).value() == followers.size());
    CHECK(f.engine->FollowingCount(e).value() == following.size());
    CHECK(testing::FollowerSet(*f.engine, e) == followers);
    CHECK(testing::FollowingSet(*f.engine, e) == following);
  }
}

}  // namespace
}  // namespace feedcore
