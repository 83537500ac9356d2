// Helpers shared by the tests of the social calls (follow, publish, retract,
// hybrid fan-out): reading whole feeds of any kind, whole follower and
// followee lists, and a digest of every Stats() figure that a rejected call
// must leave alone.
#ifndef FEEDCORE_TESTS_SOCIAL_TEST_UTIL_H_
#define FEEDCORE_TESTS_SOCIAL_TEST_UTIL_H_

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/stats.h"
#include "feedcore/types.h"
#include "model/feed_model.h"
#include "support/test_util.h"

// Lets doctest print lists of ids (EntityId and ActivityId are both
// uint64_t) in failure messages.
template <>
struct doctest::StringMaker<std::vector<uint64_t>> {
  static doctest::String convert(const std::vector<uint64_t>& ids) {
    std::string text = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) text += ' ';
      text += std::to_string(ids[i]);
    }
    text += ']';
    return doctest::String(text.c_str());
  }
};

namespace feedcore {
namespace testing {

inline absl::StatusOr<Page> ReadFeed(const FeedEngine& engine, Feed feed,
                                     EntityId owner,
                                     const ReadOptions& options) {
  switch (feed) {
    case Feed::kTimeline:
      return engine.ReadTimeline(owner, options);
    case Feed::kOwn:
      return engine.ReadOwn(owner, options);
    case Feed::kWorld:
      return engine.ReadWorld(options);
  }
  return absl::InternalError("unknown feed");
}

// Every visible entry of a feed, following cursors to the end. Requires
// every page but the last to be full and the last page to carry no cursor.
inline std::vector<StoredEntry> ReadWhole(const FeedEngine& engine, Feed feed,
                                          EntityId owner,
                                          ReadOptions options = {}) {
  std::vector<StoredEntry> out;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 1'000'000);
    const absl::StatusOr<Page> page = ReadFeed(engine, feed, owner, options);
    REQUIRE_MESSAGE(page.ok(), page.status());
    out.insert(out.end(), page->entries.begin(), page->entries.end());
    if (page->next_cursor.empty()) break;
    REQUIRE(page->entries.size() == options.limit);
    options.cursor = page->next_cursor;
  }
  return out;
}

inline std::vector<StoredEntry> Timeline(const FeedEngine& engine,
                                         EntityId reader,
                                         ReadOptions options = {}) {
  return ReadWhole(engine, Feed::kTimeline, reader, std::move(options));
}
inline std::vector<StoredEntry> Own(const FeedEngine& engine, EntityId actor,
                                    ReadOptions options = {}) {
  return ReadWhole(engine, Feed::kOwn, actor, std::move(options));
}
inline std::vector<StoredEntry> World(const FeedEngine& engine,
                                      ReadOptions options = {}) {
  return ReadWhole(engine, Feed::kWorld, 0, std::move(options));
}

// The activity ids of `entries`, in order.
inline std::vector<ActivityId> IdsOf(const std::vector<StoredEntry>& entries) {
  std::vector<ActivityId> ids;
  ids.reserve(entries.size());
  for (const StoredEntry& e : entries) ids.push_back(e.activity_id);
  return ids;
}

inline bool Contains(const std::vector<StoredEntry>& entries, ActivityId id) {
  for (const StoredEntry& e : entries) {
    if (e.activity_id == id) return true;
  }
  return false;
}

// Every id of a follower (`followers` true) or followee list, following
// cursors with `limit` ids per page. Requires every page but the last to be
// full and non-empty pages only (except for an empty list).
inline std::vector<EntityId> WholeList(const FeedEngine& engine, bool followers,
                                       EntityId entity, size_t limit = 100) {
  std::vector<EntityId> out;
  ListOptions options;
  options.limit = limit;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 1'000'000);
    const absl::StatusOr<EntityPage> page =
        followers ? engine.Followers(entity, options)
                  : engine.Following(entity, options);
    REQUIRE_MESSAGE(page.ok(), page.status());
    REQUIRE(page->ids.size() <= limit);
    out.insert(out.end(), page->ids.begin(), page->ids.end());
    if (page->next_cursor.empty()) break;
    REQUIRE(page->ids.size() == limit);
    options.cursor = page->next_cursor;
  }
  return out;
}

// Publish options for an asynchronous fan-out.
inline PublishOptions Async(bool wait_when_queue_full = true) {
  PublishOptions o;
  o.completion = FanoutCompletion::kAsynchronous;
  o.wait_when_queue_full = wait_when_queue_full;
  return o;
}

// Whole follower or followee lists as sets, paged `limit` at a time.
inline std::set<EntityId> FollowerSet(const FeedEngine& engine, EntityId entity,
                                      size_t limit = 100) {
  const std::vector<EntityId> ids = WholeList(engine, true, entity, limit);
  return {ids.begin(), ids.end()};
}
inline std::set<EntityId> FollowingSet(const FeedEngine& engine,
                                       EntityId entity, size_t limit = 100) {
  const std::vector<EntityId> ids = WholeList(engine, false, entity, limit);
  return {ids.begin(), ids.end()};
}

// Every Stats() figure, for checking that a call changed nothing.
struct SocialDigest {
  StatsDigest timelines;
  size_t activities, retracted_activities, payload_bytes;
  uint64_t activities_evicted;
  size_t follow_edges;
  friend bool operator==(const SocialDigest&, const SocialDigest&) = default;
};

inline SocialDigest Social(const EngineStats& s) {
  return {Digest(s),       s.activities,         s.retracted_activities,
          s.payload_bytes, s.activities_evicted, s.follow_edges};
}

inline std::ostream& operator<<(std::ostream& os, const SocialDigest& d) {
  return os << "{" << d.timelines << " activities=" << d.activities
            << " retracted=" << d.retracted_activities
            << " payload_bytes=" << d.payload_bytes
            << " activities_evicted=" << d.activities_evicted
            << " follow_edges=" << d.follow_edges << "}";
}

inline ReadOptions Limit(size_t limit) {
  ReadOptions r;
  r.limit = limit;
  return r;
}

// The payload every test activity carries unless a test says otherwise.
inline std::string PayloadOf(ActivityId id) {
  std::string payload = "p";
  payload += std::to_string(id);
  return payload;
}

inline Activity MakeActivity(ActivityId id, EntityId actor, Micros ts,
                             Micros ttl = 0) {
  Activity a;
  a.id = id;
  a.actor = actor;
  a.ts = ts;
  a.ttl = ttl;
  a.payload = PayloadOf(id);
  return a;
}

// An engine on a manual clock (no sweeper thread) with shorthands for the
// social calls that fail the test when the call fails. `Engine` is
// InProcessFeedEngine (SocialFixture) or, for tests of any backend,
// FeedEngine.
template <typename Engine>
struct SocialFixtureOf {
  static constexpr Micros kStart = 1'000'000'000;

  explicit SocialFixtureOf(EngineOptions options = Defaults())
      : clock(std::make_shared<ManualClock>(kStart)),
        engine(NewManualEngine(clock, std::move(options))) {}
  // The same shorthands over an engine made elsewhere (another backend)
  // that reads time from `clock`.
  SocialFixtureOf(std::shared_ptr<ManualClock> clock,
                  std::unique_ptr<Engine> engine)
      : clock(std::move(clock)), engine(std::move(engine)) {}
  static EngineOptions Defaults() {
    EngineOptions o;
    o.shards = 8;
    return o;
  }

  PublishResult Pub(const Activity& activity,
                    const PublishOptions& options = {}) {
    const absl::StatusOr<PublishResult> r = engine->Publish(activity, options);
    REQUIRE_MESSAGE(r.ok(), r.status());
    return *r;
  }
  // Publishes activity `id` of `actor` at `ts` with PayloadOf(id).
  PublishResult Pub(ActivityId id, EntityId actor, Micros ts, Micros ttl = 0) {
    return Pub(MakeActivity(id, actor, ts, ttl));
  }
  FollowResult Fol(EntityId follower, EntityId followee,
                   std::optional<size_t> backfill = std::nullopt) {
    FollowOptions o;
    o.backfill = backfill;
    const absl::StatusOr<FollowResult> r =
        engine->Follow(follower, followee, o);
    REQUIRE_MESSAGE(r.ok(), r.status());
    return *r;
  }
  UnfollowResult Unf(EntityId follower, EntityId followee) {
    const absl::StatusOr<UnfollowResult> r =
        engine->Unfollow(follower, followee);
    REQUIRE_MESSAGE(r.ok(), r.status());
    return *r;
  }
  Micros DefaultExpiry() const {
    return kStart + engine->options().default_ttl;
  }

  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<Engine> engine;
};
using SocialFixture = SocialFixtureOf<InProcessFeedEngine>;

// Every visible entry of `owner`'s timeline, newest first, paged.
inline std::vector<StoredEntry> WholeTimeline(const FeedEngine& engine,
                                              EntityId owner) {
  std::vector<StoredEntry> out;
  ReadOptions read;
  read.limit = engine.options().max_page_size;
  for (;;) {
    absl::StatusOr<Page> page = engine.ReadTimeline(owner, read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    out.insert(out.end(), page->entries.begin(), page->entries.end());
    if (page->next_cursor.empty()) return out;
    read.cursor = page->next_cursor;
  }
}

// Every group of `owner`, paged `limit` at a time; checks that no page is
// empty before the end and that no group shows twice.
inline std::vector<FeedGroup> AllGroups(const FeedEngine& engine,
                                        EntityId owner, size_t limit) {
  std::vector<FeedGroup> out;
  GroupReadOptions read;
  read.limit = limit;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 100000);
    absl::StatusOr<GroupPage> page = engine.ReadGroups(owner, read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    CHECK(page->groups.size() <= limit);
    out.insert(out.end(), page->groups.begin(), page->groups.end());
    if (page->next_cursor.empty()) break;
    CHECK(page->groups.size() == limit);
    read.cursor = page->next_cursor;
  }
  return out;
}

}  // namespace testing
}  // namespace feedcore

#endif  // FEEDCORE_TESTS_SOCIAL_TEST_UTIL_H_
