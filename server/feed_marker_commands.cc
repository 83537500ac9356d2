#include "feed_marker_commands.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "arguments.h"
#include "feed_entities.h"
#include "feed_paging.h"
#include "feedcore/feed_engine.h"
#include "feedcore/social.h"
#include "resp_writer.h"

namespace feedcore::server {
namespace {

// Unread entries counted when FEED.MARKER.GET names no MAX (or the
// engine's max_page_size, if smaller).
constexpr size_t kDefaultMaxUnread = 100;

// The feed of args[2] ("home", "own" or "world") and owner args[3], whose
// id `feed.owner` gets from Resolve. Which owner each feed may have is the
// engine's check.
struct FeedArgument {
  MarkedFeed feed;
  EntityArgument owner;
};

absl::StatusOr<FeedArgument> ParseMarkedFeed(
    absl::Span<const std::string> args) {
  FeedArgument argument;
  MarkedFeed& feed = argument.feed;
  if (IsKeyword(args[2], "HOME")) {
    feed.type = FeedType::kHome;
  } else if (IsKeyword(args[2], "OWN")) {
    feed.type = FeedType::kOwn;
  } else if (IsKeyword(args[2], "WORLD")) {
    feed.type = FeedType::kWorld;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("feed must be home, own or world, not ", Quote(args[2])));
  }
  absl::StatusOr<EntityArgument> owner =
      EntityArgument::Parse(args[3], "owner");
  if (!owner.ok()) return owner.status();
  argument.owner = *std::move(owner);
  return argument;
}

// The ids of `user` and the feed's owner, once every argument is checked
// (see feed_entities.h); false when a name looked up has none.
absl::StatusOr<bool> ResolveMarked(const CommandCall& call,
                                   const EntityArgument& user,
                                   FeedArgument& feed, EntityUse use,
                                   EntityId* user_id) {
  absl::StatusOr<std::optional<EntityId>> a = user.Resolve(*call.server, use);
  if (!a.ok()) return a.status();
  absl::StatusOr<std::optional<EntityId>> b =
      feed.owner.Resolve(*call.server, use);
  if (!b.ok()) return b.status();
  if (!a->has_value() || !b->has_value()) return false;
  *user_id = **a;
  feed.feed.owner = **b;
  return true;
}

// FEED.MARKER.SET user feed owner ts id [FORCE] -> 1 moved, 0 not
void FeedMarkerSet(CommandCall& call) {
  absl::StatusOr<EntityArgument> user =
      EntityArgument::Parse(call.args[1], "user");
  if (!user.ok()) return ReplyError(call, user.status());
  absl::StatusOr<FeedArgument> feed = ParseMarkedFeed(call.args);
  if (!feed.ok()) return ReplyError(call, feed.status());
  absl::StatusOr<int64_t> ts =
      ParseInt64InRange(call.args[4], "ts", 0, INT64_MAX);
  if (!ts.ok()) return ReplyError(call, ts.status());
  absl::StatusOr<uint64_t> id = ParseId(call.args[5], "activity id");
  if (!id.ok()) return ReplyError(call, id.status());
  SetMarkerOptions options;
  for (size_t i = 6; i < call.args.size(); ++i) {
    if (IsKeyword(call.args[i], "FORCE")) {
      options.force = true;
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  EntityId user_id = 0;
  absl::StatusOr<bool> resolved =
      ResolveMarked(call, *user, *feed, EntityUse::kAssign, &user_id);
  if (!resolved.ok()) return ReplyError(call, resolved.status());
  absl::StatusOr<bool> moved = call.server->feeds->SetReadMarker(
      user_id, feed->feed, EntryKey{*ts, *id}, options);
  if (!moved.ok()) return ReplyError(call, moved.status());
  call.reply->Integer(*moved ? 1 : 0);
}

// Parses `MAX n` at args[*i] into `max_unread`; false (and replied) on an
// error. Unread entries are counted up to the engine's page size.
bool ParseMaxUnread(CommandCall& call, size_t* i, size_t* max_unread) {
  absl::StatusOr<int64_t> max = ParseInt64InRange(
      call.args[++*i], "MAX", 1,
      static_cast<int64_t>(call.server->feeds->options().max_page_size));
  if (!max.ok()) {
    ReplyError(call, max.status());
    return false;
  }
  *max_unread = static_cast<size_t>(*max);
  return true;
}

size_t DefaultMaxUnread(const CommandCall& call) {
  return std::min(kDefaultMaxUnread,
                  call.server->feeds->options().max_page_size);
}

// The four elements [ts, id] or nil, unread, more, mentions.
void WriteMarkerFields(RespWriter& reply, const ReadMarker& marker) {
  if (marker.key.has_value()) {
    reply.ArrayHeader(2);
    reply.Integer(marker.key->ts);
    // Ids are uint64: decimal bulk strings, as in FEED.READ.
    reply.Bulk(absl::StrCat(marker.key->activity_id));
  } else {
    reply.Null();
  }
  reply.Integer(static_cast<int64_t>(marker.unread));
  reply.Integer(marker.more_unread ? 1 : 0);
  reply.Integer(static_cast<int64_t>(marker.mentions));
}

// FEED.MARKER.GET user feed owner [MAX n]
//   -> [[ts, id] or nil, unread, more (1 when more than MAX are unread),
//       mentions]
void FeedMarkerGet(CommandCall& call) {
  absl::StatusOr<EntityArgument> user =
      EntityArgument::Parse(call.args[1], "user");
  if (!user.ok()) return ReplyError(call, user.status());
  absl::StatusOr<FeedArgument> feed = ParseMarkedFeed(call.args);
  if (!feed.ok()) return ReplyError(call, feed.status());
  size_t max_unread = DefaultMaxUnread(call);
  for (size_t i = 4; i < call.args.size(); ++i) {
    if (IsKeyword(call.args[i], "MAX") && i + 1 < call.args.size()) {
      if (!ParseMaxUnread(call, &i, &max_unread)) return;
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  EntityId user_id = 0;
  absl::StatusOr<bool> resolved =
      ResolveMarked(call, *user, *feed, EntityUse::kLookUp, &user_id);
  if (!resolved.ok()) return ReplyError(call, resolved.status());
  // A name without an id: no marker, nothing unread, no mentions.
  ReadMarker marker;
  if (*resolved) {
    absl::StatusOr<ReadMarker> got =
        call.server->feeds->GetReadMarker(user_id, feed->feed, max_unread);
    if (!got.ok()) return ReplyError(call, got.status());
    marker = *got;
  }
  call.reply->ArrayHeader(4);
  WriteMarkerFields(*call.reply, marker);
}

const char* FeedTypeWord(FeedType type) {
  switch (type) {
    case FeedType::kHome:
      return "home";
    case FeedType::kOwn:
      return "own";
    default:
      return "world";
  }
}

// FEED.MARKERS user [LIMIT n] [CURSOR c] [MAX n] [NAMES]
//   -> [next_cursor, [[feed, owner, [ts, id] or nil, unread, more,
//       mentions], ...]]: every feed with a marker or a mention
void FeedMarkers(CommandCall& call) {
  absl::StatusOr<EntityArgument> user =
      EntityArgument::Parse(call.args[1], "user");
  if (!user.ok()) return ReplyError(call, user.status());
  ReadStateOptions options;
  // Pages of the library's default size, or of the engine's largest.
  options.limit =
      std::min(options.limit, call.server->feeds->options().max_page_size);
  options.max_unread = DefaultMaxUnread(call);
  bool names = false;
  for (size_t i = 2; i < call.args.size(); ++i) {
    const bool has_value = i + 1 < call.args.size();
    if (IsKeyword(call.args[i], "LIMIT") && has_value) {
      absl::StatusOr<int64_t> limit =
          ParseInt64InRange(call.args[++i], "LIMIT", 1, INT64_MAX);
      if (!limit.ok()) return ReplyError(call, limit.status());
      options.limit = static_cast<size_t>(*limit);
    } else if (IsKeyword(call.args[i], "CURSOR") && has_value) {
      options.cursor = CursorArgument(call.args[++i]);
    } else if (IsKeyword(call.args[i], "MAX") && has_value) {
      if (!ParseMaxUnread(call, &i, &options.max_unread)) return;
    } else if (IsKeyword(call.args[i], "NAMES")) {
      names = true;
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  absl::StatusOr<std::optional<EntityId>> user_id =
      user->Resolve(*call.server, EntityUse::kLookUp);
  if (!user_id.ok()) return ReplyError(call, user_id.status());
  if (!user_id->has_value()) return WriteEmptyPage(*call.reply);
  absl::StatusOr<ReadStatePage> page =
      call.server->feeds->ListReadMarkers(**user_id, options);
  if (!page.ok()) return ReplyPagingError(call, page.status());
  const NameRegistry* registry = ReplyNames(call, names);
  RespWriter& reply = *call.reply;
  reply.ArrayHeader(2);
  WriteCursor(reply, page->next_cursor);
  reply.ArrayHeader(page->feeds.size());
  for (const FeedReadState& state : page->feeds) {
    reply.ArrayHeader(6);
    reply.Bulk(FeedTypeWord(state.feed.type));
    WriteEntity(reply, state.feed.owner, registry);
    WriteMarkerFields(reply, state.marker);
  }
}

}  // namespace

absl::Status AddFeedMarkerCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"FEED.MARKER.SET", -6, {"write", "fast"}, 0, 0, 0, FeedMarkerSet},
      {"FEED.MARKER.GET", -4, {"readonly"}, 0, 0, 0, FeedMarkerGet},
      {"FEED.MARKERS", -2, {"readonly"}, 0, 0, 0, FeedMarkers},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
