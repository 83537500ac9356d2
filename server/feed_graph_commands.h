// FEED.* commands of the follow graph in batches: FEED.FOLLOWMANY, and
// FEED.UNFOLLOW with KEEPHISTORY, mapped onto FeedEngine::FollowMany and
// Unfollow. docs/server.md describes each one.
#ifndef FEEDCORE_SERVER_FEED_GRAPH_COMMANDS_H_
#define FEEDCORE_SERVER_FEED_GRAPH_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddFeedGraphCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FEED_GRAPH_COMMANDS_H_
