// Unit tests of CONFIG GET, SET and RESETSTAT (server/config_commands.h)
// through the command dispatcher: glob patterns, RESP2 and RESP3 replies,
// Redis's error texts, all-or-nothing SET, and the changed settings seen
// by ServerConfig's readers and by new sessions.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "dispatcher_fixture.h"
#include "server_config.h"

namespace feedcore::server {
namespace {

// A dispatcher over `config`, which the fixture does not own.
DispatcherFixtureOptions OptionsWith(ServerConfig* config) {
  DispatcherFixtureOptions o;
  o.dispatcher.config = config;
  return o;
}

ServerConfig MakeConfig(ServerOptions options = {}) {
  return ServerConfig(options, {{"port", "7379"},
                                {"protected_mode", "true"},
                                {"load", "false"},
                                {"dir", "/var/lib/feedcore"}});
}

std::string Pair(const std::string& name, const std::string& value) {
  return Bulk(name) + Bulk(value);
}

constexpr char kImmutablePort[] =
    "-ERR CONFIG SET failed (possibly related to argument 'port') - can't set "
    "immutable config\r\n";

TEST_CASE("CONFIG GET takes several glob patterns, in Redis's dashed names") {
  ServerConfig config = MakeConfig();
  DispatcherFixture f(OptionsWith(&config));
  CHECK(f.Run({"CONFIG", "GET", "timeout", "maxclients"}) ==
        "*4\r\n" + Pair("maxclients", "10000") + Pair("timeout", "0"));
  CHECK(f.Run({"CONFIG", "GET", "PROTECTED-MODE", "protected_mode"}) ==
        "*2\r\n" + Pair("protected-mode", "yes"));
  CHECK(f.Run({"CONFIG", "GET", "client-*-limit"}) ==
        "*6\r\n" + Pair("client-query-buffer-limit", "1073741824") +
            Pair("client-output-buffer-limit", "268435456") +
            Pair("client-query-buffer-total-limit", "268435456"));
  CHECK(f.Run({"CONFIG", "GET", "d?r", "nosuch"}) ==
        "*2\r\n" + Pair("dir", "/var/lib/feedcore"));
  CHECK(f.Run({"CONFIG", "GET", "nosuch"}) == "*0\r\n");
  CHECK(f.Run({"HELLO", "3"}).rfind("%8", 0) == 0);
  CHECK(f.Run({"CONFIG", "GET", "port", "load"}) ==
        "%2\r\n" + Pair("port", "7379") + Pair("load", "no"));
  CHECK(f.Run({"CONFIG", "GET"}) ==
        "-ERR wrong number of arguments for 'config|get' command\r\n");
}

TEST_CASE("CONFIG SET changes the settings changeable while serving") {
  ServerConfig config = MakeConfig();
  DispatcherFixture f(OptionsWith(&config));
  CHECK(f.Run({"CONFIG", "SET", "timeout", "30", "maxclients", "50",
               "client-output-buffer-limit", "1mb", "client_query_buffer_limit",
               "2k", "client-query-buffer-total-limit", "0"}) == "+OK\r\n");
  CHECK(config.idle_timeout_seconds() == 30);
  CHECK(config.max_clients() == 50);
  CHECK(config.client_output_buffer_limit() == 1048576);
  CHECK(config.client_query_buffer_limit() == 2000);
  CHECK(config.client_query_buffer_total_limit() == 0);
  CHECK(f.Run({"CONFIG", "GET", "timeout", "max-clients"}) ==
        "*4\r\n" + Pair("max-clients", "50") + Pair("timeout", "30"));
}

TEST_CASE(
    "CONFIG SET validates every pair first and changes nothing on one "
    "bad value") {
  ServerConfig config = MakeConfig();
  DispatcherFixture f(OptionsWith(&config));
  const auto unchanged = [&config] {
    CHECK(config.idle_timeout_seconds() == 0);
    CHECK(config.max_clients() == 10000);
    CHECK(config.client_output_buffer_limit() == 268435456);
  };
  CHECK(f.Run({"CONFIG", "SET", "timeout", "5", "maxclients", "abc"}) ==
        "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - "
        "argument couldn't be parsed into an integer\r\n");
  unchanged();
  CHECK(f.Run({"CONFIG", "SET", "timeout", "5", "port", "1"}) ==
        kImmutablePort);
  unchanged();
  CHECK(f.Run({"CONFIG", "SET", "timeout", "5", "nosuch", "1"}) ==
        "-ERR Unknown option or number of arguments for CONFIG SET - "
        "'nosuch'\r\n");
  unchanged();
  CHECK(f.Run({"CONFIG", "SET", "timeout", "5", "timeout", "6"}) ==
        "-ERR CONFIG SET failed (possibly related to argument 'timeout') - "
        "duplicate parameter\r\n");
  unchanged();
  CHECK(f.Run({"CONFIG", "SET", "timeout", "5", "client-output-buffer-limit",
               "1x"}) ==
        "-ERR CONFIG SET failed (possibly related to argument "
        "'client-output-buffer-limit') - argument must be a memory value\r\n");
  unchanged();
  CHECK(StartsWith(
      f.Run({"CONFIG", "SET", "timeout", "5", "client-output-buffer-limit",
             "10"}),
      "-ERR CONFIG SET failed (possibly related to argument "
      "'client-output-buffer-limit') - --client_output_buffer_limit must be 0 "
      "(no limit) or at least 1024 bytes, got 10"));
  unchanged();
  CHECK(StartsWith(f.Run({"CONFIG", "SET", "maxclients", "0"}),
                   "-ERR CONFIG SET failed (possibly related to argument "
                   "'maxclients') - --max_clients must be 1..1000000"));
  CHECK(StartsWith(f.Run({"CONFIG", "SET", "timeout", "-1"}),
                   "-ERR CONFIG SET failed (possibly related to argument "
                   "'timeout') - argument must not be negative"));
  unchanged();
  CHECK(f.Run({"CONFIG", "SET", "timeout"}) ==
        "-ERR wrong number of arguments for 'config|set' command\r\n");
  CHECK(f.Run({"CONFIG", "SET", "timeout", "1", "maxclients"}) ==
        "-ERR syntax error\r\n");
  unchanged();
  for (const char* immutable :
       {"address", "bind", "protected-mode", "requirepass-file", "dir",
        "appendonly", "max-bulk-bytes", "save"}) {
    CAPTURE(immutable);
    CHECK(StartsWith(f.Run({"CONFIG", "SET", immutable, "1"}),
                     "-ERR CONFIG SET failed (possibly related to argument"));
  }
  unchanged();
}

TEST_CASE("CONFIG SET requirepass asks new sessions for the password") {
  ServerConfig config = MakeConfig();
  DispatcherFixture f(OptionsWith(&config));
  CHECK(f.Run({"CONFIG", "SET", "requirepass", "s3cret"}) == "+OK\r\n");
  // This session was authenticated before; it stays so, as in Redis.
  CHECK(f.Run({"PING"}) == "+PONG\r\n");
  f.NewSession();
  CHECK(f.Run({"PING"}) == "-NOAUTH Authentication required.\r\n");
  CHECK(StartsWith(f.Run({"AUTH", "wrong"}), "-WRONGPASS"));
  CHECK(f.Run({"AUTH", "s3cret"}) == "+OK\r\n");
  CHECK(f.Run({"CONFIG", "GET", "requirepass"}) ==
        "*2\r\n" + Pair("requirepass", "s3cret"));
  CHECK(f.Run({"CONFIG", "SET", "requirepass", ""}) == "+OK\r\n");
  f.NewSession();
  CHECK(f.Run({"PING"}) == "+PONG\r\n");
}

TEST_CASE(
    "CONFIG SET refuses to drop the password of a server open to the "
    "network") {
  ServerOptions options;
  options.address = "0.0.0.0";
  options.requirepass = "s3cret";
  ServerConfig config = MakeConfig(options);
  DispatcherFixture f(OptionsWith(&config));
  f.Run({"AUTH", "s3cret"});
  CHECK(StartsWith(f.Run({"CONFIG", "SET", "requirepass", ""}),
                   "-ERR CONFIG SET failed (possibly related to argument "
                   "'requirepass') - refusing to listen on 0.0.0.0 without a "
                   "password"));
  CHECK(config.requirepass() == "s3cret");
}

TEST_CASE("CONFIG RESETSTAT zeroes the counters INFO reports") {
  ServerConfig config = MakeConfig();
  DispatcherFixture f(OptionsWith(&config));
  f.dispatcher().stats().total_connections_received = 7;
  f.dispatcher().stats().rejected_connections = 2;
  f.dispatcher().stats().connected_clients = 3;
  f.Run({"PING"});
  CHECK(f.Run({"INFO", "commandstats"}).find("cmdstat_ping:calls=1") !=
        std::string::npos);
  CHECK(f.Run({"CONFIG", "RESETSTAT"}) == "+OK\r\n");
  CHECK(f.dispatcher().stats().total_connections_received == 0);
  CHECK(f.dispatcher().stats().rejected_connections == 0);
  // What describes the present stays.
  CHECK(f.dispatcher().stats().connected_clients == 3);
  CHECK(f.Run({"INFO", "commandstats"}).find("cmdstat_ping") ==
        std::string::npos);
  CHECK(f.Run({"CONFIG", "RESETSTAT", "x"}) ==
        "-ERR wrong number of arguments for 'config|resetstat' command\r\n");
  CHECK(f.Run({"CONFIG", "FOO"}) ==
        "-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n");
}

}  // namespace
}  // namespace feedcore::server
