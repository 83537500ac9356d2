// RespParser: turns the bytes a client sends into commands, incrementally.
//
// Understands both request forms Redis servers accept:
//   * multibulk: `*<n>\r\n` followed by n bulk strings `$<len>\r\n<bytes>\r\n`
//     (what every client library sends);
//   * inline: one line of space-separated words, with "double" and 'single'
//     quoting as in redis-cli (what `telnet` users and redis-benchmark's
//     PING_INLINE send).
//
// Bytes may arrive in pieces of any size: `Append` what the socket gave and
// call `Next` until it says `kNeedMore`. Several pipelined commands in one
// read come out one by one. The parser never needs more than one command's
// worth of memory, and bulk strings are copied straight into the argument
// as they arrive, so a request split at every byte costs no re-scanning.
//
// Errors come in two kinds:
//   * `kRejected`: the command was well-formed but breaks a limit (an
//     oversized bulk string, too many arguments, a request too large). Its
//     bytes are consumed and discarded without being stored, the stream
//     stays in step and the next command parses normally; the caller
//     replies with an error and keeps the connection.
//   * `kProtocolError`: the bytes are not RESP (a bad length, a missing
//     CRLF, unbalanced quotes, a line over the limit). The stream cannot be
//     resynchronized, so the parser stays in this state; the caller replies
//     with the error and closes the connection.
//
// Not thread-safe: one parser per connection.
#ifndef FEEDCORE_EXAMPLES_FEED_SERVER_RESP_PARSER_H_
#define FEEDCORE_EXAMPLES_FEED_SERVER_RESP_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace feedcore::server {

struct RespLimits {
  // Longest bulk string (one argument), in bytes.
  size_t max_bulk_bytes = 1 << 20;
  // Most arguments in one command (the command name included).
  size_t max_args = 65536;
  // Longest inline command line. (The `*<n>` and `$<len>` header lines of
  // multibulk requests are limited to 32 bytes regardless.)
  size_t max_inline_bytes = 64 * 1024;
  // Largest sum of argument lengths in one command: bounds the memory one
  // connection can hold with a partly received command.
  size_t max_request_bytes = 16 << 20;
};

// Checks that every limit is at least 1 and that
// max_bulk_bytes <= max_request_bytes.
absl::Status ValidateRespLimits(const RespLimits& limits);

enum class ParseStatus {
  kCommand,        // `ParsedCommand::args` holds a command
  kNeedMore,       // no complete command buffered; Append more bytes
  kRejected,       // a command broke a limit; `error` says which. Continue.
  kProtocolError,  // malformed stream; `error` says why. Close.
};

struct ParsedCommand {
  std::vector<std::string> args;  // args[0] is the command name
  std::string error;              // for kRejected and kProtocolError
};

class RespParser {
 public:
  // InvalidArgument when a limit is out of range.
  static absl::StatusOr<RespParser> Create(const RespLimits& limits);

  // Adds bytes received from the client.
  void Append(absl::string_view bytes);

  // Parses the next command out of the buffered bytes into `out` (its
  // previous contents are replaced).
  ParseStatus Next(ParsedCommand& out);

  // Bytes received but not yet consumed by Next (header lines waiting for
  // their CRLF, pipelined commands). Argument bytes already copied into a
  // partial command are not counted.
  size_t buffered_bytes() const { return buffer_.size() - pos_; }

  // True once a protocol error was reported.
  bool failed() const { return state_ == State::kFailed; }

 private:
  enum class State {
    kIdle,            // between commands
    kBulkHeader,      // expecting `$<len>\r\n` of the next argument
    kBulkData,        // copying (or discarding) an argument's bytes
    kBulkTerminator,  // expecting the CRLF after an argument
    kFailed,          // protocol error; sticky
  };

  explicit RespParser(const RespLimits& limits) : limits_(limits) {}

  enum class LineStatus { kLine, kNeedMore, kTooLong, kBareLf };
  // Consumes the next line and sets `line` to it without its line ending,
  // if a whole line of at most `max_length` bytes is buffered. Headers
  // require CRLF; inline commands accept a bare LF too.
  LineStatus TakeLine(size_t max_length, bool require_crlf,
                      absl::string_view& line);
  // Each step returns the status for Next to report, or nullopt to go on
  // parsing.
  std::optional<ParseStatus> ParseInline(ParsedCommand& out);
  std::optional<ParseStatus> ParseMultibulkHeader(ParsedCommand& out);
  std::optional<ParseStatus> ParseBulkHeader(ParsedCommand& out);
  std::optional<ParseStatus> FinishArgument(ParsedCommand& out);
  ParseStatus Fail(ParsedCommand& out, std::string message);
  void Reject(std::string message);
  void Compact();

  RespLimits limits_;
  std::string buffer_;
  size_t pos_ = 0;  // first unconsumed byte of buffer_
  State state_ = State::kIdle;

  // The command being received.
  std::vector<std::string> args_;
  size_t args_remaining_ = 0;
  size_t bulk_remaining_ = 0;  // argument bytes still to come
  size_t request_bytes_ = 0;   // argument bytes of this command so far
  bool rejecting_ = false;     // discard the rest of this command
  std::string reject_message_;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_EXAMPLES_FEED_SERVER_RESP_PARSER_H_
