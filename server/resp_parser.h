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
//   * `kRejected`: an inline command with more words than `max_args`. Its
//     line is consumed, the stream stays in step and the next command
//     parses normally; the caller replies with an error and keeps the
//     connection.
//   * `kProtocolError`: the bytes are not RESP (a bad length, a missing
//     CRLF, unbalanced quotes, a line over the limit), or a multibulk
//     header announces more than the limits allow (a count over
//     `max_args`, a bulk length over `max_bulk_bytes`, lengths adding up to
//     more than `max_request_bytes`). A header over a limit fails at once,
//     before any of the announced bytes are read: skipping them would let
//     a client keep the connection busy with gigabytes it never meant to
//     be parsed. The stream cannot be resynchronized, so the parser stays
//     in this state; the caller replies with the error and closes the
//     connection.
//
// Memory. An argument's storage grows with the bytes that actually arrived
// (doubling, up to its announced length), never reserved ahead from the
// header alone, so a client that only sends headers holds almost nothing.
// `held_bytes` reports what the parser holds, for the server's per-client
// and whole-server bounds.
//
// Not thread-safe: one parser per connection.
#ifndef FEEDCORE_SERVER_RESP_PARSER_H_
#define FEEDCORE_SERVER_RESP_PARSER_H_

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

  // Memory held for the client: the receive buffer's capacity plus the
  // storage of the partly received command's arguments.
  size_t held_bytes() const {
    return buffer_.capacity() + args_.capacity() * sizeof(std::string) +
           args_bytes_;
  }

  // Until a client authenticates, Redis accepts only small commands from
  // it (at most kUnauthenticatedMaxArgs arguments of at most
  // kUnauthenticatedMaxBulkBytes bytes), so a client that does not know
  // the password cannot make the server buffer large requests. Applies to
  // the next command header; the connection switches it off once AUTH
  // succeeds.
  void set_unauthenticated(bool unauthenticated) {
    unauthenticated_ = unauthenticated;
  }
  static constexpr size_t kUnauthenticatedMaxArgs = 10;
  static constexpr size_t kUnauthenticatedMaxBulkBytes = 16 * 1024;

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
  void Compact();
  // Appends up to `take` buffered bytes to the argument being received,
  // growing its storage geometrically but never past its announced length.
  void CopyArgumentBytes(size_t take);

  RespLimits limits_;
  std::string buffer_;
  size_t pos_ = 0;  // first unconsumed byte of buffer_
  State state_ = State::kIdle;

  // The command being received.
  std::vector<std::string> args_;
  size_t args_remaining_ = 0;
  size_t bulk_remaining_ = 0;  // argument bytes still to come
  size_t bulk_length_ = 0;     // announced length of the current argument
  size_t request_bytes_ = 0;   // announced argument bytes of this command
  size_t args_bytes_ = 0;      // heap capacity of the strings in args_
  bool unauthenticated_ = false;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_RESP_PARSER_H_
