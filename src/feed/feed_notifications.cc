// FeedEngineImpl's notification feeds, and the grouped-read paging that
// ReadGroups shares with ReadNotifications.
//
// A notification feed is a timeline of kind kNotification in its user's
// shard whose group index is always on; the index keeps each group's seen
// and read flags and the unseen and unread counts. Every call here first
// reclaims the feed's expired entries (recording them as the sweeper
// would), so the index's counts are the visible ones and stay O(1); reads
// of a feed where nothing expired take the shard lock shared only.
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/feed_arguments.h"
#include "contract/group_entries.h"
#include "contract/group_pages.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

void FeedEngineImpl::FinishGroupPage(EntityId owner,
                                     const GroupReadOptions& options,
                                     bool notifications,
                                     GroupPage* page) const {
  CutGroupPage(owner, options, notifications, page);
  if (options.hydrate) {
    for (FeedGroup& group : page->groups) store_.Hydrate(&group.recent);
  }
}

NotificationCounts FeedEngineImpl::CountsOf(const Timeline* feed) {
  if (feed == nullptr) return {};
  const GroupIndex& groups = *feed->groups();
  return {groups.unseen_count(), groups.unread_count(), groups.group_count()};
}

template <typename Fn>
auto FeedEngineImpl::WithNotifications(EntityId user, Fn&& fn) {
  Shard& shard = ShardOf(user);
  const Micros now = options_.clock->Now();
  {
    const Shard& reader = shard;
    ReaderLock lock(&reader.mu());
    const Timeline* feed = reader.FindTimeline({user, FeedType::kNotification});
    if (feed == nullptr) return fn(nullptr);
    if (feed->MinExpiry() > now) return fn(feed);
  }
  // Something expired: reclaim it first (the feed may have changed since
  // the shared lock was released; Shard::Notifications looks again).
  WriterLock lock(&shard.mu());
  return fn(static_cast<const Timeline*>(shard.Notifications(user, now)));
}

absl::StatusOr<GroupPage> FeedEngineImpl::ReadNotifications(
    EntityId user, const GroupReadOptions& options) {
  absl::StatusOr<std::optional<EntryKey>> after =
      GroupPageStart(user, options, options_.max_page_size,
                     /*notifications=*/true);
  if (!after.ok()) return after.status();
  const GroupListLimits limits{options_.aggregation.max_group_actors,
                               options_.aggregation.max_group_entries};
  GroupPage page;
  const Micros now = options_.clock->Now();
  WithNotifications(user, [&](const Timeline* timeline) {
    if (timeline == nullptr) return 0;
    // One more than asked tells whether another page follows.
    if (options.kinds.every_kind()) {
      timeline->groups()->Collect(*after, options.limit + 1, limits,
                                  &page.groups);
      return 0;
    }
    // The index groups every kind: group the entries of the kinds asked
    // for, each group keeping the flags of its indexed group.
    std::vector<StoredEntry> entries;
    timeline->Collect(ReadOrder::kNewestFirst, EntryKey::Min(), EntryKey::Max(),
                      now, timeline->size(), &entries, options.kinds.kinds);
    page.groups = GroupEntries(entries, *after, options.limit + 1, limits);
    for (FeedGroup& group : page.groups) {
      timeline->groups()->FlagsOf(group.recent.front().key(), group.key,
                                  &group.seen, &group.read);
    }
    return 0;
  });
  FinishGroupPage(user, options, /*notifications=*/true, &page);
  return page;
}

absl::StatusOr<NotificationCounts> FeedEngineImpl::GetNotificationCounts(
    EntityId user) {
  return WithNotifications(user, &CountsOf);
}

std::optional<NotificationCounts> FeedEngineImpl::MarkNotifications(
    EntityId user, bool read, const EntryKey* key) {
  Shard& shard = ShardOf(user);
  WriterLock lock(&shard.mu());
  Timeline* feed = shard.Notifications(user, options_.clock->Now());
  if (feed == nullptr) {
    if (key != nullptr) return std::nullopt;
    return NotificationCounts{};
  }
  if (!shard.Mark(*feed, user, read, key)) return std::nullopt;
  return CountsOf(feed);
}

absl::StatusOr<NotificationCounts> FeedEngineImpl::MarkSeenInMemory(
    EntityId user) {
  return *MarkNotifications(user, /*read=*/false, nullptr);
}

absl::StatusOr<NotificationCounts> FeedEngineImpl::MarkAllReadInMemory(
    EntityId user) {
  return *MarkNotifications(user, /*read=*/true, nullptr);
}

absl::StatusOr<NotificationCounts> FeedEngineImpl::MarkReadInMemory(
    EntityId user, const EntryKey& key) {
  if (absl::Status bad = ValidateEntryKey(key, "key"); !bad.ok()) return bad;
  std::optional<NotificationCounts> counts =
      MarkNotifications(user, /*read=*/true, &key);
  if (!counts.has_value()) return NoNotificationWithKey(user, key);
  return *counts;
}

}  // namespace feedcore::internal
