// Unit tests of feedcore-server's names journal (server/):
// replay of ids with gaps and of names whose members were removed, and
// append-only files reopened after ZREM freed names and their slots were
// reused with new ids, and renames, also those the store lost.
#include "names_journal.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "append_only.h"
#include "append_only_fixture.h"
#include "feedcore/feedcore.h"
#include "support/file_test_util.h"

namespace feedcore::server {
namespace {

using ::feedcore::testing::TempDir;

// A journal file's bytes: the header (magic, u32 `version`), then
// `records`.
std::string JournalBytes(const std::vector<NamesRecord>& records,
                         char version = 2) {
  std::string bytes("FCNAMJL\0\0\0\0\0", 12);
  bytes[8] = version;
  for (const NamesRecord& record : records) bytes += EncodeNamesFrame(record);
  return bytes;
}

TEST_CASE("replay keeps ids with gaps and stale names for the caller") {
  const MemberId reused = (MemberId{1} << 32) | 1;  // slot 0, generation 1
  const std::string bytes = JournalBytes({
      {NamesRecordType::kAssign, "lb", 1, "a"},
      {NamesRecordType::kAssign, "lb", 2, "b"},
      {NamesRecordType::kAssign, "lb", 7, "c"},
      // "a" removed (no free record), its slot reused by "d", and "a"
      // added again in another slot.
      {NamesRecordType::kAssign, "lb", reused, "d"},
      {NamesRecordType::kAssign, "lb", 9, "a"},
      {NamesRecordType::kFree, "lb", 2, ""},
      {NamesRecordType::kAssign, "gone", 1, "x"},
      {NamesRecordType::kDrop, "gone", 0, ""},
  });
  absl::StatusOr<NamesJournalContents> contents = DecodeNamesJournal(bytes, 0);
  REQUIRE_MESSAGE(contents.ok(), contents.status());
  CHECK(contents->records == 8);
  CHECK(!contents->torn_tail);
  REQUIRE(contents->keys.size() == 1);
  const KeyMemberNames& lb = contents->keys[0];
  CHECK(lb.key == "lb");
  CHECK(lb.ids == std::vector<MemberId>{1, 7, 9, reused});
  CHECK(lb.names == std::vector<std::string>{"a", "c", "a", "d"});
}

using Server = testing::AppendOnlyServer;

TEST_CASE("a group's records replay only if the store holds its tag") {
  const std::vector<NamesRecord> records = {
      {NamesRecordType::kAssign, "lb", 1, "a"},
      {NamesRecordType::kAssign, "old", 1, "o"},
      {NamesRecordType::kGroupBegin, "", 5, ""},
      {NamesRecordType::kDrop, "lb", 0, ""},
      {NamesRecordType::kAssign, "lb", 1, "z"},
      {NamesRecordType::kExpire, "lb", 99, ""},
      {NamesRecordType::kRename, "old", 3, "new"},
      {NamesRecordType::kGroupEnd, "", 5, ""},
      {NamesRecordType::kAssign, "late", 1, "l"},
      // A crash before this group's end: it runs to the end of the file.
      {NamesRecordType::kGroupBegin, "", 6, ""},
      {NamesRecordType::kAssign, "six", 1, "s"},
  };
  for (const uint64_t store_tag : {uint64_t{4}, uint64_t{5}, uint64_t{6}}) {
    CAPTURE(store_tag);
    absl::StatusOr<NamesJournalContents> contents =
        DecodeNamesJournal(JournalBytes(records), store_tag);
    REQUIRE_MESSAGE(contents.ok(), contents.status());
    CHECK(contents->records == records.size());
    CHECK(contents->groups_applied == (store_tag >= 5) + (store_tag >= 6));
    CHECK(contents->groups_skipped == 2 - contents->groups_applied);
    CHECK(contents->records_skipped ==
          (store_tag < 5 ? 4 : 0) + (store_tag < 6 ? 1 : 0));
    std::vector<std::string> keys;
    for (const KeyMemberNames& key : contents->keys) {
      keys.push_back(key.key);
      if (key.key == "lb") {
        CHECK(key.names ==
              std::vector<std::string>{store_tag >= 5 ? "z" : "a"});
        CHECK(key.expires_at == (store_tag >= 5 ? 99 : 0));
      }
    }
    std::vector<std::string> want = {"late", "lb"};
    want.push_back(store_tag >= 5 ? "new" : "old");
    if (store_tag >= 6) want.push_back("six");
    CHECK(keys == want);
    // A skipped group's rename is no rename to redo.
    CHECK(contents->last_rename.has_value() == (store_tag >= 5));
  }
  // Version 1 files, written before groups, read as before.
  CHECK(DecodeNamesJournal(JournalBytes({records[0]}, 1), 0).ok());
  CHECK(DecodeNamesJournal(JournalBytes({records[0]}, 3), 0).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("groups that do not nest as written are damage") {
  const NamesRecord begin5{NamesRecordType::kGroupBegin, "", 5, ""};
  const NamesRecord end5{NamesRecordType::kGroupEnd, "", 5, ""};
  const NamesRecord begin6{NamesRecordType::kGroupBegin, "", 6, ""};
  const NamesRecord end6{NamesRecordType::kGroupEnd, "", 6, ""};
  for (const std::vector<NamesRecord>& records :
       {std::vector<NamesRecord>{begin5, begin6},
        std::vector<NamesRecord>{begin5, end6}, std::vector<NamesRecord>{end5},
        std::vector<NamesRecord>{begin5, end5, end5},
        std::vector<NamesRecord>{{NamesRecordType::kGroupBegin, "", 0, ""}},
        std::vector<NamesRecord>{{NamesRecordType::kGroupBegin, "k", 5, ""}},
        std::vector<NamesRecord>{{NamesRecordType::kGroupEnd, "", 5, "x"}}}) {
    // Each followed by a record, so that no bad frame is the torn last.
    std::vector<NamesRecord> followed = records;
    followed.push_back({NamesRecordType::kAssign, "lb", 1, "a"});
    absl::StatusOr<NamesJournalContents> contents =
        DecodeNamesJournal(JournalBytes(followed), 10);
    CHECK(contents.status().code() == absl::StatusCode::kDataLoss);
  }
}

const char kRange[] =
    "*6\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"
    "$1\r\na\r\n$1\r\n4\r\n";

TEST_CASE("freed names and reused slots come back with their members") {
  for (FsyncPolicy fsync : {FsyncPolicy::kAlways, FsyncPolicy::kEverySecond}) {
    CAPTURE(static_cast<int>(fsync));
    TempDir dir;
    {
      Server server(dir.path(), fsync);
      CHECK(server.Run({"ZADD", "lb", "1", "a", "2", "b"}) == ":2\r\n");
      CHECK(server.Run({"ZREM", "lb", "a"}) == ":1\r\n");
      // Slot 0 again, with a new id: "c" must not come back as "a".
      CHECK(server.Run({"ZADD", "lb", "3", "c"}) == ":1\r\n");
      CHECK(server.Run({"ZADD", "lb", "4", "a"}) == ":1\r\n");
      CHECK(server.Run({"ZADD", "tmp", "1", "t"}) == ":1\r\n");
      CHECK(server.Run({"DEL", "tmp"}) == ":1\r\n");
      CHECK(server.Run({"ZRANGE", "lb", "0", "-1", "WITHSCORES"}) == kRange);
    }
    {
      Server server(dir.path(), fsync);
      CHECK(server.Run({"ZRANGE", "lb", "0", "-1", "WITHSCORES"}) == kRange);
      CHECK(server.Run({"ZCARD", "tmp"}) == ":0\r\n");
      // The start rewrote the journal to the live names only.
      CHECK(server.files->journal().Stats().records == 3);
      CHECK(server.files->names_recovery().unnamed_members_removed == 0);
      // Two rewrites with nothing written in between both finish.
      for (int i = 0; i < 2; ++i) {
        CHECK(server.Run({"BGREWRITEAOF"}) ==
              "+Background append only file rewriting started\r\n");
        server.files->WaitForRewrite();
        CHECK(server.files->rewrite_state().last_status.ok());
      }
      CHECK(server.Run({"ZREM", "lb", "b"}) == ":1\r\n");
    }
    Server server(dir.path(), fsync);
    CHECK(server.Run({"ZRANGE", "lb", "0", "-1"}) ==
          "*2\r\n$1\r\nc\r\n$1\r\na\r\n");
    CHECK(server.files->journal().Stats().records == 2);
  }
}

TEST_CASE("the report names the first damaged frame and what follows") {
  std::vector<NamesRecord> records;
  for (MemberId id = 1; id <= 5; ++id) {
    records.push_back({NamesRecordType::kAssign, "lb", id, "m"});
  }
  const std::string whole = JournalBytes(records);
  const size_t frame = EncodeNamesFrame(records[0]).size();  // all alike

  absl::StatusOr<NamesJournalReport> report = ReportNamesJournal(whole);
  REQUIRE(report.ok());
  CHECK(report->damage.empty());
  CHECK(report->records == 5);
  CHECK(report->valid_bytes == whole.size());

  // A flipped byte in the name of the third record.
  std::string flipped = whole;
  flipped[12 + 3 * frame - 1] ^= 0x01;
  report = ReportNamesJournal(flipped);
  REQUIRE(report.ok());
  CHECK_FALSE(report->torn_tail);
  CHECK(report->records == 2);
  CHECK(report->valid_bytes == 12 + 2 * frame);
  CHECK(report->damage.find("at byte " + std::to_string(12 + 2 * frame)) !=
        std::string::npos);
  CHECK(report->records_after == 2);
  CHECK(DecodeNamesJournal(flipped, 0).status().code() ==
        absl::StatusCode::kDataLoss);

  // Cut in the middle of the last frame.
  report = ReportNamesJournal(whole.substr(0, whole.size() - 3));
  REQUIRE(report.ok());
  CHECK(report->torn_tail);
  CHECK(report->records == 4);
  CHECK(report->valid_bytes == 12 + 4 * frame);

  // An empty file is a journal not yet started; another magic is refused.
  report = ReportNamesJournal("");
  REQUIRE(report.ok());
  CHECK(report->damage.empty());
  CHECK(ReportNamesJournal("FEEDLOG\0\3\0\0\0").status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("expiries come back after a restart and a rewrite") {
  for (FsyncPolicy fsync : {FsyncPolicy::kAlways, FsyncPolicy::kEverySecond}) {
    CAPTURE(static_cast<int>(fsync));
    TempDir dir;
    {
      Server server(dir.path(), fsync);
      server.Run({"ZADD", "weekly", "1", "a"});
      server.Run({"ZADD", "kept", "1", "a"});
      server.Run({"ZADD", "gone", "1", "a"});
      CHECK(server.Run({"EXPIREAT", "weekly", "4000000000"}) == ":1\r\n");
      CHECK(server.Run({"EXPIREAT", "kept", "4000000000"}) == ":1\r\n");
      CHECK(server.Run({"PERSIST", "kept"}) == ":1\r\n");
      CHECK(server.Run({"EXPIRE", "gone", "0"}) == ":1\r\n");
    }
    for (int restart = 0; restart < 2; ++restart) {
      CAPTURE(restart);
      Server server(dir.path(), fsync);
      CHECK(server.Run({"EXPIRETIME", "weekly"}) == ":4000000000\r\n");
      CHECK(server.Run({"TTL", "kept"}) == ":-1\r\n");
      CHECK(server.Run({"EXISTS", "gone"}) == ":0\r\n");
      // The start rewrote the journal; a rewrite keeps the expiry too.
      CHECK(server.Run({"BGREWRITEAOF"}) ==
            "+Background append only file rewriting started\r\n");
      server.files->WaitForRewrite();
      CHECK(server.files->rewrite_state().last_status.ok());
    }
  }
}

TEST_CASE("the journal decodes expire records and drops clear them") {
  const std::string bytes = JournalBytes({
      {NamesRecordType::kAssign, "k", 1, "a"},
      {NamesRecordType::kExpire, "k", 5'000'000, ""},
      {NamesRecordType::kAssign, "j", 1, "a"},
      {NamesRecordType::kExpire, "j", 7, ""},
      {NamesRecordType::kDrop, "j", 0, ""},
      {NamesRecordType::kAssign, "j", 1, "b"},
      {NamesRecordType::kAssign, "p", 1, "a"},
      {NamesRecordType::kExpire, "p", 9, ""},
      {NamesRecordType::kExpire, "p", 0, ""},
  });
  absl::StatusOr<NamesJournalContents> contents = DecodeNamesJournal(bytes, 0);
  REQUIRE_MESSAGE(contents.ok(), contents.status());
  REQUIRE(contents->keys.size() == 3);
  // Keys come out in order: j, k, p.
  CHECK(contents->keys[0].expires_at == 0);
  CHECK(contents->keys[1].expires_at == 5'000'000);
  CHECK(contents->keys[2].expires_at == 0);
}

TEST_CASE("the journal decodes rename records: names and expiry move") {
  const std::string bytes = JournalBytes({
      {NamesRecordType::kAssign, "tmp", 1, "a"},
      {NamesRecordType::kExpire, "tmp", 5'000'000, ""},
      {NamesRecordType::kAssign, "live", 1, "old"},
      {NamesRecordType::kAssign, "live", 2, "older"},
      {NamesRecordType::kExpire, "live", 7, ""},
      {NamesRecordType::kRename, "tmp", 3, "live"},
      {NamesRecordType::kAssign, "live", 2, "b"},
      {NamesRecordType::kRename, "missing", 4, "x"},
  });
  absl::StatusOr<NamesJournalContents> contents = DecodeNamesJournal(bytes, 0);
  REQUIRE_MESSAGE(contents.ok(), contents.status());
  REQUIRE(contents->keys.size() == 1);
  CHECK(contents->keys[0].key == "live");
  CHECK(contents->keys[0].ids == std::vector<MemberId>{1, 2});
  CHECK(contents->keys[0].names == std::vector<std::string>{"a", "b"});
  CHECK(contents->keys[0].expires_at == 5'000'000);
  REQUIRE(contents->last_rename.has_value());
  CHECK(contents->last_rename->from == "missing");
  CHECK(contents->last_rename->to == "x");
  CHECK(contents->last_rename->generation == 4);
  // A rename without a new key, or of generation 0, is damage.
  for (const NamesRecord& bad :
       {NamesRecord{NamesRecordType::kRename, "k", 1, ""},
        NamesRecord{NamesRecordType::kRename, "k", 0, "j"}}) {
    const std::string damaged =
        JournalBytes({bad, {NamesRecordType::kAssign, "k", 1, "a"}});
    CHECK(DecodeNamesJournal(damaged, 0).status().code() ==
          absl::StatusCode::kDataLoss);
  }
}

// The state a crash leaves when the journal's rename reached the disk and
// the store's did not: the store's files from before the rename with the
// journal from after it. Recovery makes the rename again.
TEST_CASE("a rename the store lost is made again from the journal") {
  TempDir dir("names-rename");
  const std::string before = dir.path() + "/before";
  const std::string after = dir.path() + "/after";
  std::filesystem::create_directory(before);
  std::filesystem::create_directory(after);
  const auto copy_store = [](const std::string& from, const std::string& to) {
    for (const auto& entry : std::filesystem::directory_iterator(from)) {
      const std::string name = entry.path().filename().string();
      if (name == "LOCK" || name == kNamesJournalFile) continue;
      std::filesystem::copy_file(
          entry.path(), to + "/" + name,
          std::filesystem::copy_options::overwrite_existing);
    }
  };
  {
    Server server(after, FsyncPolicy::kAlways);
    CHECK(server.Run({"ZADD", "tmp", "1", "a", "2", "b"}) == ":2\r\n");
    CHECK(server.Run({"ZADD", "live", "9", "old"}) == ":1\r\n");
    CHECK(server.Run({"EXPIRE", "tmp", "1000"}) == ":1\r\n");
    copy_store(after, before);
    CHECK(server.Run({"RENAME", "tmp", "live"}) == "+OK\r\n");
    CHECK(server.Run({"ZADD", "live", "3", "c"}) == ":1\r\n");
  }
  std::filesystem::copy_file(after + "/" + kNamesJournalFile,
                             before + "/" + kNamesJournalFile,
                             std::filesystem::copy_options::overwrite_existing);
  for (const std::string& directory : {before, after}) {
    INFO(directory);
    Server server(directory, FsyncPolicy::kAlways);
    CHECK(server.files->names_recovery().renames_redone ==
          (directory == before ? 1 : 0));
    CHECK(server.Run({"EXISTS", "tmp"}) == ":0\r\n");
    // From before: the store never saw the ZADD of "c" (after the rename),
    // which recovery drops as a name without a member.
    CHECK(server.Run({"ZRANGE", "live", "0", "-1"}) ==
          (directory == before ? "*2\r\n$1\r\na\r\n$1\r\nb\r\n"
                               : "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"));
    CHECK(server.Run({"PERSIST", "live"}) == ":1\r\n");
  }
  // Made again, the rename is in the store: the next start redoes nothing.
  Server server(before, FsyncPolicy::kAlways);
  CHECK(server.files->names_recovery().renames_redone == 0);
  CHECK(server.Run({"ZCARD", "live"}) == ":2\r\n");
}

// A board renamed back to its old name has the generation of the first
// rename's record again: recovery must not take that rename as lost.
TEST_CASE("keys renamed back and forth come back as they were") {
  TempDir dir("names-rename-back");
  {
    Server server(dir.path(), FsyncPolicy::kEverySecond);
    CHECK(server.Run({"ZADD", "a", "1", "x"}) == ":1\r\n");
    CHECK(server.Run({"RENAME", "a", "b"}) == "+OK\r\n");
    CHECK(server.Run({"RENAME", "b", "a"}) == "+OK\r\n");
    CHECK(server.Run({"ZADD", "b", "2", "y"}) == ":1\r\n");
  }
  Server server(dir.path(), FsyncPolicy::kEverySecond);
  CHECK(server.files->names_recovery().renames_redone == 0);
  CHECK(server.Run({"ZRANGE", "a", "0", "-1"}) == "*1\r\n$1\r\nx\r\n");
  CHECK(server.Run({"ZRANGE", "b", "0", "-1"}) == "*1\r\n$1\r\ny\r\n");
}

}  // namespace
}  // namespace feedcore::server
