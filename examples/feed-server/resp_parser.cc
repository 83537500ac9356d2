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
  for (size_t i = 0; i < digits.size(); ++i) {
    const char c = digits[i];
    if (!(c >= '0' && c <= '9') && !(i == 0 && c == '-' && digits.size() > 1)) {
      return std::nullopt;
    }
  }
  int64_t value = 0;
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
  out.args.clear();
  out.error = std::move(message);
  return ParseStatus::kProtocolError;
}

void RespParser::Reject(std::string message) {
  if (rejecting_) return;  // the first broken limit is the one reported
  rejecting_ = true;
  reject_message_ = std::move(message);
  args_.clear();
  args_.shrink_to_fit();
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
        if (!rejecting_) args_.back().append(buffer_, pos_, take);
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
  args_.clear();
  rejecting_ = false;
  reject_message_.clear();
  request_bytes_ = 0;
  args_remaining_ = static_cast<size_t>(*count);
  if (args_remaining_ > limits_.max_args) {
    // The arguments are still parsed (and dropped), so the stream stays in
    // step and only this command fails.
    Reject(absl::StrCat("ERR request has ", args_remaining_,
                        " arguments, more than the limit of ", limits_.max_args,
                        " (--max_args)"));
  } else {
    args_.reserve(args_remaining_);
  }
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
  if (bytes > limits_.max_bulk_bytes) {
    Reject(absl::StrCat("ERR bulk string of ", bytes,
                        " bytes is longer than the limit of ",
                        limits_.max_bulk_bytes, " bytes (--max_bulk_bytes)"));
  } else if (request_bytes_ + bytes > limits_.max_request_bytes) {
    Reject(absl::StrCat("ERR request is larger than the limit of ",
                        limits_.max_request_bytes,
                        " bytes (--max_request_bytes)"));
  }
  request_bytes_ += bytes;
  if (!rejecting_) {
    args_.emplace_back();
    args_.back().reserve(bytes);
  }
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
  if (rejecting_) {
    rejecting_ = false;
    out.error = std::move(reject_message_);
    reject_message_.clear();
    return ParseStatus::kRejected;
  }
  out.args = std::move(args_);
  args_.clear();
  return ParseStatus::kCommand;
}

}  // namespace feedcore::server
