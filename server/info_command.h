// INFO [section ...]: the server's counters as Redis reports them, one
// "name:value" line each under "# Section" headers, so monitoring that
// reads Redis's INFO reads these too.
#ifndef FEEDCORE_SERVER_INFO_COMMAND_H_
#define FEEDCORE_SERVER_INFO_COMMAND_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddInfoCommand(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_INFO_COMMAND_H_
