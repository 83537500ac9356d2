// Grouped reads and notification feeds filtered by kind
// (GroupReadOptions::kinds), against the reference model: a group is made
// of its entries of the kinds kept, counted and listed by them and placed
// by the newest of them; a notification group keeps its seen and read
// flags; the cursor is bound to the filter; a bad filter changes nothing.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/feed_engine.h"
#include "model/feed_model.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::FeedModel;

EngineOptions Grouping() {
  EngineOptions o = testing::SocialFixture::Defaults();
  o.aggregation.enabled = true;
  o.aggregation.time_bucket = 1000;
  o.aggregation.max_group_actors = 3;
  o.aggregation.max_group_entries = 4;
  // Object 0 is a group of one; the others group by object.
  o.aggregation.group_key = [](const Activity& a) -> GroupKey {
    return a.object;
  };
  o.notifications.aggregated = true;
  o.max_timeline_length = 40;
  return o;
}

// Every group of a walk `limit` at a time, with `kinds`.
template <typename ReadFn>
std::vector<FeedGroup> Walk(ReadFn read, size_t limit, uint64_t kinds) {
  std::vector<FeedGroup> groups;
  GroupReadOptions options;
  options.limit = limit;
  options.kinds.kinds = kinds;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 1000);
    const absl::StatusOr<GroupPage> page = read(options);
    REQUIRE_MESSAGE(page.ok(), page.status());
    groups.insert(groups.end(), page->groups.begin(), page->groups.end());
    if (page->next_cursor.empty()) return groups;
    REQUIRE(page->groups.size() == limit);
    options.cursor = page->next_cursor;
  }
}

TEST_CASE("filtered grouped and notification reads match the model") {
  std::mt19937_64 rng(testing::EnvU64("FEEDCORE_MODEL_SEED", 0x67726f7570));
  constexpr EntityId kReader = 1;
  for (int round = 0; round < 30; ++round) {
    const EngineOptions options = Grouping();
    testing::SocialFixture f(options);
    FeedModel model(options);
    for (EntityId actor = 2; actor <= 4; ++actor) {
      f.Fol(kReader, actor);
      model.Follow(kReader, actor, options.default_backfill, f.clock->Now());
    }
    for (ActivityId id = 1; id <= 60; ++id) {
      Activity a = testing::MakeActivity(id, 2 + rng() % 3,
                                         f.kStart + static_cast<Micros>(id));
      a.kind = static_cast<ActivityKind>(rng() % 3);
      a.object = rng() % 3;
      PublishOptions publish;
      if (rng() % 2 == 0) publish.notify.push_back(kReader);
      f.Pub(a, publish);
      REQUIRE(model.Publish(a, publish, f.clock->Now()).ok());
      if (rng() % 10 == 0) {
        REQUIRE(f.engine->MarkSeen(kReader).ok());
        model.MarkSeen(kReader);
      }
      if (rng() % 10 == 0 && !model.notifications(kReader).empty()) {
        const FeedModel::Key top = model.notifications(kReader).rbegin()->first;
        REQUIRE(f.engine->MarkRead(kReader, {top.first, top.second}).ok());
        REQUIRE(model.MarkRead(kReader, top));
      }
    }
    for (const uint64_t kinds : {uint64_t{0b001}, uint64_t{0b010},
                                 uint64_t{0b110}, KindFilter::kEveryKind}) {
      INFO("round " << round << " kinds " << kinds);
      const size_t limit = 1 + rng() % 5;
      const std::vector<FeedGroup> groups = Walk(
          [&](const GroupReadOptions& r) {
            return f.engine->ReadGroups(kReader, r);
          },
          limit, kinds);
      CHECK(groups == model.Groups(kReader, f.clock->Now(), kinds));
      const std::vector<FeedGroup> notes = Walk(
          [&](const GroupReadOptions& r) {
            return f.engine->ReadNotifications(kReader, r);
          },
          limit, kinds);
      CHECK(notes == model.Notifications(kReader, kinds));
      for (const FeedGroup& g : groups) {
        for (const StoredEntry& e : g.recent) CHECK(((kinds >> e.kind) & 1));
      }
    }
  }
}

TEST_CASE("a filtered grouped read refuses a bad filter and a foreign cursor") {
  testing::SocialFixture f(Grouping());
  f.Fol(1, 2);
  for (ActivityId id = 1; id <= 6; ++id) {
    Activity a =
        testing::MakeActivity(id, 2, f.kStart + static_cast<Micros>(id));
    a.kind = static_cast<ActivityKind>(id % 2);
    a.object = id;  // a group each
    PublishOptions publish;
    publish.notify.push_back(1);
    f.Pub(a, publish);
  }
  GroupReadOptions read;
  read.limit = 2;
  read.kinds = KindFilter::Only({1});
  const GroupPage page = f.engine->ReadGroups(1, read).value();
  REQUIRE(page.groups.size() == 2);
  CHECK(page.groups[0].recent.front().activity_id == 5);
  CHECK(page.groups[1].recent.front().activity_id == 3);
  const GroupPage notes = f.engine->ReadNotifications(1, read).value();
  REQUIRE(!notes.next_cursor.empty());
  // The first page's cursor continues only a read of the same kinds.
  GroupReadOptions other = read;
  other.cursor = page.next_cursor;
  other.kinds = KindFilter::Except({1});
  CHECK(absl::IsInvalidArgument(f.engine->ReadGroups(1, other).status()));
  other.cursor = notes.next_cursor;
  CHECK(
      absl::IsInvalidArgument(f.engine->ReadNotifications(1, other).status()));
  other.cursor.clear();
  other.kinds = KindFilter::Only({});
  CHECK(absl::IsInvalidArgument(f.engine->ReadGroups(1, other).status()));
  other.kinds = KindFilter::Only({kMaxActivityKind + 1});
  CHECK(
      absl::IsInvalidArgument(f.engine->ReadNotifications(1, other).status()));
  // Nothing changed: the notifications are all still unseen.
  CHECK(f.engine->GetNotificationCounts(1).value().unseen == 6);
  read.cursor = page.next_cursor;
  const GroupPage last = f.engine->ReadGroups(1, read).value();
  REQUIRE(last.groups.size() == 1);
  CHECK(last.groups[0].recent.front().activity_id == 1);
  CHECK(last.next_cursor.empty());
}

}  // namespace
}  // namespace feedcore
