// Activity kinds: every copy of an activity carries its kind, and every
// read keeps the kinds it asks for with the page length, cursors and cap
// of an unfiltered read; the kinds reach back-fill, merged-at-read
// followees, grouped reads, pins and ranked reads, and survive the change
// stream, a change file and a snapshot. A follow delivers the kinds it
// names, copied, merged or rebuilt alike.

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "feedcore/change_file.h"
#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "feedcore/snapshot.h"
#include "feedcore/social.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"

namespace feedcore {
namespace {

using testing::IdsOf;
using testing::MakeActivity;

constexpr ActivityKind kPost = 0;
constexpr ActivityKind kRepost = 1;
constexpr ActivityKind kLive = 2;

// Activity `id` of `actor` at `ts` of `kind`.
Activity Kinded(ActivityId id, EntityId actor, Micros ts, ActivityKind kind) {
  Activity a = MakeActivity(id, actor, ts);
  a.kind = kind;
  return a;
}

// The kind of activity `id` in these tests: post, repost, live, post...
ActivityKind KindOf(ActivityId id) {
  return static_cast<ActivityKind>(id % 3 == 0   ? kLive
                                   : id % 3 == 2 ? kRepost
                                                 : kPost);
}

struct KindsFixture : testing::SocialFixture {
  explicit KindsFixture(EngineOptions options = Defaults())
      : testing::SocialFixture(std::move(options)) {}

  // Actor 2 publishes activities 1..n, one a microsecond, followed by 1.
  void PublishMixed(ActivityId n, EntityId actor = 2) {
    for (ActivityId id = 1; id <= n; ++id) {
      Pub(Kinded(id, actor, kStart + static_cast<Micros>(id), KindOf(id)));
    }
  }
};

ReadOptions Keeping(KindFilter kinds, size_t limit = 3,
                    ReadOrder order = ReadOrder::kNewestFirst) {
  ReadOptions read;
  read.kinds = kinds;
  read.limit = limit;
  read.order = order;
  return read;
}

TEST_CASE("a read keeps the kinds it asks for, a full page at a time") {
  KindsFixture f;
  f.Fol(1, 2);
  f.PublishMixed(20);
  // Reposts are 2, 5, 8, ...; live streams 3, 6, 9, ...
  const std::vector<ActivityId> reposts = {20, 17, 14, 11, 8, 5, 2};
  const std::vector<ActivityId> no_reposts = {19, 18, 16, 15, 13, 12, 10,
                                              9,  7,  6,  4,  3,  1};
  CHECK(IdsOf(testing::Timeline(
            *f.engine, 1, Keeping(KindFilter::Only({kRepost})))) == reposts);
  CHECK(IdsOf(testing::Timeline(*f.engine, 1,
                                Keeping(KindFilter::Except({kRepost}), 4))) ==
        no_reposts);
  const std::vector<StoredEntry> live = testing::Timeline(
      *f.engine, 1,
      Keeping(KindFilter::Only({kLive}), 2, ReadOrder::kOldestFirst));
  CHECK(IdsOf(live) == std::vector<ActivityId>{3, 6, 9, 12, 15, 18});
  for (const StoredEntry& e : live) CHECK(e.kind == kLive);
  // Every entry says its kind, filtered or not; the own and world feeds
  // filter alike.
  for (const StoredEntry& e : testing::Timeline(*f.engine, 1, Keeping({}, 7))) {
    CHECK(e.kind == KindOf(e.activity_id));
  }
  CHECK(IdsOf(testing::Own(*f.engine, 2,
                           Keeping(KindFilter::Only({kRepost})))) == reposts);
  CHECK(IdsOf(testing::World(
            *f.engine, Keeping(KindFilter::Only({kRepost}), 5))) == reposts);
  // A kind nobody published reads as an empty page, not an error.
  const Page none =
      f.engine->ReadTimeline(1, Keeping(KindFilter::Only({9}))).value();
  CHECK(none.entries.empty());
  CHECK(none.next_cursor.empty());
}

TEST_CASE("a cursor continues only a read of the same kinds") {
  KindsFixture f;
  f.Fol(1, 2);
  f.PublishMixed(12);
  const Page first =
      f.engine->ReadTimeline(1, Keeping(KindFilter::Only({kRepost}), 2))
          .value();
  REQUIRE(!first.next_cursor.empty());
  ReadOptions other = Keeping(KindFilter::Only({kLive}), 2);
  other.cursor = first.next_cursor;
  const absl::Status refused = f.engine->ReadTimeline(1, other).status();
  CHECK_MESSAGE(absl::IsInvalidArgument(refused), refused);
  CHECK(refused.message().find("kinds") != std::string::npos);
  other.kinds = {};
  CHECK(absl::IsInvalidArgument(f.engine->ReadTimeline(1, other).status()));
  // An unfiltered cursor does not continue a filtered read either.
  const Page all = f.engine->ReadTimeline(1, Keeping({}, 2)).value();
  ReadOptions filtered = Keeping(KindFilter::Only({kRepost}), 2);
  filtered.cursor = all.next_cursor;
  CHECK(absl::IsInvalidArgument(f.engine->ReadTimeline(1, filtered).status()));
}

TEST_CASE("the cap counts every kind, and a filter reads what it keeps") {
  EngineOptions o = KindsFixture::Defaults();
  o.max_timeline_length = 6;
  KindsFixture f(o);
  f.Fol(1, 2);
  f.PublishMixed(12);
  // The timeline holds 7..12 whatever a read keeps.
  CHECK(IdsOf(testing::Timeline(*f.engine, 1,
                                Keeping(KindFilter::Only({kPost}), 1))) ==
        std::vector<ActivityId>{10, 7});
  CHECK(testing::Timeline(*f.engine, 1, Keeping({}, 4)).size() == 6);
}

TEST_CASE("merged-at-read followees, back-fill and inserts keep the kind") {
  EngineOptions o = KindsFixture::Defaults();
  o.hybrid_fanout_threshold = 1;
  KindsFixture f(o);
  f.Fol(1, 2);
  f.Fol(3, 2);  // two followers: actor 2 is merged at read from now on
  f.PublishMixed(9);
  f.Fol(4, 5);
  for (ActivityId id = 11; id <= 14; ++id) {
    f.Pub(Kinded(id, 5, f.kStart + 20 + static_cast<Micros>(id), KindOf(id)));
  }
  CHECK(IdsOf(testing::Timeline(*f.engine, 1,
                                Keeping(KindFilter::Only({kLive}), 1))) ==
        std::vector<ActivityId>{9, 6, 3});
  // Actor 4 also follows the merged actor 2 and reads both kinds mixed.
  f.Fol(4, 2, /*backfill=*/100);
  CHECK(IdsOf(testing::Timeline(*f.engine, 4,
                                Keeping(KindFilter::Only({kRepost}), 2))) ==
        std::vector<ActivityId>{14, 11, 8, 5, 2});
  // A back-filled copy from a copied actor keeps its kind.
  f.Fol(6, 5, /*backfill=*/10);
  for (const StoredEntry& e :
       testing::Timeline(*f.engine, 6, Keeping({}, 10))) {
    CHECK(e.kind == KindOf(e.activity_id));
  }
  // The low-level inserts take a kind too.
  TimelineEntry entry{f.kStart + 100, 77, 8};
  entry.kind = kLive;
  REQUIRE(f.engine->Insert(7, entry).ok());
  REQUIRE(
      f.engine->InsertBatch({{7, {f.kStart + 101, 78, 8, 0, kRepost}}}).ok());
  const std::vector<StoredEntry> seven =
      testing::Timeline(*f.engine, 7, Keeping({}, 10));
  REQUIRE(seven.size() == 2);
  CHECK(seven[0].kind == kRepost);
  CHECK(seven[1].kind == kLive);
}

TEST_CASE("grouped reads, notifications, pins and ranked reads show kinds") {
  EngineOptions o = KindsFixture::Defaults();
  o.aggregation.enabled = true;
  o.aggregation.time_bucket = 1000;
  KindsFixture f(o);
  f.Fol(1, 2);
  PublishOptions notify;
  notify.notify = {9};
  f.Pub(Kinded(1, 2, f.kStart + 1, kLive), notify);
  f.Pub(Kinded(2, 2, f.kStart + 2, kRepost));
  for (const FeedGroup& g : testing::AllGroups(*f.engine, 1, 10)) {
    for (const StoredEntry& e : g.recent) {
      CHECK(e.kind == (e.activity_id == 1 ? kLive : kRepost));
    }
  }
  const GroupPage notes = f.engine->ReadNotifications(9, {}).value();
  REQUIRE(notes.groups.size() == 1);
  CHECK(notes.groups[0].recent.at(0).kind == kLive);
  REQUIRE(f.engine->Pin(2, 2).value());
  const std::vector<StoredEntry> pinned =
      f.engine->ReadPinned(2, false).value();
  REQUIRE(pinned.size() == 1);
  CHECK(pinned[0].kind == kRepost);

  RankedReadOptions ranked;
  ranked.limit = 1;
  ranked.kinds = KindFilter::Only({kLive});
  const RankedPage page = f.engine->ReadRanked(1, ranked).value();
  REQUIRE(page.entries.size() == 1);
  CHECK(page.entries[0].entry.activity_id == 1);
  CHECK(page.next_cursor.empty());
  // A ranked cursor continues only a walk of the same kinds.
  ranked.kinds = {};
  const RankedPage all = f.engine->ReadRanked(1, ranked).value();
  REQUIRE(!all.next_cursor.empty());
  ranked.cursor = all.next_cursor;
  ranked.kinds = KindFilter::Only({kRepost});
  CHECK(absl::IsInvalidArgument(f.engine->ReadRanked(1, ranked).status()));
}

TEST_CASE("a bad kind is refused and changes nothing") {
  KindsFixture f;
  f.Fol(1, 2);
  const Activity too_large = Kinded(1, 2, f.kStart, kMaxActivityKind + 1);
  const absl::Status refused = f.engine->Publish(too_large).status();
  CHECK_MESSAGE(absl::IsInvalidArgument(refused), refused);
  CHECK(refused.message().find("kind") != std::string::npos);
  CHECK(f.engine->Stats().value().entries == 0);
  // The kind is part of the activity: a retry must repeat it.
  f.Pub(Kinded(1, 2, f.kStart, kRepost));
  const absl::Status other =
      f.engine->Publish(Kinded(1, 2, f.kStart, kLive)).status();
  CHECK_MESSAGE(absl::IsAlreadyExists(other), other);
  CHECK(other.message().find("kind") != std::string::npos);
  CHECK(!f.Pub(Kinded(1, 2, f.kStart, kRepost)).created);
  TimelineEntry entry{f.kStart, 5, 2};
  entry.kind = 200;
  CHECK(absl::IsInvalidArgument(f.engine->Insert(1, entry).status()));
  CHECK(absl::IsInvalidArgument(
      f.engine->InsertBatch({{1, {f.kStart, 6, 2}}, {1, entry}}).status()));
  CHECK(IdsOf(testing::Timeline(*f.engine, 1, Keeping({}, 5))) ==
        std::vector<ActivityId>{1});
  for (const KindFilter& bad :
       {KindFilter::Only({}), KindFilter::Only({kPost, 64}),
        KindFilter::Except({kMaxActivityKind + 1})}) {
    const absl::Status read = f.engine->ReadTimeline(1, Keeping(bad)).status();
    CHECK_MESSAGE(absl::IsInvalidArgument(read), read);
    RankedReadOptions ranked;
    ranked.kinds = bad;
    CHECK(absl::IsInvalidArgument(f.engine->ReadRanked(1, ranked).status()));
  }
  KindFilter none;
  none.kinds = 0;
  CHECK(absl::IsInvalidArgument(f.engine->ReadOwn(2, Keeping(none)).status()));
}

FollowOptions FollowingKinds(KindFilter kinds,
                             std::optional<size_t> backfill = std::nullopt) {
  FollowOptions o;
  o.kinds = kinds;
  o.backfill = backfill;
  return o;
}

TEST_CASE("a follow delivers its kinds only: copies, back-fill and merges") {
  EngineOptions o = KindsFixture::Defaults();
  o.hybrid_fanout_threshold = 2;
  KindsFixture f(o);
  f.PublishMixed(6);  // before the follows: back-filled
  REQUIRE(f.engine->Follow(1, 2, FollowingKinds(KindFilter::Except({kRepost})))
              .value()
              .created);
  REQUIRE(f.engine->Follow(3, 2, FollowingKinds(KindFilter::Only({kRepost}), 1))
              .value()
              .backfilled == 1);
  for (ActivityId id = 7; id <= 9; ++id) {  // copied to both
    f.Pub(Kinded(id, 2, f.kStart + static_cast<Micros>(id), KindOf(id)));
  }
  CHECK(IdsOf(testing::Timeline(*f.engine, 1, Keeping({}, 4))) ==
        std::vector<ActivityId>{9, 7, 6, 4, 3, 1});
  CHECK(IdsOf(testing::Timeline(*f.engine, 3, Keeping({}, 4))) ==
        std::vector<ActivityId>{8, 5});
  // A third follower makes the actor merged at read; each follow still
  // shows its own kinds, old and new.
  f.Fol(4, 2);
  for (ActivityId id = 10; id <= 12; ++id) {
    CHECK(f.Pub(Kinded(id, 2, f.kStart + static_cast<Micros>(id), KindOf(id)))
              .merged_at_read);
  }
  CHECK(IdsOf(testing::Timeline(*f.engine, 1, Keeping({}, 4))) ==
        std::vector<ActivityId>{12, 10, 9, 7, 6, 4, 3, 1});
  CHECK(IdsOf(testing::Timeline(*f.engine, 3, Keeping({}, 4))) ==
        std::vector<ActivityId>{11, 8, 5});
  CHECK(IdsOf(testing::Timeline(
            *f.engine, 3, Keeping(KindFilter::Only({kLive, kRepost}), 1))) ==
        std::vector<ActivityId>{11, 8, 5});
  // Following again: the same kinds or none named change nothing; other
  // kinds are refused and change nothing either.
  CHECK(!f.engine->Follow(1, 2, FollowingKinds(KindFilter::Except({kRepost})))
             .value()
             .created);
  CHECK(!f.Fol(1, 2).created);
  const absl::Status other =
      f.engine->Follow(1, 2, FollowingKinds(KindFilter::Only({kRepost})))
          .status();
  CHECK_MESSAGE(absl::IsFailedPrecondition(other), other);
  CHECK(absl::IsInvalidArgument(
      f.engine->Follow(5, 2, FollowingKinds(KindFilter::Only({}))).status()));
  CHECK(absl::IsFailedPrecondition(
      f.engine
          ->FollowMany({{5, 2}, {1, 2}},
                       FollowingKinds(KindFilter::Only({kLive})))
          .status()));
  CHECK(f.engine->Following(5, {}).value().ids.empty());
  CHECK(IdsOf(testing::Timeline(*f.engine, 1, Keeping({}, 4))).size() == 8);
  // Unfollow, then Follow with other kinds: the new ones from now on.
  f.Unf(1, 2);
  REQUIRE(f.engine->Follow(1, 2, FollowingKinds(KindFilter::Only({kLive}), 100))
              .ok());
  CHECK(IdsOf(testing::Timeline(*f.engine, 1, Keeping({}, 4))) ==
        std::vector<ActivityId>{12, 9, 6, 3});
}

// The copying engine, one that merges the actor at read, and one whose
// reader is made dormant and rebuilt: a follow of rare kinds shows the
// same old entries in all three, because the actor's own feed keeps the
// newest max_timeline_length of each kind however many of another follow.
TEST_CASE("an own feed keeps each kind's newest: filtered follows lose none") {
  enum class Form { kCopied, kMerged, kDormant };
  std::vector<std::vector<ActivityId>> pages;
  for (const Form form : {Form::kCopied, Form::kMerged, Form::kDormant}) {
    EngineOptions o = KindsFixture::Defaults();
    o.max_timeline_length = 4;
    if (form == Form::kMerged) o.hybrid_fanout_threshold = 1;
    if (form == Form::kDormant) o.inactive_after = 1000;
    KindsFixture f(o);
    REQUIRE(
        f.engine->Follow(1, 2, FollowingKinds(KindFilter::Only({kLive}))).ok());
    f.Fol(3, 2);  // past the threshold: merged at read
    f.Pub(Kinded(1, 2, f.kStart + 1, kLive));
    f.Pub(Kinded(2, 2, f.kStart + 2, kLive));
    if (form == Form::kDormant) {
      f.clock->Advance(2000);
      REQUIRE(f.engine->ReleaseInactiveReaders(10).value() >= 1);
    }
    for (ActivityId id = 3; id <= 12; ++id) {
      f.Pub(Kinded(id, 2, f.kStart + static_cast<Micros>(id), kPost));
    }
    f.Pub(Kinded(13, 2, f.kStart + 13, kLive));
    INFO("form " << static_cast<int>(form));
    // The own feed: the newest four posts and both live streams.
    CHECK(IdsOf(testing::Own(*f.engine, 2, Keeping({}, 10))) ==
          std::vector<ActivityId>{13, 12, 11, 10, 9, 2, 1});
    CHECK(IdsOf(testing::Timeline(*f.engine, 3, Keeping({}, 10))) ==
          std::vector<ActivityId>{13, 12, 11, 10});
    pages.push_back(IdsOf(testing::Timeline(*f.engine, 1, Keeping({}, 10))));
  }
  CHECK(pages[0] == std::vector<ActivityId>{13, 2, 1});
  CHECK(pages[1] == pages[0]);
  CHECK(pages[2] == pages[0]);
}

// What a copy must read the same: every timeline's entries with kinds.
std::vector<std::string> Describe(const InProcessFeedEngine& engine) {
  std::vector<std::string> lines;
  for (EntityId owner : {1, 2, 3}) {  // 5's own feed is not described
    ReadOptions read = Keeping({}, 100);
    for (const StoredEntry& e : testing::Timeline(engine, owner, read)) {
      lines.push_back(
          absl::StrCat(owner, ": ", e.activity_id, " kind ", e.kind));
    }
    for (const StoredEntry& e : testing::Own(engine, owner, read)) {
      lines.push_back(
          absl::StrCat(owner, " own: ", e.activity_id, " kind ", e.kind));
    }
  }
  return lines;
}

TEST_CASE("kinds survive the stream, a change file and a snapshot") {
  testing::TempPath snapshot("kinds-snapshot");
  testing::TempPath changes("kinds-changes");
  auto clock = std::make_shared<ManualClock>(testing::SocialFixture::kStart);
  std::shared_ptr<ChangeStream> stream = ChangeStream::Create({}).value();
  EngineOptions options = KindsFixture::Defaults();
  options.change_stream = stream;
  std::unique_ptr<InProcessFeedEngine> source =
      testing::NewManualEngine(clock, options);
  REQUIRE(source->Follow(1, 2).ok());
  for (ActivityId id = 1; id <= 6; ++id) {
    REQUIRE(source->Publish(Kinded(id, 2, clock->Now() + id, KindOf(id))).ok());
  }
  REQUIRE(SaveSnapshot(*source, snapshot.path).ok());
  REQUIRE(source->Follow(3, 2).ok());
  FollowOptions live_only;
  live_only.kinds = KindFilter::Only({kLive});
  REQUIRE(source->Follow(1, 5, live_only).ok());
  for (ActivityId id = 7; id <= 9; ++id) {
    REQUIRE(source->Publish(Kinded(id, 2, clock->Now() + id, KindOf(id))).ok());
  }
  for (ActivityId id = 60; id <= 62; ++id) {
    REQUIRE(source->Publish(Kinded(id, 5, clock->Now() + id, KindOf(id))).ok());
  }
  TimelineEntry inserted{clock->Now() + 50, 50, 4};
  inserted.kind = 7;
  REQUIRE(source->Insert(3, inserted).ok());
  const std::vector<std::string> want = Describe(*source);
  // 1 holds 2's nine and 5's one live activity, 60 (61 is a post, 62 a
  // repost).
  REQUIRE(want.size() == 10 + 9 + 10);
  const std::vector<ChangeRecordPtr> records =
      stream->NewReader(StreamPosition::TrimHorizon())
          .value()
          ->Read(10000)
          .value();

  SUBCASE("a replica from the snapshot and the stream") {
    EngineOptions replica_options = KindsFixture::Defaults();
    replica_options.clock = clock;
    std::unique_ptr<Replica> replica =
        LoadSnapshot(snapshot.path, replica_options).value();
    for (const ChangeRecordPtr& r : records) {
      const absl::Status applied = replica->Apply(*r);
      REQUIRE_MESSAGE(applied.ok(), applied);
    }
    CHECK(Describe(replica->engine()) == want);
  }
  SUBCASE("the records keep their kinds in a change file") {
    testing::CheckChangeFileRoundTrip(changes.path, records);
    size_t kinded = 0;
    for (const ChangeRecordPtr& r : records) kinded += r->entry.kind != 0;
    CHECK(kinded > 0);
  }
}

}  // namespace
}  // namespace feedcore
