// A feedcore-server save (SAVE, BGSAVE, --snapshot_on_exit) is one durable
// unit: a process killed at any moment of a save leaves the previous save
// or the new one loadable, with every member's own name.
//
// A child process saves again and again, each save after one more
// deterministic step of writes (save_files.h); the parent SIGKILLs it at a
// spread of points, then loads what is on disk and compares it with a
// model of the steps. Two spreads of kill points:
//   * after k reported saves plus a delay: covers every phase of a save,
//     renames and deletions included; which phase a kill hits is up to
//     the scheduler, but the check is the same for all of them.
//   * after N bytes of any one file (RLIMIT_FSIZE with SIGXFSZ's default
//     action, which kills): deterministic cuts through the snapshot and
//     the manifest.
// The assertion is on the loaded state only: it must be the state of the
// last save the child reported, or of the one it was running.
//
// Then damage: truncations and flipped bytes of the manifest (every byte
// of its first 256, a spread after), a spread of both in the snapshot
// file, a missing snapshot file: all fail
// with DataLoss or InvalidArgument naming the file (never a load with wrong
// names); the leftovers of a save that never committed are ignored, and
// removed by the next save.
#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "command_dispatcher.h"
#include "feedcore/feedcore.h"
#include "save_files.h"
#include "server_data.h"
#include "support/file_test_util.h"

namespace feedcore::server {
namespace {

using testing::TempDir;

EngineOptions TestEngineOptions() {
  EngineOptions options;
  options.shards = 4;
  options.sweep_interval = 0;
  options.fanout_threads = 0;
  return options;
}

LeaderboardOptions TestBoardOptions() {
  LeaderboardOptions options;
  options.partitions = 4;
  return options;
}

// Long names make the manifest larger than the snapshot, so byte-count
// kills land in both files.
std::string MemberName(const std::string& stem) {
  return absl::StrCat(stem, std::string(1000, '.'), stem);
}

// The writes of step `i` (1-based), as commands. Step i leaves
// "saves"/"latest" at score i and activity i as actor 1's newest, and
// every fourth step deletes key "k1" and refills it, so that the same ids
// name other members than before: names from another save would show.
std::vector<std::vector<std::string>> StepCommands(uint64_t i) {
  const std::string n = std::to_string(i);
  std::vector<std::vector<std::string>> commands = {
      {"ZADD", "saves", n, "latest"},
      {"ZADD", absl::StrCat("k", i % 3), absl::StrCat(i * 10),
       MemberName(absl::StrCat("m", n))},
      {"FEED.PUBLISH", "1", n, n, absl::StrCat("payload ", n)},
  };
  if (i % 4 == 0) {
    commands.push_back({"DEL", "k1"});
    commands.push_back({"ZADD", "k1", "1",
                        MemberName(absl::StrCat("r", n, "a")), "2",
                        MemberName(absl::StrCat("r", n, "b"))});
  }
  return commands;
}

// What the sorted sets hold after steps 1..i.
using Model = std::map<std::string, std::map<std::string, int64_t>>;

Model ModelAfter(uint64_t steps) {
  Model model;
  for (uint64_t i = 1; i <= steps; ++i) {
    for (const std::vector<std::string>& command : StepCommands(i)) {
      if (command[0] == "DEL") {
        model.erase(command[1]);
      } else if (command[0] == "ZADD") {
        for (size_t p = 2; p + 1 < command.size(); p += 2) {
          model[command[1]][command[p + 1]] = std::stoll(command[p]);
        }
      }
    }
  }
  return model;
}

class Client {
 public:
  explicit Client(ServerData& data)
      : dispatcher_(
            CommandDispatcher::Create(&data.engine(), &data.boards()).value()),
        session_(dispatcher_->NewSession()) {}

  std::string Run(const std::vector<std::string>& args) {
    std::string out;
    dispatcher_->Execute(args, session_, out);
    return out;
  }

 private:
  std::unique_ptr<CommandDispatcher> dispatcher_;
  SessionState session_;
};

std::string Bulk(const std::string& s) {
  return absl::StrCat("$", s.size(), "\r\n", s, "\r\n");
}

// The step whose save `data` holds, after checking that everything it
// holds is exactly the model of that many steps: every key, every member
// with its own name and score, and the newest activity.
uint64_t CheckLoadedState(ServerData& data) {
  Client client(data);
  const std::string latest = client.Run({"ZSCORE", "saves", "latest"});
  REQUIRE(latest.rfind("$", 0) == 0);
  const uint64_t step = std::stoull(latest.substr(latest.find('\n') + 1));
  CAPTURE(step);
  const Model model = ModelAfter(step);
  CHECK(data.boards().size() == model.size());
  for (const auto& [model_key, members] : model) {
    const std::string& key = model_key;  // CAPTURE cannot name a binding.
    CAPTURE(key);
    CHECK(client.Run({"ZCARD", key}) ==
          absl::StrCat(":", members.size(), "\r\n"));
    // Lowest first; the model's scores are distinct within a key.
    std::multimap<int64_t, std::string> by_score;
    for (const auto& [name, score] : members) by_score.emplace(score, name);
    std::string expected = absl::StrCat("*", 2 * members.size(), "\r\n");
    for (const auto& [score, name] : by_score) {
      absl::StrAppend(&expected, Bulk(name), Bulk(std::to_string(score)));
    }
    CHECK(client.Run({"ZRANGE", key, "0", "-1", "WITHSCORES"}) == expected);
  }
  const std::string own = client.Run({"FEED.OWN", "1", "LIMIT", "1"});
  CHECK(own.find(Bulk(std::to_string(step))) != std::string::npos);
  CHECK(own.find(Bulk("payload " + std::to_string(step))) != std::string::npos);
  return step;
}

size_t SnapshotFilesIn(const std::string& dir) {
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 7 && name.substr(name.size() - 7) == ".fcsnap") ++count;
  }
  return count;
}

absl::StatusOr<std::unique_ptr<ServerData>> LoadData(const std::string& path) {
  return ServerData::Load(path, TestEngineOptions(), TestBoardOptions());
}

// The child: loads what is at `path` (or starts empty), then forever: one
// more step, a save, and the step's number on `report` once it is saved.
// Stops after `max_saves` saves. Never returns.
[[noreturn]] void SaveForever(const std::string& path, int report,
                              uint64_t max_saves) {
  std::unique_ptr<ServerData> data;
  uint64_t step = 0;
  if (std::filesystem::exists(path)) {
    absl::StatusOr<std::unique_ptr<ServerData>> loaded = LoadData(path);
    if (!loaded.ok()) _exit(3);
    data = *std::move(loaded);
    Client client(*data);
    const std::string latest = client.Run({"ZSCORE", "saves", "latest"});
    step = std::stoull(latest.substr(latest.find('\n') + 1));
  } else {
    data = ServerData::CreateEmpty(TestEngineOptions(), TestBoardOptions())
               .value();
  }
  Client client(*data);
  // 0 says "ready": the saving starts now.
  const uint64_t ready = 0;
  if (write(report, &ready, sizeof(ready)) != sizeof(ready)) _exit(4);
  for (uint64_t saves = 0; saves < max_saves; ++saves) {
    ++step;
    for (const std::vector<std::string>& command : StepCommands(step)) {
      const std::string reply = client.Run(command);
      if (reply.empty() || reply[0] == '-') _exit(5);
    }
    if (!data->Save(path).ok()) _exit(6);
    if (write(report, &step, sizeof(step)) != sizeof(step)) _exit(7);
  }
  _exit(0);
}

struct Outcome {
  uint64_t last_reported = 0;  // the last save the child said was done
  int signal = 0;              // what ended it, 0 for a normal exit
};

// Forks the saving child; `kill_child` decides when it dies (it gets the
// child's pid and the read end of its reports, after "ready").
template <typename KillFn>
Outcome RunChild(const std::string& path, uint64_t max_saves,
                 rlim_t file_size_limit, KillFn kill_child) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    if (file_size_limit != RLIM_INFINITY) {
      signal(SIGXFSZ, SIG_DFL);
      struct rlimit limit = {file_size_limit, file_size_limit};
      setrlimit(RLIMIT_FSIZE, &limit);
    }
    SaveForever(path, fds[1], max_saves);
  }
  close(fds[1]);
  uint64_t value = 0;
  REQUIRE(read(fds[0], &value, sizeof(value)) == sizeof(value));
  REQUIRE(value == 0);
  Outcome outcome;
  kill_child(pid, fds[0], outcome);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  // Reports written before the kill are still in the pipe.
  while (read(fds[0], &value, sizeof(value)) == sizeof(value)) {
    outcome.last_reported = value;
  }
  close(fds[0]);
  if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  } else {
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }
  return outcome;
}

// After a kill: the save on disk is the last one reported or the one that
// was running, and holds exactly its state. Returns its step.
uint64_t CheckAfterKill(const std::string& dir, const std::string& path,
                        uint64_t before, const Outcome& outcome) {
  const uint64_t reported = std::max(before, outcome.last_reported);
  if (!std::filesystem::exists(path)) {
    // Nothing committed yet: only possible before the first save.
    CHECK(reported == 0);
    return 0;
  }
  absl::StatusOr<std::unique_ptr<ServerData>> data = LoadData(path);
  REQUIRE_MESSAGE(data.ok(), data.status().ToString());
  const uint64_t step = CheckLoadedState(**data);
  CHECK(step >= reported);
  CHECK(step <= reported + 1);
  // The new generation and, until the next save removes it, the old one.
  CHECK(SnapshotFilesIn(dir) <= 2);
  return step;
}

TEST_CASE("a save killed at any moment leaves the previous or the new one") {
  TempDir dir;
  const std::string path = dir.File("db.snap");
  uint64_t step = 0;
  int in_flight_committed = 0;
  constexpr int kKills = 40;
  for (int t = 0; t < kKills; ++t) {
    CAPTURE(t);
    // 0..2 completed saves, then 0..2 ms: spread over a few save cycles.
    const uint64_t saves_first = static_cast<uint64_t>(t % 3);
    const auto delay = std::chrono::microseconds((t * 997) % 2000);
    const Outcome outcome = RunChild(
        path, /*max_saves=*/1000, RLIM_INFINITY,
        [&](pid_t pid, int reports, Outcome& seen) {
          for (uint64_t k = 0; k < saves_first; ++k) {
            uint64_t value = 0;
            REQUIRE(read(reports, &value, sizeof(value)) == sizeof(value));
            seen.last_reported = value;
          }
          // Picks the kill point only; nothing checks the time.
          std::this_thread::sleep_for(delay);
          REQUIRE(kill(pid, SIGKILL) == 0);
        });
    CHECK(outcome.signal == SIGKILL);
    const uint64_t loaded = CheckAfterKill(dir.path(), path, step, outcome);
    if (loaded > std::max(step, outcome.last_reported)) ++in_flight_committed;
    step = loaded;
  }
  MESSAGE(kKills, " kills; ", in_flight_committed,
          " found the save that was running committed; final step ", step);
  CHECK(step > 0);
}

TEST_CASE("a save cut after N bytes of a file leaves the previous one") {
  TempDir dir;
  const std::string path = dir.File("db.snap");
  // A few saves first, so that there is a previous save to keep.
  Outcome outcome =
      RunChild(path, 6, RLIM_INFINITY, [](pid_t, int, Outcome&) {});
  REQUIRE(outcome.signal == 0);
  uint64_t step = CheckAfterKill(dir.path(), path, 0, outcome);
  REQUIRE(step == 6);
  const uint64_t manifest_bytes = std::filesystem::file_size(path);
  const uint64_t snapshot_bytes =
      std::filesystem::file_size(SnapshotPathOf(path, 6));
  const uint64_t largest = std::max(manifest_bytes, snapshot_bytes);
  int cut = 0;
  int completed = 0;
  // About 50 cuts spread over both files (the long names make the
  // manifest the larger one), then limits the next saves fit in.
  const uint64_t stride = largest / 48 + 1;
  for (uint64_t limit = 0; limit <= 2 * largest; limit += stride) {
    CAPTURE(limit);
    outcome = RunChild(path, 1, static_cast<rlim_t>(limit),
                       [](pid_t, int, Outcome&) {});
    if (outcome.signal != 0) {
      CHECK(outcome.signal == SIGXFSZ);
      ++cut;
    } else {
      ++completed;
    }
    step = CheckAfterKill(dir.path(), path, step, outcome);
  }
  MESSAGE(cut, " saves cut by the file size limit, ", completed,
          " completed; final step ", step, "; manifest ", manifest_bytes,
          " bytes, snapshot ", snapshot_bytes, " bytes");
  CHECK(cut > 0);
  CHECK(completed > 0);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A damaged save fails to load with DataLoss or InvalidArgument that names
// a file of the save; it never loads.
void CheckRefused(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ServerData>> data = LoadData(path);
  REQUIRE(!data.ok());
  CHECK((absl::IsDataLoss(data.status()) ||
         absl::IsInvalidArgument(data.status())));
  CHECK(std::string(data.status().message()).find(path) != std::string::npos);
}

TEST_CASE("a damaged save is refused, never loaded with wrong names") {
  TempDir dir;
  const std::string path = dir.File("db.snap");
  REQUIRE(RunChild(path, 9, RLIM_INFINITY, [](pid_t, int, Outcome&) {
          }).signal == 0);
  const std::string snapshot = SnapshotPathOf(path, 9);
  const std::string manifest_bytes = ReadFile(path);
  const std::string snapshot_bytes = ReadFile(snapshot);
  REQUIRE(!manifest_bytes.empty());
  REQUIRE(!snapshot_bytes.empty());

  SUBCASE("truncations and flipped bytes of the manifest") {
    // Every byte of the header and the first names, a spread after them.
    std::vector<size_t> points;
    for (size_t at = 0; at < manifest_bytes.size();
         at += at < 256 ? 1 : manifest_bytes.size() / 128) {
      points.push_back(at);
    }
    points.push_back(manifest_bytes.size() - 1);
    for (size_t cut : points) {
      CAPTURE(cut);
      WriteFile(path, manifest_bytes.substr(0, cut));
      CheckRefused(path);
    }
    for (size_t at : points) {
      CAPTURE(at);
      std::string flipped = manifest_bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ 0x01);
      WriteFile(path, flipped);
      CheckRefused(path);
    }
  }
  SUBCASE("truncations and flipped bytes of the snapshot file") {
    const size_t stride = std::max<size_t>(1, snapshot_bytes.size() / 64);
    for (size_t at = 0; at < snapshot_bytes.size(); at += stride) {
      CAPTURE(at);
      WriteFile(snapshot, snapshot_bytes.substr(0, at));
      CheckRefused(path);
      std::string flipped = snapshot_bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ 0x40);
      WriteFile(snapshot, flipped);
      CheckRefused(path);
    }
    WriteFile(snapshot, snapshot_bytes + "x");
    CheckRefused(path);
  }
  SUBCASE("a missing snapshot file") {
    std::filesystem::remove(snapshot);
    CheckRefused(path);
  }
  SUBCASE("an uncommitted save is ignored, then removed") {
    // What a crash before the manifest's rename leaves: a newer snapshot
    // and a temporary manifest, both garbage here.
    WriteFile(SnapshotPathOf(path, 12), "not a snapshot");
    WriteFile(SnapshotPathOf(path, 13) + ".tmp", "half a snapshot");
    WriteFile(path + ".tmp", "half a manifest");
    absl::StatusOr<std::unique_ptr<ServerData>> data = LoadData(path);
    REQUIRE(data.ok());
    CHECK(CheckLoadedState(**data) == 9);
    REQUIRE((*data)->Save(path).ok());
    // The save removed the leftovers first, so generation 10 comes next.
    CHECK(std::filesystem::exists(SnapshotPathOf(path, 10)));
    CHECK(SnapshotFilesIn(dir.path()) == 1);
    CHECK(!std::filesystem::exists(SnapshotPathOf(path, 13) + ".tmp"));
    data->reset();
    data = LoadData(path);
    REQUIRE(data.ok());
    CHECK(CheckLoadedState(**data) == 9);
  }
}

}  // namespace
}  // namespace feedcore::server
