// Notification feeds: delivery to the named recipients only, grouping (and
// flat feeds), seen and read state with its counts, the length bound,
// expiry, retraction, paging and cursors, hydration, the on_notify
// callback, and every error path.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/feed_engine.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using Fixture = testing::SocialFixture;
constexpr uint64_t kLike = 1;
constexpr uint64_t kComment = 2;
constexpr EntityId kPhoto = 500;
constexpr EntityId kOtherPhoto = 501;

EngineOptions Notifying(bool aggregated = true, size_t max_length = 100) {
  EngineOptions o = Fixture::Defaults();
  o.aggregation.time_bucket = 1000;
  o.aggregation.max_group_actors = 3;
  o.aggregation.max_group_entries = 4;
  o.notifications.aggregated = aggregated;
  o.notifications.max_length = max_length;
  return o;
}

Activity Act(ActivityId id, EntityId actor, Micros ts, uint64_t verb,
             EntityId object, Micros ttl = 0) {
  Activity a = testing::MakeActivity(id, actor, ts, ttl);
  a.verb = verb;
  a.object = object;
  return a;
}

PublishOptions To(std::vector<EntityId> recipients) {
  PublishOptions o;
  o.notify = std::move(recipients);
  return o;
}

std::vector<FeedGroup> AllNotifications(InProcessFeedEngine& engine, EntityId user,
                                        size_t limit = 1000) {
  std::vector<FeedGroup> groups;
  GroupReadOptions read;
  read.limit = limit;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 10'000);
    absl::StatusOr<GroupPage> page = engine.ReadNotifications(user, read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    groups.insert(groups.end(), page->groups.begin(), page->groups.end());
    if (page->next_cursor.empty()) return groups;
    read.cursor = page->next_cursor;
  }
}

std::vector<ActivityId> Ids(const FeedGroup& g) {
  std::vector<ActivityId> ids;
  for (const StoredEntry& e : g.recent) ids.push_back(e.activity_id);
  return ids;
}

NotificationCounts Counts(size_t unseen, size_t unread, size_t groups) {
  return {unseen, unread, groups};
}

TEST_CASE("a notification reaches only the named recipients") {
  Fixture f(Notifying());
  f.Fol(10, 1);
  const PublishResult r =
      f.Pub(Act(1, 1, Fixture::kStart, kLike, kPhoto), To({2, 3, 2, 3}));
  CHECK(r.notified == 2);  // duplicates are harmless
  CHECK(r.fanned_out == 1);
  for (EntityId user : {2, 3}) {
    CAPTURE(user);
    const std::vector<FeedGroup> groups = AllNotifications(*f.engine, user);
    REQUIRE(groups.size() == 1);
    CHECK(Ids(groups[0]) == std::vector<ActivityId>{1});
    CHECK_FALSE(groups[0].seen);
    CHECK_FALSE(groups[0].read);
    CHECK(f.engine->GetNotificationCounts(user).value() == Counts(1, 1, 1));
  }
  // Followers get it in their timeline, not as a notification.
  CHECK(testing::Timeline(*f.engine, 10, {}).size() == 1);
  CHECK(AllNotifications(*f.engine, 10).empty());
  CHECK(AllNotifications(*f.engine, 1).empty());
  CHECK(f.engine->GetNotificationCounts(10).value() == Counts(0, 0, 0));
  // A re-publish changes nothing, notify included.
  const PublishResult again =
      f.Pub(Act(1, 1, Fixture::kStart, kLike, kPhoto), To({4}));
  CHECK_FALSE(again.created);
  CHECK(again.notified == 0);
  CHECK(AllNotifications(*f.engine, 4).empty());
}

TEST_CASE("aggregated: likes of one photo collapse, and joining unseens") {
  Fixture f(Notifying());
  const Micros t = Fixture::kStart;
  f.Pub(Act(1, 11, t + 1, kLike, kPhoto), To({2}));
  f.Pub(Act(2, 12, t + 2, kLike, kPhoto), To({2}));
  f.Pub(Act(3, 13, t + 3, kComment, kPhoto), To({2}));
  f.Pub(Act(4, 11, t + 4, kLike, kPhoto), To({2}));
  std::vector<FeedGroup> groups = AllNotifications(*f.engine, 2);
  REQUIRE(groups.size() == 2);
  CHECK(Ids(groups[0]) == std::vector<ActivityId>{4, 2, 1});
  CHECK(groups[0].activity_count == 3);
  CHECK(groups[0].actor_count == 2);
  CHECK(groups[0].recent_actors == std::vector<EntityId>{11, 12});
  CHECK(Ids(groups[1]) == std::vector<ActivityId>{3});
  CHECK(f.engine->GetNotificationCounts(2).value() == Counts(2, 2, 2));

  CHECK(f.engine->MarkSeen(2).value() == Counts(0, 2, 2));
  groups = AllNotifications(*f.engine, 2);
  CHECK(groups[0].seen);
  CHECK_FALSE(groups[0].read);
  // A new like joins the seen group: unseen and unread again, on top.
  f.Pub(Act(5, 14, t + 5, kLike, kPhoto), To({2}));
  CHECK(f.engine->GetNotificationCounts(2).value() == Counts(1, 2, 2));
  groups = AllNotifications(*f.engine, 2);
  CHECK(groups[0].activity_count == 4);
  CHECK_FALSE(groups[0].seen);
  CHECK(groups[1].seen);
  // A like in the next time bucket starts a group of its own.
  f.Pub(Act(6, 14, t + 1000, kLike, kPhoto), To({2}));
  CHECK(f.engine->GetNotificationCounts(2).value() == Counts(2, 3, 3));
}

TEST_CASE("flat: every notification is a group of its own") {
  Fixture f(Notifying(/*aggregated=*/false));
  const Micros t = Fixture::kStart;
  for (ActivityId id = 1; id <= 5; ++id) {
    f.Pub(Act(id, 10 + id, t + static_cast<Micros>(id), kLike, kPhoto),
          To({2}));
  }
  const std::vector<FeedGroup> groups = AllNotifications(*f.engine, 2, 2);
  REQUIRE(groups.size() == 5);
  for (size_t i = 0; i < groups.size(); ++i) {
    CHECK(groups[i].key == 0);
    CHECK(Ids(groups[i]) == std::vector<ActivityId>{5 - i});
  }
  CHECK(f.engine->GetNotificationCounts(2).value() == Counts(5, 5, 5));
  REQUIRE(f.engine->MarkRead(2, {t + 3, 3}).ok());
  CHECK(f.engine->GetNotificationCounts(2).value() == Counts(4, 4, 5));
}

TEST_CASE("read implies seen; one group, or all of them") {
  Fixture f(Notifying());
  const Micros t = Fixture::kStart;
  f.Pub(Act(1, 11, t + 1, kLike, kPhoto), To({2}));
  f.Pub(Act(2, 12, t + 2, kLike, kPhoto), To({2}));
  f.Pub(Act(3, 13, t + 3, kLike, kOtherPhoto), To({2}));
  // Any entry of a group names it, not only the newest.
  absl::StatusOr<NotificationCounts> counts = f.engine->MarkRead(2, {t + 1, 1});
  REQUIRE(counts.ok());
  CHECK(*counts == Counts(1, 1, 2));
  std::vector<FeedGroup> groups = AllNotifications(*f.engine, 2);
  CHECK_FALSE(groups[0].seen);  // the other photo
  CHECK(groups[1].seen);
  CHECK(groups[1].read);
  // Marking read again changes nothing.
  CHECK(f.engine->MarkRead(2, {t + 2, 2}).value() == Counts(1, 1, 2));
  CHECK(f.engine->MarkAllRead(2).value() == Counts(0, 0, 2));
  for (const FeedGroup& g : AllNotifications(*f.engine, 2)) {
    CHECK(g.seen);
    CHECK(g.read);
  }
  // A feed that never got anything: nothing to mark, nothing recorded.
  CHECK(f.engine->MarkSeen(99).value() == Counts(0, 0, 0));
  CHECK(f.engine->MarkAllRead(99).value() == Counts(0, 0, 0));
}

TEST_CASE("the feed keeps its newest max_length notifications") {
  Fixture f(Notifying(/*aggregated=*/false, /*max_length=*/3));
  const Micros t = Fixture::kStart;
  for (ActivityId id = 1; id <= 3; ++id) {
    f.Pub(Act(id, 10 + id, t + static_cast<Micros>(id), kLike, kPhoto),
          To({2}));
  }
  f.engine->MarkAllRead(2).value();
  f.Pub(Act(4, 14, t + 4, kLike, kPhoto), To({2}));
  f.Pub(Act(5, 15, t + 5, kLike, kPhoto), To({2}));
  const std::vector<FeedGroup> groups = AllNotifications(*f.engine, 2);
  REQUIRE(groups.size() == 3);
  CHECK(Ids(groups[2]) == std::vector<ActivityId>{3});
  // The two new ones are unread; the trimmed read ones took nothing with
  // them but themselves.
  CHECK(f.engine->GetNotificationCounts(2).value() == Counts(2, 2, 3));
}

TEST_CASE("expired notifications leave their groups and the counts") {
  Fixture f(Notifying());
  const Micros t = Fixture::kStart;
  const Micros minute = kMicrosPerMinute;
  f.Pub(Act(1, 11, t + 1, kLike, kPhoto, minute), To({2}));
  f.Pub(Act(2, 12, t + 2, kLike, kPhoto), To({2}));
  f.Pub(Act(3, 13, t + 3, kLike, kOtherPhoto, minute), To({2}));
  CHECK(f.engine->GetNotificationCounts(2).value() == Counts(2, 2, 2));
  f.clock->Advance(2 * minute);
  // No EvictExpired: the call itself reclaims what expired in this feed.
  CHECK(f.engine->GetNotificationCounts(2).value() == Counts(1, 1, 1));
  const std::vector<FeedGroup> groups = AllNotifications(*f.engine, 2);
  REQUIRE(groups.size() == 1);
  CHECK(Ids(groups[0]) == std::vector<ActivityId>{2});
  CHECK(groups[0].actor_count == 1);
  // Marking an expired one read is NotFound.
  CHECK(f.engine->MarkRead(2, {t + 1, 1}).status().code() ==
        absl::StatusCode::kNotFound);
}

TEST_CASE("a retracted activity leaves every notification feed") {
  Fixture f(Notifying());
  const Micros t = Fixture::kStart;
  f.Pub(Act(1, 11, t + 1, kLike, kPhoto), To({2, 3}));
  f.Pub(Act(2, 12, t + 2, kLike, kPhoto), To({2}));
  f.engine->MarkAllRead(2).value();
  REQUIRE(f.engine->Retract(2).ok());
  std::vector<FeedGroup> groups = AllNotifications(*f.engine, 2);
  REQUIRE(groups.size() == 1);
  CHECK(Ids(groups[0]) == std::vector<ActivityId>{1});
  CHECK(groups[0].read);  // what stays keeps its state
  REQUIRE(f.engine->Retract(1).ok());
  CHECK(AllNotifications(*f.engine, 2).empty());
  CHECK(AllNotifications(*f.engine, 3).empty());
  CHECK(f.engine->GetNotificationCounts(3).value() == Counts(0, 0, 0));
  CHECK(f.engine->Stats().value().entries == 0);
}

TEST_CASE("paging: cursors, hydration, and no duplicates under arrivals") {
  Fixture f(Notifying(/*aggregated=*/false));
  const Micros t = Fixture::kStart;
  for (ActivityId id = 1; id <= 10; ++id) {
    f.Pub(Act(id, 10 + id, t + static_cast<Micros>(id), kLike, kPhoto),
          To({2}));
  }
  GroupReadOptions read;
  read.limit = 4;
  read.hydrate = true;
  absl::StatusOr<GroupPage> page = f.engine->ReadNotifications(2, read);
  REQUIRE(page.ok());
  REQUIRE(page->groups.size() == 4);
  CHECK(page->groups[0].recent[0].payload == testing::PayloadOf(10));
  // New notifications arrive above the cursor; the walk down goes on.
  f.Pub(Act(11, 21, t + 11, kLike, kPhoto), To({2}));
  std::vector<ActivityId> seen;
  for (const FeedGroup& g : page->groups) seen.push_back(Ids(g)[0]);
  while (!page->next_cursor.empty()) {
    read.cursor = page->next_cursor;
    page = f.engine->ReadNotifications(2, read);
    REQUIRE(page.ok());
    for (const FeedGroup& g : page->groups) seen.push_back(Ids(g)[0]);
  }
  CHECK(seen == std::vector<ActivityId>{10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
}

TEST_CASE("errors of the notification calls change nothing") {
  Fixture f(Notifying());
  const Micros t = Fixture::kStart;
  f.Pub(Act(1, 11, t + 1, kLike, kPhoto), To({2}));
  f.Pub(Act(2, 12, t + 2, kComment, kPhoto), To({2}));
  const NotificationCounts before = f.engine->GetNotificationCounts(2).value();

  GroupReadOptions read;
  read.limit = 0;
  CHECK(f.engine->ReadNotifications(2, read).status().code() ==
        absl::StatusCode::kInvalidArgument);
  read.limit = f.engine->options().max_page_size + 1;
  CHECK(f.engine->ReadNotifications(2, read).status().code() ==
        absl::StatusCode::kInvalidArgument);
  read.limit = 1;
  const std::string cursor = f.engine->ReadNotifications(2, read)->next_cursor;
  REQUIRE_FALSE(cursor.empty());
  // Another user's cursor, a grouped-feed cursor, garbage.
  read.cursor = cursor;
  absl::Status s = f.engine->ReadNotifications(3, read).status();
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("notification feed of 2") !=
        std::string::npos);
  read.cursor = "not a cursor";
  CHECK(f.engine->ReadNotifications(2, read).status().code() ==
        absl::StatusCode::kInvalidArgument);
  {
    // Cursors of grouped home feeds and of notification feeds are not
    // interchangeable.
    EngineOptions o = Notifying();
    o.aggregation.enabled = true;
    Fixture grouped(o);
    grouped.Fol(5, 11);
    grouped.Pub(Act(1, 11, t + 1, kLike, kPhoto), To({5}));
    grouped.Pub(Act(2, 11, t + 2, kComment, kPhoto), To({5}));
    GroupReadOptions one;
    one.limit = 1;
    const std::string home = grouped.engine->ReadGroups(5, one)->next_cursor;
    const std::string bell =
        grouped.engine->ReadNotifications(5, one)->next_cursor;
    REQUIRE_FALSE(home.empty());
    REQUIRE_FALSE(bell.empty());
    one.cursor = home;
    CHECK(grouped.engine->ReadNotifications(5, one).status().code() ==
          absl::StatusCode::kInvalidArgument);
    one.cursor = bell;
    CHECK(grouped.engine->ReadGroups(5, one).status().code() ==
          absl::StatusCode::kInvalidArgument);
  }
  // MarkRead: a negative timestamp; a key the feed does not hold.
  CHECK(f.engine->MarkRead(2, {-1, 1}).status().code() ==
        absl::StatusCode::kInvalidArgument);
  s = f.engine->MarkRead(2, {t + 1, 2}).status();
  CHECK(s.code() == absl::StatusCode::kNotFound);
  CHECK(std::string(s.message()).find("notification feed of 2") !=
        std::string::npos);
  CHECK(f.engine->MarkRead(77, {t + 1, 1}).status().code() ==
        absl::StatusCode::kNotFound);
  // Too many recipients: nothing is published.
  PublishOptions crowd;
  crowd.notify.assign(kMaxNotifyRecipients + 1, 3);
  s = f.engine->Publish(Act(3, 11, t + 3, kLike, kPhoto), crowd).status();
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("PublishOptions.notify") !=
        std::string::npos);
  CHECK(testing::Own(*f.engine, 11, {}).size() == 1);
  CHECK(f.engine->GetNotificationCounts(2).value() == before);
  CHECK(AllNotifications(*f.engine, 3).empty());
}

TEST_CASE("notification options are validated by name") {
  EngineOptions o = Notifying();
  o.notifications.max_length = 0;
  absl::Status s = FeedEngine::Create(o).status();
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("notifications.max_length") !=
        std::string::npos);
  o.notifications.max_length = kMaxTimelineLengthLimit + 1;
  CHECK(FeedEngine::Create(o).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("on_notify fires once per recipient with its new counts") {
  std::mutex mu;
  std::vector<std::pair<EntityId, NotificationCounts>> calls;
  EngineOptions o = Notifying();
  o.notifications.on_notify = [&](EntityId user, const NotificationCounts& c) {
    std::lock_guard<std::mutex> lock(mu);
    calls.emplace_back(user, c);
  };
  Fixture f(o);
  const Micros t = Fixture::kStart;
  f.Pub(Act(1, 11, t + 1, kLike, kPhoto), To({2, 3}));
  f.engine->MarkSeen(2).value();
  f.Pub(Act(2, 12, t + 2, kLike, kPhoto), To({2}));
  f.Pub(Act(3, 12, t + 3, kComment, kPhoto));  // no recipients: no call
  std::lock_guard<std::mutex> lock(mu);
  REQUIRE(calls.size() == 3);
  std::sort(calls.begin(), calls.begin() + 2,
            [](const auto& a, const auto& b) { return a.first < b.first; });
  CHECK(calls[0].first == 2);
  CHECK(calls[0].second == Counts(1, 1, 1));
  CHECK(calls[1].first == 3);
  CHECK(calls[2].first == 2);
  CHECK(calls[2].second == Counts(1, 1, 1));  // the seen group is unseen again
}

}  // namespace
}  // namespace feedcore
