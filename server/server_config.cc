#include "server_config.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "config_file.h"
#include "glob_match.h"
#include "server_settings.h"

namespace feedcore::server {
namespace {

absl::Status SetFailed(absl::string_view argument, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("ERR CONFIG SET failed (possibly related to argument '",
                   argument, "') - ", what));
}

// Applies one changeable setting to `options`; the message of a failure is
// what follows " - " in Redis's reply.
absl::Status ApplyTo(ServerOptions& options, const SettingSpec& spec,
                     const std::string& value) {
  if (spec.name == "requirepass") {
    options.requirepass = value;
    return ValidateServerOptions(options);
  }
  int64_t number = 0;
  if (spec.kind == SettingKind::kBytes) {
    absl::StatusOr<int64_t> bytes = ParseByteSize(value);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError("argument must be a memory value");
    }
    number = *bytes;
  } else if (!absl::SimpleAtoi(value, &number) || value.empty() ||
             absl::ascii_isspace(static_cast<unsigned char>(value.back()))) {
    return absl::InvalidArgumentError(
        "argument couldn't be parsed into an integer");
  }
  if (number < 0) {
    return absl::InvalidArgumentError("argument must not be negative");
  }
  const size_t size = static_cast<size_t>(number);
  if (spec.name == "timeout") {
    options.idle_timeout_seconds = number;
  } else if (spec.name == "max_clients") {
    options.max_clients = size;
  } else if (spec.name == "client_query_buffer_limit") {
    options.client_query_buffer_limit = size;
  } else if (spec.name == "client_output_buffer_limit") {
    options.client_output_buffer_limit = size;
  } else if (spec.name == "client_query_buffer_total_limit") {
    options.client_query_buffer_total_limit = size;
  } else {
    return absl::InternalError(
        absl::StrCat(spec.name, " is marked changeable but is not handled"));
  }
  return ValidateServerOptions(options);
}

}  // namespace

ServerConfig::ServerConfig(const ServerOptions& options,
                           absl::flat_hash_map<std::string, std::string> texts)
    : options_(options),
      texts_(std::move(texts)),
      idle_timeout_seconds_(options.idle_timeout_seconds),
      max_clients_(options.max_clients),
      query_buffer_limit_(options.client_query_buffer_limit),
      output_buffer_limit_(options.client_output_buffer_limit),
      query_buffer_total_limit_(options.client_query_buffer_total_limit) {}

std::string ServerConfig::requirepass() const {
  internal::WriterLock lock(&mutex_);
  return options_.requirepass;
}

bool ServerConfig::password_required() const {
  internal::WriterLock lock(&mutex_);
  return !options_.requirepass.empty();
}

std::string ServerConfig::TextOf(const std::string& name) const {
  if (name == "timeout") return absl::StrCat(options_.idle_timeout_seconds);
  if (name == "max_clients") return absl::StrCat(options_.max_clients);
  if (name == "requirepass") return options_.requirepass;
  if (name == "client_query_buffer_limit") {
    return absl::StrCat(options_.client_query_buffer_limit);
  }
  if (name == "client_output_buffer_limit") {
    return absl::StrCat(options_.client_output_buffer_limit);
  }
  if (name == "client_query_buffer_total_limit") {
    return absl::StrCat(options_.client_query_buffer_total_limit);
  }
  const auto it = texts_.find(name);
  return it == texts_.end() ? "" : it->second;
}

std::vector<std::pair<std::string, std::string>> ServerConfig::Get(
    absl::Span<const std::string> patterns) const {
  std::vector<std::string> globs;
  for (const std::string& pattern : patterns) {
    globs.push_back(DashedName(pattern));
  }
  const auto matches = [&globs](absl::string_view name) {
    for (const std::string& glob : globs) {
      if (GlobMatch(glob, name, /*nocase=*/true)) return true;
    }
    return false;
  };
  std::vector<std::pair<std::string, std::string>> out;
  internal::WriterLock lock(&mutex_);
  for (const SettingSpec& spec : ServerSettings()) {
    std::string value = TextOf(spec.name);
    if (spec.kind == SettingKind::kBoolean) {
      value = value == "true" ? "yes" : value == "false" ? "no" : value;
    }
    std::vector<std::string> names = {DashedName(spec.name)};
    names.insert(names.end(), spec.aliases.begin(), spec.aliases.end());
    for (const std::string& name : names) {
      if (matches(name)) out.emplace_back(name, value);
    }
  }
  if (matches("save")) out.emplace_back("save", "");
  return out;
}

absl::Status ServerConfig::Set(absl::Span<const std::string> names_and_values) {
  if (names_and_values.empty() || names_and_values.size() % 2 != 0) {
    return absl::InvalidArgumentError("ERR syntax error");
  }
  internal::WriterLock lock(&mutex_);
  ServerOptions candidate = options_;
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < names_and_values.size(); i += 2) {
    const std::string& name = names_and_values[i];
    const SettingSpec* spec = FindSetting(ServerSettings(), name);
    if (spec == nullptr && absl::AsciiStrToLower(name) != "save") {
      return absl::InvalidArgumentError(absl::StrCat(
          "ERR Unknown option or number of arguments for CONFIG SET - '", name,
          "'"));
    }
    if (spec == nullptr || !spec->changeable_while_serving) {
      return SetFailed(name, "can't set immutable config");
    }
    if (!seen.insert(spec->name).second) {
      return SetFailed(name, "duplicate parameter");
    }
    if (absl::Status status =
            ApplyTo(candidate, *spec, names_and_values[i + 1]);
        !status.ok()) {
      return SetFailed(name, status.message());
    }
  }
  options_ = candidate;
  idle_timeout_seconds_.store(candidate.idle_timeout_seconds,
                              std::memory_order_relaxed);
  max_clients_.store(candidate.max_clients, std::memory_order_relaxed);
  query_buffer_limit_.store(candidate.client_query_buffer_limit,
                            std::memory_order_relaxed);
  output_buffer_limit_.store(candidate.client_output_buffer_limit,
                             std::memory_order_relaxed);
  query_buffer_total_limit_.store(candidate.client_query_buffer_total_limit,
                                  std::memory_order_relaxed);
  return absl::OkStatus();
}

}  // namespace feedcore::server
