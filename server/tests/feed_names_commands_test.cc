// Unit tests of entity names in the FEED.* commands (server/feed_entities.*,
// server/feed_commands.cc and the other feed command files): names next to
// numeric ids, lookups that assign nothing, NAMES replies, errors that
// assign nothing; FEED.PUBLISH's '*' ids, IDEMPOTENCY keys and '*'
// retries (server/publish_ledger.*); and the first-page cursor named in
// cursor errors. Each reply byte for byte.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatcher_fixture.h"
#include "feedcore/feedcore.h"
#include "publish_ledger.h"

namespace feedcore::server {
namespace {

constexpr Micros kStart = kDispatcherFixtureStart;

std::string Id(EntityId id) { return Bulk(absl::StrCat(id)); }

std::string Page(const std::vector<std::string>& items) {
  std::string page =
      "*2\r\n" + Bulk("0") + absl::StrCat("*", items.size()) + "\r\n";
  for (const std::string& item : items) page += item;
  return page;
}

const std::string kEmptyPage = "*2\r\n" + Bulk("0") + "*0\r\n";

// One FEED.READ entry of `actor` (already encoded), published while the
// clock read kStart.
std::string Entry(const std::string& id, const std::string& actor, Micros ts,
                  const std::string& payload) {
  return "*5\r\n" + id + actor + absl::StrCat(":", ts, "\r\n:") +
         absl::StrCat(kStart + 30 * kMicrosPerDay, "\r\n") + Bulk(payload);
}

TEST_CASE("names stand for entities wherever ids do") {
  DispatcherFixture f;
  const EntityId alice = kFirstNamedEntityId;
  const EntityId bob = kFirstNamedEntityId + 1;
  CHECK(f.Run({"FEED.FOLLOW", "user:alice", "user:bob"}) == ":1\r\n");
  CHECK(f.Run({"FEED.FOLLOW", "user:alice", "user:bob"}) == ":0\r\n");
  CHECK(f.names().Find("user:bob").value() == bob);
  // A numeric id is the same entity as the name it was given.
  CHECK(f.Run({"FEED.FOLLOW", absl::StrCat(alice), absl::StrCat(bob)}) ==
        ":0\r\n");
  // Plain numbers stay ids, as before names.
  CHECK(f.Run({"FEED.FOLLOW", "7", "user:bob"}) == ":1\r\n");
  CHECK(f.Run({"FEED.COUNTS", "user:bob"}) == "*2\r\n:2\r\n:0\r\n");
  CHECK(f.Run({"FEED.FOLLOWERS", "user:bob"}) == Page({Id(alice), Id(7)}));
  CHECK(f.Run({"FEED.FOLLOWERS", "user:bob", "NAMES"}) ==
        Page({Bulk("user:alice"), Id(7)}));
  CHECK(f.Run({"FEED.FOLLOWING", "user:alice", "NAMES"}) ==
        Page({Bulk("user:bob")}));
  CHECK(f.Run({"FEED.PUBLISH", "user:bob", "100", std::to_string(kStart + 1),
               "hello"}) == ":1\r\n");
  CHECK(f.Run({"FEED.READ", "user:alice"}) ==
        Page({Entry(Id(100), Id(bob), kStart + 1, "hello")}));
  CHECK(f.Run({"FEED.READ", "user:alice", "NAMES"}) ==
        Page({Entry(Id(100), Bulk("user:bob"), kStart + 1, "hello")}));
  CHECK(f.Run({"FEED.OWN", "user:bob", "NAMES", "LIMIT", "1"}) ==
        Page({Entry(Id(100), Bulk("user:bob"), kStart + 1, "hello")}));
  CHECK(f.Run({"FEED.WORLD", "NAMES"}) ==
        Page({Entry(Id(100), Bulk("user:bob"), kStart + 1, "hello")}));
  CHECK(f.Run({"FEED.UNFOLLOW", "user:alice", "user:bob"}) == ":1\r\n");
  CHECK(f.Run({"FEED.FOLLOWMANY", "user:alice", "user:bob", "user:carol"}) ==
        "*2\r\n:1\r\n:1\r\n");
  CHECK(f.Run({"FEED.FOLLOWING", "user:alice", "NAMES"}) ==
        Page({Bulk("user:bob"), Bulk("user:carol")}));
  CHECK(f.Run({"FEED.BLOCK", "user:dave", "user:alice"}) ==
        "*4\r\n:1\r\n:0\r\n:0\r\n:0\r\n");
  CHECK(f.Run({"FEED.BLOCKED", "user:dave", "NAMES"}) ==
        Page({Bulk("user:alice")}));
  CHECK(f.Run({"FEED.MUTE", "user:alice", "user:carol"}) ==
        "*4\r\n:1\r\n:0\r\n:0\r\n:0\r\n");
  CHECK(f.Run({"FEED.MUTED", "user:alice", "NAMES"}) ==
        "*2\r\n" + Bulk("0") + "*1\r\n*3\r\n" + Bulk("user:carol") +
            ":0\r\n:0\r\n");
  CHECK(f.Run({"FEED.MARKER.SET", "user:alice", "own", "user:bob",
               std::to_string(kStart + 1), "100"}) == ":1\r\n");
  CHECK(f.Run({"FEED.MARKER.GET", "user:alice", "own", "user:bob"}) ==
        "*4\r\n*2\r\n" + absl::StrCat(":", kStart + 1, "\r\n") + Bulk("100") +
            ":0\r\n:0\r\n:0\r\n");
}

TEST_CASE("an unknown name reads as an entity with nothing and gets no id") {
  DispatcherFixture f;
  CHECK(f.Run({"FEED.READ", "ghost"}) == kEmptyPage);
  CHECK(f.Run({"FEED.OWN", "ghost", "LIMIT", "3"}) == kEmptyPage);
  CHECK(f.Run({"FEED.RANKED", "ghost"}) == kEmptyPage);
  CHECK(f.Run({"FEED.FOLLOWERS", "ghost"}) == kEmptyPage);
  CHECK(f.Run({"FEED.FOLLOWING", "ghost", "NAMES"}) == kEmptyPage);
  CHECK(f.Run({"FEED.BLOCKED", "ghost"}) == kEmptyPage);
  CHECK(f.Run({"FEED.MUTED", "ghost"}) == kEmptyPage);
  CHECK(f.Run({"FEED.COUNTS", "ghost"}) == "*2\r\n:0\r\n:0\r\n");
  CHECK(f.Run({"FEED.MARKER.GET", "ghost", "home", "ghost"}) ==
        "*4\r\n$-1\r\n:0\r\n:0\r\n:0\r\n");
  // Removals answer "nothing changed".
  CHECK(f.Run({"FEED.UNFOLLOW", "ghost", "spirit"}) == ":0\r\n");
  CHECK(f.Run({"FEED.UNBLOCK", "ghost", "1"}) ==
        "*4\r\n:0\r\n:0\r\n:0\r\n:0\r\n");
  CHECK(f.Run({"FEED.UNMUTE", "1", "ghost", "BACKFILL", "2"}) ==
        "*4\r\n:0\r\n:0\r\n:0\r\n:0\r\n");
  CHECK(f.names().size() == 0);
}

TEST_CASE("bad entity arguments are refused and assign no name") {
  DispatcherFixture f;
  CHECK(f.Run({"FEED.FOLLOW", "", "bob"}) ==
        "-ERR follower must be a decimal id or a name: a name must not be "
        "empty\r\n");
  const std::string long_name(kMaxEntityNameBytes + 1, 'n');
  CHECK(StartsWith(f.Run({"FEED.FOLLOW", "alice", long_name}),
                   absl::StrCat("-ERR followee must be a decimal id or a "
                                "name: a name is at most ",
                                kMaxEntityNameBytes, " bytes; this one has ",
                                kMaxEntityNameBytes + 1, " ('nnn")));
  CHECK(StartsWith(f.Run({"FEED.FOLLOW", "18446744073709551616", "bob"}),
                   "-ERR follower must be a decimal id from 0 to"));
  // Every argument is checked before any name gets an id.
  CHECK(StartsWith(f.Run({"FEED.FOLLOW", "alice", "bob", "BACKFILL", "x"}),
                   "-ERR BACKFILL must be"));
  CHECK(StartsWith(f.Run({"FEED.FOLLOWMANY", "alice", "bob", ""}),
                   "-ERR followee must be a decimal id or a name"));
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "alice", "1", "x", "p"}),
                   "-ERR ts (microseconds, or * for now) must be"));
  CHECK(StartsWith(f.Run({"FEED.BLOCK", "alice", ""}), "-ERR blocked must be"));
  CHECK(StartsWith(f.Run({"FEED.MUTE", "alice", "bob", "EXPIRES", "0"}),
                   "-ERR EXPIRES (milliseconds) must be"));
  CHECK(
      StartsWith(f.Run({"FEED.MARKER.SET", "alice", "own", "bob", "-1", "100"}),
                 "-ERR ts must be"));
  CHECK(
      StartsWith(f.Run({"FEED.PUBLISH", "alice", "1", "5", "p", "NOTIFY", ""}),
                 "-ERR NOTIFY recipient must be a decimal id or a name"));
  CHECK(f.names().size() == 0);
}

TEST_CASE("FEED.PUBLISH * hands out increasing activity ids") {
  DispatcherFixture f;
  const std::string first = Id(kFirstServerActivityId + kStart);
  CHECK(f.Run({"FEED.PUBLISH", "alice", "*", "*", "one"}) == first);
  // The same microsecond: one above the last.
  CHECK(f.Run({"FEED.PUBLISH", "alice", "*", "*", "two"}) ==
        Id(kFirstServerActivityId + kStart + 1));
  f.clock().Advance(1000);
  CHECK(f.Run({"FEED.PUBLISH", "alice", "*", std::to_string(kStart),
               "three"}) == Id(kFirstServerActivityId + kStart + 1000));
  // The oldest entry, with more pages after it.
  const std::string oldest = f.Run({"FEED.OWN", "alice", "REV", "LIMIT", "1"});
  CHECK(oldest.find("*1\r\n" + Entry(first, Id(kFirstNamedEntityId), kStart,
                                     "one")) != std::string::npos);
  CHECK(!StartsWith(oldest, "*2\r\n" + Bulk("0")));
}

TEST_CASE("FEED.PUBLISH with an IDEMPOTENCY key: a retry is a no-op") {
  DispatcherFixture f;
  // A keyed '*' id comes from the actor and the key, the same after a
  // restart.
  const std::string id = Id(KeyedActivityId(kFirstNamedEntityId, "req-1"));
  CHECK(id != Id(KeyedActivityId(kFirstNamedEntityId, "req-2")));
  CHECK(id != Id(KeyedActivityId(kFirstNamedEntityId + 1, "req-1")));
  CHECK(f.Run({"FEED.PUBLISH", "alice", "*", "*", "hi", "IDEMPOTENCY",
               "req-1"}) == id);
  f.clock().Advance(5'000'000);
  // The retry answers the first id, and nothing is published twice.
  CHECK(f.Run({"FEED.PUBLISH", "alice", "*", "*", "hi", "IDEMPOTENCY",
               "req-1"}) == id);
  CHECK(f.Run({"FEED.OWN", "alice"}) ==
        Page({Entry(id, Id(kFirstNamedEntityId), kStart, "hi")}));
  // With a client id the retry answers 0, as any re-publish does.
  CHECK(f.Run({"FEED.PUBLISH", "alice", "9", "*", "yo", "IDEMPOTENCY",
               "req-2"}) == ":1\r\n");
  CHECK(f.Run({"FEED.PUBLISH", "alice", "9", "*", "yo", "IDEMPOTENCY",
               "req-2"}) == ":0\r\n");
  // The key of another publish is refused, and changes nothing.
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "alice", "*", "*", "other",
                          "IDEMPOTENCY", "req-1"}),
                   "-ERR the IDEMPOTENCY key was used for another publish"));
  CHECK(StartsWith(
      f.Run({"FEED.PUBLISH", "bob", "*", "*", "hi", "IDEMPOTENCY", "req-1"}),
      "-ERR the IDEMPOTENCY key was used for another publish"));
  CHECK(f.Run({"FEED.PUBLISH", "alice", "*", "*", "hi", "IDEMPOTENCY",
               std::string(kMaxIdempotencyKeyBytes + 1, 'k')}) ==
        absl::StrCat("-ERR an IDEMPOTENCY key is 1 to ",
                     kMaxIdempotencyKeyBytes, " bytes; this one has ",
                     kMaxIdempotencyKeyBytes + 1, "\r\n"));
  CHECK(StartsWith(
      f.Run({"FEED.PUBLISH", "alice", "*", "*", "hi", "IDEMPOTENCY", ""}),
      "-ERR syntax error"));
  // Past the window the ledger forgot the key, as a restart does: the
  // retry still gets the first id, its ts from the own feed, and is a
  // no-op.
  f.clock().Advance(kPublishMemoryMicros);
  CHECK(f.Run({"FEED.PUBLISH", "alice", "*", "*", "hi", "IDEMPOTENCY",
               "req-1"}) == id);
  const std::string own = f.Run({"FEED.OWN", "alice"});
  CHECK(StartsWith(own, "*2\r\n" + Bulk("0") + "*2\r\n"));  // yo, hi
  CHECK(own.find(Entry(id, Id(kFirstNamedEntityId), kStart, "hi")) !=
        std::string::npos);
  // Without its key, the same request is a new publish.
  CHECK(f.Run({"FEED.PUBLISH", "alice", "*", "*", "hi"}) ==
        Id(kFirstServerActivityId + kStart + 5'000'000 + kPublishMemoryMicros));
}

TEST_CASE("FEED.PUBLISH id * repeated is a no-op, not a new timestamp") {
  DispatcherFixture f;
  CHECK(f.Run({"FEED.PUBLISH", "2", "77", "*", "payload"}) == ":1\r\n");
  f.clock().Advance(1'000'000);
  CHECK(f.Run({"FEED.PUBLISH", "2", "77", "*", "payload"}) == ":0\r\n");
  CHECK(f.Run({"FEED.OWN", "2"}) ==
        Page({Entry(Id(77), Id(2), kStart, "payload")}));
  // Another payload under the same id is another activity: refused.
  CHECK(
      StartsWith(f.Run({"FEED.PUBLISH", "2", "77", "*", "changed"}), "-ERR "));
  // A failed publish leaves nothing to replay.
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "2", "78", "*", "p", "IDEMPOTENCY",
                          "k", "NOTIFY", "3", "TTL", "0"}),
                   "-ERR TTL (milliseconds) must be"));
  CHECK(f.Run({"FEED.PUBLISH", "2", "78", "*", "p", "IDEMPOTENCY", "k"}) ==
        ":1\r\n");
}

TEST_CASE("a bad cursor's error names the first-page cursor 0") {
  DispatcherFixture f;
  const std::string advice = "or the cursor 0 for the first page";
  CHECK(f.Run({"FEED.READ", "1", "CURSOR", "garbage"}).find(advice) !=
        std::string::npos);
  CHECK(f.Run({"FEED.FOLLOWERS", "1", "CURSOR", "garbage"}).find(advice) !=
        std::string::npos);
  CHECK(f.Run({"FEED.MUTED", "1", "CURSOR", "garbage"}).find(advice) !=
        std::string::npos);
  CHECK(f.Run({"FEED.READ", "1", "CURSOR", "garbage"}).find("empty cursor") ==
        std::string::npos);
}

}  // namespace
}  // namespace feedcore::server
