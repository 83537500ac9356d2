// Unit tests of feedcore-server's FEED.MARKER.SET, FEED.MARKER.GET and
// FEED.MARKERS, with FEED.PUBLISH's MENTION (server/feed_marker_commands.cc):
// replies byte for byte and errors, through the command dispatcher.
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

// [ts, id], unread, more, mentions in RESP2.
std::string MarkerFields(Micros ts, uint64_t id, int unread, int more,
                         int mentions) {
  return absl::StrCat("*2\r\n:", ts, "\r\n", Bulk(absl::StrCat(id)), ":",
                      unread, "\r\n:", more, "\r\n:", mentions, "\r\n");
}

// [[ts, id], unread, more, mentions] in RESP2.
std::string MarkerReply(Micros ts, uint64_t id, int unread, int more,
                        int mentions = 0) {
  return "*4\r\n" + MarkerFields(ts, id, unread, more, mentions);
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
        "*4\r\n$-1\r\n:5\r\n:0\r\n:0\r\n");
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
        "*4\r\n$-1\r\n:0\r\n:0\r\n:0\r\n");
}

TEST_CASE("FEED.MARKERS lists every marked or mentioning feed with counts") {
  DispatcherFixture f(Options());
  // Channel 42 mentions user 7 twice; channel 43 once, by name.
  for (int i = 1; i <= 4; ++i) {
    std::vector<std::string> publish = {"FEED.PUBLISH", "42", std::to_string(i),
                                        std::to_string(kStart + i), "p"};
    if (i % 2 == 0) publish.insert(publish.end(), {"MENTION", "7"});
    REQUIRE(f.Run(publish) == ":1\r\n");
  }
  REQUIRE(f.Run({"FEED.PUBLISH", "43", "9", std::to_string(kStart + 9), "p",
                 "MENTION", "7", "MENTION", "bob"}) == ":1\r\n");
  CHECK(f.Run({"FEED.MARKER.SET", "7", "world", "0", std::to_string(kStart + 9),
               "9"}) == ":1\r\n");
  CHECK(f.Run({"FEED.MARKER.SET", "7", "own", "42", std::to_string(kStart + 2),
               "2"}) == ":1\r\n");
  CHECK(f.Run({"FEED.MARKER.GET", "7", "own", "42"}) ==
        MarkerReply(kStart + 2, 2, 2, 0, 1));
  // Own feeds by owner, then the world feed; a page of two, then one.
  const std::string first = f.Run({"FEED.MARKERS", "7", "LIMIT", "2"});
  const std::string own_43 =
      "*6\r\n" + Bulk("own") + Bulk("43") + "$-1\r\n:1\r\n:0\r\n:1\r\n";
  const std::string rest =
      absl::StrCat("*2\r\n*6\r\n", Bulk("own"), Bulk("42"),
                   MarkerFields(kStart + 2, 2, 2, 0, 1), own_43);
  REQUIRE(StartsWith(first, "*2\r\n$"));
  CHECK(first.substr(first.size() - rest.size()) == rest);
  // The cursor is the bulk string after "*2\r\n$<length>\r\n".
  const size_t at = first.find("\r\n", 4) + 2;
  const std::string cursor = first.substr(at, first.find("\r\n", at) - at);
  CHECK(f.Run({"FEED.MARKERS", "7", "CURSOR", cursor, "MAX", "1"}) ==
        absl::StrCat("*2\r\n", Bulk("0"), "*1\r\n*6\r\n", Bulk("world"),
                     Bulk("0"), MarkerFields(kStart + 9, 9, 0, 0, 0)));
  // By name; a name without an id has nothing.
  const std::string bob = f.Run({"FEED.MARKERS", "bob", "NAMES"});
  CHECK(bob == absl::StrCat("*2\r\n", Bulk("0"), "*1\r\n", own_43));
  CHECK(f.Run({"FEED.MARKERS", "nobody"}) == "*2\r\n$1\r\n0\r\n*0\r\n");
  // Errors name the argument.
  CHECK(StartsWith(f.Run({"FEED.MARKERS", "7", "LIMIT", "0"}), "-ERR LIMIT"));
  CHECK(StartsWith(f.Run({"FEED.MARKERS", "7", "MAX", "21"}), "-ERR MAX"));
  CHECK(StartsWith(f.Run({"FEED.MARKERS", "7", "CURSOR", "bad"}),
                   "-ERR invalid read marker cursor"));
  CHECK(StartsWith(f.Run({"FEED.MARKERS", "7", "SOON"}), "-ERR syntax error"));
  const std::string foreign = f.Run({"FEED.MARKERS", "8", "CURSOR", cursor});
  CHECK(StartsWith(foreign, "-ERR invalid read marker cursor"));
  CHECK(foreign.find("another user") != std::string::npos);
  CHECK(foreign.find("the cursor 0 for the first page") != std::string::npos);
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "42", "20", std::to_string(kStart),
                          "p", "MENTION", ""}),
                   "-ERR MENTION user"));
}

}  // namespace
}  // namespace feedcore::server
