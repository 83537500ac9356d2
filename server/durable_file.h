// Whole-file reads and hashes of the files the server keeps next to a
// snapshot. They are written with the library's crash-safe replacement
// (base/durable_file.h).
#ifndef FEEDCORE_SERVER_DURABLE_FILE_H_
#define FEEDCORE_SERVER_DURABLE_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace feedcore::server {

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

#endif  // FEEDCORE_SERVER_DURABLE_FILE_H_
