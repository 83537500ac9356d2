// FEED.REACT, FEED.UNREACT, FEED.REACTED and FEED.REACTORS: per-user
// reactions, mapped onto FeedReactions (feedcore/feed_facets.h).
// docs/server.md describes each one.
#ifndef FEEDCORE_SERVER_FEED_REACTION_COMMANDS_H_
#define FEEDCORE_SERVER_FEED_REACTION_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddFeedReactionCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FEED_REACTION_COMMANDS_H_
