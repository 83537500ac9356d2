// Mute and block: what leaves a user's timeline and notification feed,
// what stops arriving (fan-out, merged reads, back-fill, notify), follows
// refused while a block lasts, expiry by the engine clock, Unmute and
// Unblock with back-fill (of a merged actor too), the paged lists, and
// every error.
#include <doctest/doctest.h>

#include <optional>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/feed_engine.h"
#include "feedcore/social.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::IdsOf;
using testing::MakeActivity;
using testing::SocialFixture;
using testing::WholeTimeline;

constexpr EntityId kUser = 1;
constexpr EntityId kActor = 2;
constexpr EntityId kOther = 3;

EngineOptions Options(size_t hybrid_threshold = 0) {
  EngineOptions o = SocialFixture::Defaults();
  o.hybrid_fanout_threshold = hybrid_threshold;
  o.default_backfill = 100;
  o.max_page_size = 1000;
  return o;
}

std::vector<ActivityId> Ids(const InProcessFeedEngine& engine, EntityId owner) {
  return IdsOf(WholeTimeline(engine, owner));
}

// Ids in `user`'s notification feed, newest group first.
std::vector<ActivityId> NotificationIds(InProcessFeedEngine& engine, EntityId user) {
  GroupReadOptions read;
  read.limit = 100;
  absl::StatusOr<GroupPage> page = engine.ReadNotifications(user, read);
  REQUIRE_MESSAGE(page.ok(), page.status());
  std::vector<ActivityId> ids;
  for (const FeedGroup& g : page->groups) {
    for (const StoredEntry& e : g.recent) ids.push_back(e.activity_id);
  }
  return ids;
}

PublishOptions Notify(std::vector<EntityId> recipients) {
  PublishOptions o;
  o.notify = std::move(recipients);
  return o;
}

RelationResult Ok(const absl::StatusOr<RelationResult>& r) {
  REQUIRE_MESSAGE(r.ok(), r.status());
  return *r;
}

TEST_CASE("Mute: following stays, entries leave and stop arriving") {
  for (const size_t threshold : {size_t{0}, size_t{1}}) {
    INFO("hybrid threshold " << threshold);
    SocialFixture f(Options(threshold));
    // Two followers so that threshold 1 merges the actor at read.
    f.Fol(kUser, kActor);
    f.Fol(kOther, kActor);
    f.Pub(10, kActor, 100);
    f.Pub(11, kOther, 101);
    f.Fol(kUser, kOther);
    REQUIRE(Ids(*f.engine, kUser) == std::vector<ActivityId>{11, 10});

    const RelationResult muted = Ok(f.engine->Mute(kUser, kActor));
    CHECK(muted.changed);
    CHECK(muted.removed == (threshold == 0 ? 1 : 0));  // merged: no copy
    CHECK(Ids(*f.engine, kUser) == std::vector<ActivityId>{11});
    CHECK(f.engine->FollowingCount(kUser).value() == 2);

    const PublishResult published = f.Pub(12, kActor, 102);
    if (threshold == 0) CHECK(published.fanned_out == 1);  // kOther only
    CHECK(Ids(*f.engine, kUser) == std::vector<ActivityId>{11});
    CHECK(Ids(*f.engine, kOther) == std::vector<ActivityId>{12, 10});
    CHECK(f.engine->CountNewer(kUser, {0, 0}, 100).value() == 1);

    // Muting again with the same options changes nothing.
    CHECK_FALSE(Ok(f.engine->Mute(kUser, kActor)).changed);
  }
}

TEST_CASE("Mute: notifications only when asked") {
  SocialFixture f(Options());
  f.Pub(MakeActivity(10, kActor, 100), Notify({kUser}));
  Ok(f.engine->Mute(kUser, kActor));
  CHECK(NotificationIds(*f.engine, kUser) == std::vector<ActivityId>{10});
  CHECK(f.Pub(MakeActivity(11, kActor, 101), Notify({kUser})).notified == 1);

  MuteOptions with_notifications;
  with_notifications.notifications = true;
  const RelationResult r =
      Ok(f.engine->Mute(kUser, kActor, with_notifications));
  CHECK(r.changed);  // other options: a change
  CHECK(r.removed == 2);
  CHECK(NotificationIds(*f.engine, kUser).empty());
  const PublishResult p =
      f.Pub(MakeActivity(12, kActor, 102), Notify({kUser, kOther}));
  CHECK(p.notified == 1);
  CHECK(NotificationIds(*f.engine, kUser).empty());
  CHECK(NotificationIds(*f.engine, kOther) == std::vector<ActivityId>{12});
}

TEST_CASE("Mute: expiry by the engine clock") {
  for (const size_t threshold : {size_t{0}, size_t{1}}) {
    INFO("hybrid threshold " << threshold);
    SocialFixture f(Options(threshold));
    f.Fol(kUser, kActor);
    f.Fol(kOther, kActor);
    MuteOptions o;
    o.expires_at = f.clock->Now() + 50;
    Ok(f.engine->Mute(kUser, kActor, o));
    ListOptions list;
    list.limit = 10;
    REQUIRE(f.engine->Muted(kUser, list)->actors.size() == 1);
    CHECK(f.engine->Muted(kUser, list)->actors[0].expires_at == o.expires_at);
    f.Pub(10, kActor, 100);
    CHECK(Ids(*f.engine, kUser).empty());

    f.clock->Advance(50);
    CHECK(f.engine->Muted(kUser, list)->actors.empty());
    f.Pub(11, kActor, 101);
    // A copied actor's entry from during the mute never arrived; a merged
    // one's own feed is read whole once the mute is over.
    CHECK(Ids(*f.engine, kUser) == (threshold == 0
                                        ? std::vector<ActivityId>{11}
                                        : std::vector<ActivityId>{11, 10}));
    // Unmuting an expired mute changes nothing visible.
    CHECK_FALSE(Ok(f.engine->Unmute(kUser, kActor)).changed);
  }
}

TEST_CASE("Unmute: new activities arrive again, back-fill restores") {
  SocialFixture f(Options());
  f.Fol(kUser, kActor);
  f.Pub(10, kActor, 100);
  f.Pub(11, kActor, 101);
  Ok(f.engine->Mute(kUser, kActor));
  f.Pub(12, kActor, 102);
  CHECK(Ids(*f.engine, kUser).empty());
  // Following while muted copies nothing.
  f.Unf(kUser, kActor);
  CHECK(f.Fol(kUser, kActor).backfilled == 0);

  RestoreOptions restore;
  restore.backfill = 2;
  const RelationResult r = Ok(f.engine->Unmute(kUser, kActor, restore));
  CHECK(r.changed);
  CHECK(r.backfilled == 2);
  CHECK(Ids(*f.engine, kUser) == std::vector<ActivityId>{12, 11});
  f.Pub(13, kActor, 103);
  CHECK(Ids(*f.engine, kUser) == std::vector<ActivityId>{13, 12, 11});
  CHECK_FALSE(Ok(f.engine->Unmute(kUser, kActor)).changed);

  // Back-fill applies only to an actor the user follows.
  Ok(f.engine->Mute(kUser, kOther));
  f.Pub(20, kOther, 200);
  CHECK(Ok(f.engine->Unmute(kUser, kOther, restore)).backfilled == 0);
}

TEST_CASE("Unmute of a merged actor shows what copies would") {
  // Every threshold must read what copying leaves: the back-fill's
  // entries and what comes later, not what was published or removed while
  // the mute lasted.
  for (const size_t threshold : {size_t{0}, size_t{1}}) {
    for (const size_t backfill : {size_t{0}, size_t{2}}) {
      INFO("hybrid threshold " << threshold << " back-fill " << backfill);
      SocialFixture f(Options(threshold));
      f.Fol(kUser, kActor);
      f.Fol(kOther, kActor);
      f.Pub(10, kActor, 100);
      f.Pub(11, kActor, 101);
      Ok(f.engine->Mute(kUser, kActor));
      f.Pub(12, kActor, 102);
      f.Pub(13, kActor, 103);
      CHECK(Ids(*f.engine, kUser).empty());

      RestoreOptions restore;
      restore.backfill = backfill;
      const RelationResult r = Ok(f.engine->Unmute(kUser, kActor, restore));
      CHECK(r.changed);
      CHECK(r.backfilled == (threshold == 0 ? backfill : 0));
      CHECK(Ids(*f.engine, kUser) == (backfill == 0
                                          ? std::vector<ActivityId>{}
                                          : std::vector<ActivityId>{13, 12}));
      f.Pub(14, kActor, 104);
      CHECK(Ids(*f.engine, kUser) ==
            (backfill == 0 ? std::vector<ActivityId>{14}
                           : std::vector<ActivityId>{14, 13, 12}));
    }
  }
}

TEST_CASE("Block: follows end both ways, entries leave, nothing arrives") {
  for (const size_t threshold : {size_t{0}, size_t{1}}) {
    INFO("hybrid threshold " << threshold);
    SocialFixture f(Options(threshold));
    f.Fol(kUser, kActor);
    f.Fol(kOther, kActor);
    f.Fol(kActor, kUser);
    f.Pub(MakeActivity(10, kActor, 100), Notify({kUser}));
    f.Pub(20, kUser, 200);
    REQUIRE(Ids(*f.engine, kUser) == std::vector<ActivityId>{10});
    REQUIRE(Ids(*f.engine, kActor) == std::vector<ActivityId>{20});

    const RelationResult r = Ok(f.engine->Block(kUser, kActor));
    CHECK(r.changed);
    CHECK(r.follows_ended == 2);
    CHECK(r.removed == (threshold == 0 ? 2 : 1));  // copy + notification
    CHECK(Ids(*f.engine, kUser).empty());
    CHECK(Ids(*f.engine, kActor).empty());  // as Unfollow leaves it
    CHECK(NotificationIds(*f.engine, kUser).empty());
    CHECK(f.engine->FollowingCount(kUser).value() == 0);
    CHECK(f.engine->FollowingCount(kActor).value() == 0);

    CHECK(f.Pub(MakeActivity(11, kActor, 101), Notify({kUser})).notified == 0);
    CHECK(Ids(*f.engine, kUser).empty());
    CHECK(NotificationIds(*f.engine, kUser).empty());

    for (const auto& [a, b] : {std::pair{kUser, kActor}, {kActor, kUser}}) {
      const absl::StatusOr<FollowResult> refused = f.engine->Follow(a, b);
      CHECK(absl::IsFailedPrecondition(refused.status()));
    }
    CHECK_FALSE(Ok(f.engine->Block(kUser, kActor)).changed);

    // Unblock restores nothing by itself; the back-fill asked for has no
    // follow to apply to (the block ended it).
    RestoreOptions restore;
    restore.backfill = 5;
    const RelationResult u = Ok(f.engine->Unblock(kUser, kActor, restore));
    CHECK(u.changed);
    CHECK(u.backfilled == 0);
    CHECK(Ids(*f.engine, kUser).empty());
    CHECK_FALSE(Ok(f.engine->Unblock(kUser, kActor)).changed);
    // Following again is allowed and back-fills as usual.
    CHECK(f.Fol(kUser, kActor).created);
    CHECK(Ids(*f.engine, kUser) == std::vector<ActivityId>{11, 10});
  }
}

TEST_CASE("Block of an entity that follows nobody still purges inserts") {
  SocialFixture f(Options());
  REQUIRE(f.engine->Insert(kUser, {.ts = 5, .activity_id = 1, .actor = kActor})
              .ok());
  const RelationResult r = Ok(f.engine->Block(kUser, kActor));
  CHECK(r.follows_ended == 0);
  CHECK(r.removed == 1);
}

TEST_CASE("Blocked and Muted lists page by ascending id") {
  SocialFixture f(Options());
  for (EntityId a = 10; a < 17; ++a) Ok(f.engine->Block(kUser, a));
  for (EntityId a = 20; a < 25; ++a) Ok(f.engine->Mute(kUser, a));
  ListOptions list;
  list.limit = 3;
  std::vector<EntityId> blocked;
  for (;;) {
    absl::StatusOr<EntityPage> page = f.engine->Blocked(kUser, list);
    REQUIRE_MESSAGE(page.ok(), page.status());
    blocked.insert(blocked.end(), page->ids.begin(), page->ids.end());
    if (page->next_cursor.empty()) break;
    // A blocked-list cursor is no cursor of another list.
    CHECK(absl::IsInvalidArgument(
        f.engine->Muted(kUser, {.limit = 3, .cursor = page->next_cursor})
            .status()));
    CHECK(absl::IsInvalidArgument(
        f.engine->Following(kUser, {.limit = 3, .cursor = page->next_cursor})
            .status()));
    CHECK(absl::IsInvalidArgument(
        f.engine->Blocked(kOther, {.limit = 3, .cursor = page->next_cursor})
            .status()));
    list.cursor = page->next_cursor;
  }
  CHECK(blocked == std::vector<EntityId>{10, 11, 12, 13, 14, 15, 16});
  list.cursor.clear();
  std::vector<EntityId> muted;
  for (;;) {
    absl::StatusOr<MutedPage> page = f.engine->Muted(kUser, list);
    REQUIRE_MESSAGE(page.ok(), page.status());
    for (const MutedActor& m : page->actors) muted.push_back(m.actor);
    if (page->next_cursor.empty()) break;
    list.cursor = page->next_cursor;
  }
  CHECK(muted == std::vector<EntityId>{20, 21, 22, 23, 24});
  CHECK(f.engine->Blocked(kOther, {.limit = 3, .cursor = ""})->ids.empty());
}

TEST_CASE("Mute and block errors change nothing") {
  SocialFixture f(Options());
  CHECK(absl::IsInvalidArgument(f.engine->Mute(kUser, kUser).status()));
  CHECK(absl::IsInvalidArgument(f.engine->Unmute(kUser, kUser).status()));
  CHECK(absl::IsInvalidArgument(f.engine->Block(kUser, kUser).status()));
  CHECK(absl::IsInvalidArgument(f.engine->Unblock(kUser, kUser).status()));
  MuteOptions past;
  past.expires_at = f.clock->Now();
  CHECK(absl::IsInvalidArgument(f.engine->Mute(kUser, kActor, past).status()));
  MuteOptions far;
  far.expires_at = f.clock->Now() + kMaxTtl + 1;
  CHECK(absl::IsInvalidArgument(f.engine->Mute(kUser, kActor, far).status()));
  RestoreOptions too_many;
  too_many.backfill = kMaxTimelineLengthLimit + 1;
  CHECK(absl::IsInvalidArgument(
      f.engine->Unmute(kUser, kActor, too_many).status()));
  CHECK(absl::IsInvalidArgument(
      f.engine->Unblock(kUser, kActor, too_many).status()));
  CHECK(absl::IsInvalidArgument(
      f.engine->Muted(kUser, {.limit = 0, .cursor = ""}).status()));
  CHECK(absl::IsInvalidArgument(
      f.engine->Blocked(kUser, {.limit = 1, .cursor = "nope"}).status()));
  ListOptions list;
  list.limit = 10;
  CHECK(f.engine->Muted(kUser, list)->actors.empty());
  CHECK(f.engine->Blocked(kUser, list)->ids.empty());
}

}  // namespace
}  // namespace feedcore
