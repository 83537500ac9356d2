// The versions feedcore-server reports: its own (the project's version)
// and the Redis version whose commands and replies it follows, which
// clients read from INFO and HELLO to decide what they may send.
#ifndef FEEDCORE_SERVER_SERVER_VERSION_H_
#define FEEDCORE_SERVER_SERVER_VERSION_H_

namespace feedcore::server {

// The project version, e.g. "0.1.0" (CMake's PROJECT_VERSION).
extern const char kFeedcoreVersion[];

// Debian's redis-server, against which the replies are compared.
inline constexpr char kRedisCompatibleVersion[] = "7.0.15";

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SERVER_VERSION_H_
