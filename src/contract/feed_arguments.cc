#include "contract/feed_arguments.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "feedcore/feed_engine.h"

namespace feedcore::internal {
namespace {

absl::Status OutOfRange(absl::string_view field, long long value,
                        absl::string_view range) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, " is ", value, "; it must be ", range));
}

}  // namespace

absl::StatusOr<EngineOptions> ResolveEngineOptions(EngineOptions options) {
  if (options.shards > kMaxShards) {
    return OutOfRange("EngineOptions.shards",
                      static_cast<long long>(options.shards),
                      absl::StrCat("0 (automatic) or 1..", kMaxShards));
  }
  if (options.default_ttl <= 0 || options.default_ttl > kMaxTtl) {
    return OutOfRange("EngineOptions.default_ttl", options.default_ttl,
                      absl::StrCat("1..", kMaxTtl, " microseconds"));
  }
  if (options.max_timeline_length == 0 ||
      options.max_timeline_length > kMaxTimelineLengthLimit) {
    return OutOfRange("EngineOptions.max_timeline_length",
                      static_cast<long long>(options.max_timeline_length),
                      absl::StrCat("1..", kMaxTimelineLengthLimit));
  }
  if (options.max_page_size == 0 || options.max_page_size > kMaxPageSizeLimit) {
    return OutOfRange("EngineOptions.max_page_size",
                      static_cast<long long>(options.max_page_size),
                      absl::StrCat("1..", kMaxPageSizeLimit));
  }
  if (options.sweep_interval != 0 &&
      (options.sweep_interval < kMicrosPerMillisecond ||
       options.sweep_interval > kMicrosPerDay)) {
    return OutOfRange(
        "EngineOptions.sweep_interval", options.sweep_interval,
        absl::StrCat("0 (no sweeper thread) or ", kMicrosPerMillisecond, "..",
                     kMicrosPerDay, " microseconds"));
  }
  if (options.sweep_budget == 0 || options.sweep_budget > (size_t{1} << 32)) {
    return OutOfRange("EngineOptions.sweep_budget",
                      static_cast<long long>(options.sweep_budget),
                      "1..4294967296");
  }
  if (options.hybrid_fanout_threshold > (size_t{1} << 32)) {
    return OutOfRange("EngineOptions.hybrid_fanout_threshold",
                      static_cast<long long>(options.hybrid_fanout_threshold),
                      "0 (off) or 1..4294967296");
  }
  if (options.inactive_after < 0 || options.inactive_after > kMaxTtl) {
    return OutOfRange("EngineOptions.inactive_after", options.inactive_after,
                      absl::StrCat("0 (off) or 1..", kMaxTtl, " microseconds"));
  }
  if (options.default_backfill > kMaxTimelineLengthLimit) {
    return OutOfRange("EngineOptions.default_backfill",
                      static_cast<long long>(options.default_backfill),
                      absl::StrCat("0..", kMaxTimelineLengthLimit));
  }
  if (options.world_timeline_length == 0 ||
      options.world_timeline_length > kMaxTimelineLengthLimit) {
    return OutOfRange("EngineOptions.world_timeline_length",
                      static_cast<long long>(options.world_timeline_length),
                      absl::StrCat("1..", kMaxTimelineLengthLimit));
  }
  if (options.max_payload_bytes > kMaxPayloadBytesLimit) {
    return OutOfRange("EngineOptions.max_payload_bytes",
                      static_cast<long long>(options.max_payload_bytes),
                      absl::StrCat("0..", kMaxPayloadBytesLimit));
  }
  const AggregationOptions& aggregation = options.aggregation;
  if (aggregation.time_bucket <= 0 || aggregation.time_bucket > kMaxTtl) {
    return OutOfRange("EngineOptions.aggregation.time_bucket",
                      aggregation.time_bucket,
                      absl::StrCat("1..", kMaxTtl, " microseconds"));
  }
  if (aggregation.max_group_actors == 0 ||
      aggregation.max_group_actors > kMaxGroupListLimit) {
    return OutOfRange("EngineOptions.aggregation.max_group_actors",
                      static_cast<long long>(aggregation.max_group_actors),
                      absl::StrCat("1..", kMaxGroupListLimit));
  }
  if (aggregation.max_group_entries == 0 ||
      aggregation.max_group_entries > kMaxGroupListLimit) {
    return OutOfRange("EngineOptions.aggregation.max_group_entries",
                      static_cast<long long>(aggregation.max_group_entries),
                      absl::StrCat("1..", kMaxGroupListLimit));
  }
  if (options.notifications.max_length == 0 ||
      options.notifications.max_length > kMaxTimelineLengthLimit) {
    return OutOfRange("EngineOptions.notifications.max_length",
                      static_cast<long long>(options.notifications.max_length),
                      absl::StrCat("1..", kMaxTimelineLengthLimit));
  }
  if (options.reposts.window > kMaxRepostWindow) {
    return OutOfRange("EngineOptions.reposts.window",
                      static_cast<long long>(options.reposts.window),
                      absl::StrCat("0 (off) or 1..", kMaxRepostWindow));
  }
  if (options.reposts.kinds.has_bad_kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EngineOptions.reposts.kinds names kind ",
        static_cast<int>(options.reposts.kinds.bad_kind),
        "; activity kinds are 0..", static_cast<int>(kMaxActivityKind)));
  }
  if (options.reposts.window != 0 && options.reposts.kinds.kinds == 0) {
    return absl::InvalidArgumentError(
        "EngineOptions.reposts.kinds keeps no kind while "
        "EngineOptions.reposts.window is set; name the kinds reposts are "
        "published with");
  }
  if (options.fanout_threads > kMaxFanoutThreads) {
    return OutOfRange("EngineOptions.fanout_threads",
                      static_cast<long long>(options.fanout_threads),
                      absl::StrCat("0..", kMaxFanoutThreads));
  }
  if (options.parallel_fanout_min_followers == 0 ||
      options.parallel_fanout_min_followers > (size_t{1} << 32)) {
    return OutOfRange(
        "EngineOptions.parallel_fanout_min_followers",
        static_cast<long long>(options.parallel_fanout_min_followers),
        "1..4294967296");
  }
  if (options.fanout_queue_capacity == 0 ||
      options.fanout_queue_capacity > kMaxFanoutQueueCapacity) {
    return OutOfRange("EngineOptions.fanout_queue_capacity",
                      static_cast<long long>(options.fanout_queue_capacity),
                      absl::StrCat("1..", kMaxFanoutQueueCapacity));
  }
  if (options.shards == 0) {
    const size_t threads = std::max(1u, std::thread::hardware_concurrency());
    options.shards = std::min(kMaxShards, std::bit_ceil(4 * threads));
  }
  if (options.clock == nullptr) options.clock = std::make_shared<SystemClock>();
  return options;
}

absl::StatusOr<Micros> ResolveExpiry(const InsertOptions& options,
                                     Micros default_ttl, Micros now) {
  if (options.expires_at.has_value()) {
    if (*options.expires_at <= now) {
      return absl::InvalidArgumentError(absl::StrCat(
          "InsertOptions.expires_at is ", *options.expires_at,
          ", not after now (", now, "); the entry would never be visible"));
    }
    return *options.expires_at;
  }
  if (options.ttl < 0 || options.ttl > kMaxTtl) {
    return OutOfRange(
        "InsertOptions.ttl", options.ttl,
        absl::StrCat("0 (engine default) or 1..", kMaxTtl, " microseconds"));
  }
  const Micros ttl = options.ttl == 0 ? default_ttl : options.ttl;
  // A clock near the top of the range would overflow; saturate instead.
  if (now > std::numeric_limits<Micros>::max() - ttl) {
    return std::numeric_limits<Micros>::max();
  }
  return now + ttl;
}

absl::Status ValidateEntry(const TimelineEntry& entry) {
  if (entry.ts < 0) {
    return OutOfRange("TimelineEntry.ts", entry.ts, ">= 0");
  }
  if (entry.kind > kMaxActivityKind) {
    return OutOfRange("TimelineEntry.kind", entry.kind,
                      absl::StrCat("0..", kMaxActivityKind));
  }
  return absl::OkStatus();
}

absl::Status ValidateActivity(const Activity& activity,
                              size_t max_payload_bytes,
                              const RepostOptions& reposts) {
  if (activity.ts < 0) return OutOfRange("Activity.ts", activity.ts, ">= 0");
  if (activity.kind > kMaxActivityKind) {
    return OutOfRange("Activity.kind", activity.kind,
                      absl::StrCat("0..", kMaxActivityKind));
  }
  if (activity.repost_of != 0 && activity.repost_of == activity.id) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Activity.repost_of is ", activity.repost_of,
        ", the activity's own id; an activity cannot repost itself"));
  }
  if (activity.repost_of != 0 && reposts.window != 0 &&
      !reposts.kinds.Keeps(activity.kind)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Activity.kind is ", activity.kind, " for a repost (repost_of ",
        activity.repost_of,
        "); with EngineOptions.reposts.window set, reposts must be of one "
        "of EngineOptions.reposts.kinds, or the timeline could not tell "
        "them from other entries"));
  }
  if (activity.payload.size() > max_payload_bytes) {
    return OutOfRange("Activity.payload size",
                      static_cast<long long>(activity.payload.size()),
                      absl::StrCat("at most ", max_payload_bytes,
                                   " bytes (EngineOptions.max_payload_bytes)"));
  }
  if (activity.ttl < 0 || activity.ttl > kMaxTtl) {
    return OutOfRange(
        "Activity.ttl", activity.ttl,
        absl::StrCat("0 (engine default) or 1..", kMaxTtl, " microseconds"));
  }
  return absl::OkStatus();
}

absl::Status ValidateListId(ListId list) {
  if (list == 0) {
    return absl::InvalidArgumentError(
        "list id is 0; list ids are 1..2^64-1, chosen by the program");
  }
  return absl::OkStatus();
}

absl::Status ValidateListSettings(ListId list, const ListSettings& settings) {
  if (absl::Status bad = ValidateListId(list); !bad.ok()) return bad;
  if (settings.name.empty() || settings.name.size() > kMaxListNameBytes) {
    return OutOfRange(
        "ListSettings.name size", static_cast<long long>(settings.name.size()),
        absl::StrCat("1..", kMaxListNameBytes, " bytes (kMaxListNameBytes)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateEditedPayload(absl::string_view payload,
                                   size_t max_payload_bytes) {
  if (payload.size() > max_payload_bytes) {
    return OutOfRange("EditActivity payload size",
                      static_cast<long long>(payload.size()),
                      absl::StrCat("at most ", max_payload_bytes,
                                   " bytes (EngineOptions.max_payload_bytes)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateReactionKind(ReactionKind kind) {
  if (kind >= kActivityCounterCount) {
    return OutOfRange("reaction kind", static_cast<long long>(kind),
                      absl::StrCat("0..", kActivityCounterCount - 1,
                                   " (a counter, kActivityCounterCount)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateReact(ActivityId activity_id, ReactionKind kind,
                           const ReactOptions& options,
                           size_t max_payload_bytes) {
  if (absl::Status bad = ValidateReactionKind(kind); !bad.ok()) return bad;
  if (options.notice_id != 0 && options.notice_id == activity_id) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ReactOptions.notice_id is ", options.notice_id,
        ", the reacted activity's own id; a notice needs an id of its own"));
  }
  if (options.notice_payload.size() > max_payload_bytes) {
    return OutOfRange("ReactOptions.notice_payload size",
                      static_cast<long long>(options.notice_payload.size()),
                      absl::StrCat("at most ", max_payload_bytes,
                                   " bytes (EngineOptions.max_payload_bytes)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateReactionLookup(size_t ids) {
  if (ids > kMaxReactionLookup) {
    return OutOfRange(
        "GetOwnReactions activity count", static_cast<long long>(ids),
        absl::StrCat("at most ", kMaxReactionLookup, " (kMaxReactionLookup)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateNotify(const PublishOptions& options) {
  if (options.notify.size() > kMaxNotifyRecipients) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PublishOptions.notify lists ", options.notify.size(),
        " recipients; at most ", kMaxNotifyRecipients, " are accepted"));
  }
  if (options.mentions.size() > kMaxMentionRecipients) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PublishOptions.mentions lists ", options.mentions.size(),
        " entities; at most ", kMaxMentionRecipients, " are accepted"));
  }
  return absl::OkStatus();
}

absl::Status ValidateBackfill(size_t backfill) {
  if (backfill > kMaxTimelineLengthLimit) {
    return OutOfRange("FollowOptions.backfill",
                      static_cast<long long>(backfill),
                      absl::StrCat("0..", kMaxTimelineLengthLimit));
  }
  return absl::OkStatus();
}

absl::Status BlockedFollow(EntityId follower, EntityId followee) {
  return absl::FailedPreconditionError(
      absl::StrCat("entity ", follower, " cannot follow ", followee,
                   ": one of them blocks the other"));
}

absl::Status ValidateRelation(EntityId user, EntityId actor,
                              absl::string_view call) {
  if (user == actor) {
    return absl::InvalidArgumentError(absl::StrCat(
        call, ": entity ", user, " cannot hide itself (user == actor)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Micros> ResolveMuteExpiry(const MuteOptions& options,
                                         Micros now) {
  if (!options.expires_at.has_value()) return 0;
  if (*options.expires_at <= now || *options.expires_at - now > kMaxTtl) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MuteOptions.expires_at = ", *options.expires_at,
        " must be later than now (", now, ") and at most now + kMaxTtl"));
  }
  return *options.expires_at;
}

EntityPage BlockedPage(MutedPage page) {
  EntityPage ids;
  ids.ids.reserve(page.actors.size());
  for (const MutedActor& actor : page.actors) ids.ids.push_back(actor.actor);
  ids.next_cursor = std::move(page.next_cursor);
  return ids;
}

absl::Status ValidateFollowPair(EntityId follower, EntityId followee,
                                absl::string_view verb) {
  if (follower == followee) {
    return absl::InvalidArgumentError(
        absl::StrCat("entity ", follower, " cannot ", verb,
                     " itself (follower == followee)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateFollowPairs(absl::Span<const FollowPair> pairs,
                                 absl::string_view verb) {
  if (pairs.size() > kMaxFollowBatch) {
    return absl::InvalidArgumentError(
        absl::StrCat(pairs.size(), " pairs; at most kMaxFollowBatch (",
                     kMaxFollowBatch, ") per call"));
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (absl::Status status =
            ValidateFollowPair(pairs[i].follower, pairs[i].followee, verb);
        !status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pairs[", i, "]: ", status.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateList(const ListOptions& options, size_t max_page_size) {
  if (options.limit == 0 || options.limit > max_page_size) {
    return OutOfRange(
        "ListOptions.limit", static_cast<long long>(options.limit),
        absl::StrCat("1..", max_page_size, " (EngineOptions.max_page_size)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateCountNewer(const EntryKey& after, size_t max_count,
                                size_t max_page_size) {
  if (absl::Status bad = ValidateEntryKey(after, "after"); !bad.ok()) {
    return bad;
  }
  if (max_count == 0 || max_count > max_page_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_count is ", max_count, "; it must be 1..",
                     max_page_size, " (EngineOptions.max_page_size)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateMarkedFeed(EntityId user, const MarkedFeed& feed) {
  switch (feed.type) {
    case FeedType::kHome:
      if (feed.owner != user) {
        return absl::InvalidArgumentError(
            absl::StrCat("feed.owner is ", feed.owner,
                         "; only the owner of a home feed (user ", user,
                         ") keeps a marker in it"));
      }
      return absl::OkStatus();
    case FeedType::kOwn:
      return absl::OkStatus();
    case FeedType::kWorld:
      if (feed.owner != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "feed.owner is ", feed.owner, "; the world feed's owner is 0"));
      }
      return absl::OkStatus();
    case FeedType::kNotification:
      return absl::InvalidArgumentError(
          "feed.type is kNotification; notification feeds keep seen and "
          "read state (MarkSeen, MarkRead), not a read marker");
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "feed.type is ", static_cast<int>(feed.type), "; not a FeedType"));
}

absl::Status ValidateEntryKey(const EntryKey& key, absl::string_view what) {
  if (key.ts < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ".ts is ", key.ts, "; it must be >= 0"));
  }
  return absl::OkStatus();
}

absl::Status NoEntryWithKey(EntityId owner, const EntryKey& key) {
  return absl::NotFoundError(absl::StrCat("timeline ", owner,
                                          " has no entry with key (ts ", key.ts,
                                          ", activity ", key.activity_id, ")"));
}

absl::Status NoNotificationWithKey(EntityId user, const EntryKey& key) {
  return absl::NotFoundError(absl::StrCat(
      "the notification feed of ", user, " holds no notification (ts ", key.ts,
      ", activity ", key.activity_id, ") that has not expired"));
}

absl::Status ValidateMaxUnread(size_t max_unread, size_t max_page_size) {
  if (max_unread == 0 || max_unread > max_page_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_unread is ", max_unread, "; it must be 1..",
                     max_page_size, " (EngineOptions.max_page_size)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateReadStateOptions(const ReadStateOptions& options,
                                      size_t max_page_size) {
  if (options.limit == 0 || options.limit > max_page_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ReadStateOptions.limit is ", options.limit, "; it must be 1..",
        max_page_size, " (EngineOptions.max_page_size)"));
  }
  return ValidateMaxUnread(options.max_unread, max_page_size);
}

absl::Status ValidateKindFilter(const KindFilter& filter,
                                absl::string_view what) {
  if (filter.has_bad_kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " names kind ", static_cast<int>(filter.bad_kind),
        "; activity kinds are 0..", static_cast<int>(kMaxActivityKind)));
  }
  if (filter.kinds == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what,
        " keeps no kind, so the read could return nothing; leave it "
        "unset to keep every kind"));
  }
  return absl::OkStatus();
}

absl::Status ValidateRead(const ReadOptions& options, size_t max_page_size) {
  if (options.limit == 0 || options.limit > max_page_size) {
    return OutOfRange(
        "ReadOptions.limit", static_cast<long long>(options.limit),
        absl::StrCat("1..", max_page_size, " (EngineOptions.max_page_size)"));
  }
  if (options.min_ts.has_value() && options.max_ts.has_value() &&
      *options.min_ts > *options.max_ts) {
    return absl::InvalidArgumentError(
        absl::StrCat("ReadOptions.min_ts (", *options.min_ts,
                     ") is after ReadOptions.max_ts (", *options.max_ts, ")"));
  }
  return ValidateKindFilter(options.kinds, "ReadOptions.kinds");
}

}  // namespace feedcore::internal
