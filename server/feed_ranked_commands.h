// FEED.INCR, FEED.COUNTERS and FEED.RANKED: activity counters and ranked
// timeline pages, mapped onto FeedEngine::IncrementCounter, GetCounters
// and ReadRanked. docs/server.md describes each one.
#ifndef FEEDCORE_SERVER_FEED_RANKED_COMMANDS_H_
#define FEEDCORE_SERVER_FEED_RANKED_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddFeedRankedCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FEED_RANKED_COMMANDS_H_
