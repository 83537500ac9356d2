// Which keys one page of a feed covers, and the cursor that continues it:
// the one resolution of ReadOptions (window, cursor, order) that both
// backends' ReadTimeline, ReadOwn and ReadWorld use, so that a cursor one
// of them made reads the same page on the other.
//
// Thread safety: pure functions.
#ifndef FEEDCORE_SRC_CONTRACT_PAGE_RANGE_H_
#define FEEDCORE_SRC_CONTRACT_PAGE_RANGE_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "feedcore/change_stream.h"
#include "feedcore/options.h"
#include "feedcore/social.h"
#include "feedcore/types.h"

// Exported from the shared libfeedcore for the Redis backend's library,
// which calls this one copy (CMakeLists.txt, feedcore_contract).
#pragma GCC visibility push(default)
namespace feedcore::internal {

// The keys a page may hold, both ends included; `empty` when none can (a
// window below zero or inverted by the cursor, a cursor at the end).
struct PageRange {
  EntryKey lo = EntryKey::Min();
  EntryKey hi = EntryKey::Max();
  bool empty = false;
};

// "home timeline", "own feed", "world feed", "notification feed".
const char* FeedName(FeedType feed);

// Checks `options` (limit, window, kinds, and a cursor: well formed, made
// for `feed` of `owner` and for the same order and kinds) and returns the range
// of the page it asks for. InvalidArgument naming the problem; a bad cursor is
// an error whatever the window.
absl::StatusOr<PageRange> ResolvePageRange(FeedType feed, EntityId owner,
                                           const ReadOptions& options,
                                           size_t max_page_size);

// Cuts `page`, collected with one entry more than `options.limit` to tell
// whether another page follows, to that many entries, and sets its next
// cursor (after its last entry, for the same order and kinds) when one does.
void FinishPage(FeedType feed, EntityId owner, const ReadOptions& options,
                Page* page);

// The same for a page of `owner`'s list `list` (FeedLists::ReadList), whose
// cursors are list cursors.
absl::StatusOr<PageRange> ResolveListPageRange(EntityId owner, ListId list,
                                               const ReadOptions& options,
                                               size_t max_page_size);
void FinishListPage(EntityId owner, ListId list, const ReadOptions& options,
                    Page* page);

}  // namespace feedcore::internal
#pragma GCC visibility pop

#endif  // FEEDCORE_SRC_CONTRACT_PAGE_RANGE_H_
