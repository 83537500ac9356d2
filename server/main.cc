// feedcore-server: a feedcore FeedEngine and its leaderboards behind a
// Redis-compatible (RESP2/RESP3) TCP interface, so that redis-cli,
// redis-benchmark and Redis client libraries can drive them.
//
//   feedcore-server --port=7379 --threads=4
//   feedcore-server --snapshot_file=/var/lib/feeds.snap --load
//   feedcore-server --appendonly yes --dir /var/lib/feedcore
//   feedcore-server /etc/feedcore/feedcore.conf --port=7380
//
// The optional first argument that is not a flag is a config file in
// redis.conf syntax (config_file.h); flags on the command line override
// it. --help (-h) lists the flags, --version (-v) prints the version.
//
// Prints "feedcore-server listening on <address>:<port>" once it accepts
// connections; stops cleanly on SIGINT or SIGTERM (saving first with
// --snapshot_on_exit). docs/server.md lists the commands and flags.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "command_dispatcher.h"
#include "config_file.h"
#include "feed_paging.h"
#include "feed_server.h"
#include "feedcore/feedcore.h"
#include "pubsub_hub.h"
#include "server_config.h"
#include "server_data.h"
#include "server_options.h"
#include "server_settings.h"
#include "server_version.h"
#include "snapshot_saver.h"

ABSL_FLAG(std::string, address, "127.0.0.1",
          "IP address to listen on; anything but loopback needs a password "
          "(--requirepass_file) or --protected_mode=no");
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
ABSL_FLAG(int64_t, timeout, 0,
          "close a connection after this many seconds without progress "
          "(no command, or a reply left unread); 0 = never");
ABSL_FLAG(size_t, client_query_buffer_limit, size_t{1} << 30,
          "close a client whose unfinished command holds more bytes than "
          "this; 0 = no limit");
ABSL_FLAG(size_t, client_output_buffer_limit, size_t{256} << 20,
          "close a client whose unwritten replies hold more bytes than this; "
          "0 = no limit");
ABSL_FLAG(size_t, client_query_buffer_total_limit, size_t{256} << 20,
          "close a client whose read takes the unfinished commands of all "
          "clients past this many bytes; 0 = no limit");
ABSL_FLAG(std::string, requirepass, "",
          "password clients must give with AUTH before other commands; "
          "visible in ps, so prefer --requirepass_file");
ABSL_FLAG(std::string, requirepass_file, "",
          "file whose content (without trailing newlines) is the password");
ABSL_FLAG(bool, protected_mode, true,
          "refuse to listen on a non-loopback address without a password");
ABSL_FLAG(size_t, leaderboard_partitions, 1,
          "write partitions of each sorted-set key's leaderboard: more let "
          "threads write one key at once, and every read merges them");
ABSL_FLAG(size_t, engine_shards, 0,
          "lock shards of the feed engine; 0 picks from the hardware");
ABSL_FLAG(size_t, fanout_threads, 1,
          "worker threads that share large fan-outs with the publisher");
ABSL_FLAG(size_t, hybrid_fanout_threshold, 0,
          "followers past which an actor's publishes are merged into its "
          "followers' reads instead of copied; 0 = always copy");
ABSL_FLAG(int64_t, inactive_after_seconds, 0,
          "readers idle this long stop getting copies until their next read "
          "rebuilds their timeline; 0 keeps every reader materialized");
ABSL_FLAG(size_t, repost_window, 0,
          "a home feed leaves out a repost (FEED.PUBLISH ... REPOSTOF id) "
          "while the activity it reposts, or an older repost of it, is "
          "among this many entries just older than it; 0 shows every "
          "repost");
ABSL_FLAG(std::string, repost_kinds, "",
          "the activity kinds reposts are published with, e.g. 1 or 1,4; "
          "needed with --repost_window");
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
using feedcore::server::ShutdownKind;
using feedcore::server::SnapshotSaver;

// The password from --requirepass or --requirepass_file (not both).
absl::StatusOr<std::string> Password() {
  const std::string inline_password = absl::GetFlag(FLAGS_requirepass);
  const std::string path = absl::GetFlag(FLAGS_requirepass_file);
  if (path.empty()) return inline_password;
  if (!inline_password.empty()) {
    return absl::InvalidArgumentError(
        "give the password with --requirepass or --requirepass_file, not both");
  }
  std::ifstream file(path, std::ios::binary);
  std::string password((std::istreambuf_iterator<char>(file)),
                       std::istreambuf_iterator<char>());
  if (!file.good() && !file.eof()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read --requirepass_file ", path, ": ", std::strerror(errno)));
  }
  // A file written by `echo` ends in a newline that is not part of it.
  while (!password.empty() &&
         (password.back() == '\n' || password.back() == '\r')) {
    password.pop_back();
  }
  if (password.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--requirepass_file ", path, " is empty or unreadable"));
  }
  return password;
}

// Redis spells its settings with dashes (--protected-mode); flags here use
// underscores. Rewrites "--name-with-dashes[=value]" to underscores when
// that names a flag of this program, so both spellings work, and records
// in `given` each flag the command line sets (so that it overrides the
// config file).
std::vector<char*> NormalizeFlagNames(int argc, char** argv,
                                      std::vector<std::string>& storage,
                                      absl::flat_hash_set<std::string>& given) {
  storage.reserve(argc);
  std::vector<char*> out;
  bool flags_ended = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") flags_ended = true;
    if (i > 0 && !flags_ended && arg.size() > 1 && arg[0] == '-') {
      const size_t dashes = arg.compare(0, 2, "--") == 0 ? 2 : 1;
      const size_t end = std::min(arg.find('='), arg.size());
      std::string name = arg.substr(dashes, end - dashes);
      std::replace(name.begin(), name.end(), '-', '_');
      const bool negated = name.rfind("no", 0) == 0 &&
                           absl::FindCommandLineFlag(name.substr(2)) != nullptr;
      if (absl::FindCommandLineFlag(name) != nullptr) {
        given.insert(name);
        arg = "--" + name + arg.substr(end);
      } else if (negated) {
        given.insert(name.substr(2));
        arg = "--" + name + arg.substr(end);
      }
    }
    storage.push_back(std::move(arg));
    out.push_back(storage.back().data());
  }
  return out;
}

// The flag above behind a setting of server_settings.h; null if there is
// none (CheckSettingsMatchFlags refuses to start then).
const absl::CommandLineFlag* SettingFlag(
    const feedcore::server::SettingSpec& spec) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(spec.name);
  return flag != nullptr && flag->Filename() == __FILE__ ? flag : nullptr;
}

absl::Status CheckSettingsMatchFlags() {
  size_t flags_here = 0;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (flag->Filename() != __FILE__) continue;
    ++flags_here;
    if (feedcore::server::FindSetting(feedcore::server::ServerSettings(),
                                      name) == nullptr) {
      return absl::InternalError(
          absl::StrCat("flag --", name, " is missing in server_settings.cc"));
    }
  }
  for (const feedcore::server::SettingSpec& spec :
       feedcore::server::ServerSettings()) {
    if (SettingFlag(spec) == nullptr) {
      return absl::InternalError(
          absl::StrCat("setting ", spec.name, " has no flag"));
    }
  }
  if (flags_here != feedcore::server::ServerSettings().size()) {
    return absl::InternalError("server_settings.cc lists a flag twice");
  }
  return absl::OkStatus();
}

void PrintHelp() {
  std::printf(
      "Usage: feedcore-server [CONFIG_FILE] [--flag=value ...]\n\n"
      "A Redis-protocol server for feedcore feeds and leaderboards "
      "(docs/server.md).\n"
      "CONFIG_FILE is in redis.conf syntax: one 'name value' a line, names "
      "as below\n"
      "with dashes or underscores; flags on the command line override it.\n"
      "Flags may be spelled with dashes too (--protected-mode=no).\n\n"
      "  -h, --help     print this and exit\n"
      "  -v, --version  print the version and exit\n\n");
  for (const feedcore::server::SettingSpec& spec :
       feedcore::server::ServerSettings()) {
    const absl::CommandLineFlag* flag = SettingFlag(spec);
    if (flag == nullptr) continue;
    std::string notes;
    for (const std::string& alias : spec.aliases) {
      absl::StrAppend(&notes, "; '", alias, "' in a config file");
    }
    if (spec.changeable_while_serving) {
      absl::StrAppend(&notes, "; CONFIG SET changes it while serving");
    }
    std::printf(
        "  --%s (default: %s)\n      %s%s\n", spec.name.c_str(),
        flag->DefaultValue().empty() ? "\"\"" : flag->DefaultValue().c_str(),
        flag->Help().c_str(), notes.c_str());
  }
}

// What --help, -h, --version and -v ask for, before any other flag is
// parsed: nullopt to go on, an exit code otherwise.
std::optional<int> HandleInfoFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-h" || arg == "-help") {
      PrintHelp();
      return EXIT_SUCCESS;
    }
    if (arg == "--version" || arg == "-v" || arg == "-version") {
      std::printf("feedcore-server %s\n", feedcore::server::kFeedcoreVersion);
      return EXIT_SUCCESS;
    }
  }
  return std::nullopt;
}

int Fail(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "feedcore-server: %s: %s\n", what.c_str(),
               std::string(status.message()).c_str());
  return EXIT_FAILURE;
}

// Where a flag's value came from in the config file ("FILE:LINE"), by flag
// name; flags the file did not set are absent.
using ConfigOrigins = absl::flat_hash_map<std::string, std::string>;

// Sets every flag `path` names that the command line did not.
absl::StatusOr<ConfigOrigins> ApplyConfigFile(
    const std::string& path, const absl::flat_hash_set<std::string>& given) {
  absl::StatusOr<std::vector<feedcore::server::ConfigDirective>> directives =
      feedcore::server::ReadConfigFile(path,
                                       feedcore::server::ServerSettings());
  if (!directives.ok()) return directives.status();
  ConfigOrigins origins;
  for (const feedcore::server::ConfigDirective& directive : *directives) {
    if (given.contains(directive.name)) continue;
    origins[directive.name] = absl::StrCat(path, ":", directive.line);
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(directive.name);
    std::string error;
    if (flag == nullptr || !flag->ParseFrom(directive.value, &error)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", directive.line, ": ", directive.name, ": ", error));
    }
  }
  return origins;
}

// Fails for a flag refused after parsing; when the file set the flag the
// message names first (--name), says the file and line too, so that the
// line to fix is named as for a line refused while parsing.
int FailFlags(const ConfigOrigins& origins, const absl::Status& status) {
  const absl::string_view message = status.message();
  size_t first = message.size();
  std::string origin;
  for (const auto& [name, where] : origins) {
    const std::string flag = "--" + name;
    for (size_t at = message.find(flag); at != absl::string_view::npos;
         at = message.find(flag, at + 1)) {
      const size_t end = at + flag.size();
      const bool whole =
          end == message.size() ||
          !(absl::ascii_isalnum(message[end]) || message[end] == '_');
      if (whole && at < first) {
        first = at;
        origin = where;
      }
    }
  }
  return Fail(origin.empty() ? "flags" : origin, status);
}

// Every setting's value as its flag prints it, for CONFIG GET.
absl::flat_hash_map<std::string, std::string> SettingTexts() {
  absl::flat_hash_map<std::string, std::string> texts;
  for (const feedcore::server::SettingSpec& spec :
       feedcore::server::ServerSettings()) {
    if (const absl::CommandLineFlag* flag = SettingFlag(spec)) {
      texts[spec.name] = flag->CurrentValue();
    }
  }
  return texts;
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
  // A write past the file size limit (ulimit -f) is then an error the
  // files report (EFBIG, refused like a full disk), not the end of the
  // process.
  std::signal(SIGXFSZ, SIG_IGN);
  absl::SetProgramUsageMessage(
      "A Redis-protocol server for feedcore feeds and leaderboards. "
      "See docs/server.md.");
  if (absl::Status status = CheckSettingsMatchFlags(); !status.ok()) {
    return Fail("settings", status);
  }
  if (std::optional<int> exit_code = HandleInfoFlags(argc, argv)) {
    return *exit_code;
  }
  std::vector<std::string> storage;
  absl::flat_hash_set<std::string> given;
  std::vector<char*> args = NormalizeFlagNames(argc, argv, storage, given);
  const std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  if (positional.size() > 2) {
    return Fail("arguments",
                absl::InvalidArgumentError(absl::StrCat(
                    "one config file at most, got '", positional[1], "' and '",
                    positional[2], "'")));
  }
  ConfigOrigins origins;
  if (positional.size() == 2) {
    absl::StatusOr<ConfigOrigins> applied =
        ApplyConfigFile(positional[1], given);
    if (!applied.ok()) return Fail("config file", applied.status());
    origins = *std::move(applied);
  }

  ServerOptions options;
  options.address = absl::GetFlag(FLAGS_address);
  options.port = absl::GetFlag(FLAGS_port);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.max_clients = absl::GetFlag(FLAGS_max_clients);
  options.limits.max_bulk_bytes = absl::GetFlag(FLAGS_max_bulk_bytes);
  options.limits.max_args = absl::GetFlag(FLAGS_max_args);
  options.limits.max_inline_bytes = absl::GetFlag(FLAGS_max_inline_bytes);
  options.limits.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  options.idle_timeout_seconds = absl::GetFlag(FLAGS_timeout);
  options.client_query_buffer_limit =
      absl::GetFlag(FLAGS_client_query_buffer_limit);
  options.client_output_buffer_limit =
      absl::GetFlag(FLAGS_client_output_buffer_limit);
  options.client_query_buffer_total_limit =
      absl::GetFlag(FLAGS_client_query_buffer_total_limit);
  options.protected_mode = absl::GetFlag(FLAGS_protected_mode);
  absl::StatusOr<std::string> password = Password();
  if (!password.ok()) return FailFlags(origins, password.status());
  options.requirepass = *password;
  // Checked before any data is loaded, so a refused configuration says so
  // at once.
  if (absl::Status status = feedcore::server::ValidateServerOptions(options);
      !status.ok()) {
    return FailFlags(origins, status);
  }

  const std::string snapshot_file = absl::GetFlag(FLAGS_snapshot_file);
  const bool load = absl::GetFlag(FLAGS_load);
  const bool snapshot_on_exit = absl::GetFlag(FLAGS_snapshot_on_exit);
  if (snapshot_file.empty() && (load || snapshot_on_exit)) {
    return FailFlags(origins, absl::InvalidArgumentError(
                                  "--load and --snapshot_on_exit need "
                                  "--snapshot_file=PATH"));
  }

  absl::StatusOr<std::optional<feedcore::FsyncPolicy>> append_only =
      ParsePersistenceFlags();
  if (!append_only.ok()) return FailFlags(origins, append_only.status());
  if (append_only->has_value() && load) {
    return FailFlags(origins,
                     absl::InvalidArgumentError(
                         "--load and --appendonly yes exclude each other: "
                         "the append-only files in --dir are what the "
                         "server recovers"));
  }

  // Declared before the engine whose deliveries feed it, so it outlives
  // the engine's delivery thread; the connections' subscriptions end
  // before it too.
  feedcore::server::PubSubHub pubsub;
  feedcore::EngineOptions engine_options;
  engine_options.shards = absl::GetFlag(FLAGS_engine_shards);
  engine_options.fanout_threads = absl::GetFlag(FLAGS_fanout_threads);
  engine_options.hybrid_fanout_threshold =
      absl::GetFlag(FLAGS_hybrid_fanout_threshold);
  const int64_t inactive_after = absl::GetFlag(FLAGS_inactive_after_seconds);
  if (inactive_after < 0 ||
      inactive_after > feedcore::kMaxTtl / feedcore::kMicrosPerSecond) {
    return FailFlags(
        origins,
        absl::InvalidArgumentError(absl::StrCat(
            "--inactive_after_seconds is ", inactive_after, "; it must be 0..",
            feedcore::kMaxTtl / feedcore::kMicrosPerSecond)));
  }
  engine_options.inactive_after = inactive_after * feedcore::kMicrosPerSecond;
  engine_options.max_payload_bytes = absl::GetFlag(FLAGS_max_payload_bytes);
  engine_options.reposts.window = absl::GetFlag(FLAGS_repost_window);
  if (const std::string kinds = absl::GetFlag(FLAGS_repost_kinds);
      !kinds.empty()) {
    absl::StatusOr<uint64_t> bits =
        feedcore::server::ParseKindList(kinds, "--repost_kinds");
    if (!bits.ok()) return FailFlags(origins, bits.status());
    engine_options.reposts.kinds.kinds = *bits;
  }
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
  // Outlives the dispatcher and the server, which read it.
  feedcore::server::ServerConfig config(options, SettingTexts());
  feedcore::server::DispatcherOptions dispatcher_options;
  dispatcher_options.config = &config;
  dispatcher_options.names = &(*data)->names();
  if (absl::Status attached =
          pubsub.AttachFeeds(&(*data)->engine(), &(*data)->names());
      !attached.ok()) {
    return Fail("feed channels", attached);
  }
  dispatcher_options.pubsub = &pubsub;
  auto dispatcher =
      CommandDispatcher::Create(&(*data)->engine(), &(*data)->boards(), &saver,
                                (*data)->append_only(), dispatcher_options);
  if (!dispatcher.ok()) return Fail("commands", dispatcher.status());

  auto server = FeedServer::Create(options, dispatcher->get());
  if (!server.ok()) return Fail("server", server.status());
  // SHUTDOWN: stop as on SIGTERM, saving on the way out as it asks. Set
  // on a connection's thread, read after every thread has ended.
  std::atomic<bool> save_on_exit{snapshot_on_exit};
  (*dispatcher)
      ->SetShutdownHandler([&save_on_exit, &server](ShutdownKind kind) {
        if (kind != ShutdownKind::kDefault) {
          save_on_exit.store(kind == ShutdownKind::kSave);
        }
        (*server)->Stop();
      });

  std::printf("feedcore-server listening on %s:%u\n", options.address.c_str(),
              static_cast<unsigned>((*server)->port()));
  std::fflush(stdout);
  // Returns once no connection is left, so no command runs after it.
  (*server)->Run();
  saver.WaitUntilIdle();
  if ((*data)->append_only() != nullptr) {
    (*data)->append_only()->WaitForRewrite();
  }
  if (save_on_exit.load()) {
    if (absl::Status status = saver.Save(); !status.ok()) {
      return Fail("snapshot on exit", status);
    }
    Log(absl::StrCat("saved snapshot ", snapshot_file));
  }
  std::printf("feedcore-server stopped\n");
  return EXIT_SUCCESS;
}
