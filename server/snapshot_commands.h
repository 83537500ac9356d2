// Saving commands: SAVE (and its alias SNAPSHOT) writes a snapshot before
// replying, BGSAVE starts one on a background thread, LASTSAVE tells when
// the last one succeeded. They use the server's SnapshotSaver; without one
// (or with snapshots off) they reply with an error saying how to turn
// snapshots on.
#ifndef FEEDCORE_SERVER_SNAPSHOT_COMMANDS_H_
#define FEEDCORE_SERVER_SNAPSHOT_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddSnapshotCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SNAPSHOT_COMMANDS_H_
