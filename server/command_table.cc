#include "command_table.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"

namespace feedcore::server {

absl::Status CommandTable::Add(CommandSpec spec) {
  if (spec.name.empty() || spec.name != AsciiUpper(spec.name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "command name must be non-empty upper case, got ", Quote(spec.name)));
  }
  if (spec.arity == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("command ", spec.name, ": arity must not be 0"));
  }
  if (spec.handler == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("command ", spec.name, " has no handler"));
  }
  if (index_.contains(spec.name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("command ", spec.name, " is already registered"));
  }
  spec.counters = std::make_shared<CommandCounters>();
  index_.emplace(spec.name, specs_.size());
  specs_.push_back(std::move(spec));
  return absl::OkStatus();
}

const CommandSpec* CommandTable::Find(absl::string_view name) const {
  auto it = index_.find(AsciiUpper(name));
  return it == index_.end() ? nullptr : &specs_[it->second];
}

void ReplyError(CommandCall& call, const absl::Status& status) {
  call.reply->Error(absl::StrCat("ERR ", status.message()));
}

void ReplySyntaxError(CommandCall& call, absl::string_view argument) {
  call.reply->Error(absl::StrCat("ERR syntax error: unexpected argument ",
                                 Quote(argument), " for '",
                                 absl::AsciiStrToLower(call.args[0]),
                                 "' (docs/server.md lists the syntax)"));
}

}  // namespace feedcore::server
