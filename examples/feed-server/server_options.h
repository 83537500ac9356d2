// What feedcore-server is told on its command line, checked before
// anything starts.
#ifndef FEEDCORE_EXAMPLES_FEED_SERVER_SERVER_OPTIONS_H_
#define FEEDCORE_EXAMPLES_FEED_SERVER_SERVER_OPTIONS_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "resp_parser.h"

namespace feedcore::server {

inline constexpr size_t kMaxServerThreads = 1024;
inline constexpr size_t kMaxClientsLimit = 1'000'000;

struct ServerOptions {
  // IPv4 or IPv6 address to listen on. The server has no authentication:
  // keep it on loopback or a trusted network.
  std::string address = "127.0.0.1";
  // TCP port, 0..65535; 0 lets the system pick a free one (the server
  // prints the port it got).
  int port = 7379;
  // Threads serving connections, 1..kMaxServerThreads; 0 = one per
  // hardware thread.
  size_t threads = 0;
  // Connections served at once, 1..kMaxClientsLimit. Beyond it a new
  // connection gets an error reply and is closed.
  size_t max_clients = 10000;
  RespLimits limits;
};

// InvalidArgument naming the first option out of range.
absl::Status ValidateServerOptions(const ServerOptions& options);

}  // namespace feedcore::server

#endif  // FEEDCORE_EXAMPLES_FEED_SERVER_SERVER_OPTIONS_H_
