#include "snapshot_commands.h"

#include <vector>

#include "snapshot_saver.h"

namespace feedcore::server {
namespace {

// Null when the server runs without a saver (snapshots off).
SnapshotSaver* SaverOrReplyError(CommandCall& call) {
  SnapshotSaver* saver = call.server->snapshots;
  if (saver == nullptr || !saver->enabled()) {
    call.reply->Error(
        "ERR snapshots are off: start the server with --snapshot_file");
    return nullptr;
  }
  return saver;
}

// SAVE, SNAPSHOT: replies once the snapshot is on disk.
void Save(CommandCall& call) {
  SnapshotSaver* saver = SaverOrReplyError(call);
  if (saver == nullptr) return;
  if (absl::Status status = saver->Save(); !status.ok()) {
    return ReplyError(call, status);
  }
  call.reply->SimpleString("OK");
}

// BGSAVE: replies at once; the outcome goes to the server's log and to
// LASTSAVE.
void Bgsave(CommandCall& call) {
  SnapshotSaver* saver = SaverOrReplyError(call);
  if (saver == nullptr) return;
  if (absl::Status status = saver->StartBackgroundSave(); !status.ok()) {
    return ReplyError(call, status);
  }
  call.reply->SimpleString("Background saving started");
}

// LASTSAVE: the unix time of the last successful save (the server's start
// before the first), as in Redis.
void Lastsave(CommandCall& call) {
  SnapshotSaver* saver = SaverOrReplyError(call);
  if (saver == nullptr) return;
  call.reply->Integer(saver->last_save_unix_seconds());
}

}  // namespace

absl::Status AddSnapshotCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"SAVE", 1, {"admin", "noscript"}, 0, 0, 0, Save},
      {"SNAPSHOT", 1, {"admin", "noscript"}, 0, 0, 0, Save},
      {"BGSAVE", 1, {"admin", "noscript"}, 0, 0, 0, Bgsave},
      {"LASTSAVE", 1, {"fast"}, 0, 0, 0, Lastsave},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
