#include "contract/group_pages.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "contract/cursor.h"
#include "contract/feed_arguments.h"
#include "contract/group_entries.h"

namespace feedcore::internal {
namespace {

GroupKey KeyOf(const AggregationOptions& aggregation,
               const Activity& activity) {
  if (aggregation.group_key) return aggregation.group_key(activity);
  return DefaultGroupKey(activity, aggregation.time_bucket);
}

}  // namespace

GroupKey TimelineGroupKey(const EngineOptions& options,
                          const Activity& activity) {
  if (!options.aggregation.enabled) return 0;
  return KeyOf(options.aggregation, activity);
}

GroupKey NotificationGroupKey(const EngineOptions& options,
                              const Activity& activity) {
  if (!options.notifications.aggregated) return 0;
  return KeyOf(options.aggregation, activity);
}

absl::StatusOr<std::optional<EntryKey>> GroupPageStart(
    EntityId owner, const GroupReadOptions& options, size_t max_page_size,
    bool notifications) {
  if (options.limit == 0 || options.limit > max_page_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit is ", options.limit, "; it must be 1..",
                     max_page_size, " (EngineOptions.max_page_size)"));
  }
  if (absl::Status bad =
          ValidateKindFilter(options.kinds, "GroupReadOptions.kinds");
      !bad.ok()) {
    return bad;
  }
  if (options.cursor.empty()) return std::nullopt;
  absl::StatusOr<GroupCursor> cursor =
      DecodeGroupCursor(options.cursor, notifications);
  if (!cursor.ok()) return cursor.status();
  if (cursor->owner != owner) {
    return absl::InvalidArgumentError(
        absl::StrCat("cursor belongs to the ",
                     notifications ? "notification feed" : "grouped feed",
                     " of ", cursor->owner, ", not of ", owner));
  }
  if (cursor->kinds != options.kinds.kinds) {
    return absl::InvalidArgumentError(
        "cursor was made for a read of other activity kinds; keep the "
        "first page's GroupReadOptions.kinds");
  }
  return EntryKey{cursor->ts, cursor->activity_id};
}

void CutGroupPage(EntityId owner, const GroupReadOptions& options,
                  bool notifications, GroupPage* page) {
  if (page->groups.size() <= options.limit) return;
  page->groups.pop_back();
  const StoredEntry& place = page->groups.back().recent.front();
  page->next_cursor = EncodeGroupCursor(
      {owner, place.ts, place.activity_id, notifications, options.kinds.kinds});
}

}  // namespace feedcore::internal
