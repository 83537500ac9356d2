// RedisFeedEngine's grouped reads and notification feeds
// (notification_scripts.h has the keys and the scripts).
//
// Both group on the client with the in-process GroupEntries, so groups,
// their lists and cursors are the in-process ones: a grouped page reads
// the whole visible home feed (merged as ReadTimeline), a notification
// page the whole notification feed with its groups' flags. That is
// O(max_timeline_length) or O(NotificationOptions::max_length) per page
// instead of the in-process group index's O(log n + page); a bell is a
// few dozen entries, and docs/benchmark-results.md has the measured
// cost (grouped-read).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "contract/feed_arguments.h"
#include "contract/group_entries.h"
#include "contract/group_pages.h"
#include "redis/entry_codec.h"
#include "redis/redis_feed_engine.h"

namespace feedcore::redis {
namespace {

// Recipients' feeds one notify call serves at most, as kTimelinesPerCall
// for timelines.
constexpr size_t kFeedsPerCall = 64;

// The groups hash's field that is no group (notification_scripts.h).
constexpr absl::string_view kSoonestExpiryField = "x";

// The groups hash's field of the group holding `entry`
// (notification_scripts.h).
std::string GroupField(const StoredEntry& entry) {
  if (entry.group != 0) return BigEndian(entry.group);
  return absl::StrCat("k", EntryKeyBytes(entry.key()));
}

absl::StatusOr<NotificationCounts> ParseCounts(const Reply& reply,
                                               size_t first) {
  if (reply.type != Reply::Type::kArray || reply.elements.size() < first + 3) {
    return UnexpectedReply("a notification feed's counts", reply);
  }
  for (size_t i = first; i < first + 3; ++i) {
    if (reply.elements[i].type != Reply::Type::kInteger ||
        reply.elements[i].integer < 0) {
      return UnexpectedReply("a notification feed's counts", reply);
    }
  }
  return NotificationCounts{
      static_cast<size_t>(reply.elements[first].integer),
      static_cast<size_t>(reply.elements[first + 1].integer),
      static_cast<size_t>(reply.elements[first + 2].integer)};
}

// The entity whose feed a key of Key() is: the hash tag, which the key
// ends with, as "{id}:kind".
EntityId EntityOfKey(absl::string_view key) {
  const size_t open = key.rfind('{');
  const size_t close = key.rfind('}');
  EntityId entity = 0;
  if (open == absl::string_view::npos || close == absl::string_view::npos ||
      !absl::SimpleAtoi(key.substr(open + 1, close - open - 1), &entity)) {
    return 0;
  }
  return entity;
}

// Every entry of `groups`, to hydrate in one pipeline.
std::vector<StoredEntry> Flatten(const std::vector<FeedGroup>& groups) {
  std::vector<StoredEntry> all;
  for (const FeedGroup& group : groups) {
    all.insert(all.end(), group.recent.begin(), group.recent.end());
  }
  return all;
}

}  // namespace

absl::Status RedisFeedEngine::HydrateGroups(GroupPage* page) const {
  std::vector<StoredEntry> all = Flatten(page->groups);
  if (absl::Status status = Hydrate(&all); !status.ok()) return status;
  size_t next = 0;
  for (FeedGroup& group : page->groups) {
    for (StoredEntry& entry : group.recent) {
      entry.payload = std::move(all[next].payload);
      entry.edited_at = all[next].edited_at;
      ++next;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<GroupPage> RedisFeedEngine::ReadGroups(
    EntityId owner, const GroupReadOptions& options) const {
  if (!options_.aggregation.enabled) {
    return absl::FailedPreconditionError(
        "grouped reads need EngineOptions.aggregation.enabled");
  }
  absl::StatusOr<std::optional<EntryKey>> after =
      internal::GroupPageStart(owner, options, options_.max_page_size,
                               /*notifications=*/false);
  if (!after.ok()) return after.status();
  if (!options.kinds.every_kind()) {
    return NoActivityKinds("GroupReadOptions.kinds");
  }
  absl::StatusOr<std::vector<StoredEntry>> entries =
      CollectHome(owner, ReadOrder::kNewestFirst, EntryKey::Min(),
                  EntryKey::Max(), options_.max_timeline_length);
  if (!entries.ok()) return entries.status();
  GroupPage page;
  // One more than asked tells whether another page follows.
  page.groups =
      internal::GroupEntries(*entries, *after, options.limit + 1,
                             {options_.aggregation.max_group_actors,
                              options_.aggregation.max_group_entries});
  internal::CutGroupPage(owner, options, /*notifications=*/false, &page);
  if (options.hydrate) {
    if (absl::Status status = HydrateGroups(&page); !status.ok()) {
      return status;
    }
  }
  return page;
}

absl::StatusOr<GroupPage> RedisFeedEngine::ReadNotifications(
    EntityId user, const GroupReadOptions& options) {
  absl::StatusOr<std::optional<EntryKey>> after =
      internal::GroupPageStart(user, options, options_.max_page_size,
                               /*notifications=*/true);
  if (!after.ok()) return after.status();
  if (!options.kinds.every_kind()) {
    return NoActivityKinds("GroupReadOptions.kinds");
  }
  absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
      read_notifications_, {Key(user, "nt"), Key(user, "ng")},
      {BigEndian(static_cast<uint64_t>(Now()))}));
  if (!reply.ok()) return reply.status();
  constexpr absl::string_view kWhat = "a notification feed read";
  if (reply->type != Reply::Type::kArray || reply->elements.size() != 2 ||
      reply->elements[1].elements.size() % 2 != 0) {
    return UnexpectedReply(kWhat, *reply);
  }
  std::vector<StoredEntry> entries;
  entries.reserve(reply->elements[0].elements.size());
  for (const Reply& member : reply->elements[0].elements) {
    std::optional<StoredEntry> entry = DecodeEntryMember(member.str);
    if (!entry.has_value()) return UnexpectedReply(kWhat, *reply);
    entries.push_back(*std::move(entry));
  }
  absl::flat_hash_map<std::string, int64_t> flags;
  const std::vector<Reply>& fields = reply->elements[1].elements;
  for (size_t i = 0; i < fields.size(); i += 2) {
    if (fields[i].str == kSoonestExpiryField) continue;
    int64_t value = 0;
    if (!absl::SimpleAtoi(fields[i + 1].str, &value)) {
      return UnexpectedReply(kWhat, *reply);
    }
    flags[fields[i].str] = value % 3;
  }
  GroupPage page;
  page.groups =
      internal::GroupEntries(entries, *after, options.limit + 1,
                             {options_.aggregation.max_group_actors,
                              options_.aggregation.max_group_entries});
  for (FeedGroup& group : page.groups) {
    auto flag = flags.find(GroupField(group.recent.front()));
    if (flag == flags.end()) return UnexpectedReply(kWhat, *reply);
    group.seen = flag->second >= 1;
    group.read = flag->second == 2;
  }
  internal::CutGroupPage(user, options, /*notifications=*/true, &page);
  if (options.hydrate) {
    if (absl::Status status = HydrateGroups(&page); !status.ok()) {
      return status;
    }
  }
  return page;
}

absl::StatusOr<std::optional<NotificationCounts>>
RedisFeedEngine::MarkNotifications(EntityId user,
                                   std::vector<std::string> what) {
  std::vector<std::string> args = {BigEndian(static_cast<uint64_t>(Now()))};
  for (std::string& arg : what) args.push_back(std::move(arg));
  absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
      mark_notifications_, {Key(user, "nt"), Key(user, "ng")},
      std::move(args)));
  if (!reply.ok()) return reply.status();
  if (reply->type == Reply::Type::kArray && reply->elements.empty()) {
    return std::nullopt;
  }
  return ParseCounts(*reply, 0);
}

absl::StatusOr<NotificationCounts> RedisFeedEngine::GetNotificationCounts(
    EntityId user) {
  absl::StatusOr<std::optional<NotificationCounts>> counts =
      MarkNotifications(user, {"counts"});
  if (!counts.ok()) return counts.status();
  return counts->value_or(NotificationCounts{});
}

absl::StatusOr<NotificationCounts> RedisFeedEngine::MarkSeen(EntityId user) {
  absl::StatusOr<std::optional<NotificationCounts>> counts =
      MarkNotifications(user, {"seen"});
  if (!counts.ok()) return counts.status();
  return counts->value_or(NotificationCounts{});
}

absl::StatusOr<NotificationCounts> RedisFeedEngine::MarkAllRead(EntityId user) {
  absl::StatusOr<std::optional<NotificationCounts>> counts =
      MarkNotifications(user, {"read"});
  if (!counts.ok()) return counts.status();
  return counts->value_or(NotificationCounts{});
}

absl::StatusOr<NotificationCounts> RedisFeedEngine::MarkRead(
    EntityId user, const EntryKey& key) {
  if (absl::Status bad = internal::ValidateEntryKey(key, "key"); !bad.ok()) {
    return bad;
  }
  absl::StatusOr<std::optional<NotificationCounts>> counts =
      MarkNotifications(user, {"one", EntryScore(key.ts), EntryKeyBytes(key)});
  if (!counts.ok()) return counts.status();
  if (!counts->has_value()) return internal::NoNotificationWithKey(user, key);
  return **counts;
}

absl::StatusOr<size_t> RedisFeedEngine::Notify(
    absl::Span<const EntityId> recipients, const StoredEntry& entry,
    Micros now) {
  const std::string ttl = absl::StrCat(KeyTtlMillis(entry.expires_at, now));
  const auto& on_notify = options_.notifications.on_notify;
  std::vector<std::string> keys;
  keys.reserve(3 * recipients.size());
  for (EntityId recipient : recipients) {
    keys.push_back(Key(recipient, "nt"));
    keys.push_back(Key(recipient, "ng"));
    keys.push_back(Key(recipient, "rl"));
  }
  const std::string now_bytes = BigEndian(static_cast<uint64_t>(now));
  std::vector<Command> commands = ClusterClient::ScriptCommandsBySlot(
      notify_, std::move(keys), /*keys_per_group=*/3, kFeedsPerCall,
      {EntryScore(entry.ts), EncodeEntryMember(entry),
       absl::StrCat(options_.notifications.max_length), ttl,
       on_notify ? now_bytes : std::string(), now_bytes});
  // Each call answers, per feed in the order of its keys (triples after
  // EVALSHA, sha, numkeys), whether it took the notification, and with
  // on_notify the feed's counts, for the feed's owner.
  std::vector<size_t> feeds;
  std::vector<std::vector<EntityId>> owners;
  for (const Command& command : commands) {
    size_t key_count = 0;
    if (!absl::SimpleAtoi(command.args[2], &key_count)) key_count = 0;
    feeds.push_back(key_count / 3);
    if (!on_notify) continue;
    std::vector<EntityId>& owned = owners.emplace_back();
    for (size_t k = 0; k < key_count; k += 3) {
      owned.push_back(EntityOfKey(command.args[3 + k]));
    }
  }
  absl::StatusOr<std::vector<Reply>> replies =
      client_->Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  const size_t stride = on_notify ? 4 : 1;
  size_t delivered = 0;
  for (size_t c = 0; c < feeds.size(); ++c) {
    const Reply& reply = (*replies)[c];
    if (reply.type != Reply::Type::kArray ||
        reply.elements.size() != stride * feeds[c]) {
      return UnexpectedReply("a notify", reply);
    }
    for (size_t f = 0; f < feeds[c]; ++f) {
      if (reply.elements[stride * f].integer == 0) continue;  // hidden
      ++delivered;
      if (!on_notify) continue;
      absl::StatusOr<NotificationCounts> counts =
          ParseCounts(reply, stride * f + 1);
      if (!counts.ok()) return counts.status();
      on_notify(owners[c][f], *counts);
    }
  }
  return delivered;
}

absl::Status RedisFeedEngine::RemoveNotifications(const StoredEntry& entry) {
  Command listed = PlainCommand({"SMEMBERS", RecipientsKey(entry.activity_id)});
  listed.write = false;
  absl::StatusOr<Reply> members = client_->RunOne(std::move(listed));
  if (!members.ok()) return members.status();
  if (members->type != Reply::Type::kArray) {
    return UnexpectedReply("listing an activity's notified users", *members);
  }
  std::vector<std::string> keys;
  keys.reserve(2 * members->elements.size());
  for (const Reply& member : members->elements) {
    EntityId recipient = 0;
    if (!absl::SimpleAtoi(member.str, &recipient)) {
      return UnexpectedReply("listing an activity's notified users", *members);
    }
    keys.push_back(Key(recipient, "nt"));
    keys.push_back(Key(recipient, "ng"));
  }
  if (keys.empty()) return absl::OkStatus();
  return client_
      ->Run(ClusterClient::ScriptCommandsBySlot(
          unnotify_, std::move(keys), /*keys_per_group=*/2, kFeedsPerCall,
          {EntryScore(entry.ts), EntryKeyBytes(entry.key())}))
      .status();
}

}  // namespace feedcore::redis
