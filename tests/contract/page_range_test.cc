// Tests of ResolvePageRange and FinishPage (src/contract/page_range.h): the
// key range of each window and cursor, the errors for cursors of another
// feed, owner or order, and the cursor FinishPage leaves.
#include "contract/page_range.h"

#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "absl/status/status.h"
#include "contract/cursor.h"

namespace feedcore::internal {
namespace {

constexpr size_t kMaxPage = 100;
constexpr ActivityId kLastId = std::numeric_limits<ActivityId>::max();

std::string CursorAt(FeedType feed, EntityId owner, ReadOrder order,
                     EntryKey key) {
  return EncodeTimelineCursor(TimelineCursor{
      owner, order, key.ts, key.activity_id, static_cast<uint8_t>(feed)});
}

PageRange Resolve(const ReadOptions& options, FeedType feed = FeedType::kHome,
                  EntityId owner = 7) {
  absl::StatusOr<PageRange> range =
      ResolvePageRange(feed, owner, options, kMaxPage);
  REQUIRE(range.ok());
  return *range;
}

TEST_CASE("without cursor or window a page may hold every key") {
  const PageRange range = Resolve(ReadOptions{});
  CHECK_FALSE(range.empty);
  CHECK(range.lo == EntryKey::Min());
  CHECK(range.hi == EntryKey::Max());
}

TEST_CASE("a window bounds the timestamps, both ends included") {
  ReadOptions options;
  options.min_ts = 10;
  options.max_ts = 20;
  const PageRange range = Resolve(options);
  CHECK(range.lo == EntryKey{10, 0});
  CHECK(range.hi == EntryKey{20, kLastId});
  CHECK_FALSE(range.empty);

  options.min_ts = 21;
  CHECK(absl::IsInvalidArgument(
      ResolvePageRange(FeedType::kHome, 7, options, kMaxPage).status()));

  options.min_ts = std::nullopt;
  options.max_ts = -1;
  CHECK(Resolve(options).empty);
}

TEST_CASE("a cursor continues strictly after its key, in its order") {
  ReadOptions newest;
  newest.cursor =
      CursorAt(FeedType::kHome, 7, ReadOrder::kNewestFirst, EntryKey{50, 3});
  CHECK(Resolve(newest).hi == EntryKey{50, 2});
  CHECK(Resolve(newest).lo == EntryKey::Min());

  newest.cursor =
      CursorAt(FeedType::kHome, 7, ReadOrder::kNewestFirst, EntryKey{50, 0});
  CHECK(Resolve(newest).hi == EntryKey{49, kLastId});

  ReadOptions oldest;
  oldest.order = ReadOrder::kOldestFirst;
  oldest.cursor = CursorAt(FeedType::kHome, 7, ReadOrder::kOldestFirst,
                           EntryKey{50, kLastId});
  CHECK(Resolve(oldest).lo == EntryKey{51, 0});

  SUBCASE("and never widens the window") {
    newest.max_ts = 10;
    CHECK(Resolve(newest).hi == EntryKey{10, kLastId});
  }
  SUBCASE("at either end there is nothing left") {
    newest.cursor =
        CursorAt(FeedType::kHome, 7, ReadOrder::kNewestFirst, EntryKey::Min());
    CHECK(Resolve(newest).empty);
    oldest.cursor =
        CursorAt(FeedType::kHome, 7, ReadOrder::kOldestFirst, EntryKey::Max());
    CHECK(Resolve(oldest).empty);
  }
}

TEST_CASE("a cursor of another feed, owner or order is refused by name") {
  ReadOptions options;
  options.cursor =
      CursorAt(FeedType::kOwn, 7, ReadOrder::kNewestFirst, EntryKey{5, 5});
  absl::StatusOr<PageRange> range =
      ResolvePageRange(FeedType::kHome, 7, options, kMaxPage);
  REQUIRE(absl::IsInvalidArgument(range.status()));
  CHECK(range.status().message() ==
        "cursor belongs to a own feed, not to a home timeline");

  options.cursor =
      CursorAt(FeedType::kHome, 8, ReadOrder::kNewestFirst, EntryKey{5, 5});
  range = ResolvePageRange(FeedType::kHome, 7, options, kMaxPage);
  REQUIRE(absl::IsInvalidArgument(range.status()));
  CHECK(range.status().message() ==
        "cursor belongs to the home timeline of 8, not of 7");

  options.order = ReadOrder::kOldestFirst;
  options.cursor =
      CursorAt(FeedType::kHome, 7, ReadOrder::kNewestFirst, EntryKey{5, 5});
  range = ResolvePageRange(FeedType::kHome, 7, options, kMaxPage);
  CHECK(absl::IsInvalidArgument(range.status()));

  SUBCASE("whatever the window") {
    options.order = ReadOrder::kNewestFirst;
    options.max_ts = -5;
    options.cursor = "not a cursor";
    CHECK(absl::IsInvalidArgument(
        ResolvePageRange(FeedType::kHome, 7, options, kMaxPage).status()));
  }
}

TEST_CASE("a bad limit is refused before the cursor is read") {
  ReadOptions options;
  options.limit = 0;
  CHECK(absl::IsInvalidArgument(
      ResolvePageRange(FeedType::kWorld, 0, options, kMaxPage).status()));
  options.limit = kMaxPage + 1;
  CHECK(absl::IsInvalidArgument(
      ResolvePageRange(FeedType::kWorld, 0, options, kMaxPage).status()));
}

TEST_CASE("FinishPage cuts the extra entry and continues after the last") {
  Page page;
  for (ActivityId id = 5; id >= 1; --id) {
    StoredEntry entry;
    entry.ts = 100;
    entry.activity_id = id;
    page.entries.push_back(entry);
  }
  ReadOptions read;
  read.limit = 5;
  FinishPage(FeedType::kWorld, 0, read, &page);
  CHECK(page.entries.size() == 5);
  CHECK(page.next_cursor.empty());

  read.limit = 4;
  read.kinds = KindFilter::Except({3});
  FinishPage(FeedType::kWorld, 0, read, &page);
  REQUIRE(page.entries.size() == 4);
  absl::StatusOr<TimelineCursor> next = DecodeTimelineCursor(page.next_cursor);
  REQUIRE(next.ok());
  CHECK(next->ts == 100);
  CHECK(next->activity_id == 2);
  CHECK(next->feed == static_cast<uint8_t>(FeedType::kWorld));
  CHECK(next->kinds == read.kinds.kinds);
  ReadOptions options;
  options.cursor = page.next_cursor;
  options.kinds = read.kinds;
  CHECK(Resolve(options, FeedType::kWorld, 0).hi == EntryKey{100, 1});
  // The cursor continues only a read of the same kinds.
  options.kinds = {};
  CHECK(absl::IsInvalidArgument(
      ResolvePageRange(FeedType::kWorld, 0, options, 10).status()));
}

}  // namespace
}  // namespace feedcore::internal
