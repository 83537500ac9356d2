// The writer of name_crash_test.cc: opens a DurableStore (fsync always) on
// a directory and resolves names from several threads until it is killed.
//
//   name_crash_writer --dir=D --threads=N --start=I0,I1,...
//
// Thread t resolves, for i = I_t, I_t + 1, ..., the name "t<t>-<i>" and,
// every third operation, the name "shared-<i / 3>" that the other threads
// resolve too (so that callers meet on names still being logged). Thread 0
// compacts the store every 64 operations, so that names are recovered from
// snapshots as well as from the log. One line per event on stdout, each
// written whole with one write(2):
//   A <t> <i> <name> <id>   Resolve(name) returned id
// Errors go to stderr with exit status 1.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "feedcore/durable_store.h"

namespace feedcore::crash {
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "name_crash_writer: %s\n", message.c_str());
  std::exit(1);
}

std::mutex out_mu;

void WriteLine(const std::string& line) {
  std::lock_guard<std::mutex> lock(out_mu);
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n =
        ::write(STDOUT_FILENO, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Die("cannot write stdout");
    done += static_cast<size_t>(n);
  }
}

int Main(int argc, char** argv) {
  DurabilityOptions durability;
  durability.fsync = FsyncPolicy::kAlways;
  durability.segment_bytes = kMinLogSegmentBytes;
  durability.compact_after_bytes = 0;
  size_t threads = 0;
  std::vector<uint64_t> start;
  for (int a = 1; a < argc; ++a) {
    const std::vector<std::string> flag =
        absl::StrSplit(argv[a], absl::MaxSplits('=', 1));
    if (flag.size() != 2) Die(absl::StrCat("unexpected argument ", argv[a]));
    if (flag[0] == "--dir") {
      durability.directory = flag[1];
    } else if (flag[0] == "--threads") {
      if (!absl::SimpleAtoi(flag[1], &threads)) Die("bad --threads");
    } else if (flag[0] == "--start") {
      for (const absl::string_view part : absl::StrSplit(flag[1], ',')) {
        uint64_t i = 0;
        if (!absl::SimpleAtoi(part, &i)) Die("bad --start");
        start.push_back(i);
      }
    } else {
      Die(absl::StrCat("unknown flag ", flag[0]));
    }
  }
  if (threads == 0 || start.size() != threads) Die("bad --threads or --start");
  EngineOptions engine_options;
  engine_options.shards = 2;
  engine_options.sweep_interval = 0;
  absl::StatusOr<std::unique_ptr<DurableStore>> opened =
      DurableStore::Open(durability, engine_options);
  if (!opened.ok()) Die(absl::StrCat("Open: ", opened.status().ToString()));
  DurableStore& store = **opened;
  std::vector<std::thread> running;
  for (size_t t = 0; t < threads; ++t) {
    running.emplace_back([&store, &start, t] {
      for (uint64_t i = start[t];; ++i) {
        const std::string name = i % 3 == 0 ? absl::StrCat("shared-", i / 3)
                                            : absl::StrCat("t", t, "-", i);
        absl::StatusOr<EntityId> id = store.names().Resolve(name);
        if (!id.ok()) Die(absl::StrCat("Resolve: ", id.status().ToString()));
        WriteLine(absl::StrCat("A ", t, " ", i, " ", name, " ", *id, "\n"));
        if (t == 0 && i % 64 == 63) {
          if (absl::Status s = store.Compact(); !s.ok()) {
            Die(absl::StrCat("Compact: ", s.ToString()));
          }
        }
      }
    });
  }
  for (std::thread& thread : running) thread.join();
  return 0;
}

}  // namespace
}  // namespace feedcore::crash

int main(int argc, char** argv) { return feedcore::crash::Main(argc, argv); }
