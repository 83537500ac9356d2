// Unit tests of the config file parser (server/config_file.h) with the
// server's own settings: Redis's splitting and quoting, names in either
// spelling and Redis's aliases, the value kinds and their units, and an
// error naming the file and line for every kind of bad line.
#include "config_file.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "server_settings.h"

namespace feedcore::server {
namespace {

std::vector<std::string> Split(const std::string& line) {
  return SplitConfigLine(line).value();
}

std::vector<ConfigDirective> Parse(const std::string& text) {
  absl::StatusOr<std::vector<ConfigDirective>> directives =
      ParseConfigText(text, "f.conf", ServerSettings());
  REQUIRE_MESSAGE(directives.ok(), directives.status().message());
  return *directives;
}

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<std::vector<ConfigDirective>> directives =
      ParseConfigText(text, "f.conf", ServerSettings());
  REQUIRE_FALSE(directives.ok());
  CHECK(directives.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(directives.status().message());
}

TEST_CASE("lines split as Redis splits them") {
  CHECK(Split("  port   7380 ") == std::vector<std::string>{"port", "7380"});
  CHECK(Split("requirepass \"a b\\tc\\x41\\\\\\\"\"") ==
        std::vector<std::string>{"requirepass", "a b\tcA\\\""});
  CHECK(Split("requirepass 'it\\'s \\n'") ==
        std::vector<std::string>{"requirepass", "it's \\n"});
  CHECK(Split("requirepass \"\"") ==
        std::vector<std::string>{"requirepass", ""});
  CHECK(Split("").empty());
  CHECK_FALSE(SplitConfigLine("dir \"/tmp").ok());
  CHECK_FALSE(SplitConfigLine("dir '/tmp").ok());
  CHECK_FALSE(SplitConfigLine("dir \"/tmp\"x").ok());
}

TEST_CASE("names with dashes or underscores, any case, and Redis's aliases") {
  const std::vector<ConfigDirective> directives = Parse(
      "# a comment\n"
      "\n"
      "   # an indented comment\n"
      "Protected-Mode no\n"
      "requirepass-file /etc/feedcore/password\n"
      "max_clients 10\n"
      "maxclients 20\n"
      "bind 0.0.0.0\n"
      "TIMEOUT 30\r\n");
  REQUIRE(directives.size() == 6);
  CHECK(directives[0].name == "protected_mode");
  CHECK(directives[0].value == "false");
  CHECK(directives[0].line == 4);
  CHECK(directives[1].name == "requirepass_file");
  CHECK(directives[1].value == "/etc/feedcore/password");
  // Given twice: both are returned in order, so the last wins.
  CHECK(directives[2].name == "max_clients");
  CHECK(directives[3].name == "max_clients");
  CHECK(directives[3].value == "20");
  CHECK(directives[4].name == "address");
  CHECK(directives[4].value == "0.0.0.0");
  CHECK(directives[5].name == "timeout");
  CHECK(directives[5].value == "30");
  CHECK(directives[5].line == 9);
}

TEST_CASE("booleans and sizes take Redis's spellings and units") {
  const std::vector<ConfigDirective> directives = Parse(
      "load YES\nsnapshot_on_exit true\nprotected-mode False\n"
      "client-output-buffer-limit 1k\nclient-query-buffer-limit 1KB\n"
      "max-bulk-bytes 2m\nmax-request-bytes 2Mb\n"
      "client-query-buffer-total-limit 1g\nmax-payload-bytes 1gb\n"
      "max-inline-bytes 4096\n");
  std::vector<std::string> values;
  for (const ConfigDirective& d : directives) values.push_back(d.value);
  CHECK(values == std::vector<std::string>{"true", "true", "false", "1000",
                                           "1024", "2000000", "2097152",
                                           "1000000000", "1073741824", "4096"});
  CHECK(ParseByteSize("9223372036854775807").value() == INT64_MAX);
  CHECK_FALSE(ParseByteSize("9223372036854775807k").ok());
  CHECK_FALSE(ParseByteSize("-1").ok());
  CHECK_FALSE(ParseByteSize("k").ok());
  CHECK_FALSE(ParseByteSize("1 k").ok());
}

TEST_CASE("a bad line is refused with the file, the line and what is wrong") {
  CHECK(ErrorOf("port 1\nnosuch 1\n") ==
        "f.conf:2: unknown setting 'nosuch' (feedcore-server --help lists "
        "them)");
  CHECK(ErrorOf("port\n") == "f.conf:1: 'port' needs a value");
  CHECK(ErrorOf("\ndir /a /b\n") ==
        "f.conf:2: 'dir' takes one value, got 2 (quote a value that holds "
        "spaces)");
  CHECK(ErrorOf("bind 127.0.0.1 -::1\n") ==
        "f.conf:1: 'bind' takes one address; feedcore-server listens on one, "
        "got 2: 127.0.0.1 -::1");
  CHECK(ErrorOf("protected-mode maybe\n") ==
        "f.conf:1: 'protected-mode': 'maybe' is not yes or no");
  CHECK(ErrorOf("port 12x\n") == "f.conf:1: 'port': '12x' is not an integer");
  CHECK(ErrorOf("port +1\n") == "f.conf:1: 'port': '+1' is not an integer");
  CHECK(ErrorOf("max-bulk-bytes 1t\n")
            .rfind("f.conf:1: 'max-bulk-bytes': "
                   "'1t' is not a size",
                   0) == 0);
  CHECK(ErrorOf("dir \"/tmp\n") == "f.conf:1: unbalanced double quote");
}

TEST_CASE("a missing file is an error naming it") {
  absl::StatusOr<std::vector<ConfigDirective>> directives =
      ReadConfigFile("/nonexistent/feedcore.conf", ServerSettings());
  REQUIRE_FALSE(directives.ok());
  CHECK(std::string(directives.status().message())
            .rfind("cannot open config file /nonexistent/feedcore.conf", 0) ==
        0);
}

}  // namespace
}  // namespace feedcore::server
