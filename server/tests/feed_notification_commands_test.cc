// Unit tests of the notification commands
// (server/feed_notification_commands.cc): FEED.PUBLISH ... NOTIFY fills
// the feeds; FEED.NOTIFICATIONS pages them; FEED.NOTIFY.COUNTS, .SEEN,
// .READ and .READALL answer the counts; unknown names and errors. Each
// reply byte for byte, on a flat feed (every notification its own group).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatcher_fixture.h"
#include "feedcore/feedcore.h"

namespace feedcore::server {
namespace {

constexpr Micros kStart = kDispatcherFixtureStart;

DispatcherFixtureOptions Flat() {
  DispatcherFixtureOptions options;
  options.engine.notifications.aggregated = false;
  return options;
}

std::string Counts(int unseen, int unread, int groups) {
  return absl::StrCat("*3\r\n:", unseen, "\r\n:", unread, "\r\n:", groups,
                      "\r\n");
}

// A flat group: one notification of `actor` (encoded), published while
// the clock read kStart, and its seen and read flags.
std::string Group(const std::string& id, const std::string& actor, Micros ts,
                  const std::string& payload, int seen, int read) {
  return absl::StrCat(
      "*9\r\n", Bulk("0"), ":", seen, "\r\n:", read, "\r\n:1\r\n:1\r\n*1\r\n",
      actor, ":", ts, "\r\n:", ts, "\r\n*1\r\n*5\r\n", Bulk(id), actor, ":", ts,
      "\r\n:", kStart + 30 * kMicrosPerDay, "\r\n", Bulk(payload));
}

std::string Page(const std::string& cursor,
                 const std::vector<std::string>& groups) {
  std::string page =
      "*2\r\n" + Bulk(cursor) + absl::StrCat("*", groups.size(), "\r\n");
  for (const std::string& group : groups) page += group;
  return page;
}

TEST_CASE("notifications: publish, page, count, mark") {
  DispatcherFixture f(Flat());
  const Micros t1 = kStart + 1, t2 = kStart + 2;
  CHECK(f.Run({"FEED.PUBLISH", "bob", "1", std::to_string(t1), "liked",
               "NOTIFY", "alice"}) == ":1\r\n");
  CHECK(f.Run({"FEED.PUBLISH", "carol", "2", std::to_string(t2), "commented",
               "NOTIFY", "alice", "NOTIFY", "7"}) == ":1\r\n");
  CHECK(f.Run({"FEED.NOTIFY.COUNTS", "alice"}) == Counts(2, 2, 2));
  CHECK(f.Run({"FEED.NOTIFY.COUNTS", "7"}) == Counts(1, 1, 1));
  CHECK(f.Run({"FEED.NOTIFICATIONS", "alice", "NAMES"}) ==
        Page("0", {Group("2", Bulk("carol"), t2, "commented", 0, 0),
                   Group("1", Bulk("bob"), t1, "liked", 0, 0)}));
  CHECK(f.Run({"FEED.NOTIFICATIONS", "7"}) ==
        Page("0", {Group("2", Bulk(absl::StrCat(kFirstNamedEntityId + 2)), t2,
                         "commented", 0, 0)}));
  CHECK(f.Run({"FEED.NOTIFY.SEEN", "alice"}) == Counts(0, 2, 2));
  CHECK(f.Run({"FEED.NOTIFY.READ", "alice", std::to_string(t1), "1"}) ==
        Counts(0, 1, 2));
  // Paging: the first page's cursor leads to the second.
  const std::string first =
      f.Run({"FEED.NOTIFICATIONS", "alice", "LIMIT", "1", "NAMES"});
  const size_t at = first.find("\r\n", 4) + 2;
  const std::string cursor = first.substr(at, first.find("\r\n", at) - at);
  CHECK(first ==
        Page(cursor, {Group("2", Bulk("carol"), t2, "commented", 1, 0)}));
  CHECK(f.Run({"FEED.NOTIFICATIONS", "alice", "LIMIT", "1", "CURSOR", cursor,
               "NAMES"}) ==
        Page("0", {Group("1", Bulk("bob"), t1, "liked", 1, 1)}));
  CHECK(f.Run({"FEED.NOTIFY.READALL", "alice"}) == Counts(0, 0, 2));
  // A retried publish notifies no one twice.
  CHECK(f.Run({"FEED.PUBLISH", "bob", "1", std::to_string(t1), "liked",
               "NOTIFY", "alice"}) == ":0\r\n");
  CHECK(f.Run({"FEED.NOTIFY.COUNTS", "alice"}) == Counts(0, 0, 2));
}

TEST_CASE("notifications of a name without an id: empty, zero, no id") {
  DispatcherFixture f(Flat());
  CHECK(f.Run({"FEED.NOTIFICATIONS", "ghost"}) == Page("0", {}));
  CHECK(f.Run({"FEED.NOTIFY.COUNTS", "ghost"}) == Counts(0, 0, 0));
  CHECK(f.Run({"FEED.NOTIFY.SEEN", "ghost"}) == Counts(0, 0, 0));
  CHECK(f.Run({"FEED.NOTIFY.READALL", "ghost"}) == Counts(0, 0, 0));
  CHECK(f.Run({"FEED.NOTIFY.READ", "ghost", "5", "1"}) ==
        "-ERR 'ghost' has no notification (5, 1)\r\n");
  CHECK(f.names().size() == 0);
}

TEST_CASE("notification command errors name the argument") {
  DispatcherFixture f(Flat());
  CHECK(f.Run({"FEED.PUBLISH", "bob", "1", "5", "x", "NOTIFY", "alice"}) ==
        ":1\r\n");
  CHECK(StartsWith(f.Run({"FEED.NOTIFY.READ", "alice", "5", "2"}), "-ERR "));
  CHECK(StartsWith(f.Run({"FEED.NOTIFY.READ", "alice", "-5", "1"}),
                   "-ERR ts must be"));
  CHECK(StartsWith(f.Run({"FEED.NOTIFY.READ", "alice", "5", "x"}),
                   "-ERR activity id must be a decimal id"));
  CHECK(StartsWith(f.Run({"FEED.NOTIFICATIONS", "alice", "LIMIT", "0"}),
                   "-ERR LIMIT must be"));
  CHECK(StartsWith(f.Run({"FEED.NOTIFICATIONS", "alice", "SIDEWAYS"}),
                   "-ERR syntax error"));
  CHECK(f.Run({"FEED.NOTIFICATIONS", "alice", "CURSOR", "bad"})
            .find("or the cursor 0 for the first page") != std::string::npos);
  CHECK(StartsWith(f.Run({"FEED.NOTIFY.COUNTS", ""}),
                   "-ERR user must be a decimal id or a name"));
  CHECK(StartsWith(f.Run({"FEED.NOTIFY.SEEN"}), "-ERR wrong number"));
  // Nothing changed: the notification is still unseen and unread.
  CHECK(f.Run({"FEED.NOTIFY.COUNTS", "alice"}) == Counts(1, 1, 1));
}

}  // namespace
}  // namespace feedcore::server
