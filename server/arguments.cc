#include "arguments.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace feedcore::server {
namespace {

// SimpleAtoi accepts surrounding blanks; RESP arguments are exact, so a
// blank is a typo worth reporting.
bool HasOnlyDigitsAndSign(absl::string_view text, bool allow_sign) {
  if (text.empty() || text.size() > 21) return false;
  size_t i = 0;
  if (allow_sign && (text[0] == '-' || text[0] == '+')) i = 1;
  if (i == text.size()) return false;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

}  // namespace

std::string Quote(absl::string_view text) {
  constexpr size_t kMaxQuoted = 64;
  std::string quoted = absl::CHexEscape(text.substr(0, kMaxQuoted));
  if (text.size() > kMaxQuoted) quoted += "...";
  return absl::StrCat("'", quoted, "'");
}

absl::StatusOr<uint64_t> ParseId(absl::string_view text,
                                 absl::string_view what) {
  uint64_t value = 0;
  if (!HasOnlyDigitsAndSign(text, /*allow_sign=*/false) ||
      !absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a decimal id from 0 to ", UINT64_MAX,
                     ", got ", Quote(text)));
  }
  return value;
}

absl::StatusOr<int64_t> ParseInt64(absl::string_view text,
                                   absl::string_view what) {
  int64_t value = 0;
  if (!HasOnlyDigitsAndSign(text, /*allow_sign=*/true) ||
      !absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a decimal integer from ", INT64_MIN,
                     " to ", INT64_MAX, ", got ", Quote(text)));
  }
  return value;
}

absl::StatusOr<int64_t> ParseInt64InRange(absl::string_view text,
                                          absl::string_view what, int64_t min,
                                          int64_t max) {
  int64_t value = 0;
  if (!HasOnlyDigitsAndSign(text, /*allow_sign=*/true) ||
      !absl::SimpleAtoi(text, &value) || value < min || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be an integer from ", min, " to ", max,
                     ", got ", Quote(text)));
  }
  return value;
}

bool IsKeyword(absl::string_view text, absl::string_view keyword) {
  return absl::EqualsIgnoreCase(text, keyword);
}

std::string AsciiUpper(absl::string_view text) {
  return absl::AsciiStrToUpper(text);
}

}  // namespace feedcore::server
