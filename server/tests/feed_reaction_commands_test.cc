// Unit tests of FEED.REACT, FEED.UNREACT, FEED.REACTED and FEED.REACTORS
// (server/feed_reaction_commands.cc): replies byte for byte, names, notices
// and errors that change nothing, through the command dispatcher.
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
#include "feedcore/feedcore.h"
#include "publish_ledger.h"

namespace feedcore::server {
namespace {

constexpr Micros kStart = kDispatcherFixtureStart;

// [changed, [c0, c1, c2, c3]] and, for FEED.REACT, notified.
std::string Reaction(int changed, std::vector<int> counters,
                     int notified = -1) {
  std::string out =
      absl::StrCat(notified < 0 ? "*2" : "*3", "\r\n:", changed, "\r\n*4\r\n");
  for (const int c : counters) absl::StrAppend(&out, ":", c, "\r\n");
  if (notified >= 0) absl::StrAppend(&out, ":", notified, "\r\n");
  return out;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE(
    "FEED.REACT counts a user once per kind; FEED.UNREACT takes it back") {
  DispatcherFixture f;
  REQUIRE(f.Run({"FEED.PUBLISH", "42", "7", std::to_string(kStart), "post"}) ==
          ":1\r\n");
  CHECK(f.Run({"FEED.REACT", "1", "7", "0"}) == Reaction(1, {1, 0, 0, 0}, 0));
  CHECK(f.Run({"FEED.REACT", "1", "7", "0"}) == Reaction(0, {1, 0, 0, 0}, 0));
  CHECK(f.Run({"FEED.REACT", "user:bob", "7", "0"}) ==
        Reaction(1, {2, 0, 0, 0}, 0));
  CHECK(f.Run({"FEED.REACT", "1", "7", "2"}) == Reaction(1, {2, 0, 1, 0}, 0));
  CHECK(f.Run({"FEED.COUNTERS", "7"}) == "*4\r\n:2\r\n:0\r\n:1\r\n:0\r\n");
  // Kinds as bits, per activity; an unknown activity and a name without an
  // id reacted with nothing.
  CHECK(f.Run({"FEED.REACTED", "1", "7", "99"}) == "*2\r\n:5\r\n:0\r\n");
  CHECK(f.Run({"FEED.REACTED", "user:bob", "7"}) == "*1\r\n:1\r\n");
  CHECK(f.Run({"FEED.REACTED", "user:nobody", "7"}) == "*1\r\n:0\r\n");
  CHECK(f.Run({"FEED.UNREACT", "1", "7", "0"}) == Reaction(1, {1, 0, 1, 0}));
  CHECK(f.Run({"FEED.UNREACT", "1", "7", "0"}) == Reaction(0, {1, 0, 1, 0}));
  CHECK(f.Run({"FEED.UNREACT", "user:nobody", "7", "0"}) ==
        Reaction(0, {1, 0, 1, 0}));
  CHECK(f.Run({"FEED.REACTED", "1", "7"}) == "*1\r\n:4\r\n");
}

TEST_CASE("FEED.REACTORS pages the most recent first, by id or by name") {
  DispatcherFixture f;
  REQUIRE(f.Run({"FEED.PUBLISH", "42", "7", std::to_string(kStart), "post"}) ==
          ":1\r\n");
  for (const char* user : {"3", "user:ann", "5"}) {
    REQUIRE(Contains(f.Run({"FEED.REACT", user, "7", "1"}), ":1\r\n*4"));
    f.clock().Advance(1);
  }
  const std::string ann = absl::StrCat(kFirstNamedEntityId);
  const std::string first = f.Run({"FEED.REACTORS", "7", "1", "LIMIT", "2"});
  CHECK(first.starts_with("*2\r\n$"));
  CHECK(Contains(
      first, absl::StrCat("*2\r\n*2\r\n", Bulk("5"), ":", kStart + 2,
                          "\r\n*2\r\n", Bulk(ann), ":", kStart + 1, "\r\n")));
  // The cursor is the bulk string after the outer header.
  const size_t len_start = 5;
  const size_t len_end = first.find("\r\n", len_start);
  const size_t length =
      std::stoul(first.substr(len_start, len_end - len_start));
  const std::string cursor = first.substr(len_end + 2, length);
  CHECK(f.Run({"FEED.REACTORS", "7", "1", "LIMIT", "2", "CURSOR", cursor}) ==
        absl::StrCat("*2\r\n", Bulk("0"), "*1\r\n*2\r\n", Bulk("3"), ":",
                     kStart, "\r\n"));
  CHECK(
      Contains(f.Run({"FEED.REACTORS", "7", "1", "NAMES"}), Bulk("user:ann")));
  CHECK(f.Run({"FEED.REACTORS", "7", "0"}) ==
        absl::StrCat("*2\r\n", Bulk("0"), "*0\r\n"));
  CHECK(
      f.Run({"FEED.REACTORS", "7", "0", "CURSOR", cursor}).starts_with("-ERR"));
}

TEST_CASE("FEED.REACT NOTICE tells the actor; FEED.UNREACT retracts it") {
  DispatcherFixture f;
  REQUIRE(f.Run({"FEED.PUBLISH", "42", "7", std::to_string(kStart), "post"}) ==
          ":1\r\n");
  CHECK(f.Run({"FEED.REACT", "1", "7", "0", "NOTICE", "900", "PAYLOAD", "liked",
               "VERB", "3"}) == Reaction(1, {1, 0, 0, 0}, 1));
  const std::string notes = f.Run({"FEED.NOTIFICATIONS", "42"});
  CHECK(Contains(notes, Bulk("900")));
  CHECK(Contains(notes, Bulk("liked")));
  CHECK(f.Run({"FEED.NOTIFY.COUNTS", "42"}) == "*3\r\n:1\r\n:1\r\n:1\r\n");
  // A handed-out notice id.
  CHECK(f.Run({"FEED.REACT", "2", "7", "0", "NOTICE", "*"}) ==
        Reaction(1, {2, 0, 0, 0}, 1));
  CHECK(f.Run({"FEED.NOTIFY.COUNTS", "42"}) == "*3\r\n:2\r\n:2\r\n:2\r\n");
  CHECK(f.Run({"FEED.UNREACT", "1", "7", "0"}) == Reaction(1, {1, 0, 0, 0}));
  CHECK(!Contains(f.Run({"FEED.NOTIFICATIONS", "42"}), Bulk("900")));
  CHECK(f.Run({"FEED.NOTIFY.COUNTS", "42"}) == "*3\r\n:1\r\n:1\r\n:1\r\n");
}

TEST_CASE("FEED.REACT* errors name what is wrong and change nothing") {
  DispatcherFixture f;
  REQUIRE(f.Run({"FEED.PUBLISH", "42", "7", std::to_string(kStart), "post"}) ==
          ":1\r\n");
  REQUIRE(f.Run({"FEED.PUBLISH", "42", "8", std::to_string(kStart), "other"}) ==
          ":1\r\n");
  CHECK(f.Run({"FEED.REACT", "1", "7"}) ==
        "-ERR wrong number of arguments for 'feed.react' command\r\n");
  CHECK(f.Run({"FEED.UNREACT", "1", "7", "0", "x"}) ==
        "-ERR wrong number of arguments for 'feed.unreact' command\r\n");
  CHECK(Contains(f.Run({"FEED.REACT", "1", "7", "4"}), "reaction kind"));
  CHECK(Contains(f.Run({"FEED.REACT", "1", "7", "-1"}), "reaction kind"));
  CHECK(Contains(f.Run({"FEED.REACT", "1", "x", "0"}), "activity id"));
  CHECK(Contains(f.Run({"FEED.REACT", "1", "99", "0"}), "99"));
  CHECK(Contains(f.Run({"FEED.REACT", "1", "7", "0", "NOTICE", "8"}),
                 "notice_id"));
  CHECK(Contains(f.Run({"FEED.REACT", "1", "7", "0", "NOTICE", "7"}),
                 "notice_id"));
  CHECK(Contains(f.Run({"FEED.REACT", "1", "7", "0", "NOTICE", "0"}),
                 "must not be 0"));
  CHECK(
      Contains(f.Run({"FEED.REACT", "1", "7", "0", "PAYLOAD", "p"}), "NOTICE"));
  CHECK(Contains(f.Run({"FEED.REACT", "1", "7", "0", "BOGUS"}), "syntax"));
  CHECK(Contains(f.Run({"FEED.REACT", "user:new", "99", "0"}), "99"));
  CHECK(Contains(f.Run({"FEED.UNREACT", "user:none", "99", "0"}), "99"));
  CHECK(Contains(f.Run({"FEED.UNREACT", "user:none", "7", "9"}),
                 "reaction kind"));
  CHECK(Contains(f.Run({"FEED.REACTORS", "7", "0", "LIMIT", "0"}), "LIMIT"));
  CHECK(
      Contains(f.Run({"FEED.REACTORS", "7", "0", "CURSOR", "bad"}), "cursor"));
  CHECK(Contains(f.Run({"FEED.REACTORS", "99", "0"}), "99"));
  // Nothing changed.
  CHECK(f.Run({"FEED.COUNTERS", "7"}) == "*4\r\n:0\r\n:0\r\n:0\r\n:0\r\n");
  CHECK(f.Run({"FEED.REACTED", "1", "7", "8"}) == "*2\r\n:0\r\n:0\r\n");
  CHECK(f.Run({"FEED.NOTIFY.COUNTS", "42"}) == "*3\r\n:0\r\n:0\r\n:0\r\n");
}

TEST_CASE("reactions inside MULTI/EXEC") {
  DispatcherFixture f;
  REQUIRE(f.Run({"FEED.PUBLISH", "42", "7", std::to_string(kStart), "post"}) ==
          ":1\r\n");
  REQUIRE(f.Run({"MULTI"}) == "+OK\r\n");
  CHECK(f.Run({"FEED.REACT", "1", "7", "0"}) == "+QUEUED\r\n");
  CHECK(f.Run({"FEED.REACT", "2", "7", "0"}) == "+QUEUED\r\n");
  CHECK(f.Run({"FEED.REACTED", "1", "7"}) == "+QUEUED\r\n");
  CHECK(f.Run({"EXEC"}) == "*3\r\n" + Reaction(1, {1, 0, 0, 0}, 0) +
                               Reaction(1, {2, 0, 0, 0}, 0) + "*1\r\n:1\r\n");
}

}  // namespace
}  // namespace feedcore::server
