#include "feed_relation_commands.h"

#include <string>

#include "arguments.h"
#include "feed_paging.h"
#include "feedcore/options.h"
#include "feedcore/social.h"

namespace feedcore::server {
namespace {

// [changed, removed, backfilled, follows_ended]
void WriteResult(RespWriter& reply, const RelationResult& result) {
  reply.ArrayHeader(4);
  reply.Integer(result.changed ? 1 : 0);
  reply.Integer(static_cast<int64_t>(result.removed));
  reply.Integer(static_cast<int64_t>(result.backfilled));
  reply.Integer(static_cast<int64_t>(result.follows_ended));
}

// The user and actor ids of args[1] and args[2], named `user` and `actor`.
bool ParsePair(CommandCall& call, const char* user, const char* actor,
               uint64_t* user_id, uint64_t* actor_id) {
  absl::StatusOr<uint64_t> a = ParseId(call.args[1], user);
  if (!a.ok()) {
    ReplyError(call, a.status());
    return false;
  }
  absl::StatusOr<uint64_t> b = ParseId(call.args[2], actor);
  if (!b.ok()) {
    ReplyError(call, b.status());
    return false;
  }
  *user_id = *a;
  *actor_id = *b;
  return true;
}

// [BACKFILL n] from args[3...]; false once an error reply is written.
bool ParseRestore(CommandCall& call, RestoreOptions* options) {
  for (size_t i = 3; i < call.args.size(); ++i) {
    if (IsKeyword(call.args[i], "BACKFILL") && i + 1 < call.args.size()) {
      absl::StatusOr<int64_t> backfill =
          ParseInt64InRange(call.args[++i], "BACKFILL", 0,
                            static_cast<int64_t>(kMaxTimelineLengthLimit));
      if (!backfill.ok()) {
        ReplyError(call, backfill.status());
        return false;
      }
      options->backfill = static_cast<size_t>(*backfill);
    } else {
      ReplySyntaxError(call, call.args[i]);
      return false;
    }
  }
  return true;
}

// FEED.BLOCK blocker blocked
void FeedBlock(CommandCall& call) {
  uint64_t blocker = 0, blocked = 0;
  if (!ParsePair(call, "blocker", "blocked", &blocker, &blocked)) return;
  absl::StatusOr<RelationResult> result =
      call.server->feeds->Block(blocker, blocked);
  if (!result.ok()) return ReplyError(call, result.status());
  WriteResult(*call.reply, *result);
}

// FEED.UNBLOCK blocker blocked [BACKFILL n]
void FeedUnblock(CommandCall& call) {
  uint64_t blocker = 0, blocked = 0;
  if (!ParsePair(call, "blocker", "blocked", &blocker, &blocked)) return;
  RestoreOptions options;
  if (!ParseRestore(call, &options)) return;
  absl::StatusOr<RelationResult> result =
      call.server->feeds->Unblock(blocker, blocked, options);
  if (!result.ok()) return ReplyError(call, result.status());
  WriteResult(*call.reply, *result);
}

// FEED.MUTE muter muted [NOTIFICATIONS] [EXPIRES ms]; ms from now.
void FeedMute(CommandCall& call) {
  uint64_t muter = 0, muted = 0;
  if (!ParsePair(call, "muter", "muted", &muter, &muted)) return;
  MuteOptions options;
  for (size_t i = 3; i < call.args.size(); ++i) {
    if (IsKeyword(call.args[i], "NOTIFICATIONS")) {
      options.notifications = true;
    } else if (IsKeyword(call.args[i], "EXPIRES") && i + 1 < call.args.size()) {
      absl::StatusOr<int64_t> ms =
          ParseInt64InRange(call.args[++i], "EXPIRES (milliseconds)", 1,
                            kMaxTtl / kMicrosPerMillisecond);
      if (!ms.ok()) return ReplyError(call, ms.status());
      options.expires_at = call.server->feeds->options().clock->Now() +
                           *ms * kMicrosPerMillisecond;
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  absl::StatusOr<RelationResult> result =
      call.server->feeds->Mute(muter, muted, options);
  if (!result.ok()) return ReplyError(call, result.status());
  WriteResult(*call.reply, *result);
}

// FEED.UNMUTE muter muted [BACKFILL n]
void FeedUnmute(CommandCall& call) {
  uint64_t muter = 0, muted = 0;
  if (!ParsePair(call, "muter", "muted", &muter, &muted)) return;
  RestoreOptions options;
  if (!ParseRestore(call, &options)) return;
  absl::StatusOr<RelationResult> result =
      call.server->feeds->Unmute(muter, muted, options);
  if (!result.ok()) return ReplyError(call, result.status());
  WriteResult(*call.reply, *result);
}

// FEED.BLOCKED / FEED.MUTED entity [LIMIT n] [CURSOR c]
void ListRelations(CommandCall& call, bool muted) {
  EntityId entity = 0;
  ListOptions options;
  if (!ParseListCall(call, &entity, &options)) return;
  InProcessFeedEngine& feeds = *call.server->feeds;
  if (!muted) {
    absl::StatusOr<EntityPage> page = feeds.Blocked(entity, options);
    if (!page.ok()) return ReplyError(call, page.status());
    return WriteEntityPage(*call.reply, *page);
  }
  absl::StatusOr<MutedPage> page = feeds.Muted(entity, options);
  if (!page.ok()) return ReplyError(call, page.status());
  call.reply->ArrayHeader(2);
  WriteCursor(*call.reply, page->next_cursor);
  call.reply->ArrayHeader(page->actors.size());
  for (const MutedActor& actor : page->actors) {
    call.reply->ArrayHeader(3);
    WriteId(*call.reply, actor.actor);
    call.reply->Integer(actor.notifications ? 1 : 0);
    call.reply->Integer(actor.expires_at.value_or(0));
  }
}

void FeedBlocked(CommandCall& call) { ListRelations(call, false); }
void FeedMuted(CommandCall& call) { ListRelations(call, true); }

}  // namespace

absl::Status AddFeedRelationCommands(CommandTable& table) {
  const CommandSpec specs[] = {
      {"FEED.BLOCK", 3, {"write"}, 0, 0, 0, FeedBlock},
      {"FEED.UNBLOCK", -3, {"write"}, 0, 0, 0, FeedUnblock},
      {"FEED.MUTE", -3, {"write"}, 0, 0, 0, FeedMute},
      {"FEED.UNMUTE", -3, {"write"}, 0, 0, 0, FeedUnmute},
      {"FEED.BLOCKED", -2, {"readonly"}, 0, 0, 0, FeedBlocked},
      {"FEED.MUTED", -2, {"readonly"}, 0, 0, 0, FeedMuted},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
