// The Status for a failed system call on a file, with the system's message:
// ResourceExhausted for a full disk or file size limit, NotFound for a
// missing file or directory, Unavailable for anything else.
#ifndef FEEDCORE_SRC_BASE_IO_ERROR_H_
#define FEEDCORE_SRC_BASE_IO_ERROR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace feedcore::internal {

// `what` names the operation ("writing", "opening"...), `err` is errno.
absl::Status IoError(absl::string_view what, const std::string& path, int err);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_BASE_IO_ERROR_H_
