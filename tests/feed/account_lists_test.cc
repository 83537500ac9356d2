// Lists of accounts (FeedLists): a list reads as its members' own feeds
// merged, paged with cursors of its own and filtered by kinds and windows;
// members the owner blocks or mutes, or that block it, are left out; an
// exclusive list keeps its members out of every home read, copied or
// merged; bad calls change nothing; lists survive the stream, a change
// file and a snapshot. The model tests compare lists in random sequences
// (social_model_test).

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "feedcore/snapshot.h"
#include "feedcore/social.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"

namespace feedcore {
namespace {

using testing::IdsOf;

constexpr ListId kFriends = 7;

struct ListsFixture : testing::SocialFixture {
  explicit ListsFixture(EngineOptions options = Defaults())
      : testing::SocialFixture(std::move(options)) {}
  FeedLists& lists() { return *engine->lists(); }
  void Make(EntityId owner, ListId list, bool exclusive = false) {
    REQUIRE(lists().SetList(owner, list, {"friends", exclusive}).value());
  }
  void Add(EntityId owner, ListId list, EntityId member) {
    REQUIRE(lists().AddToList(owner, list, member).value());
  }
  std::vector<ActivityId> ReadWhole(EntityId owner, ListId list,
                                    ReadOptions read = {}) {
    std::vector<ActivityId> ids;
    for (;;) {
      const absl::StatusOr<Page> page = lists().ReadList(owner, list, read);
      REQUIRE_MESSAGE(page.ok(), page.status());
      for (const StoredEntry& e : page->entries) ids.push_back(e.activity_id);
      if (page->next_cursor.empty()) return ids;
      read.cursor = page->next_cursor;
    }
  }
  std::vector<ActivityId> Home(EntityId reader) {
    return IdsOf(testing::Timeline(*engine, reader));
  }
};

TEST_CASE("a list reads as its members' own feeds, paged") {
  ListsFixture f;
  for (ActivityId id = 1; id <= 9; ++id) {
    f.Pub(id, 2 + id % 3, f.kStart + static_cast<Micros>(id));  // 2, 3, 4
  }
  f.Make(1, kFriends);
  f.Add(1, kFriends, 2);
  f.Add(1, kFriends, 4);
  CHECK(f.lists().AddToList(1, kFriends, 4).value() == false);
  // Members need not be followed; their whole own feeds show at once.
  CHECK(f.ReadWhole(1, kFriends) == std::vector<ActivityId>{9, 8, 6, 5, 3, 2});
  ReadOptions two;
  two.limit = 2;
  CHECK(f.ReadWhole(1, kFriends, two) ==
        std::vector<ActivityId>{9, 8, 6, 5, 3, 2});
  two.order = ReadOrder::kOldestFirst;
  two.min_ts = f.kStart + 3;
  CHECK(f.ReadWhole(1, kFriends, two) ==
        std::vector<ActivityId>{3, 5, 6, 8, 9});
  CHECK(f.lists().Lists(1).value() ==
        std::vector<AccountList>{{kFriends, {"friends", false}, 2}});
  CHECK(f.lists().ListMembers(1, kFriends, {}).value().ids ==
        std::vector<EntityId>{2, 4});
  // A cursor reads only its own list.
  f.Make(1, kFriends + 1);
  ReadOptions first;
  first.limit = 1;
  const Page page = f.lists().ReadList(1, kFriends, first).value();
  ReadOptions foreign;
  foreign.cursor = page.next_cursor;
  CHECK(absl::IsInvalidArgument(
      f.lists().ReadList(1, kFriends + 1, foreign).status()));
  CHECK(absl::IsInvalidArgument(f.engine->ReadTimeline(1, foreign).status()));
  CHECK(f.lists().RemoveFromList(1, kFriends, 2).value());
  CHECK(f.ReadWhole(1, kFriends) == std::vector<ActivityId>{8, 5, 2});
  CHECK(f.lists().DeleteList(1, kFriends).value());
  CHECK(f.lists().DeleteList(1, kFriends).value() == false);
  CHECK(absl::IsNotFound(f.lists().ReadList(1, kFriends, {}).status()));
}

TEST_CASE("blocked, muted and blocking members are left out") {
  ListsFixture f;
  f.Pub(1, 2, f.kStart + 1);
  f.Pub(2, 3, f.kStart + 2);
  f.Pub(3, 4, f.kStart + 3);
  f.Make(1, kFriends);
  for (EntityId member : {2, 3, 4}) f.Add(1, kFriends, member);
  REQUIRE(f.engine->relations()->Block(1, 2).ok());
  REQUIRE(f.engine->relations()->Mute(1, 3, {}).ok());
  CHECK(f.ReadWhole(1, kFriends) == std::vector<ActivityId>{3});
  REQUIRE(f.engine->relations()->Block(4, 1).ok());
  CHECK(f.ReadWhole(1, kFriends).empty());
  REQUIRE(f.engine->relations()->Unmute(1, 3).ok());
  CHECK(f.ReadWhole(1, kFriends) == std::vector<ActivityId>{2});
}

TEST_CASE("an exclusive list keeps its members out of the home timeline") {
  for (size_t threshold : {0, 1}) {
    INFO("hybrid threshold " << threshold);
    EngineOptions options = ListsFixture::Defaults();
    options.hybrid_fanout_threshold = threshold;
    options.aggregation.enabled = true;
    ListsFixture f(options);
    f.Fol(1, 2);
    f.Fol(1, 3);
    f.Fol(5, 2);  // 2 has two followers: merged at read past threshold 1
    for (ActivityId id = 1; id <= 6; ++id) {
      f.Pub(id, 2 + id % 2, f.kStart + static_cast<Micros>(id));  // 3, 2, 3...
    }
    f.Make(1, kFriends, /*exclusive=*/true);
    f.Add(1, kFriends, 2);
    CHECK(f.Home(1) == std::vector<ActivityId>{5, 3, 1});
    CHECK(f.ReadWhole(1, kFriends) == std::vector<ActivityId>{6, 4, 2});
    // Pages stay full, counts and groups agree.
    ReadOptions one;
    one.limit = 1;
    CHECK(IdsOf(testing::Timeline(*f.engine, 1, one)) ==
          std::vector<ActivityId>{5, 3, 1});
    CHECK(f.engine->CountNewer(1, {f.kStart, 0}, 100).value() == 3);
    CHECK(f.engine->ReadGroups(1, {}).value().groups.size() == 3);
    // Not exclusive any more: everything shows again.
    REQUIRE(f.lists().SetList(1, kFriends, {"friends", false}).ok());
    CHECK(f.Home(1) == std::vector<ActivityId>{6, 5, 4, 3, 2, 1});
    REQUIRE(f.lists().SetList(1, kFriends, {"friends", true}).ok());
    REQUIRE(f.lists().RemoveFromList(1, kFriends, 2).value());
    CHECK(f.Home(1) == std::vector<ActivityId>{6, 5, 4, 3, 2, 1});
    // Other readers never notice.
    CHECK(f.Home(5) == std::vector<ActivityId>{6, 4, 2});
  }
}

TEST_CASE("a bad list call is refused and changes nothing") {
  ListsFixture f;
  CHECK(
      absl::IsInvalidArgument(f.lists().SetList(1, 0, {"x", false}).status()));
  CHECK(absl::IsInvalidArgument(f.lists().SetList(1, 1, {"", false}).status()));
  CHECK(absl::IsInvalidArgument(
      f.lists()
          .SetList(1, 1, {std::string(kMaxListNameBytes + 1, 'x'), false})
          .status()));
  CHECK(f.lists().Lists(1).value().empty());
  CHECK(absl::IsNotFound(f.lists().AddToList(1, 1, 2).status()));
  CHECK(absl::IsNotFound(f.lists().RemoveFromList(1, 1, 2).status()));
  CHECK(absl::IsNotFound(f.lists().ListMembers(1, 1, {}).status()));
  for (ListId id = 1; id <= kMaxListsPerOwner; ++id) f.Make(1, id);
  const absl::Status full = f.lists().SetList(1, 1000, {"x", false}).status();
  CHECK(absl::IsResourceExhausted(full));
  CHECK(f.lists().Lists(1).value().size() == kMaxListsPerOwner);
  for (EntityId member = 1; member <= kMaxListMembers; ++member) {
    f.Add(1, 1, member);
  }
  CHECK(absl::IsResourceExhausted(
      f.lists().AddToList(1, 1, kMaxListMembers + 1).status()));
  CHECK(f.lists().AddToList(1, 1, 1).value() == false);  // there already
  ListOptions zero;
  zero.limit = 0;
  CHECK(absl::IsInvalidArgument(f.lists().ListMembers(1, 1, zero).status()));
  ReadOptions bad;
  bad.cursor = "nonsense";
  CHECK(absl::IsInvalidArgument(f.lists().ReadList(1, 1, bad).status()));
}

TEST_CASE("lists survive the stream, a change file and a snapshot") {
  testing::TempPath snapshot("lists-snapshot");
  testing::TempPath changes("lists-changes");
  auto clock = std::make_shared<ManualClock>(testing::SocialFixture::kStart);
  std::shared_ptr<ChangeStream> stream = ChangeStream::Create({}).value();
  EngineOptions options = ListsFixture::Defaults();
  options.change_stream = stream;
  std::unique_ptr<InProcessFeedEngine> source =
      testing::NewManualEngine(clock, options);
  REQUIRE(source->Follow(1, 2).ok());
  REQUIRE(source->Follow(1, 3).ok());
  REQUIRE(source->SetList(1, 1, {"work", true}).ok());
  REQUIRE(source->AddToList(1, 1, 2).ok());
  REQUIRE(source->AddToList(1, 1, 9).ok());
  REQUIRE(SaveSnapshot(*source, snapshot.path).ok());
  REQUIRE(source->SetList(1, 2, {"play", false}).ok());
  REQUIRE(source->AddToList(1, 2, 3).ok());
  REQUIRE(source->RemoveFromList(1, 1, 9).ok());
  REQUIRE(source->SetList(1, 3, {"gone", false}).ok());
  REQUIRE(source->DeleteList(1, 3).ok());
  for (ActivityId id = 1; id <= 4; ++id) {
    REQUIRE(
        source
            ->Publish(testing::MakeActivity(id, 2 + id % 2, clock->Now() + id))
            .ok());
  }
  const std::vector<AccountList> want_lists = source->Lists(1).value();
  REQUIRE(want_lists.size() == 2);
  const std::vector<ActivityId> want_home =
      IdsOf(testing::Timeline(*source, 1));
  REQUIRE(want_home == std::vector<ActivityId>{3, 1});
  const std::vector<ChangeRecordPtr> records =
      stream->NewReader(StreamPosition::TrimHorizon())
          .value()
          ->Read(1000)
          .value();
  EngineOptions replica_options = ListsFixture::Defaults();
  replica_options.clock = clock;
  std::unique_ptr<Replica> replica =
      LoadSnapshot(snapshot.path, replica_options).value();
  for (const ChangeRecordPtr& r : records) {
    const absl::Status applied = replica->Apply(*r);
    REQUIRE_MESSAGE(applied.ok(), applied);
  }
  CHECK(replica->engine().Lists(1).value() == want_lists);
  CHECK(IdsOf(testing::Timeline(replica->engine(), 1)) == want_home);
  CHECK(replica->engine().ListMembers(1, 1, {}).value().ids ==
        std::vector<EntityId>{2});
  testing::CheckChangeFileRoundTrip(changes.path, records);
}

}  // namespace
}  // namespace feedcore
