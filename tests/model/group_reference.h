// A plain reference for grouped reads: the groups of a feed worked out from
// its flat entries with ordinary containers, to compare with
// FeedEngine::ReadGroups.
#ifndef FEEDCORE_TESTS_GROUP_REFERENCE_H_
#define FEEDCORE_TESTS_GROUP_REFERENCE_H_

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "feedcore/feed_engine.h"
#include "feedcore/types.h"

namespace feedcore::testing {

// The groups of `entries` (a whole feed's visible entries, in any order),
// newest group first, listing at most `max_actors` actors and `max_entries`
// entries per group.
inline std::vector<FeedGroup> ReferenceGroups(std::vector<StoredEntry> entries,
                                              size_t max_actors,
                                              size_t max_entries) {
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return std::pair(a.ts, a.activity_id) > std::pair(b.ts, b.activity_id);
  });
  // Group key 0: a group per entry, named by its position.
  std::map<std::pair<GroupKey, size_t>, std::vector<StoredEntry>> members;
  for (size_t i = 0; i < entries.size(); ++i) {
    StoredEntry e = entries[i];
    e.payload.clear();
    members[{e.group, e.group == 0 ? i : 0}].push_back(e);
  }
  std::vector<FeedGroup> groups;
  for (const auto& [slot, list] : members) {
    FeedGroup g;
    g.key = slot.first;
    g.activity_count = list.size();
    std::set<EntityId> actors;
    for (const StoredEntry& e : list) {
      if (actors.insert(e.actor).second &&
          g.recent_actors.size() < max_actors) {
        g.recent_actors.push_back(e.actor);
      }
    }
    g.actor_count = actors.size();
    g.recent.assign(list.begin(),
                    list.begin() + std::min(list.size(), max_entries));
    g.first_ts = list.back().ts;
    g.last_ts = list.front().ts;
    groups.push_back(std::move(g));
  }
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    const StoredEntry& x = a.recent.front();
    const StoredEntry& y = b.recent.front();
    return std::pair(x.ts, x.activity_id) > std::pair(y.ts, y.activity_id);
  });
  return groups;
}

// Every visible entry of `owner`'s timeline, newest first, paged.
inline std::vector<StoredEntry> WholeTimeline(const FeedEngine& engine,
                                              EntityId owner) {
  std::vector<StoredEntry> out;
  ReadOptions read;
  read.limit = engine.options().max_page_size;
  for (;;) {
    absl::StatusOr<Page> page = engine.ReadTimeline(owner, read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    out.insert(out.end(), page->entries.begin(), page->entries.end());
    if (page->next_cursor.empty()) return out;
    read.cursor = page->next_cursor;
  }
}

// Every group of `owner`, paged `limit` at a time; checks that no page is
// empty before the end and that no group shows twice.
inline std::vector<FeedGroup> AllGroups(const FeedEngine& engine,
                                        EntityId owner, size_t limit) {
  std::vector<FeedGroup> out;
  GroupReadOptions read;
  read.limit = limit;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 100000);
    absl::StatusOr<GroupPage> page = engine.ReadGroups(owner, read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    CHECK(page->groups.size() <= limit);
    out.insert(out.end(), page->groups.begin(), page->groups.end());
    if (page->next_cursor.empty()) break;
    CHECK(page->groups.size() == limit);
    read.cursor = page->next_cursor;
  }
  return out;
}

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_GROUP_REFERENCE_H_
