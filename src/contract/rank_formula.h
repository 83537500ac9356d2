// RankFormula's validation, score and fingerprint, and the walk that
// ranks a window into a page, shared by the backends' ranked reads
// (FeedEngine::ReadRanked): each backend only collects the window and the
// counters of its entries.
//
// Thread safety: pure functions.
#ifndef FEEDCORE_SRC_CONTRACT_RANK_FORMULA_H_
#define FEEDCORE_SRC_CONTRACT_RANK_FORMULA_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "contract/cursor.h"
#include "feedcore/social.h"
#include "feedcore/types.h"

// Exported from the shared libfeedcore for the Redis backend's library,
// which calls this one copy (CMakeLists.txt, feedcore_contract).
#pragma GCC visibility push(default)
namespace feedcore::internal {

inline constexpr double kMaxRankGravity = 10;

// Checks limit, window and formula (not the cursor, which needs the
// owner): InvalidArgument naming the field.
absl::Status ValidateRankedRead(const RankedReadOptions& options,
                                size_t max_page_size,
                                size_t max_timeline_length);

// Checks FeedEngine::IncrementCounter's counter and delta: InvalidArgument
// for a counter out of range or a zero delta (the overflow is checked
// where the counter is).
absl::Status ValidateCounterChange(size_t counter, int64_t delta);

// RankFormula's score of an entry dated `ts` with `counters`, aged from
// `start`. Evaluated in one fixed order of operations, so the same inputs
// give the same bits on every page of a walk. A result that is not a
// number (an infinite numerator over an infinite or zero denominator) is
// 0, and -0 is 0, so that scores are totally ordered.
double RankScore(const RankFormula& formula, const ActivityCounters& counters,
                 Micros start, Micros ts);

// A 64-bit hash of the formula, the window and the kinds kept
// (KindFilter::kinds), carried by ranked cursors so that a walk cannot
// continue under another formula, window or filter. Equal formulas
// (operator==, so 0 and -0 alike) give equal fingerprints.
uint64_t RankFingerprint(const RankFormula& formula, size_t window,
                         uint64_t kinds);

// The change time of counters never changed: before any walk's start.
inline constexpr Micros kNeverCounted = std::numeric_limits<Micros>::min();
// The change time of counters whose change is not dated yet: at or after
// any walk's start.
inline constexpr Micros kCountedNow = std::numeric_limits<Micros>::max();

// What a ranked read needs of an entry's activity.
struct CounterState {
  ActivityCounters counters = {};
  Micros changed_at = kNeverCounted;
};

// Where a ranked read stands before it collects its window.
struct RankedWalk {
  uint64_t fingerprint = 0;
  Micros start = 0;                   // ages every entry of the walk
  std::optional<RankedCursor> after;  // unset on the first page
  // The newest key the window may hold, (ts, id): the start on later
  // pages, unbounded on the first.
  Micros newest_ts = std::numeric_limits<Micros>::max();
  ActivityId newest_id = std::numeric_limits<ActivityId>::max();
  // True when nothing can follow (a later page of a walk that started
  // before every timestamp): the page is empty.
  bool done = false;
};

// Checks the options (ValidateRankedRead) and the cursor (which must
// continue a walk of `owner` under the same formula and window), and
// fixes the walk's start: `now` on the first page, the cursor's after.
absl::StatusOr<RankedWalk> BeginRankedWalk(EntityId owner,
                                           const RankedReadOptions& options,
                                           size_t max_page_size,
                                           size_t max_timeline_length,
                                           Micros now);

// The page of `walk` from its window (the newest `options.window` visible
// entries at or below the walk's newest key, newest first) and their
// counters (`counters[i]` for `window[i]`): on later pages entries whose
// counters changed at or after the start are left out; the rest are
// scored and the best `limit` strictly below the cursor by (score, ts, id)
// make the page, with a cursor when more follow. Entries are not hydrated.
RankedPage RankWindow(EntityId owner, const RankedReadOptions& options,
                      const RankedWalk& walk, std::vector<StoredEntry> window,
                      absl::Span<const CounterState> counters);

}  // namespace feedcore::internal
#pragma GCC visibility pop

#endif  // FEEDCORE_SRC_CONTRACT_RANK_FORMULA_H_
