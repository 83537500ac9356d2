#include "resp_parser.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace feedcore::server {
namespace {

// `*<n>` and `$<len>` lines are short; a longer one is garbage, and waiting
// for its end would let a client make us buffer without bound.
constexpr size_t kMaxHeaderLine = 32;

// An empty receive buffer larger than this is released.
constexpr size_t kMaxIdleBufferCapacity = 64 * 1024;

// Below this many consumed bytes the buffer is not compacted: moving the
// unconsumed tail costs more than it saves.
constexpr size_t kCompactThreshold = 16 * 1024;

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Splits an inline command line the way redis-cli quotes arguments:
// words separated by blanks; "double quotes" with \n \r \t \b \a \\ \"
// and \xHH escapes; 'single quotes' with \' only. A closing quote must be
// followed by a blank or the end of the line. Nullopt for unbalanced quotes.
std::optional<std::vector<std::string>> SplitInline(absl::string_view line) {
  std::vector<std::string> words;
  size_t i = 0;
  const size_t n = line.size();
  while (true) {
    while (i < n && IsSpace(line[i])) ++i;
    if (i == n) return words;
    std::string word;
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    while (!done) {
      if (in_double) {
        if (i == n) return std::nullopt;
        const char c = line[i];
        if (c == '\\' && i + 3 < n && line[i + 1] == 'x' &&
            HexValue(line[i + 2]) >= 0 && HexValue(line[i + 3]) >= 0) {
          word.push_back(static_cast<char>(HexValue(line[i + 2]) * 16 +
                                           HexValue(line[i + 3])));
          i += 4;
        } else if (c == '\\' && i + 1 < n) {
          const char e = line[i + 1];
          switch (e) {
            case 'n':
              word.push_back('\n');
              break;
            case 'r':
              word.push_back('\r');
              break;
            case 't':
              word.push_back('\t');
              break;
            case 'b':
              word.push_back('\b');
              break;
            case 'a':
              word.push_back('\a');
              break;
            default:
              word.push_back(e);
              break;
          }
          i += 2;
        } else if (c == '"') {
          if (i + 1 < n && !IsSpace(line[i + 1])) return std::nullopt;
          ++i;
          done = true;
        } else {
          word.push_back(c);
          ++i;
        }
      } else if (in_single) {
        if (i == n) return std::nullopt;
        const char c = line[i];
        if (c == '\\' && i + 1 < n && line[i + 1] == '\'') {
          word.push_back('\'');
          i += 2;
        } else if (c == '\'') {
          if (i + 1 < n && !IsSpace(line[i + 1])) return std::nullopt;
          ++i;
          done = true;
        } else {
          word.push_back(c);
          ++i;
        }
      } else {
        if (i == n || IsSpace(line[i])) {
          done = true;
        } else if (line[i] == '"') {
          in_double = true;
          ++i;
        } else if (line[i] == '\'') {
          in_single = true;
          ++i;
        } else {
          word.push_back(line[i]);
          ++i;
        }
      }
    }
    words.push_back(std::move(word));
  }
}

// A header length: decimal digits with an optional leading '-', no sign
// '+', no blanks (what Redis accepts).
std::optional<int64_t> ParseHeaderLength(absl::string_view digits) {
  if (digits.empty() || digits.size() > 20) return std::nullopt;
  const bool negative = digits[0] == '-' && digits.size() > 1;
  // Summed as read when up to 18 digits, which cannot overflow an int64
  // (every length a client sends has far fewer); longer ones are parsed
  // with their range checked.
  const bool short_enough = digits.size() - (negative ? 1 : 0) <= 18;
  int64_t value = 0;
  for (size_t i = negative ? 1 : 0; i < digits.size(); ++i) {
    const char c = digits[i];
    if (c < '0' || c > '9') return std::nullopt;
    if (short_enough) value = value * 10 + (c - '0');
  }
  if (short_enough) return negative ? -value : value;
  if (!absl::SimpleAtoi(digits, &value)) return std::nullopt;
  return value;
}

std::string Printable(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string(1, c);
  return absl::StrCat(
      "\\x", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
}

}  // namespace

absl::Status ValidateRespLimits(const RespLimits& limits) {
  if (limits.max_bulk_bytes < 1) {
    return absl::InvalidArgumentError("max_bulk_bytes must be at least 1");
  }
  if (limits.max_args < 1) {
    return absl::InvalidArgumentError("max_args must be at least 1");
  }
  if (limits.max_inline_bytes < 1) {
    return absl::InvalidArgumentError("max_inline_bytes must be at least 1");
  }
  if (limits.max_request_bytes < limits.max_bulk_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_request_bytes (", limits.max_request_bytes,
        ") must be at least max_bulk_bytes (", limits.max_bulk_bytes, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<RespParser> RespParser::Create(const RespLimits& limits) {
  if (absl::Status status = ValidateRespLimits(limits); !status.ok()) {
    return status;
  }
  return RespParser(limits);
}

void RespParser::Append(absl::string_view bytes) {
  if (state_ == State::kFailed) return;  // nothing more will be parsed
  buffer_.append(bytes.data(), bytes.size());
}

void RespParser::Compact() {
  if (pos_ == buffer_.size()) {
    buffer_.clear();
    // A large burst is not kept allocated for a client that then idles.
    if (buffer_.capacity() > kMaxIdleBufferCapacity) buffer_.shrink_to_fit();
    pos_ = 0;
  } else if (pos_ >= kCompactThreshold && pos_ * 2 >= buffer_.size()) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
}

RespParser::LineStatus RespParser::TakeLine(size_t max_length,
                                            bool require_crlf,
                                            absl::string_view& line) {
  const size_t available = buffer_.size() - pos_;
  // Look far enough for the LF of a line of exactly max_length plus CR.
  const size_t scan = std::min(available, max_length + 2);
  const char* begin = buffer_.data() + pos_;
  const void* found = std::memchr(begin, '\n', scan);
  if (found == nullptr) {
    return available > max_length + 1 ? LineStatus::kTooLong
                                      : LineStatus::kNeedMore;
  }
  size_t length = static_cast<const char*>(found) - begin;
  const size_t consumed = length + 1;
  if (length > 0 && begin[length - 1] == '\r') {
    --length;
  } else if (require_crlf) {
    return LineStatus::kBareLf;
  }
  if (length > max_length) return LineStatus::kTooLong;
  line = absl::string_view(begin, length);
  pos_ += consumed;
  return LineStatus::kLine;
}

ParseStatus RespParser::Fail(ParsedCommand& out, std::string message) {
  state_ = State::kFailed;
  buffer_.clear();
  buffer_.shrink_to_fit();
  pos_ = 0;
  args_.clear();
  args_.shrink_to_fit();
  args_bytes_ = 0;
  out.args.clear();
  out.error = std::move(message);
  return ParseStatus::kProtocolError;
}

void RespParser::CopyArgumentBytes(size_t take) {
  std::string& arg = args_.back();
  const size_t needed = arg.size() + take;
  if (needed > arg.capacity()) {
    const size_t before = arg.capacity();
    arg.reserve(std::min(bulk_length_, std::max(needed, 2 * before)));
    args_bytes_ += arg.capacity() - before;
  }
  arg.append(buffer_, pos_, take);
}

ParseStatus RespParser::Next(ParsedCommand& out) {
  out.args.clear();
  out.error.clear();
  while (true) {
    switch (state_) {
      case State::kFailed:
        out.error = "Protocol error: connection already failed";
        return ParseStatus::kProtocolError;

      case State::kIdle: {
        Compact();
        if (pos_ == buffer_.size()) return ParseStatus::kNeedMore;
        const std::optional<ParseStatus> stop =
            buffer_[pos_] == '*' ? ParseMultibulkHeader(out) : ParseInline(out);
        if (stop.has_value()) return *stop;
        break;
      }

      case State::kBulkHeader: {
        const std::optional<ParseStatus> stop = ParseBulkHeader(out);
        if (stop.has_value()) return *stop;
        break;
      }

      case State::kBulkData: {
        const size_t available = buffer_.size() - pos_;
        const size_t take = std::min(available, bulk_remaining_);
        CopyArgumentBytes(take);
        pos_ += take;
        bulk_remaining_ -= take;
        if (bulk_remaining_ > 0) {
          Compact();
          return ParseStatus::kNeedMore;
        }
        state_ = State::kBulkTerminator;
        break;
      }

      case State::kBulkTerminator: {
        if (buffer_.size() - pos_ < 2) return ParseStatus::kNeedMore;
        if (buffer_[pos_] != '\r' || buffer_[pos_ + 1] != '\n') {
          return Fail(out, "Protocol error: expected CRLF after bulk string");
        }
        pos_ += 2;
        const std::optional<ParseStatus> stop = FinishArgument(out);
        if (stop.has_value()) return *stop;
        break;
      }
    }
  }
}

std::optional<ParseStatus> RespParser::ParseInline(ParsedCommand& out) {
  absl::string_view line;
  switch (TakeLine(limits_.max_inline_bytes, /*require_crlf=*/false, line)) {
    case LineStatus::kLine:
      break;
    case LineStatus::kNeedMore:
      return ParseStatus::kNeedMore;
    case LineStatus::kTooLong:
    case LineStatus::kBareLf:
      return Fail(out, absl::StrCat("Protocol error: inline request longer "
                                    "than ",
                                    limits_.max_inline_bytes,
                                    " bytes (--max_inline_bytes)"));
  }
  std::optional<std::vector<std::string>> words = SplitInline(line);
  if (!words.has_value()) {
    return Fail(out, "Protocol error: unbalanced quotes in inline request");
  }
  if (words->size() > limits_.max_args) {
    out.error = absl::StrCat("ERR request has ", words->size(),
                             " arguments, more than the limit of ",
                             limits_.max_args, " (--max_args)");
    return ParseStatus::kRejected;
  }
  if (words->empty()) return std::nullopt;  // blank lines are ignored
  out.args = std::move(*words);
  return ParseStatus::kCommand;
}

std::optional<ParseStatus> RespParser::ParseMultibulkHeader(
    ParsedCommand& out) {
  absl::string_view line;
  switch (TakeLine(kMaxHeaderLine, /*require_crlf=*/true, line)) {
    case LineStatus::kLine:
      break;
    case LineStatus::kNeedMore:
      return ParseStatus::kNeedMore;
    case LineStatus::kTooLong:
      return Fail(out, "Protocol error: multibulk length line too long");
    case LineStatus::kBareLf:
      return Fail(out, "Protocol error: multibulk length not ended by CRLF");
  }
  const std::optional<int64_t> count =
      ParseHeaderLength(line.substr(1));  // after '*'
  if (!count.has_value()) {
    return Fail(out, absl::StrCat("Protocol error: invalid multibulk length '",
                                  line.substr(1, 20), "'"));
  }
  if (*count <= 0) {
    // `*0` and `*-1` carry no command; Redis skips them too.
    return std::nullopt;
  }
  const size_t max_args =
      unauthenticated_ ? std::min(limits_.max_args, kUnauthenticatedMaxArgs)
                       : limits_.max_args;
  if (static_cast<uint64_t>(*count) > max_args) {
    // Redis's wording first, which clients recognize; then which limit.
    return Fail(out, unauthenticated_ && *count > 0 &&
                             static_cast<uint64_t>(*count) <= limits_.max_args
                         ? "Protocol error: unauthenticated multibulk length"
                         : absl::StrCat("Protocol error: invalid multibulk "
                                        "length: ",
                                        *count,
                                        " arguments, more than the "
                                        "limit of ",
                                        limits_.max_args, " (--max_args)"));
  }
  args_.clear();
  args_bytes_ = 0;
  request_bytes_ = 0;
  args_remaining_ = static_cast<size_t>(*count);
  // Not the whole count: like the arguments' bytes, the vector grows with
  // what arrives.
  args_.reserve(std::min<size_t>(args_remaining_, 64));
  state_ = State::kBulkHeader;
  return std::nullopt;
}

std::optional<ParseStatus> RespParser::ParseBulkHeader(ParsedCommand& out) {
  if (pos_ == buffer_.size()) return ParseStatus::kNeedMore;
  if (buffer_[pos_] != '$') {
    return Fail(out, absl::StrCat("Protocol error: expected '$', got '",
                                  Printable(buffer_[pos_]), "'"));
  }
  absl::string_view line;
  switch (TakeLine(kMaxHeaderLine, /*require_crlf=*/true, line)) {
    case LineStatus::kLine:
      break;
    case LineStatus::kNeedMore:
      return ParseStatus::kNeedMore;
    case LineStatus::kTooLong:
      return Fail(out, "Protocol error: bulk length line too long");
    case LineStatus::kBareLf:
      return Fail(out, "Protocol error: bulk length not ended by CRLF");
  }
  const std::optional<int64_t> length = ParseHeaderLength(line.substr(1));
  if (!length.has_value() || *length < 0) {
    return Fail(out, absl::StrCat("Protocol error: invalid bulk length '",
                                  line.substr(1, 20), "'"));
  }
  const size_t bytes = static_cast<size_t>(*length);
  if (unauthenticated_ && bytes > kUnauthenticatedMaxBulkBytes &&
      bytes <= limits_.max_bulk_bytes) {
    return Fail(out, "Protocol error: unauthenticated bulk length");
  }
  if (bytes > limits_.max_bulk_bytes) {
    return Fail(out,
                absl::StrCat("Protocol error: invalid bulk length: ", bytes,
                             " bytes, more than the limit of ",
                             limits_.max_bulk_bytes, " (--max_bulk_bytes)"));
  }
  if (request_bytes_ + bytes > limits_.max_request_bytes) {
    return Fail(out, absl::StrCat("Protocol error: invalid bulk length: the "
                                  "command's arguments add up to more than ",
                                  limits_.max_request_bytes,
                                  " bytes (--max_request_bytes)"));
  }
  request_bytes_ += bytes;
  args_.emplace_back();
  bulk_length_ = bytes;
  bulk_remaining_ = bytes;
  state_ = State::kBulkData;
  return std::nullopt;
}

std::optional<ParseStatus> RespParser::FinishArgument(ParsedCommand& out) {
  --args_remaining_;
  if (args_remaining_ > 0) {
    state_ = State::kBulkHeader;
    return std::nullopt;
  }
  state_ = State::kIdle;
  out.args = std::move(args_);
  args_.clear();
  args_bytes_ = 0;
  return ParseStatus::kCommand;
}

}  // namespace feedcore::server
