// The config file of feedcore-server, in redis.conf syntax:
//
//   # a comment
//   port 7380
//   requirepass-file "/etc/feedcore/password"
//   protected-mode no
//   client-output-buffer-limit 64mb
//
// One setting a line: its name, then its value. A name is any setting's,
// with dashes or underscores and in any case, or a Redis alias of one
// (`bind` for `address`, `maxclients` for `max_clients`). Arguments are
// split as Redis splits them: by spaces, "double quotes" with the escapes
// \n \r \t \b \a \\ \" \xHH, or 'single quotes' with \' only. Values are
// checked against the setting's kind: booleans yes/no (or true/false),
// integers in decimal, byte sizes also with Redis's units (1k = 1000,
// 1kb = 1024, and m, mb, g, gb alike, any case). A setting given twice
// takes its last value, as in Redis.
//
// Errors: InvalidArgument "FILE:LINE: what is wrong" for the first bad line
// (unknown name, missing or extra value, bad quoting, a value not of the
// setting's kind); nothing is returned for a file with a bad line.
// Cost: linear in the text. Thread-safe (no state); no network, no Asio.
#ifndef FEEDCORE_SERVER_CONFIG_FILE_H_
#define FEEDCORE_SERVER_CONFIG_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace feedcore::server {

enum class SettingKind {
  kString,   // any text, also empty
  kInteger,  // a decimal integer, maybe negative
  kBytes,    // a non-negative integer, maybe with a unit
  kBoolean,  // yes/no, true/false
};

// One setting the file may name.
struct SettingSpec {
  std::string name;  // the flag's name, with underscores: "max_clients"
  SettingKind kind = SettingKind::kString;
  std::vector<std::string> aliases;  // Redis's names: "maxclients"
  // CONFIG SET may change it while the server runs (config_commands.h).
  bool changeable_while_serving = false;
};

// One accepted line: the setting's name as in SettingSpec, its value in
// the flag's own text (booleans "true"/"false", sizes as plain integers)
// and the line it came from.
struct ConfigDirective {
  std::string name;
  std::string value;
  int line = 0;
};

// The setting `name` names (dashes or underscores, any case, or an alias),
// or null.
const SettingSpec* FindSetting(absl::Span<const SettingSpec> settings,
                               absl::string_view name);

// Redis's spelling of a setting's name: underscores as dashes.
std::string DashedName(absl::string_view name);

// Splits one line into arguments as described above. InvalidArgument for
// an unbalanced quote or a closing quote followed by something other than
// a space.
absl::StatusOr<std::vector<std::string>> SplitConfigLine(
    absl::string_view line);

// `value` checked against `kind`, in the flag's own text. InvalidArgument
// saying what was expected.
absl::StatusOr<std::string> NormalizeSettingValue(SettingKind kind,
                                                  absl::string_view value);

// A byte size with Redis's units; InvalidArgument for anything else or a
// value past 2^63 - 1.
absl::StatusOr<int64_t> ParseByteSize(absl::string_view text);

// The lines of `text` (a config file named `file_name` in errors).
absl::StatusOr<std::vector<ConfigDirective>> ParseConfigText(
    absl::string_view text, absl::string_view file_name,
    absl::Span<const SettingSpec> settings);

// Reads `path` and parses it; InvalidArgument also when it cannot be read.
absl::StatusOr<std::vector<ConfigDirective>> ReadConfigFile(
    const std::string& path, absl::Span<const SettingSpec> settings);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_CONFIG_FILE_H_
