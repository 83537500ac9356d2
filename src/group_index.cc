#include "group_index.h"

#include <xxhash.h>

#include <algorithm>
#include <cassert>

#include "absl/container/flat_hash_set.h"

namespace feedcore::internal {
namespace {

// Collects the distinct actors of a group, most recent first. Groups list
// a handful of actors, so a linear scan beats hashing until the list gets
// long.
class RecentActors {
 public:
  explicit RecentActors(size_t max) : max_(max) {}
  bool full() const { return actors_.size() >= max_; }
  void Offer(EntityId actor) {
    if (full()) return;
    if (actors_.size() < kLinearLimit) {
      if (std::find(actors_.begin(), actors_.end(), actor) != actors_.end()) {
        return;
      }
      if (actors_.size() + 1 == kLinearLimit) {
        seen_.insert(actors_.begin(), actors_.end());
        seen_.insert(actor);
      }
    } else if (!seen_.insert(actor).second) {
      return;
    }
    actors_.push_back(actor);
  }
  std::vector<EntityId> Take() { return std::move(actors_); }

 private:
  static constexpr size_t kLinearLimit = 32;
  const size_t max_;
  std::vector<EntityId> actors_;
  absl::flat_hash_set<EntityId> seen_;
};

}  // namespace

void GroupIndex::SetFlags(Group* group, bool seen, bool read) {
  if (group->seen != seen) seen ? --unseen_ : ++unseen_;
  if (group->read != read) read ? --unread_ : ++unread_;
  group->seen = seen;
  group->read = read;
}

void GroupIndex::Insert(Group* group, TimelineKey key, const Member& member) {
  // Something new in the group: the user has neither seen nor read it.
  SetFlags(group, false, false);
  const bool newest =
      group->members.empty() || key > group->members.begin()->first;
  if (newest && !group->members.empty()) {
    order_.erase(group->members.begin()->first);
  }
  group->members.emplace(key, member);
  ++group->actor_entries[member.actor];
  if (newest) order_.emplace(key, group);
  group_of_[key] = group;
}

void GroupIndex::Erase(Group* group, TimelineKey key) {
  auto member = group->members.find(key);
  assert(member != group->members.end());
  const bool newest = member == group->members.begin();
  auto count = group->actor_entries.find(member->second.actor);
  assert(count != group->actor_entries.end());
  if (--count->second == 0) group->actor_entries.erase(count);
  group->members.erase(member);
  group_of_.erase(key);
  if (newest) {
    order_.erase(key);
    if (!group->members.empty()) {
      order_.emplace(group->members.begin()->first, group);
    }
  }
  if (group->members.empty()) {
    unseen_ -= static_cast<size_t>(!group->seen);
    unread_ -= static_cast<size_t>(!group->read);
    Slot slot{group->key, group->key == 0 ? key : TimelineKey{}};
    groups_.erase(slot);
  }
}

void GroupIndex::Add(const StoredEntry& entry) {
  const TimelineKey key{entry.ts, entry.activity_id};
  assert(!group_of_.contains(key));
  std::unique_ptr<Group>& group = groups_[SlotOf(entry)];
  if (group == nullptr) {
    group = std::make_unique<Group>();
    group->key = entry.group;
    // Born unseen and unread.
    ++unseen_;
    ++unread_;
  }
  Insert(group.get(), key, {entry.actor, entry.expires_at});
}

void GroupIndex::Replace(const StoredEntry& entry) {
  const TimelineKey key{entry.ts, entry.activity_id};
  auto it = group_of_.find(key);
  assert(it != group_of_.end());
  Group* group = it->second;
  if (group->key == entry.group) {
    Member& member = group->members.find(key)->second;
    if (member.actor != entry.actor) {
      auto count = group->actor_entries.find(member.actor);
      if (--count->second == 0) group->actor_entries.erase(count);
      ++group->actor_entries[entry.actor];
      member.actor = entry.actor;
    }
    member.expires_at = entry.expires_at;
    return;
  }
  Erase(group, key);
  Add(entry);
}

void GroupIndex::Remove(TimelineKey key) {
  auto it = group_of_.find(key);
  assert(it != group_of_.end());
  Erase(it->second, key);
}

void GroupIndex::MarkAllSeen() {
  for (auto& [place, group] : order_) group->seen = true;
  unseen_ = 0;
}

void GroupIndex::MarkAllRead() {
  for (auto& [place, group] : order_) {
    group->seen = true;
    group->read = true;
  }
  unseen_ = 0;
  unread_ = 0;
}

bool GroupIndex::MarkRead(TimelineKey key) {
  auto it = group_of_.find(key);
  if (it == group_of_.end()) return false;
  SetFlags(it->second, true, true);
  return true;
}

bool GroupIndex::SetSeen(TimelineKey place, bool read) {
  auto it = order_.find(place);
  if (it == order_.end()) return false;
  SetFlags(it->second, true, read);
  return true;
}

GroupKey GroupIndex::GroupOf(TimelineKey key) const {
  auto it = group_of_.find(key);
  assert(it != group_of_.end());
  return it->second->key;
}

void GroupIndex::Collect(std::optional<TimelineKey> after, size_t want,
                         const GroupListLimits& limits,
                         std::vector<FeedGroup>* out) const {
  auto it = after.has_value() ? order_.upper_bound(*after) : order_.begin();
  for (size_t taken = 0; it != order_.end() && taken < want; ++it, ++taken) {
    const Group& group = *it->second;
    FeedGroup result;
    result.key = group.key;
    result.activity_count = group.members.size();
    result.actor_count = group.actor_entries.size();
    result.first_ts = group.members.rbegin()->first.ts;
    result.last_ts = group.members.begin()->first.ts;
    result.seen = group.seen;
    result.read = group.read;
    RecentActors actors(std::min(limits.max_actors, result.actor_count));
    for (const auto& [key, member] : group.members) {
      const bool entries_full = result.recent.size() >= limits.max_entries;
      if (entries_full && actors.full()) break;
      if (!entries_full) {
        result.recent.push_back({key.ts,
                                 key.activity_id,
                                 member.actor,
                                 member.expires_at,
                                 group.key,
                                 {}});
      }
      actors.Offer(member.actor);
    }
    result.recent_actors = actors.Take();
    out->push_back(std::move(result));
  }
}

bool GroupIndex::CheckInvariants() const {
  size_t members = 0;
  size_t unseen = 0;
  size_t unread = 0;
  for (const auto& [slot, group] : groups_) {
    if (group == nullptr || group->members.empty()) return false;
    if (group->read && !group->seen) return false;
    unseen += static_cast<size_t>(!group->seen);
    unread += static_cast<size_t>(!group->read);
    if (slot.key != group->key) return false;
    if (slot.key == 0 && (group->members.size() != 1 ||
                          group->members.begin()->first != slot.solo)) {
      return false;
    }
    absl::flat_hash_map<EntityId, uint32_t> actors;
    for (const auto& [key, member] : group->members) {
      auto owner = group_of_.find(key);
      if (owner == group_of_.end() || owner->second != group.get()) {
        return false;
      }
      ++actors[member.actor];
    }
    if (actors != group->actor_entries) return false;
    auto place = order_.find(group->members.begin()->first);
    if (place == order_.end() || place->second != group.get()) return false;
    members += group->members.size();
  }
  return members == group_of_.size() && order_.size() == groups_.size() &&
         unseen == unseen_ && unread == unread_;
}

GroupKey DefaultGroupKey(const Activity& activity, Micros time_bucket) {
  if (activity.verb == 0 && activity.object == 0) return 0;
  const uint64_t parts[3] = {activity.verb, activity.object,
                             static_cast<uint64_t>(activity.ts / time_bucket)};
  const GroupKey key = XXH3_64bits(parts, sizeof(parts));
  return key != 0 ? key : 1;
}

std::vector<FeedGroup> GroupEntries(const std::vector<StoredEntry>& entries,
                                    std::optional<TimelineKey> after,
                                    size_t want,
                                    const GroupListLimits& limits) {
  struct Building {
    FeedGroup group;
    TimelineKey place;
    absl::flat_hash_set<EntityId> actors;
    RecentActors recent_actors;
  };
  std::vector<Building> groups;
  absl::flat_hash_map<GroupKey, size_t> index_of_key;
  for (const StoredEntry& entry : entries) {
    size_t index;
    if (entry.group == 0) {
      index = groups.size();
    } else {
      auto [it, inserted] =
          index_of_key.try_emplace(entry.group, groups.size());
      index = it->second;
    }
    if (index == groups.size()) {
      groups.push_back({FeedGroup{},
                        TimelineKey{entry.ts, entry.activity_id},
                        {},
                        RecentActors(limits.max_actors)});
      groups.back().group.key = entry.group;
      groups.back().group.last_ts = entry.ts;
    }
    Building& building = groups[index];
    FeedGroup& group = building.group;
    ++group.activity_count;
    group.first_ts = entry.ts;
    if (group.recent.size() < limits.max_entries) {
      group.recent.push_back(entry);
      group.recent.back().payload.clear();
    }
    building.actors.insert(entry.actor);
    building.recent_actors.Offer(entry.actor);
  }
  // Entries come newest first, so groups were opened in order of place.
  std::vector<FeedGroup> out;
  for (Building& building : groups) {
    if (out.size() >= want) break;
    if (after.has_value() && !(building.place < *after)) continue;
    building.group.actor_count = building.actors.size();
    building.group.recent_actors = building.recent_actors.Take();
    out.push_back(std::move(building.group));
  }
  return out;
}

}  // namespace feedcore::internal
