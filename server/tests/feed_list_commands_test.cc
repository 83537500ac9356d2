// Unit tests of FEED.LISTSET, FEED.LISTDEL, FEED.LISTADD, FEED.LISTREM,
// FEED.LISTS, FEED.LISTMEMBERS and FEED.LISTREAD
// (server/feed_list_commands.cc): replies byte for byte, names and ids,
// an exclusive list leaving FEED.READ, and errors that change nothing,
// through the command dispatcher.
#include "dispatcher_fixture.h"

// GCC 12 reports a false -Wrestrict inside std::string's operator+ (GCC bug
// 105329); the expected replies below are built that way for readability.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace feedcore::server {
namespace {

constexpr Micros kStart = kDispatcherFixtureStart;
constexpr Micros kExpiresAt = kStart + 30 * kMicrosPerDay;

// Entry `id` of `actor` at kStart + id with payload "p".
std::string Entry(uint64_t id, const std::string& actor) {
  return absl::StrCat("*5\r\n", Bulk(absl::StrCat(id)), Bulk(actor), ":",
                      kStart + static_cast<Micros>(id), "\r\n:", kExpiresAt,
                      "\r\n", Bulk("p"));
}

std::string Page(const std::vector<std::string>& entries) {
  std::string page =
      "*2\r\n" + Bulk("0") + absl::StrCat("*", entries.size()) + "\r\n";
  for (const std::string& entry : entries) page += entry;
  return page;
}

TEST_CASE("lists over the protocol: make, fill, read, exclusive, delete") {
  DispatcherFixture f;
  for (int id = 1; id <= 4; ++id) {
    REQUIRE(f.Run({"FEED.PUBLISH", id % 2 == 0 ? "bob" : "carol",
                   std::to_string(id), std::to_string(kStart + id), "p"}) ==
            ":1\r\n");
  }
  REQUIRE(f.Run({"FEED.FOLLOW", "alice", "bob"}) == ":1\r\n");
  REQUIRE(f.Run({"FEED.FOLLOW", "alice", "carol"}) == ":1\r\n");
  CHECK(f.Run({"FEED.LISTSET", "alice", "7", "close friends"}) == ":1\r\n");
  CHECK(f.Run({"FEED.LISTADD", "alice", "7", "bob"}) == ":1\r\n");
  CHECK(f.Run({"FEED.LISTADD", "alice", "7", "bob"}) == ":0\r\n");
  CHECK(f.Run({"FEED.LISTS", "alice"}) ==
        "*1\r\n*4\r\n" + Bulk("7") + Bulk("close friends") + ":0\r\n:1\r\n");
  CHECK(f.Run({"FEED.LISTMEMBERS", "alice", "7", "NAMES"}) ==
        "*2\r\n" + Bulk("0") + "*1\r\n" + Bulk("bob"));
  CHECK(f.Run({"FEED.LISTREAD", "alice", "7", "NAMES"}) ==
        Page({Entry(4, "bob"), Entry(2, "bob")}));
  // Exclusive: bob leaves alice's home feed, not the list.
  CHECK(f.Run({"FEED.LISTSET", "alice", "7", "close friends", "EXCLUSIVE"}) ==
        ":0\r\n");
  CHECK(f.Run({"FEED.READ", "alice", "NAMES"}) ==
        Page({Entry(3, "carol"), Entry(1, "carol")}));
  CHECK(f.Run({"FEED.LISTREAD", "alice", "7", "NAMES", "LIMIT", "2"}) ==
        Page({Entry(4, "bob"), Entry(2, "bob")}));
  CHECK(f.Run({"FEED.LISTREM", "alice", "7", "bob"}) == ":1\r\n");
  CHECK(f.Run({"FEED.LISTREM", "alice", "7", "nobody"}) == ":0\r\n");
  CHECK(f.Run({"FEED.READ", "alice", "NAMES", "LIMIT", "1"}).find(Bulk("4")) !=
        std::string::npos);
  CHECK(f.Run({"FEED.LISTDEL", "alice", "7"}) == ":1\r\n");
  CHECK(f.Run({"FEED.LISTDEL", "alice", "7"}) == ":0\r\n");
  CHECK(f.Run({"FEED.LISTS", "alice"}) == "*0\r\n");
  CHECK(f.Run({"FEED.LISTS", "nobody"}) == "*0\r\n");
}

TEST_CASE("a bad list command is refused and changes nothing") {
  DispatcherFixture f;
  REQUIRE(f.Run({"FEED.LISTSET", "1", "7", "x"}) == ":1\r\n");
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{
           {"FEED.LISTSET", "1", "0", "x"},
           {"FEED.LISTSET", "1", "8", ""},
           {"FEED.LISTSET", "1", "x", "x"},
           {"FEED.LISTSET", "1", "8", "x", "SOMETIMES"},
           {"FEED.LISTADD", "1", "9", "2"},
           {"FEED.LISTADD", "nobody", "7", "2"},
           {"FEED.LISTREAD", "1", "9"},
           {"FEED.LISTREAD", "1", "7", "CURSOR", "garbage"},
           {"FEED.LISTMEMBERS", "1", "9"},
           {"FEED.LISTMEMBERS", "1", "7", "LIMIT", "0"},
       }) {
    INFO(bad[0] << " " << bad[2]);
    CHECK(StartsWith(f.Run(bad), "-ERR "));
  }
  CHECK(StartsWith(f.Run({"FEED.LISTADD", "1", "9", "2"}),
                   "-ERR entity 1 has no list 9"));
  CHECK(f.Run({"FEED.LISTS", "1"}) ==
        "*1\r\n*4\r\n" + Bulk("7") + Bulk("x") + ":0\r\n:0\r\n");
}

}  // namespace
}  // namespace feedcore::server
