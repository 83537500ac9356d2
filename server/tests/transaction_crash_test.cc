// What a crash leaves of an EXEC with --appendonly yes: all of it or none,
// in the store and in the names journal, for every command a transaction
// can queue but the admin ones (names_journal.h, "Groups"). Crash images
// are copies of the directory taken inside the transaction, after it, and
// after it with the journal's end of the group cut off (a crash between
// the store's close of the group and the journal's end record).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "append_only.h"
#include "append_only_fixture.h"
#include "names_journal.h"
#include "support/file_test_util.h"

namespace feedcore::server {
namespace {

using ::feedcore::testing::CopyDirectory;
using ::feedcore::testing::ReadBytes;
using ::feedcore::testing::TempDir;
using ::feedcore::testing::WriteBytes;
using Server = testing::AppendOnlyServer;

// The transaction's commands, run as EXEC runs them (in one
// RunAsOneWrite), with `inside` called before the last one.
template <typename Inside>
void RunTransaction(Server& server, Inside inside) {
  absl::Status status = server.files->RunAsOneWrite([&] {
    CHECK(server.Run({"DEL", "lb"}) == ":1\r\n");
    CHECK(server.Run({"ZADD", "lb", "9", "z"}) == ":1\r\n");
    CHECK(server.Run({"EXPIRE", "tmp", "1000"}) == ":1\r\n");
    CHECK(server.Run({"RENAME", "old", "new"}) == "+OK\r\n");
    CHECK(server.Run({"ZUNIONSTORE", "sum", "2", "tmp", "new"}) == ":2\r\n");
    CHECK(server.Run({"PERSIST", "gone"}) == ":0\r\n");
    CHECK(server.Run({"UNLINK", "gone"}) == ":1\r\n");
    inside();
    CHECK(server.Run({"ZADD", "fresh", "1", "f"}) == ":1\r\n");
  });
  REQUIRE_MESSAGE(status.ok(), status);
}

void CheckBefore(Server& server) {
  CHECK(server.Run({"ZRANGE", "lb", "0", "-1"}) ==
        "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  CHECK(server.Run({"TTL", "tmp"}) == ":-1\r\n");
  CHECK(server.Run({"ZRANGE", "old", "0", "-1"}) == "*1\r\n$1\r\no\r\n");
  CHECK(server.Run({"EXISTS", "new", "sum", "fresh"}) == ":0\r\n");
  CHECK(server.Run({"ZRANGE", "gone", "0", "-1"}) == "*1\r\n$1\r\ng\r\n");
}

void CheckAfter(Server& server) {
  CHECK(server.Run({"ZRANGE", "lb", "0", "-1"}) == "*1\r\n$1\r\nz\r\n");
  const std::string ttl = server.Run({"TTL", "tmp"});
  CHECK((ttl.size() > 2 && ttl[0] == ':' && ttl[1] != '-'));
  CHECK(server.Run({"EXISTS", "old", "gone"}) == ":0\r\n");
  CHECK(server.Run({"ZRANGE", "new", "0", "-1"}) == "*1\r\n$1\r\no\r\n");
  CHECK(server.Run({"ZRANGE", "sum", "0", "-1"}) ==
        "*2\r\n$1\r\nt\r\n$1\r\no\r\n");
  CHECK(server.Run({"ZRANGE", "fresh", "0", "-1"}) == "*1\r\n$1\r\nf\r\n");
}

TEST_CASE("a crash keeps all of an EXEC or none, names included") {
  for (const FsyncPolicy fsync :
       {FsyncPolicy::kAlways, FsyncPolicy::kEverySecond}) {
    CAPTURE(static_cast<int>(fsync));
    TempDir dir("exec-crash");
    const std::string live = dir.File("live");
    const std::string inside = dir.File("inside");
    const std::string after = dir.File("after");
    const std::string no_end = dir.File("no-end");
    std::filesystem::create_directory(live);
    {
      Server server(live, fsync);
      CHECK(server.Run({"ZADD", "lb", "1", "a", "2", "b"}) == ":2\r\n");
      CHECK(server.Run({"ZADD", "tmp", "5", "t"}) == ":1\r\n");
      CHECK(server.Run({"ZADD", "old", "7", "o"}) == ":1\r\n");
      CHECK(server.Run({"ZADD", "gone", "3", "g"}) == ":1\r\n");
      REQUIRE(server.files->store().Sync().ok());
      const uint64_t journal_bytes_before =
          ReadBytes(live + "/" + kNamesJournalFile).size();
      RunTransaction(server, [&] { CopyDirectory(live, inside); });
      REQUIRE(server.files->store().Sync().ok());
      CopyDirectory(live, after);
      CopyDirectory(live, no_end);
      // The group's end is the journal's last frame: header and body
      // (type, empty key, tag, empty name).
      const std::string journal = ReadBytes(live + "/" + kNamesJournalFile);
      const size_t end_frame = 4 + 8 + 1 + 4 + 8 + 4;
      REQUIRE(journal.size() > journal_bytes_before + end_frame);
      WriteBytes(no_end + "/" + kNamesJournalFile,
                 journal.substr(0, journal.size() - end_frame));
      CheckAfter(server);
    }
    {
      Server server(inside, fsync);
      CHECK(server.files->names_recovery().transactions_skipped == 1);
      CHECK(server.files->names_recovery().unnamed_members_removed == 0);
      CheckBefore(server);
    }
    for (const std::string& image : {after, no_end}) {
      CAPTURE(image);
      Server server(image, fsync);
      CHECK(server.files->names_recovery().transactions_skipped == 0);
      CHECK(server.files->names_recovery().unnamed_members_removed == 0);
      CheckAfter(server);
    }
  }
}

TEST_CASE("EXEC is one tagged group unless it queues an admin command") {
  TempDir dir("exec-group");
  Server server(dir.path(), FsyncPolicy::kEverySecond);
  const auto tag = [&] {
    return server.files->store().Stats().write_group_tag;
  };
  CHECK(server.Run({"ZADD", "lb", "1", "a"}) == ":1\r\n");
  for (const std::vector<std::string>& write :
       std::vector<std::vector<std::string>>{{"DEL", "lb"},
                                             {"UNLINK", "lb"},
                                             {"FLUSHALL"},
                                             {"RENAME", "lb", "other"},
                                             {"EXPIRE", "lb", "100"},
                                             {"ZUNIONSTORE", "u", "1", "lb"}}) {
    CAPTURE(write[0]);
    const uint64_t before = tag();
    CHECK(server.Run({"MULTI"}) == "+OK\r\n");
    CHECK(server.Run({"ZADD", "lb", "2", "b"}) == "+QUEUED\r\n");
    CHECK(server.Run(write) == "+QUEUED\r\n");
    const std::string replies = server.Run({"EXEC"});
    CHECK(replies.substr(0, 5) == "*2\r\n:");
    CHECK(replies.find('-') == std::string::npos);
    CHECK(tag() == before + 1);
  }
  const uint64_t before = tag();
  CHECK(server.Run({"MULTI"}) == "+OK\r\n");
  CHECK(server.Run({"ZADD", "lb", "2", "b"}) == "+QUEUED\r\n");
  CHECK(server.Run({"BGREWRITEAOF"}) == "+QUEUED\r\n");
  CHECK(server.Run({"EXEC"}).substr(0, 1) == "*");
  server.files->WaitForRewrite();
  CHECK(tag() == before);
}

}  // namespace
}  // namespace feedcore::server
