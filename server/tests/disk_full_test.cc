// feedcore-server's append-only files when the disk has no room for a
// names record: the write gets MISCONF and changes nothing, the journal
// keeps only whole records, and writes resume by themselves once there is
// room, with what was acknowledged kept across a restart. The full disk is
// a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored as feedcore-server
// does): a write past it fails with EFBIG, which the files treat as ENOSPC.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "append_only_fixture.h"
#include "support/file_test_util.h"

namespace feedcore::server {
namespace {

using ::feedcore::testing::TempDir;
using Server = ::feedcore::server::testing::AppendOnlyServer;

// Limits the size of every file this process writes while it lives.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved_) == 0);
    previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &limit) == 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_handler_);
  }

 private:
  rlimit saved_{};
  void (*previous_handler_)(int) = nullptr;
};

TEST_CASE("no room for a name: MISCONF, nothing changes, writes resume") {
  namespace fs = std::filesystem;
  for (FsyncPolicy fsync : {FsyncPolicy::kAlways, FsyncPolicy::kEverySecond}) {
    CAPTURE(static_cast<int>(fsync));
    TempDir dir;
    const fs::path journal = fs::path(dir.path()) / "names.fcjournal";
    // Longer than the room left below: its assign record cannot fit.
    const std::string long_name(4000, 'n');
    {
      Server server(dir.path(), fsync);
      REQUIRE(server.Run({"ZADD", "lb", "1", "a"}) == ":1\r\n");
      const uintmax_t journal_bytes = fs::file_size(journal);
      uintmax_t largest = journal_bytes;
      for (const fs::directory_entry& file :
           fs::directory_iterator(dir.path())) {
        if (file.is_regular_file())
          largest = std::max(largest, file.file_size());
      }
      {
        // Room for the log's small records, not for the long name.
        FileSizeLimit limit(largest + 1000);
        const std::string refused = server.Run({"ZADD", "lb", "2", long_name});
        CHECK(refused.rfind("-MISCONF ", 0) == 0);
        CHECK(absl::StrContains(refused, "names.fcjournal"));
        CHECK(server.Run({"ZCARD", "lb"}) == ":1\r\n");
        CHECK(server.Run({"ZSCORE", "lb", long_name}) == "$-1\r\n");
        // What reached the file of the refused record was cut off.
        CHECK(fs::file_size(journal) == journal_bytes);
        CHECK(absl::StrContains(server.Run({"INFO", "persistence"}),
                                "aof_last_write_status:err"));
        // A write that needs no name still goes through.
        CHECK(server.Run({"ZADD", "lb", "5", "a"}) == ":0\r\n");
      }
      // Room again: the same write succeeds, with no restart.
      CHECK(server.Run({"ZADD", "lb", "2", long_name}) == ":1\r\n");
      CHECK(absl::StrContains(server.Run({"INFO", "persistence"}),
                              "aof_last_write_status:ok"));
      REQUIRE(server.Run({"ZADD", "lb", "3", "c"}) == ":1\r\n");
      REQUIRE(server.files->store().Sync().ok());
    }
    Server reopened(dir.path(), fsync);
    CHECK(reopened.Run({"ZCARD", "lb"}) == ":3\r\n");
    CHECK(reopened.Run({"ZSCORE", "lb", "a"}) == "$1\r\n5\r\n");
    CHECK(reopened.Run({"ZSCORE", "lb", long_name}) == "$1\r\n2\r\n");
    CHECK(reopened.Run({"ZSCORE", "lb", "c"}) == "$1\r\n3\r\n");
  }
}

}  // namespace
}  // namespace feedcore::server
