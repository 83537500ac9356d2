// RankFormula's validation, score and fingerprint, shared by the backends'
// ranked reads (FeedEngine::ReadRanked).
//
// Thread safety: pure functions.
#ifndef FEEDCORE_SRC_FEED_RANK_FORMULA_H_
#define FEEDCORE_SRC_FEED_RANK_FORMULA_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "feedcore/social.h"
#include "feedcore/types.h"

namespace feedcore::internal {

inline constexpr double kMaxRankGravity = 10;

// Checks limit, window and formula (not the cursor, which needs the
// owner): InvalidArgument naming the field.
absl::Status ValidateRankedRead(const RankedReadOptions& options,
                                size_t max_page_size,
                                size_t max_timeline_length);

// RankFormula's score of an entry dated `ts` with `counters`, aged from
// `start`. Evaluated in one fixed order of operations, so the same inputs
// give the same bits on every page of a walk. A result that is not a
// number (an infinite numerator over an infinite or zero denominator) is
// 0, and -0 is 0, so that scores are totally ordered.
double RankScore(const RankFormula& formula, const ActivityCounters& counters,
                 Micros start, Micros ts);

// A 64-bit hash of the formula and the window, carried by ranked cursors
// so that a walk cannot continue under another formula or window. Equal
// formulas (operator==, so 0 and -0 alike) give equal fingerprints.
uint64_t RankFingerprint(const RankFormula& formula, size_t window);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_FEED_RANK_FORMULA_H_
