// FEED.EDIT, FEED.PIN, FEED.UNPIN and FEED.PINNED: payloads corrected in
// place and entries pinned to the top of an own feed, mapped onto
// EditsAndPins (feedcore/feed_facets.h). docs/server.md describes each one.
#ifndef FEEDCORE_SERVER_FEED_EDIT_COMMANDS_H_
#define FEEDCORE_SERVER_FEED_EDIT_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddFeedEditCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FEED_EDIT_COMMANDS_H_
