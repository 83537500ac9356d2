#include "base/io_error.h"

#include <errno.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace feedcore::internal {

absl::Status IoError(absl::string_view what, const std::string& path, int err) {
  const std::string message =
      absl::StrCat(what, " ", path, ": ", std::strerror(err));
  if (err == ENOSPC || err == EDQUOT || err == EFBIG) {
    return absl::ResourceExhaustedError(message);
  }
  if (err == ENOENT) return absl::NotFoundError(message);
  return absl::UnavailableError(message);
}

}  // namespace feedcore::internal
