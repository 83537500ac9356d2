// Length and hash of a whole file: a save records its snapshot file's
// (member_names_file.h), and loading checks them before it trusts that
// file. The files of a save are written and read with the library's
// crash-safe file functions (base/durable_file.h).
#ifndef FEEDCORE_SERVER_FILE_DIGEST_H_
#define FEEDCORE_SERVER_FILE_DIGEST_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace feedcore::server {

// A file's length and XXH3-64 hash, read in blocks (the file may be large).
struct FileDigest {
  uint64_t bytes = 0;
  uint64_t hash = 0;
  friend bool operator==(const FileDigest&, const FileDigest&) = default;
};

// NotFound if `path` does not exist; other I/O errors as base/io_error.h
// describes.
absl::StatusOr<FileDigest> DigestFile(const std::string& path);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FILE_DIGEST_H_
