// FeedModel's lists of accounts: plain maps and sets, and a list's feed
// made by reading every member's own feed whole.
#include <algorithm>

#include "model/feed_model.h"

namespace feedcore::testing {

absl::StatusOr<bool> FeedModel::SetList(EntityId owner, ListId list,
                                        const ListSettings& settings) {
  if (list == 0 || settings.name.empty() ||
      settings.name.size() > kMaxListNameBytes) {
    return absl::InvalidArgumentError("bad list id or name");
  }
  std::map<ListId, ModelList>& lists = lists_[owner];
  auto it = lists.find(list);
  if (it != lists.end()) {
    it->second.settings = settings;
    return false;
  }
  if (lists.size() >= kMaxListsPerOwner) {
    if (lists.empty()) lists_.erase(owner);
    return absl::ResourceExhaustedError("too many lists");
  }
  lists[list].settings = settings;
  return true;
}

absl::StatusOr<bool> FeedModel::DeleteList(EntityId owner, ListId list) {
  if (list == 0) return absl::InvalidArgumentError("list id 0");
  auto it = lists_.find(owner);
  if (it == lists_.end() || it->second.erase(list) == 0) return false;
  if (it->second.empty()) lists_.erase(it);
  return true;
}

absl::StatusOr<bool> FeedModel::ChangeListMember(EntityId owner, ListId list,
                                                 EntityId member, bool add) {
  if (list == 0) return absl::InvalidArgumentError("list id 0");
  auto it = lists_.find(owner);
  if (it == lists_.end() || !it->second.contains(list)) {
    return absl::NotFoundError("no such list");
  }
  std::set<EntityId>& members = it->second[list].members;
  if (!add) return members.erase(member) > 0;
  if (members.contains(member)) return false;
  if (members.size() >= kMaxListMembers) {
    return absl::ResourceExhaustedError("list full");
  }
  members.insert(member);
  return true;
}

std::vector<AccountList> FeedModel::Lists(EntityId owner) const {
  std::vector<AccountList> out;
  auto it = lists_.find(owner);
  if (it == lists_.end()) return out;
  for (const auto& [id, list] : it->second) {
    out.push_back({id, list.settings, list.members.size()});
  }
  return out;
}

absl::StatusOr<std::vector<EntityId>> FeedModel::ListMembers(
    EntityId owner, ListId list) const {
  if (list == 0) return absl::InvalidArgumentError("list id 0");
  auto it = lists_.find(owner);
  if (it == lists_.end() || !it->second.contains(list)) {
    return absl::NotFoundError("no such list");
  }
  const std::set<EntityId>& members = it->second.at(list).members;
  return std::vector<EntityId>(members.begin(), members.end());
}

absl::StatusOr<std::vector<StoredEntry>> FeedModel::ReadList(
    EntityId owner, ListId list, ReadOrder order, std::optional<Micros> min_ts,
    std::optional<Micros> max_ts, std::optional<Key> after, Micros now,
    bool hydrate, uint64_t kinds) const {
  absl::StatusOr<std::vector<EntityId>> members = ListMembers(owner, list);
  if (!members.ok()) return members.status();
  std::vector<StoredEntry> out;
  for (const EntityId member : *members) {
    if (HidesInTimeline(owner, member, now) || Blocks(member, owner)) continue;
    for (StoredEntry& e : Read(Feed::kOwn, member, order, min_ts, max_ts, after,
                               now, hydrate, kinds)) {
      out.push_back(std::move(e));
    }
  }
  std::sort(out.begin(), out.end(),
            [order](const StoredEntry& a, const StoredEntry& b) {
              return order == ReadOrder::kNewestFirst ? a.key() > b.key()
                                                      : a.key() < b.key();
            });
  return out;
}

bool FeedModel::ExcludesFromHome(EntityId owner, EntityId actor) const {
  auto it = lists_.find(owner);
  if (it == lists_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [actor](const auto& entry) {
                       return entry.second.settings.exclusive &&
                              entry.second.members.contains(actor);
                     });
}

}  // namespace feedcore::testing
