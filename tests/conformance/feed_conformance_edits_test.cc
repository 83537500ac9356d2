// Conformance cases of edits and pins (EditsAndPins) on the backend
// FEEDCORE_TEST_BACKEND selects (conformance/backend.h), held to one
// reading of feed_facets.h: an edit shows in every hydrated read of every
// feed that holds the activity, with its time, delivers nothing and makes
// a re-publish a no-op; pins list the most recently pinned first, end with
// Unpin, Retract or expiry, and are bounded by kMaxPinnedEntries visible
// ones; a call that fails changes nothing.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/backend.h"
#include "conformance/feed_conformance_util.h"
#include "feedcore/feed_engine.h"
#include "feedcore/feed_facets.h"
#include "feedcore/options.h"
#include "feedcore/types.h"
#include "support/social_test_util.h"

namespace feedcore {
namespace {

using testing::Env;
using testing::FailsChangingNothing;
using testing::IdsOf;
using testing::kHour;
using testing::kStart;
using testing::MakeActivity;
using testing::Options;
using testing::PayloadOf;

EditsAndPins& Edits(Env& env) {
  EditsAndPins* edits = env.engine->edits_and_pins();
  REQUIRE(edits != nullptr);
  return *edits;
}

Micros Edit(Env& env, EntityId actor, ActivityId id,
            const std::string& payload) {
  const absl::StatusOr<Micros> at = Edits(env).EditActivity(actor, id, payload);
  REQUIRE_MESSAGE(at.ok(), at.status());
  return *at;
}

bool Pin(Env& env, EntityId owner, ActivityId id) {
  const absl::StatusOr<bool> pinned = Edits(env).Pin(owner, id);
  REQUIRE_MESSAGE(pinned.ok(), pinned.status());
  return *pinned;
}

bool Unpin(Env& env, EntityId owner, ActivityId id) {
  const absl::StatusOr<bool> unpinned = Edits(env).Unpin(owner, id);
  REQUIRE_MESSAGE(unpinned.ok(), unpinned.status());
  return *unpinned;
}

std::vector<StoredEntry> Pinned(Env& env, EntityId owner,
                                bool hydrate = false) {
  const absl::StatusOr<std::vector<StoredEntry>> pins =
      Edits(env).ReadPinned(owner, hydrate);
  REQUIRE_MESSAGE(pins.ok(), pins.status());
  return *pins;
}

ReadOptions Hydrated() {
  ReadOptions r = testing::Limit(7);
  r.hydrate = true;
  return r;
}

const StoredEntry* Find(const std::vector<StoredEntry>& entries,
                        ActivityId id) {
  for (const StoredEntry& entry : entries) {
    if (entry.activity_id == id) return &entry;
  }
  return nullptr;
}

// Checks that `entries` hold activity `id` with `payload`, edited at
// `edited_at` (0: never).
void Holds(const std::vector<StoredEntry>& entries, ActivityId id,
           const std::string& payload, Micros edited_at) {
  INFO("activity ", id);
  const StoredEntry* entry = Find(entries, id);
  REQUIRE(entry != nullptr);
  CHECK(entry->payload == payload);
  CHECK(entry->edited_at == edited_at);
}

// Every entry of `user`'s notification groups, newest group first.
std::vector<StoredEntry> NotificationEntries(Env& env, EntityId user,
                                             bool hydrate) {
  GroupReadOptions read;
  read.hydrate = hydrate;
  const absl::StatusOr<GroupPage> page =
      env.engine->notifications()->ReadNotifications(user, read);
  REQUIRE_MESSAGE(page.ok(), page.status());
  std::vector<StoredEntry> entries;
  for (const FeedGroup& group : page->groups) {
    entries.insert(entries.end(), group.recent.begin(), group.recent.end());
  }
  return entries;
}

// Every read an edit must leave alone when not hydrated, and the counts.
struct Unhydrated {
  std::vector<StoredEntry> home, own, world, notifications;
  size_t newer = 0;
  NotificationCounts counts;
  friend bool operator==(const Unhydrated&, const Unhydrated&) = default;
};

Unhydrated ReadUnhydrated(Env& env) {
  Unhydrated u;
  u.home = testing::Timeline(*env.engine, 2, testing::Limit(7));
  u.own = testing::Own(*env.engine, 1, testing::Limit(7));
  u.world = testing::World(*env.engine, testing::Limit(7));
  u.notifications = NotificationEntries(env, 4, /*hydrate=*/false);
  u.newer = env.engine->CountNewer(2, EntryKey::Min(), 50).value();
  u.counts = env.engine->notifications()->GetNotificationCounts(4).value();
  return u;
}

TEST_CASE("an edit shows in every hydrated read with its time") {
  Env env(Options(100));
  env.Fol(2, 1);
  env.Fol(3, 1);
  PublishOptions notify;
  notify.notify = {4};
  const PublishResult first = env.Pub(MakeActivity(10, 1, kStart + 1), notify);
  CHECK(first.created);
  CHECK(first.fanned_out == 2);
  CHECK(first.notified == 1);
  env.Pub(11, 1, kStart + 2);
  const Unhydrated before = ReadUnhydrated(env);

  env.clock->Advance(5);
  const Micros edited_at = Edit(env, 1, 10, "edited body");
  CHECK(edited_at == env.Now());

  for (const EntityId reader : {2, 3}) {
    const std::vector<StoredEntry> home =
        testing::Timeline(*env.engine, reader, Hydrated());
    Holds(home, 10, "edited body", edited_at);
    Holds(home, 11, PayloadOf(11), 0);
  }
  const std::vector<StoredEntry> own = testing::Own(*env.engine, 1, Hydrated());
  Holds(own, 10, "edited body", edited_at);
  Holds(own, 11, PayloadOf(11), 0);
  Holds(testing::World(*env.engine, Hydrated()), 10, "edited body", edited_at);
  Holds(NotificationEntries(env, 4, /*hydrate=*/true), 10, "edited body",
        edited_at);

  // Nothing was delivered again: unhydrated reads, unread and unseen
  // counts are as before the edit.
  CHECK(ReadUnhydrated(env) == before);
  const StoredEntry* plain = Find(before.own, 10);
  REQUIRE(plain != nullptr);
  CHECK(plain->payload.empty());
  CHECK(plain->edited_at == 0);

  // A later edit replaces the payload and the time; an empty payload is a
  // payload.
  env.clock->Advance(7);
  const Micros again = Edit(env, 1, 10, "");
  CHECK(again == env.Now());
  Holds(testing::Own(*env.engine, 1, Hydrated()), 10, "", again);
  Holds(testing::Timeline(*env.engine, 2, Hydrated()), 10, "", again);
  CHECK(ReadUnhydrated(env) == before);

  // An edit up to the payload limit is accepted.
  const std::string largest(env.engine->options().max_payload_bytes, 'x');
  const Micros largest_at = Edit(env, 1, 11, largest);
  Holds(testing::World(*env.engine, Hydrated()), 11, largest, largest_at);
}

TEST_CASE("once edited, a re-publish is a no-op whatever its payload") {
  Env env(Options(100));
  env.Fol(2, 1);
  env.Pub(10, 1, kStart + 1);
  env.Pub(11, 1, kStart + 2);
  const Micros edited_at = Edit(env, 1, 10, "edited body");
  const Unhydrated before = ReadUnhydrated(env);

  const PublishResult same = env.Pub(MakeActivity(10, 1, kStart + 1));
  CHECK_FALSE(same.created);
  CHECK(same.fanned_out == 0);
  Activity other = MakeActivity(10, 1, kStart + 1);
  other.payload = "yet another body";
  const PublishResult different = env.Pub(other);
  CHECK_FALSE(different.created);
  CHECK(different.fanned_out == 0);
  CHECK(ReadUnhydrated(env) == before);
  Holds(testing::Timeline(*env.engine, 2, Hydrated()), 10, "edited body",
        edited_at);

  // The actor and the ts still name the activity.
  Activity moved = MakeActivity(10, 1, kStart + 3);
  CHECK(absl::IsAlreadyExists(env.engine->Publish(moved).status()));
  Activity stolen = MakeActivity(10, 5, kStart + 1);
  CHECK(absl::IsAlreadyExists(env.engine->Publish(stolen).status()));
  // An activity never edited still compares its payload.
  Activity unedited = MakeActivity(11, 1, kStart + 2);
  unedited.payload = "not the body";
  CHECK(absl::IsAlreadyExists(env.engine->Publish(unedited).status()));
  Holds(testing::Own(*env.engine, 1, Hydrated()), 10, "edited body", edited_at);
}

TEST_CASE("a failed edit changes nothing") {
  Env env(Options(100));
  env.Fol(2, 1);
  env.Pub(10, 1, kStart + 1);
  env.Pub(11, 1, kStart + 2);
  env.Pub(12, 1, kStart + 3, /*ttl=*/10);
  env.Pub(13, 1, kStart + 4);
  REQUIRE(env.engine->Retract(13).ok());
  const std::vector<EntityId> entities = {1, 2, 5};
  auto edit = [&](EntityId actor, ActivityId id, std::string payload) {
    return [&env, actor, id, payload] {
      return Edits(env).EditActivity(actor, id, payload).status();
    };
  };
  auto names = [](const absl::Status& status, const std::string& text) {
    CHECK_MESSAGE(status.message().find(text) != std::string::npos, status);
  };

  FailsChangingNothing(*env.engine, entities, "unknown activity",
                       absl::StatusCode::kNotFound, edit(1, 99, "x"));
  FailsChangingNothing(*env.engine, entities, "retracted activity",
                       absl::StatusCode::kNotFound, edit(1, 13, "x"));
  FailsChangingNothing(*env.engine, entities, "another actor",
                       absl::StatusCode::kPermissionDenied, edit(5, 10, "x"));
  names(Edits(env).EditActivity(5, 10, "x").status(), "only its actor");
  const std::string oversize(env.engine->options().max_payload_bytes + 1, 'x');
  FailsChangingNothing(*env.engine, entities, "oversize payload",
                       absl::StatusCode::kInvalidArgument,
                       edit(1, 10, oversize));
  names(Edits(env).EditActivity(1, 10, oversize).status(), "max_payload_bytes");
  // An oversize payload is refused before anything is looked up.
  CHECK(absl::IsInvalidArgument(
      Edits(env).EditActivity(1, 99, oversize).status()));

  // The short-lived activity edits while it lives, not after.
  env.clock->Advance(9);
  const Micros edited_at = Edit(env, 1, 12, "last words");
  env.clock->Advance(1);
  FailsChangingNothing(*env.engine, entities, "expired activity",
                       absl::StatusCode::kNotFound, edit(1, 12, "x"));
  names(Edits(env).EditActivity(1, 12, "x").status(), "12");

  // None of the refused edits touched a payload or a time.
  const std::vector<StoredEntry> own = testing::Own(*env.engine, 1, Hydrated());
  Holds(own, 10, PayloadOf(10), 0);
  Holds(own, 11, PayloadOf(11), 0);
  CHECK(Find(own, 13) == nullptr);
  CHECK(edited_at == kStart + 9);
  // An activity that was retracted after an edit hydrates nothing.
  Edit(env, 1, 11, "soon gone");
  REQUIRE(env.engine->Retract(11).ok());
  CHECK(Find(testing::Own(*env.engine, 1, Hydrated()), 11) == nullptr);
  CHECK(absl::IsNotFound(Edits(env).EditActivity(1, 11, "x").status()));
}

TEST_CASE("pins list the most recently pinned first") {
  EngineOptions options = Options(100);
  options.aggregation.enabled = true;
  Env env(options);
  for (ActivityId id = 1; id <= 4; ++id) {
    Activity a = MakeActivity(id, 1, kStart + static_cast<Micros>(id));
    a.verb = 7;  // grouped in feeds; pins are group 0 all the same
    a.object = 3;
    env.Pub(a);
  }
  const std::vector<StoredEntry> own_before = testing::Own(*env.engine, 1);
  CHECK(Pinned(env, 1).empty());
  CHECK(Pin(env, 1, 2));
  CHECK(Pin(env, 1, 1));
  CHECK(Pin(env, 1, 3));
  std::vector<StoredEntry> pins = Pinned(env, 1);
  CHECK(IdsOf(pins) == std::vector<ActivityId>{3, 1, 2});
  for (const StoredEntry& pin : pins) {
    INFO("pin ", pin.activity_id);
    CHECK(pin.ts == kStart + static_cast<Micros>(pin.activity_id));
    CHECK(pin.actor == 1);
    CHECK(pin.expires_at == env.DefaultExpiry());
    CHECK(pin.group == 0);
    CHECK(pin.payload.empty());
    CHECK(pin.edited_at == 0);
  }
  // Pins leave the own feed as it was.
  CHECK(testing::Own(*env.engine, 1) == own_before);

  // Hydrated, with an edit's payload and time.
  env.clock->Advance(3);
  const Micros edited_at = Edit(env, 1, 1, "edited pin");
  pins = Pinned(env, 1, /*hydrate=*/true);
  REQUIRE(pins.size() == 3);
  CHECK(pins[0].payload == PayloadOf(3));
  CHECK(pins[0].edited_at == 0);
  CHECK(pins[1].payload == "edited pin");
  CHECK(pins[1].edited_at == edited_at);
  CHECK(pins[2].payload == PayloadOf(2));

  // Pinned again: false, nothing moves.
  CHECK_FALSE(Pin(env, 1, 1));
  CHECK(IdsOf(Pinned(env, 1)) == std::vector<ActivityId>{3, 1, 2});
  CHECK(Unpin(env, 1, 1));
  CHECK(IdsOf(Pinned(env, 1)) == std::vector<ActivityId>{3, 2});
  CHECK_FALSE(Unpin(env, 1, 1));
  CHECK_FALSE(Unpin(env, 1, 4));
  CHECK_FALSE(Unpin(env, 2, 3));
  CHECK(IdsOf(Pinned(env, 1)) == std::vector<ActivityId>{3, 2});
  // Pinned again after an unpin: on top.
  CHECK(Pin(env, 1, 1));
  CHECK(IdsOf(Pinned(env, 1)) == std::vector<ActivityId>{1, 3, 2});
  CHECK(Pinned(env, 2).empty());
  CHECK(testing::Own(*env.engine, 1) == own_before);
}

TEST_CASE("only the owner's visible activities pin") {
  Env env(Options(/*cap=*/2));
  env.Pub(1, 1, kStart + 1);
  env.Pub(2, 1, kStart + 2);
  env.Pub(3, 1, kStart + 3);
  env.Pub(4, 5, kStart + 4);
  env.Pub(5, 1, kStart + 5, /*ttl=*/10);
  env.Pub(6, 1, kStart + 6);
  REQUIRE(env.engine->Retract(6).ok());
  CHECK(Pin(env, 1, 3));
  const std::vector<StoredEntry> before = Pinned(env, 1);
  auto refused = [&](EntityId owner, ActivityId id, const char* what) {
    INFO(what);
    const absl::Status status = Edits(env).Pin(owner, id).status();
    CHECK_MESSAGE(absl::IsNotFound(status), status);
    CHECK(Pinned(env, 1) == before);
    CHECK(Pinned(env, 5).empty());
  };
  refused(1, 4, "another actor's activity");
  refused(5, 3, "actor 1's activity, pinned by another");
  refused(1, 99, "unknown activity");
  refused(1, 6, "retracted activity");
  env.clock->Advance(10);
  refused(1, 5, "expired activity");
  // Pushed out of the own feed by its cap, the activity still lives.
  CHECK(Pin(env, 1, 1));
  CHECK(IdsOf(Pinned(env, 1)) == std::vector<ActivityId>{1, 3});
  CHECK(Pin(env, 5, 4));
}

TEST_CASE("a retract ends the pin of the activity") {
  Env env(Options(100));
  env.Fol(2, 1);
  for (ActivityId id = 1; id <= 3; ++id) {
    env.Pub(id, 1, kStart + static_cast<Micros>(id));
    CHECK(Pin(env, 1, id));
  }
  REQUIRE(env.engine->Retract(2).ok());
  CHECK(IdsOf(Pinned(env, 1, /*hydrate=*/true)) ==
        std::vector<ActivityId>{3, 1});
  CHECK_FALSE(Unpin(env, 1, 2));
  CHECK(absl::IsNotFound(Edits(env).Pin(1, 2).status()));
  REQUIRE(env.engine->Retract(2).ok());  // again: a no-op
  CHECK(IdsOf(Pinned(env, 1)) == std::vector<ActivityId>{3, 1});
}

TEST_CASE("at most kMaxPinnedEntries visible pins; expired ones count not") {
  Env env(Options(100));
  constexpr Micros kShort = 10 * kMicrosPerSecond;
  const ActivityId limit = kMaxPinnedEntries;
  // 1..5 expire soon; the others live an hour.
  for (ActivityId id = 1; id <= limit + 6; ++id) {
    env.Pub(id, 1, kStart + static_cast<Micros>(id), id <= 5 ? kShort : 0);
  }
  for (ActivityId id = 1; id <= limit; ++id) CHECK(Pin(env, 1, id));
  REQUIRE(Pinned(env, 1).size() == limit);
  CHECK(Pinned(env, 1).front().activity_id == limit);

  FailsChangingNothing(*env.engine, {1}, "a pin beyond the limit",
                       absl::StatusCode::kFailedPrecondition,
                       [&] { return Edits(env).Pin(1, limit + 1).status(); });
  const absl::Status full = Edits(env).Pin(1, limit + 1).status();
  CHECK_MESSAGE(absl::IsFailedPrecondition(full), full);
  CHECK_MESSAGE(full.message().find("kMaxPinnedEntries") != std::string::npos,
                full);
  CHECK(Pinned(env, 1).size() == limit);
  CHECK(Pinned(env, 1).front().activity_id == limit);
  // A pin already there is still "pinned already", full or not.
  CHECK_FALSE(Pin(env, 1, 7));

  // The short-lived pins expire: not listed, and room for five more.
  env.clock->Advance(kShort);
  std::vector<StoredEntry> pins = Pinned(env, 1);
  REQUIRE(pins.size() == limit - 5);
  CHECK(pins.front().activity_id == limit);
  CHECK(pins.back().activity_id == 6);
  for (const StoredEntry& pin : pins) CHECK(env.Now() < pin.expires_at);
  for (ActivityId id = limit + 1; id <= limit + 5; ++id) {
    CHECK(Pin(env, 1, id));
  }
  pins = Pinned(env, 1, /*hydrate=*/true);
  REQUIRE(pins.size() == limit);
  CHECK(pins.front().activity_id == limit + 5);
  CHECK(pins.front().payload == PayloadOf(limit + 5));
  CHECK(pins.back().activity_id == 6);
  CHECK(absl::IsFailedPrecondition(Edits(env).Pin(1, limit + 6).status()));
  // An unpin makes room again.
  CHECK(Unpin(env, 1, 20));
  CHECK(Pin(env, 1, limit + 6));
  CHECK(Pinned(env, 1).front().activity_id == limit + 6);
  CHECK(Pinned(env, 1).size() == limit);

  // Once every pin has expired, the owner reads as having none.
  env.clock->Advance(kHour);
  CHECK(Pinned(env, 1).empty());
}

}  // namespace
}  // namespace feedcore
