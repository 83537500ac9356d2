// libFuzzer target of the RESP parser. Each input is parsed three ways:
// whole, split in two at a point chosen by the input, and one byte at a
// time. The three must report the same events (the parser's result may not
// depend on how the bytes arrive), nothing may parse after a protocol
// error, and every command must respect the limits. Small limits make the
// limit paths reachable with short inputs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "resp_parser.h"

namespace {

using feedcore::server::ParsedCommand;
using feedcore::server::ParseStatus;
using feedcore::server::RespLimits;
using feedcore::server::RespParser;

RespLimits FuzzLimits() {
  RespLimits limits;
  limits.max_bulk_bytes = 64;
  limits.max_args = 8;
  limits.max_inline_bytes = 128;
  limits.max_request_bytes = 256;
  return limits;
}

struct Event {
  ParseStatus status;
  std::vector<std::string> args;
  std::string error;
  bool operator==(const Event&) const = default;
};

void Check(bool condition) {
  if (!condition) std::abort();
}

void Drain(RespParser& parser, std::vector<Event>& events) {
  ParsedCommand command;
  while (true) {
    const ParseStatus status = parser.Next(command);
    if (status == ParseStatus::kNeedMore) return;
    if (!events.empty() &&
        events.back().status == ParseStatus::kProtocolError) {
      // Sticky: once failed, always failed, and nothing new is recorded.
      Check(status == ParseStatus::kProtocolError);
      return;
    }
    if (status == ParseStatus::kCommand) {
      const RespLimits limits = FuzzLimits();
      Check(!command.args.empty());
      Check(command.args.size() <= limits.max_args);
      // A multibulk command is bounded by the bulk and request limits, an
      // inline one by its line length.
      size_t bytes = 0;
      for (const std::string& arg : command.args) {
        Check(arg.size() <=
              std::max(limits.max_bulk_bytes, limits.max_inline_bytes));
        bytes += arg.size();
      }
      Check(bytes <=
            std::max(limits.max_request_bytes, limits.max_inline_bytes));
    } else {
      Check(!command.error.empty());
    }
    events.push_back({status, command.args, command.error});
  }
}

std::vector<Event> ParseInPieces(absl::string_view input,
                                 const std::vector<size_t>& pieces) {
  RespParser parser = RespParser::Create(FuzzLimits()).value();
  std::vector<Event> events;
  size_t pos = 0;
  for (size_t piece : pieces) {
    if (pos >= input.size()) break;
    parser.Append(input.substr(pos, piece));
    pos += piece;
    Drain(parser, events);
  }
  if (pos < input.size()) parser.Append(input.substr(pos));
  Drain(parser, events);
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const std::vector<Event> whole = ParseInPieces(input, {});
  const size_t split = size == 0 ? 0 : data[0] % (size + 1);
  Check(ParseInPieces(input, {split}) == whole);
  if (size <= 4096) {
    Check(ParseInPieces(input, std::vector<size_t>(size, 1)) == whole);
  }
  return 0;
}
