// CLIENT (ID, SETNAME, GETNAME, SETINFO, INFO, LIST, KILL, REPLY,
// NO-EVICT, NO-TOUCH, HELP) and RESET, with Redis's replies: what client
// libraries send on connecting and what operators use to see and drop
// connections. The clients come from the dispatcher's ClientRegistry.
#ifndef FEEDCORE_SERVER_SESSION_COMMANDS_H_
#define FEEDCORE_SERVER_SESSION_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddSessionCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SESSION_COMMANDS_H_
