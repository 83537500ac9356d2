// Change files (see change_file.h); the frames are stream/change_frame.h's.
#include "feedcore/change_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/durable_file.h"
#include "base/io_error.h"
#include "stream/change_frame.h"

namespace feedcore {
namespace {

using internal::AppendChangeFrame;
using internal::IoError;
using internal::ScanChangeFrames;
using internal::WriteAll;

class FileWriter final : public ChangeFileWriter {
 public:
  FileWriter(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~FileWriter() override { ::close(fd_); }

  absl::Status Append(absl::Span<const ChangeRecordPtr> records) override {
    if (broken_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "change file ", path_,
          ": an earlier append failed and could not be undone; reopen it"));
    }
    buffer_.clear();
    for (const ChangeRecordPtr& record : records) {
      if (record == nullptr) {
        return absl::InvalidArgumentError(
            "ChangeFileWriter::Append: a record pointer is null");
      }
      if (!AppendChangeFrame(*record, &buffer_)) {
        return absl::InvalidArgumentError(
            absl::StrCat("ChangeFileWriter::Append: record ", record->sequence,
                         " is larger than a frame's 4 GiB"));
      }
    }
    const uint64_t before = size_;
    if (absl::Status error = WriteAll(fd_, buffer_, path_, "appending to");
        !error.ok()) {
      // Cut the partial frames off, so that later appends follow whole
      // frames.
      if (::ftruncate(fd_, static_cast<off_t>(before)) != 0) broken_ = true;
      return error;
    }
    size_ += buffer_.size();
    return absl::OkStatus();
  }

  absl::Status Sync() override {
    if (::fdatasync(fd_) != 0) return IoError("flushing", path_, errno);
    return absl::OkStatus();
  }

  uint64_t size() const override { return size_; }

 private:
  const std::string path_;
  const int fd_;
  uint64_t size_;
  bool broken_ = false;
  std::string buffer_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ChangeFileWriter>> ChangeFileWriter::Open(
    const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError("ChangeFileWriter::Open: empty path");
  }
  const int fd =
      ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("opening", path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return IoError("reading", path, err);
  }
  auto fail = [fd](absl::Status status) {
    ::close(fd);
    return status;
  };
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0) {
    const std::string header = internal::ChangeFileHeader();
    if (absl::Status s = WriteAll(fd, header, path, "writing the header of");
        !s.ok()) {
      return fail(s);
    }
    size = header.size();
  } else {
    // A torn last frame (a crash mid-append) is cut off, so that new frames
    // follow whole ones.
    absl::StatusOr<std::string> bytes = internal::ReadWholeFile(path);
    if (!bytes.ok()) return fail(bytes.status());
    size_t clean_end = 0;
    bool torn = false;
    if (absl::Status s =
            ScanChangeFrames(*bytes, path, nullptr, &clean_end, &torn);
        !s.ok()) {
      return fail(s);
    }
    if (torn && ::ftruncate(fd, static_cast<off_t>(clean_end)) != 0) {
      return fail(IoError("cutting the torn end off", path, errno));
    }
    size = clean_end;
  }
  return std::unique_ptr<ChangeFileWriter>(new FileWriter(path, fd, size));
}

absl::StatusOr<ChangeFileContents> ReadChangeFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = internal::ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  ChangeFileContents contents;
  size_t clean_end = 0;
  if (absl::Status s = ScanChangeFrames(
          *bytes, path,
          [&contents](ChangeRecord&& record, size_t) {
            contents.records.push_back(std::move(record));
            return absl::OkStatus();
          },
          &clean_end, &contents.torn_tail);
      !s.ok()) {
    return s;
  }
  return contents;
}

}  // namespace feedcore
