// ClusterClient's builders of EVALSHA commands: they only shape commands,
// so they live apart from the client's routing and retries.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "redis/cluster_client.h"
#include "redis/key_slot.h"

namespace feedcore::redis {

Command ClusterClient::ScriptCommand(const Script& script, std::string key,
                                     std::vector<std::string> args,
                                     bool idempotent) {
  std::vector<std::string> keys;
  keys.push_back(std::move(key));
  return ScriptCommand(script, std::move(keys), std::move(args), idempotent);
}

Command ClusterClient::ScriptCommand(const Script& script,
                                     std::vector<std::string> keys,
                                     std::vector<std::string> args,
                                     bool idempotent) {
  Command command;
  command.slot = keys.empty() ? 0 : KeySlot(keys.front());
  command.idempotent = idempotent;
  command.args.reserve(keys.size() + args.size() + 3);
  command.args.push_back("EVALSHA");
  command.args.push_back(script.sha);
  command.args.push_back(absl::StrCat(keys.size()));
  for (std::string& key : keys) command.args.push_back(std::move(key));
  for (std::string& arg : args) command.args.push_back(std::move(arg));
  return command;
}

std::vector<Command> ClusterClient::ScriptCommandsBySlot(
    const Script& script, std::vector<std::string> keys, size_t keys_per_group,
    size_t max_groups_per_call, const std::vector<std::string>& args) {
  const size_t groups = keys.size() / keys_per_group;
  std::vector<uint16_t> slots(groups);
  for (size_t g = 0; g < groups; ++g) {
    slots[g] = KeySlot(keys[g * keys_per_group]);
  }
  const std::vector<uint32_t> order = OrderBySlot(slots);
  std::vector<Command> commands;
  for (size_t begin = 0; begin < groups;) {
    const uint16_t slot = slots[order[begin]];
    size_t end = begin + 1;
    while (end < groups && end - begin < max_groups_per_call &&
           slots[order[end]] == slot) {
      ++end;
    }
    Command& command = commands.emplace_back();
    command.slot = slot;
    const size_t key_count = (end - begin) * keys_per_group;
    command.args.reserve(3 + key_count + args.size());
    command.args.push_back("EVALSHA");
    command.args.push_back(script.sha);
    command.args.push_back(absl::StrCat(key_count));
    for (size_t i = begin; i < end; ++i) {
      for (size_t k = 0; k < keys_per_group; ++k) {
        command.args.push_back(std::move(keys[order[i] * keys_per_group + k]));
      }
    }
    command.args.insert(command.args.end(), args.begin(), args.end());
    begin = end;
  }
  return commands;
}

}  // namespace feedcore::redis
