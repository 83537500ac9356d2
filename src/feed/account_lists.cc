#include "feed/account_lists.h"

namespace feedcore::internal {

bool OwnerLists::Set(ListId list, const ListSettings& settings) {
  auto [it, created] = lists_.try_emplace(list);
  AccountListState& state = it->second;
  if (!created && state.settings.exclusive) CountExclusive(state, -1);
  state.settings = settings;
  if (state.settings.exclusive) CountExclusive(state, +1);
  return created;
}

bool OwnerLists::Delete(ListId list) {
  auto it = lists_.find(list);
  if (it == lists_.end()) return false;
  if (it->second.settings.exclusive) CountExclusive(it->second, -1);
  lists_.erase(it);
  return true;
}

bool OwnerLists::Add(ListId list, EntityId member) {
  AccountListState& state = lists_.at(list);
  if (!state.members.insert(member).second) return false;
  if (state.settings.exclusive) ++exclusive_[member];
  return true;
}

bool OwnerLists::Remove(ListId list, EntityId member) {
  AccountListState& state = lists_.at(list);
  if (state.members.erase(member) == 0) return false;
  if (state.settings.exclusive) {
    auto it = exclusive_.find(member);
    if (--it->second == 0) exclusive_.erase(it);
  }
  return true;
}

std::vector<EntityId> OwnerLists::Excluded() const {
  std::vector<EntityId> out;
  out.reserve(exclusive_.size());
  for (const auto& [actor, lists] : exclusive_) out.push_back(actor);
  return out;
}

void OwnerLists::CountExclusive(const AccountListState& list, int sign) {
  for (const EntityId member : list.members) {
    if (sign > 0) {
      ++exclusive_[member];
    } else {
      auto it = exclusive_.find(member);
      if (--it->second == 0) exclusive_.erase(it);
    }
  }
}

}  // namespace feedcore::internal
