// FEED.* commands: the follow graph, publishing, retraction and paged
// reads of home timelines, own feeds and the world feed, mapped onto
// FeedEngine. docs/server.md describes each one.
#ifndef FEEDCORE_SERVER_FEED_COMMANDS_H_
#define FEEDCORE_SERVER_FEED_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddFeedCommands(CommandTable& table);

// FEED.NOTIFICATIONS and FEED.NOTIFY.*, the notification feeds
// (feed_notification_commands.cc).
absl::Status AddFeedNotificationCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FEED_COMMANDS_H_
