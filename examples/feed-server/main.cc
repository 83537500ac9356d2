// feedcore-server: a feedcore FeedEngine and its leaderboards behind a
// Redis-compatible (RESP2/RESP3) TCP interface, so that redis-cli,
// redis-benchmark and Redis client libraries can drive them.
//
//   feedcore-server --port=7379 --threads=4
//   feedcore-server --snapshot_file=/var/lib/feeds.snap --load
//   feedcore-server --appendonly yes --dir /var/lib/feedcore
//
// Prints "feedcore-server listening on <address>:<port>" once it accepts
// connections; stops cleanly on SIGINT or SIGTERM (saving first with
// --snapshot_on_exit). docs/server.md lists the commands and flags.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "command_dispatcher.h"
#include "feed_server.h"
#include "feedcore/feedcore.h"
#include "server_data.h"
#include "server_options.h"
#include "snapshot_saver.h"

ABSL_FLAG(std::string, address, "127.0.0.1",
          "IP address to listen on; the server has no authentication, so "
          "keep it on loopback or a trusted network");
ABSL_FLAG(int, port, 7379, "TCP port; 0 picks a free one");
ABSL_FLAG(size_t, threads, 0,
          "threads serving connections; 0 = one per hardware thread");
ABSL_FLAG(size_t, max_clients, 10000, "connections served at once");
ABSL_FLAG(size_t, max_bulk_bytes, 1 << 20,
          "longest bulk string (one argument) accepted, in bytes");
ABSL_FLAG(size_t, max_args, 65536, "most arguments in one command");
ABSL_FLAG(size_t, max_inline_bytes, 64 * 1024,
          "longest inline command line, in bytes");
ABSL_FLAG(size_t, max_request_bytes, 16 << 20,
          "largest command (sum of its argument lengths), in bytes");
ABSL_FLAG(size_t, leaderboard_partitions, 16,
          "write partitions of each sorted-set key's leaderboard");
ABSL_FLAG(size_t, engine_shards, 0,
          "lock shards of the feed engine; 0 picks from the hardware");
ABSL_FLAG(size_t, fanout_threads, 1,
          "worker threads that share large fan-outs with the publisher");
ABSL_FLAG(size_t, max_payload_bytes, 64 * 1024,
          "largest activity payload FEED.PUBLISH accepts");
ABSL_FLAG(std::string, snapshot_file, "",
          "where SAVE, BGSAVE and --snapshot_on_exit write a save (this "
          "path holds its manifest and member names, PATH.<n>.fcsnap the "
          "library snapshot), and what --load reads; empty turns "
          "snapshots off");
ABSL_FLAG(bool, load, false,
          "load --snapshot_file before accepting connections; a missing "
          "file starts empty, a damaged one stops the server");
ABSL_FLAG(std::string, dir, ".",
          "directory of the append-only files (--appendonly yes): the "
          "library's log and snapshots and the member-names journal");
ABSL_FLAG(std::string, appendonly, "no",
          "yes: log every write to the append-only files in --dir and "
          "recover them on start-up; no: keep data in memory only");
ABSL_FLAG(std::string, appendfsync, "everysec",
          "when a logged write reaches the disk: always (before the "
          "reply), everysec (once a second) or no (when the system "
          "flushes)");
ABSL_FLAG(bool, snapshot_on_exit, false,
          "on SIGINT or SIGTERM, save to --snapshot_file after the last "
          "command and before exiting");

namespace {

using feedcore::server::CommandDispatcher;
using feedcore::server::FeedServer;
using feedcore::server::ServerData;
using feedcore::server::ServerOptions;
using feedcore::server::SnapshotSaver;

int Fail(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "feedcore-server: %s: %s\n", what.c_str(),
               std::string(status.message()).c_str());
  return EXIT_FAILURE;
}

void Log(const std::string& line) {
  std::fprintf(stderr, "feedcore-server: %s\n", line.c_str());
}

// --appendonly and --appendfsync, with Redis's values.
absl::StatusOr<std::optional<feedcore::FsyncPolicy>> ParsePersistenceFlags() {
  const std::string appendonly = absl::GetFlag(FLAGS_appendonly);
  const std::string appendfsync = absl::GetFlag(FLAGS_appendfsync);
  feedcore::FsyncPolicy policy;
  if (appendfsync == "always") {
    policy = feedcore::FsyncPolicy::kAlways;
  } else if (appendfsync == "everysec") {
    policy = feedcore::FsyncPolicy::kEverySecond;
  } else if (appendfsync == "no") {
    policy = feedcore::FsyncPolicy::kNever;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--appendfsync must be always, everysec or no, got '",
                     appendfsync, "'"));
  }
  if (appendonly == "no") return std::nullopt;
  if (appendonly != "yes") {
    return absl::InvalidArgumentError(
        absl::StrCat("--appendonly must be yes or no, got '", appendonly, "'"));
  }
  if (absl::GetFlag(FLAGS_dir).empty()) {
    return absl::InvalidArgumentError("--dir must not be empty");
  }
  return policy;
}

// The data to serve: loaded from the snapshot when --load asks for it and
// the file exists, new and empty otherwise.
absl::StatusOr<std::unique_ptr<ServerData>> LoadOrCreateData(
    const std::string& snapshot_file, bool load,
    const feedcore::EngineOptions& engine_options,
    const feedcore::LeaderboardOptions& board_options) {
  if (load) {
    std::error_code error;
    const bool exists = std::filesystem::exists(snapshot_file, error);
    if (error) {
      return absl::UnavailableError(
          absl::StrCat("cannot check ", snapshot_file, ": ", error.message()));
    }
    if (exists) {
      auto data =
          ServerData::Load(snapshot_file, engine_options, board_options);
      if (data.ok()) {
        Log(absl::StrCat("loaded snapshot ", snapshot_file, " (",
                         (*data)->boards().size(), " sorted-set keys)"));
      }
      return data;
    }
    Log(absl::StrCat("no snapshot at ", snapshot_file, "; starting empty"));
  }
  return ServerData::CreateEmpty(engine_options, board_options);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "A Redis-protocol server for feedcore feeds and leaderboards. "
      "See docs/server.md.");
  absl::ParseCommandLine(argc, argv);

  ServerOptions options;
  options.address = absl::GetFlag(FLAGS_address);
  options.port = absl::GetFlag(FLAGS_port);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.max_clients = absl::GetFlag(FLAGS_max_clients);
  options.limits.max_bulk_bytes = absl::GetFlag(FLAGS_max_bulk_bytes);
  options.limits.max_args = absl::GetFlag(FLAGS_max_args);
  options.limits.max_inline_bytes = absl::GetFlag(FLAGS_max_inline_bytes);
  options.limits.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);

  const std::string snapshot_file = absl::GetFlag(FLAGS_snapshot_file);
  const bool load = absl::GetFlag(FLAGS_load);
  const bool snapshot_on_exit = absl::GetFlag(FLAGS_snapshot_on_exit);
  if (snapshot_file.empty() && (load || snapshot_on_exit)) {
    return Fail("flags",
                absl::InvalidArgumentError("--load and --snapshot_on_exit need "
                                           "--snapshot_file=PATH"));
  }

  absl::StatusOr<std::optional<feedcore::FsyncPolicy>> append_only =
      ParsePersistenceFlags();
  if (!append_only.ok()) return Fail("flags", append_only.status());
  if (append_only->has_value() && load) {
    return Fail("flags", absl::InvalidArgumentError(
                             "--load and --appendonly yes exclude each other: "
                             "the append-only files in --dir are what the "
                             "server recovers"));
  }

  feedcore::EngineOptions engine_options;
  engine_options.shards = absl::GetFlag(FLAGS_engine_shards);
  engine_options.fanout_threads = absl::GetFlag(FLAGS_fanout_threads);
  engine_options.max_payload_bytes = absl::GetFlag(FLAGS_max_payload_bytes);
  feedcore::LeaderboardOptions board_options;
  board_options.partitions = absl::GetFlag(FLAGS_leaderboard_partitions);
  absl::StatusOr<std::unique_ptr<ServerData>> data;
  if (append_only->has_value()) {
    feedcore::server::AppendOnlyOptions aof;
    aof.directory = absl::GetFlag(FLAGS_dir);
    aof.fsync = **append_only;
    data = ServerData::OpenAppendOnly(aof, engine_options, board_options);
    if (data.ok()) {
      const feedcore::DurabilityStats stats =
          (*data)->append_only()->store().Stats();
      const feedcore::server::NamesRecovery& names =
          (*data)->append_only()->names_recovery();
      Log(absl::StrCat(
          "recovered ", aof.directory, ": ", stats.recovered_records,
          " log records in ", stats.recovery_micros, " us, ",
          (*data)->boards().size(), " sorted-set keys, ", names.records,
          " name records",
          stats.recovered_torn_tail ? "; cut a torn log tail" : "",
          names.torn_tail ? "; cut a torn names tail" : "",
          names.unnamed_members_removed > 0
              ? absl::StrCat("; removed ", names.unnamed_members_removed,
                             " members whose names were lost")
              : ""));
    }
  } else {
    data = LoadOrCreateData(snapshot_file, load, engine_options, board_options);
  }
  if (!data.ok()) return Fail("start-up", data.status());

  // Declared after the data it saves and before the dispatcher that uses
  // it: destroyed after every command has finished, and waiting for a
  // background save before the data goes.
  SnapshotSaver saver(snapshot_file, [&data](const std::string& path) {
    return (*data)->Save(path);
  });
  auto dispatcher = CommandDispatcher::Create(
      &(*data)->engine(), &(*data)->boards(), &saver, (*data)->append_only());
  if (!dispatcher.ok()) return Fail("commands", dispatcher.status());

  auto server = FeedServer::Create(options, dispatcher->get());
  if (!server.ok()) return Fail("server", server.status());

  std::printf("feedcore-server listening on %s:%u\n", options.address.c_str(),
              static_cast<unsigned>((*server)->port()));
  std::fflush(stdout);
  // Returns once no connection is left, so no command runs after it.
  (*server)->Run();
  saver.WaitUntilIdle();
  if ((*data)->append_only() != nullptr) {
    (*data)->append_only()->WaitForRewrite();
  }
  if (snapshot_on_exit) {
    if (absl::Status status = saver.Save(); !status.ok()) {
      return Fail("snapshot on exit", status);
    }
    Log(absl::StrCat("saved snapshot ", snapshot_file));
  }
  std::printf("feedcore-server stopped\n");
  return EXIT_SUCCESS;
}
