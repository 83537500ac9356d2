// Parsing of command arguments into numbers, with error messages that name
// the argument and quote what the client sent, ready to go into a RESP
// error reply ("ERR ...").
#ifndef FEEDCORE_SERVER_ARGUMENTS_H_
#define FEEDCORE_SERVER_ARGUMENTS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace feedcore::server {

// A decimal uint64 with no sign, blanks or leading '+': an entity,
// activity or member id. `what` names the argument in the error.
absl::StatusOr<uint64_t> ParseId(absl::string_view text,
                                 absl::string_view what);

// A decimal int64 (optional leading '-' or '+'): scores, indices.
absl::StatusOr<int64_t> ParseInt64(absl::string_view text,
                                   absl::string_view what);

// A decimal int64 in [min, max].
absl::StatusOr<int64_t> ParseInt64InRange(absl::string_view text,
                                          absl::string_view what, int64_t min,
                                          int64_t max);

// True when `text` equals `keyword` ignoring ASCII case.
bool IsKeyword(absl::string_view text, absl::string_view keyword);

// `text` upper-cased (ASCII), for command names.
std::string AsciiUpper(absl::string_view text);

// `text` for an error message: at most 64 bytes, control bytes escaped.
std::string Quote(absl::string_view text);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_ARGUMENTS_H_
