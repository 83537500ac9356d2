// Commands about the connection and the server rather than the data:
// PING, ECHO, AUTH, HELLO, QUIT, COMMAND, and CONFIG (config_commands.h).
#ifndef FEEDCORE_SERVER_CONNECTION_COMMANDS_H_
#define FEEDCORE_SERVER_CONNECTION_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddConnectionCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_CONNECTION_COMMANDS_H_
