// FEED.MARKER.* commands: read markers (FeedEngine::SetReadMarker,
// GetReadMarker). docs/server.md describes each one.
#ifndef FEEDCORE_SERVER_FEED_MARKER_COMMANDS_H_
#define FEEDCORE_SERVER_FEED_MARKER_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddFeedMarkerCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FEED_MARKER_COMMANDS_H_
