// FEED.LISTSET, FEED.LISTDEL, FEED.LISTADD, FEED.LISTREM, FEED.LISTS,
// FEED.LISTMEMBERS and FEED.LISTREAD: a user's lists of accounts, mapped
// onto FeedLists (feedcore/feed_facets.h). docs/server.md describes each
// one.
#ifndef FEEDCORE_SERVER_FEED_LIST_COMMANDS_H_
#define FEEDCORE_SERVER_FEED_LIST_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddFeedListCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FEED_LIST_COMMANDS_H_
