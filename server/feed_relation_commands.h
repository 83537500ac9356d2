// FEED.BLOCK, FEED.UNBLOCK, FEED.MUTE, FEED.UNMUTE, FEED.BLOCKED and
// FEED.MUTED: mute and block (FeedEngine's Block, Unblock, Mute, Unmute,
// Blocked, Muted). docs/server.md describes each one.
#ifndef FEEDCORE_SERVER_FEED_RELATION_COMMANDS_H_
#define FEEDCORE_SERVER_FEED_RELATION_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddFeedRelationCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FEED_RELATION_COMMANDS_H_
