#include "server_options.h"

#include "absl/strings/str_cat.h"

namespace feedcore::server {

absl::Status ValidateServerOptions(const ServerOptions& options) {
  if (options.address.empty()) {
    return absl::InvalidArgumentError("--address must not be empty");
  }
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--port must be 0..65535, got ", options.port));
  }
  if (options.threads > kMaxServerThreads) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--threads must be 0..", kMaxServerThreads, ", got ", options.threads));
  }
  if (options.max_clients < 1 || options.max_clients > kMaxClientsLimit) {
    return absl::InvalidArgumentError(absl::StrCat("--max_clients must be 1..",
                                                   kMaxClientsLimit, ", got ",
                                                   options.max_clients));
  }
  return ValidateRespLimits(options.limits);
}

}  // namespace feedcore::server
