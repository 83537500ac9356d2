// Per-user reactions (FeedReactions): once per (user, activity, kind), the
// counters they keep exact, "did I react" for a page, reactors paged newest
// first, notices through the actor's notification feed, what a retract and
// expiry take with them, and every error changing nothing.

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "feedcore/social.h"
#include "support/social_test_util.h"

namespace feedcore {
namespace {

using testing::MakeActivity;

struct ReactionFixture : testing::SocialFixture {
  ReactionFixture() : ReactionFixture(std::make_shared<ManualClock>(kStart)) {}
  explicit ReactionFixture(std::shared_ptr<ManualClock> clock)
      : ReactionFixture(clock, testing::NewManualStream(clock)) {}
  ReactionFixture(std::shared_ptr<ManualClock> clock,
                  std::shared_ptr<ChangeStream> stream)
      : testing::SocialFixture(clock,
                               testing::NewManualEngine(clock, With(stream))),
        stream(std::move(stream)) {}

  static EngineOptions With(std::shared_ptr<ChangeStream> stream) {
    EngineOptions o = Defaults();
    o.change_stream = std::move(stream);
    return o;
  }

  ReactionResult React(EntityId user, ActivityId id, ReactionKind kind,
                       const ReactOptions& options = {}) {
    const absl::StatusOr<ReactionResult> r =
        engine->React(user, id, kind, options);
    REQUIRE_MESSAGE(r.ok(), r.status());
    return *r;
  }
  ReactionResult Unreact(EntityId user, ActivityId id, ReactionKind kind) {
    const absl::StatusOr<ReactionResult> r = engine->Unreact(user, id, kind);
    REQUIRE_MESSAGE(r.ok(), r.status());
    return *r;
  }
  std::vector<ReactionKinds> Own(EntityId user,
                                 const std::vector<ActivityId>& ids) {
    const absl::StatusOr<std::vector<ReactionKinds>> r =
        engine->GetOwnReactions(user, ids);
    REQUIRE_MESSAGE(r.ok(), r.status());
    return *r;
  }
  // Every reactor of (id, kind), `limit` per page.
  std::vector<Reactor> Reactors(ActivityId id, ReactionKind kind,
                                size_t limit = 100) {
    std::vector<Reactor> out;
    ListOptions list;
    list.limit = limit;
    for (;;) {
      const absl::StatusOr<ReactorPage> page =
          engine->ReadReactors(id, kind, list);
      REQUIRE_MESSAGE(page.ok(), page.status());
      REQUIRE(page->reactors.size() <= limit);
      out.insert(out.end(), page->reactors.begin(), page->reactors.end());
      REQUIRE(out.size() <= 1000);  // a cursor that does not advance
      if (page->next_cursor.empty()) return out;
      REQUIRE(page->reactors.size() == limit);
      list.cursor = page->next_cursor;
    }
  }
  std::vector<ActivityId> Notified(EntityId user) {
    std::vector<ActivityId> ids;
    const absl::StatusOr<GroupPage> page = engine->ReadNotifications(user, {});
    REQUIRE_MESSAGE(page.ok(), page.status());
    for (const FeedGroup& g : page->groups) {
      for (const StoredEntry& e : g.recent) ids.push_back(e.activity_id);
    }
    return ids;
  }
  uint64_t NextSequence() const { return stream->Stats().next_sequence; }

  std::shared_ptr<ChangeStream> stream;
};

TEST_CASE("a reaction counts once per user and kind, and is taken back") {
  ReactionFixture f;
  f.Pub(10, 1, f.kStart);
  ReactionResult r = f.React(2, 10, 0);
  CHECK(r.changed);
  CHECK(r.counters == ActivityCounters{1, 0, 0, 0});
  r = f.React(2, 10, 0);
  CHECK_FALSE(r.changed);
  CHECK(r.counters == ActivityCounters{1, 0, 0, 0});
  CHECK(f.React(3, 10, 0).counters == ActivityCounters{2, 0, 0, 0});
  CHECK(f.React(2, 10, 3).counters == ActivityCounters{2, 0, 0, 1});
  CHECK(f.engine->GetCounters(10).value() == ActivityCounters{2, 0, 0, 1});
  CHECK(f.Own(2, {10}) == std::vector<ReactionKinds>{0b1001});
  CHECK(f.Own(3, {10}) == std::vector<ReactionKinds>{0b0001});

  r = f.Unreact(2, 10, 0);
  CHECK(r.changed);
  CHECK(r.counters == ActivityCounters{1, 0, 0, 1});
  const uint64_t before = f.NextSequence();
  r = f.Unreact(2, 10, 0);
  CHECK_FALSE(r.changed);
  CHECK(r.counters == ActivityCounters{1, 0, 0, 1});
  CHECK(f.NextSequence() == before);  // nothing recorded
  CHECK(f.Own(2, {10}) == std::vector<ReactionKinds>{0b1000});
  // Reacting again counts again.
  CHECK(f.React(2, 10, 0).counters == ActivityCounters{2, 0, 0, 1});
}

TEST_CASE("did I react: a whole page in one call, unknown and gone as none") {
  ReactionFixture f;
  for (ActivityId id = 1; id <= 6; ++id) f.Pub(id, 1, f.kStart + id);
  f.Pub(MakeActivity(7, 1, f.kStart, /*ttl=*/5));
  f.React(2, 1, 0);
  f.React(2, 3, 1);
  f.React(2, 3, 2);
  f.React(2, 5, 0);
  f.React(2, 6, 0);
  f.React(2, 7, 0);
  f.React(3, 2, 0);  // another user's
  REQUIRE(f.engine->Retract(6).ok());
  f.clock->Advance(5);  // 7 expires
  CHECK(f.Own(2, {1, 2, 3, 4, 5, 6, 7, 99, 3}) ==
        std::vector<ReactionKinds>{1, 0, 0b110, 0, 1, 0, 0, 0, 0b110});
  CHECK(f.Own(2, {}).empty());
  CHECK(f.Own(4, {1, 2, 3}) == std::vector<ReactionKinds>{0, 0, 0});
  const std::vector<ActivityId> too_many(kMaxReactionLookup + 1, 1);
  const absl::Status refused = f.engine->GetOwnReactions(2, too_many).status();
  CHECK(absl::IsInvalidArgument(refused));
  CHECK(std::string(refused.message()).find("kMaxReactionLookup") !=
        std::string::npos);
}

TEST_CASE("reactors come newest first, a page at a time, keyset-stable") {
  ReactionFixture f;
  f.Pub(10, 1, f.kStart);
  f.Pub(11, 1, f.kStart);
  // Users 2..8, one microsecond apart; 9 and 10 at the same instant.
  for (EntityId user = 2; user <= 8; ++user) {
    f.React(user, 10, 1);
    f.clock->Advance(1);
  }
  f.React(9, 10, 1);
  f.React(10, 10, 1);
  f.React(5, 10, 0);  // another kind
  f.React(5, 11, 1);  // another activity
  const Micros t0 = f.kStart;
  const std::vector<Reactor> want = {{10, t0 + 7}, {9, t0 + 7}, {8, t0 + 6},
                                     {7, t0 + 5},  {6, t0 + 4}, {5, t0 + 3},
                                     {4, t0 + 2},  {3, t0 + 1}, {2, t0}};
  for (const size_t limit : {1, 3, 4, 9, 100}) {
    INFO("limit ", limit);
    CHECK(f.Reactors(10, 1, limit) == want);
  }
  CHECK(f.Reactors(10, 0) == std::vector<Reactor>{{5, t0 + 7}});
  CHECK(f.Reactors(10, 2).empty());

  // A reaction made between pages and one taken back: neither repeats nor
  // hides another.
  ListOptions list;
  list.limit = 3;
  ReactorPage first = f.engine->ReadReactors(10, 1, list).value();
  CHECK(first.reactors == std::vector<Reactor>(want.begin(), want.begin() + 3));
  f.clock->Advance(1);
  f.React(11, 10, 1);
  f.Unreact(7, 10, 1);
  list.cursor = first.next_cursor;
  ReactorPage second = f.engine->ReadReactors(10, 1, list).value();
  CHECK(second.reactors ==
        std::vector<Reactor>{{6, t0 + 4}, {5, t0 + 3}, {4, t0 + 2}});

  // A cursor is its own list's.
  CHECK(absl::IsInvalidArgument(f.engine->ReadReactors(10, 0, list).status()));
  CHECK(absl::IsInvalidArgument(f.engine->ReadReactors(11, 1, list).status()));
  list.cursor = "damaged";
  CHECK(absl::IsInvalidArgument(f.engine->ReadReactors(10, 1, list).status()));
  list.cursor.clear();
  list.limit = 0;
  CHECK(absl::IsInvalidArgument(f.engine->ReadReactors(10, 1, list).status()));
  list.limit = f.engine->options().max_page_size + 1;
  CHECK(absl::IsInvalidArgument(f.engine->ReadReactors(10, 1, list).status()));
}

TEST_CASE("a notice tells the actor, and goes with its reaction") {
  ReactionFixture f;
  f.Pub(10, 1, f.kStart);
  ReactOptions notice;
  notice.notice_id = 500;
  notice.notice_payload = "liked";
  f.clock->Advance(3);
  ReactionResult r = f.React(2, 10, 0, notice);
  CHECK(r.changed);
  CHECK(r.notified);
  GroupReadOptions read;
  read.hydrate = true;
  GroupPage page = f.engine->ReadNotifications(1, read).value();
  REQUIRE(page.groups.size() == 1);
  const StoredEntry& entry = page.groups[0].recent[0];
  CHECK(entry.activity_id == 500);
  CHECK(entry.actor == 2);
  CHECK(entry.ts == f.kStart + 3);
  CHECK(entry.payload == "liked");
  CHECK(entry.expires_at == f.DefaultExpiry());  // the reacted one's
  CHECK(f.engine->GetNotificationCounts(1).value().unseen == 1);
  // Not in any timeline or own feed.
  CHECK(testing::Own(*f.engine, 2).empty());
  CHECK(testing::IdsOf(testing::World(*f.engine)) ==
        std::vector<ActivityId>{10});

  // Again: nothing changes, no second notice (its id is unused).
  notice.notice_id = 501;
  r = f.React(2, 10, 0, notice);
  CHECK_FALSE(r.changed);
  CHECK_FALSE(r.notified);
  CHECK(f.Notified(1) == std::vector<ActivityId>{500});
  // The actor's own reaction tells nobody.
  r = f.React(1, 10, 0, notice);
  CHECK(r.changed);
  CHECK_FALSE(r.notified);
  CHECK(f.Notified(1) == std::vector<ActivityId>{500});
  // Unreact retracts the notice.
  CHECK(f.Unreact(2, 10, 0).changed);
  CHECK(f.Notified(1).empty());
  CHECK(f.engine->GetNotificationCounts(1).value().unseen == 0);

  // A reactor the actor blocks is counted but tells nothing.
  REQUIRE(f.engine->Block(1, 3).ok());
  notice.notice_id = 502;
  r = f.React(3, 10, 1, notice);
  CHECK(r.changed);
  CHECK_FALSE(r.notified);
  CHECK(f.Notified(1).empty());
}

TEST_CASE("a retract takes the reactions and their notices with it") {
  ReactionFixture f;
  f.Pub(10, 1, f.kStart);
  f.Pub(11, 1, f.kStart);
  ReactOptions notice;
  notice.notice_id = 500;
  f.React(2, 10, 0, notice);
  notice.notice_id = 501;
  f.React(3, 11, 0, notice);
  f.React(3, 10, 1);
  REQUIRE(f.Notified(1).size() == 2);
  REQUIRE(f.engine->Retract(10).ok());
  CHECK(f.Notified(1) == std::vector<ActivityId>{501});
  CHECK(f.Own(3, {10, 11}) == std::vector<ReactionKinds>{0, 1});
  CHECK(absl::IsNotFound(f.engine->ReadReactors(10, 0, {}).status()));
  CHECK(absl::IsNotFound(f.engine->React(4, 10, 0).status()));
  CHECK(absl::IsNotFound(f.engine->Unreact(2, 10, 0).status()));
  // The notice's id stays taken, as a retracted activity's does.
  notice.notice_id = 500;
  CHECK(absl::IsAlreadyExists(f.engine->React(4, 11, 0, notice).status()));
}

TEST_CASE("an expired activity has no reactions to read or make") {
  ReactionFixture f;
  f.Pub(MakeActivity(10, 1, f.kStart, /*ttl=*/10));
  f.React(2, 10, 0);
  f.clock->Advance(10);
  CHECK(absl::IsNotFound(f.engine->React(3, 10, 0).status()));
  CHECK(absl::IsNotFound(f.engine->Unreact(2, 10, 0).status()));
  CHECK(absl::IsNotFound(f.engine->ReadReactors(10, 0, {}).status()));
  CHECK(f.Own(2, {10}) == std::vector<ReactionKinds>{0});
  // Eviction drops them: an id published again later starts with none.
  REQUIRE(f.engine->EvictExpired(100).ok());
  f.Pub(MakeActivity(10, 1, f.kStart + 10));
  CHECK(f.Own(2, {10}) == std::vector<ReactionKinds>{0});
  CHECK(f.Reactors(10, 0).empty());
}

TEST_CASE("every bad call says what is wrong and changes nothing") {
  ReactionFixture f;
  f.Pub(10, 1, f.kStart);
  f.Pub(11, 1, f.kStart);
  f.React(2, 10, 0);
  const uint64_t before = f.NextSequence();
  const auto names = [](const absl::Status& status, const char* what) {
    CHECK_MESSAGE(std::string(status.message()).find(what) != std::string::npos,
                  status);
  };
  absl::Status s = f.engine->React(2, 10, kActivityCounterCount).status();
  CHECK(absl::IsInvalidArgument(s));
  names(s, "reaction kind");
  CHECK(absl::IsInvalidArgument(
      f.engine->Unreact(2, 10, kActivityCounterCount).status()));
  CHECK(absl::IsInvalidArgument(
      f.engine->ReadReactors(10, kActivityCounterCount, {}).status()));
  s = f.engine->React(2, 99, 0).status();
  CHECK(absl::IsNotFound(s));
  names(s, "99");
  CHECK(absl::IsNotFound(f.engine->Unreact(2, 99, 0).status()));
  CHECK(absl::IsNotFound(f.engine->ReadReactors(99, 0, {}).status()));

  ReactOptions notice;
  notice.notice_id = 10;  // the reacted activity itself
  s = f.engine->React(3, 10, 0, notice).status();
  CHECK(absl::IsInvalidArgument(s));
  names(s, "notice_id");
  notice.notice_id = 11;  // another activity's
  s = f.engine->React(3, 10, 0, notice).status();
  CHECK(absl::IsAlreadyExists(s));
  names(s, "11");
  notice.notice_id = 500;
  notice.notice_payload.assign(f.engine->options().max_payload_bytes + 1, 'x');
  s = f.engine->React(3, 10, 0, notice).status();
  CHECK(absl::IsInvalidArgument(s));
  names(s, "notice_payload");

  CHECK(f.NextSequence() == before);
  CHECK(f.engine->GetCounters(10).value() == ActivityCounters{1, 0, 0, 0});
  CHECK(f.Reactors(10, 0) == std::vector<Reactor>{{2, f.kStart}});
  CHECK(f.Own(3, {10}) == std::vector<ReactionKinds>{0});
  CHECK(f.Notified(1).empty());
}

TEST_CASE("reactions and the counters of the kinds agree with the stream") {
  ReactionFixture f;
  f.Pub(10, 1, f.kStart);
  const uint64_t first = f.NextSequence();
  ReactOptions notice;
  notice.notice_id = 500;
  f.clock->Advance(2);
  f.React(2, 10, 1, notice);
  std::unique_ptr<ChangeReader> reader =
      f.stream->NewReader(StreamPosition::AtSequence(first)).value();
  const std::vector<ChangeRecordPtr> records = reader->Read(100).value();
  REQUIRE(records.size() >= 3);
  CHECK(records[0]->kind == ChangeKind::kReactionAdd);
  CHECK(records[0]->entity == 2);
  CHECK(records[0]->entry.activity_id == 10);
  CHECK(records[0]->entry.ts == f.kStart + 2);
  CHECK(records[0]->score == 1);
  CHECK(records[0]->other == 500);
  CHECK(records[1]->kind == ChangeKind::kCountersSet);
  CHECK(records[1]->counters == std::vector<int64_t>{0, 1, 0, 0});
  // Then the notice: stored, and put in the actor's notification feed.
  CHECK(records[2]->kind == ChangeKind::kActivityStore);
  CHECK(records[2]->entry.activity_id == 500);
}

}  // namespace
}  // namespace feedcore
