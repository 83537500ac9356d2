#include "feed_relation_commands.h"

#include <string>

#include "arguments.h"
#include "feed_entities.h"
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

// The user and actor of args[1] and args[2], named `user` and `actor`.
struct Pair {
  EntityArgument user;
  EntityArgument actor;
};

bool ParsePair(CommandCall& call, const char* user, const char* actor,
               Pair* pair) {
  absl::StatusOr<EntityArgument> a = EntityArgument::Parse(call.args[1], user);
  if (!a.ok()) {
    ReplyError(call, a.status());
    return false;
  }
  absl::StatusOr<EntityArgument> b = EntityArgument::Parse(call.args[2], actor);
  if (!b.ok()) {
    ReplyError(call, b.status());
    return false;
  }
  pair->user = *std::move(a);
  pair->actor = *std::move(b);
  return true;
}

// The ids of `pair`, once every argument is checked: assigned for `use`
// kAssign; for kLookUp, false after replying "nothing changed" when a name
// has no id. False after an error reply too.
bool ResolvePair(CommandCall& call, const Pair& pair, EntityUse use,
                 uint64_t* user_id, uint64_t* actor_id) {
  absl::StatusOr<std::optional<EntityId>> a =
      pair.user.Resolve(*call.server, use);
  if (!a.ok()) {
    ReplyError(call, a.status());
    return false;
  }
  absl::StatusOr<std::optional<EntityId>> b =
      pair.actor.Resolve(*call.server, use);
  if (!b.ok()) {
    ReplyError(call, b.status());
    return false;
  }
  if (!a->has_value() || !b->has_value()) {
    WriteResult(*call.reply, RelationResult{});
    return false;
  }
  *user_id = **a;
  *actor_id = **b;
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
  Pair pair;
  uint64_t blocker = 0, blocked = 0;
  if (!ParsePair(call, "blocker", "blocked", &pair) ||
      !ResolvePair(call, pair, EntityUse::kAssign, &blocker, &blocked)) {
    return;
  }
  absl::StatusOr<RelationResult> result =
      call.server->feeds->Block(blocker, blocked);
  if (!result.ok()) return ReplyError(call, result.status());
  WriteResult(*call.reply, *result);
}

// FEED.UNBLOCK blocker blocked [BACKFILL n]
void FeedUnblock(CommandCall& call) {
  Pair pair;
  uint64_t blocker = 0, blocked = 0;
  RestoreOptions options;
  if (!ParsePair(call, "blocker", "blocked", &pair) ||
      !ParseRestore(call, &options) ||
      !ResolvePair(call, pair, EntityUse::kLookUp, &blocker, &blocked)) {
    return;
  }
  absl::StatusOr<RelationResult> result =
      call.server->feeds->Unblock(blocker, blocked, options);
  if (!result.ok()) return ReplyError(call, result.status());
  WriteResult(*call.reply, *result);
}

// FEED.MUTE muter muted [NOTIFICATIONS] [EXPIRES ms]; ms from now.
void FeedMute(CommandCall& call) {
  Pair pair;
  if (!ParsePair(call, "muter", "muted", &pair)) return;
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
  uint64_t muter = 0, muted = 0;
  if (!ResolvePair(call, pair, EntityUse::kAssign, &muter, &muted)) return;
  absl::StatusOr<RelationResult> result =
      call.server->feeds->Mute(muter, muted, options);
  if (!result.ok()) return ReplyError(call, result.status());
  WriteResult(*call.reply, *result);
}

// FEED.UNMUTE muter muted [BACKFILL n]
void FeedUnmute(CommandCall& call) {
  Pair pair;
  uint64_t muter = 0, muted = 0;
  RestoreOptions options;
  if (!ParsePair(call, "muter", "muted", &pair) ||
      !ParseRestore(call, &options) ||
      !ResolvePair(call, pair, EntityUse::kLookUp, &muter, &muted)) {
    return;
  }
  absl::StatusOr<RelationResult> result =
      call.server->feeds->Unmute(muter, muted, options);
  if (!result.ok()) return ReplyError(call, result.status());
  WriteResult(*call.reply, *result);
}

// FEED.BLOCKED / FEED.MUTED entity [LIMIT n] [CURSOR c] [NAMES]
void ListRelations(CommandCall& call, bool muted) {
  EntityId entity = 0;
  ListCall list;
  if (!ParseListCall(call, &entity, &list)) return;
  InProcessFeedEngine& feeds = *call.server->feeds;
  const NameRegistry* names = ReplyNames(call, list.names);
  if (!muted) {
    absl::StatusOr<EntityPage> page = feeds.Blocked(entity, list.options);
    if (!page.ok()) return ReplyPagingError(call, page.status());
    return WriteEntityPage(*call.reply, *page, names);
  }
  absl::StatusOr<MutedPage> page = feeds.Muted(entity, list.options);
  if (!page.ok()) return ReplyPagingError(call, page.status());
  call.reply->ArrayHeader(2);
  WriteCursor(*call.reply, page->next_cursor);
  call.reply->ArrayHeader(page->actors.size());
  for (const MutedActor& actor : page->actors) {
    call.reply->ArrayHeader(3);
    WriteEntity(*call.reply, actor.actor, names);
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
