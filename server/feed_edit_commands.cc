// Entities are ids or names (feed_entities.h), all looked up without
// assigning: only an entity that published can edit or pin, and a name
// without an id has published nothing. Activity ids are FEED.PUBLISH's
// (a client's, or the decimal id a '*' publish replied), as FEED.RETRACT
// takes them.
#include "feed_edit_commands.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "feed_entities.h"
#include "feed_paging.h"
#include "feedcore/feed_engine.h"
#include "feedcore/types.h"

namespace feedcore::server {
namespace {

// The entity of args[1] (named `what` in errors) and the activity id of
// args[2], checked; false after an error reply.
struct EntityAndActivity {
  EntityArgument entity;
  ActivityId activity = 0;
};

bool ParseEntityAndActivity(CommandCall& call, const char* what,
                            EntityAndActivity* parsed) {
  absl::StatusOr<EntityArgument> entity =
      EntityArgument::Parse(call.args[1], what);
  if (!entity.ok()) {
    ReplyError(call, entity.status());
    return false;
  }
  absl::StatusOr<uint64_t> activity = ParseId(call.args[2], "activity id");
  if (!activity.ok()) {
    ReplyError(call, activity.status());
    return false;
  }
  parsed->entity = *std::move(entity);
  parsed->activity = *activity;
  return true;
}

// The entity's id, nullopt for a name without one; false after an error
// reply.
bool LookUp(CommandCall& call, const EntityArgument& entity,
            std::optional<EntityId>* id) {
  absl::StatusOr<std::optional<EntityId>> found =
      entity.Resolve(*call.server, EntityUse::kLookUp);
  if (!found.ok()) {
    ReplyError(call, found.status());
    return false;
  }
  *id = *found;
  return true;
}

// FEED.EDIT actor activity payload -> the edit time (engine clock micros)
void FeedEdit(CommandCall& call) {
  EntityAndActivity parsed;
  if (!ParseEntityAndActivity(call, "actor", &parsed)) return;
  std::optional<EntityId> actor;
  if (!LookUp(call, parsed.entity, &actor)) return;
  if (!actor.has_value()) {
    return ReplyError(call, absl::PermissionDeniedError(absl::StrCat(
                                "activity ", parsed.activity,
                                " was not published by ", Quote(call.args[1]),
                                " (a name that has published nothing): only "
                                "its actor edits it")));
  }
  absl::StatusOr<Micros> edited_at =
      call.server->feeds->EditActivity(*actor, parsed.activity, call.args[3]);
  if (!edited_at.ok()) return ReplyError(call, edited_at.status());
  call.reply->Integer(*edited_at);
}

// FEED.PIN owner activity -> 1 pinned now, 0 pinned already
void FeedPin(CommandCall& call) {
  EntityAndActivity parsed;
  if (!ParseEntityAndActivity(call, "owner", &parsed)) return;
  std::optional<EntityId> owner;
  if (!LookUp(call, parsed.entity, &owner)) return;
  if (!owner.has_value()) {
    return ReplyError(call, absl::NotFoundError(absl::StrCat(
                                "entity ", Quote(call.args[1]),
                                " has no visible published activity ",
                                parsed.activity, " to pin")));
  }
  absl::StatusOr<bool> pinned =
      call.server->feeds->Pin(*owner, parsed.activity);
  if (!pinned.ok()) return ReplyError(call, pinned.status());
  call.reply->Integer(*pinned ? 1 : 0);
}

// FEED.UNPIN owner activity -> 1 unpinned, 0 it was not pinned
void FeedUnpin(CommandCall& call) {
  EntityAndActivity parsed;
  if (!ParseEntityAndActivity(call, "owner", &parsed)) return;
  std::optional<EntityId> owner;
  if (!LookUp(call, parsed.entity, &owner)) return;
  if (!owner.has_value()) return call.reply->Integer(0);
  absl::StatusOr<bool> unpinned =
      call.server->feeds->Unpin(*owner, parsed.activity);
  if (!unpinned.ok()) return ReplyError(call, unpinned.status());
  call.reply->Integer(*unpinned ? 1 : 0);
}

// FEED.PINNED owner [NAMES] [WITHEDITS] [WITHKINDS]
//   -> [[id, actor, ts, expires_at, payload], ...], the most recently
// pinned first. No cursor: at most kMaxPinnedEntries, one reply. Payloads
// always, as every feed read of the server.
void FeedPinned(CommandCall& call) {
  absl::StatusOr<EntityArgument> entity =
      EntityArgument::Parse(call.args[1], "owner");
  if (!entity.ok()) return ReplyError(call, entity.status());
  bool names = false;
  EntryFields fields;
  for (size_t i = 2; i < call.args.size(); ++i) {
    if (IsKeyword(call.args[i], "NAMES")) {
      names = true;
    } else if (ParseEntryField(call.args[i], fields)) {
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  std::optional<EntityId> owner;
  if (!LookUp(call, *entity, &owner)) return;
  RespWriter& reply = *call.reply;
  if (!owner.has_value()) return reply.ArrayHeader(0);
  absl::StatusOr<std::vector<StoredEntry>> pinned =
      call.server->feeds->ReadPinned(*owner, /*hydrate=*/true);
  if (!pinned.ok()) return ReplyError(call, pinned.status());
  const NameRegistry* reply_names = ReplyNames(call, names);
  reply.ArrayHeader(pinned->size());
  for (const StoredEntry& entry : *pinned) {
    WriteStoredEntry(reply, entry, reply_names, fields);
  }
}

}  // namespace

absl::Status AddFeedEditCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"FEED.EDIT", 4, {"write", "denyoom", "fast"}, 0, 0, 0, FeedEdit},
      {"FEED.PIN", 3, {"write", "fast"}, 0, 0, 0, FeedPin},
      {"FEED.UNPIN", 3, {"write", "fast"}, 0, 0, 0, FeedUnpin},
      {"FEED.PINNED", -2, {"readonly"}, 0, 0, 0, FeedPinned},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
