// PeriodAt and PeriodById for every SeasonSchedule unit: boundaries exactly
// at the boundary instant and one microsecond before, weekdays and hours,
// month lengths and leap years, negative ids before the Unix epoch, the
// edges of the int64 microsecond range, and invalid schedules.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <ostream>
#include <random>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/seasonal_leaderboard.h"

namespace feedcore {

std::ostream& operator<<(std::ostream& os, const SeasonPeriod& p) {
  return os << "{id=" << p.id << " start=" << p.start
            << " next_reset=" << p.next_reset << "}";
}

namespace {

constexpr Micros kSecond = 1'000'000;
constexpr Micros kHour = 3600 * kSecond;
constexpr Micros kDay = 24 * kHour;
constexpr Micros kMax = std::numeric_limits<Micros>::max();
constexpr Micros kMin = std::numeric_limits<Micros>::min();

// 2024-01-01T00:00:00Z, a Monday.
constexpr Micros k2024 = 1'704'067'200 * kSecond;

SeasonPeriod At(const SeasonSchedule& schedule, Micros now) {
  absl::StatusOr<SeasonPeriod> period = PeriodAt(schedule, now);
  REQUIRE_MESSAGE(period.ok(), period.status());
  return *period;
}

SeasonPeriod ById(const SeasonSchedule& schedule, PeriodId id) {
  absl::StatusOr<SeasonPeriod> period = PeriodById(schedule, id);
  REQUIRE_MESSAGE(period.ok(), period.status());
  return *period;
}

// `boundary` starts period `id`: the instant itself is in it, the
// microsecond before is in the one before.
void CheckBoundary(const SeasonSchedule& schedule, Micros boundary,
                   PeriodId id) {
  CAPTURE(boundary);
  CAPTURE(id);
  const SeasonPeriod at = At(schedule, boundary);
  CHECK(at.id == id);
  CHECK(at.start == boundary);
  const SeasonPeriod before = At(schedule, boundary - 1);
  CHECK(before.id == id - 1);
  CHECK(before.next_reset == boundary);
  CHECK(ById(schedule, id) == at);
  CHECK(ById(schedule, id - 1) == before);
}

TEST_CASE("hourly periods start at minute 0, numbered from the epoch") {
  const SeasonSchedule hourly = SeasonSchedule::Hourly();
  CheckBoundary(hourly, 0, 0);
  CheckBoundary(hourly, k2024, k2024 / kHour);
  CheckBoundary(hourly, k2024 + 13 * kHour, k2024 / kHour + 13);
  CHECK(At(hourly, -1) == SeasonPeriod{-1, -kHour, 0});
  CHECK(At(hourly, 90 * 60 * kSecond) == SeasonPeriod{1, kHour, 2 * kHour});
}

TEST_CASE("daily periods start at `hour`") {
  CheckBoundary(SeasonSchedule::Daily(), 0, 0);
  CheckBoundary(SeasonSchedule::Daily(), k2024, 19'723);
  // 05:00: the first boundary after the epoch is 1970-01-01T05:00.
  const SeasonSchedule at5 = SeasonSchedule::Daily(5);
  CheckBoundary(at5, 5 * kHour, 0);
  CheckBoundary(at5, k2024 + 5 * kHour, 19'723);
  // 2024-01-01T04:59:59.999999 still belongs to the day of Dec 31.
  CHECK(At(at5, k2024 + 5 * kHour - 1).start == k2024 - 19 * kHour);
  // Before the epoch, and before the first boundary of the epoch's day.
  CHECK(At(at5, 0) == SeasonPeriod{-1, 5 * kHour - kDay, 5 * kHour});
  CHECK(At(SeasonSchedule::Daily(23), -kDay) ==
        SeasonPeriod{-2, -2 * kDay + 23 * kHour, -kDay + 23 * kHour});
}

TEST_CASE("weekly periods start on `weekday` (0 Sunday) at `hour`") {
  // 1970-01-01 was a Thursday (4): the first Monday is Jan 5, the first
  // Sunday Jan 4, the first Thursday the epoch itself.
  CheckBoundary(SeasonSchedule::Weekly(1), 4 * kDay, 0);
  CheckBoundary(SeasonSchedule::Weekly(0), 3 * kDay, 0);
  CheckBoundary(SeasonSchedule::Weekly(4), 0, 0);
  CheckBoundary(SeasonSchedule::Weekly(3), 6 * kDay, 0);
  CheckBoundary(SeasonSchedule::Weekly(6, 18), 2 * kDay + 18 * kHour, 0);
  // 2024-01-01 was a Monday: 2817 whole weeks after 1970-01-05.
  CheckBoundary(SeasonSchedule::Weekly(1), k2024, 2817);
  CheckBoundary(SeasonSchedule::Weekly(1, 9), k2024 + 9 * kHour, 2817);
  // Sunday 2023-12-31 at 00:00 starts a Sunday week.
  CheckBoundary(SeasonSchedule::Weekly(0), k2024 - kDay, 2817);
  // Monday 2024-01-01 is the second day of that Sunday week.
  CHECK(At(SeasonSchedule::Weekly(0), k2024).start == k2024 - kDay);
  // Before the epoch: the Monday week containing it began 1969-12-29.
  CHECK(At(SeasonSchedule::Weekly(1), 0) ==
        SeasonPeriod{-1, -3 * kDay, 4 * kDay});
}

TEST_CASE("monthly periods follow the calendar's month lengths") {
  const SeasonSchedule monthly = SeasonSchedule::Monthly();
  CheckBoundary(monthly, 0, 0);
  // 2024 is a leap year: February has 29 days.
  const Micros feb2024 = 1'706'745'600 * kSecond;
  const Micros mar2024 = 1'709'251'200 * kSecond;
  CheckBoundary(monthly, k2024, 648);
  CheckBoundary(monthly, feb2024, 649);
  CheckBoundary(monthly, mar2024, 650);
  CHECK(mar2024 - feb2024 == 29 * kDay);
  CHECK(At(monthly, feb2024 + 28 * kDay) ==
        SeasonPeriod{649, feb2024, mar2024});
  // 2023 is not: 28 days.
  const SeasonPeriod feb2023 = At(monthly, 1'675'209'600 * kSecond);
  CHECK(feb2023.id == 637);
  CHECK(feb2023.next_reset - feb2023.start == 28 * kDay);
  // 2000 is a leap year (divisible by 400), 2100 is not (by 100).
  CHECK(ById(monthly, (2000 - 1970) * 12 + 1).next_reset -
            ById(monthly, (2000 - 1970) * 12 + 1).start ==
        29 * kDay);
  CHECK(ById(monthly, (2100 - 1970) * 12 + 1).next_reset -
            ById(monthly, (2100 - 1970) * 12 + 1).start ==
        28 * kDay);
  // 31, 30 and 31 days.
  CHECK(ById(monthly, 648).next_reset - ById(monthly, 648).start == 31 * kDay);
  CHECK(ById(monthly, 651).next_reset - ById(monthly, 651).start == 30 * kDay);
  CHECK(ById(monthly, 659).next_reset - ById(monthly, 659).start == 31 * kDay);
  // Before the epoch: December 1969 is -1, January 1969 is -12, and 1900
  // (not a leap year) has a 28-day February.
  CHECK(At(monthly, -1) == SeasonPeriod{-1, -31 * kDay, 0});
  CHECK(ById(monthly, -12).start == -365 * kDay);
  const PeriodId feb1900 = (1900 - 1970) * 12 + 1;
  CHECK(ById(monthly, feb1900).next_reset - ById(monthly, feb1900).start ==
        28 * kDay);
  // At an hour: the first day's 06:00; 05:59:59.999999 is the month before.
  const SeasonSchedule at6 = SeasonSchedule::Monthly(6);
  CheckBoundary(at6, feb2024 + 6 * kHour, 649);
  CHECK(At(at6, feb2024).id == 648);
  CHECK(At(at6, 0) == SeasonPeriod{-1, -31 * kDay + 6 * kHour, 6 * kHour});
}

TEST_CASE("fixed periods count from the first boundary at or after 0") {
  // Boundaries at 10 + 7i seconds: the first at or after 0 is 3 s.
  const SeasonSchedule fixed = SeasonSchedule::Fixed(10 * kSecond, 7 * kSecond);
  CheckBoundary(fixed, 3 * kSecond, 0);
  CheckBoundary(fixed, 10 * kSecond, 1);
  CheckBoundary(fixed, -4 * kSecond, -1);
  CHECK(At(fixed, 0) == SeasonPeriod{-1, -4 * kSecond, 3 * kSecond});
  // A negative epoch: boundaries at -5 + 7i, the first at or after 0 is 2.
  CheckBoundary(SeasonSchedule::Fixed(-5, 7), 2, 0);
  // One microsecond long.
  CheckBoundary(SeasonSchedule::Fixed(0, 1), 42, 42);
}

TEST_CASE("every instant lies in its period, and periods tile the line") {
  std::mt19937_64 rng(20240101);
  // About 300 years either side of the epoch.
  std::uniform_int_distribution<Micros> instant(-300 * 365 * kDay,
                                                300 * 365 * kDay);
  const SeasonSchedule schedules[] = {SeasonSchedule::Hourly(),
                                      SeasonSchedule::Daily(7),
                                      SeasonSchedule::Weekly(2, 13),
                                      SeasonSchedule::Weekly(0, 23),
                                      SeasonSchedule::Monthly(0),
                                      SeasonSchedule::Monthly(22),
                                      SeasonSchedule::Fixed(-123, 999'983)};
  for (const SeasonSchedule& schedule : schedules) {
    for (int i = 0; i < 2000; ++i) {
      const Micros now = instant(rng);
      CAPTURE(now);
      const SeasonPeriod period = At(schedule, now);
      CHECK(period.start <= now);
      CHECK(now < period.next_reset);
      CHECK(ById(schedule, period.id) == period);
      CHECK(ById(schedule, period.id + 1).start == period.next_reset);
      CHECK(At(schedule, period.next_reset).id == period.id + 1);
      CHECK(At(schedule, period.start - 1).id == period.id - 1);
    }
  }
}

TEST_CASE("periods outside the int64 microsecond range are refused") {
  const SeasonSchedule all[] = {
      SeasonSchedule::Hourly(), SeasonSchedule::Daily(3),
      SeasonSchedule::Weekly(5, 1), SeasonSchedule::Monthly(2),
      SeasonSchedule::Fixed(0, 1000)};
  for (const SeasonSchedule& schedule : all) {
    // The last and first instants lie in periods that end after or start
    // before the range.
    CHECK(PeriodAt(schedule, kMax).status().code() ==
          absl::StatusCode::kInvalidArgument);
    CHECK(PeriodAt(schedule, kMin).status().code() ==
          absl::StatusCode::kInvalidArgument);
    for (PeriodId id : {kMax, kMin, kMax / 2, kMin / 2}) {
      CAPTURE(id);
      CHECK(PeriodById(schedule, id).status().code() ==
            absl::StatusCode::kInvalidArgument);
    }
  }
  // A period that just fits at either end.
  const SeasonSchedule longest = SeasonSchedule::Fixed(0, kMax);
  CHECK(At(longest, 0) == SeasonPeriod{0, 0, kMax});
  CHECK(At(longest, -1) == SeasonPeriod{-1, -kMax, 0});
  CHECK(PeriodAt(longest, kMax).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(At(SeasonSchedule::Fixed(0, 1), kMax - 1) ==
        SeasonPeriod{kMax - 1, kMax - 1, kMax});
  // Year 292,000 is within the range; its months are periods.
  const PeriodId far = (292'000 - 1970) * 12;
  CHECK(ById(SeasonSchedule::Monthly(), far).start > 0);
  CHECK(ById(SeasonSchedule::Monthly(), -far).start < 0);
}

TEST_CASE("schedules out of range are InvalidArgument naming the field") {
  struct Case {
    SeasonSchedule schedule;
    const char* field;
  };
  const Case cases[] = {
      {SeasonSchedule::Daily(24), "SeasonSchedule.hour"},
      {SeasonSchedule::Daily(-1), "SeasonSchedule.hour"},
      {SeasonSchedule::Monthly(25), "SeasonSchedule.hour"},
      {SeasonSchedule::Weekly(7), "SeasonSchedule.weekday"},
      {SeasonSchedule::Weekly(-1, 3), "SeasonSchedule.weekday"},
      {SeasonSchedule::Fixed(0, 0), "SeasonSchedule.duration"},
      {SeasonSchedule::Fixed(5, -7), "SeasonSchedule.duration"},
      {{.unit = static_cast<SeasonSchedule::Unit>(9)}, "SeasonSchedule.unit"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.field);
    for (const absl::Status& status : {PeriodAt(c.schedule, 0).status(),
                                       PeriodById(c.schedule, 0).status()}) {
      CHECK(status.code() == absl::StatusCode::kInvalidArgument);
      CHECK(std::string(status.message()).find(c.field) != std::string::npos);
    }
  }
  // The weekday of a schedule that is not weekly is not read.
  SeasonSchedule daily = SeasonSchedule::Daily(1);
  daily.weekday = 12;
  CHECK(PeriodAt(daily, 0).ok());
}

}  // namespace
}  // namespace feedcore
