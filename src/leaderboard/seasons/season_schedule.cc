#include "leaderboard/seasons/season_schedule.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "feedcore/seasonal_leaderboard.h"

namespace feedcore {
namespace {

constexpr Micros kMicrosPerHour = int64_t{3600} * 1'000'000;
constexpr Micros kMicrosPerDay = 24 * kMicrosPerHour;
constexpr Micros kMicrosPerWeek = 7 * kMicrosPerDay;
// 1970-01-01 was a Thursday.
constexpr int kEpochWeekday = 4;
// More months than the int64 microsecond range spans (about 584,000
// years): ids beyond it are refused before any calendar arithmetic, which
// could otherwise overflow inside the civil time conversion.
constexpr int64_t kMaxMonthsFromEpoch = int64_t{12} * 600'000;

// A schedule of equal periods: boundaries at first_boundary + i * length,
// with first_boundary in [0, length).
struct EqualPeriods {
  Micros length;
  Micros first_boundary;
};

// floor(a / b) and a - b * floor(a / b), for b > 0.
int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b < 0) ? q - 1 : q;
}
int64_t FloorMod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return r < 0 ? r + b : r;
}

EqualPeriods EqualPeriodsOf(const SeasonSchedule& schedule) {
  switch (schedule.unit) {
    case SeasonSchedule::Unit::kHourly:
      return {kMicrosPerHour, 0};
    case SeasonSchedule::Unit::kDaily:
      return {kMicrosPerDay, schedule.hour * kMicrosPerHour};
    case SeasonSchedule::Unit::kWeekly: {
      const int days_to_first = (schedule.weekday - kEpochWeekday + 7) % 7;
      return {kMicrosPerWeek,
              days_to_first * kMicrosPerDay + schedule.hour * kMicrosPerHour};
    }
    case SeasonSchedule::Unit::kFixed:
      return {schedule.duration, FloorMod(schedule.epoch, schedule.duration)};
    case SeasonSchedule::Unit::kMonthly:
      break;
  }
  return {0, 0};  // unreachable for a validated schedule
}

absl::Status OutsideRange(const SeasonSchedule& schedule, PeriodId id) {
  return absl::InvalidArgumentError(
      absl::StrCat("period ", id, " of the schedule ",
                   internal::DescribeSeasonSchedule(schedule),
                   " starts or ends outside the int64 microsecond range"));
}

absl::StatusOr<SeasonPeriod> EqualPeriodById(const SeasonSchedule& schedule,
                                             PeriodId id) {
  const EqualPeriods periods = EqualPeriodsOf(schedule);
  Micros offset = 0;
  SeasonPeriod period{.id = id};
  if (__builtin_mul_overflow(id, periods.length, &offset) ||
      __builtin_add_overflow(periods.first_boundary, offset, &period.start) ||
      __builtin_add_overflow(period.start, periods.length,
                             &period.next_reset)) {
    return OutsideRange(schedule, id);
  }
  return period;
}

// The instant `time` as int64 microseconds, or nothing when it lies
// outside their range.
bool ToMicros(absl::Time time, Micros* micros) {
  if (time < absl::FromUnixMicros(std::numeric_limits<Micros>::min()) ||
      time > absl::FromUnixMicros(std::numeric_limits<Micros>::max())) {
    return false;
  }
  *micros = absl::ToUnixMicros(time);
  return true;
}

absl::Time MonthStart(int64_t months_from_epoch, int hour) {
  const absl::CivilSecond start(1970 + FloorDiv(months_from_epoch, 12),
                                1 + FloorMod(months_from_epoch, 12), 1, hour, 0,
                                0);
  return absl::FromCivil(start, absl::UTCTimeZone());
}

absl::StatusOr<SeasonPeriod> MonthlyPeriodById(const SeasonSchedule& schedule,
                                               PeriodId id) {
  if (id < -kMaxMonthsFromEpoch || id >= kMaxMonthsFromEpoch) {
    return OutsideRange(schedule, id);
  }
  SeasonPeriod period{.id = id};
  if (!ToMicros(MonthStart(id, schedule.hour), &period.start) ||
      !ToMicros(MonthStart(id + 1, schedule.hour), &period.next_reset)) {
    return OutsideRange(schedule, id);
  }
  return period;
}

}  // namespace

namespace internal {

absl::Status ValidateSeasonSchedule(const SeasonSchedule& schedule) {
  switch (schedule.unit) {
    case SeasonSchedule::Unit::kHourly:
    case SeasonSchedule::Unit::kDaily:
    case SeasonSchedule::Unit::kWeekly:
    case SeasonSchedule::Unit::kMonthly:
    case SeasonSchedule::Unit::kFixed:
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "SeasonSchedule.unit is ", static_cast<int>(schedule.unit),
          "; it must be one of SeasonSchedule::Unit (kHourly, kDaily, "
          "kWeekly, kMonthly, kFixed)"));
  }
  if (schedule.hour < 0 || schedule.hour > 23) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SeasonSchedule.hour is ", schedule.hour, "; it must be 0..23"));
  }
  if (schedule.unit == SeasonSchedule::Unit::kWeekly &&
      (schedule.weekday < 0 || schedule.weekday > 6)) {
    return absl::InvalidArgumentError(
        absl::StrCat("SeasonSchedule.weekday is ", schedule.weekday,
                     "; it must be 0 (Sunday)..6 (Saturday)"));
  }
  if (schedule.unit == SeasonSchedule::Unit::kFixed && schedule.duration <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("SeasonSchedule.duration is ", schedule.duration,
                     "; a kFixed schedule needs a duration > 0 microseconds"));
  }
  return absl::OkStatus();
}

std::string DescribeSeasonSchedule(const SeasonSchedule& schedule) {
  const std::string at = absl::StrFormat("at %02d:00 UTC", schedule.hour);
  switch (schedule.unit) {
    case SeasonSchedule::Unit::kHourly:
      return "hourly";
    case SeasonSchedule::Unit::kDaily:
      return absl::StrCat("daily ", at);
    case SeasonSchedule::Unit::kWeekly:
      return absl::StrCat("weekly on weekday ", schedule.weekday, " ", at);
    case SeasonSchedule::Unit::kMonthly:
      return absl::StrCat("monthly on day 1 ", at);
    case SeasonSchedule::Unit::kFixed:
      return absl::StrCat("every ", schedule.duration, " us from ",
                          schedule.epoch);
  }
  return absl::StrCat("unit ", static_cast<int>(schedule.unit));
}

}  // namespace internal

absl::StatusOr<SeasonPeriod> PeriodById(const SeasonSchedule& schedule,
                                        PeriodId id) {
  if (absl::Status s = internal::ValidateSeasonSchedule(schedule); !s.ok()) {
    return s;
  }
  if (schedule.unit == SeasonSchedule::Unit::kMonthly) {
    return MonthlyPeriodById(schedule, id);
  }
  return EqualPeriodById(schedule, id);
}

absl::StatusOr<SeasonPeriod> PeriodAt(const SeasonSchedule& schedule,
                                      Micros now) {
  if (absl::Status s = internal::ValidateSeasonSchedule(schedule); !s.ok()) {
    return s;
  }
  PeriodId id = 0;
  if (schedule.unit == SeasonSchedule::Unit::kMonthly) {
    const absl::CivilSecond civil =
        absl::ToCivilSecond(absl::FromUnixMicros(now), absl::UTCTimeZone());
    id = (civil.year() - 1970) * 12 + (civil.month() - 1);
    // The month's boundary is at `hour` of its first day: before it, `now`
    // is still in the previous month's period.
    if (absl::FromUnixMicros(now) < MonthStart(id, schedule.hour)) --id;
  } else {
    const EqualPeriods periods = EqualPeriodsOf(schedule);
    id = FloorDiv(now, periods.length);
    if (FloorMod(now, periods.length) < periods.first_boundary) --id;
  }
  return PeriodById(schedule, id);
}

}  // namespace feedcore
