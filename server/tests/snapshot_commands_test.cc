// Unit tests of feedcore-server's saving (server/): the SAVE,
// SNAPSHOT, BGSAVE and LASTSAVE replies and errors (snapshots off, a
// missing directory, a save already running), a save and load that keeps
// every read of feeds and sorted sets (names, ties, negative scores,
// deleted and re-created keys), and the checks of a save's files.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "command_dispatcher.h"
#include "feedcore/feedcore.h"
#include "member_names_file.h"
#include "save_files.h"
#include "server_data.h"
#include "snapshot_saver.h"
#include "support/file_test_util.h"

namespace feedcore::server {
namespace {

using testing::TempDir;

EngineOptions TestEngineOptions() {
  EngineOptions options;
  options.sweep_interval = 0;
  options.fanout_threads = 0;
  return options;
}

LeaderboardOptions TestBoardOptions() {
  LeaderboardOptions options;
  options.partitions = 4;
  return options;
}

// A dispatcher over `data` with a saver writing to `path`.
class Server {
 public:
  Server(std::unique_ptr<ServerData> data, const std::string& path)
      : data_(std::move(data)),
        saver_(path, [this](const std::string& p) { return data_->Save(p); }),
        dispatcher_(CommandDispatcher::Create(&data_->engine(),
                                              &data_->boards(), &saver_)
                        .value()),
        session_(dispatcher_->NewSession()) {}

  std::string Run(const std::vector<std::string>& args) {
    std::string out;
    dispatcher_->Execute(args, session_, out);
    return out;
  }

  SnapshotSaver& saver() { return saver_; }

 private:
  std::unique_ptr<ServerData> data_;
  SnapshotSaver saver_;
  std::unique_ptr<CommandDispatcher> dispatcher_;
  SessionState session_;
};

std::unique_ptr<ServerData> EmptyData() {
  return ServerData::CreateEmpty(TestEngineOptions(), TestBoardOptions())
      .value();
}

absl::StatusOr<std::unique_ptr<ServerData>> LoadData(const std::string& path) {
  return ServerData::Load(path, TestEngineOptions(), TestBoardOptions());
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

void FlipByte(const std::string& path, std::streamoff offset) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  REQUIRE(file);
  file.seekg(offset);
  char byte = 0;
  file.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x5a);
  file.seekp(offset);
  file.write(&byte, 1);
}

// Every read the round trip compares.
const std::vector<std::vector<std::string>> kReads = {
    {"ZRANGE", "lb", "0", "-1", "WITHSCORES"},
    {"ZRANGE", "lb", "0", "-1", "REV", "WITHSCORES"},
    {"ZSCORE", "lb", "player:alice"},
    {"ZSCORE", "lb", "player:gone"},
    {"ZREVRANK", "lb", "player:bob"},
    {"ZREVRANK", "lb", "player:carol"},
    {"ZCARD", "lb"},
    {"ZRANGE", "recreated", "0", "-1", "WITHSCORES"},
    {"ZCARD", "deleted"},
    {"FEED.READ", "1"},
    {"FEED.READ", "1", "LIMIT", "1"},
    {"FEED.READ", "1", "REV"},
    {"FEED.OWN", "2"},
    {"FEED.WORLD"},
    {"FEED.FOLLOWERS", "2"},
    {"FEED.COUNTS", "1"},
};

TEST_CASE("snapshot commands say when snapshots are off") {
  TempDir dir;
  auto data = EmptyData();
  auto dispatcher =
      CommandDispatcher::Create(&data->engine(), &data->boards()).value();
  SessionState session = dispatcher->NewSession();
  for (const char* command : {"SAVE", "SNAPSHOT", "BGSAVE", "LASTSAVE"}) {
    std::string out;
    dispatcher->Execute({command}, session, out);
    CHECK(out ==
          "-ERR snapshots are off: start the server with --snapshot_file\r\n");
  }
  Server off(EmptyData(), "");
  CHECK(off.Run({"SAVE"}) ==
        "-ERR snapshots are off: start the server with --snapshot_file\r\n");
  CHECK(off.Run({"SAVE", "now"}) ==
        "-ERR wrong number of arguments for 'save' command\r\n");
}

TEST_CASE("SAVE writes the snapshot and its names; LASTSAVE moves") {
  TempDir dir;
  const std::string path = dir.File("db.snap");
  Server server(EmptyData(), path);
  const std::string before = server.Run({"LASTSAVE"});
  CHECK(StartsWith(before, ":"));
  const int64_t started = std::stoll(before.substr(1));
  CHECK(server.Run({"ZADD", "lb", "1", "a"}) == ":1\r\n");
  CHECK(server.Run({"SAVE"}) == "+OK\r\n");
  CHECK(std::filesystem::exists(path));
  CHECK(std::filesystem::exists(SnapshotPathOf(path, 1)));
  CHECK(!std::filesystem::exists(path + ".tmp"));
  CHECK(server.Run({"snapshot"}) == "+OK\r\n");
  // The second save commits generation 2 and only then removes the first.
  CHECK(std::filesystem::exists(SnapshotPathOf(path, 2)));
  CHECK(!std::filesystem::exists(SnapshotPathOf(path, 1)));
  const std::string after = server.Run({"LASTSAVE"});
  CHECK(std::stoll(after.substr(1)) >= started);
}

TEST_CASE("a save into a missing directory fails with the system's message") {
  TempDir dir;
  Server server(EmptyData(), dir.File("missing/db.snap"));
  const std::string reply = server.Run({"SAVE"});
  CHECK(StartsWith(reply, "-ERR "));
  CHECK(Contains(reply, "missing/db.snap"));
  CHECK(Contains(reply, "No such file or directory"));
  CHECK(server.Run({"BGSAVE"}) == "+Background saving started\r\n");
  server.saver().WaitUntilIdle();
  CHECK(absl::IsNotFound(server.saver().last_background_status()));
}

TEST_CASE("only one save runs at a time") {
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  int saves = 0;
  SnapshotSaver saver("unused", [&](const std::string&) {
    if (++saves == 1) {
      entered.set_value();
      released.wait();
    }
    return absl::OkStatus();
  });
  auto data = EmptyData();
  auto dispatcher =
      CommandDispatcher::Create(&data->engine(), &data->boards(), &saver)
          .value();
  SessionState session = dispatcher->NewSession();
  auto run = [&](const char* command) {
    std::string out;
    dispatcher->Execute({command}, session, out);
    return out;
  };

  CHECK(run("BGSAVE") == "+Background saving started\r\n");
  entered.get_future().wait();
  CHECK(run("SAVE") == "-ERR Background save already in progress\r\n");
  CHECK(run("SNAPSHOT") == "-ERR Background save already in progress\r\n");
  CHECK(run("BGSAVE") == "-ERR Background save already in progress\r\n");
  CHECK(StartsWith(run("LASTSAVE"), ":"));
  release.set_value();
  saver.WaitUntilIdle();
  CHECK(saver.last_background_status().ok());
  CHECK(saves == 1);
  CHECK(run("SAVE") == "+OK\r\n");
  CHECK(run("BGSAVE") == "+Background saving started\r\n");
  saver.WaitUntilIdle();
  CHECK(saves == 3);
}

TEST_CASE("a foreground save refuses a second one") {
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  SnapshotSaver saver("unused", [&](const std::string&) {
    entered.set_value();
    released.wait();
    return absl::OkStatus();
  });
  auto first = std::async(std::launch::async, [&] { return saver.Save(); });
  entered.get_future().wait();
  const absl::Status second = saver.Save();
  CHECK(absl::IsFailedPrecondition(second));
  CHECK(second.message() == "a save is already in progress");
  CHECK(absl::IsFailedPrecondition(saver.StartBackgroundSave()));
  release.set_value();
  CHECK(first.get().ok());
}

TEST_CASE("a loaded snapshot answers every read as the saved server did") {
  TempDir dir;
  const std::string path = dir.File("db.snap");
  Server source(EmptyData(), path);
  // Ties: bob reaches 10 before alice, so he ranks above her.
  CHECK(source.Run({"ZADD", "lb", "10", "player:bob", "-7", "player:carol"}) ==
        ":2\r\n");
  CHECK(source.Run({"ZADD", "lb", "10", "player:alice", "3", "player:gone"}) ==
        ":2\r\n");
  CHECK(source.Run({"ZREM", "lb", "player:gone"}) == ":1\r\n");
  CHECK(source.Run({"ZINCRBY", "lb", "-20", "player:dave"}) == "$3\r\n-20\r\n");
  // A deleted key is gone; a re-created one has only its new members.
  CHECK(source.Run({"ZADD", "deleted", "1", "x"}) == ":1\r\n");
  CHECK(source.Run({"ZADD", "recreated", "1", "old"}) == ":1\r\n");
  CHECK(source.Run({"DEL", "deleted", "recreated"}) == ":2\r\n");
  CHECK(source.Run({"ZADD", "recreated", "5", "new", "5", "newer"}) ==
        ":2\r\n");
  // Expiries are saved with the keys.
  CHECK(source.Run({"EXPIREAT", "recreated", "4000000000"}) == ":1\r\n");
  CHECK(source.Run({"FEED.FOLLOW", "1", "2"}) == ":1\r\n");
  CHECK(source.Run({"FEED.FOLLOW", "1", "3"}) == ":1\r\n");
  for (int i = 0; i < 5; ++i) {
    CHECK(source.Run({"FEED.PUBLISH", std::to_string(2 + i % 2),
                      std::to_string(100 + i), std::to_string(1000 + i),
                      "payload " + std::to_string(i)}) == ":1\r\n");
  }
  CHECK(source.Run({"SAVE"}) == "+OK\r\n");
  std::vector<std::string> expected;
  for (const auto& read : kReads) expected.push_back(source.Run(read));

  Server loaded(LoadData(path).value(), path);
  for (size_t i = 0; i < kReads.size(); ++i) {
    CAPTURE(kReads[i][0]);
    CAPTURE(i);
    CHECK(loaded.Run(kReads[i]) == expected[i]);
  }
  // Names keep their ids: a removed member comes back, new ones follow.
  CHECK(loaded.Run({"EXPIRETIME", "recreated"}) == ":4000000000\r\n");
  CHECK(loaded.Run({"TTL", "lb"}) == ":-1\r\n");
  CHECK(loaded.Run({"ZADD", "lb", "1", "player:gone", "2", "player:erin"}) ==
        ":2\r\n");
  CHECK(loaded.Run({"ZSCORE", "lb", "player:erin"}) == "$1\r\n2\r\n");
  CHECK(loaded.Run({"ZREVRANK", "lb", "player:alice"}) == ":1\r\n");
  // The loaded server saves again, and that save loads too.
  CHECK(loaded.Run({"SAVE"}) == "+OK\r\n");
  Server again(LoadData(path).value(), path);
  CHECK(again.Run({"ZCARD", "lb"}) == ":6\r\n");
  // Lowest first: of the two tied at 5, "new" got there first and ranks
  // above, so it comes last.
  CHECK(again.Run({"ZRANGE", "recreated", "0", "-1"}) ==
        "*2\r\n$5\r\nnewer\r\n$3\r\nnew\r\n");
}

TEST_CASE("a load fails, naming the file, when a save's files disagree") {
  TempDir dir;
  const std::string path = dir.File("db.snap");
  const std::string snapshot = SnapshotPathOf(path, 1);
  {
    Server server(EmptyData(), path);
    CHECK(server.Run({"ZADD", "lb", "1", "a", "2", "b"}) == ":2\r\n");
    CHECK(server.Run({"SAVE"}) == "+OK\r\n");
  }
  REQUIRE(std::filesystem::exists(snapshot));
  REQUIRE(LoadData(path).ok());

  SUBCASE("damaged snapshot") {
    FlipByte(snapshot, static_cast<std::streamoff>(
                           std::filesystem::file_size(snapshot) / 2));
    const absl::Status status = LoadData(path).status();
    CHECK(absl::IsDataLoss(status));
    CHECK(Contains(std::string(status.message()),
                   "cannot load snapshot " + path));
    CHECK(Contains(std::string(status.message()), "damaged or replaced"));
  }
  SUBCASE("damaged manifest") {
    FlipByte(path, 30);
    const absl::Status status = LoadData(path).status();
    CHECK(absl::IsDataLoss(status));
    CHECK(Contains(std::string(status.message()), path));
    CHECK(Contains(std::string(status.message()), "checksum mismatch"));
  }
  SUBCASE("missing snapshot file") {
    std::filesystem::remove(snapshot);
    const absl::Status status = LoadData(path).status();
    CHECK(absl::IsDataLoss(status));
    CHECK(Contains(std::string(status.message()), snapshot +
                                                      " that the save "
                                                      "names is missing"));
  }
  SUBCASE("a bare library snapshot where the manifest should be") {
    std::filesystem::copy_file(
        snapshot, path, std::filesystem::copy_options::overwrite_existing);
    const absl::Status status = LoadData(path).status();
    CHECK(absl::IsInvalidArgument(status));
    CHECK(Contains(std::string(status.message()), "bare library snapshot"));
  }
  SUBCASE("the snapshot of another save under this one's name") {
    const std::string old_snapshot = dir.File("old.fcsnap");
    std::filesystem::copy_file(snapshot, old_snapshot);
    {
      Server server(LoadData(path).value(), path);
      CHECK(server.Run({"ZADD", "lb", "3", "c"}) == ":1\r\n");
      CHECK(server.Run({"SAVE"}) == "+OK\r\n");
    }
    // The second save committed generation 2 and removed generation 1.
    CHECK(!std::filesystem::exists(snapshot));
    std::filesystem::copy_file(
        old_snapshot, SnapshotPathOf(path, 2),
        std::filesystem::copy_options::overwrite_existing);
    const absl::Status status = LoadData(path).status();
    CHECK(absl::IsDataLoss(status));
    CHECK(Contains(std::string(status.message()), "damaged or replaced"));
  }
}

TEST_CASE("the names file format checks everything it reads") {
  MemberNamesFile file;
  file.generation = 7;
  file.snapshot = {123, 456};
  // Ids as a dictionary that reused a slot gives them: generation 1 of
  // slot 0 is (1 << 32) | 1.
  const MemberId reused = (MemberId{1} << 32) | 1;
  file.keys = {{"lb", {"a", "b"}, {reused, 2}}, {"other", {}, {}}};
  const std::string bytes = EncodeMemberNamesFile(file);
  absl::StatusOr<MemberNamesFile> decoded = DecodeMemberNamesFile(bytes);
  REQUIRE(decoded.ok());
  CHECK(decoded->generation == 7);
  CHECK(decoded->snapshot == file.snapshot);
  REQUIRE(decoded->keys.size() == 2);
  CHECK(decoded->keys[0].key == "lb");
  CHECK(decoded->keys[0].names == std::vector<std::string>{"a", "b"});
  CHECK(decoded->keys[0].ids == std::vector<MemberId>{reused, 2});
  CHECK(decoded->keys[1].names.empty());

  CHECK(absl::IsInvalidArgument(DecodeMemberNamesFile("").status()));
  CHECK(absl::IsInvalidArgument(DecodeMemberNamesFile("not names").status()));
  for (size_t cut = 8; cut < bytes.size(); ++cut) {
    CAPTURE(cut);
    CHECK(!DecodeMemberNamesFile(bytes.substr(0, cut)).ok());
  }
  std::string other_version = bytes;
  other_version[8] = 9;
  CHECK(Contains(
      std::string(DecodeMemberNamesFile(other_version).status().message()),
      "format version 9"));

  MemberNamesFile twice;
  twice.keys = {{"lb", {"a", "b"}, {7, 7}}};
  CHECK(Contains(std::string(DecodeMemberNamesFile(EncodeMemberNamesFile(twice))
                                 .status()
                                 .message()),
                 "gives a member id twice"));
  twice.keys = {{"lb", {"a"}, {0}}};
  CHECK(absl::IsDataLoss(
      DecodeMemberNamesFile(EncodeMemberNamesFile(twice)).status()));
  twice.keys = {{"lb", {"a", "a"}, {}}};
  CHECK(Contains(std::string(DecodeMemberNamesFile(EncodeMemberNamesFile(twice))
                                 .status()
                                 .message()),
                 "lists member 'a' twice"));
  twice.keys = {{"lb", {}, {}}, {"lb", {}, {}}};
  CHECK(absl::IsDataLoss(
      DecodeMemberNamesFile(EncodeMemberNamesFile(twice)).status()));
  twice.keys = {{"", {}, {}}};
  CHECK(absl::IsDataLoss(
      DecodeMemberNamesFile(EncodeMemberNamesFile(twice)).status()));
}

TEST_CASE("a store restores only boards and names that match") {
  LeaderboardRegistry registry;
  auto board = registry.GetOrCreate("lb", TestBoardOptions()).value();
  REQUIRE(board->Set(2, 10).ok());
  const LeaderboardOptions options = TestBoardOptions();
  CHECK(absl::IsDataLoss(
      LeaderboardStore::Restore(options, &registry, {}).status()));
  CHECK(absl::IsDataLoss(
      LeaderboardStore::Restore(options, &registry, {{"lb", {"only-one"}, {}}})
          .status()));
  CHECK(absl::IsDataLoss(
      LeaderboardStore::Restore(options, &registry,
                                {{"lb", {"a", "b"}, {}}, {"extra", {}, {}}})
          .status()));
  CHECK(absl::IsInvalidArgument(
      LeaderboardStore::Restore(options, nullptr, {}).status()));
  auto store =
      LeaderboardStore::Restore(options, &registry, {{"lb", {"a", "b"}, {}}});
  REQUIRE(store.ok());
  const MemberDictionary& members = (*store)->Find("lb")->members;
  CHECK(members.Find("b") == MemberId{2});
  // "a" (id 1) is not on the board: a name copied by a save after its
  // board, which loading does not keep.
  CHECK(members.Find("a") == std::nullopt);
  CHECK(members.size() == 1);
}

}  // namespace
}  // namespace feedcore::server
