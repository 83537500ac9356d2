// File helpers for tests of on-disk formats: a per-process temporary path
// and a temporary directory removed at the end of their scope, whole-file reads
// and writes, crash images of a directory, a scope in which writes past a
// file size fail with EFBIG (as on a full disk), and a change file's round
// trip.
#ifndef FEEDCORE_TESTS_FILE_TEST_UTIL_H_
#define FEEDCORE_TESTS_FILE_TEST_UTIL_H_

#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "feedcore/change_file.h"
#include "feedcore/change_stream.h"

namespace feedcore::testing {

// `<temp dir>/feedcore-<pid>-<name>`; removes it and `<path>.tmp` when done.
struct TempPath {
  explicit TempPath(const std::string& name)
      : path((std::filesystem::temp_directory_path() /
              ("feedcore-" + std::to_string(::getpid()) + "-" + name))
                 .string()) {}
  ~TempPath() {
    std::remove(path.c_str());
    std::remove((path + ".tmp").c_str());
  }
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  std::string path;
};

// A fresh directory `<temp dir>/feedcore-<name>-XXXXXX`, removed with
// everything in it at the end of its scope.
class TempDir {
 public:
  explicit TempDir(const std::string& name = "dir") {
    std::string pattern = (std::filesystem::temp_directory_path() /
                           ("feedcore-" + name + "-XXXXXX"))
                              .string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Replaces `to` with a copy of the files of `from` but its LOCK: what a
// crash of the process writing `from` would leave on disk now.
inline void CopyDirectory(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  fs::remove_all(to);
  fs::create_directory(to);
  for (const auto& entry : fs::directory_iterator(from)) {
    if (entry.path().filename() == "LOCK") continue;
    fs::copy_file(entry.path(), fs::path(to) / entry.path().filename());
  }
}

// While alive, no file of the process can grow past `bytes`: write() fails
// with EFBIG (SIGXFSZ is ignored meanwhile). Restores both on destruction.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit_) == 0);
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    REQUIRE(::sigaction(SIGXFSZ, &ignore, &old_action_) == 0);
    struct rlimit limit = old_limit_;
    limit.rlim_cur = bytes;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &limit) == 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_limit_);
    ::sigaction(SIGXFSZ, &old_action_, nullptr);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  struct rlimit old_limit_;
  struct sigaction old_action_;
};

// Writes `records` to a new change file at `path` and checks that reading
// it back gives the same records in the same order.
inline void CheckChangeFileRoundTrip(
    const std::string& path, const std::vector<ChangeRecordPtr>& records) {
  {
    std::unique_ptr<ChangeFileWriter> writer =
        ChangeFileWriter::Open(path).value();
    REQUIRE(writer->Append(records).ok());
    REQUIRE(writer->Sync().ok());
  }
  const ChangeFileContents read = ReadChangeFile(path).value();
  REQUIRE(read.records.size() == records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    CHECK(read.records[i] == *records[i]);
  }
}

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_FILE_TEST_UTIL_H_
