#include "server_options.h"

#include <arpa/inet.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace feedcore::server {
namespace {

absl::Status CheckBufferLimit(size_t value, const char* flag) {
  if (value != 0 && value < kMinBufferLimit) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " must be 0 (no limit) or at least ",
                     kMinBufferLimit, " bytes, got ", value));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsLoopbackAddress(const std::string& address) {
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, address.c_str(), &v6) != 1) return false;
  static constexpr unsigned char kLoopback[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                                  0, 0, 0, 0, 0, 0, 0, 1};
  static constexpr unsigned char kMappedPrefix[12] = {0, 0, 0, 0, 0,    0,
                                                      0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(v6.s6_addr, kLoopback, 16) == 0) return true;
  return std::memcmp(v6.s6_addr, kMappedPrefix, 12) == 0 &&
         v6.s6_addr[12] == 127;
}

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
  if (options.idle_timeout_seconds < 0 ||
      options.idle_timeout_seconds > kMaxIdleTimeoutSeconds) {
    return absl::InvalidArgumentError(
        absl::StrCat("--timeout must be 0 (never) to ", kMaxIdleTimeoutSeconds,
                     " seconds, got ", options.idle_timeout_seconds));
  }
  if (options.active_expiry_interval_millis < 0 ||
      options.active_expiry_interval_millis > kMaxActiveExpiryIntervalMillis) {
    return absl::InvalidArgumentError(
        absl::StrCat("the active expiry interval must be 0..",
                     kMaxActiveExpiryIntervalMillis, " ms, got ",
                     options.active_expiry_interval_millis));
  }
  for (const auto& [value, flag] :
       {std::pair{options.client_query_buffer_limit,
                  "--client_query_buffer_limit"},
        std::pair{options.client_output_buffer_limit,
                  "--client_output_buffer_limit"},
        std::pair{options.client_query_buffer_total_limit,
                  "--client_query_buffer_total_limit"}}) {
    if (absl::Status status = CheckBufferLimit(value, flag); !status.ok()) {
      return status;
    }
  }
  if (absl::Status status = ValidateRespLimits(options.limits); !status.ok()) {
    return status;
  }
  if (options.requirepass.empty() && options.protected_mode &&
      !IsLoopbackAddress(options.address)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing to listen on ", options.address,
        " without a password: anyone who can reach it could read and change "
        "every key. Set one with --requirepass_file=PATH (or "
        "--requirepass=PASSWORD), listen on 127.0.0.1, or, only on a network "
        "where every client is trusted, pass --protected_mode=no"));
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
