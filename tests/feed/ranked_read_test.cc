// Activity counters and ranked reads (FeedEngine::IncrementCounter,
// GetCounters, ReadRanked): the formula on hand-computed values, order and
// ties, the window, walks of pages while counters change, and every error.

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/feed_engine.h"
#include "feedcore/social.h"
#include "support/social_test_util.h"

namespace feedcore {
namespace {

constexpr Micros kHour = kMicrosPerHour;
// Late enough for activities dated hours before it.
constexpr Micros kNow = testing::SocialFixture::kStart + 1000 * kHour;

struct SocialFixture : testing::SocialFixture {
  explicit SocialFixture(EngineOptions options = Defaults())
      : testing::SocialFixture(std::move(options)) {
    clock->Advance(kNow - testing::SocialFixture::kStart);
  }
};

// gravity 2 and offset 2 keep the hand-computed scores exact.
RankFormula Simple() {
  RankFormula f;
  f.base = 1;
  f.weights = {1, 2, 0, 0};
  f.gravity = 2;
  f.age_offset_hours = 2;
  return f;
}

RankedReadOptions Ranked(size_t limit, RankFormula formula = Simple(),
                         size_t window = 200) {
  RankedReadOptions o;
  o.limit = limit;
  o.formula = formula;
  o.window = window;
  return o;
}

RankedPage Read(const InProcessFeedEngine& engine, EntityId owner,
                const RankedReadOptions& options) {
  absl::StatusOr<RankedPage> page = engine.ReadRanked(owner, options);
  REQUIRE_MESSAGE(page.ok(), page.status());
  return *page;
}

std::vector<ActivityId> Ids(const RankedPage& page) {
  std::vector<ActivityId> ids;
  for (const RankedEntry& e : page.entries) ids.push_back(e.entry.activity_id);
  return ids;
}

void Incr(InProcessFeedEngine& engine, ActivityId id, size_t counter, int64_t delta) {
  const absl::StatusOr<ActivityCounters> r =
      engine.IncrementCounter(id, counter, delta);
  REQUIRE_MESSAGE(r.ok(), r.status());
}

// Reader 1 follows actor 2; activities 1..n of actor 2 published `hours`
// apart, the newest (id n) at kNow.
void Feed(SocialFixture& f, int n, Micros apart = kHour) {
  f.Fol(1, 2);
  for (int i = 1; i <= n; ++i) {
    f.Pub(static_cast<ActivityId>(i), 2, kNow - (n - i) * apart);
  }
}

TEST_CASE("counters: O(1) increments, every error changes nothing") {
  SocialFixture f;
  f.Pub(1, 2, kNow);
  CHECK(f.engine->GetCounters(1).value() == ActivityCounters{});
  CHECK(f.engine->IncrementCounter(1, 0, 5).value() ==
        ActivityCounters{5, 0, 0, 0});
  CHECK(f.engine->IncrementCounter(1, 3, -2).value() ==
        ActivityCounters{5, 0, 0, -2});
  CHECK(f.engine->GetCounters(1).value() == ActivityCounters{5, 0, 0, -2});

  auto code = [](const auto& r) { return r.status().code(); };
  CHECK(code(f.engine->IncrementCounter(1, kActivityCounterCount, 1)) ==
        absl::StatusCode::kInvalidArgument);
  CHECK(code(f.engine->IncrementCounter(1, 0, 0)) ==
        absl::StatusCode::kInvalidArgument);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  CHECK(code(f.engine->IncrementCounter(1, 0, kMax)) ==
        absl::StatusCode::kInvalidArgument);
  CHECK(code(f.engine->IncrementCounter(1, 3, kMin)) ==
        absl::StatusCode::kInvalidArgument);
  Incr(*f.engine, 1, 1, kMax);
  CHECK(code(f.engine->IncrementCounter(1, 1, 1)) ==
        absl::StatusCode::kInvalidArgument);
  CHECK(f.engine->GetCounters(1).value() == ActivityCounters{5, kMax, 0, -2});

  CHECK(code(f.engine->IncrementCounter(99, 0, 1)) ==
        absl::StatusCode::kNotFound);
  CHECK(code(f.engine->GetCounters(99)) == absl::StatusCode::kNotFound);
  f.Pub(2, 2, kNow);
  REQUIRE(f.engine->Retract(2).ok());
  CHECK(code(f.engine->IncrementCounter(2, 0, 1)) ==
        absl::StatusCode::kNotFound);
  CHECK(code(f.engine->GetCounters(2)) == absl::StatusCode::kNotFound);
  f.Pub(3, 2, kNow, kMicrosPerMinute);
  f.clock->Advance(kMicrosPerMinute);
  CHECK(code(f.engine->IncrementCounter(3, 0, 1)) ==
        absl::StatusCode::kNotFound);
  CHECK(code(f.engine->GetCounters(3)) == absl::StatusCode::kNotFound);
}

TEST_CASE("scores follow the formula, hand-computed") {
  SocialFixture f;
  Feed(f, 3);  // 1 at kNow - 2h, 2 at kNow - 1h, 3 at kNow
  Incr(*f.engine, 1, 0, 3);
  Incr(*f.engine, 1, 1, 1);  // popularity 1 + 3 + 2 = 6
  Incr(*f.engine, 2, 1, 1);  // popularity 3
  Incr(*f.engine, 3, 2, 7);  // weight 0: popularity 1
  const RankedPage page = Read(*f.engine, 1, Ranked(10));
  REQUIRE(page.entries.size() == 3);
  CHECK(Ids(page) == std::vector<ActivityId>{1, 2, 3});
  CHECK(page.entries[0].score == doctest::Approx(6.0 / 16));  // (2+2)^2
  CHECK(page.entries[1].score == doctest::Approx(3.0 / 9));   // (1+2)^2
  CHECK(page.entries[2].score == doctest::Approx(1.0 / 4));   // (0+2)^2
  CHECK(page.entries[0].counters == ActivityCounters{3, 1, 0, 0});
  CHECK(page.entries[2].counters == ActivityCounters{0, 0, 7, 0});
  CHECK(page.entries[0].entry.payload.empty());
  CHECK(page.next_cursor.empty());

  // Gravity 1.8 and offset 2, the defaults: 6 / 4^1.8.
  RankFormula defaults;
  defaults.weights = {1, 2, 0, 0};
  const RankedPage decayed = Read(*f.engine, 1, Ranked(1, defaults));
  CHECK(decayed.entries[0].score == doctest::Approx(6 / std::pow(4.0, 1.8)));

  // Gravity 0: no decay at all; an entry from the future has age 0.
  f.Pub(4, 2, kNow + 5 * kHour);
  Incr(*f.engine, 4, 0, 1);
  RankFormula flat = Simple();
  flat.gravity = 0;
  const RankedPage undecayed = Read(*f.engine, 1, Ranked(10, flat));
  CHECK(Ids(undecayed) == std::vector<ActivityId>{1, 2, 4, 3});
  CHECK(undecayed.entries[0].score == 6);
  CHECK(undecayed.entries[2].score == 2);
  const RankedPage future = Read(*f.engine, 1, Ranked(10));
  CHECK(future.entries[0].entry.activity_id == 4);  // 2 / 2^2 = 0.5
  CHECK(future.entries[0].score == doctest::Approx(0.5));

  // Hydration fills the payload.
  RankedReadOptions hydrated = Ranked(10);
  hydrated.hydrate = true;
  for (const RankedEntry& e : Read(*f.engine, 1, hydrated).entries) {
    CHECK(e.entry.payload == testing::PayloadOf(e.entry.activity_id));
  }
}

TEST_CASE("equal scores go by descending key; entries without an activity") {
  SocialFixture f;
  // Low-level inserts: no published activity, zero counters, one ts.
  for (ActivityId id = 10; id < 15; ++id) {
    REQUIRE(f.engine->Insert(1, {kNow, id, 3}).ok());
  }
  f.Fol(1, 2);
  f.Pub(20, 2, kNow);  // same ts, same zero counters: ties too
  const RankedPage page = Read(*f.engine, 1, Ranked(3));
  CHECK(Ids(page) == std::vector<ActivityId>{20, 14, 13});
  for (const RankedEntry& e : page.entries) {
    CHECK(e.score == doctest::Approx(0.25));
    CHECK(e.counters == ActivityCounters{});
  }
  RankedReadOptions next = Ranked(3);
  next.cursor = page.next_cursor;
  const RankedPage rest = Read(*f.engine, 1, next);
  CHECK(Ids(rest) == std::vector<ActivityId>{12, 11, 10});
  CHECK(rest.next_cursor.empty());
}

TEST_CASE("the window ranks only the newest entries") {
  SocialFixture f;
  Feed(f, 10);
  Incr(*f.engine, 1, 0, 1000);  // the oldest, and by far the most popular
  CHECK(Read(*f.engine, 1, Ranked(1, Simple(), 10))
            .entries[0]
            .entry.activity_id == 1);
  const RankedPage page = Read(*f.engine, 1, Ranked(10, Simple(), 4));
  CHECK(Ids(page) == std::vector<ActivityId>{10, 9, 8, 7});
}

TEST_CASE("merged-at-read followees are ranked as ReadTimeline merges") {
  EngineOptions o = SocialFixture::Defaults();
  o.hybrid_fanout_threshold = 1;
  SocialFixture f(o);
  f.Fol(1, 2);
  f.Fol(3, 2);  // 2 is now merged at read
  f.Pub(1, 2, kNow - kHour);
  f.Pub(2, 2, kNow);
  Incr(*f.engine, 1, 0, 10);
  CHECK(Ids(Read(*f.engine, 1, Ranked(10))) == std::vector<ActivityId>{1, 2});
  CHECK(Ids(Read(*f.engine, 3, Ranked(10))) == std::vector<ActivityId>{1, 2});
}

// Walks every page of `owner` with `limit` per page, calling `between`
// before each page after the first; returns the ids in the order shown.
template <typename Between>
std::vector<ActivityId> Walk(const InProcessFeedEngine& engine, EntityId owner,
                             RankedReadOptions options, Between between) {
  std::vector<ActivityId> shown;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 10000);
    if (pages > 0) between(pages);
    const RankedPage page = Read(engine, owner, options);
    for (ActivityId id : Ids(page)) shown.push_back(id);
    if (page.next_cursor.empty()) return shown;
    CHECK(page.entries.size() == options.limit);
    options.cursor = page.next_cursor;
  }
}

TEST_CASE("a walk never shows an entry twice while counters change") {
  SocialFixture f;
  Feed(f, 6);
  for (ActivityId id = 1; id <= 6; ++id) Incr(*f.engine, id, 0, 10 * id);
  // Changes before a walk starts are part of it (a change at its very
  // start time would be left out of its later pages).
  f.clock->Advance(1);
  // By score: 6 5 4 3 2 1 (more popular and newer). After page one (6, 5)
  // activity 6 falls to the bottom: left out of later pages, it does not
  // show again; the unchanged ones keep their places.
  const std::vector<ActivityId> shown =
      Walk(*f.engine, 1, Ranked(2), [&](int page) {
        if (page == 1) Incr(*f.engine, 6, 0, -60);
      });
  CHECK(shown == std::vector<ActivityId>{6, 5, 4, 3, 2, 1});

  // A rise to the top after the walk passed it is missed by this walk, and
  // shown first by the next one. Activity 6 (now 1 / 4^2) is below 2.
  f.clock->Advance(1);
  const std::vector<ActivityId> missed =
      Walk(*f.engine, 1, Ranked(2), [&](int page) {
        if (page == 2) Incr(*f.engine, 1, 0, 1000);
      });
  CHECK(missed == std::vector<ActivityId>{5, 4, 3, 2, 6});
  f.clock->Advance(1);
  CHECK(Ids(Read(*f.engine, 1, Ranked(2))) == std::vector<ActivityId>{1, 5});
}

TEST_CASE("a change at the walk's start time is left out too") {
  SocialFixture f;
  Feed(f, 4);
  for (ActivityId id = 1; id <= 4; ++id) Incr(*f.engine, id, 0, 10 * id);
  f.clock->Advance(1);  // the walk's start; the clock then stays there
  const RankedPage first = Read(*f.engine, 1, Ranked(2));
  CHECK(Ids(first) == std::vector<ActivityId>{4, 3});
  Incr(*f.engine, 4, 0, -40);  // same clock reading as the walk's start
  // Activity 4 now scores below 1: counted, it would show again last.
  RankedReadOptions next = Ranked(3);
  next.cursor = first.next_cursor;
  const RankedPage rest = Read(*f.engine, 1, next);
  CHECK(Ids(rest) == std::vector<ActivityId>{2, 1});
  CHECK(rest.next_cursor.empty());
}

TEST_CASE("ages are measured from the walk's start on every page") {
  SocialFixture f;
  Feed(f, 4);
  const RankedPage first = Read(*f.engine, 1, Ranked(2));
  f.clock->Advance(100 * kHour);
  RankedReadOptions next = Ranked(2);
  next.cursor = first.next_cursor;
  const RankedPage second = Read(*f.engine, 1, next);
  CHECK(Ids(second) == std::vector<ActivityId>{2, 1});
  CHECK(second.entries[0].score == doctest::Approx(1.0 / 16));  // 2h old
}

TEST_CASE("entries newer than the walk's start wait for the next walk") {
  SocialFixture f;
  Feed(f, 4);
  const RankedPage first = Read(*f.engine, 1, Ranked(2));
  CHECK(Ids(first) == std::vector<ActivityId>{4, 3});
  f.clock->Advance(kMicrosPerMinute);
  f.Pub(5, 2, kNow + kMicrosPerMinute);
  Incr(*f.engine, 5, 0, 100);
  RankedReadOptions next = Ranked(2);
  next.cursor = first.next_cursor;
  CHECK(Ids(Read(*f.engine, 1, next)) == std::vector<ActivityId>{2, 1});
  CHECK(Ids(Read(*f.engine, 1, Ranked(2))) == std::vector<ActivityId>{5, 4});
}

TEST_CASE("bad arguments and foreign cursors are InvalidArgument") {
  SocialFixture f;
  Feed(f, 4);
  auto code = [&](EntityId owner, const RankedReadOptions& o) {
    return f.engine->ReadRanked(owner, o).status().code();
  };
  constexpr auto kBad = absl::StatusCode::kInvalidArgument;
  const size_t max_page = f.engine->options().max_page_size;
  const size_t max_window = f.engine->options().max_timeline_length;
  CHECK(code(1, Ranked(0)) == kBad);
  CHECK(code(1, Ranked(max_page + 1)) == kBad);
  CHECK(code(1, Ranked(max_page)) == absl::StatusCode::kOk);
  CHECK(code(1, Ranked(2, Simple(), 0)) == kBad);
  CHECK(code(1, Ranked(2, Simple(), max_window + 1)) == kBad);
  CHECK(code(1, Ranked(2, Simple(), max_window)) == absl::StatusCode::kOk);
  const double kInf = std::numeric_limits<double>::infinity();
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  for (double bad : {kInf, -kInf, kNan}) {
    RankFormula base = Simple();
    base.base = bad;
    CHECK(code(1, Ranked(2, base)) == kBad);
    RankFormula weight = Simple();
    weight.weights[3] = bad;
    CHECK(code(1, Ranked(2, weight)) == kBad);
    RankFormula gravity = Simple();
    gravity.gravity = bad;
    CHECK(code(1, Ranked(2, gravity)) == kBad);
    RankFormula offset = Simple();
    offset.age_offset_hours = bad;
    CHECK(code(1, Ranked(2, offset)) == kBad);
  }
  for (double gravity : {-0.5, 10.5}) {
    RankFormula g = Simple();
    g.gravity = gravity;
    CHECK(code(1, Ranked(2, g)) == kBad);
  }
  for (double gravity : {0.0, 10.0}) {
    RankFormula g = Simple();
    g.gravity = gravity;
    CHECK(code(1, Ranked(2, g)) == absl::StatusCode::kOk);
  }
  for (double offset : {0.0, -1.0}) {
    RankFormula o = Simple();
    o.age_offset_hours = offset;
    CHECK(code(1, Ranked(2, o)) == kBad);
  }

  const std::string cursor = Read(*f.engine, 1, Ranked(2)).next_cursor;
  REQUIRE(!cursor.empty());
  RankedReadOptions o = Ranked(2);
  o.cursor = cursor;
  CHECK(code(1, o) == absl::StatusCode::kOk);
  CHECK(code(7, o) == kBad);  // another owner
  RankedReadOptions other_formula = o;
  other_formula.formula.weights[0] = 3;
  CHECK(code(1, other_formula) == kBad);
  RankedReadOptions other_window = o;
  other_window.window = 100;
  CHECK(code(1, other_window) == kBad);
  RankedReadOptions other_limit = o;
  other_limit.limit = 3;  // the page size may change within a walk
  CHECK(code(1, other_limit) == absl::StatusCode::kOk);
  RankedReadOptions damaged = o;
  damaged.cursor[3] = damaged.cursor[3] == 'A' ? 'B' : 'A';
  CHECK(code(1, damaged) == kBad);
  RankedReadOptions truncated = o;
  truncated.cursor.pop_back();
  CHECK(code(1, truncated) == kBad);
  ReadOptions timeline;
  timeline.limit = 2;
  RankedReadOptions foreign = o;
  foreign.cursor = f.engine->ReadTimeline(1, timeline).value().next_cursor;
  CHECK(code(1, foreign) == kBad);
}

}  // namespace
}  // namespace feedcore
