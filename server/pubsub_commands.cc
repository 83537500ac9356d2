#include "pubsub_commands.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "arguments.h"
#include "feed_entities.h"
#include "pubsub_hub.h"

namespace feedcore::server {
namespace {

// The feed a channel name carries, if it is a feed channel; its entity
// given an id. The entity's error for a bad one.
absl::StatusOr<std::optional<FeedChannel>> FeedOf(const CommandCall& call,
                                                  absl::string_view channel) {
  FeedChannel feed;
  absl::string_view entity = channel;
  if (absl::ConsumePrefix(&entity, kTimelineChannelPrefix)) {
    feed.kind = FeedChannel::Kind::kTimeline;
  } else if (absl::ConsumePrefix(&entity, kNotificationsChannelPrefix)) {
    feed.kind = FeedChannel::Kind::kNotifications;
  } else {
    return std::nullopt;
  }
  absl::StatusOr<EntityArgument> argument =
      EntityArgument::Parse(entity, "channel entity");
  if (!argument.ok()) return argument.status();
  absl::StatusOr<std::optional<EntityId>> id =
      argument->Resolve(*call.server, EntityUse::kAssign);
  if (!id.ok()) return id.status();
  feed.entity = **id;
  return feed;
}

void Confirm(CommandCall& call, absl::string_view kind,
             std::optional<absl::string_view> name) {
  call.reply->PushHeader(3);
  call.reply->Bulk(kind);
  if (name.has_value()) {
    call.reply->Bulk(*name);
  } else {
    call.reply->Null();
  }
  call.reply->Integer(static_cast<int64_t>(call.session->pubsub.count()));
}

bool CanSubscribe(CommandCall& call) {
  if (call.session->pubsub.can_subscribe()) return true;
  call.reply->Error("ERR this session has no connection to push to");
  return false;
}

void Subscribe(CommandCall& call) {
  if (!CanSubscribe(call)) return;
  // Every feed channel's entity is checked (and given its id) first, so a
  // refused command subscribes to nothing.
  std::vector<std::optional<FeedChannel>> feeds;
  for (size_t i = 1; i < call.args.size(); ++i) {
    absl::StatusOr<std::optional<FeedChannel>> feed =
        FeedOf(call, call.args[i]);
    if (!feed.ok()) return ReplyError(call, feed.status());
    feeds.push_back(*feed);
  }
  for (size_t i = 1; i < call.args.size(); ++i) {
    absl::StatusOr<bool> subscribed =
        call.session->pubsub.Subscribe(call.args[i], feeds[i - 1]);
    if (!subscribed.ok()) return ReplyError(call, subscribed.status());
    Confirm(call, "subscribe", call.args[i]);
  }
}

void Psubscribe(CommandCall& call) {
  if (!CanSubscribe(call)) return;
  for (size_t i = 1; i < call.args.size(); ++i) {
    call.session->pubsub.SubscribePattern(call.args[i]);
    Confirm(call, "psubscribe", call.args[i]);
  }
}

// UNSUBSCRIBE and PUNSUBSCRIBE: the names given, or every one held; with
// none held and none given, one confirmation naming nothing.
void Leave(CommandCall& call, bool patterns) {
  PubSubMembership& pubsub = call.session->pubsub;
  const absl::string_view kind = patterns ? "punsubscribe" : "unsubscribe";
  std::vector<std::string> names(call.args.begin() + 1, call.args.end());
  if (names.empty()) names = patterns ? pubsub.patterns() : pubsub.channels();
  if (names.empty()) return Confirm(call, kind, std::nullopt);
  for (const std::string& name : names) {
    if (pubsub.can_subscribe()) {
      patterns ? pubsub.UnsubscribePattern(name) : pubsub.Unsubscribe(name);
    }
    Confirm(call, kind, name);
  }
}

void Unsubscribe(CommandCall& call) { Leave(call, /*patterns=*/false); }
void Punsubscribe(CommandCall& call) { Leave(call, /*patterns=*/true); }

void Publish(CommandCall& call) {
  call.reply->Integer(static_cast<int64_t>(
      call.server->pubsub->Publish(call.args[1], call.args[2])));
}

void Pubsub(CommandCall& call) {
  const std::string& sub = call.args[1];
  const PubSubHub& hub = *call.server->pubsub;
  const size_t extra = call.args.size() - 2;
  // Redis's wording for CHANNELS' arity.
  const auto wrong_arity = [&] {
    call.reply->Error(absl::StrCat(
        "ERR unknown subcommand or wrong number of arguments for '", sub,
        "'. Try PUBSUB HELP."));
  };
  if (IsKeyword(sub, "CHANNELS")) {
    if (extra > 1) return wrong_arity();
    std::optional<absl::string_view> pattern;
    if (extra == 1) pattern = call.args[2];
    const std::vector<std::string> channels = hub.Channels(pattern);
    call.reply->ArrayHeader(channels.size());
    for (const std::string& channel : channels) call.reply->Bulk(channel);
  } else if (IsKeyword(sub, "NUMSUB")) {
    call.reply->ArrayHeader(2 * extra);  // flat in RESP3 too, as Redis
    for (size_t i = 2; i < call.args.size(); ++i) {
      call.reply->Bulk(call.args[i]);
      call.reply->Integer(static_cast<int64_t>(hub.Subscribers(call.args[i])));
    }
  } else if (IsKeyword(sub, "NUMPAT")) {
    // Redis checks this arity before the subcommand runs, in other words.
    if (extra > 0) {
      return call.reply->Error(
          "ERR wrong number of arguments for 'pubsub|numpat' command");
    }
    call.reply->Integer(static_cast<int64_t>(hub.Patterns()));
  } else if (IsKeyword(sub, "HELP")) {
    const std::vector<absl::string_view> lines = {
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> "
        "(default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, "
        "excluding pattern subscriptions (default: no channels).",
        "HELP",
        "    Print this help."};
    call.reply->ArrayHeader(lines.size());
    for (absl::string_view line : lines) call.reply->SimpleString(line);
  } else {
    call.reply->Error(
        absl::StrCat("ERR unknown subcommand '", sub, "'. Try PUBSUB HELP."));
  }
}

}  // namespace

absl::Status AddPubSubCommands(CommandTable& table) {
  const std::vector<std::string> subscribing = {"pubsub", "noscript", "loading",
                                                "stale"};
  std::vector<CommandSpec> specs = {
      {"SUBSCRIBE", -2, subscribing, 0, 0, 0, Subscribe},
      {"UNSUBSCRIBE", -1, subscribing, 0, 0, 0, Unsubscribe},
      {"PSUBSCRIBE", -2, subscribing, 0, 0, 0, Psubscribe},
      {"PUNSUBSCRIBE", -1, subscribing, 0, 0, 0, Punsubscribe},
      {"PUBLISH", 3, {"pubsub", "loading", "stale", "fast"}, 0, 0, 0, Publish},
      {"PUBSUB", -2, {"pubsub", "loading", "stale"}, 0, 0, 0, Pubsub},
  };
  for (CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(std::move(spec)); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
