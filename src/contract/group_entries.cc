#include "contract/group_entries.h"

#include <xxhash.h>

#include "absl/container/flat_hash_map.h"

namespace feedcore::internal {

GroupKey DefaultGroupKey(const Activity& activity, Micros time_bucket) {
  if (activity.verb == 0 && activity.object == 0) return 0;
  const uint64_t parts[3] = {activity.verb, activity.object,
                             static_cast<uint64_t>(activity.ts / time_bucket)};
  const GroupKey key = XXH3_64bits(parts, sizeof(parts));
  return key != 0 ? key : 1;
}

std::vector<FeedGroup> GroupEntries(const std::vector<StoredEntry>& entries,
                                    std::optional<EntryKey> after, size_t want,
                                    const GroupListLimits& limits) {
  struct Building {
    FeedGroup group;
    EntryKey place;
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
                        EntryKey{entry.ts, entry.activity_id},
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
