// Proof by killing for names: name_crash_writer.cc resolves names in a
// DurableStore with fsync always from several threads and prints each id
// once Resolve returns; this test SIGKILLs it after a seeded number of
// acknowledgements, opens the directory itself and checks that every name
// acknowledged in any round so far has the id it was given, that no id
// names two acknowledged names, then restarts the writer where each thread
// stopped. The kill points count acknowledgements, not time.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "feedcore/durable_store.h"
#include "support/file_test_util.h"

#ifndef FEEDCORE_NAME_CRASH_WRITER
#error "FEEDCORE_NAME_CRASH_WRITER must name the name_crash_writer executable"
#endif

namespace feedcore {
namespace {

constexpr size_t kThreads = 3;
constexpr size_t kKills = 8;

// Runs the writer from `start` until it has printed `kill_after`
// acknowledgements, SIGKILLs it and returns every line it printed.
std::vector<std::string> RunAndKill(const std::string& directory,
                                    const std::vector<uint64_t>& start,
                                    size_t kill_after) {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  std::vector<std::string> args = {
      FEEDCORE_NAME_CRASH_WRITER, absl::StrCat("--dir=", directory),
      absl::StrCat("--threads=", kThreads),
      absl::StrCat("--start=", absl::StrJoin(start, ","))};
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(fds[1], STDOUT_FILENO);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::vector<std::string> lines;
  std::string buffer;
  char chunk[4096];
  bool killed = false;
  for (;;) {
    const ssize_t n = ::read(fds[0], chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    REQUIRE(n >= 0);
    if (n == 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
    size_t begin = 0;
    for (size_t end; (end = buffer.find('\n', begin)) != std::string::npos;
         begin = end + 1) {
      lines.push_back(buffer.substr(begin, end - begin));
    }
    buffer.erase(0, begin);
    if (!killed && lines.size() >= kill_after) {
      REQUIRE(::kill(pid, SIGKILL) == 0);
      killed = true;
    }
  }
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO("the writer ended by itself after ", lines.size(), " lines");
  REQUIRE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  return lines;
}

TEST_CASE("no acknowledged name assignment is lost to a kill") {
  testing::TempDir dir("name-crash");
  std::mt19937_64 random(20261202);
  std::uniform_int_distribution<size_t> acks(20, 400);
  std::vector<uint64_t> start(kThreads, 0);
  std::map<std::string, EntityId> acknowledged;
  std::map<EntityId, std::string> named;
  for (size_t round = 0; round < kKills; ++round) {
    for (const std::string& line :
         RunAndKill(dir.path(), start, acks(random))) {
      INFO(line);
      const std::vector<std::string> words = absl::StrSplit(line, ' ');
      REQUIRE(words.size() == 5);
      REQUIRE(words[0] == "A");
      size_t t = 0;
      uint64_t i = 0;
      EntityId id = 0;
      REQUIRE((absl::SimpleAtoi(words[1], &t) && t < kThreads));
      REQUIRE(absl::SimpleAtoi(words[2], &i));
      REQUIRE(absl::SimpleAtoi(words[4], &id));
      start[t] = i + 1;
      // The same answer in every round, and never one id for two names.
      auto [by_name, new_name] = acknowledged.emplace(words[3], id);
      CHECK(by_name->second == id);
      auto [by_id, new_id] = named.emplace(id, words[3]);
      CHECK(by_id->second == words[3]);
    }
    absl::StatusOr<std::unique_ptr<DurableStore>> store = DurableStore::Open(
        [&] {
          DurabilityOptions durability;
          durability.directory = dir.path();
          durability.segment_bytes = kMinLogSegmentBytes;
          durability.compact_after_bytes = 0;
          return durability;
        }(),
        [] {
          EngineOptions options;
          options.shards = 2;
          options.sweep_interval = 0;
          return options;
        }());
    REQUIRE_MESSAGE(store.ok(), store.status());
    size_t missing = 0;
    for (const auto& [name, id] : acknowledged) {
      absl::StatusOr<EntityId> found = (*store)->names().Find(name);
      if (!found.ok() || *found != id) ++missing;
    }
    INFO("round ", round, ": ", acknowledged.size(), " names acknowledged");
    CHECK(missing == 0);
    CHECK((*store)->names().size() >= acknowledged.size());
  }
}

}  // namespace
}  // namespace feedcore
