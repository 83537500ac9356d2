// FeedEngineImpl: grouped-read paging shared by ReadGroups and
// ReadNotifications, and the notification feeds' calls.
//
// A notification feed is a timeline of kind kNotification in its user's
// shard whose group index is always on; the index keeps each group's seen
// and read flags and the unseen and unread counts. Every call here first
// reclaims the feed's expired entries (recording them as the sweeper
// would), so the index's counts are the visible ones and stay O(1); reads
// of a feed where nothing expired take the shard lock shared only.
#include "absl/strings/str_cat.h"
#include "feed/feed_engine_impl.h"
#include "timeline/cursor.h"

namespace feedcore::internal {

absl::StatusOr<std::optional<TimelineKey>> FeedEngineImpl::GroupReadStart(
    EntityId owner, const GroupReadOptions& options, bool notifications) const {
  if (options.limit == 0 || options.limit > options_.max_page_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit is ", options.limit, "; it must be 1..",
                     options_.max_page_size, " (EngineOptions.max_page_size)"));
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
  return TimelineKey{cursor->ts, cursor->activity_id};
}

void FeedEngineImpl::FinishGroupPage(EntityId owner,
                                     const GroupReadOptions& options,
                                     bool notifications,
                                     GroupPage* page) const {
  if (page->groups.size() > options.limit) {
    page->groups.pop_back();
    const StoredEntry& place = page->groups.back().recent.front();
    page->next_cursor =
        EncodeGroupCursor({owner, place.ts, place.activity_id, notifications});
  }
  if (options.hydrate) {
    for (FeedGroup& group : page->groups) store_.Hydrate(&group.recent);
  }
}

FeedEngineImpl::TimelineMap::iterator FeedEngineImpl::NotificationsLocked(
    Shard& shard, EntityId user, Micros now) {
  const TimelineId id{user, FeedKind::kNotification};
  auto it = shard.timelines.find(id);
  if (it == shard.timelines.end() || it->second->timeline.MinExpiry() > now) {
    return it;
  }
  // Bounded by NotificationOptions::max_length.
  EvictTimelineLocked(shard, it, now, std::numeric_limits<size_t>::max());
  return shard.timelines.find(id);
}

NotificationCounts FeedEngineImpl::CountsOf(const Timeline* feed) {
  if (feed == nullptr) return {};
  const GroupIndex& groups = *feed->groups();
  return {groups.unseen_count(), groups.unread_count(), groups.group_count()};
}

bool FeedEngineImpl::MarkLocked(Shard& shard, TimelineMap::iterator it,
                                EntityId user, bool read,
                                const TimelineKey* key) {
  Timeline& timeline = it->second->timeline;
  GroupIndex& groups = *timeline.mutable_groups();
  if (key != nullptr) {
    // The timeline knows whether it holds `key`, and in which group.
    const std::optional<GroupKey> group = timeline.GroupOf(*key);
    if (!group.has_value()) return false;
    groups.MarkRead(*key, *group);
  } else if (read) {
    groups.MarkAllRead();
  } else {
    groups.MarkAllSeen();
  }
  if (log_ != nullptr) {
    ChangeRecord record;
    record.kind =
        read ? ChangeKind::kNotificationRead : ChangeKind::kNotificationSeen;
    record.domain = DomainOf(shard);
    record.feed = FeedType::kNotification;
    record.entity = user;
    if (key != nullptr) record.keys.push_back({key->ts, key->activity_id});
    log_->Append(std::move(record));
  }
  return true;
}

template <typename Fn>
auto FeedEngineImpl::WithNotifications(EntityId user, Fn&& fn) {
  Shard& shard = shards_[ShardIndex(user)];
  const TimelineId id{user, FeedKind::kNotification};
  const Micros now = options_.clock->Now();
  {
    ReaderLock lock(&shard.mu);
    auto it = shard.timelines.find(id);
    if (it == shard.timelines.end()) return fn(nullptr);
    const Timeline& timeline = it->second->timeline;
    if (timeline.MinExpiry() > now) return fn(&timeline);
  }
  // Something expired: reclaim it first (the feed may have changed since
  // the shared lock was released; NotificationsLocked looks again).
  WriterLock lock(&shard.mu);
  return fn(TimelineAt(shard, NotificationsLocked(shard, user, now)));
}

absl::StatusOr<GroupPage> FeedEngineImpl::ReadNotifications(
    EntityId user, const GroupReadOptions& options) {
  absl::StatusOr<std::optional<TimelineKey>> after =
      GroupReadStart(user, options, /*notifications=*/true);
  if (!after.ok()) return after.status();
  const GroupListLimits limits{options_.aggregation.max_group_actors,
                               options_.aggregation.max_group_entries};
  GroupPage page;
  WithNotifications(user, [&](const Timeline* timeline) {
    // One more than asked tells whether another page follows.
    if (timeline != nullptr) {
      timeline->groups()->Collect(*after, options.limit + 1, limits,
                                  &page.groups);
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

absl::StatusOr<NotificationCounts> FeedEngineImpl::MarkSeen(EntityId user) {
  Shard& shard = shards_[ShardIndex(user)];
  WriterLock lock(&shard.mu);
  auto it = NotificationsLocked(shard, user, options_.clock->Now());
  if (it == shard.timelines.end()) return NotificationCounts{};
  MarkLocked(shard, it, user, /*read=*/false, nullptr);
  return CountsOf(TimelineAt(shard, it));
}

absl::StatusOr<NotificationCounts> FeedEngineImpl::MarkAllRead(EntityId user) {
  Shard& shard = shards_[ShardIndex(user)];
  WriterLock lock(&shard.mu);
  auto it = NotificationsLocked(shard, user, options_.clock->Now());
  if (it == shard.timelines.end()) return NotificationCounts{};
  MarkLocked(shard, it, user, /*read=*/true, nullptr);
  return CountsOf(TimelineAt(shard, it));
}

absl::StatusOr<NotificationCounts> FeedEngineImpl::MarkRead(
    EntityId user, Micros ts, ActivityId activity_id) {
  if (ts < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ts is ", ts, "; it must be >= 0"));
  }
  const TimelineKey key{ts, activity_id};
  Shard& shard = shards_[ShardIndex(user)];
  WriterLock lock(&shard.mu);
  auto it = NotificationsLocked(shard, user, options_.clock->Now());
  if (it == shard.timelines.end() ||
      !MarkLocked(shard, it, user, /*read=*/true, &key)) {
    return absl::NotFoundError(absl::StrCat(
        "the notification feed of ", user, " holds no notification (ts ", ts,
        ", activity ", activity_id, ") that has not expired"));
  }
  return CountsOf(TimelineAt(shard, it));
}

}  // namespace feedcore::internal
