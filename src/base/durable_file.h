// Crash-safe replacement of a whole file: the bytes go to `path + ".tmp"`,
// which is flushed to disk (fsync), renamed over `path`, and then the
// directory is flushed, so that a crash or an error leaves either the old
// file or the new one at `path`, never a mix or a partial file.
//
// Every error is an IoError (base/io_error.h) that names the failing step and
// the file it was applied to: "creating", "writing", "flushing" and "closing"
// the temporary file, "renaming ... to" the target, "opening directory" and
// "flushing directory" for the directory entry.
//
// Thread safety
// -------------
// A DurableFileWriter is used by one thread at a time. Two writers for the
// same path at once share the temporary file and corrupt each other; callers
// that may race serialize their writes.
#ifndef FEEDCORE_SRC_BASE_DURABLE_FILE_H_
#define FEEDCORE_SRC_BASE_DURABLE_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace feedcore::internal {

// Writes all of `bytes` to `fd`, retrying short and interrupted writes. On
// failure the file holds an unknown prefix of `bytes`; the error is
// IoError(what, path, errno).
absl::Status WriteAll(int fd, absl::string_view bytes, const std::string& path,
                      absl::string_view what = "writing");

// Flushes the directory that holds `path`, so that a rename or a new or
// deleted file in it survives a crash.
absl::Status SyncDirectoryOf(const std::string& path);

// The whole contents of `path`. I/O errors as IoError.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// Streams a file's new contents into its temporary file and then puts it in
// place with Commit(). Dropping the writer without a successful Commit()
// removes the temporary file and leaves `path` as it was.
class DurableFileWriter {
 public:
  // Creates (or truncates) `path + ".tmp"`.
  // REQUIRES: `path` is not empty.
  static absl::StatusOr<DurableFileWriter> Create(std::string path);

  DurableFileWriter(DurableFileWriter&& other) noexcept;
  DurableFileWriter& operator=(DurableFileWriter&&) = delete;
  DurableFileWriter(const DurableFileWriter&) = delete;
  DurableFileWriter& operator=(const DurableFileWriter&) = delete;
  ~DurableFileWriter();

  // Appends to the temporary file.
  // REQUIRES: Commit() has not been called.
  absl::Status Append(absl::string_view bytes);

  // Flushes and closes the temporary file, renames it over the target and
  // flushes the directory. After a failed rename the target is unchanged;
  // after a failed directory flush it holds the new contents, which a crash
  // may still undo.
  // REQUIRES: Commit() has not been called.
  absl::Status Commit();

  // Bytes appended so far.
  uint64_t written() const { return written_; }

 private:
  DurableFileWriter(std::string path, std::string temporary, int fd);

  std::string path_;
  std::string temporary_;
  int fd_ = -1;
  // Once renamed, the temporary name is the target's: never unlink it.
  bool renamed_ = false;
  uint64_t written_ = 0;
};

// Replaces `path` with `contents` through a DurableFileWriter.
absl::Status WriteFileDurably(const std::string& path,
                              absl::string_view contents);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_BASE_DURABLE_FILE_H_
