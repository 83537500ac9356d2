// Whole-file I/O for the files the server keeps next to a snapshot: a
// crash-safe replacing write (the discipline of the library's snapshots)
// and whole-file reads and hashes.
#ifndef FEEDCORE_EXAMPLES_FEED_SERVER_DURABLE_FILE_H_
#define FEEDCORE_EXAMPLES_FEED_SERVER_DURABLE_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace feedcore::server {

// Replaces `path` with `contents`: writes `path + ".tmp"`, flushes it to
// disk (fsync), renames it over `path` and syncs the directory, so a crash
// or an error leaves either the old file or the new one, never a partial
// one. On failure the temporary file is removed. Errors carry the system's
// message: NotFound for a missing directory, ResourceExhausted for a full
// disk or file size limit, Unavailable otherwise.
absl::Status ReplaceFileDurably(const std::string& path,
                                absl::string_view contents);

// The whole file at `path`. NotFound if it does not exist; Unavailable
// for other I/O errors.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// A file's length and XXH3-64 hash, read in blocks (the file may be large).
struct FileDigest {
  uint64_t bytes = 0;
  uint64_t hash = 0;
  friend bool operator==(const FileDigest&, const FileDigest&) = default;
};
absl::StatusOr<FileDigest> DigestFile(const std::string& path);

}  // namespace feedcore::server

#endif  // FEEDCORE_EXAMPLES_FEED_SERVER_DURABLE_FILE_H_
