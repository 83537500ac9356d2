#include "feed_commands.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "feed_paging.h"
#include "feedcore/options.h"
#include "feedcore/types.h"

namespace feedcore::server {
namespace {

// Parses [LIMIT n] [CURSOR c] [REV] [MINTS ts] [MAXTS ts] from
// args[first...]. Range checks beyond "is a number" are the engine's.
absl::Status ParseReadOptions(absl::Span<const std::string> args, size_t first,
                              ReadOptions& options) {
  options.hydrate = true;
  for (size_t i = first; i < args.size(); ++i) {
    const std::string& word = args[i];
    const bool has_value = i + 1 < args.size();
    if (IsKeyword(word, "REV")) {
      options.order = ReadOrder::kOldestFirst;
    } else if (IsKeyword(word, "LIMIT") && has_value) {
      absl::StatusOr<int64_t> limit = ParseInt64InRange(
          args[++i], "LIMIT", 1, static_cast<int64_t>(kMaxPageSizeLimit));
      if (!limit.ok()) return limit.status();
      options.limit = static_cast<size_t>(*limit);
    } else if (IsKeyword(word, "CURSOR") && has_value) {
      options.cursor = CursorArgument(args[++i]);
    } else if (IsKeyword(word, "MINTS") && has_value) {
      absl::StatusOr<int64_t> ts = ParseInt64(args[++i], "MINTS");
      if (!ts.ok()) return ts.status();
      options.min_ts = *ts;
    } else if (IsKeyword(word, "MAXTS") && has_value) {
      absl::StatusOr<int64_t> ts = ParseInt64(args[++i], "MAXTS");
      if (!ts.ok()) return ts.status();
      options.max_ts = *ts;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "syntax error: unexpected argument ", Quote(word),
          "; read options are LIMIT n, CURSOR c, REV, MINTS ts, MAXTS ts"));
    }
  }
  return absl::OkStatus();
}

// [next_cursor, [[id, actor, ts, expires_at, payload], ...]]
void WritePage(RespWriter& reply, const Page& page) {
  reply.ArrayHeader(2);
  WriteCursor(reply, page.next_cursor);
  reply.ArrayHeader(page.entries.size());
  for (const StoredEntry& entry : page.entries) {
    reply.ArrayHeader(5);
    WriteId(reply, entry.activity_id);
    WriteId(reply, entry.actor);
    reply.Integer(entry.ts);
    reply.Integer(entry.expires_at);
    reply.Bulk(entry.payload);
  }
}

void ReplyPage(CommandCall& call, const absl::StatusOr<Page>& page) {
  if (!page.ok()) {
    ReplyError(call, page.status());
    return;
  }
  WritePage(*call.reply, *page);
}

// FEED.READ user [read options]
void FeedRead(CommandCall& call) {
  absl::StatusOr<uint64_t> user = ParseId(call.args[1], "user");
  if (!user.ok()) return ReplyError(call, user.status());
  ReadOptions options;
  if (absl::Status s = ParseReadOptions(call.args, 2, options); !s.ok()) {
    return ReplyError(call, s);
  }
  ReplyPage(call, call.server->feeds->ReadTimeline(*user, options));
}

// FEED.OWN actor [read options]
void FeedOwn(CommandCall& call) {
  absl::StatusOr<uint64_t> actor = ParseId(call.args[1], "actor");
  if (!actor.ok()) return ReplyError(call, actor.status());
  ReadOptions options;
  if (absl::Status s = ParseReadOptions(call.args, 2, options); !s.ok()) {
    return ReplyError(call, s);
  }
  ReplyPage(call, call.server->feeds->ReadOwn(*actor, options));
}

// FEED.WORLD [read options]
void FeedWorld(CommandCall& call) {
  ReadOptions options;
  if (absl::Status s = ParseReadOptions(call.args, 1, options); !s.ok()) {
    return ReplyError(call, s);
  }
  ReplyPage(call, call.server->feeds->ReadWorld(options));
}

// FEED.FOLLOW follower followee [BACKFILL n]
void FeedFollow(CommandCall& call) {
  absl::StatusOr<uint64_t> follower = ParseId(call.args[1], "follower");
  if (!follower.ok()) return ReplyError(call, follower.status());
  absl::StatusOr<uint64_t> followee = ParseId(call.args[2], "followee");
  if (!followee.ok()) return ReplyError(call, followee.status());
  FollowOptions options;
  for (size_t i = 3; i < call.args.size(); ++i) {
    if (IsKeyword(call.args[i], "BACKFILL") && i + 1 < call.args.size()) {
      absl::StatusOr<int64_t> backfill =
          ParseInt64InRange(call.args[++i], "BACKFILL", 0,
                            static_cast<int64_t>(kMaxTimelineLengthLimit));
      if (!backfill.ok()) return ReplyError(call, backfill.status());
      options.backfill = static_cast<size_t>(*backfill);
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  absl::StatusOr<FollowResult> result =
      call.server->feeds->Follow(*follower, *followee, options);
  if (!result.ok()) return ReplyError(call, result.status());
  call.reply->Integer(result->created ? 1 : 0);
}

// FEED.PUBLISH actor id ts payload [TTL ms]; ts "*" is the server's now.
void FeedPublish(CommandCall& call) {
  Activity activity;
  absl::StatusOr<uint64_t> actor = ParseId(call.args[1], "actor");
  if (!actor.ok()) return ReplyError(call, actor.status());
  absl::StatusOr<uint64_t> id = ParseId(call.args[2], "activity id");
  if (!id.ok()) return ReplyError(call, id.status());
  activity.actor = *actor;
  activity.id = *id;
  if (call.args[3] == "*") {
    activity.ts = call.server->feeds->options().clock->Now();
  } else {
    absl::StatusOr<int64_t> ts = ParseInt64InRange(
        call.args[3], "ts (microseconds, or * for now)", 0, INT64_MAX);
    if (!ts.ok()) return ReplyError(call, ts.status());
    activity.ts = *ts;
  }
  activity.payload = call.args[4];
  for (size_t i = 5; i < call.args.size(); ++i) {
    if (IsKeyword(call.args[i], "TTL") && i + 1 < call.args.size()) {
      absl::StatusOr<int64_t> ttl_ms =
          ParseInt64InRange(call.args[++i], "TTL (milliseconds)", 1,
                            kMaxTtl / kMicrosPerMillisecond);
      if (!ttl_ms.ok()) return ReplyError(call, ttl_ms.status());
      activity.ttl = *ttl_ms * kMicrosPerMillisecond;
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  absl::StatusOr<PublishResult> result = call.server->feeds->Publish(activity);
  if (!result.ok()) return ReplyError(call, result.status());
  call.reply->Integer(result->created ? 1 : 0);
}

// FEED.RETRACT id
void FeedRetract(CommandCall& call) {
  absl::StatusOr<uint64_t> id = ParseId(call.args[1], "activity id");
  if (!id.ok()) return ReplyError(call, id.status());
  if (absl::Status s = call.server->feeds->Retract(*id); !s.ok()) {
    return ReplyError(call, s);
  }
  call.reply->SimpleString("OK");
}

// FEED.FOLLOWERS / FEED.FOLLOWING entity [LIMIT n] [CURSOR c]
void ListEntities(CommandCall& call, bool followers) {
  EntityId entity = 0;
  ListOptions options;
  if (!ParseListCall(call, &entity, &options)) return;
  InProcessFeedEngine& feeds = *call.server->feeds;
  absl::StatusOr<EntityPage> page = followers
                                        ? feeds.Followers(entity, options)
                                        : feeds.Following(entity, options);
  if (!page.ok()) return ReplyError(call, page.status());
  WriteEntityPage(*call.reply, *page);
}

void FeedFollowers(CommandCall& call) { ListEntities(call, true); }
void FeedFollowing(CommandCall& call) { ListEntities(call, false); }

// FEED.COUNTS entity -> [followers, following]
void FeedCounts(CommandCall& call) {
  absl::StatusOr<uint64_t> entity = ParseId(call.args[1], "entity");
  if (!entity.ok()) return ReplyError(call, entity.status());
  absl::StatusOr<size_t> followers = call.server->feeds->FollowerCount(*entity);
  if (!followers.ok()) return ReplyError(call, followers.status());
  absl::StatusOr<size_t> following =
      call.server->feeds->FollowingCount(*entity);
  if (!following.ok()) return ReplyError(call, following.status());
  call.reply->ArrayHeader(2);
  call.reply->Integer(static_cast<int64_t>(*followers));
  call.reply->Integer(static_cast<int64_t>(*following));
}

}  // namespace

absl::Status AddFeedCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"FEED.FOLLOW", -3, {"write"}, 0, 0, 0, FeedFollow},
      {"FEED.PUBLISH", -5, {"write", "denyoom"}, 0, 0, 0, FeedPublish},
      {"FEED.RETRACT", 2, {"write"}, 0, 0, 0, FeedRetract},
      {"FEED.READ", -2, {"readonly"}, 0, 0, 0, FeedRead},
      {"FEED.OWN", -2, {"readonly"}, 0, 0, 0, FeedOwn},
      {"FEED.WORLD", -1, {"readonly"}, 0, 0, 0, FeedWorld},
      {"FEED.FOLLOWERS", -2, {"readonly"}, 0, 0, 0, FeedFollowers},
      {"FEED.FOLLOWING", -2, {"readonly"}, 0, 0, 0, FeedFollowing},
      {"FEED.COUNTS", 2, {"readonly", "fast"}, 0, 0, 0, FeedCounts},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
