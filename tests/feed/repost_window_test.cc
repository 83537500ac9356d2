// Reposts shown once (EngineOptions::reposts): a home timeline leaves out a
// repost while its original, or an older repost of it, is among the window
// of entries just older than it; pages stay full and cursors resume; the
// rule holds before a read's kind filter and in every read of the
// timeline; own feeds show every repost; a repost of a kind not declared,
// or of itself, is refused; repost_of survives the stream and a snapshot.
// That copied, merged-at-read and rebuilt timelines hide the same reposts
// is social_model_test's differential.

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
using testing::MakeActivity;

constexpr ActivityKind kRepost = 1;
constexpr size_t kWindow = 3;

EngineOptions WithWindow(size_t window = kWindow) {
  EngineOptions o = testing::SocialFixture::Defaults();
  o.reposts.window = window;
  o.reposts.kinds = KindFilter::Only({kRepost});
  return o;
}

Activity Post(ActivityId id, EntityId actor, Micros ts) {
  return MakeActivity(id, actor, ts);
}

Activity Repost(ActivityId id, EntityId actor, Micros ts, ActivityId of) {
  Activity a = MakeActivity(id, actor, ts);
  a.kind = kRepost;
  a.repost_of = of;
  return a;
}

struct RepostFixture : testing::SocialFixture {
  explicit RepostFixture(EngineOptions options = WithWindow())
      : testing::SocialFixture(std::move(options)) {}
  Micros At(int step) const { return kStart + step; }
  std::vector<ActivityId> Home(EntityId reader, ReadOptions read = {}) {
    return IdsOf(testing::Timeline(*engine, reader, std::move(read)));
  }
};

TEST_CASE("a repost of an entry within the window is left out") {
  RepostFixture f;
  f.Fol(1, 2);
  f.Fol(1, 3);
  f.Pub(Post(10, 2, f.At(1)));
  f.Pub(Repost(11, 3, f.At(2), 10));  // 10 is just older: hidden
  CHECK(f.Home(1) == std::vector<ActivityId>{10});
  // The reposter's own feed, and the world feed, show it.
  CHECK(IdsOf(testing::Own(*f.engine, 3)) == std::vector<ActivityId>{11});
  CHECK(IdsOf(testing::World(*f.engine)) == std::vector<ActivityId>{11, 10});

  SUBCASE("out of the window, a repost shows") {
    for (ActivityId id = 20; id < 20 + kWindow; ++id) {
      f.Pub(Post(id, 2, f.At(3 + static_cast<int>(id))));
    }
    f.Pub(Repost(12, 3, f.At(40), 10));
    CHECK(f.Home(1) == std::vector<ActivityId>{12, 22, 21, 20, 10});
  }
  SUBCASE("without the original, the oldest repost shows, the next hides") {
    // Reader 4 follows only the reposters.
    f.Fol(4, 3);
    f.Fol(4, 5);
    f.Pub(Repost(13, 5, f.At(3), 10));
    CHECK(f.Home(4) == std::vector<ActivityId>{11});
  }
  SUBCASE("a retracted original lets its repost show") {
    REQUIRE(f.engine->Retract(10).ok());
    CHECK(f.Home(1) == std::vector<ActivityId>{11});
  }
  SUBCASE("a window of 0 shows every repost") {
    RepostFixture off(WithWindow(0));
    off.Fol(1, 2);
    off.Fol(1, 3);
    off.Pub(Post(10, 2, off.At(1)));
    off.Pub(Repost(11, 3, off.At(2), 10));
    CHECK(off.Home(1) == std::vector<ActivityId>{11, 10});
  }
}

// Actor 2 posts 1..n; actor 3 reposts each one right after it, so every
// other entry of reader 1's timeline is a hidden repost.
void PublishShadowed(RepostFixture& f, ActivityId n) {
  f.Fol(1, 2);
  f.Fol(1, 3);
  for (ActivityId id = 1; id <= n; ++id) {
    f.Pub(Post(id, 2, f.At(static_cast<int>(2 * id))));
    f.Pub(Repost(100 + id, 3, f.At(static_cast<int>(2 * id + 1)), id));
  }
}

TEST_CASE("pages stay full and cursors resume past hidden reposts") {
  RepostFixture f;
  PublishShadowed(f, 9);
  const std::vector<ActivityId> posts = {9, 8, 7, 6, 5, 4, 3, 2, 1};
  for (size_t limit : {1, 2, 4, 9}) {
    INFO("limit " << limit);
    ReadOptions read;
    read.limit = limit;
    CHECK(f.Home(1, read) == posts);
    read.order = ReadOrder::kOldestFirst;
    CHECK(f.Home(1, read) ==
          std::vector<ActivityId>(posts.rbegin(), posts.rend()));
  }
  ReadOptions first;
  first.limit = 4;
  const Page page = f.engine->ReadTimeline(1, first).value();
  CHECK(IdsOf(page.entries) == std::vector<ActivityId>{9, 8, 7, 6});
  // A newer repost arrives: the next page is unchanged.
  f.Pub(Repost(200, 3, f.At(100), 5));
  ReadOptions next = first;
  next.cursor = page.next_cursor;
  CHECK(IdsOf(f.engine->ReadTimeline(1, next).value().entries) ==
        std::vector<ActivityId>{5, 4, 3, 2});
  // CountNewer counts what the pages show.
  CHECK(f.engine->CountNewer(1, {f.At(2), 1}, 100).value() == 9);
}

TEST_CASE("the window applies before a read's kind filter") {
  RepostFixture f;
  PublishShadowed(f, 4);
  f.Fol(1, 5);
  f.Pub(Repost(300, 5, f.At(50), 77));  // reposts what 1 does not hold
  ReadOptions reposts_only;
  reposts_only.kinds = KindFilter::Only({kRepost});
  CHECK(f.Home(1, reposts_only) == std::vector<ActivityId>{300});
}

TEST_CASE("read markers and grouped reads leave out what pages leave out") {
  EngineOptions options = WithWindow();
  options.aggregation.enabled = true;
  RepostFixture f(options);
  PublishShadowed(f, 5);
  REQUIRE(f.engine->SetReadMarker(1, MarkedFeed::Home(1), {f.At(2), 1}).ok());
  CHECK(f.engine->GetReadMarker(1, MarkedFeed::Home(1), 100).value().unread ==
        4);
  GroupReadOptions grouped;
  grouped.limit = 25;
  CHECK(f.engine->ReadGroups(1, grouped).value().groups.size() == 5);
}

TEST_CASE("a bad repost or repost option is refused and changes nothing") {
  RepostFixture f;
  f.Fol(1, 2);
  Activity self = Repost(10, 2, f.At(1), 10);
  const absl::Status refused_self = f.engine->Publish(self).status();
  CHECK(absl::IsInvalidArgument(refused_self));
  CHECK(std::string(refused_self.message()).find("itself") !=
        std::string::npos);
  Activity other_kind = Repost(11, 2, f.At(1), 5);
  other_kind.kind = 0;
  const absl::Status refused_kind = f.engine->Publish(other_kind).status();
  CHECK(absl::IsInvalidArgument(refused_kind));
  CHECK(std::string(refused_kind.message()).find("reposts.kinds") !=
        std::string::npos);
  CHECK(f.Home(1).empty());
  CHECK(f.engine->Stats().value().activities == 0);

  // A re-publish with another repost_of is another activity.
  f.Pub(Repost(12, 2, f.At(1), 5));
  const absl::Status conflict =
      f.engine->Publish(Repost(12, 2, f.At(1), 6)).status();
  CHECK(absl::IsAlreadyExists(conflict));
  CHECK(std::string(conflict.message()).find("repost_of") != std::string::npos);
  CHECK(f.Pub(Repost(12, 2, f.At(1), 5)).created == false);

  EngineOptions too_wide = WithWindow(kMaxRepostWindow + 1);
  CHECK(absl::IsInvalidArgument(FeedEngine::Create(too_wide).status()));
  EngineOptions no_kinds = WithWindow();
  no_kinds.reposts.kinds = KindFilter::Only({});
  CHECK(absl::IsInvalidArgument(FeedEngine::Create(no_kinds).status()));
  EngineOptions bad_kind = WithWindow();
  bad_kind.reposts.kinds = KindFilter::Only({kMaxActivityKind + 1});
  CHECK(absl::IsInvalidArgument(FeedEngine::Create(bad_kind).status()));
  // Without a window a repost of any kind is taken, and shown.
  RepostFixture off(WithWindow(0));
  off.Fol(1, 2);
  off.Pub(Post(1, 2, off.At(1)));
  other_kind.ts = off.At(2);
  off.Pub(other_kind);
  CHECK(off.Home(1) == std::vector<ActivityId>{11, 1});
}

TEST_CASE("repost_of survives the stream and a snapshot") {
  testing::TempPath snapshot("reposts-snapshot");
  auto clock = std::make_shared<ManualClock>(testing::SocialFixture::kStart);
  std::shared_ptr<ChangeStream> stream = ChangeStream::Create({}).value();
  EngineOptions options = WithWindow();
  options.change_stream = stream;
  std::unique_ptr<InProcessFeedEngine> source =
      testing::NewManualEngine(clock, options);
  REQUIRE(source->Follow(1, 2).ok());
  REQUIRE(source->Follow(1, 3).ok());
  REQUIRE(source->Publish(Post(1, 2, clock->Now() + 1)).ok());
  REQUIRE(source->Publish(Repost(2, 3, clock->Now() + 2, 1)).ok());
  REQUIRE(SaveSnapshot(*source, snapshot.path).ok());
  REQUIRE(source->Publish(Repost(3, 3, clock->Now() + 3, 1)).ok());
  REQUIRE(source->Publish(Post(4, 2, clock->Now() + 4)).ok());
  const std::vector<ActivityId> want = IdsOf(testing::Timeline(*source, 1));
  REQUIRE(want == std::vector<ActivityId>{4, 1});
  const std::vector<ChangeRecordPtr> records =
      stream->NewReader(StreamPosition::TrimHorizon())
          .value()
          ->Read(1000)
          .value();
  EngineOptions replica_options = WithWindow();
  replica_options.clock = clock;
  std::unique_ptr<Replica> replica =
      LoadSnapshot(snapshot.path, replica_options).value();
  for (const ChangeRecordPtr& r : records) {
    const absl::Status applied = replica->Apply(*r);
    REQUIRE_MESSAGE(applied.ok(), applied);
  }
  CHECK(IdsOf(testing::Timeline(replica->engine(), 1)) == want);
}

}  // namespace
}  // namespace feedcore
