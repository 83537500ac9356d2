// SLOWLOG (GET, LEN, RESET, HELP) and SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE]
// [ABORT], with Redis's replies.
//
// SHUTDOWN stops the server through the handler the program gives the
// dispatcher (CommandDispatcher::SetShutdownHandler): every connection is
// closed after its running command, then the program saves as asked and
// exits. As in Redis, a SHUTDOWN that is carried out sends no reply: the
// connection closes (clients such as redis-py count that as success).
#ifndef FEEDCORE_SERVER_ADMIN_COMMANDS_H_
#define FEEDCORE_SERVER_ADMIN_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddAdminCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_ADMIN_COMMANDS_H_
