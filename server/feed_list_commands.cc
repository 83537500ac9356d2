// Owners and members are ids or names (feed_entities.h): writes assign a
// name its id, reads and removals look it up (a name without an id owns
// no list and is in none). List ids are the client's, 1..2^64-1.
#include "feed_list_commands.h"

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
#include "feedcore/social.h"

namespace feedcore::server {
namespace {

// The entity of args[index] (named `what` in errors) resolved for `use`;
// false after an error reply. `id` is nullopt for a name without an id
// when looked up.
bool EntityAt(CommandCall& call, size_t index, const char* what, EntityUse use,
              std::optional<EntityId>* id) {
  absl::StatusOr<EntityArgument> entity =
      EntityArgument::Parse(call.args[index], what);
  if (!entity.ok()) {
    ReplyError(call, entity.status());
    return false;
  }
  absl::StatusOr<std::optional<EntityId>> found =
      entity->Resolve(*call.server, use);
  if (!found.ok()) {
    ReplyError(call, found.status());
    return false;
  }
  *id = *found;
  return true;
}

// The list id of args[2]; false after an error reply.
bool ListAt(CommandCall& call, ListId* list) {
  absl::StatusOr<uint64_t> id = ParseId(call.args[2], "list id");
  if (!id.ok()) {
    ReplyError(call, id.status());
    return false;
  }
  *list = *id;
  return true;
}

absl::Status NoSuchList(const CommandCall& call, ListId list) {
  return absl::NotFoundError(
      absl::StrCat("entity ", Quote(call.args[1]), " has no list ", list));
}

// FEED.LISTSET owner list name [EXCLUSIVE] -> 1 created, 0 it existed
// (its settings are now these).
void FeedListSet(CommandCall& call) {
  ListId list = 0;
  if (!ListAt(call, &list)) return;
  ListSettings settings;
  settings.name = call.args[3];
  for (size_t i = 4; i < call.args.size(); ++i) {
    if (!IsKeyword(call.args[i], "EXCLUSIVE")) {
      return ReplySyntaxError(call, call.args[i]);
    }
    settings.exclusive = true;
  }
  std::optional<EntityId> owner;
  if (!EntityAt(call, 1, "owner", EntityUse::kAssign, &owner)) return;
  absl::StatusOr<bool> created =
      call.server->feeds->SetList(*owner, list, settings);
  if (!created.ok()) return ReplyError(call, created.status());
  call.reply->Integer(*created ? 1 : 0);
}

// FEED.LISTDEL owner list -> 1 deleted, 0 there was none
void FeedListDel(CommandCall& call) {
  ListId list = 0;
  if (!ListAt(call, &list)) return;
  std::optional<EntityId> owner;
  if (!EntityAt(call, 1, "owner", EntityUse::kLookUp, &owner)) return;
  if (!owner.has_value()) return call.reply->Integer(0);
  absl::StatusOr<bool> deleted = call.server->feeds->DeleteList(*owner, list);
  if (!deleted.ok()) return ReplyError(call, deleted.status());
  call.reply->Integer(*deleted ? 1 : 0);
}

// FEED.LISTADD owner list member -> 1 added, 0 a member already;
// FEED.LISTREM owner list member -> 1 removed, 0 not a member.
void ChangeMember(CommandCall& call, bool add) {
  ListId list = 0;
  if (!ListAt(call, &list)) return;
  std::optional<EntityId> owner;
  if (!EntityAt(call, 1, "owner", EntityUse::kLookUp, &owner)) return;
  if (!owner.has_value()) return ReplyError(call, NoSuchList(call, list));
  std::optional<EntityId> member;
  if (!EntityAt(call, 3, "member",
                add ? EntityUse::kAssign : EntityUse::kLookUp, &member)) {
    return;
  }
  InProcessFeedEngine& feeds = *call.server->feeds;
  absl::StatusOr<bool> changed;
  if (member.has_value()) {
    changed = add ? feeds.AddToList(*owner, list, *member)
                  : feeds.RemoveFromList(*owner, list, *member);
  } else {
    // A name without an id is in no list; the list must still exist.
    absl::StatusOr<EntityPage> exists = feeds.ListMembers(*owner, list, {});
    changed = exists.ok() ? absl::StatusOr<bool>(false) : exists.status();
  }
  if (!changed.ok()) return ReplyError(call, changed.status());
  call.reply->Integer(*changed ? 1 : 0);
}

void FeedListAdd(CommandCall& call) { ChangeMember(call, true); }
void FeedListRem(CommandCall& call) { ChangeMember(call, false); }

// FEED.LISTS owner -> [[list, name, exclusive, members], ...] by id
void FeedListsOf(CommandCall& call) {
  std::optional<EntityId> owner;
  if (!EntityAt(call, 1, "owner", EntityUse::kLookUp, &owner)) return;
  RespWriter& reply = *call.reply;
  if (!owner.has_value()) return reply.ArrayHeader(0);
  absl::StatusOr<std::vector<AccountList>> lists =
      call.server->feeds->Lists(*owner);
  if (!lists.ok()) return ReplyError(call, lists.status());
  reply.ArrayHeader(lists->size());
  for (const AccountList& list : *lists) {
    reply.ArrayHeader(4);
    reply.Bulk(absl::StrCat(list.id));
    reply.Bulk(list.settings.name);
    reply.Integer(list.settings.exclusive ? 1 : 0);
    reply.Integer(static_cast<int64_t>(list.members));
  }
}

// FEED.LISTMEMBERS owner list [LIMIT n] [CURSOR c] [NAMES]
//   -> [next_cursor, [member, ...]], ascending ids
void FeedListMembers(CommandCall& call) {
  ListId list = 0;
  if (!ListAt(call, &list)) return;
  ListOptions options;
  bool names = false;
  if (!ParseListOptions(call, 3, &options, &names)) return;
  std::optional<EntityId> owner;
  if (!EntityAt(call, 1, "owner", EntityUse::kLookUp, &owner)) return;
  if (!owner.has_value()) return ReplyError(call, NoSuchList(call, list));
  absl::StatusOr<EntityPage> page =
      call.server->feeds->ListMembers(*owner, list, options);
  if (!page.ok()) return ReplyPagingError(call, page.status());
  WriteEntityPage(*call.reply, *page, ReplyNames(call, names));
}

// FEED.LISTREAD owner list [read options] -> a page, as FEED.READ
void FeedListRead(CommandCall& call) {
  ListId list = 0;
  if (!ListAt(call, &list)) return;
  ReadOptions options;
  bool names = false;
  EntryFields fields;
  if (absl::Status s = ParseReadOptions(call.args, 3, options, names, fields);
      !s.ok()) {
    return ReplyError(call, s);
  }
  std::optional<EntityId> owner;
  if (!EntityAt(call, 1, "owner", EntityUse::kLookUp, &owner)) return;
  if (!owner.has_value()) return ReplyError(call, NoSuchList(call, list));
  ReplyPage(call, call.server->feeds->ReadList(*owner, list, options), names,
            fields);
}

}  // namespace

absl::Status AddFeedListCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"FEED.LISTSET", -4, {"write", "denyoom", "fast"}, 0, 0, 0, FeedListSet},
      {"FEED.LISTDEL", 3, {"write", "fast"}, 0, 0, 0, FeedListDel},
      {"FEED.LISTADD", 4, {"write", "denyoom", "fast"}, 0, 0, 0, FeedListAdd},
      {"FEED.LISTREM", 4, {"write", "fast"}, 0, 0, 0, FeedListRem},
      {"FEED.LISTS", 2, {"readonly", "fast"}, 0, 0, 0, FeedListsOf},
      {"FEED.LISTMEMBERS", -3, {"readonly"}, 0, 0, 0, FeedListMembers},
      {"FEED.LISTREAD", -3, {"readonly"}, 0, 0, 0, FeedListRead},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
