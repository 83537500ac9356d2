#include "contract/page_range.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "contract/cursor.h"
#include "contract/feed_arguments.h"
#include "contract/page_merger.h"

namespace feedcore::internal {

const char* FeedName(FeedType feed) {
  switch (feed) {
    case FeedType::kHome:
      return "home timeline";
    case FeedType::kOwn:
      return "own feed";
    case FeedType::kWorld:
      return "world feed";
    case FeedType::kNotification:
      return "notification feed";
  }
  return "feed of another kind";
}

namespace {

// The range of `options`' window, before any cursor.
PageRange WindowRange(const ReadOptions& options) {
  PageRange range;
  if (options.min_ts.has_value() && *options.min_ts > 0) {
    range.lo = {*options.min_ts, 0};
  }
  // A window entirely below zero holds nothing (timestamps are >= 0), but
  // the cursor is still checked first.
  if (options.max_ts.has_value()) {
    if (*options.max_ts < 0) {
      range.empty = true;
    } else {
      range.hi = {*options.max_ts, std::numeric_limits<ActivityId>::max()};
    }
  }
  return range;
}

// Checks that a cursor made for `order` and `kinds` continues `options`,
// and narrows `range` to what follows its key `after`.
absl::Status ContinueAfter(ReadOrder order, uint64_t kinds, EntryKey after,
                           const ReadOptions& options, PageRange* range) {
  if (order != options.order) {
    return absl::InvalidArgumentError(
        absl::StrCat("cursor was made for ",
                     order == ReadOrder::kNewestFirst ? "newest" : "oldest",
                     "-first reading; keep the order of the first page"));
  }
  if (kinds != options.kinds.kinds) {
    return absl::InvalidArgumentError(
        "cursor was made for a read of other activity kinds; keep the "
        "first page's ReadOptions.kinds");
  }
  if (options.order == ReadOrder::kNewestFirst) {
    const std::optional<EntryKey> older = OlderKey(after);
    if (older.has_value()) {
      range->hi = std::min(range->hi, *older);
    } else {
      range->empty = true;
    }
  } else {
    const std::optional<EntryKey> newer = NewerKey(after);
    if (newer.has_value()) {
      range->lo = std::max(range->lo, *newer);
    } else {
      range->empty = true;
    }
  }
  if (range->lo > range->hi) range->empty = true;
  return absl::OkStatus();
}

// Where a cursor continues: the order and kinds it was made for and the
// key of the last entry it names.
struct CursorPlace {
  ReadOrder order = ReadOrder::kNewestFirst;
  uint64_t kinds = KindFilter::kEveryKind;
  EntryKey after;
};

// Checks `options`, then narrows its window to what follows the cursor
// that `decode` reads and checks, if there is one.
template <typename Decode>
absl::StatusOr<PageRange> ResolveRange(const ReadOptions& options,
                                       size_t max_page_size, Decode decode) {
  if (absl::Status status = ValidateRead(options, max_page_size);
      !status.ok()) {
    return status;
  }
  PageRange range = WindowRange(options);
  if (!options.cursor.empty()) {
    absl::StatusOr<CursorPlace> place = decode();
    if (!place.ok()) return place.status();
    if (absl::Status bad = ContinueAfter(place->order, place->kinds,
                                         place->after, options, &range);
        !bad.ok()) {
      return bad;
    }
  }
  if (range.lo > range.hi) range.empty = true;
  return range;
}

}  // namespace

absl::StatusOr<PageRange> ResolvePageRange(FeedType feed, EntityId owner,
                                           const ReadOptions& options,
                                           size_t max_page_size) {
  return ResolveRange(
      options, max_page_size, [&]() -> absl::StatusOr<CursorPlace> {
        absl::StatusOr<TimelineCursor> cursor =
            DecodeTimelineCursor(options.cursor);
        if (!cursor.ok()) return cursor.status();
        if (cursor->feed != static_cast<uint8_t>(feed)) {
          return absl::InvalidArgumentError(
              absl::StrCat("cursor belongs to a ",
                           FeedName(static_cast<FeedType>(cursor->feed)),
                           ", not to a ", FeedName(feed)));
        }
        if (cursor->owner != owner) {
          return absl::InvalidArgumentError(
              absl::StrCat("cursor belongs to the ", FeedName(feed), " of ",
                           cursor->owner, ", not of ", owner));
        }
        return CursorPlace{
            cursor->order, cursor->kinds, {cursor->ts, cursor->activity_id}};
      });
}

absl::StatusOr<PageRange> ResolveListPageRange(EntityId owner, ListId list,
                                               const ReadOptions& options,
                                               size_t max_page_size) {
  return ResolveRange(
      options, max_page_size, [&]() -> absl::StatusOr<CursorPlace> {
        absl::StatusOr<ListCursor> cursor = DecodeListCursor(options.cursor);
        if (!cursor.ok()) return cursor.status();
        if (cursor->owner != owner || cursor->list != list) {
          return absl::InvalidArgumentError(absl::StrCat(
              "cursor belongs to list ", cursor->list, " of ", cursor->owner,
              ", not to list ", list, " of ", owner));
        }
        return CursorPlace{
            cursor->order, cursor->kinds, {cursor->ts, cursor->activity_id}};
      });
}

void FinishPage(FeedType feed, EntityId owner, const ReadOptions& options,
                Page* page) {
  if (page->entries.size() <= options.limit) return;
  page->entries.resize(options.limit);
  const StoredEntry& last = page->entries.back();
  page->next_cursor = EncodeTimelineCursor(
      TimelineCursor{owner, options.order, last.ts, last.activity_id,
                     static_cast<uint8_t>(feed), options.kinds.kinds});
}

void FinishListPage(EntityId owner, ListId list, const ReadOptions& options,
                    Page* page) {
  if (page->entries.size() <= options.limit) return;
  page->entries.resize(options.limit);
  const StoredEntry& last = page->entries.back();
  page->next_cursor =
      EncodeListCursor(ListCursor{owner, list, options.order, last.ts,
                                  last.activity_id, options.kinds.kinds});
}

}  // namespace feedcore::internal
