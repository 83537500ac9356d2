// FEED.INCR, FEED.COUNTERS and FEED.RANKED (server/feed_ranked_commands.cc):
// replies byte for byte, paging with the cursor, formula options, and the
// errors.
#include "dispatcher_fixture.h"

// GCC 12 reports a false -Wrestrict inside std::string's operator+ (GCC bug
// 105329); the expected replies below are built that way for readability.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "feedcore/feedcore.h"

namespace feedcore::server {
namespace {

constexpr Micros kStart = 1000 * kMicrosPerHour;

DispatcherFixtureOptions Options() {
  DispatcherFixtureOptions o;
  o.start = kStart;
  return o;
}

std::string Counters(int64_t a, int64_t b, int64_t c, int64_t d) {
  return absl::StrCat("*4\r\n:", a, "\r\n:", b, "\r\n:", c, "\r\n:", d, "\r\n");
}

// One entry of a FEED.RANKED reply.
std::string Entry(uint64_t id, uint64_t actor, Micros ts, Micros expires_at,
                  const std::string& payload, const std::string& score,
                  const std::string& counters) {
  return absl::StrCat("*7\r\n", Bulk(absl::StrCat(id)),
                      Bulk(absl::StrCat(actor)), ":", ts, "\r\n:", expires_at,
                      "\r\n", Bulk(payload), Bulk(score), counters);
}

// The cursor of a FEED.RANKED reply (its first bulk string).
std::string CursorOf(const std::string& reply) {
  const size_t length_at = reply.find('$') + 1;
  const size_t line_end = reply.find("\r\n", length_at);
  const size_t length = std::stoul(reply.substr(length_at, line_end));
  return reply.substr(line_end + 2, length);
}

TEST_CASE("FEED.INCR and FEED.COUNTERS") {
  DispatcherFixture f(Options());
  REQUIRE(f.Run({"FEED.PUBLISH", "42", "7", std::to_string(kStart), "p"}) ==
          ":1\r\n");
  CHECK(f.Run({"FEED.COUNTERS", "7"}) == Counters(0, 0, 0, 0));
  CHECK(f.Run({"FEED.INCR", "7", "1", "5"}) == Counters(0, 5, 0, 0));
  CHECK(f.Run({"FEED.INCR", "7", "3", "-2"}) == Counters(0, 5, 0, -2));
  CHECK(f.Run({"FEED.COUNTERS", "7"}) == Counters(0, 5, 0, -2));

  CHECK(StartsWith(f.Run({"FEED.INCR", "8", "0", "1"}), "-ERR no activity 8"));
  CHECK(StartsWith(f.Run({"FEED.COUNTERS", "8"}), "-ERR no activity 8"));
  CHECK(StartsWith(f.Run({"FEED.INCR", "7", "4", "1"}), "-ERR counter 4"));
  CHECK(StartsWith(f.Run({"FEED.INCR", "7", "0", "0"}), "-ERR delta is 0"));
  CHECK(StartsWith(f.Run({"FEED.INCR", "7", "0", "x"}), "-ERR delta must be"));
  CHECK(
      StartsWith(f.Run({"FEED.INCR", "7", "-1", "1"}), "-ERR counter must be"));
  CHECK(StartsWith(f.Run({"FEED.INCR", "7", "1", "9223372036854775807"}),
                   "-ERR counter 1 of activity 7 is 5"));
  CHECK(StartsWith(f.Run({"FEED.INCR", "7", "1"}), "-ERR wrong number"));
  CHECK(f.Run({"FEED.COUNTERS", "7"}) == Counters(0, 5, 0, -2));
}

TEST_CASE("FEED.RANKED pages by score, with the formula's options") {
  DispatcherFixture f(Options());
  REQUIRE(f.Run({"FEED.FOLLOW", "1", "42"}) == ":1\r\n");
  // Three posts an hour apart; the oldest is the most liked.
  for (int i = 0; i < 3; ++i) {
    REQUIRE(f.Run({"FEED.PUBLISH", "42", std::to_string(10 + i),
                   std::to_string(kStart - (2 - i) * kMicrosPerHour),
                   "p" + std::to_string(i)}) == ":1\r\n");
  }
  REQUIRE(f.Run({"FEED.INCR", "10", "0", "9"}) == Counters(9, 0, 0, 0));
  f.clock().Advance(1);
  const Micros expiry = kStart + EngineOptions{}.default_ttl;
  // BASE 1, weights 1 0 0 0, gravity 2, offset 2: scores 10 / (2 + 2)^2,
  // 1 / (1 + 2)^2 and 1 / 2^2, aged from now (1 microsecond later).
  const std::vector<std::string> formula = {"WEIGHTS", "1",       "0", "0",
                                            "0",       "GRAVITY", "2", "OFFSET",
                                            "2",       "BASE",    "1"};
  std::vector<std::string> first = {"FEED.RANKED", "1", "LIMIT", "2"};
  first.insert(first.end(), formula.begin(), formula.end());
  const std::string page1 = f.Run(first);
  const std::string cursor = CursorOf(page1);
  REQUIRE(cursor != "0");
  // The engine's order of operations, so that the text is the same.
  auto score = [](double popularity, Micros age) {
    const double hours =
        static_cast<double>(age) / static_cast<double>(kMicrosPerHour);
    return absl::StrFormat("%.17g", popularity / std::pow(hours + 2, 2.0));
  };
  CHECK(page1 == absl::StrCat("*2\r\n", Bulk(cursor), "*2\r\n",
                              Entry(10, 42, kStart - 2 * kMicrosPerHour, expiry,
                                    "p0", score(10, 2 * kMicrosPerHour + 1),
                                    Counters(9, 0, 0, 0)),
                              Entry(12, 42, kStart, expiry, "p2", score(1, 1),
                                    Counters(0, 0, 0, 0))));
  std::vector<std::string> next = {"FEED.RANKED", "1",      "LIMIT",
                                   "2",           "CURSOR", cursor};
  next.insert(next.end(), formula.begin(), formula.end());
  const std::string page2 = f.Run(next);
  CHECK(StartsWith(
      page2, "*2\r\n" + Bulk("0") + "*1\r\n*7\r\n" + Bulk("11") + Bulk("42")));
  // Another formula with the same cursor is refused.
  CHECK(StartsWith(f.Run({"FEED.RANKED", "1", "CURSOR", cursor}),
                   "-ERR cursor was made with another formula"));
  CHECK(StartsWith(f.Run({"FEED.RANKED", "1", "WINDOW", "1"}),
                   "*2\r\n" + Bulk("0") + "*1\r\n"));
  CHECK(f.Run({"FEED.RANKED", "2"}) == "*2\r\n" + Bulk("0") + "*0\r\n");
}

TEST_CASE("FEED.RANKED errors") {
  DispatcherFixture f(Options());
  CHECK(StartsWith(f.Run({"FEED.RANKED", "18446744073709551616"}),
                   "-ERR user must be"));
  CHECK(StartsWith(f.Run({"FEED.RANKED", "1", "LIMIT", "0"}),
                   "-ERR LIMIT must be"));
  CHECK(StartsWith(f.Run({"FEED.RANKED", "1", "WINDOW", "0"}),
                   "-ERR WINDOW must be"));
  CHECK(StartsWith(f.Run({"FEED.RANKED", "1", "WINDOW", "100000"}),
                   "-ERR RankedReadOptions.window"));
  CHECK(StartsWith(f.Run({"FEED.RANKED", "1", "GRAVITY", "11"}),
                   "-ERR RankedReadOptions.formula.gravity"));
  CHECK(StartsWith(f.Run({"FEED.RANKED", "1", "GRAVITY", "heavy"}),
                   "-ERR GRAVITY must be a number"));
  CHECK(StartsWith(f.Run({"FEED.RANKED", "1", "OFFSET", "0"}),
                   "-ERR RankedReadOptions.formula.age_offset_hours"));
  CHECK(StartsWith(f.Run({"FEED.RANKED", "1", "BASE", "nan"}),
                   "-ERR RankedReadOptions.formula.base"));
  CHECK(StartsWith(f.Run({"FEED.RANKED", "1", "WEIGHTS", "1", "2", "3"}),
                   "-ERR syntax error"));
  CHECK(StartsWith(f.Run({"FEED.RANKED", "1", "CURSOR", "garbage"}),
                   "-ERR invalid ranked cursor"));
  CHECK(
      StartsWith(f.Run({"FEED.RANKED", "1", "SIDEWAYS"}), "-ERR syntax error"));
  CHECK(StartsWith(f.Run({"FEED.RANKED"}), "-ERR wrong number"));
}

}  // namespace
}  // namespace feedcore::server
