// TimelineKey: the key of a timeline entry, (ts, activity_id).
#ifndef FEEDCORE_SRC_TIMELINE_TIMELINE_KEY_H_
#define FEEDCORE_SRC_TIMELINE_TIMELINE_KEY_H_

#include <compare>
#include <limits>
#include <utility>

#include "feedcore/types.h"

namespace feedcore::internal {

// Greater means newer.
struct TimelineKey {
  Micros ts = 0;
  ActivityId activity_id = 0;

  friend auto operator<=>(const TimelineKey&, const TimelineKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const TimelineKey& k) {
    return H::combine(std::move(h), k.ts, k.activity_id);
  }

  static constexpr TimelineKey Min() { return {0, 0}; }
  static constexpr TimelineKey Max() {
    return {std::numeric_limits<Micros>::max(),
            std::numeric_limits<ActivityId>::max()};
  }
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_TIMELINE_TIMELINE_KEY_H_
