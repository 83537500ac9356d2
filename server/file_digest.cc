#include "file_digest.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "base/io_error.h"

namespace feedcore::server {
namespace {

constexpr size_t kReadBlockBytes = 1 << 20;

// Hashes the open file `fd` to its end.
absl::StatusOr<FileDigest> DigestOpenFile(int fd, const std::string& path) {
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(
      XXH3_createState(), &XXH3_freeState);
  if (state == nullptr || XXH3_64bits_reset(state.get()) != XXH_OK) {
    return absl::ResourceExhaustedError("cannot allocate a hash state");
  }
  FileDigest digest;
  std::vector<char> block(kReadBlockBytes);
  for (;;) {
    const ssize_t got = ::read(fd, block.data(), block.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      return internal::IoError("reading", path, errno);
    }
    if (got == 0) break;
    XXH3_64bits_update(state.get(), block.data(), static_cast<size_t>(got));
    digest.bytes += static_cast<uint64_t>(got);
  }
  digest.hash = XXH3_64bits_digest(state.get());
  return digest;
}

}  // namespace

absl::StatusOr<FileDigest> DigestFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return internal::IoError("opening", path, errno);
  absl::StatusOr<FileDigest> digest = DigestOpenFile(fd, path);
  ::close(fd);
  return digest;
}

}  // namespace feedcore::server
