// Unit tests of feedcore-server's FEED.MARKER.SET and FEED.MARKER.GET
// (server/feed_marker_commands.cc): replies byte for byte and
// errors, through the command dispatcher.
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

// Pages of up to 20 entries.
DispatcherFixtureOptions Options() {
  DispatcherFixtureOptions o;
  o.engine.max_page_size = 20;
  return o;
}

// [[ts, id], unread, more] in RESP2.
std::string MarkerReply(Micros ts, uint64_t id, int unread, int more) {
  return absl::StrCat("*3\r\n*2\r\n:", ts, "\r\n", Bulk(absl::StrCat(id)), ":",
                      unread, "\r\n:", more, "\r\n");
}

TEST_CASE("FEED.MARKER.SET and FEED.MARKER.GET on home, own and world feeds") {
  DispatcherFixture f(Options());
  REQUIRE(f.Run({"FEED.FOLLOW", "1", "42"}) == ":1\r\n");
  for (int i = 1; i <= 5; ++i) {
    REQUIRE(f.Run({"FEED.PUBLISH", "42", std::to_string(i),
                   std::to_string(kStart + i), "p"}) == ":1\r\n");
  }
  // No marker yet: everything is unread.
  CHECK(f.Run({"FEED.MARKER.GET", "1", "home", "1"}) ==
        "*3\r\n$-1\r\n:5\r\n:0\r\n");
  CHECK(f.Run({"FEED.MARKER.SET", "1", "home", "1", std::to_string(kStart + 2),
               "2"}) == ":1\r\n");
  CHECK(f.Run({"FEED.MARKER.GET", "1", "HOME", "1"}) ==
        MarkerReply(kStart + 2, 2, 3, 0));
  CHECK(f.Run({"FEED.MARKER.GET", "1", "home", "1", "MAX", "2"}) ==
        MarkerReply(kStart + 2, 2, 2, 1));
  // Backwards only with FORCE.
  CHECK(f.Run({"FEED.MARKER.SET", "1", "home", "1", std::to_string(kStart),
               "0"}) == ":0\r\n");
  CHECK(f.Run({"FEED.MARKER.SET", "1", "home", "1", std::to_string(kStart), "0",
               "force"}) == ":1\r\n");
  CHECK(f.Run({"FEED.MARKER.GET", "1", "home", "1"}) ==
        MarkerReply(kStart, 0, 5, 0));
  // A channel's own feed and the world feed.
  CHECK(f.Run({"FEED.MARKER.SET", "7", "own", "42", std::to_string(kStart + 4),
               "4"}) == ":1\r\n");
  CHECK(f.Run({"FEED.MARKER.GET", "7", "own", "42"}) ==
        MarkerReply(kStart + 4, 4, 1, 0));
  CHECK(f.Run({"FEED.MARKER.SET", "7", "world", "0", std::to_string(kStart + 5),
               "5"}) == ":1\r\n");
  CHECK(f.Run({"FEED.MARKER.GET", "7", "world", "0"}) ==
        MarkerReply(kStart + 5, 5, 0, 0));
}

TEST_CASE("FEED.MARKER errors name the argument and change nothing") {
  DispatcherFixture f(Options());
  CHECK(StartsWith(f.Run({"FEED.MARKER.SET", "1", "home", "1", "5"}),
                   "-ERR wrong number of arguments"));
  CHECK(StartsWith(f.Run({"FEED.MARKER.SET", "1", "inbox", "1", "5", "5"}),
                   "-ERR feed must be home, own or world"));
  CHECK(StartsWith(f.Run({"FEED.MARKER.SET", "1", "home", "2", "5", "5"}),
                   "-ERR feed.owner is 2"));
  CHECK(StartsWith(f.Run({"FEED.MARKER.SET", "1", "world", "3", "5", "5"}),
                   "-ERR feed.owner is 3"));
  CHECK(StartsWith(f.Run({"FEED.MARKER.SET", "1", "home", "1", "-5", "5"}),
                   "-ERR ts"));
  CHECK(StartsWith(f.Run({"FEED.MARKER.SET", "1", "home", "1", "5", "x"}),
                   "-ERR activity id"));
  CHECK(
      StartsWith(f.Run({"FEED.MARKER.SET", "1", "home", "1", "5", "5", "SOON"}),
                 "-ERR syntax error"));
  CHECK(StartsWith(f.Run({"FEED.MARKER.GET", "1", "home", "1", "MAX", "0"}),
                   "-ERR MAX"));
  CHECK(StartsWith(f.Run({"FEED.MARKER.GET", "1", "home", "1", "MAX", "21"}),
                   "-ERR MAX"));
  CHECK(StartsWith(f.Run({"FEED.MARKER.GET", "1", "home", "1", "MAX"}),
                   "-ERR syntax error"));
  CHECK(StartsWith(f.Run({"FEED.MARKER.GET", "", "home", "1"}), "-ERR user"));
  CHECK(f.Run({"FEED.MARKER.GET", "1", "home", "1"}) ==
        "*3\r\n$-1\r\n:0\r\n:0\r\n");
}

}  // namespace
}  // namespace feedcore::server
