// Users are ids or names (feed_entities.h): FEED.REACT assigns a name its
// id, the other commands only look names up (a name without an id has
// reacted to nothing). Activity ids are FEED.PUBLISH's. A kind is a
// counter index, 0..3, as FEED.INCR's counter.
#include "feed_reaction_commands.h"

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
#include "publish_ledger.h"

namespace feedcore::server {
namespace {

// The user of args[1], the activity id of args[2] and the kind of args[3].
struct ReactionCall {
  EntityArgument user;
  ActivityId activity = 0;
  ReactionKind kind = 0;
};

// False after an error reply.
bool ParseReactionCall(CommandCall& call, ReactionCall* parsed) {
  absl::StatusOr<EntityArgument> user =
      EntityArgument::Parse(call.args[1], "user");
  if (!user.ok()) {
    ReplyError(call, user.status());
    return false;
  }
  absl::StatusOr<uint64_t> activity = ParseId(call.args[2], "activity id");
  if (!activity.ok()) {
    ReplyError(call, activity.status());
    return false;
  }
  absl::StatusOr<uint64_t> kind = ParseId(call.args[3], "reaction kind");
  if (!kind.ok()) {
    ReplyError(call, kind.status());
    return false;
  }
  parsed->user = *std::move(user);
  parsed->activity = *activity;
  parsed->kind = static_cast<ReactionKind>(*kind);
  return true;
}

// [changed, [c0, c1, c2, c3]], then `notified` for FEED.REACT.
void WriteReaction(RespWriter& reply, const ReactionResult& result,
                   bool with_notified) {
  reply.ArrayHeader(with_notified ? 3 : 2);
  reply.Integer(result.changed ? 1 : 0);
  reply.ArrayHeader(result.counters.size());
  for (const int64_t counter : result.counters) reply.Integer(counter);
  if (with_notified) reply.Integer(result.notified ? 1 : 0);
}

// FEED.REACT user activity kind [NOTICE id|*] [VERB v] [PAYLOAD p]
// -> [changed, [c0, c1, c2, c3], notified]. NOTICE tells the activity's
// actor through its notification feed (ReactOptions), under the client's
// id or one handed out as FEED.PUBLISH's '*'.
void FeedReact(CommandCall& call) {
  ReactionCall parsed;
  if (!ParseReactionCall(call, &parsed)) return;
  ReactOptions options;
  bool notice = false;
  bool server_notice_id = false;
  for (size_t i = 4; i < call.args.size(); ++i) {
    const bool has_value = i + 1 < call.args.size();
    if (IsKeyword(call.args[i], "NOTICE") && has_value) {
      notice = true;
      if (call.args[++i] == "*") {
        server_notice_id = true;
      } else {
        absl::StatusOr<uint64_t> id = ParseId(
            call.args[i], "NOTICE activity id (or * to have one handed out)");
        if (!id.ok()) return ReplyError(call, id.status());
        if (*id == 0) {
          return ReplyError(call, absl::InvalidArgumentError(
                                      "NOTICE activity id must not be 0"));
        }
        options.notice_id = *id;
      }
    } else if (IsKeyword(call.args[i], "VERB") && has_value) {
      absl::StatusOr<uint64_t> verb = ParseId(call.args[++i], "VERB");
      if (!verb.ok()) return ReplyError(call, verb.status());
      options.notice_verb = *verb;
    } else if (IsKeyword(call.args[i], "PAYLOAD") && has_value) {
      options.notice_payload = call.args[++i];
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  if (!notice &&
      (options.notice_verb != 0 || !options.notice_payload.empty())) {
    return ReplyError(call, absl::InvalidArgumentError(
                                "VERB and PAYLOAD describe a NOTICE; pass "
                                "NOTICE id|* with them"));
  }
  absl::StatusOr<std::optional<EntityId>> user =
      parsed.user.Resolve(*call.server, EntityUse::kAssign);
  if (!user.ok()) return ReplyError(call, user.status());
  InProcessFeedEngine& feeds = *call.server->feeds;
  if (server_notice_id) {
    PublishRequest request;
    request.actor = **user;
    request.ts = feeds.options().clock->Now();
    absl::StatusOr<PublishPlan> plan =
        call.server->publishes->Plan(request, *request.ts);
    if (!plan.ok()) return ReplyError(call, plan.status());
    options.notice_id = plan->id;
  }
  absl::StatusOr<ReactionResult> result =
      feeds.React(**user, parsed.activity, parsed.kind, options);
  if (!result.ok()) return ReplyError(call, result.status());
  WriteReaction(*call.reply, *result, /*with_notified=*/true);
}

// FEED.UNREACT user activity kind -> [changed, [c0, c1, c2, c3]]
void FeedUnreact(CommandCall& call) {
  ReactionCall parsed;
  if (!ParseReactionCall(call, &parsed)) return;
  if (call.args.size() > 4) return ReplySyntaxError(call, call.args[4]);
  absl::StatusOr<std::optional<EntityId>> user =
      parsed.user.Resolve(*call.server, EntityUse::kLookUp);
  if (!user.ok()) return ReplyError(call, user.status());
  InProcessFeedEngine& feeds = *call.server->feeds;
  if (!user->has_value()) {
    // A name without an id reacted to nothing; the kind and the activity
    // are still checked as Unreact checks them.
    ListOptions one;
    one.limit = 1;
    if (absl::Status checked =
            feeds.ReadReactors(parsed.activity, parsed.kind, one).status();
        !checked.ok()) {
      return ReplyError(call, checked);
    }
    absl::StatusOr<ActivityCounters> counters =
        feeds.GetCounters(parsed.activity);
    if (!counters.ok()) return ReplyError(call, counters.status());
    return WriteReaction(*call.reply, ReactionResult{false, *counters, false},
                         /*with_notified=*/false);
  }
  absl::StatusOr<ReactionResult> result =
      feeds.Unreact(**user, parsed.activity, parsed.kind);
  if (!result.ok()) return ReplyError(call, result.status());
  WriteReaction(*call.reply, *result, /*with_notified=*/false);
}

// FEED.REACTED user activity [activity ...] -> [kinds, ...], each the
// bits of the kinds the user reacted with (bit k for kind k), 0 for none.
void FeedReacted(CommandCall& call) {
  absl::StatusOr<EntityArgument> user =
      EntityArgument::Parse(call.args[1], "user");
  if (!user.ok()) return ReplyError(call, user.status());
  std::vector<ActivityId> ids;
  ids.reserve(call.args.size() - 2);
  for (size_t i = 2; i < call.args.size(); ++i) {
    absl::StatusOr<uint64_t> id = ParseId(call.args[i], "activity id");
    if (!id.ok()) return ReplyError(call, id.status());
    ids.push_back(*id);
  }
  absl::StatusOr<std::optional<EntityId>> id =
      user->Resolve(*call.server, EntityUse::kLookUp);
  if (!id.ok()) return ReplyError(call, id.status());
  absl::StatusOr<std::vector<ReactionKinds>> kinds =
      call.server->feeds->GetOwnReactions(id->value_or(0), ids);
  if (!kinds.ok()) return ReplyError(call, kinds.status());
  RespWriter& reply = *call.reply;
  reply.ArrayHeader(kinds->size());
  for (const ReactionKinds k : *kinds) {
    reply.Integer(id->has_value() ? k : 0);
  }
}

// FEED.REACTORS activity kind [LIMIT n] [CURSOR c] [NAMES]
// -> [next_cursor, [[user, reacted_at], ...]], the most recent first.
void FeedReactors(CommandCall& call) {
  absl::StatusOr<uint64_t> activity = ParseId(call.args[1], "activity id");
  if (!activity.ok()) return ReplyError(call, activity.status());
  absl::StatusOr<uint64_t> kind = ParseId(call.args[2], "reaction kind");
  if (!kind.ok()) return ReplyError(call, kind.status());
  ListOptions list;
  bool names = false;
  if (!ParseListOptions(call, 3, &list, &names)) return;
  absl::StatusOr<ReactorPage> page = call.server->feeds->ReadReactors(
      *activity, static_cast<ReactionKind>(*kind), list);
  if (!page.ok()) return ReplyPagingError(call, page.status());
  const NameRegistry* reply_names = ReplyNames(call, names);
  RespWriter& reply = *call.reply;
  reply.ArrayHeader(2);
  WriteCursor(reply, page->next_cursor);
  reply.ArrayHeader(page->reactors.size());
  for (const Reactor& reactor : page->reactors) {
    reply.ArrayHeader(2);
    WriteEntity(reply, reactor.user, reply_names);
    reply.Integer(reactor.reacted_at);
  }
}

}  // namespace

absl::Status AddFeedReactionCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"FEED.REACT", -4, {"write", "denyoom", "fast"}, 0, 0, 0, FeedReact},
      {"FEED.UNREACT", 4, {"write", "fast"}, 0, 0, 0, FeedUnreact},
      {"FEED.REACTED", -3, {"readonly", "fast"}, 0, 0, 0, FeedReacted},
      {"FEED.REACTORS", -3, {"readonly"}, 0, 0, 0, FeedReactors},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
