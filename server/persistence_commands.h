// Commands about the append-only files (--appendonly yes) and the state of
// persistence: BGREWRITEAOF compacts them in the background, INFO's
// persistence section (info_command.h) reports them with Redis's field
// names (docs/server.md lists the fields), and MISCONF is the error a
// write gets when the files refuse writes.
#ifndef FEEDCORE_SERVER_PERSISTENCE_COMMANDS_H_
#define FEEDCORE_SERVER_PERSISTENCE_COMMANDS_H_

#include <string>

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddPersistenceCommands(CommandTable& table);

// Whether `spec` changes data (its flags include "write").
bool IsWriteCommand(const CommandSpec& spec);

// "MISCONF Errors writing to the AOF file: <why>", Redis's reply to a
// write while the append-only file cannot be written.
std::string MisconfMessage(const absl::Status& refused);

// The "# Persistence" section of INFO, lines ending in CRLF.
std::string PersistenceInfo(const ServerContext& server);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_PERSISTENCE_COMMANDS_H_
