// Tests of cursor paging through FeedEngine::ReadTimeline: exact page
// sequences at every size around the limit, in both orders and with time
// windows; foreign, cross-order and tampered cursors; and keyset stability
// when the timeline changes between pages.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::NewManualEngine;
using testing::ReadAll;

constexpr Micros kStart = 1'000'000;
constexpr Micros kTtl = 30 * kMicrosPerDay;

struct Fixture {
  Fixture() : clock(std::make_shared<ManualClock>(kStart)) {
    EngineOptions o;
    o.shards = 4;
    o.max_timeline_length = 100'000;
    engine = NewManualEngine(clock, o);
  }
  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<InProcessFeedEngine> engine;
};

// Entry i of a test timeline: three entries share each timestamp.
StoredEntry Nth(int i) {
  return {static_cast<Micros>(i / 3) * 10,
          static_cast<ActivityId>(i % 3 + 1),
          static_cast<EntityId>(i),
          kStart + kTtl,
          0,
          {}};
}

void Fill(InProcessFeedEngine& engine, EntityId owner, int n) {
  for (int i = 0; i < n; ++i) {
    const StoredEntry e = Nth(i);
    REQUIRE(engine.Insert(owner, {e.ts, e.activity_id, e.actor}).ok());
  }
}

bool Before(const StoredEntry& a, const StoredEntry& b, ReadOrder order) {
  const auto ka = std::make_pair(a.ts, a.activity_id);
  const auto kb = std::make_pair(b.ts, b.activity_id);
  return order == ReadOrder::kNewestFirst ? ka > kb : ka < kb;
}

std::vector<StoredEntry> Expected(int n, ReadOrder order,
                                  std::optional<Micros> min_ts,
                                  std::optional<Micros> max_ts) {
  std::vector<StoredEntry> out;
  for (int i = 0; i < n; ++i) {
    const StoredEntry e = Nth(i);
    if (min_ts && e.ts < *min_ts) continue;
    if (max_ts && e.ts > *max_ts) continue;
    out.push_back(e);
  }
  std::sort(out.begin(), out.end(), [order](const auto& a, const auto& b) {
    return Before(a, b, order);
  });
  return out;
}

// Reads every page and checks the page structure: full pages until the
// last one, and an empty cursor exactly on the last one.
std::vector<StoredEntry> PageThrough(const InProcessFeedEngine& engine, EntityId owner,
                                     ReadOptions options, size_t expected) {
  std::vector<StoredEntry> seen;
  const size_t pages =
      expected == 0 ? 1 : (expected + options.limit - 1) / options.limit;
  for (size_t p = 0; p < pages; ++p) {
    CAPTURE(p);
    const absl::StatusOr<Page> page = engine.ReadTimeline(owner, options);
    REQUIRE_MESSAGE(page.ok(), page.status());
    const size_t want = std::min(options.limit, expected - seen.size());
    CHECK(page->entries.size() == want);
    seen.insert(seen.end(), page->entries.begin(), page->entries.end());
    const bool last = p + 1 == pages;
    CHECK(page->next_cursor.empty() == last);
    if (page->next_cursor.empty()) break;
    options.cursor = page->next_cursor;
  }
  return seen;
}

TEST_CASE("paging returns every entry once, with a cursor until the end") {
  constexpr size_t kLimit = 7;
  for (const int n : {0, 1, 6, 7, 8, 21, 22}) {
    Fixture f;
    Fill(*f.engine, 5, n);
    for (const ReadOrder order :
         {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
      ReadOptions options;
      options.limit = kLimit;
      options.order = order;
      INFO("n=" << n << " order="
                << (order == ReadOrder::kNewestFirst ? "newest" : "oldest"));
      CHECK(PageThrough(*f.engine, 5, options, n) ==
            Expected(n, order, std::nullopt, std::nullopt));
    }
  }
}

TEST_CASE("paging with time windows") {
  constexpr int kN = 30;  // timestamps 0, 10, ..., 90, three entries each
  Fixture f;
  Fill(*f.engine, 5, kN);
  const std::vector<std::optional<Micros>> bounds = {
      std::nullopt, 0, 1, 9, 10, 11, 40, 45, 89, 90, 91, 1000};
  for (const auto& min_ts : bounds) {
    for (const auto& max_ts : bounds) {
      if (min_ts && max_ts && *min_ts > *max_ts) continue;
      for (const ReadOrder order :
           {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
        for (const size_t limit : {size_t{1}, size_t{3}, size_t{4}}) {
          ReadOptions options;
          options.limit = limit;
          options.order = order;
          options.min_ts = min_ts;
          options.max_ts = max_ts;
          const std::vector<StoredEntry> want =
              Expected(kN, order, min_ts, max_ts);
          INFO("min=" << (min_ts ? *min_ts : -1)
                      << " max=" << (max_ts ? *max_ts : -1)
                      << " limit=" << limit << " oldest_first="
                      << (order == ReadOrder::kOldestFirst));
          CHECK(PageThrough(*f.engine, 5, options, want.size()) == want);
        }
      }
    }
  }
}

TEST_CASE("the limit may change from page to page") {
  Fixture f;
  Fill(*f.engine, 5, 20);
  const std::vector<StoredEntry> want =
      Expected(20, ReadOrder::kNewestFirst, std::nullopt, std::nullopt);
  std::vector<StoredEntry> seen;
  ReadOptions options;
  for (const size_t limit : {size_t{3}, size_t{1}, size_t{10}, size_t{6}}) {
    options.limit = limit;
    const absl::StatusOr<Page> page = f.engine->ReadTimeline(5, options);
    REQUIRE(page.ok());
    seen.insert(seen.end(), page->entries.begin(), page->entries.end());
    options.cursor = page->next_cursor;
  }
  CHECK(options.cursor.empty());
  CHECK(seen == want);
}

std::string FirstCursor(const InProcessFeedEngine& engine, EntityId owner,
                        ReadOrder order) {
  ReadOptions options;
  options.limit = 2;
  options.order = order;
  const absl::StatusOr<Page> page = engine.ReadTimeline(owner, options);
  REQUIRE(page.ok());
  REQUIRE_FALSE(page->next_cursor.empty());
  return page->next_cursor;
}

void CheckCursorRejected(const InProcessFeedEngine& engine, EntityId owner,
                         ReadOrder order, const std::string& cursor) {
  ReadOptions options;
  options.limit = 2;
  options.order = order;
  options.cursor = cursor;
  const absl::StatusOr<Page> page = engine.ReadTimeline(owner, options);
  INFO("cursor \"" << cursor << "\": " << page.status());
  CHECK(absl::IsInvalidArgument(page.status()));
  CHECK(std::string(page.status().message()).find("cursor") !=
        std::string::npos);
}

TEST_CASE("a cursor from another timeline is rejected") {
  Fixture f;
  Fill(*f.engine, 1, 10);
  Fill(*f.engine, 2, 10);
  for (const ReadOrder order :
       {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
    const std::string cursor = FirstCursor(*f.engine, 1, order);
    CheckCursorRejected(*f.engine, 2, order, cursor);
    CheckCursorRejected(*f.engine, 3, order, cursor);  // unknown owner
  }
}

TEST_CASE("a cursor used with the other order is rejected") {
  Fixture f;
  Fill(*f.engine, 1, 10);
  CheckCursorRejected(*f.engine, 1, ReadOrder::kOldestFirst,
                      FirstCursor(*f.engine, 1, ReadOrder::kNewestFirst));
  CheckCursorRejected(*f.engine, 1, ReadOrder::kNewestFirst,
                      FirstCursor(*f.engine, 1, ReadOrder::kOldestFirst));
}

TEST_CASE("a tampered cursor is rejected") {
  Fixture f;
  Fill(*f.engine, 1, 10);
  const std::string cursor = FirstCursor(*f.engine, 1, ReadOrder::kNewestFirst);
  REQUIRE(cursor.size() > 4);
  // Every character but the last (whose low bits base64 may not carry)
  // replaced by another character of the alphabet.
  for (size_t i = 0; i + 1 < cursor.size(); ++i) {
    std::string bad = cursor;
    bad[i] = bad[i] == 'A' ? 'B' : 'A';
    CheckCursorRejected(*f.engine, 1, ReadOrder::kNewestFirst, bad);
  }
  CheckCursorRejected(*f.engine, 1, ReadOrder::kNewestFirst,
                      cursor.substr(0, cursor.size() - 1));
  CheckCursorRejected(*f.engine, 1, ReadOrder::kNewestFirst,
                      cursor.substr(0, cursor.size() / 2));
  CheckCursorRejected(*f.engine, 1, ReadOrder::kNewestFirst, cursor + "AAAA");
  CheckCursorRejected(*f.engine, 1, ReadOrder::kNewestFirst, "%%%%");
  // The untouched cursor still works.
  ReadOptions options;
  options.cursor = cursor;
  CHECK(f.engine->ReadTimeline(1, options).ok());
}

TEST_CASE("newest-first: changes between pages cause no duplicate or skip") {
  Fixture f;
  for (Micros ts = 100; ts < 130; ++ts) {
    REQUIRE(f.engine->Insert(1, {ts, 1, 0}).ok());
  }
  ReadOptions options;
  options.limit = 10;
  absl::StatusOr<Page> page = f.engine->ReadTimeline(1, options);
  REQUIRE(page.ok());
  REQUIRE(page->entries.size() == 10);
  CHECK(page->entries.back().ts == 120);
  std::vector<StoredEntry> seen = page->entries;

  // Newer than the cursor: not part of the rest of this walk.
  REQUIRE(f.engine->Insert(1, {200, 1, 0}).ok());
  REQUIRE(f.engine->Insert(1, {125, 2, 0}).ok());
  REQUIRE(f.engine->Insert(1, {120, 2, 0}).ok());  // same ts, larger id
  // Older than the cursor: must show up in order.
  REQUIRE(f.engine->Insert(1, {120, 0, 0}).ok());  // same ts, smaller id
  REQUIRE(f.engine->Insert(1, {115, 7, 0}).ok());
  REQUIRE(f.engine->Insert(1, {50, 1, 0}).ok());
  // The entry the cursor names is removed: the walk still continues.
  REQUIRE(f.engine->Remove(1, {120, 1}).ok());

  options.cursor = page->next_cursor;
  const std::vector<StoredEntry> rest = ReadAll(*f.engine, 1, options);
  seen.insert(seen.end(), rest.begin(), rest.end());

  std::vector<std::pair<Micros, ActivityId>> keys;
  for (const StoredEntry& e : seen) keys.emplace_back(e.ts, e.activity_id);
  std::vector<std::pair<Micros, ActivityId>> want;
  for (Micros ts = 129; ts >= 120; --ts) want.emplace_back(ts, 1);
  want.emplace_back(120, 0);
  for (Micros ts = 119; ts >= 100; --ts) {
    if (ts == 115) want.emplace_back(115, 7);
    want.emplace_back(ts, 1);
  }
  want.emplace_back(50, 1);
  CHECK(keys == want);
}

TEST_CASE("oldest-first: changes between pages cause no duplicate or skip") {
  Fixture f;
  for (Micros ts = 100; ts < 130; ++ts) {
    REQUIRE(f.engine->Insert(1, {ts, 1, 0}).ok());
  }
  ReadOptions options;
  options.limit = 10;
  options.order = ReadOrder::kOldestFirst;
  absl::StatusOr<Page> page = f.engine->ReadTimeline(1, options);
  REQUIRE(page.ok());
  REQUIRE(page->entries.size() == 10);
  CHECK(page->entries.back().ts == 109);
  std::vector<StoredEntry> seen = page->entries;

  // Older than the cursor: behind this walk.
  REQUIRE(f.engine->Insert(1, {50, 1, 0}).ok());
  REQUIRE(f.engine->Insert(1, {105, 2, 0}).ok());
  REQUIRE(f.engine->Insert(1, {109, 0, 0}).ok());  // same ts, smaller id
  // Newer than the cursor: must show up in order.
  REQUIRE(f.engine->Insert(1, {109, 2, 0}).ok());  // same ts, larger id
  REQUIRE(f.engine->Insert(1, {115, 7, 0}).ok());
  REQUIRE(f.engine->Insert(1, {200, 1, 0}).ok());
  REQUIRE(f.engine->Remove(1, {109, 1}).ok());

  options.cursor = page->next_cursor;
  const std::vector<StoredEntry> rest = ReadAll(*f.engine, 1, options);
  seen.insert(seen.end(), rest.begin(), rest.end());

  std::vector<std::pair<Micros, ActivityId>> keys;
  for (const StoredEntry& e : seen) keys.emplace_back(e.ts, e.activity_id);
  std::vector<std::pair<Micros, ActivityId>> want;
  for (Micros ts = 100; ts <= 109; ++ts) want.emplace_back(ts, 1);
  want.emplace_back(109, 2);
  for (Micros ts = 110; ts < 130; ++ts) {
    want.emplace_back(ts, 1);
    if (ts == 115) want.emplace_back(115, 7);
  }
  want.emplace_back(200, 1);
  CHECK(keys == want);
}

TEST_CASE("a bad cursor is rejected whatever the window") {
  Fixture f;
  Fill(*f.engine, 1, 10);
  Fill(*f.engine, 2, 10);
  const std::string foreign =
      FirstCursor(*f.engine, 2, ReadOrder::kNewestFirst);
  for (const std::string& cursor : {std::string("garbage"), foreign}) {
    for (const std::optional<Micros> max_ts :
         {std::optional<Micros>(), std::optional<Micros>(-1),
          std::optional<Micros>(0)}) {
      ReadOptions options;
      options.cursor = cursor;
      options.max_ts = max_ts;
      const absl::StatusOr<Page> page = f.engine->ReadTimeline(1, options);
      INFO("cursor \"" << cursor << "\" max_ts " << (max_ts ? *max_ts : 999)
                       << ": " << page.status());
      CHECK(absl::IsInvalidArgument(page.status()));
    }
  }
  // Without a cursor, a window entirely below zero is just empty.
  ReadOptions options;
  options.max_ts = -1;
  const absl::StatusOr<Page> page = f.engine->ReadTimeline(1, options);
  REQUIRE(page.ok());
  CHECK(page->entries.empty());
  CHECK(page->next_cursor.empty());
}

TEST_CASE("a cursor outlives the entries it was made from") {
  Fixture f;
  Fill(*f.engine, 1, 6);
  const std::string cursor = FirstCursor(*f.engine, 1, ReadOrder::kNewestFirst);
  for (int i = 0; i < 6; ++i) {
    const StoredEntry e = Nth(i);
    REQUIRE(f.engine->Remove(1, {e.ts, e.activity_id}).ok());
  }
  ReadOptions options;
  options.cursor = cursor;
  const absl::StatusOr<Page> page = f.engine->ReadTimeline(1, options);
  REQUIRE(page.ok());
  CHECK(page->entries.empty());
  CHECK(page->next_cursor.empty());
}

TEST_CASE("no cursor is returned when only expired entries remain") {
  Fixture f;
  InsertOptions short_ttl;
  short_ttl.ttl = 10;
  for (Micros ts = 1; ts <= 3; ++ts) {
    REQUIRE(f.engine->Insert(1, {ts, 1, 0}, short_ttl).ok());
  }
  for (Micros ts = 4; ts <= 6; ++ts) {
    REQUIRE(f.engine->Insert(1, {ts, 1, 0}).ok());
  }
  f.clock->Advance(10);
  for (const ReadOrder order :
       {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
    ReadOptions options;
    options.limit = 3;
    options.order = order;
    if (order == ReadOrder::kOldestFirst) {
      // The expired entries come first in this order; they are skipped.
      const absl::StatusOr<Page> page = f.engine->ReadTimeline(1, options);
      REQUIRE(page.ok());
      CHECK(page->entries.size() == 3);
      CHECK(page->entries.front().ts == 4);
      CHECK(page->next_cursor.empty());
    } else {
      const absl::StatusOr<Page> page = f.engine->ReadTimeline(1, options);
      REQUIRE(page.ok());
      CHECK(page->entries.size() == 3);
      CHECK(page->entries.back().ts == 4);
      CHECK(page->next_cursor.empty());
    }
  }
}

}  // namespace
}  // namespace feedcore
