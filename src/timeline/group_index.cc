#include "timeline/group_index.h"

#include <algorithm>
#include <cassert>

#include "absl/container/flat_hash_set.h"

namespace feedcore::internal {
namespace {

// The first of a group's members (oldest first) whose key is not older
// than `key`.
template <typename Members>
auto LowerBound(Members& members, EntryKey key) {
  return std::lower_bound(
      members.begin(), members.end(), key,
      [](const auto& member, EntryKey k) { return member.key < k; });
}

}  // namespace

void GroupIndex::SetFlags(Group* group, bool seen, bool read) {
  if (group->seen != seen) seen ? --unseen_ : ++unseen_;
  if (group->read != read) read ? --unread_ : ++unread_;
  group->seen = seen;
  group->read = read;
}

GroupIndex::Group* GroupIndex::Find(EntryKey key, GroupKey group) const {
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

void GroupIndex::Erase(Group* group, EntryKey key) {
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
  const EntryKey key{entry.ts, entry.activity_id};
  std::unique_ptr<Group>& group = groups_[SlotOf(key, entry.group)];
  if (group == nullptr) {
    group = std::make_unique<Group>();
    group->key = entry.group;
    // Born unseen and unread.
    ++unseen_;
    ++unread_;
  }
  Insert(group.get(), {key, entry.actor, entry.expires_at, entry.kind});
}

void GroupIndex::Replace(GroupKey old_group, const StoredEntry& entry) {
  const EntryKey key{entry.ts, entry.activity_id};
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
  member->kind = entry.kind;
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

void GroupIndex::Remove(EntryKey key, GroupKey group) {
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

void GroupIndex::MarkRead(EntryKey key, GroupKey group) {
  Group* g = Find(key, group);
  assert(g != nullptr);
  SetFlags(g, true, true);
}

bool GroupIndex::SetSeen(EntryKey place, bool read) {
  auto it = order_.find(place);
  if (it == order_.end()) return false;
  SetFlags(it->second, true, read);
  return true;
}

void GroupIndex::Collect(std::optional<EntryKey> after, size_t want,
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
                                 {},
                                 0,
                                 m->kind});
      }
      actors.Offer(m->actor);
    }
    result.recent_actors = actors.Take();
    out->push_back(std::move(result));
  }
}

void GroupIndex::FlagsOf(EntryKey key, GroupKey group, bool* seen,
                         bool* read) const {
  const Group* found = Find(key, group);
  assert(found != nullptr);
  *seen = found->seen;
  *read = found->read;
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

}  // namespace feedcore::internal
