#include "feed_graph_commands.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "feed_entities.h"
#include "feed_paging.h"
#include "feedcore/options.h"
#include "feedcore/social.h"
#include "feedcore/types.h"

namespace feedcore::server {
namespace {

// What FEED.FOLLOWMANY answers per followee.
constexpr int64_t kFollowed = 1;
constexpr int64_t kAlreadyFollowing = 0;
constexpr int64_t kBlocked = -1;

// FEED.FOLLOWMANY follower followee [followee ...] [BACKFILL n]
//                 [KINDS list | EXCEPTKINDS list]
// One integer per followee, in order: 1 followed, 0 already followed, -1
// refused because one of the two blocks the other.
void FeedFollowMany(CommandCall& call) {
  absl::StatusOr<EntityArgument> follower =
      EntityArgument::Parse(call.args[1], "follower");
  if (!follower.ok()) return ReplyError(call, follower.status());
  std::vector<EntityArgument> followees;
  FollowOptions options;
  KindFilter kinds;
  absl::Status bad;
  for (size_t i = 2; i < call.args.size(); ++i) {
    if (IsKeyword(call.args[i], "BACKFILL") && i + 1 < call.args.size()) {
      absl::StatusOr<int64_t> backfill =
          ParseInt64InRange(call.args[++i], "BACKFILL", 0,
                            static_cast<int64_t>(kMaxTimelineLengthLimit));
      if (!backfill.ok()) return ReplyError(call, backfill.status());
      options.backfill = static_cast<size_t>(*backfill);
      continue;
    }
    if (ParseKindsOption(call.args, i, kinds, bad)) {
      if (!bad.ok()) return ReplyError(call, bad);
      options.kinds = kinds;
      continue;
    }
    absl::StatusOr<EntityArgument> followee =
        EntityArgument::Parse(call.args[i], "followee");
    if (!followee.ok()) return ReplyError(call, followee.status());
    followees.push_back(*std::move(followee));
  }
  if (followees.empty()) {
    return ReplyError(call, absl::InvalidArgumentError(
                                "FEED.FOLLOWMANY needs at least one followee"));
  }
  absl::StatusOr<std::optional<EntityId>> follower_id =
      follower->Resolve(*call.server, EntityUse::kAssign);
  if (!follower_id.ok()) return ReplyError(call, follower_id.status());
  std::vector<FollowPair> pairs;
  for (const EntityArgument& followee : followees) {
    absl::StatusOr<std::optional<EntityId>> id =
        followee.Resolve(*call.server, EntityUse::kAssign);
    if (!id.ok()) return ReplyError(call, id.status());
    pairs.push_back({**follower_id, **id});
  }
  absl::StatusOr<std::vector<FollowResult>> results =
      call.server->feeds->FollowMany(pairs, options);
  if (!results.ok()) return ReplyError(call, results.status());
  call.reply->ArrayHeader(results->size());
  for (const FollowResult& result : *results) {
    call.reply->Integer(result.blocked   ? kBlocked
                        : result.created ? kFollowed
                                         : kAlreadyFollowing);
  }
}

// FEED.UNFOLLOW follower followee [KEEPHISTORY]
void FeedUnfollow(CommandCall& call) {
  absl::StatusOr<EntityArgument> follower =
      EntityArgument::Parse(call.args[1], "follower");
  if (!follower.ok()) return ReplyError(call, follower.status());
  absl::StatusOr<EntityArgument> followee =
      EntityArgument::Parse(call.args[2], "followee");
  if (!followee.ok()) return ReplyError(call, followee.status());
  UnfollowOptions options;
  for (size_t i = 3; i < call.args.size(); ++i) {
    if (!IsKeyword(call.args[i], "KEEPHISTORY")) {
      return ReplySyntaxError(call, call.args[i]);
    }
    options.keep_history = true;
  }
  absl::StatusOr<std::optional<EntityId>> a =
      follower->Resolve(*call.server, EntityUse::kLookUp);
  if (!a.ok()) return ReplyError(call, a.status());
  absl::StatusOr<std::optional<EntityId>> b =
      followee->Resolve(*call.server, EntityUse::kLookUp);
  if (!b.ok()) return ReplyError(call, b.status());
  // A name without an id follows nothing and has no followers.
  if (!a->has_value() || !b->has_value()) return call.reply->Integer(0);
  absl::StatusOr<UnfollowResult> result =
      call.server->feeds->Unfollow(**a, **b, options);
  if (!result.ok()) return ReplyError(call, result.status());
  call.reply->Integer(result->was_following ? 1 : 0);
}

}  // namespace

absl::Status AddFeedGraphCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"FEED.FOLLOWMANY", -3, {"write"}, 0, 0, 0, FeedFollowMany},
      {"FEED.UNFOLLOW", -3, {"write"}, 0, 0, 0, FeedUnfollow},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
