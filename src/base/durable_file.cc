#include "base/durable_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <utility>

#include "base/io_error.h"

namespace feedcore::internal {
namespace {

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

// A rename is durable only once the directory entry that names it is.
absl::Status SyncDirectoryOf(const std::string& path) {
  const std::string dir = DirectoryOf(path);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("opening directory", dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return IoError("flushing directory", dir, err);
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, absl::string_view bytes, const std::string& path,
                      absl::string_view what) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(what, path, errno);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::StatusOr<DurableFileWriter> DurableFileWriter::Create(std::string path) {
  assert(!path.empty());
  std::string temporary = path + ".tmp";
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("creating", temporary, errno);
  return DurableFileWriter(std::move(path), std::move(temporary), fd);
}

DurableFileWriter::DurableFileWriter(std::string path, std::string temporary,
                                     int fd)
    : path_(std::move(path)), temporary_(std::move(temporary)), fd_(fd) {}

DurableFileWriter::DurableFileWriter(DurableFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      temporary_(std::move(other.temporary_)),
      fd_(std::exchange(other.fd_, -1)),
      renamed_(std::exchange(other.renamed_, true)),
      written_(other.written_) {}

DurableFileWriter::~DurableFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!renamed_) ::unlink(temporary_.c_str());
}

absl::Status DurableFileWriter::Append(absl::string_view bytes) {
  assert(fd_ >= 0);
  if (absl::Status s = WriteAll(fd_, bytes, temporary_); !s.ok()) return s;
  written_ += bytes.size();
  return absl::OkStatus();
}

absl::Status DurableFileWriter::Commit() {
  assert(fd_ >= 0);
  if (::fsync(fd_) != 0) return IoError("flushing", temporary_, errno);
  // close() can report a delayed write error, so it is checked too.
  if (::close(std::exchange(fd_, -1)) != 0) {
    return IoError("closing", temporary_, errno);
  }
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
    return IoError("renaming the temporary file to", path_, errno);
  }
  renamed_ = true;
  return SyncDirectoryOf(path_);
}

absl::Status WriteFileDurably(const std::string& path,
                              absl::string_view contents) {
  absl::StatusOr<DurableFileWriter> file = DurableFileWriter::Create(path);
  if (!file.ok()) return file.status();
  if (absl::Status s = file->Append(contents); !s.ok()) return s;
  return file->Commit();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("opening", path, errno);
  std::string bytes;
  struct stat st;
  absl::Status status;
  if (::fstat(fd, &st) != 0) {
    status = IoError("reading", path, errno);
  } else {
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t got = ::pread(fd, bytes.data() + done, bytes.size() - done,
                                  static_cast<off_t>(done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        status = IoError("reading", path, errno);
        break;
      }
      if (got == 0) break;  // shrank meanwhile: keep what is there
      done += static_cast<size_t>(got);
    }
    bytes.resize(done);
  }
  ::close(fd);
  if (!status.ok()) return status;
  return bytes;
}

}  // namespace feedcore::internal
