#include "persistence_commands.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "append_only.h"
#include "arguments.h"
#include "snapshot_saver.h"

namespace feedcore::server {
namespace {

const char* OkOrErr(const absl::Status& status) {
  return status.ok() ? "ok" : "err";
}

// One "name:value" line; values never hold CR or LF (messages are
// flattened), or the client's parsing of INFO would break.
void Field(std::string& out, absl::string_view name, absl::string_view value) {
  std::string flat(value);
  std::replace(flat.begin(), flat.end(), '\r', ' ');
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  absl::StrAppend(&out, name, ":", flat, "\r\n");
}

void Field(std::string& out, absl::string_view name, int64_t value) {
  absl::StrAppend(&out, name, ":", value, "\r\n");
}

// BGREWRITEAOF: replies at once; the outcome goes to the log and to INFO.
void Bgrewriteaof(CommandCall& call) {
  AppendOnlyFiles* files = call.server->append_only;
  if (files == nullptr) {
    call.reply->Error(
        "ERR the append-only files are off: start the server with "
        "--appendonly yes");
    return;
  }
  if (absl::Status status = files->StartRewrite(call.server->boards);
      !status.ok()) {
    return ReplyError(call, status);
  }
  call.reply->SimpleString("Background append only file rewriting started");
}

}  // namespace

bool IsWriteCommand(const CommandSpec& spec) {
  return std::find(spec.flags.begin(), spec.flags.end(), "write") !=
         spec.flags.end();
}

std::string MisconfMessage(const absl::Status& refused) {
  return absl::StrCat("MISCONF Errors writing to the AOF file: ",
                      refused.message());
}

std::string PersistenceInfo(const ServerContext& server) {
  std::string out = "# Persistence\r\n";
  Field(out, "loading", 0);
  const SnapshotSaver* saver = server.snapshots;
  const bool snapshots = saver != nullptr && saver->enabled();
  Field(out, "rdb_bgsave_in_progress",
        snapshots && saver->background_save_running() ? 1 : 0);
  Field(out, "rdb_last_save_time",
        snapshots ? saver->last_save_unix_seconds() : 0);
  Field(
      out, "rdb_last_bgsave_status",
      OkOrErr(snapshots ? saver->last_background_status() : absl::OkStatus()));
  Field(out, "rdb_saves",
        snapshots ? static_cast<int64_t>(saver->successful_saves()) : 0);

  AppendOnlyFiles* files = server.append_only;
  Field(out, "aof_enabled", files != nullptr ? 1 : 0);
  if (files == nullptr) {
    Field(out, "aof_rewrite_in_progress", 0);
    Field(out, "aof_rewrite_scheduled", 0);
    Field(out, "aof_last_rewrite_time_sec", -1);
    Field(out, "aof_last_bgrewrite_status", "ok");
    Field(out, "aof_rewrites", 0);
    Field(out, "aof_last_write_status", "ok");
    return out;
  }
  const AppendOnlyFiles::RewriteState rewrite = files->rewrite_state();
  const DurabilityStats stats = files->store().Stats();
  const NamesJournalStats names = files->journal().Stats();
  const absl::Status write_error =
      !stats.write_error.ok() ? stats.write_error : names.write_error;
  Field(out, "aof_rewrite_in_progress",
        rewrite.in_progress || stats.compacting ? 1 : 0);
  Field(out, "aof_rewrite_scheduled", 0);
  Field(out, "aof_last_rewrite_time_sec", rewrite.last_seconds);
  Field(out, "aof_last_bgrewrite_status", OkOrErr(rewrite.last_status));
  Field(out, "aof_rewrites", static_cast<int64_t>(rewrite.rewrites));
  Field(out, "aof_last_write_status", OkOrErr(write_error));
  // Redis's sizes: everything the files hold now, and the base a rewrite
  // left (here the store's snapshot).
  Field(out, "aof_current_size",
        static_cast<int64_t>(stats.snapshot_bytes + stats.log_bytes +
                             names.bytes));
  Field(out, "aof_base_size", static_cast<int64_t>(stats.snapshot_bytes));
  // feedcore's own.
  Field(out, "feedcore_aof_dir", files->options().directory);
  Field(out, "feedcore_aof_fsync", FsyncPolicyName(stats.fsync));
  Field(out, "feedcore_aof_last_write_error",
        write_error.ok() ? "" : write_error.message());
  Field(out, "feedcore_aof_appended_sequence",
        static_cast<int64_t>(stats.appended_sequence));
  Field(out, "feedcore_aof_written_sequence",
        static_cast<int64_t>(stats.written_sequence));
  Field(out, "feedcore_aof_synced_sequence",
        static_cast<int64_t>(stats.synced_sequence));
  Field(out, "feedcore_aof_fsyncs", static_cast<int64_t>(stats.fsyncs));
  Field(out, "feedcore_aof_log_bytes", static_cast<int64_t>(stats.log_bytes));
  Field(out, "feedcore_aof_log_segments",
        static_cast<int64_t>(stats.log_segments));
  Field(out, "feedcore_aof_log_bytes_since_snapshot",
        static_cast<int64_t>(stats.log_bytes_since_snapshot));
  Field(out, "feedcore_aof_snapshot_sequence",
        static_cast<int64_t>(stats.snapshot_sequence));
  Field(out, "feedcore_aof_compactions",
        static_cast<int64_t>(stats.compactions));
  Field(out, "feedcore_aof_recovered_records",
        static_cast<int64_t>(stats.recovered_records));
  Field(out, "feedcore_aof_recovered_bytes",
        static_cast<int64_t>(stats.recovered_bytes));
  Field(out, "feedcore_aof_recovered_torn_tail",
        stats.recovered_torn_tail ? 1 : 0);
  Field(out, "feedcore_aof_recovery_time_us", stats.recovery_micros);
  const NamesRecovery& recovery = files->names_recovery();
  Field(out, "feedcore_names_journal_bytes", static_cast<int64_t>(names.bytes));
  Field(out, "feedcore_names_journal_records",
        static_cast<int64_t>(names.records));
  Field(out, "feedcore_names_journal_fsyncs",
        static_cast<int64_t>(names.fsyncs));
  Field(out, "feedcore_names_journal_unsynced_bytes",
        static_cast<int64_t>(names.unsynced_bytes));
  Field(out, "feedcore_names_recovered_records",
        static_cast<int64_t>(recovery.records));
  Field(out, "feedcore_names_recovered_torn_tail", recovery.torn_tail ? 1 : 0);
  Field(out, "feedcore_names_keys_without_board",
        static_cast<int64_t>(recovery.keys_without_board));
  Field(out, "feedcore_names_unnamed_members_removed",
        static_cast<int64_t>(recovery.unnamed_members_removed));
  Field(out, "feedcore_names_renames_redone",
        static_cast<int64_t>(recovery.renames_redone));
  Field(out, "feedcore_names_transactions_skipped",
        static_cast<int64_t>(recovery.transactions_skipped));
  return out;
}

absl::Status AddPersistenceCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"BGREWRITEAOF", 1, {"admin", "noscript"}, 0, 0, 0, Bgrewriteaof},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
