#include "feed_commands.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "feed_entities.h"
#include "feed_paging.h"
#include "feedcore/options.h"
#include "feedcore/types.h"

namespace feedcore::server {
namespace {

// FEED.READ user / FEED.OWN actor [read options]
void ReadEntityFeed(CommandCall& call, bool own) {
  absl::StatusOr<EntityArgument> entity =
      EntityArgument::Parse(call.args[1], own ? "actor" : "user");
  if (!entity.ok()) return ReplyError(call, entity.status());
  ReadOptions options;
  bool names = false;
  EntryFields fields;
  if (absl::Status s = ParseReadOptions(call.args, 2, options, names, fields);
      !s.ok()) {
    return ReplyError(call, s);
  }
  absl::StatusOr<std::optional<EntityId>> id =
      entity->Resolve(*call.server, EntityUse::kLookUp);
  if (!id.ok()) return ReplyError(call, id.status());
  if (!id->has_value()) return WriteEmptyPage(*call.reply);
  InProcessFeedEngine& feeds = *call.server->feeds;
  ReplyPage(
      call,
      own ? feeds.ReadOwn(**id, options) : feeds.ReadTimeline(**id, options),
      names, fields);
}

void FeedRead(CommandCall& call) { ReadEntityFeed(call, false); }
void FeedOwn(CommandCall& call) { ReadEntityFeed(call, true); }

// FEED.WORLD [read options]
void FeedWorld(CommandCall& call) {
  ReadOptions options;
  bool names = false;
  EntryFields fields;
  if (absl::Status s = ParseReadOptions(call.args, 1, options, names, fields);
      !s.ok()) {
    return ReplyError(call, s);
  }
  ReplyPage(call, call.server->feeds->ReadWorld(options), names, fields);
}

// FEED.FOLLOW follower followee [BACKFILL n] [KINDS list | EXCEPTKINDS list]
void FeedFollow(CommandCall& call) {
  absl::StatusOr<EntityArgument> follower =
      EntityArgument::Parse(call.args[1], "follower");
  if (!follower.ok()) return ReplyError(call, follower.status());
  absl::StatusOr<EntityArgument> followee =
      EntityArgument::Parse(call.args[2], "followee");
  if (!followee.ok()) return ReplyError(call, followee.status());
  FollowOptions options;
  KindFilter kinds;
  absl::Status bad;
  for (size_t i = 3; i < call.args.size(); ++i) {
    if (IsKeyword(call.args[i], "BACKFILL") && i + 1 < call.args.size()) {
      absl::StatusOr<int64_t> backfill =
          ParseInt64InRange(call.args[++i], "BACKFILL", 0,
                            static_cast<int64_t>(kMaxTimelineLengthLimit));
      if (!backfill.ok()) return ReplyError(call, backfill.status());
      options.backfill = static_cast<size_t>(*backfill);
    } else if (ParseKindsOption(call.args, i, kinds, bad)) {
      if (!bad.ok()) return ReplyError(call, bad);
      options.kinds = kinds;
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  absl::StatusOr<std::optional<EntityId>> a =
      follower->Resolve(*call.server, EntityUse::kAssign);
  if (!a.ok()) return ReplyError(call, a.status());
  absl::StatusOr<std::optional<EntityId>> b =
      followee->Resolve(*call.server, EntityUse::kAssign);
  if (!b.ok()) return ReplyError(call, b.status());
  absl::StatusOr<FollowResult> result =
      call.server->feeds->Follow(**a, **b, options);
  if (!result.ok()) return ReplyError(call, result.status());
  call.reply->Integer(result->created ? 1 : 0);
}

// The ts of activity `id` of `actor` with `payload` in the actor's own
// feed, if it is there. Once edited, the feed holds the edit's payload,
// not the first one's, and the engine takes a re-publish of an edited
// activity with the same id, actor and ts as a no-op whatever its
// payload: any payload matches then. Cost: the own feed, read a page at a
// time (only a retry that the ledger forgot comes here).
std::optional<Micros> PublishedTs(const InProcessFeedEngine& feeds,
                                  EntityId actor, ActivityId id,
                                  absl::string_view payload) {
  ReadOptions read;
  read.limit = feeds.options().max_page_size;
  read.hydrate = true;
  for (;;) {
    absl::StatusOr<Page> page = feeds.ReadOwn(actor, read);
    if (!page.ok()) return std::nullopt;
    for (const StoredEntry& entry : page->entries) {
      if (entry.activity_id == id) {
        if (entry.edited_at == 0 && entry.payload != payload) {
          return std::nullopt;
        }
        return entry.ts;
      }
    }
    if (page->next_cursor.empty()) return std::nullopt;
    read.cursor = page->next_cursor;
  }
}

// FEED.PUBLISH actor id|* ts|* payload [TTL ms] [KIND k] [REPOSTOF id]
//              [IDEMPOTENCY key] [NOTIFY recipient]... [MENTION user]...
// -> 1 published, 0 the same activity was already there; with id '*' the
// activity id handed out (the first one's on a retry). See
// publish_ledger.h for '*' and IDEMPOTENCY.
void FeedPublish(CommandCall& call) {
  absl::StatusOr<EntityArgument> actor =
      EntityArgument::Parse(call.args[1], "actor");
  if (!actor.ok()) return ReplyError(call, actor.status());
  PublishRequest request;
  if (call.args[2] != "*") {
    absl::StatusOr<uint64_t> id =
        ParseId(call.args[2], "activity id (or * to have one handed out)");
    if (!id.ok()) return ReplyError(call, id.status());
    request.id = *id;
  }
  if (call.args[3] != "*") {
    absl::StatusOr<int64_t> ts = ParseInt64InRange(
        call.args[3], "ts (microseconds, or * for now)", 0, INT64_MAX);
    if (!ts.ok()) return ReplyError(call, ts.status());
    request.ts = *ts;
  }
  request.payload = call.args[4];
  Activity activity;
  std::vector<EntityArgument> recipients;
  std::vector<EntityArgument> mentioned;
  for (size_t i = 5; i < call.args.size(); ++i) {
    const bool has_value = i + 1 < call.args.size();
    if (IsKeyword(call.args[i], "TTL") && has_value) {
      absl::StatusOr<int64_t> ttl_ms =
          ParseInt64InRange(call.args[++i], "TTL (milliseconds)", 1,
                            kMaxTtl / kMicrosPerMillisecond);
      if (!ttl_ms.ok()) return ReplyError(call, ttl_ms.status());
      activity.ttl = *ttl_ms * kMicrosPerMillisecond;
    } else if (IsKeyword(call.args[i], "KIND") && has_value) {
      absl::StatusOr<int64_t> kind = ParseInt64InRange(
          call.args[++i], "KIND (activity kind)", 0, kMaxActivityKind);
      if (!kind.ok()) return ReplyError(call, kind.status());
      activity.kind = static_cast<ActivityKind>(*kind);
    } else if (IsKeyword(call.args[i], "REPOSTOF") && has_value) {
      absl::StatusOr<uint64_t> original =
          ParseId(call.args[++i], "REPOSTOF (the activity id reposted)");
      if (!original.ok()) return ReplyError(call, original.status());
      activity.repost_of = *original;
    } else if (IsKeyword(call.args[i], "IDEMPOTENCY") && has_value &&
               !call.args[i + 1].empty()) {
      request.key = call.args[++i];
    } else if (IsKeyword(call.args[i], "NOTIFY") && has_value) {
      if (recipients.size() == kMaxNotifyRecipients) {
        return ReplyError(call, absl::InvalidArgumentError(absl::StrCat(
                                    "at most ", kMaxNotifyRecipients,
                                    " NOTIFY recipients per publish")));
      }
      absl::StatusOr<EntityArgument> recipient =
          EntityArgument::Parse(call.args[++i], "NOTIFY recipient");
      if (!recipient.ok()) return ReplyError(call, recipient.status());
      recipients.push_back(*std::move(recipient));
    } else if (IsKeyword(call.args[i], "MENTION") && has_value) {
      if (mentioned.size() == kMaxMentionRecipients) {
        return ReplyError(call, absl::InvalidArgumentError(absl::StrCat(
                                    "at most ", kMaxMentionRecipients,
                                    " MENTION users per publish")));
      }
      absl::StatusOr<EntityArgument> user =
          EntityArgument::Parse(call.args[++i], "MENTION user");
      if (!user.ok()) return ReplyError(call, user.status());
      mentioned.push_back(*std::move(user));
    } else {
      return ReplySyntaxError(call, call.args[i]);
    }
  }
  absl::StatusOr<std::optional<EntityId>> actor_id =
      actor->Resolve(*call.server, EntityUse::kAssign);
  if (!actor_id.ok()) return ReplyError(call, actor_id.status());
  request.actor = **actor_id;
  PublishOptions options;
  for (const EntityArgument& recipient : recipients) {
    absl::StatusOr<std::optional<EntityId>> id =
        recipient.Resolve(*call.server, EntityUse::kAssign);
    if (!id.ok()) return ReplyError(call, id.status());
    options.notify.push_back(**id);
  }
  for (const EntityArgument& user : mentioned) {
    absl::StatusOr<std::optional<EntityId>> id =
        user.Resolve(*call.server, EntityUse::kAssign);
    if (!id.ok()) return ReplyError(call, id.status());
    options.mentions.push_back(**id);
  }
  InProcessFeedEngine& feeds = *call.server->feeds;
  PublishLedger& ledger = *call.server->publishes;
  absl::StatusOr<PublishPlan> plan =
      ledger.Plan(request, feeds.options().clock->Now());
  if (!plan.ok()) return ReplyError(call, plan.status());
  activity.actor = request.actor;
  activity.id = plan->id;
  activity.ts = plan->ts;
  activity.payload = call.args[4];
  absl::StatusOr<PublishResult> result = feeds.Publish(activity, options);
  if (absl::IsAlreadyExists(result.status()) && !request.ts.has_value() &&
      (request.id.has_value() || !request.key.empty())) {
    // The retry of a publish the ledger forgot (a restart): the first one
    // is in the actor's own feed under this id, with its own ts.
    ledger.Forget(request, *plan);
    std::optional<Micros> first_ts =
        PublishedTs(feeds, activity.actor, activity.id, activity.payload);
    if (!first_ts.has_value()) return ReplyError(call, result.status());
    plan = ledger.Plan(request, feeds.options().clock->Now(), first_ts);
    if (!plan.ok()) return ReplyError(call, plan.status());
    activity.ts = plan->ts;
    result = feeds.Publish(activity, options);
  }
  if (!result.ok()) {
    ledger.Forget(request, *plan);
    return ReplyError(call, result.status());
  }
  if (!request.id.has_value()) return WriteId(*call.reply, plan->id);
  call.reply->Integer(result->created && !plan->repeat ? 1 : 0);
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

// FEED.FOLLOWERS / FEED.FOLLOWING entity [LIMIT n] [CURSOR c] [NAMES]
void ListEntities(CommandCall& call, bool followers) {
  EntityId entity = 0;
  ListCall list;
  if (!ParseListCall(call, &entity, &list)) return;
  InProcessFeedEngine& feeds = *call.server->feeds;
  absl::StatusOr<EntityPage> page = followers
                                        ? feeds.Followers(entity, list.options)
                                        : feeds.Following(entity, list.options);
  if (!page.ok()) return ReplyPagingError(call, page.status());
  WriteEntityPage(*call.reply, *page, ReplyNames(call, list.names));
}

void FeedFollowers(CommandCall& call) { ListEntities(call, true); }
void FeedFollowing(CommandCall& call) { ListEntities(call, false); }

// FEED.COUNTS entity -> [followers, following]
void FeedCounts(CommandCall& call) {
  absl::StatusOr<EntityArgument> entity =
      EntityArgument::Parse(call.args[1], "entity");
  if (!entity.ok()) return ReplyError(call, entity.status());
  absl::StatusOr<std::optional<EntityId>> id =
      entity->Resolve(*call.server, EntityUse::kLookUp);
  if (!id.ok()) return ReplyError(call, id.status());
  size_t followers = 0, following = 0;
  if (id->has_value()) {
    absl::StatusOr<size_t> a = call.server->feeds->FollowerCount(**id);
    if (!a.ok()) return ReplyError(call, a.status());
    absl::StatusOr<size_t> b = call.server->feeds->FollowingCount(**id);
    if (!b.ok()) return ReplyError(call, b.status());
    followers = *a;
    following = *b;
  }
  call.reply->ArrayHeader(2);
  call.reply->Integer(static_cast<int64_t>(followers));
  call.reply->Integer(static_cast<int64_t>(following));
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
