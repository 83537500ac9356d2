// Tests of grouped reads (FeedEngine::ReadGroups): the default key (verb,
// object, time bucket) and its bucket boundaries, a custom key function,
// group keys of low-level inserts, bounded actor and entry lists with exact
// counts, a group moving to the top, paging while activity arrives,
// retraction, unfollow, cap and expiry inside groups, hybrid readers, the
// change stream and snapshots, and every error.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/snapshot.h"
#include "model/feed_model.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace doctest {
template <>
struct StringMaker<feedcore::FeedGroup> {
  static String convert(const feedcore::FeedGroup& g) {
    std::string text = "{key " + std::to_string(g.key) + ", " +
                       std::to_string(g.activity_count) + " activities, " +
                       std::to_string(g.actor_count) + " actors, ids";
    for (const auto& e : g.recent) text += " " + std::to_string(e.activity_id);
    return (text + "}").c_str();
  }
};
}  // namespace doctest

namespace feedcore {
namespace {

using testing::AllGroups;
using testing::ReferenceGroups;
using testing::WholeTimeline;
using Fixture = testing::SocialFixture;
constexpr uint64_t kLike = 1;
constexpr uint64_t kComment = 2;

EngineOptions Grouped() {
  EngineOptions o = Fixture::Defaults();
  o.aggregation.enabled = true;
  o.aggregation.time_bucket = 1000;
  o.aggregation.max_group_actors = 3;
  o.aggregation.max_group_entries = 4;
  return o;
}

Activity Act(ActivityId id, EntityId actor, Micros ts, uint64_t verb,
             EntityId object) {
  Activity a = testing::MakeActivity(id, actor, ts);
  a.verb = verb;
  a.object = object;
  return a;
}

std::vector<ActivityId> Ids(const FeedGroup& g) {
  std::vector<ActivityId> ids;
  for (const StoredEntry& e : g.recent) ids.push_back(e.activity_id);
  return ids;
}

// Checks the engine's groups of `owner` against the reference worked out
// from its flat timeline, for several page sizes.
void CheckAgainstReference(const InProcessFeedEngine& engine, EntityId owner) {
  const AggregationOptions& a = engine.options().aggregation;
  const std::vector<FeedGroup> want = ReferenceGroups(
      WholeTimeline(engine, owner), a.max_group_actors, a.max_group_entries);
  for (size_t limit : {size_t{1}, size_t{2}, size_t{7}, size_t{1000}}) {
    CAPTURE(limit);
    CHECK(AllGroups(engine, owner, limit) == want);
  }
}

TEST_CASE("activities with the same verb, object and bucket form one group") {
  Fixture f(Grouped());
  constexpr EntityId kReader = 1;
  for (EntityId actor : {10, 11, 12, 13}) f.Fol(kReader, actor);
  f.Pub(Act(1, 10, 100, kLike, 500));
  f.Pub(Act(2, 11, 200, kLike, 500));
  f.Pub(Act(3, 12, 300, kComment, 500));  // other verb
  f.Pub(Act(4, 13, 400, kLike, 501));     // other object
  f.Pub(Act(5, 12, 500, kLike, 500));
  f.Pub(Act(6, 10, 999, kLike, 500));   // last microsecond of bucket 0
  f.Pub(Act(7, 11, 1000, kLike, 500));  // first of bucket 1
  f.Pub(Act(8, 13, 1100, 0, 0));        // no verb, no object: ungrouped
  f.Pub(Act(9, 13, 1200, 0, 0));

  const std::vector<FeedGroup> groups = AllGroups(*f.engine, kReader, 100);
  REQUIRE(groups.size() == 6);
  CHECK(Ids(groups[0]) == std::vector<ActivityId>{9});
  CHECK(groups[0].key == 0);
  CHECK(Ids(groups[1]) == std::vector<ActivityId>{8});
  CHECK(Ids(groups[2]) == std::vector<ActivityId>{7});
  const FeedGroup& likes = groups[3];
  CHECK(Ids(likes) == std::vector<ActivityId>{6, 5, 2, 1});
  CHECK(likes.activity_count == 4);
  CHECK(likes.actor_count == 3);
  CHECK(likes.recent_actors == std::vector<EntityId>{10, 12, 11});
  CHECK(likes.first_ts == 100);
  CHECK(likes.last_ts == 999);
  CHECK(likes.key != 0);
  CHECK(likes.recent[0].group == likes.key);
  CHECK(Ids(groups[4]) == std::vector<ActivityId>{4});
  CHECK(Ids(groups[5]) == std::vector<ActivityId>{3});
  CHECK(groups[2].key != likes.key);  // the next bucket is another group
  // Flat reads carry the same group keys.
  for (const StoredEntry& e : WholeTimeline(*f.engine, kReader)) {
    if (e.activity_id == 6 || e.activity_id == 1) CHECK(e.group == likes.key);
  }
  CheckAgainstReference(*f.engine, kReader);
}

TEST_CASE("lists are bounded, counts stay exact") {
  Fixture f(Grouped());
  constexpr EntityId kReader = 1;
  for (EntityId actor = 10; actor < 20; ++actor) f.Fol(kReader, actor);
  // 10 actors like the same object, actor 10 three times.
  ActivityId id = 1;
  for (EntityId actor = 10; actor < 20; ++actor) {
    f.Pub(Act(id, actor, static_cast<Micros>(id), kLike, 7));
    ++id;
  }
  for (int i = 0; i < 3; ++i) {
    f.Pub(Act(id, 10, static_cast<Micros>(id), kLike, 7));
    ++id;
  }
  const std::vector<FeedGroup> groups = AllGroups(*f.engine, kReader, 10);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].activity_count == 13);
  CHECK(groups[0].actor_count == 10);
  CHECK(groups[0].recent_actors == std::vector<EntityId>{10, 19, 18});
  CHECK(Ids(groups[0]) == std::vector<ActivityId>{13, 12, 11, 10});
  CHECK(groups[0].first_ts == 1);
  CHECK(groups[0].last_ts == 13);
}

TEST_CASE("a custom key function decides the groups") {
  EngineOptions o = Grouped();
  int calls = 0;
  // Group by actor alone (one call per publish, not per follower).
  o.aggregation.group_key = [&calls](const Activity& a) -> GroupKey {
    ++calls;
    return a.actor + 1000;
  };
  Fixture f(o);
  for (EntityId reader = 1; reader <= 5; ++reader) f.Fol(reader, 10);
  f.Fol(1, 11);
  f.Pub(Act(1, 10, 100, kLike, 1));
  f.Pub(Act(2, 11, 200, kComment, 2));
  f.Pub(Act(3, 10, 300, kComment, 3));
  CHECK(calls == 3);
  const std::vector<FeedGroup> groups = AllGroups(*f.engine, 1, 10);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].key == 1010);
  CHECK(Ids(groups[0]) == std::vector<ActivityId>{3, 1});
  CHECK(groups[1].key == 1011);
}

TEST_CASE("low-level inserts group by the entry's group key") {
  Fixture f(Grouped());
  auto put = [&](Micros ts, ActivityId id, EntityId actor, GroupKey group) {
    REQUIRE(f.engine->Insert(1, {ts, id, actor, group}).ok());
  };
  put(10, 1, 5, 77);
  put(20, 2, 6, 0);
  put(30, 3, 7, 77);
  put(40, 4, 8, 78);
  std::vector<FeedGroup> groups = AllGroups(*f.engine, 1, 10);
  REQUIRE(groups.size() == 3);
  CHECK(Ids(groups[0]) == std::vector<ActivityId>{4});
  CHECK(Ids(groups[1]) == std::vector<ActivityId>{3, 1});
  CHECK(Ids(groups[2]) == std::vector<ActivityId>{2});
  // Overwriting a key may move it to another group.
  put(30, 3, 7, 78);
  groups = AllGroups(*f.engine, 1, 10);
  REQUIRE(groups.size() == 3);
  CHECK(Ids(groups[0]) == std::vector<ActivityId>{4, 3});
  CHECK(Ids(groups[1]) == std::vector<ActivityId>{2});
  CHECK(Ids(groups[2]) == std::vector<ActivityId>{1});
  CheckAgainstReference(*f.engine, 1);
}

TEST_CASE("an engine that does not aggregate drops group keys") {
  Fixture f;
  REQUIRE(f.engine->Insert(1, {10, 1, 5, 77}).ok());
  CHECK(WholeTimeline(*f.engine, 1)[0].group == 0);
  absl::StatusOr<GroupPage> page = f.engine->ReadGroups(1, {});
  CHECK(page.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(page.status().message()).find("aggregation.enabled") !=
        std::string::npos);
}

TEST_CASE("Stats counts the group index, and gives it back") {
  Fixture flat;
  Fixture grouped(Grouped());
  const size_t empty = grouped.engine->Stats().value().bytes_used;
  CHECK(flat.engine->Stats().value().bytes_used == empty);
  for (ActivityId id = 1; id <= 300; ++id) {
    // Groups of one to three entries, and ungrouped ones.
    const TimelineEntry entry{static_cast<Micros>(id), id, 1 + id % 7,
                              id % 4 == 0 ? 0 : 1 + id / 3};
    REQUIRE(flat.engine->Insert(1, entry).ok());
    REQUIRE(grouped.engine->Insert(1, entry).ok());
  }
  // The index, and the node's 8 bytes for the key, are more than nothing.
  CHECK(grouped.engine->Stats().value().bytes_used >
        flat.engine->Stats().value().bytes_used + 300 * 8 + 100 * 64);
  for (ActivityId id = 1; id <= 300; ++id) {
    REQUIRE(grouped.engine->Remove(1, {static_cast<Micros>(id), id}).ok());
  }
  CHECK(grouped.engine->Stats().value().bytes_used == empty);
}

TEST_CASE("a group moves to the top when an activity joins it") {
  Fixture f(Grouped());
  f.Fol(1, 10);
  f.Pub(Act(1, 10, 100, kLike, 1));
  f.Pub(Act(2, 10, 200, kLike, 2));
  f.Pub(Act(3, 10, 300, kLike, 3));
  CHECK(Ids(AllGroups(*f.engine, 1, 10)[0]) == std::vector<ActivityId>{3});
  f.Pub(Act(4, 10, 400, kLike, 1));
  const std::vector<FeedGroup> groups = AllGroups(*f.engine, 1, 10);
  REQUIRE(groups.size() == 3);
  CHECK(Ids(groups[0]) == std::vector<ActivityId>{4, 1});
  CHECK(Ids(groups[1]) == std::vector<ActivityId>{3});
  CHECK(Ids(groups[2]) == std::vector<ActivityId>{2});
}

TEST_CASE("paging while activity arrives: no duplicates, nothing skipped") {
  Fixture f(Grouped());
  f.Fol(1, 10);
  for (ActivityId id = 1; id <= 20; ++id) {
    f.Pub(Act(id, 10, static_cast<Micros>(id) * 10, kLike, id));
  }
  GroupReadOptions read;
  read.limit = 5;
  absl::StatusOr<GroupPage> first = f.engine->ReadGroups(1, read);
  REQUIRE(first.ok());
  REQUIRE(first->groups.size() == 5);
  // A group already read and one not yet read gain activities, and new
  // groups arrive; the next pages continue below the cursor.
  f.Pub(Act(21, 10, 900, kLike, 19));
  f.Pub(Act(22, 10, 910, kLike, 3));
  f.Pub(Act(23, 10, 920, kLike, 100));
  std::vector<ActivityId> objects_seen;
  for (const FeedGroup& g : first->groups) {
    objects_seen.push_back(g.recent.front().activity_id);
  }
  read.cursor = first->next_cursor;
  for (;;) {
    absl::StatusOr<GroupPage> page = f.engine->ReadGroups(1, read);
    REQUIRE(page.ok());
    for (const FeedGroup& g : page->groups) {
      objects_seen.push_back(g.recent.back().activity_id);
    }
    if (page->next_cursor.empty()) break;
    read.cursor = page->next_cursor;
  }
  // Groups of objects 20..16 came first; then 15..4 and 2..1 (object 3
  // moved above the cursor).
  std::vector<ActivityId> want = {20, 19, 18, 17, 16};
  for (ActivityId id = 15; id >= 1; --id) {
    if (id != 3) want.push_back(id);
  }
  CHECK(objects_seen == want);
  // A read from the top finds the moved group first.
  CHECK(Ids(AllGroups(*f.engine, 1, 3)[0]) == std::vector<ActivityId>{23});
  CHECK(Ids(AllGroups(*f.engine, 1, 3)[1]) == std::vector<ActivityId>{22, 3});
}

TEST_CASE("retract, unfollow and the cap act on entries inside groups") {
  EngineOptions o = Grouped();
  o.max_timeline_length = 6;
  Fixture f(o);
  f.Fol(1, 10);
  f.Fol(1, 11);
  f.Pub(Act(1, 10, 100, kLike, 1));
  f.Pub(Act(2, 11, 110, kLike, 1));
  f.Pub(Act(3, 10, 120, kLike, 1));
  f.Pub(Act(4, 11, 130, kComment, 1));
  REQUIRE(f.engine->Retract(3).ok());
  std::vector<FeedGroup> groups = AllGroups(*f.engine, 1, 10);
  REQUIRE(groups.size() == 2);
  CHECK(Ids(groups[1]) == std::vector<ActivityId>{2, 1});
  CHECK(groups[1].activity_count == 2);
  CHECK(groups[1].actor_count == 2);

  f.Unf(1, 11);
  groups = AllGroups(*f.engine, 1, 10);
  REQUIRE(groups.size() == 1);  // the comment group is gone
  CHECK(Ids(groups[0]) == std::vector<ActivityId>{1});
  CHECK(groups[0].actor_count == 1);
  CHECK(groups[0].recent_actors == std::vector<EntityId>{10});

  // Six more activities: the cap drops activity 1, its group goes.
  for (ActivityId id = 10; id < 16; ++id) {
    f.Pub(Act(id, 10, static_cast<Micros>(id) * 100, kComment, 2));
  }
  groups = AllGroups(*f.engine, 1, 10);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].activity_count == 6);
  CheckAgainstReference(*f.engine, 1);
}

TEST_CASE("expired activities leave their groups before they are reclaimed") {
  Fixture f(Grouped());
  f.Fol(1, 10);
  Activity a = Act(1, 10, 100, kLike, 1);
  a.ttl = 1000;
  f.Pub(a);
  f.Pub(Act(2, 10, 110, kLike, 1));
  Activity b = Act(3, 10, 120, kLike, 2);
  b.ttl = 1000;
  f.Pub(b);
  CHECK(AllGroups(*f.engine, 1, 10).size() == 2);
  f.clock->Advance(1000);  // 1 and 3 expire; nothing reclaimed yet
  std::vector<FeedGroup> groups = AllGroups(*f.engine, 1, 10);
  REQUIRE(groups.size() == 1);
  CHECK(Ids(groups[0]) == std::vector<ActivityId>{2});
  CHECK(groups[0].activity_count == 1);
  CheckAgainstReference(*f.engine, 1);
  CHECK(f.engine->EvictExpired(100).value() > 0);
  CHECK(AllGroups(*f.engine, 1, 10) == groups);
}

TEST_CASE("a reader of merged-at-read actors gets their activities grouped") {
  EngineOptions o = Grouped();
  o.hybrid_fanout_threshold = 2;
  Fixture f(o);
  for (EntityId reader = 1; reader <= 3; ++reader) f.Fol(reader, 10);
  f.Fol(1, 11);
  f.Pub(Act(1, 11, 100, kLike, 1));
  f.Pub(Act(2, 10, 110, kLike, 1));  // actor 10 is merged at read
  f.Pub(Act(3, 11, 120, kLike, 1));
  f.Pub(Act(4, 10, 130, kComment, 1));
  const std::vector<FeedGroup> groups = AllGroups(*f.engine, 1, 10);
  REQUIRE(groups.size() == 2);
  CHECK(Ids(groups[0]) == std::vector<ActivityId>{4});
  CHECK(Ids(groups[1]) == std::vector<ActivityId>{3, 2, 1});
  CHECK(groups[1].actor_count == 2);
  CheckAgainstReference(*f.engine, 1);
}

TEST_CASE("errors of ReadGroups change nothing and say what is wrong") {
  Fixture f(Grouped());
  f.Fol(1, 10);
  f.Fol(2, 10);
  for (ActivityId id = 1; id <= 3; ++id) {
    f.Pub(Act(id, 10, static_cast<Micros>(id), kLike, id));
  }
  GroupReadOptions read;
  read.limit = 0;
  CHECK(f.engine->ReadGroups(1, read).status().code() ==
        absl::StatusCode::kInvalidArgument);
  read.limit = f.engine->options().max_page_size + 1;
  absl::Status status = f.engine->ReadGroups(1, read).status();
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(status.message()).find("limit") != std::string::npos);

  read.limit = 1;
  absl::StatusOr<GroupPage> page = f.engine->ReadGroups(1, read);
  REQUIRE(page.ok());
  REQUIRE(!page->next_cursor.empty());
  read.cursor = page->next_cursor;
  status = f.engine->ReadGroups(2, read).status();
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(status.message()).find("of 1, not of 2") !=
        std::string::npos);

  read.cursor = "garbage";
  CHECK(f.engine->ReadGroups(1, read).status().code() ==
        absl::StatusCode::kInvalidArgument);
  // A timeline cursor is not a group cursor.
  ReadOptions flat;
  flat.limit = 1;
  absl::StatusOr<Page> flat_page = f.engine->ReadTimeline(1, flat);
  REQUIRE(flat_page.ok());
  read.cursor = flat_page->next_cursor;
  status = f.engine->ReadGroups(1, read).status();
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(status.message()).find("group cursor") !=
        std::string::npos);
  CheckAgainstReference(*f.engine, 1);
  // Unknown readers read as empty.
  read.cursor.clear();
  page = f.engine->ReadGroups(99, read);
  REQUIRE(page.ok());
  CHECK(page->groups.empty());
  CHECK(page->next_cursor.empty());
}

TEST_CASE("aggregation options are validated by name") {
  auto create = [](auto change) {
    EngineOptions o = Grouped();
    change(o.aggregation);
    return FeedEngine::Create(o).status();
  };
  struct Case {
    const char* field;
    absl::Status status;
  };
  const Case cases[] = {
      {"time_bucket", create([](auto& a) { a.time_bucket = 0; })},
      {"time_bucket", create([](auto& a) { a.time_bucket = kMaxTtl + 1; })},
      {"max_group_actors", create([](auto& a) { a.max_group_actors = 0; })},
      {"max_group_actors",
       create([](auto& a) { a.max_group_actors = kMaxGroupListLimit + 1; })},
      {"max_group_entries", create([](auto& a) { a.max_group_entries = 0; })},
      {"max_group_entries",
       create([](auto& a) { a.max_group_entries = kMaxGroupListLimit + 1; })},
  };
  for (const Case& c : cases) {
    CAPTURE(c.field);
    CHECK(c.status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(c.status.message()).find(c.field) != std::string::npos);
  }
}

TEST_CASE("group keys survive the change stream and snapshots") {
  EngineOptions o = Grouped();
  auto stream = ChangeStream::Create({});
  REQUIRE(stream.ok());
  o.change_stream = *stream;
  Fixture f(o);
  for (EntityId reader = 1; reader <= 4; ++reader) f.Fol(reader, 10);
  for (ActivityId id = 1; id <= 30; ++id) {
    f.Pub(Act(id, 10, static_cast<Micros>(id) * 10, kLike, id % 4));
  }
  REQUIRE(f.engine->Insert(2, {5, 99, 3, 4242}).ok());
  REQUIRE(f.engine->Retract(9).ok());

  testing::TempPath file("grouped-snapshot");
  REQUIRE(SaveSnapshot(*f.engine, file.path).ok());
  EngineOptions replica_options = Grouped();
  replica_options.clock = f.clock;
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(file.path, replica_options);
  REQUIRE_MESSAGE(replica.ok(), replica.status());
  // More changes after the snapshot reach the replica through the stream.
  auto reader =
      (*stream)->NewReader(StreamPosition::AtSequence((*replica)->sequence()));
  REQUIRE(reader.ok());
  f.Pub(Act(31, 10, 400, kLike, 1));
  REQUIRE(f.engine->Retract(5).ok());
  for (;;) {
    absl::StatusOr<std::vector<ChangeRecordPtr>> records =
        (*reader)->Read(1000);
    REQUIRE(records.ok());
    if (records->empty()) break;
    for (const ChangeRecordPtr& r : *records) {
      REQUIRE((*replica)->Apply(*r).ok());
    }
  }
  for (EntityId reader_id = 1; reader_id <= 4; ++reader_id) {
    CAPTURE(reader_id);
    CHECK(AllGroups((*replica)->engine(), reader_id, 3) ==
          AllGroups(*f.engine, reader_id, 3));
  }
  CHECK(AllGroups(*f.engine, 2, 100).back().key == 4242);
}

}  // namespace
}  // namespace feedcore
