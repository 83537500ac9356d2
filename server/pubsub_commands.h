// Redis's publish/subscribe commands over the server's PubSubHub
// (pubsub_hub.h), with Redis's replies: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE,
// PUNSUBSCRIBE (a push per channel or pattern: [kind, name, count], `>` in
// RESP3), PUBLISH (how many received it), PUBSUB CHANNELS, NUMSUB, NUMPAT.
// SUBSCRIBE to `timeline:<entity>` or `notifications:<entity>` gets that
// feed's deliveries; a name there is given its id, as FEED.FOLLOW does. A
// RESP2 connection with subscriptions takes only the subscribing commands,
// PING, QUIT and RESET (command_dispatcher.cc).
#ifndef FEEDCORE_SERVER_PUBSUB_COMMANDS_H_
#define FEEDCORE_SERVER_PUBSUB_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddPubSubCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_PUBSUB_COMMANDS_H_
