// libFuzzer target of feedcore-server's config file parser
// (server/config_file.h) with the server's own settings: the file is
// outside input. Whatever the text, parsing must return (no crash, no
// hang) with either an error naming a line of the text or directives
// that each name a known setting, come from a line of the text in order,
// and hold a value in its setting's normal form (the flag's own text).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "config_file.h"
#include "server_settings.h"

namespace {

using feedcore::server::ConfigDirective;
using feedcore::server::FindSetting;
using feedcore::server::NormalizeSettingValue;
using feedcore::server::ParseConfigText;
using feedcore::server::ServerSettings;
using feedcore::server::SettingKind;
using feedcore::server::SettingSpec;
using feedcore::server::SplitConfigLine;

void Check(bool condition) {
  if (!condition) std::abort();
}

// The flag's own text: a boolean true or false, a number plain decimal.
bool IsNormalForm(SettingKind kind, absl::string_view value) {
  switch (kind) {
    case SettingKind::kString:
      return true;
    case SettingKind::kBoolean:
      return value == "true" || value == "false";
    case SettingKind::kInteger:
      if (absl::StartsWith(value, "-")) value.remove_prefix(1);
      [[fallthrough]];
    case SettingKind::kBytes:
      return !value.empty() &&
             absl::c_all_of(value, [](char c) { return c >= '0' && c <= '9'; });
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const int lines = static_cast<int>(
      std::vector<absl::string_view>(absl::StrSplit(text, '\n')).size());
  absl::StatusOr<std::vector<ConfigDirective>> directives =
      ParseConfigText(text, "fuzz.conf", ServerSettings());
  if (!directives.ok()) {
    Check(absl::StartsWith(directives.status().message(), "fuzz.conf:"));
    return 0;
  }
  int previous_line = 0;
  for (const ConfigDirective& directive : *directives) {
    const SettingSpec* spec = FindSetting(ServerSettings(), directive.name);
    Check(spec != nullptr && spec->name == directive.name);
    Check(directive.line > previous_line && directive.line <= lines);
    previous_line = directive.line;
    absl::StatusOr<std::string> again =
        NormalizeSettingValue(spec->kind, directive.value);
    Check(again.ok() && *again == directive.value);
    Check(IsNormalForm(spec->kind, directive.value));
  }
  // Any one line splits or fails on its own, whatever the rest holds.
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    (void)SplitConfigLine(line);
  }
  return 0;
}
