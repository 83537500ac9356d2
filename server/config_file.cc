#include "config_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace feedcore::server {
namespace {

// Lower case, dashes as underscores: the form names are compared in.
std::string ComparableName(absl::string_view name) {
  std::string out = absl::AsciiStrToLower(name);
  for (char& c : out) {
    if (c == '-') c = '_';
  }
  return out;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
         c == '\f';
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The escape after a backslash inside double quotes, starting at
// line[*pos] (the character after the backslash); advances *pos past it.
char DoubleQuotedEscape(absl::string_view line, size_t* pos) {
  const char c = line[*pos];
  if (c == 'x' && *pos + 2 < line.size() && HexDigit(line[*pos + 1]) >= 0 &&
      HexDigit(line[*pos + 2]) >= 0) {
    const char byte = static_cast<char>(HexDigit(line[*pos + 1]) * 16 +
                                        HexDigit(line[*pos + 2]));
    *pos += 3;
    return byte;
  }
  ++*pos;
  switch (c) {
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'b':
      return '\b';
    case 'a':
      return '\a';
    default:
      return c;  // \\, \" and any other character stand for themselves
  }
}

}  // namespace

const SettingSpec* FindSetting(absl::Span<const SettingSpec> settings,
                               absl::string_view name) {
  const std::string wanted = ComparableName(name);
  for (const SettingSpec& spec : settings) {
    if (ComparableName(spec.name) == wanted) return &spec;
    for (const std::string& alias : spec.aliases) {
      if (ComparableName(alias) == wanted) return &spec;
    }
  }
  return nullptr;
}

std::string DashedName(absl::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == '_') c = '-';
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> SplitConfigLine(
    absl::string_view line) {
  std::vector<std::string> args;
  size_t pos = 0;
  while (true) {
    while (pos < line.size() && IsSpace(line[pos])) ++pos;
    if (pos == line.size()) return args;
    std::string arg;
    const char quote = line[pos];
    if (quote == '"' || quote == '\'') {
      ++pos;
      bool closed = false;
      while (pos < line.size()) {
        const char c = line[pos];
        if (c == quote) {
          closed = true;
          ++pos;
          break;
        }
        if (c == '\\' && pos + 1 < line.size()) {
          ++pos;
          if (quote == '"') {
            arg.push_back(DoubleQuotedEscape(line, &pos));
          } else if (line[pos] == '\'') {
            arg.push_back('\'');
            ++pos;
          } else {
            arg.push_back('\\');  // only \' is an escape in single quotes
          }
          continue;
        }
        arg.push_back(c);
        ++pos;
      }
      if (!closed) {
        return absl::InvalidArgumentError(absl::StrCat(
            "unbalanced ", quote == '"' ? "double" : "single", " quote"));
      }
      if (pos < line.size() && !IsSpace(line[pos])) {
        return absl::InvalidArgumentError(
            "a closing quote must be followed by a space or the end of the "
            "line");
      }
    } else {
      while (pos < line.size() && !IsSpace(line[pos]))
        arg.push_back(line[pos++]);
    }
    args.push_back(std::move(arg));
  }
}

absl::StatusOr<int64_t> ParseByteSize(absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(text);
  absl::string_view digits = lower;
  uint64_t multiplier = 1;
  static constexpr std::pair<absl::string_view, uint64_t> kUnits[] = {
      {"kb", uint64_t{1} << 10}, {"mb", uint64_t{1} << 20},
      {"gb", uint64_t{1} << 30}, {"k", 1000},
      {"m", 1000 * 1000},        {"g", 1000 * 1000 * 1000}};
  for (const auto& unit : kUnits) {
    if (absl::EndsWith(digits, unit.first)) {
      digits.remove_suffix(unit.first.size());
      multiplier = unit.second;
      break;
    }
  }
  uint64_t number = 0;
  const bool all_digits =
      !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
        return c >= '0' && c <= '9';
      });
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  if (!all_digits || !absl::SimpleAtoi(digits, &number) ||
      number > kMax / multiplier) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text,
        "' is not a size: give bytes, maybe with a unit (1k = 1000, 1kb = "
        "1024, m, mb, g, gb)"));
  }
  return static_cast<int64_t>(number * multiplier);
}

absl::StatusOr<std::string> NormalizeSettingValue(SettingKind kind,
                                                  absl::string_view value) {
  switch (kind) {
    case SettingKind::kString:
      return std::string(value);
    case SettingKind::kInteger: {
      int64_t number = 0;
      if (!absl::SimpleAtoi(value, &number) || value.empty() ||
          value.front() == '+' || IsSpace(value.front()) ||
          IsSpace(value.back())) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", value, "' is not an integer"));
      }
      return absl::StrCat(number);
    }
    case SettingKind::kBytes: {
      absl::StatusOr<int64_t> bytes = ParseByteSize(value);
      if (!bytes.ok()) return bytes.status();
      return absl::StrCat(*bytes);
    }
    case SettingKind::kBoolean: {
      const std::string lower = absl::AsciiStrToLower(value);
      if (lower == "yes" || lower == "true") return std::string("true");
      if (lower == "no" || lower == "false") return std::string("false");
      return absl::InvalidArgumentError(
          absl::StrCat("'", value, "' is not yes or no"));
    }
  }
  return absl::InvalidArgumentError("unknown kind of setting");
}

absl::StatusOr<std::vector<ConfigDirective>> ParseConfigText(
    absl::string_view text, absl::string_view file_name,
    absl::Span<const SettingSpec> settings) {
  std::vector<ConfigDirective> directives;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const auto fail = [&](absl::string_view what) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_name, ":", line_number, ": ", what));
    };
    const absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    absl::StatusOr<std::vector<std::string>> args = SplitConfigLine(trimmed);
    if (!args.ok()) return fail(args.status().message());
    const std::string& name = args->front();
    const SettingSpec* spec = FindSetting(settings, name);
    if (spec == nullptr) {
      return fail(absl::StrCat("unknown setting '", name,
                               "' (feedcore-server --help lists them)"));
    }
    if (args->size() == 1) {
      return fail(absl::StrCat("'", name, "' needs a value"));
    }
    if (args->size() > 2) {
      const std::vector<std::string> values(args->begin() + 1, args->end());
      if (spec->name == "address") {
        return fail(
            absl::StrCat("'", name,
                         "' takes one address; feedcore-server listens on one, "
                         "got ",
                         values.size(), ": ", absl::StrJoin(values, " ")));
      }
      return fail(absl::StrCat("'", name, "' takes one value, got ",
                               values.size(),
                               " (quote a value that holds spaces)"));
    }
    absl::StatusOr<std::string> value =
        NormalizeSettingValue(spec->kind, (*args)[1]);
    if (!value.ok()) {
      return fail(absl::StrCat("'", name, "': ", value.status().message()));
    }
    directives.push_back({spec->name, *std::move(value), line_number});
  }
  return directives;
}

absl::StatusOr<std::vector<ConfigDirective>> ReadConfigFile(
    const std::string& path, absl::Span<const SettingSpec> settings) {
  std::ifstream file(path, std::ios::binary);
  if (!file.is_open()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot open config file ", path, ": ", std::strerror(errno)));
  }
  const std::string text((std::istreambuf_iterator<char>(file)),
                         std::istreambuf_iterator<char>());
  if (file.bad()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read config file ", path, ": ", std::strerror(errno)));
  }
  return ParseConfigText(text, path, settings);
}

}  // namespace feedcore::server
