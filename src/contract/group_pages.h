// What grouped reads (ReadGroups, ReadNotifications) and the group keys of
// a publish mean, shared by the in-process engine and the Redis Cluster
// backend so that both page, cut and group alike.
#ifndef FEEDCORE_SRC_CONTRACT_GROUP_PAGES_H_
#define FEEDCORE_SRC_CONTRACT_GROUP_PAGES_H_

#include <cstddef>
#include <optional>

#include "absl/status/statusor.h"
#include "feedcore/options.h"
#include "feedcore/types.h"

// Exported from the shared libfeedcore for the Redis backend's library,
// which calls this one copy (CMakeLists.txt, feedcore_contract).
#pragma GCC visibility push(default)
namespace feedcore::internal {

// The group key Publish gives `activity`'s timeline entries: 0 when the
// engine does not aggregate, else AggregationOptions' group_key or the
// default key.
GroupKey TimelineGroupKey(const EngineOptions& options,
                          const Activity& activity);
// The group key of `activity`'s notifications: 0 in flat notification
// feeds.
GroupKey NotificationGroupKey(const EngineOptions& options,
                              const Activity& activity);

// Where a grouped page of `owner`'s grouped home feed (or, with
// `notifications`, its notification feed) starts: after the group place
// its cursor names, or unset for the first page. InvalidArgument for a
// limit of 0 or above `max_page_size`, a bad kind filter, or a cursor that
// is malformed or belongs to another feed or filter.
absl::StatusOr<std::optional<EntryKey>> GroupPageStart(
    EntityId owner, const GroupReadOptions& options, size_t max_page_size,
    bool notifications);

// Cuts `page`, collected with one group more than asked, to
// `options.limit` and sets its cursor when a group was cut.
void CutGroupPage(EntityId owner, const GroupReadOptions& options,
                  bool notifications, GroupPage* page);

}  // namespace feedcore::internal
#pragma GCC visibility pop

#endif  // FEEDCORE_SRC_CONTRACT_GROUP_PAGES_H_
