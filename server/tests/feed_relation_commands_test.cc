// Unit tests of feedcore-server's mute and block commands
// (server/feed_relation_commands.cc): each reply byte for
// byte, paging of FEED.BLOCKED and FEED.MUTED, and the errors.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatcher_fixture.h"
#include "feedcore/feedcore.h"

namespace feedcore::server {
namespace {

constexpr Micros kStart = kDispatcherFixtureStart;

std::string Result(int changed, int removed, int backfilled, int ended) {
  return absl::StrCat("*4\r\n:", changed, "\r\n:", removed, "\r\n:", backfilled,
                      "\r\n:", ended, "\r\n");
}

bool IsError(const std::string& reply) { return reply.rfind("-ERR", 0) == 0; }

TEST_CASE("FEED.MUTE and FEED.UNMUTE hide and restore an actor") {
  DispatcherFixture f;
  CHECK(f.Run({"FEED.FOLLOW", "1", "42"}) == ":1\r\n");
  CHECK(f.Run({"FEED.PUBLISH", "42", "100", "5", "a"}) == ":1\r\n");
  CHECK(f.Run({"FEED.MUTE", "1", "42", "NOTIFICATIONS", "EXPIRES", "60000"}) ==
        Result(1, 1, 0, 0));
  CHECK(f.Run({"FEED.READ", "1"}) == "*2\r\n" + Bulk("0") + "*0\r\n");
  const std::string expires = absl::StrCat(kStart + 60'000'000);
  CHECK(f.Run({"FEED.MUTED", "1"}) == "*2\r\n" + Bulk("0") + "*1\r\n*3\r\n" +
                                          Bulk("42") + ":1\r\n:" + expires +
                                          "\r\n");
  CHECK(f.Run({"FEED.UNMUTE", "1", "42", "BACKFILL", "5"}) ==
        Result(1, 0, 1, 0));
  CHECK(f.Run({"FEED.UNMUTE", "1", "42"}) == Result(0, 0, 0, 0));
  CHECK(f.Run({"FEED.MUTED", "1"}) == "*2\r\n" + Bulk("0") + "*0\r\n");
}

TEST_CASE("FEED.BLOCK ends follows; FEED.BLOCKED pages") {
  DispatcherFixture f;
  CHECK(f.Run({"FEED.FOLLOW", "1", "42"}) == ":1\r\n");
  CHECK(f.Run({"FEED.FOLLOW", "42", "1"}) == ":1\r\n");
  CHECK(f.Run({"FEED.BLOCK", "1", "42"}) == Result(1, 0, 0, 2));
  CHECK(f.Run({"FEED.BLOCK", "1", "42"}) == Result(0, 0, 0, 0));
  CHECK(IsError(f.Run({"FEED.FOLLOW", "42", "1"})));
  CHECK(f.Run({"FEED.BLOCK", "1", "43"}) == Result(1, 0, 0, 0));
  const std::string first = f.Run({"FEED.BLOCKED", "1", "LIMIT", "1"});
  REQUIRE(first.rfind("*2\r\n$", 0) == 0);
  CHECK(first.find(Bulk("42")) != std::string::npos);
  // The cursor is the first bulk string of the reply.
  const size_t start = first.find("\r\n", 4) + 2;
  const std::string cursor =
      first.substr(start, first.find("\r\n", start) - start);
  CHECK(f.Run({"FEED.BLOCKED", "1", "LIMIT", "1", "CURSOR", cursor}) ==
        "*2\r\n" + Bulk("0") + "*1\r\n" + Bulk("43"));
  CHECK(f.Run({"FEED.UNBLOCK", "1", "42", "BACKFILL", "3"}) ==
        Result(1, 0, 0, 0));
  CHECK(f.Run({"FEED.FOLLOW", "42", "1"}) == ":1\r\n");
}

TEST_CASE("mute and block commands reject bad arguments") {
  DispatcherFixture f;
  CHECK(IsError(f.Run({"FEED.BLOCK", "1", "1"})));
  CHECK(IsError(f.Run({"FEED.BLOCK", "1"})));
  CHECK(IsError(f.Run({"FEED.BLOCK", "1", "2", "3"})));
  CHECK(IsError(f.Run({"FEED.MUTE", "", "2"})));
  CHECK(IsError(f.Run({"FEED.MUTE", "1", "2", "EXPIRES", "0"})));
  CHECK(IsError(f.Run({"FEED.MUTE", "1", "2", "EXPIRES"})));
  CHECK(IsError(f.Run({"FEED.MUTE", "1", "2", "LOUDLY"})));
  CHECK(IsError(f.Run({"FEED.UNMUTE", "1", "2", "BACKFILL", "-1"})));
  CHECK(IsError(f.Run({"FEED.UNBLOCK", "1", "2", "BACKFILL"})));
  CHECK(IsError(f.Run({"FEED.MUTED", "1", "LIMIT", "0"})));
  CHECK(IsError(f.Run({"FEED.BLOCKED", "1", "CURSOR", "nope"})));
  CHECK(f.Run({"FEED.MUTED", "1"}) == "*2\r\n" + Bulk("0") + "*0\r\n");
}

}  // namespace
}  // namespace feedcore::server
