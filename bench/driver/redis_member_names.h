// Leaderboard member ids as Redis member names whose reverse
// lexicographic order is ascending member id: fixed-width decimal strings
// of (10^w - 1 - member). Redis orders equal scores by member name, and
// with REV the greater name first, so ties come out lower member first,
// as feedcore's TieBreak::kLowerMemberFirst orders them.
#ifndef FEEDCORE_BENCH_DRIVER_REDIS_MEMBER_NAMES_H_
#define FEEDCORE_BENCH_DRIVER_REDIS_MEMBER_NAMES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "feedcore/leaderboard.h"

namespace feedcore::bench {

class RedisMemberNames {
 public:
  // Names for members 0..members-1.
  explicit RedisMemberNames(size_t members) {
    while (top_ < members) {
      top_ = top_ * 10 + 9;
      ++width_;
    }
  }
  std::string Name(MemberId member) const {
    return absl::StrFormat("%0*d", width_, top_ - member);
  }
  bool Parse(absl::string_view name, MemberId* member) const {
    uint64_t inverted = 0;
    if (!absl::SimpleAtoi(name, &inverted) || inverted > top_) return false;
    *member = top_ - inverted;
    return true;
  }

 private:
  uint64_t top_ = 0;
  int width_ = 0;
};

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_REDIS_MEMBER_NAMES_H_
