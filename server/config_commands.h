// CONFIG, as Redis 7 has it:
//   CONFIG GET pattern [pattern ...]   every matching setting (a map in
//                                      RESP3, a flat array in RESP2)
//   CONFIG SET name value [name value ...]
//                                      the settings changeable while
//                                      serving, all or none
//   CONFIG RESETSTAT                   zeroes the counters INFO reports
//   CONFIG HELP
// Names are Redis's dashed spelling; server_config.h holds the settings
// and says what may change, server_settings.h which settings there are.
#ifndef FEEDCORE_SERVER_CONFIG_COMMANDS_H_
#define FEEDCORE_SERVER_CONFIG_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddConfigCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_CONFIG_COMMANDS_H_
