// The settings of feedcore-server: every command-line flag, with the kind
// of value the config file and CONFIG SET take, Redis's name where Redis
// has the setting under another one, and whether it may change while the
// server runs. main.cc defines the flags themselves (with their defaults
// and help) and refuses to start if a flag is missing here.
//
// Changeable while serving (CONFIG SET): timeout, max_clients,
// requirepass and the three client buffer limits, which connections read
// as they go (ServerConfig). Everything else is fixed at start-up: the
// listening socket (address, port), thread counts, the library's options,
// the RESP parser limits (built into each connection's parser), the
// persistence files and requirepass_file (read once) and protected_mode
// (checked when the socket opens).
//
// Thread-safe: the table is immutable.
#ifndef FEEDCORE_SERVER_SERVER_SETTINGS_H_
#define FEEDCORE_SERVER_SERVER_SETTINGS_H_

#include "absl/types/span.h"
#include "config_file.h"

namespace feedcore::server {

// In the order --help and CONFIG GET list them.
absl::Span<const SettingSpec> ServerSettings();

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SERVER_SETTINGS_H_
