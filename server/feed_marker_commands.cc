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

// FEED.MARKER.GET user feed owner [MAX n]
//   -> [[ts, id] or nil, unread, more (1 when more than MAX are unread)]
void FeedMarkerGet(CommandCall& call) {
  absl::StatusOr<EntityArgument> user =
      EntityArgument::Parse(call.args[1], "user");
  if (!user.ok()) return ReplyError(call, user.status());
  absl::StatusOr<FeedArgument> feed = ParseMarkedFeed(call.args);
  if (!feed.ok()) return ReplyError(call, feed.status());
  InProcessFeedEngine& feeds = *call.server->feeds;
  size_t max_unread =
      std::min(kDefaultMaxUnread, feeds.options().max_page_size);
  for (size_t i = 4; i < call.args.size(); ++i) {
    if (IsKeyword(call.args[i], "MAX") && i + 1 < call.args.size()) {
      absl::StatusOr<int64_t> max = ParseInt64InRange(
          call.args[++i], "MAX", 1,
          static_cast<int64_t>(feeds.options().max_page_size));
      if (!max.ok()) return ReplyError(call, max.status());
      max_unread = static_cast<size_t>(*max);
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  EntityId user_id = 0;
  absl::StatusOr<bool> resolved =
      ResolveMarked(call, *user, *feed, EntityUse::kLookUp, &user_id);
  if (!resolved.ok()) return ReplyError(call, resolved.status());
  RespWriter& reply = *call.reply;
  if (!*resolved) {
    // A name without an id: no marker, nothing unread.
    reply.ArrayHeader(3);
    reply.Null();
    reply.Integer(0);
    reply.Integer(0);
    return;
  }
  absl::StatusOr<ReadMarker> marker =
      feeds.GetReadMarker(user_id, feed->feed, max_unread);
  if (!marker.ok()) return ReplyError(call, marker.status());
  reply.ArrayHeader(3);
  if (marker->key.has_value()) {
    reply.ArrayHeader(2);
    reply.Integer(marker->key->ts);
    // Ids are uint64: decimal bulk strings, as in FEED.READ.
    reply.Bulk(absl::StrCat(marker->key->activity_id));
  } else {
    reply.Null();
  }
  reply.Integer(static_cast<int64_t>(marker->unread));
  reply.Integer(marker->more_unread ? 1 : 0);
}

}  // namespace

absl::Status AddFeedMarkerCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"FEED.MARKER.SET", -6, {"write", "fast"}, 0, 0, 0, FeedMarkerSet},
      {"FEED.MARKER.GET", -4, {"readonly"}, 0, 0, 0, FeedMarkerGet},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
