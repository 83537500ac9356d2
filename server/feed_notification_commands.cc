// FEED.NOTIFICATIONS and FEED.NOTIFY.*: the notification feeds of the
// engine (feedcore/feed_facets.h, NotificationFeeds). Notifications are
// written by FEED.PUBLISH ... NOTIFY recipient (feed_commands.cc). Users
// are ids or names (feed_entities.h): a name without an id has an empty
// feed, and marking it changes nothing and answers zero counts.
// docs/server.md describes each command.
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "feed_commands.h"
#include "feed_entities.h"
#include "feed_paging.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"

namespace feedcore::server {
namespace {

// The engine's notification feeds; null after an error reply.
NotificationFeeds* Feeds(CommandCall& call) {
  NotificationFeeds* feeds = call.server->feeds->notifications();
  if (feeds == nullptr) {
    ReplyError(call, absl::FailedPreconditionError(
                         "this engine keeps no notification feeds"));
  }
  return feeds;
}

// The user of args[1], looked up once every argument is checked: nullopt
// for a name without an id; false after an error reply.
bool LookUpUser(CommandCall& call, const EntityArgument& user,
                std::optional<EntityId>* id) {
  absl::StatusOr<std::optional<EntityId>> found =
      user.Resolve(*call.server, EntityUse::kLookUp);
  if (!found.ok()) {
    ReplyError(call, found.status());
    return false;
  }
  *id = *found;
  return true;
}

// [unseen, unread, groups]
void ReplyCounts(CommandCall& call,
                 const absl::StatusOr<NotificationCounts>& counts) {
  if (!counts.ok()) return ReplyError(call, counts.status());
  call.reply->ArrayHeader(3);
  call.reply->Integer(static_cast<int64_t>(counts->unseen));
  call.reply->Integer(static_cast<int64_t>(counts->unread));
  call.reply->Integer(static_cast<int64_t>(counts->groups));
}

// [group key, seen, read, activities, actors, [recent actor, ...],
//  first ts, last ts, [[id, actor, ts, expires_at, payload], ...]], each
// entry with the `fields` asked for
void WriteGroup(RespWriter& reply, const FeedGroup& group,
                const NameRegistry* names, EntryFields fields) {
  reply.ArrayHeader(9);
  WriteId(reply, group.key);
  reply.Integer(group.seen ? 1 : 0);
  reply.Integer(group.read ? 1 : 0);
  reply.Integer(static_cast<int64_t>(group.activity_count));
  reply.Integer(static_cast<int64_t>(group.actor_count));
  reply.ArrayHeader(group.recent_actors.size());
  for (const EntityId actor : group.recent_actors) {
    WriteEntity(reply, actor, names);
  }
  reply.Integer(group.first_ts);
  reply.Integer(group.last_ts);
  reply.ArrayHeader(group.recent.size());
  for (const StoredEntry& entry : group.recent) {
    WriteStoredEntry(reply, entry, names, fields);
  }
}

// FEED.NOTIFICATIONS user [LIMIT n] [CURSOR c] [NAMES] [WITHEDITS]
// [WITHKINDS] [KINDS k,...|EXCEPTKINDS k,...]
// -> [next_cursor, [group, ...]], newest group first
void FeedNotifications(CommandCall& call) {
  absl::StatusOr<EntityArgument> user =
      EntityArgument::Parse(call.args[1], "user");
  if (!user.ok()) return ReplyError(call, user.status());
  GroupReadOptions options;
  options.hydrate = true;
  bool names = false;
  EntryFields fields;
  for (size_t i = 2; i < call.args.size(); ++i) {
    const bool has_value = i + 1 < call.args.size();
    if (IsKeyword(call.args[i], "LIMIT") && has_value) {
      absl::StatusOr<int64_t> limit = ParseInt64InRange(
          call.args[++i], "LIMIT", 1, static_cast<int64_t>(kMaxPageSizeLimit));
      if (!limit.ok()) return ReplyError(call, limit.status());
      options.limit = static_cast<size_t>(*limit);
    } else if (IsKeyword(call.args[i], "CURSOR") && has_value) {
      options.cursor = CursorArgument(call.args[++i]);
    } else if (IsKeyword(call.args[i], "NAMES")) {
      names = true;
    } else if (ParseEntryField(call.args[i], fields)) {
    } else if (absl::Status bad;
               ParseKindsOption(call.args, i, options.kinds, bad)) {
      if (!bad.ok()) return ReplyError(call, bad);
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  NotificationFeeds* feeds = Feeds(call);
  std::optional<EntityId> id;
  if (feeds == nullptr || !LookUpUser(call, *user, &id)) return;
  if (!id.has_value()) return WriteEmptyPage(*call.reply);
  absl::StatusOr<GroupPage> page = feeds->ReadNotifications(*id, options);
  if (!page.ok()) return ReplyPagingError(call, page.status());
  const NameRegistry* reply_names = ReplyNames(call, names);
  call.reply->ArrayHeader(2);
  WriteCursor(*call.reply, page->next_cursor);
  call.reply->ArrayHeader(page->groups.size());
  for (const FeedGroup& group : page->groups) {
    WriteGroup(*call.reply, group, reply_names, fields);
  }
}

// FEED.NOTIFY.COUNTS / .SEEN / .READALL user -> [unseen, unread, groups]
enum class CountsCall { kCounts, kSeen, kReadAll };

void UserCounts(CommandCall& call, CountsCall what) {
  absl::StatusOr<EntityArgument> user =
      EntityArgument::Parse(call.args[1], "user");
  if (!user.ok()) return ReplyError(call, user.status());
  NotificationFeeds* feeds = Feeds(call);
  std::optional<EntityId> id;
  if (feeds == nullptr || !LookUpUser(call, *user, &id)) return;
  if (!id.has_value()) return ReplyCounts(call, NotificationCounts{});
  switch (what) {
    case CountsCall::kCounts:
      return ReplyCounts(call, feeds->GetNotificationCounts(*id));
    case CountsCall::kSeen:
      return ReplyCounts(call, feeds->MarkSeen(*id));
    case CountsCall::kReadAll:
      return ReplyCounts(call, feeds->MarkAllRead(*id));
  }
}

void FeedNotifyCounts(CommandCall& call) {
  UserCounts(call, CountsCall::kCounts);
}
void FeedNotifySeen(CommandCall& call) { UserCounts(call, CountsCall::kSeen); }
void FeedNotifyReadAll(CommandCall& call) {
  UserCounts(call, CountsCall::kReadAll);
}

// FEED.NOTIFY.READ user ts id -> [unseen, unread, groups]; the group that
// holds the notification (ts, id) becomes read.
void FeedNotifyRead(CommandCall& call) {
  absl::StatusOr<EntityArgument> user =
      EntityArgument::Parse(call.args[1], "user");
  if (!user.ok()) return ReplyError(call, user.status());
  absl::StatusOr<int64_t> ts =
      ParseInt64InRange(call.args[2], "ts", 0, INT64_MAX);
  if (!ts.ok()) return ReplyError(call, ts.status());
  absl::StatusOr<uint64_t> activity = ParseId(call.args[3], "activity id");
  if (!activity.ok()) return ReplyError(call, activity.status());
  NotificationFeeds* feeds = Feeds(call);
  std::optional<EntityId> id;
  if (feeds == nullptr || !LookUpUser(call, *user, &id)) return;
  if (!id.has_value()) {
    return ReplyError(call, absl::NotFoundError(absl::StrCat(
                                Quote(call.args[1]), " has no notification (",
                                *ts, ", ", *activity, ")")));
  }
  ReplyCounts(call, feeds->MarkRead(*id, EntryKey{*ts, *activity}));
}

}  // namespace

absl::Status AddFeedNotificationCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"FEED.NOTIFICATIONS", -2, {"readonly"}, 0, 0, 0, FeedNotifications},
      {"FEED.NOTIFY.COUNTS",
       2,
       {"readonly", "fast"},
       0,
       0,
       0,
       FeedNotifyCounts},
      {"FEED.NOTIFY.SEEN", 2, {"write", "fast"}, 0, 0, 0, FeedNotifySeen},
      {"FEED.NOTIFY.READ", 4, {"write", "fast"}, 0, 0, 0, FeedNotifyRead},
      {"FEED.NOTIFY.READALL", 2, {"write", "fast"}, 0, 0, 0, FeedNotifyReadAll},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
