// The writer of the crash test (crash_test.cc): opens a DurableStore on a
// directory and runs the load of crash_load.h from several threads until it
// is killed, or until each thread has made --ops operations.
//
//   crash_writer --dir=D --fsync=always|everysec|no --threads=3
//                --start=I0,I1,I2 --seed=S [--segment_bytes=B]
//                [--compact_after_bytes=B] [--payload_max=N] [--ops=N]
//
// Thread t runs the operations I_t, I_t + 1, ... of crash_load.h. On
// stdout, one line per event, each written whole with one write(2) before
// the thread goes on, so the test sees every acknowledgement the process
// made before it died:
//   O <records> <bytes> <torn> <micros>  opened; what recovery read
//   B <t> <i>                            thread t calls operation i
//   A <t> <i> <result>                   the call returned; its result
//   E                                    every thread done, store closed
// Errors go to stderr with exit status 1.
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "durability/crash_load.h"
#include "feedcore/durable_store.h"

namespace feedcore::crash {
namespace {

struct Flags {
  DurabilityOptions durability;
  size_t threads = 3;
  std::vector<uint64_t> start;
  uint64_t seed = 1;
  size_t payload_max = 256;
  uint64_t ops = 0;  // per thread; 0: until killed
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "crash_writer: %s\n", message.c_str());
  std::exit(1);
}

uint64_t Number(const std::string& flag, const std::string& text) {
  uint64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) Die(absl::StrCat("bad ", flag));
  return value;
}

Flags Parse(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || eq == std::string::npos) {
      Die(absl::StrCat("unexpected argument ", arg));
    }
    const std::string name = arg.substr(2, eq - 2);
    const std::string value = arg.substr(eq + 1);
    if (name == "dir") {
      flags.durability.directory = value;
    } else if (name == "fsync") {
      absl::StatusOr<FsyncPolicy> policy = ParsePolicy(value);
      if (!policy.ok()) Die(std::string(policy.status().message()));
      flags.durability.fsync = *policy;
    } else if (name == "segment_bytes") {
      flags.durability.segment_bytes = Number(name, value);
    } else if (name == "compact_after_bytes") {
      flags.durability.compact_after_bytes = Number(name, value);
    } else if (name == "threads") {
      flags.threads = Number(name, value);
    } else if (name == "start") {
      for (const absl::string_view part : absl::StrSplit(value, ',')) {
        flags.start.push_back(Number(name, std::string(part)));
      }
    } else if (name == "seed") {
      flags.seed = Number(name, value);
    } else if (name == "payload_max") {
      flags.payload_max = Number(name, value);
    } else if (name == "ops") {
      flags.ops = Number(name, value);
    } else {
      Die(absl::StrCat("unknown flag --", name));
    }
  }
  if (flags.threads == 0 || flags.threads > kMaxThreads) Die("bad --threads");
  if (flags.payload_max < 8) Die("--payload_max below 8");
  flags.start.resize(flags.threads, 0);
  return flags;
}

// One line on stdout, whole: the lock keeps lines of different threads
// apart, and the loop finishes a write the kernel took in part.
class LineWriter {
 public:
  void Write(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    size_t done = 0;
    while (done < line.size()) {
      const ssize_t n =
          ::write(STDOUT_FILENO, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Die(absl::StrCat("stdout: ", std::strerror(errno)));
      done += static_cast<size_t>(n);
    }
  }

 private:
  std::mutex mu_;
};

int Main(int argc, char** argv) {
  const Flags flags = Parse(argc, argv);
  LineWriter out;
  {
    absl::StatusOr<std::unique_ptr<DurableStore>> opened =
        DurableStore::Open(flags.durability, CrashEngineOptions());
    if (!opened.ok()) Die(absl::StrCat("Open: ", opened.status().ToString()));
    DurableStore& store = **opened;
    const DurabilityStats stats = store.Stats();
    out.Write(absl::StrCat(
        "O ", stats.recovered_records, " ", stats.recovered_bytes, " ",
        stats.recovered_torn_tail ? 1 : 0, " ", stats.recovery_micros, "\n"));
    // Created before any thread runs (or found, after a restart), so that
    // no operation's result depends on which thread created a board.
    for (size_t t = 0; t < flags.threads; ++t) {
      absl::Status s = store.boards()
                           .GetOrCreate(ThreadBoard(t), ThreadBoardOptions())
                           .status();
      if (!s.ok()) Die(absl::StrCat("GetOrCreate: ", s.ToString()));
    }
    absl::Status s =
        store.boards().GetOrCreate(kSharedBoard, SharedBoardOptions()).status();
    if (!s.ok()) Die(absl::StrCat("GetOrCreate: ", s.ToString()));

    std::vector<std::thread> threads;
    for (size_t t = 0; t < flags.threads; ++t) {
      threads.emplace_back([&, t] {
        const uint64_t end =
            flags.ops == 0 ? UINT64_MAX : flags.start[t] + flags.ops;
        for (uint64_t i = flags.start[t]; i < end; ++i) {
          const Op op = MakeOp(flags.seed, t, i, flags.payload_max);
          out.Write(absl::StrCat("B ", t, " ", i, "\n"));
          const std::string result = Apply(op, store);
          out.Write(absl::StrCat("A ", t, " ", i, " ", result, "\n"));
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  out.Write("E\n");
  return 0;
}

}  // namespace
}  // namespace feedcore::crash

int main(int argc, char** argv) { return feedcore::crash::Main(argc, argv); }
