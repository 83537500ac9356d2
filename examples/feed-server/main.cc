// feedcore-server: a feedcore FeedEngine and its leaderboards behind a
// Redis-compatible (RESP2/RESP3) TCP interface, so that redis-cli,
// redis-benchmark and Redis client libraries can drive them.
//
//   feedcore-server --port=7379 --threads=4
//
// Prints "feedcore-server listening on <address>:<port>" once it accepts
// connections; stops cleanly on SIGINT or SIGTERM. docs/server.md lists the
// commands and flags.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "command_dispatcher.h"
#include "feed_server.h"
#include "feedcore/feedcore.h"
#include "leaderboard_store.h"
#include "server_options.h"

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

namespace {

using feedcore::server::CommandDispatcher;
using feedcore::server::FeedServer;
using feedcore::server::LeaderboardStore;
using feedcore::server::ServerOptions;

int Fail(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "feedcore-server: %s: %s\n", what.c_str(),
               std::string(status.message()).c_str());
  return EXIT_FAILURE;
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

  feedcore::EngineOptions engine_options;
  engine_options.shards = absl::GetFlag(FLAGS_engine_shards);
  engine_options.fanout_threads = absl::GetFlag(FLAGS_fanout_threads);
  engine_options.max_payload_bytes = absl::GetFlag(FLAGS_max_payload_bytes);
  auto engine = feedcore::FeedEngine::Create(engine_options);
  if (!engine.ok()) return Fail("feed engine options", engine.status());

  feedcore::LeaderboardOptions board_options;
  board_options.partitions = absl::GetFlag(FLAGS_leaderboard_partitions);
  auto boards = LeaderboardStore::Create(board_options);
  if (!boards.ok()) return Fail("leaderboard options", boards.status());

  auto dispatcher = CommandDispatcher::Create(engine->get(), boards->get());
  if (!dispatcher.ok()) return Fail("commands", dispatcher.status());

  auto server = FeedServer::Create(options, dispatcher->get());
  if (!server.ok()) return Fail("server", server.status());

  std::printf("feedcore-server listening on %s:%u\n", options.address.c_str(),
              static_cast<unsigned>((*server)->port()));
  std::fflush(stdout);
  (*server)->Run();
  std::printf("feedcore-server stopped\n");
  return EXIT_SUCCESS;
}
