// What feedcore-server is told on its command line, checked before
// anything starts.
#ifndef FEEDCORE_SERVER_SERVER_OPTIONS_H_
#define FEEDCORE_SERVER_SERVER_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "resp_parser.h"

namespace feedcore::server {

inline constexpr size_t kMaxServerThreads = 1024;
inline constexpr size_t kMaxClientsLimit = 1'000'000;
// --timeout at most a year: longer is "never" by another name, and keeps
// the timer arithmetic far from overflow.
inline constexpr int64_t kMaxIdleTimeoutSeconds = 365LL * 24 * 3600;
// The smallest buffer limits accepted: below this, ordinary replies and
// commands would trip them.
inline constexpr size_t kMinBufferLimit = 1024;
// The active expiry's pass at most once a second: slower lets expired keys
// nobody reads stay for long.
inline constexpr int64_t kMaxActiveExpiryIntervalMillis = 1000;

struct ServerOptions {
  // IPv4 or IPv6 address to listen on. Anything but a loopback address
  // needs `requirepass`, or `protected_mode` off (see below).
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

  // Seconds a connection may wait for its client (to send a command, or
  // to read a reply) before the server closes it, 0..kMaxIdleTimeoutSeconds;
  // 0 = never, Redis's default. Closes abandoned connections that would
  // otherwise hold a place under max_clients for ever.
  int64_t idle_timeout_seconds = 0;
  // Most bytes one client's unfinished command may hold (argument bytes
  // received plus the receive buffer); past it the connection is closed.
  // limits.max_request_bytes already bounds a command, so by default this
  // only matters when that is raised. 0 = no limit; otherwise at least
  // kMinBufferLimit.
  size_t client_query_buffer_limit = 1 << 30;
  // Most bytes of replies one client may leave unread; past it the
  // connection is closed. Pipelined replies are sent every 256 KiB, so only
  // a single large reply (ZRANGE of a huge key) comes near it. 0 = no
  // limit; otherwise at least kMinBufferLimit.
  size_t client_output_buffer_limit = 256 << 20;
  // Most bytes the unfinished commands of all clients together may hold;
  // a client whose read takes the total past it is closed. This is what
  // bounds the server's memory when many clients each send part of a large
  // command. 0 = no limit; otherwise at least kMinBufferLimit.
  size_t client_query_buffer_total_limit = 256 << 20;

  // The password clients must give (AUTH, HELLO ... AUTH) before any other
  // command; empty = no authentication.
  std::string requirepass;
  // With no password, refuse to listen on anything but a loopback address:
  // an open server on a network is the classic way Redis servers get taken
  // over. Turn off only on a network where every client is trusted.
  bool protected_mode = true;

  // Milliseconds between two passes of the active expiry, which drops
  // expired keys nobody reads again (Redis's `hz` 10 is the same 100 ms),
  // 0..kMaxActiveExpiryIntervalMillis; 0 = a pass as soon as the last ends.
  int64_t active_expiry_interval_millis = 100;
};

// True for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104; false for anything
// else, including strings that are not addresses.
bool IsLoopbackAddress(const std::string& address);

// InvalidArgument naming the first option out of range; FailedPrecondition,
// saying what to do, for a non-loopback address without a password in
// protected mode.
absl::Status ValidateServerOptions(const ServerOptions& options);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SERVER_OPTIONS_H_
