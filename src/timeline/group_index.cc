#include "timeline/group_index.h"

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
  // Reserves room for `max` only when asked: the index knows its groups'
  // sizes, a read-time grouping does not.
  explicit RecentActors(size_t max, bool reserve = false) : max_(max) {
    if (reserve) actors_.reserve(max);
  }
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

// The first of a group's members (oldest first) whose key is not older
// than `key`.
template <typename Members>
auto LowerBound(Members& members, TimelineKey key) {
  return std::lower_bound(
      members.begin(), members.end(), key,
      [](const auto& member, TimelineKey k) { return member.key < k; });
}

}  // namespace

void GroupIndex::SetFlags(Group* group, bool seen, bool read) {
  if (group->seen != seen) seen ? --unseen_ : ++unseen_;
  if (group->read != read) read ? --unread_ : ++unread_;
  group->seen = seen;
  group->read = read;
}

GroupIndex::Group* GroupIndex::Find(TimelineKey key, GroupKey group) const {
  auto it = groups_.find(SlotOf(key, group));
  return it == groups_.end() ? nullptr : it->second.get();
}

void GroupIndex::Insert(Group* group, const Member& member) {
  // Something new in the group: the user has neither seen nor read it.
  SetFlags(group, false, false);
  auto& members = group->members;
  auto pos = LowerBound(members, member.key);
  assert(pos == members.end() || pos->key != member.key);
  const bool newest = pos == members.end();
  const size_t spilled_before = SpilledBytes(*group);
  if (newest && !members.empty()) order_.erase(members.back().key);
  if (std::none_of(members.begin(), members.end(),
                   [&](const Member& m) { return m.actor == member.actor; })) {
    ++group->actors;
  }
  members.insert(pos, member);
  spilled_bytes_ += SpilledBytes(*group) - spilled_before;
  if (newest) order_.emplace(member.key, group);
  ++entries_;
}

void GroupIndex::Erase(Group* group, TimelineKey key) {
  auto& members = group->members;
  auto pos = LowerBound(members, key);
  assert(pos != members.end() && pos->key == key);
  const bool newest = pos + 1 == members.end();
  const EntityId actor = pos->actor;
  members.erase(pos);
  if (std::none_of(members.begin(), members.end(),
                   [&](const Member& m) { return m.actor == actor; })) {
    --group->actors;
  }
  --entries_;
  if (newest) {
    order_.erase(key);
    if (!members.empty()) order_.emplace(members.back().key, group);
  }
  if (members.empty()) {
    spilled_bytes_ -= SpilledBytes(*group);
    unseen_ -= static_cast<size_t>(!group->seen);
    unread_ -= static_cast<size_t>(!group->read);
    groups_.erase(SlotOf(key, group->key));
  }
}

void GroupIndex::Add(const StoredEntry& entry) {
  const TimelineKey key{entry.ts, entry.activity_id};
  std::unique_ptr<Group>& group = groups_[SlotOf(key, entry.group)];
  if (group == nullptr) {
    group = std::make_unique<Group>();
    group->key = entry.group;
    // Born unseen and unread.
    ++unseen_;
    ++unread_;
  }
  Insert(group.get(), {key, entry.actor, entry.expires_at});
}

void GroupIndex::Replace(GroupKey old_group, const StoredEntry& entry) {
  const TimelineKey key{entry.ts, entry.activity_id};
  Group* group = Find(key, old_group);
  assert(group != nullptr);
  if (old_group != entry.group) {
    Erase(group, key);
    Add(entry);
    return;
  }
  auto& members = group->members;
  auto member = std::find_if(members.begin(), members.end(),
                             [&](const Member& m) { return m.key == key; });
  assert(member != members.end());
  if (member->actor != entry.actor) {
    const EntityId old_actor = member->actor;
    member->actor = entry.actor;
    auto holds = [&](EntityId actor) {
      return std::any_of(members.begin(), members.end(),
                         [&](const Member& m) { return m.actor == actor; });
    };
    if (!holds(old_actor)) --group->actors;
    if (std::count_if(members.begin(), members.end(), [&](const Member& m) {
          return m.actor == entry.actor;
        }) == 1) {
      ++group->actors;
    }
  }
  member->expires_at = entry.expires_at;
}

void GroupIndex::Remove(TimelineKey key, GroupKey group) {
  Group* g = Find(key, group);
  assert(g != nullptr);
  Erase(g, key);
}

size_t GroupIndex::bytes_used() const {
  // A group is one allocation: glibc adds an 8-byte header and rounds to
  // 16 bytes.
  constexpr size_t kGroupBytes = (sizeof(Group) + 8 + 15) / 16 * 16;
  using Order = decltype(order_);
  return groups_.capacity() * (sizeof(decltype(groups_)::value_type) + 1) +
         groups_.size() * kGroupBytes +
         2 * order_.size() * sizeof(Order::value_type) + spilled_bytes_;
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

void GroupIndex::MarkRead(TimelineKey key, GroupKey group) {
  Group* g = Find(key, group);
  assert(g != nullptr);
  SetFlags(g, true, true);
}

bool GroupIndex::SetSeen(TimelineKey place, bool read) {
  auto it = order_.find(place);
  if (it == order_.end()) return false;
  SetFlags(it->second, true, read);
  return true;
}

void GroupIndex::Collect(std::optional<TimelineKey> after, size_t want,
                         const GroupListLimits& limits,
                         std::vector<FeedGroup>* out) const {
  auto it = after.has_value() ? order_.upper_bound(*after) : order_.begin();
  out->reserve(out->size() + std::min(want, order_.size()));
  for (size_t taken = 0; it != order_.end() && taken < want; ++it, ++taken) {
    const Group& group = *it->second;
    const auto& members = group.members;
    FeedGroup result;
    result.key = group.key;
    result.activity_count = members.size();
    result.actor_count = group.actors;
    result.first_ts = members.front().key.ts;
    result.last_ts = members.back().key.ts;
    result.seen = group.seen;
    result.read = group.read;
    // Sized up front: a page's allocations, not its walk, were most of its
    // cost while these vectors grew by doubling.
    RecentActors actors(std::min(limits.max_actors, result.actor_count),
                        /*reserve=*/true);
    result.recent.reserve(std::min(limits.max_entries, result.activity_count));
    for (auto m = members.rbegin(); m != members.rend(); ++m) {
      const bool entries_full = result.recent.size() >= limits.max_entries;
      if (entries_full && actors.full()) break;
      if (!entries_full) {
        result.recent.push_back({m->key.ts,
                                 m->key.activity_id,
                                 m->actor,
                                 m->expires_at,
                                 group.key,
                                 {}});
      }
      actors.Offer(m->actor);
    }
    result.recent_actors = actors.Take();
    out->push_back(std::move(result));
  }
}

bool GroupIndex::CheckInvariants() const {
  size_t entries = 0;
  size_t spilled = 0;
  size_t unseen = 0;
  size_t unread = 0;
  for (const auto& [slot, group] : groups_) {
    if (group == nullptr || group->members.empty()) return false;
    if (group->read && !group->seen) return false;
    unseen += static_cast<size_t>(!group->seen);
    unread += static_cast<size_t>(!group->read);
    if (slot.key != group->key) return false;
    const auto& members = group->members;
    if (slot.key == 0 &&
        (members.size() != 1 || members.front().key != slot.solo)) {
      return false;
    }
    absl::flat_hash_set<EntityId> actors;
    for (size_t i = 0; i < members.size(); ++i) {
      if (i > 0 && !(members[i - 1].key < members[i].key)) return false;
      actors.insert(members[i].actor);
    }
    if (actors.size() != group->actors) return false;
    auto place = order_.find(members.back().key);
    if (place == order_.end() || place->second != group.get()) return false;
    entries += members.size();
    spilled += SpilledBytes(*group);
  }
  return entries == entries_ && spilled == spilled_bytes_ &&
         order_.size() == groups_.size() && unseen == unseen_ &&
         unread == unread_;
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
