// Unit tests of FEED.EDIT, FEED.PIN, FEED.UNPIN and FEED.PINNED
// (server/feed_edit_commands.cc), of WITHEDITS and WITHKINDS on the feed
// reads, of FEED.PUBLISH's KIND and the reads' KINDS and EXCEPTKINDS, and
// of a FEED.PUBLISH retried after an edit: replies byte for byte, and
// errors that change nothing, through the command dispatcher.
#include "dispatcher_fixture.h"

// GCC 12 reports a false -Wrestrict inside std::string's operator+ (GCC bug
// 105329); the expected replies below are built that way for readability.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "feedcore/feedcore.h"
#include "publish_ledger.h"

namespace feedcore::server {
namespace {

constexpr Micros kStart = kDispatcherFixtureStart;
// What every activity published while the clock reads kStart expires at
// (the engine's default TTL).
constexpr Micros kExpiresAt = kStart + 30 * kMicrosPerDay;

DispatcherFixtureOptions Options() {
  DispatcherFixtureOptions o;
  o.engine.max_payload_bytes = 16;
  return o;
}

std::string Id(uint64_t id) { return Bulk(absl::StrCat(id)); }

// One feed entry of `actor` published at kStart; with `edited_at`, as
// WITHEDITS writes it.
std::string Entry(uint64_t id, const std::string& actor, Micros ts,
                  const std::string& payload,
                  std::optional<Micros> edited_at = std::nullopt) {
  std::string entry = absl::StrCat(edited_at.has_value() ? "*6" : "*5", "\r\n",
                                   Id(id), Bulk(actor), ":", ts,
                                   "\r\n:", kExpiresAt, "\r\n", Bulk(payload));
  if (edited_at.has_value()) absl::StrAppend(&entry, ":", *edited_at, "\r\n");
  return entry;
}
std::string Entry(uint64_t id, uint64_t actor, Micros ts,
                  const std::string& payload,
                  std::optional<Micros> edited_at = std::nullopt) {
  return Entry(id, absl::StrCat(actor), ts, payload, edited_at);
}

std::string Page(const std::vector<std::string>& entries) {
  std::string page =
      "*2\r\n" + Bulk("0") + absl::StrCat("*", entries.size()) + "\r\n";
  for (const std::string& entry : entries) page += entry;
  return page;
}

std::string List(const std::vector<std::string>& entries) {
  std::string list = absl::StrCat("*", entries.size(), "\r\n");
  for (const std::string& entry : entries) list += entry;
  return list;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string Arity(const std::string& command) {
  return "-ERR wrong number of arguments for '" + command + "' command\r\n";
}

TEST_CASE("FEED.EDIT replaces the payload every hydrated read returns") {
  DispatcherFixture f(Options());
  REQUIRE(f.Run({"FEED.FOLLOW", "1", "42"}) == ":1\r\n");
  REQUIRE(f.Run({"FEED.PUBLISH", "42", "7", std::to_string(kStart), "first",
                 "NOTIFY", "9"}) == ":1\r\n");
  REQUIRE(f.Run({"FEED.PUBLISH", "42", "8", std::to_string(kStart + 1),
                 "other"}) == ":1\r\n");
  // Not edited: WITHEDITS says 0.
  CHECK(f.Run({"FEED.OWN", "42", "WITHEDITS"}) ==
        Page({Entry(8, 42, kStart + 1, "other", 0),
              Entry(7, 42, kStart, "first", 0)}));
  f.clock().Advance(5'000'000);
  const Micros edited_at = kStart + 5'000'000;
  CHECK(f.Run({"FEED.EDIT", "42", "7", "fixed"}) ==
        absl::StrCat(":", edited_at, "\r\n"));
  // Every feed that holds it reads the new payload; without WITHEDITS the
  // entry keeps its five fields.
  const std::string feed =
      Page({Entry(8, 42, kStart + 1, "other"), Entry(7, 42, kStart, "fixed")});
  CHECK(f.Run({"FEED.READ", "1"}) == feed);
  CHECK(f.Run({"FEED.OWN", "42"}) == feed);
  CHECK(f.Run({"FEED.WORLD"}) == feed);
  CHECK(f.Run({"FEED.READ", "1", "withedits", "REV"}) ==
        Page({Entry(7, 42, kStart, "fixed", edited_at),
              Entry(8, 42, kStart + 1, "other", 0)}));
  CHECK(f.Run({"FEED.OWN", "42", "WITHEDITS", "NAMES", "LIMIT", "1", "MINTS",
               std::to_string(kStart), "MAXTS", std::to_string(kStart)}) ==
        Page({Entry(7, 42, kStart, "fixed", edited_at)}));
  // Ranked entries and notification groups: edited_at after every field.
  const std::string ranked = f.Run({"FEED.RANKED", "1"});
  CHECK(Contains(ranked, "*7\r\n" + Id(7)));
  CHECK(!Contains(ranked, "*8\r\n"));
  const std::string ranked_edits = f.Run({"FEED.RANKED", "1", "WITHEDITS"});
  CHECK(Contains(ranked_edits, "*8\r\n" + Id(7)));
  CHECK(Contains(ranked_edits, absl::StrCat(Bulk("fixed"))));
  CHECK(Contains(ranked_edits, absl::StrCat("*4\r\n:0\r\n:0\r\n:0\r\n:0\r\n:",
                                            edited_at, "\r\n")));
  CHECK(Contains(f.Run({"FEED.NOTIFICATIONS", "9"}),
                 Entry(7, 42, kStart, "fixed")));
  CHECK(Contains(f.Run({"FEED.NOTIFICATIONS", "9", "WITHEDITS"}),
                 Entry(7, 42, kStart, "fixed", edited_at)));
  // Edited again: the last edit stands. An empty payload is a payload.
  f.clock().Advance(1);
  CHECK(f.Run({"FEED.EDIT", "42", "7", ""}) ==
        absl::StrCat(":", edited_at + 1, "\r\n"));
  CHECK(f.Run({"FEED.OWN", "42", "WITHEDITS", "REV", "LIMIT", "1"})
            .ends_with(Entry(7, 42, kStart, "", edited_at + 1)));
  // The counters and the notification stay.
  CHECK(f.Run({"FEED.COUNTERS", "7"}) == "*4\r\n:0\r\n:0\r\n:0\r\n:0\r\n");
  CHECK(f.Run({"FEED.NOTIFY.COUNTS", "9"}) == "*3\r\n:1\r\n:1\r\n:1\r\n");
}

TEST_CASE("FEED.EDIT errors name the argument and change nothing") {
  DispatcherFixture f(Options());
  REQUIRE(f.Run({"FEED.PUBLISH", "user:alice", "7", std::to_string(kStart),
                 "first"}) == ":1\r\n");
  REQUIRE(f.Run({"FEED.PUBLISH", "43", "9", std::to_string(kStart), "gone"}) ==
          ":1\r\n");
  REQUIRE(f.Run({"FEED.RETRACT", "9"}) == "+OK\r\n");
  const std::string alice = Bulk(absl::StrCat(kFirstNamedEntityId));
  const std::string before = Page({Entry(7, "user:alice", kStart, "first", 0)});
  REQUIRE(f.Run({"FEED.OWN", "user:alice", "WITHEDITS", "NAMES"}) == before);
  CHECK(f.Run({"FEED.EDIT", "user:alice", "7"}) == Arity("feed.edit"));
  CHECK(f.Run({"FEED.EDIT", "user:alice", "7", "a", "b"}) ==
        Arity("feed.edit"));
  CHECK(StartsWith(f.Run({"FEED.EDIT", "", "7", "x"}),
                   "-ERR actor must be a decimal id or a name"));
  CHECK(StartsWith(f.Run({"FEED.EDIT", "user:alice", "seven", "x"}),
                   "-ERR activity id must be a decimal id from 0 to "));
  CHECK(StartsWith(f.Run({"FEED.EDIT", "user:alice", "*", "x"}),
                   "-ERR activity id must be a decimal id"));
  // Unknown, retracted: NotFound.
  CHECK(f.Run({"FEED.EDIT", "user:alice", "99", "x"}) ==
        "-ERR activity 99 is not a published activity (unknown, retracted "
        "or expired)\r\n");
  CHECK(f.Run({"FEED.EDIT", "43", "9", "x"}) ==
        "-ERR activity 9 is not a published activity (unknown, retracted "
        "or expired)\r\n");
  // Another actor's: PermissionDenied, by id or by a name that has none.
  CHECK(f.Run({"FEED.EDIT", "43", "7", "x"}) ==
        absl::StrCat("-ERR activity 7 was published by ", kFirstNamedEntityId,
                     ", not by 43: only its actor edits it\r\n"));
  CHECK(f.Run({"FEED.EDIT", "user:mallory", "7", "x"}) ==
        "-ERR activity 7 was not published by 'user:mallory' (a name that "
        "has published nothing): only its actor edits it\r\n");
  // Above max_payload_bytes (16): InvalidArgument.
  CHECK(
      StartsWith(f.Run({"FEED.EDIT", "user:alice", "7", std::string(17, 'p')}),
                 "-ERR EditActivity payload size"));
  CHECK(f.Run({"FEED.OWN", "user:alice", "WITHEDITS", "NAMES"}) == before);
  CHECK(f.names().size() == 1);
  CHECK(f.Run({"FEED.EDIT", "user:alice", "7", std::string(16, 'p')}) ==
        absl::StrCat(":", kStart, "\r\n"));
}

TEST_CASE("FEED.PIN, FEED.UNPIN and FEED.PINNED, the most recent pin first") {
  DispatcherFixture f(Options());
  for (int i = 1; i <= 3; ++i) {
    REQUIRE(f.Run({"FEED.PUBLISH", "user:chan", std::to_string(i),
                   std::to_string(kStart + i), absl::StrCat("p", i)}) ==
            ":1\r\n");
  }
  const std::string chan = absl::StrCat(kFirstNamedEntityId);
  CHECK(f.Run({"FEED.PINNED", "user:chan"}) == "*0\r\n");
  CHECK(f.Run({"FEED.PIN", "user:chan", "2"}) == ":1\r\n");
  CHECK(f.Run({"FEED.PIN", "user:chan", "1"}) == ":1\r\n");
  CHECK(f.Run({"FEED.PIN", "user:chan", "3"}) == ":1\r\n");
  CHECK(f.Run({"FEED.PIN", "user:chan", "2"}) == ":0\r\n");
  CHECK(
      f.Run({"FEED.PINNED", "user:chan"}) ==
      List({Entry(3, chan, kStart + 3, "p3"), Entry(1, chan, kStart + 1, "p1"),
            Entry(2, chan, kStart + 2, "p2")}));
  CHECK(f.Run({"FEED.PINNED", chan, "NAMES"}) ==
        List({Entry(3, "user:chan", kStart + 3, "p3"),
              Entry(1, "user:chan", kStart + 1, "p1"),
              Entry(2, "user:chan", kStart + 2, "p2")}));
  // The own feed's pages keep each pin in its place.
  CHECK(
      f.Run({"FEED.OWN", "user:chan"}) ==
      Page({Entry(3, chan, kStart + 3, "p3"), Entry(2, chan, kStart + 2, "p2"),
            Entry(1, chan, kStart + 1, "p1")}));
  // A pinned entry reads its edited payload.
  f.clock().Advance(10);
  REQUIRE(f.Run({"FEED.EDIT", "user:chan", "1", "p1 fixed"}) ==
          absl::StrCat(":", kStart + 10, "\r\n"));
  CHECK(f.Run({"FEED.PINNED", "user:chan", "withedits", "names"}) ==
        List({Entry(3, "user:chan", kStart + 3, "p3", 0),
              Entry(1, "user:chan", kStart + 1, "p1 fixed", kStart + 10),
              Entry(2, "user:chan", kStart + 2, "p2", 0)}));
  CHECK(f.Run({"FEED.UNPIN", "user:chan", "1"}) == ":1\r\n");
  CHECK(f.Run({"FEED.UNPIN", "user:chan", "1"}) == ":0\r\n");
  CHECK(f.Run({"FEED.UNPIN", "user:chan", "99"}) == ":0\r\n");
  // Pinned again: on top.
  CHECK(f.Run({"FEED.PIN", "user:chan", "1"}) == ":1\r\n");
  CHECK(f.Run({"FEED.PINNED", "user:chan"}) ==
        List({Entry(1, chan, kStart + 1, "p1 fixed"),
              Entry(3, chan, kStart + 3, "p3"),
              Entry(2, chan, kStart + 2, "p2")}));
  // A retract ends the pin.
  CHECK(f.Run({"FEED.RETRACT", "3"}) == "+OK\r\n");
  CHECK(f.Run({"FEED.PINNED", "user:chan"}) ==
        List({Entry(1, chan, kStart + 1, "p1 fixed"),
              Entry(2, chan, kStart + 2, "p2")}));
  CHECK(f.Run({"FEED.UNPIN", "user:chan", "3"}) == ":0\r\n");
  CHECK(StartsWith(f.Run({"FEED.PIN", "user:chan", "3"}),
                   "-ERR entity " + chan + " has no visible published"));
}

TEST_CASE("FEED.PIN errors name the argument and change nothing") {
  DispatcherFixture f(Options());
  REQUIRE(f.Run({"FEED.PUBLISH", "42", "7", std::to_string(kStart), "p"}) ==
          ":1\r\n");
  REQUIRE(f.Run({"FEED.PIN", "42", "7"}) == ":1\r\n");
  const std::string pinned = List({Entry(7, 42, kStart, "p")});
  CHECK(f.Run({"FEED.PIN", "42"}) == Arity("feed.pin"));
  CHECK(f.Run({"FEED.PIN", "42", "7", "8"}) == Arity("feed.pin"));
  CHECK(f.Run({"FEED.UNPIN", "42"}) == Arity("feed.unpin"));
  CHECK(f.Run({"FEED.UNPIN", "42", "7", "8"}) == Arity("feed.unpin"));
  CHECK(f.Run({"FEED.PINNED"}) == Arity("feed.pinned"));
  CHECK(StartsWith(f.Run({"FEED.PIN", "", "7"}),
                   "-ERR owner must be a decimal id or a name"));
  CHECK(StartsWith(f.Run({"FEED.UNPIN", "42", "-7"}),
                   "-ERR activity id must be a decimal id"));
  CHECK(StartsWith(f.Run({"FEED.PINNED", "", "NAMES"}),
                   "-ERR owner must be a decimal id or a name"));
  CHECK(StartsWith(f.Run({"FEED.PINNED", "42", "LIMIT"}),
                   "-ERR syntax error: unexpected argument 'LIMIT' for "
                   "'feed.pinned'"));
  // Only the actor pins its activity; unknown activities are not found.
  CHECK(f.Run({"FEED.PIN", "43", "7"}) ==
        "-ERR entity 43 has no visible published activity 7 to pin\r\n");
  CHECK(f.Run({"FEED.PIN", "42", "8"}) ==
        "-ERR entity 42 has no visible published activity 8 to pin\r\n");
  CHECK(f.Run({"FEED.PIN", "user:nobody", "7"}) ==
        "-ERR entity 'user:nobody' has no visible published activity 7 to "
        "pin\r\n");
  CHECK(f.Run({"FEED.UNPIN", "43", "7"}) == ":0\r\n");
  CHECK(f.Run({"FEED.UNPIN", "user:nobody", "7"}) == ":0\r\n");
  CHECK(f.Run({"FEED.PINNED", "user:nobody"}) == "*0\r\n");
  CHECK(f.Run({"FEED.PINNED", "43"}) == "*0\r\n");
  CHECK(f.names().size() == 0);
  CHECK(f.Run({"FEED.PINNED", "42"}) == pinned);
}

TEST_CASE("FEED.PIN refuses a 51st pin") {
  DispatcherFixture f(Options());
  for (size_t i = 1; i <= kMaxPinnedEntries + 1; ++i) {
    REQUIRE(f.Run({"FEED.PUBLISH", "42", std::to_string(i),
                   std::to_string(kStart + i), "p"}) == ":1\r\n");
  }
  for (size_t i = 1; i <= kMaxPinnedEntries; ++i) {
    REQUIRE(f.Run({"FEED.PIN", "42", std::to_string(i)}) == ":1\r\n");
  }
  const std::string last = std::to_string(kMaxPinnedEntries + 1);
  CHECK(f.Run({"FEED.PIN", "42", last}) ==
        absl::StrCat("-ERR entity 42 has ", kMaxPinnedEntries,
                     " pins already (kMaxPinnedEntries); unpin one first\r\n"));
  const std::string pinned = f.Run({"FEED.PINNED", "42"});
  CHECK(StartsWith(pinned, absl::StrCat("*", kMaxPinnedEntries, "\r\n") +
                               Entry(kMaxPinnedEntries, 42,
                                     kStart + kMaxPinnedEntries, "p")));
  // Re-pinning one that is pinned is no 51st.
  CHECK(f.Run({"FEED.PIN", "42", "1"}) == ":0\r\n");
  CHECK(f.Run({"FEED.UNPIN", "42", "1"}) == ":1\r\n");
  CHECK(f.Run({"FEED.PIN", "42", last}) == ":1\r\n");
  CHECK(StartsWith(f.Run({"FEED.PINNED", "42"}),
                   absl::StrCat("*", kMaxPinnedEntries, "\r\n") +
                       Entry(kMaxPinnedEntries + 1, 42,
                             kStart + kMaxPinnedEntries + 1, "p")));
}

TEST_CASE("a FEED.PUBLISH retried after FEED.EDIT is still a no-op") {
  DispatcherFixture f(Options());
  const ActivityId keyed = KeyedActivityId(kFirstNamedEntityId, "req-1");
  const std::string alice = absl::StrCat(kFirstNamedEntityId);
  REQUIRE(f.Run({"FEED.PUBLISH", "user:alice", "*", "*", "hi", "IDEMPOTENCY",
                 "req-1"}) == Id(keyed));
  REQUIRE(f.Run({"FEED.PUBLISH", "user:alice", "5", "*", "yo"}) == ":1\r\n");
  REQUIRE(f.Run({"FEED.PUBLISH", "user:alice", "6", std::to_string(kStart),
                 "hey"}) == ":1\r\n");
  f.clock().Advance(1'000);
  for (const char* id : {"5", "6"}) {
    REQUIRE(f.Run({"FEED.EDIT", "user:alice", id, "edited"}) ==
            absl::StrCat(":", kStart + 1'000, "\r\n"));
  }
  REQUIRE(f.Run({"FEED.EDIT", "user:alice", absl::StrCat(keyed), "edited"}) ==
          absl::StrCat(":", kStart + 1'000, "\r\n"));
  const std::string own = Page({Entry(keyed, alice, kStart, "edited"),
                                Entry(6, alice, kStart, "edited"),
                                Entry(5, alice, kStart, "edited")});
  REQUIRE(f.Run({"FEED.OWN", "user:alice"}) == own);
  // While the ledger remembers them, and once it forgot them (as after a
  // restart: the ts then comes from the own feed, whose payload is the
  // edit's), each retry answers as the first and the edit stands.
  for (const Micros wait : {Micros{1'000}, kPublishMemoryMicros}) {
    CAPTURE(wait);
    f.clock().Advance(wait);
    CHECK(f.Run({"FEED.PUBLISH", "user:alice", "*", "*", "hi", "IDEMPOTENCY",
                 "req-1"}) == Id(keyed));
    CHECK(f.Run({"FEED.PUBLISH", "user:alice", "5", "*", "yo"}) == ":0\r\n");
    CHECK(f.Run({"FEED.PUBLISH", "user:alice", "6", std::to_string(kStart),
                 "hey"}) == ":0\r\n");
    CHECK(f.Run({"FEED.OWN", "user:alice"}) == own);
  }
  // The ts still tells another activity from a retry.
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "user:alice", "6",
                          std::to_string(kStart + 1), "hey"}),
                   "-ERR "));
  CHECK(f.Run({"FEED.OWN", "user:alice"}) == own);
}

TEST_CASE("the edit commands are writes MULTI queues and EXEC runs") {
  DispatcherFixture f(Options());
  REQUIRE(f.Run({"FEED.PUBLISH", "42", "7", std::to_string(kStart), "p"}) ==
          ":1\r\n");
  CHECK(StartsWith(f.Run({"COMMAND", "INFO", "feed.edit", "feed.pin",
                          "feed.unpin", "feed.pinned"}),
                   "*4\r\n*10\r\n" + Bulk("feed.edit") + ":4\r\n*3\r\n" +
                       "+write\r\n+denyoom\r\n+fast\r\n"));
  const std::string info = f.Run({"COMMAND", "INFO", "feed.pinned"});
  CHECK(StartsWith(info, "*1\r\n*10\r\n" + Bulk("feed.pinned") +
                             ":-2\r\n*1\r\n+readonly\r\n"));
  CHECK(f.Run({"MULTI"}) == "+OK\r\n");
  CHECK(f.Run({"FEED.EDIT", "42", "7", "q"}) == "+QUEUED\r\n");
  CHECK(f.Run({"FEED.PIN", "42", "7"}) == "+QUEUED\r\n");
  CHECK(f.Run({"FEED.PINNED", "42", "WITHEDITS"}) == "+QUEUED\r\n");
  CHECK(f.Run({"FEED.UNPIN", "42", "7"}) == "+QUEUED\r\n");
  CHECK(f.Run({"EXEC"}) ==
        absl::StrCat("*4\r\n:", kStart, "\r\n:1\r\n",
                     List({Entry(7, 42, kStart, "q", kStart)}), ":1\r\n"));
}

TEST_CASE("KIND, KINDS and EXCEPTKINDS: activity kinds over the protocol") {
  DispatcherFixture f(Options());
  REQUIRE(f.Run({"FEED.FOLLOW", "1", "42"}) == ":1\r\n");
  for (int id = 1; id <= 6; ++id) {
    REQUIRE(f.Run({"FEED.PUBLISH", "42", std::to_string(id),
                   std::to_string(kStart + id), "p", "KIND",
                   std::to_string(id % 3)}) == ":1\r\n");
  }
  // An entry as WITHKINDS writes it: the five fields, then the kind.
  auto with_kind = [](int id, int kind) {
    std::string e = Entry(static_cast<uint64_t>(id), 42, kStart + id, "p") +
                    absl::StrCat(":", kind, "\r\n");
    e[1] = '6';
    return e;
  };
  CHECK(f.Run({"FEED.READ", "1", "KINDS", "1,2", "WITHKINDS"}) ==
        Page({with_kind(5, 2), with_kind(4, 1), with_kind(2, 2),
              with_kind(1, 1)}));
  CHECK(f.Run({"FEED.OWN", "42", "EXCEPTKINDS", "1,2"}) ==
        Page({Entry(6, 42, kStart + 6, "p"), Entry(3, 42, kStart + 3, "p")}));
  // WITHEDITS then WITHKINDS, whatever the order asked.
  CHECK(f.Run({"FEED.WORLD", "WITHKINDS", "WITHEDITS", "KINDS", "0"}) ==
        Page({"*7" + Entry(6, 42, kStart + 6, "p", 0).substr(2) + ":0\r\n",
              "*7" + Entry(3, 42, kStart + 3, "p", 0).substr(2) + ":0\r\n"}));
  // A cursor continues only the same kinds.
  const std::string first =
      f.Run({"FEED.READ", "1", "KINDS", "1", "LIMIT", "1"});
  REQUIRE(StartsWith(first, "*2\r\n$"));
  const size_t length_end = first.find("\r\n", 4);
  const size_t length = std::stoul(first.substr(5, length_end - 5));
  const std::string cursor = first.substr(length_end + 2, length);
  CHECK(f.Run({"FEED.READ", "1", "KINDS", "1", "CURSOR", cursor}) ==
        Page({Entry(1, 42, kStart + 1, "p")}));
  CHECK(StartsWith(f.Run({"FEED.READ", "1", "KINDS", "2", "CURSOR", cursor}),
                   "-ERR cursor was made for a read of other activity kinds"));
  CHECK(Contains(f.Run({"FEED.RANKED", "1", "KINDS", "2", "WITHKINDS"}),
                 "\r\n:2\r\n*"));
  // Every malformed kind is refused, and nothing is published.
  for (const char* kind : {"64", "-1", "x", ""}) {
    CHECK(StartsWith(f.Run({"FEED.PUBLISH", "42", "9", std::to_string(kStart),
                            "p", "KIND", kind}),
                     "-ERR "));
  }
  for (const char* list : {"", "1,,2", "64", "a", "1,+2", "0, 1", "1 "}) {
    INFO(list);
    CHECK(StartsWith(f.Run({"FEED.READ", "1", "KINDS", list}),
                     "-ERR KINDS takes activity kinds 0..63"));
  }
  CHECK(StartsWith(
      f.Run({"FEED.READ", "1", "EXCEPTKINDS",
             "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,"
             "24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,"
             "45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63"}),
      "-ERR ReadOptions.kinds keeps no kind"));
  CHECK(StartsWith(f.Run({"FEED.OWN", "42", "LIMIT", "10"}),
                   "*2\r\n" + Bulk("0") + "*6\r\n"));
  // A follow of some kinds: back-fill and later publishes alike.
  CHECK(f.Run({"FEED.FOLLOW", "2", "42", "EXCEPTKINDS", "1"}) == ":1\r\n");
  CHECK(f.Run({"FEED.READ", "2"}) ==
        Page({Entry(6, 42, kStart + 6, "p"), Entry(5, 42, kStart + 5, "p"),
              Entry(3, 42, kStart + 3, "p"), Entry(2, 42, kStart + 2, "p")}));
  CHECK(StartsWith(f.Run({"FEED.FOLLOW", "2", "42", "KINDS", "1"}),
                   "-ERR 2 follows 42 with other kinds already"));
  CHECK(f.Run({"FEED.FOLLOW", "2", "42"}) == ":0\r\n");
  CHECK(StartsWith(f.Run({"FEED.FOLLOWMANY", "3", "42", "KINDS", "x"}),
                   "-ERR KINDS takes activity kinds"));
  // Notifications of some kinds: 22 is the one of kind 1.
  for (int id = 20; id <= 22; ++id) {
    REQUIRE(f.Run({"FEED.PUBLISH", "42", std::to_string(id),
                   std::to_string(kStart + id), "p", "KIND",
                   std::to_string(id % 3), "NOTIFY", "7"}) == ":1\r\n");
  }
  const std::string notes =
      f.Run({"FEED.NOTIFICATIONS", "7", "KINDS", "1", "WITHKINDS"});
  CHECK(StartsWith(notes, "*2\r\n" + Bulk("0") + "*1\r\n"));
  CHECK(Contains(notes, Bulk("22")));
  CHECK(!Contains(notes, Bulk("21")));
  CHECK(StartsWith(f.Run({"FEED.NOTIFICATIONS", "7", "EXCEPTKINDS", "1"}),
                   "*2\r\n" + Bulk("0") + "*2\r\n"));
  CHECK(StartsWith(f.Run({"FEED.NOTIFICATIONS", "7", "KINDS", "1,"}),
                   "-ERR KINDS takes activity kinds"));
  // A retry must repeat the kind.
  CHECK(f.Run({"FEED.PUBLISH", "42", "6", std::to_string(kStart + 6), "p",
               "KIND", "0"}) == ":0\r\n");
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "42", "6", std::to_string(kStart + 6),
                          "p", "KIND", "1"}),
                   "-ERR activity 6 already exists with a different kind"));
}

TEST_CASE("REPOSTOF: a home feed shows a repost once") {
  DispatcherFixtureOptions o = Options();
  o.engine.reposts.window = 2;
  o.engine.reposts.kinds = KindFilter::Only({1});
  DispatcherFixture f(o);
  REQUIRE(f.Run({"FEED.FOLLOW", "1", "42"}) == ":1\r\n");
  REQUIRE(f.Run({"FEED.FOLLOW", "1", "43"}) == ":1\r\n");
  REQUIRE(f.Run({"FEED.PUBLISH", "42", "1", std::to_string(kStart + 1), "p"}) ==
          ":1\r\n");
  REQUIRE(f.Run({"FEED.PUBLISH", "43", "2", std::to_string(kStart + 2), "p",
                 "KIND", "1", "REPOSTOF", "1"}) == ":1\r\n");
  CHECK(f.Run({"FEED.READ", "1"}) == Page({Entry(1, 42, kStart + 1, "p")}));
  CHECK(f.Run({"FEED.OWN", "43"}) == Page({Entry(2, 43, kStart + 2, "p")}));
  // Not of a repost kind, of itself, or not an id: refused, nothing stored.
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "43", "3", std::to_string(kStart + 3),
                          "p", "REPOSTOF", "1"}),
                   "-ERR Activity.kind is 0 for a repost"));
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "43", "3", std::to_string(kStart + 3),
                          "p", "KIND", "1", "REPOSTOF", "3"}),
                   "-ERR Activity.repost_of is 3, the activity's own id"));
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "43", "3", std::to_string(kStart + 3),
                          "p", "KIND", "1", "REPOSTOF", "x"}),
                   "-ERR "));
  CHECK(f.Run({"FEED.OWN", "43"}) == Page({Entry(2, 43, kStart + 2, "p")}));
}

}  // namespace
}  // namespace feedcore::server
