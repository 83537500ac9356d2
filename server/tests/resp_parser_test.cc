// Unit tests of feedcore-server's RESP parser (server/):
// multibulk and inline requests, pipelining, input split at every byte,
// limits (an inline command over --max_args is refused alone; a multibulk
// header over a limit fails the stream at once), the memory held, and
// malformed input (which fails the stream for good).
#include "resp_parser.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace feedcore::server {
namespace {

// What Next reported, flattened for comparison: "CMD a|b|c", "REJ msg",
// "ERR msg".
using Events = std::vector<std::string>;

std::string Describe(ParseStatus status, const ParsedCommand& command) {
  switch (status) {
    case ParseStatus::kCommand: {
      std::string text = "CMD";
      for (size_t i = 0; i < command.args.size(); ++i) {
        text += (i == 0 ? " " : "|") + command.args[i];
      }
      return text;
    }
    case ParseStatus::kRejected:
      return "REJ " + command.error;
    case ParseStatus::kProtocolError:
      return "ERR " + command.error;
    case ParseStatus::kNeedMore:
      break;
  }
  return "MORE";
}

// Feeds `input` in pieces of the given sizes (the rest in one piece) and
// collects every event up to the first protocol error.
Events Parse(RespParser& parser, const std::string& input,
             const std::vector<size_t>& pieces = {}) {
  Events events;
  size_t pos = 0;
  auto drain = [&] {
    ParsedCommand command;
    while (true) {
      const ParseStatus status = parser.Next(command);
      if (status == ParseStatus::kNeedMore) return true;
      events.push_back(Describe(status, command));
      if (status == ParseStatus::kProtocolError) return false;
    }
  };
  for (size_t piece : pieces) {
    parser.Append(absl::string_view(input).substr(pos, piece));
    pos += std::min(piece, input.size() - pos);
    if (!drain()) return events;
  }
  parser.Append(absl::string_view(input).substr(pos));
  drain();
  return events;
}

Events Parse(const std::string& input, const RespLimits& limits = {},
             const std::vector<size_t>& pieces = {}) {
  auto parser = RespParser::Create(limits);
  REQUIRE(parser.ok());
  return Parse(*parser, input, pieces);
}

std::string Bulk(const std::string& s) {
  return absl::StrCat("$", s.size(), "\r\n", s, "\r\n");
}

std::string Multibulk(const std::vector<std::string>& args) {
  std::string out = absl::StrCat("*", args.size(), "\r\n");
  for (const std::string& a : args) absl::StrAppend(&out, Bulk(a));
  return out;
}

TEST_CASE("one multibulk command") {
  CHECK(Parse(Multibulk({"ZADD", "board", "10", "alice"})) ==
        Events{"CMD ZADD|board|10|alice"});
}

TEST_CASE("bulk strings are binary-safe") {
  const std::string binary("a\r\nb\0c$*", 8);
  auto parser = RespParser::Create({});
  REQUIRE(parser.ok());
  parser->Append(Multibulk({"ECHO", binary, ""}));
  ParsedCommand command;
  REQUIRE(parser->Next(command) == ParseStatus::kCommand);
  REQUIRE(command.args.size() == 3);
  CHECK(command.args[1] == binary);
  CHECK(command.args[2].empty());
  CHECK(parser->Next(command) == ParseStatus::kNeedMore);
}

TEST_CASE("pipelined commands come out one by one, in order") {
  const std::string input = Multibulk({"PING"}) + Multibulk({"ECHO", "x"}) +
                            "PING inline\r\n" + Multibulk({"ZCARD", "k"});
  CHECK(Parse(input) ==
        Events{"CMD PING", "CMD ECHO|x", "CMD PING|inline", "CMD ZCARD|k"});
}

TEST_CASE("inline commands: blanks, quotes, escapes, bare LF, empty lines") {
  CHECK(Parse("PING\r\n") == Events{"CMD PING"});
  CHECK(Parse("  set   a  b \n") == Events{"CMD set|a|b"});
  CHECK(Parse("\r\n\n   \r\nPING\r\n") == Events{"CMD PING"});
  CHECK(Parse("ECHO \"a b\" 'c d'\r\n") == Events{"CMD ECHO|a b|c d"});
  CHECK(Parse("ECHO \"\\x41\\n\\\"\" 'it\\'s'\r\n") ==
        Events{"CMD ECHO|A\n\"|it's"});
  CHECK(Parse("ECHO \"\"\r\n") == Events{"CMD ECHO|"});
}

TEST_CASE("*0 and *-1 carry no command and are skipped") {
  CHECK(Parse("*0\r\n*-1\r\n" + Multibulk({"PING"})) == Events{"CMD PING"});
}

TEST_CASE("a stream split at every byte parses as if whole") {
  const std::string input =
      Multibulk({"ZADD", "lb", "1", std::string("m\r\n\0", 4)}) +
      "PING \"quoted arg\"\r\n" + "\r\n" + "*0\r\n" +
      Multibulk({"FEED.PUBLISH", "1", "2", "*", std::string(300, 'p')}) +
      "ECHO bare-lf\n" + Multibulk({"QUIT"});
  const Events whole = Parse(input);
  REQUIRE(whole.size() == 5);

  // One byte at a time.
  std::vector<size_t> ones(input.size(), 1);
  CHECK(Parse(input, {}, ones) == whole);

  // Two pieces, split at every position.
  for (size_t split = 0; split <= input.size(); ++split) {
    CAPTURE(split);
    CHECK(Parse(input, {}, {split}) == whole);
  }
}

TEST_CASE("an oversized bulk length fails the stream at its header") {
  RespLimits limits;
  limits.max_bulk_bytes = 8;
  limits.max_request_bytes = 100;
  // Nothing after the header is sent: the refusal must not wait for the
  // announced bytes.
  const std::string input = Multibulk({"PING"}) + "*2\r\n$4\r\nECHO\r\n$9\r\n";
  const Events events = Parse(input, limits);
  REQUIRE(events.size() == 2);
  CHECK(events[0] == "CMD PING");
  CHECK(events[1].rfind("ERR Protocol error: invalid bulk length: 9 bytes",
                        0) == 0);
  CHECK(events[1].find("--max_bulk_bytes") != std::string::npos);

  // The same, fed byte by byte: identical.
  std::vector<size_t> ones(input.size(), 1);
  CHECK(Parse(input, limits, ones) == events);
}

TEST_CASE("a 2 GiB bulk length is refused without reading its bytes") {
  auto parser = RespParser::Create(RespLimits{});
  REQUIRE(parser.ok());
  parser->Append("*2\r\n$4\r\nECHO\r\n$2147483647\r\n");
  ParsedCommand command;
  CHECK(parser->Next(command) == ParseStatus::kProtocolError);
  CHECK(command.error.rfind("Protocol error: invalid bulk length", 0) == 0);
  CHECK(parser->failed());
}

TEST_CASE("too many arguments, or too many bytes in one request") {
  RespLimits limits;
  limits.max_args = 3;
  limits.max_bulk_bytes = 10;
  limits.max_request_bytes = 15;
  // Inline: the line is whole already, so only that command is refused.
  Events events = Parse("a b c d\r\n" + Multibulk({"a", "b", "c"}), limits);
  REQUIRE(events.size() == 2);
  CHECK(events[0].rfind("REJ ERR request has 4 arguments", 0) == 0);
  CHECK(events[1] == "CMD a|b|c");

  // Multibulk: refused at the count, before any argument.
  events = Parse("*4\r\n", limits);
  REQUIRE(events.size() == 1);
  CHECK(events[0] ==
        "ERR Protocol error: invalid multibulk length: 4 arguments, more than "
        "the limit of 3 (--max_args)");

  // The second length takes the sum over --max_request_bytes.
  events = Parse("*2\r\n$10\r\n0123456789\r\n$6\r\n", limits);
  REQUIRE(events.size() == 1);
  CHECK(events[0].rfind("ERR Protocol error: invalid bulk length", 0) == 0);
  CHECK(events[0].find("(--max_request_bytes)") != std::string::npos);
}

TEST_CASE("held memory follows the bytes received, not the lengths announced") {
  auto parser = RespParser::Create(RespLimits{});
  REQUIRE(parser.ok());
  ParsedCommand command;
  // A header announcing 1 MiB reserves nothing for it yet.
  parser->Append("*2\r\n$4\r\nECHO\r\n$1048576\r\n");
  REQUIRE(parser->Next(command) == ParseStatus::kNeedMore);
  const size_t after_header = parser->held_bytes();
  CHECK(after_header < 64 * 1024);
  // Half of the argument: held memory at least the bytes received, at most
  // twice (geometric growth), plus the receive buffer.
  size_t sent = 0;
  const std::string chunk(16 * 1024, 'x');
  while (sent < 512 * 1024) {
    parser->Append(chunk);
    sent += chunk.size();
    REQUIRE(parser->Next(command) == ParseStatus::kNeedMore);
  }
  CHECK(parser->held_bytes() >= sent);
  CHECK(parser->held_bytes() <= 2 * sent + after_header + 2 * chunk.size());
  parser->Append(std::string(1048576 - sent, 'x') + "\r\n");
  REQUIRE(parser->Next(command) == ParseStatus::kCommand);
  CHECK(command.args[1].size() == 1048576);
  // Once the command is handed over and nothing more is buffered, neither
  // its arguments nor the large receive buffer are held.
  REQUIRE(parser->Next(command) == ParseStatus::kNeedMore);
  CHECK(parser->held_bytes() < 64 * 1024);
}

TEST_CASE("an unauthenticated client may send only small commands") {
  auto parser = RespParser::Create(RespLimits{});
  REQUIRE(parser.ok());
  parser->set_unauthenticated(true);
  ParsedCommand command;
  parser->Append(Multibulk({"AUTH", "secret"}));
  CHECK(parser->Next(command) == ParseStatus::kCommand);
  parser->Append("*11\r\n");
  CHECK(parser->Next(command) == ParseStatus::kProtocolError);
  CHECK(command.error == "Protocol error: unauthenticated multibulk length");

  auto bulk = RespParser::Create(RespLimits{});
  REQUIRE(bulk.ok());
  bulk->set_unauthenticated(true);
  bulk->Append("*2\r\n$4\r\nAUTH\r\n$16385\r\n");
  CHECK(bulk->Next(command) == ParseStatus::kProtocolError);
  CHECK(command.error == "Protocol error: unauthenticated bulk length");

  // Authenticated, the same header is fine.
  auto authenticated = RespParser::Create(RespLimits{});
  REQUIRE(authenticated.ok());
  authenticated->Append("*11\r\n$16385\r\n");
  CHECK(authenticated->Next(command) == ParseStatus::kNeedMore);
}

TEST_CASE("an inline line over the limit is a protocol error") {
  RespLimits limits;
  limits.max_inline_bytes = 16;
  CHECK(Parse(std::string(16, 'a') + "\r\n", limits) ==
        Events{"CMD " + std::string(16, 'a')});
  const Events events = Parse(std::string(17, 'a') + "\r\n", limits);
  REQUIRE(events.size() == 1);
  CHECK(events[0].rfind("ERR Protocol error: inline request longer than 16",
                        0) == 0);
  // Without any line end at all, it fails as soon as the limit is passed.
  auto parser = RespParser::Create(limits);
  REQUIRE(parser.ok());
  parser->Append(std::string(17, 'a'));
  CHECK(parser->buffered_bytes() == 17);
  parser->Append("a");
  ParsedCommand command;
  CHECK(parser->Next(command) == ParseStatus::kProtocolError);
}

TEST_CASE("malformed streams fail with a reason, and stay failed") {
  struct Case {
    std::string input;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"*abc\r\n", "invalid multibulk length 'abc'"},
      {"*1x\r\n", "invalid multibulk length"},
      {"*+1\r\n", "invalid multibulk length"},
      {"*1\n", "multibulk length not ended by CRLF"},
      {"*99999999999999999999999\r\n", "invalid multibulk length"},
      {absl::StrCat("*", std::string(40, '1')),
       "multibulk length line too long"},
      {"*1\r\n+PING\r\n", "expected '$', got '+'"},
      {"*1\r\n\x01", "expected '$', got '\\x01'"},
      {"*1\r\n$-1\r\n", "invalid bulk length '-1'"},
      {"*1\r\n$x\r\n", "invalid bulk length 'x'"},
      {"*1\r\n$4\r\nPINGxx", "expected CRLF after bulk string"},
      {"*1\r\n$4\r\nPING\n\r", "expected CRLF after bulk string"},
      {"ECHO \"unterminated\r\n", "unbalanced quotes"},
      {"ECHO \"a\"b\r\n", "unbalanced quotes"},
      {"ECHO 'a\r\n", "unbalanced quotes"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.input);
    auto parser = RespParser::Create({});
    REQUIRE(parser.ok());
    const Events events = Parse(*parser, c.input + Multibulk({"PING"}));
    REQUIRE(events.size() == 1);
    CHECK(events[0].rfind("ERR Protocol error: ", 0) == 0);
    CHECK(events[0].find(c.error) != std::string::npos);
    CHECK(parser->failed());
    // Nothing parses after the failure, whatever arrives.
    parser->Append(Multibulk({"PING"}));
    ParsedCommand command;
    CHECK(parser->Next(command) == ParseStatus::kProtocolError);
  }
}

TEST_CASE("commands before a malformed one are still returned") {
  CHECK(Parse(Multibulk({"PING"}) + "*x\r\n") ==
        Events{"CMD PING", "ERR Protocol error: invalid multibulk length 'x'"});
}

TEST_CASE("Create validates the limits") {
  RespLimits limits;
  limits.max_bulk_bytes = 0;
  CHECK(!RespParser::Create(limits).ok());
  limits = {};
  limits.max_args = 0;
  CHECK(!RespParser::Create(limits).ok());
  limits = {};
  limits.max_inline_bytes = 0;
  CHECK(!RespParser::Create(limits).ok());
  limits = {};
  limits.max_request_bytes = limits.max_bulk_bytes - 1;
  const auto parser = RespParser::Create(limits);
  REQUIRE(!parser.ok());
  CHECK(std::string(parser.status().message()).find("max_request_bytes") !=
        std::string::npos);
}

}  // namespace
}  // namespace feedcore::server
