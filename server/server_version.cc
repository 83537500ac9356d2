#include "server_version.h"

namespace feedcore::server {

// Given by the build, so that the version is written once (CMakeLists.txt).
const char kFeedcoreVersion[] = FEEDCORE_SERVER_VERSION;

}  // namespace feedcore::server
