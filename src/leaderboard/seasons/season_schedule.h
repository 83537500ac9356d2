// Period arithmetic of SeasonSchedule (PeriodAt and PeriodById are declared
// in include/feedcore/seasonal_leaderboard.h), and the checks the seasonal
// board shares with it.
//
// Hourly, daily, weekly and fixed schedules are periods of one length from
// a first boundary in [0, length): the period of an instant is a floored
// division. Monthly periods have four lengths, so they are counted in
// calendar months from January 1970, through absl's civil time in UTC.
// Every sum and product is checked: a period that starts or ends outside
// the int64 microsecond range is InvalidArgument, never a wrapped value.
#ifndef FEEDCORE_SRC_LEADERBOARD_SEASONS_SEASON_SCHEDULE_H_
#define FEEDCORE_SRC_LEADERBOARD_SEASONS_SEASON_SCHEDULE_H_

#include <string>

#include "absl/status/status.h"
#include "feedcore/seasonal_leaderboard.h"

namespace feedcore::internal {

// InvalidArgument naming the field when `schedule` is out of range: a unit
// that is not one of SeasonSchedule::Unit, an hour outside 0..23, a weekday
// outside 0..6 (kWeekly), a duration that is not positive (kFixed).
absl::Status ValidateSeasonSchedule(const SeasonSchedule& schedule);

// "weekly on weekday 1 at 00:00 UTC" and the like, for messages.
std::string DescribeSeasonSchedule(const SeasonSchedule& schedule);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_LEADERBOARD_SEASONS_SEASON_SCHEDULE_H_
