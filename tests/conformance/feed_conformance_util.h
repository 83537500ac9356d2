// Helpers of the FeedEngine conformance cases (feed_conformance_test.cc,
// feed_conformance_social_test.cc): an engine on the selected backend and a
// manual clock, shorthands for expected entries and counts, whole paged
// reads, and the check that a failed call changed nothing.
#ifndef FEEDCORE_TESTS_CONFORMANCE_FEED_CONFORMANCE_UTIL_H_
#define FEEDCORE_TESTS_CONFORMANCE_FEED_CONFORMANCE_UTIL_H_

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/backend.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/types.h"
#include "model/feed_model.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore::testing {

inline constexpr Micros kStart = 1'000'000'000;
inline constexpr Micros kHour = kMicrosPerHour;

// A fresh engine on the selected backend, on a manual clock at kStart,
// with SocialFixture's shorthands. The facets are the backend's:
// engine->relations() and the others are null for those it lacks.
struct Env : testing::SocialFixtureOf<FeedEngine> {
  explicit Env(EngineOptions options = {})
      : Env(std::make_shared<ManualClock>(kStart), std::move(options)) {}

  Micros Now() const { return clock->Now(); }

  InsertResult Ins(EntityId owner, const TimelineEntry& entry,
                   const InsertOptions& options = {}) {
    const absl::StatusOr<InsertResult> r =
        engine->Insert(owner, entry, options);
    REQUIRE_MESSAGE(r.ok(), r.status());
    return *r;
  }
  using SocialFixtureOf<FeedEngine>::Pub;
  // Publishes activity `id` of `actor` at `ts` with PayloadOf(id); requires
  // it to be new.
  void Pub(ActivityId id, EntityId actor, Micros ts, Micros ttl = 0) {
    REQUIRE(Pub(MakeActivity(id, actor, ts, ttl)).created);
  }

 private:
  Env(std::shared_ptr<ManualClock> manual, EngineOptions options)
      : SocialFixtureOf(manual, MakeOn(manual, std::move(options))) {}
  static std::unique_ptr<FeedEngine> MakeOn(std::shared_ptr<ManualClock> manual,
                                            EngineOptions options) {
    options.sweep_interval = 0;
    options.clock = std::move(manual);
    absl::StatusOr<std::unique_ptr<FeedEngine>> made =
        testing::MakeEngine(std::move(options), "feedconf");
    REQUIRE_MESSAGE(made.ok(), made.status());
    return *std::move(made);
  }
};

inline EngineOptions Options(size_t cap, Micros default_ttl = kHour) {
  EngineOptions o;
  o.max_timeline_length = cap;
  o.default_ttl = default_ttl;
  return o;
}

inline std::string Describe(const InsertResult& r) {
  std::ostringstream os;
  os << "{inserted=" << r.inserted << " replaced=" << r.replaced
     << " rejected=" << r.rejected_by_cap << " trimmed=" << r.trimmed << "}";
  return os.str();
}
inline std::string Counts(size_t inserted, size_t replaced, size_t rejected,
                          size_t trimmed) {
  InsertResult r;
  r.inserted = inserted;
  r.replaced = replaced;
  r.rejected_by_cap = rejected;
  r.trimmed = trimmed;
  return Describe(r);
}

inline StoredEntry Stored(Micros ts, ActivityId id, EntityId actor,
                          Micros expires_at, std::string payload = {}) {
  return {ts, id, actor, expires_at, 0, std::move(payload)};
}

inline ReadOptions Read(size_t limit,
                        ReadOrder order = ReadOrder::kNewestFirst) {
  ReadOptions r = Limit(limit);
  r.order = order;
  return r;
}

inline std::vector<StoredEntry> Reversed(std::vector<StoredEntry> entries) {
  std::reverse(entries.begin(), entries.end());
  return entries;
}

// Every page of a feed, following cursors to the end; checks on the way
// that only the last page is short or carries no cursor.
inline std::vector<Page> Pages(const FeedEngine& engine, Feed feed,
                               EntityId owner, ReadOptions options) {
  std::vector<Page> pages;
  for (;;) {
    REQUIRE(pages.size() < 100'000);
    absl::StatusOr<Page> page = ReadFeed(engine, feed, owner, options);
    REQUIRE_MESSAGE(page.ok(), page.status());
    REQUIRE(page->entries.size() <= options.limit);
    pages.push_back(*std::move(page));
    const Page& last = pages.back();
    if (last.next_cursor.empty()) return pages;
    REQUIRE(last.entries.size() == options.limit);
    options.cursor = last.next_cursor;
  }
}

inline std::vector<StoredEntry> Joined(const std::vector<Page>& pages) {
  std::vector<StoredEntry> all;
  for (const Page& page : pages) {
    all.insert(all.end(), page.entries.begin(), page.entries.end());
  }
  return all;
}

// Lists are read in pages of 7, below every max_page_size the cases use.
inline constexpr size_t kListPage = 7;

// What a failed call must leave alone: every feed of `entities` and the
// world feed (hydrated, so payloads count), their follower and followee
// lists and counts.
struct State {
  std::vector<std::vector<StoredEntry>> feeds;
  std::vector<std::set<EntityId>> lists;
  std::vector<size_t> counts;
  friend bool operator==(const State&, const State&) = default;
};

inline State Capture(const FeedEngine& engine,
                     const std::vector<EntityId>& entities) {
  State s;
  ReadOptions r = Limit(7);
  r.hydrate = true;
  for (const EntityId e : entities) {
    s.feeds.push_back(Timeline(engine, e, r));
    s.feeds.push_back(Own(engine, e, r));
    s.lists.push_back(FollowerSet(engine, e, kListPage));
    s.lists.push_back(FollowingSet(engine, e, kListPage));
    s.counts.push_back(engine.FollowerCount(e).value());
    s.counts.push_back(engine.FollowingCount(e).value());
  }
  s.feeds.push_back(World(engine, r));
  return s;
}

// Runs `call`, which must fail with `code`, and checks that it changed
// nothing any read of `entities` can see.
inline void FailsChangingNothing(const FeedEngine& engine,
                                 const std::vector<EntityId>& entities,
                                 const std::string& what, absl::StatusCode code,
                                 const std::function<absl::Status()>& call) {
  INFO(what);
  const State before = Capture(engine, entities);
  const absl::Status status = call();
  CHECK_MESSAGE(status.code() == code, status);
  CHECK(Capture(engine, entities) == before);
}

// ---------------------------------------------------------------------------

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_CONFORMANCE_FEED_CONFORMANCE_UTIL_H_
