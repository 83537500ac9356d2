// Fuzz target: timeline cursors, as a reader passes them back in
// ReadOptions::cursor to ReadTimeline, ReadOwn and ReadWorld.
//
// The first byte picks how the cursor is made: the rest of the input taken
// as the cursor text itself (what a client can send), or the input's
// numbers encoded with the cursor codec (well-formed cursors with any
// order, owner, key and feed, which reach the positioning code behind the
// codec's checks). Every read is held to an oracle computed from the same
// feed read from its start without a cursor:
//   * the read succeeds exactly when the cursor decodes and names this
//     feed, this owner and this order; otherwise it is InvalidArgument;
//   * a page is the first `limit` entries strictly after the cursor's key
//     in the read's order, and has a next cursor exactly when more follow;
//   * a decoded cursor encodes and decodes back to itself.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "contract/cursor.h"
#include "feed_fixture.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "fuzz_check.h"
#include "fuzz_input.h"

namespace feedcore::fuzz {
namespace {

using internal::CursorKind;
using internal::TimelineCursor;

enum class Feed : uint8_t { kHome = 0, kOwn = 1, kWorld = 2 };

absl::StatusOr<Page> Read(const InProcessFeedEngine& engine, Feed feed, EntityId owner,
                          const ReadOptions& options) {
  switch (feed) {
    case Feed::kHome:
      return engine.ReadTimeline(owner, options);
    case Feed::kOwn:
      return engine.ReadOwn(owner, options);
    case Feed::kWorld:
      return engine.ReadWorld(options);
  }
  return absl::InternalError("unknown feed");
}

// The whole feed in `options.order` within its window, page by page.
std::vector<StoredEntry> ReadWhole(const InProcessFeedEngine& engine, Feed feed,
                                   EntityId owner, ReadOptions options) {
  options.cursor.clear();
  options.limit = engine.options().max_page_size;
  std::vector<StoredEntry> out;
  for (;;) {
    absl::StatusOr<Page> page = Read(engine, feed, owner, options);
    FUZZ_CHECK(page.ok());
    out.insert(out.end(), page->entries.begin(), page->entries.end());
    if (page->next_cursor.empty()) return out;
    options.cursor = page->next_cursor;
  }
}

bool After(const StoredEntry& e, const TimelineCursor& c, ReadOrder order) {
  const std::pair<Micros, ActivityId> key{e.ts, e.activity_id};
  const std::pair<Micros, ActivityId> cursor{c.ts, c.activity_id};
  return order == ReadOrder::kNewestFirst ? key < cursor : key > cursor;
}

}  // namespace
}  // namespace feedcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace feedcore;
  using namespace feedcore::fuzz;
  static const FeedFixture* const fixture = new FeedFixture();
  const InProcessFeedEngine& engine = *fixture->engine;

  FuzzInput in(data, size);
  const bool structured = in.Bool();
  const Feed feed = static_cast<Feed>(in.Below(3));
  const EntityId owner =
      feed == Feed::kWorld ? 0 : in.Below(FeedFixture::kEntities + 2);
  ReadOptions read;
  read.order = in.Bool() ? ReadOrder::kOldestFirst : ReadOrder::kNewestFirst;
  read.limit = 1 + in.Below(FeedFixture::kMaxPageSize);
  if (in.Below(4) == 0) {
    read.min_ts = static_cast<Micros>(in.Below(FeedFixture::kLatestTs + 2));
    read.max_ts = *read.min_ts + static_cast<Micros>(in.Below(40));
  }
  if (structured) {
    // Mostly plausible fields, sometimes anything at all.
    const uint64_t fields[] = {
        in.Below(4) == 0 ? in.U64() : in.Below(2),
        in.Below(4) == 0 ? in.U64() : owner,
        in.Below(4) == 0 ? in.U64() : in.Below(FeedFixture::kLatestTs + 2),
        in.Below(4) == 0 ? in.U64() : in.Below(FeedFixture::kActivities + 2),
        in.Below(4) == 0 ? in.U64() : static_cast<uint64_t>(feed)};
    read.cursor = internal::EncodeCursor(CursorKind::kTimeline, fields);
  } else {
    read.cursor = in.Rest();
  }

  const absl::StatusOr<TimelineCursor> decoded =
      internal::DecodeTimelineCursor(read.cursor);
  if (decoded.ok()) {
    const absl::StatusOr<TimelineCursor> again = internal::DecodeTimelineCursor(
        internal::EncodeTimelineCursor(*decoded));
    FUZZ_CHECK(again.ok() && *again == *decoded);
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(decoded.status()));
  }

  const absl::StatusOr<Page> page = Read(engine, feed, owner, read);
  const bool first_page = read.cursor.empty();
  const bool accepted =
      first_page || (decoded.ok() && decoded->owner == owner &&
                     decoded->order == read.order &&
                     decoded->feed == static_cast<uint8_t>(feed));
  FUZZ_CHECK(page.ok() == accepted);
  if (!page.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(page.status()));
    return 0;
  }
  std::vector<StoredEntry> expected;
  for (const StoredEntry& e : ReadWhole(engine, feed, owner, read)) {
    if (first_page || After(e, *decoded, read.order)) expected.push_back(e);
  }
  const bool more = expected.size() > read.limit;
  if (more) expected.resize(read.limit);
  FUZZ_CHECK(page->entries == expected);
  FUZZ_CHECK(page->next_cursor.empty() == !more);
  return 0;
}
