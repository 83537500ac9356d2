// RedisFeedEngine's mute and block. The keys and scripts are described in
// lua_relations.h and relation_scripts.h, the design in docs/scale-out.md
// ("Mute and block").
//
// Each call changes the hiding user's side in one script, which also
// removes what is hidden, so a fan-out or notification in flight either
// ran before (and is removed) or checks the new state (and copies
// nothing). Block then records itself in the blocked actor's slot, where
// that actor's Follow checks it, and ends the actor's follow edge there,
// before both follower-set entries are dropped, as Unfollow drops them.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/cursor.h"
#include "contract/feed_arguments.h"
#include "redis/entry_codec.h"
#include "redis/redis_feed_engine.h"

namespace feedcore::redis {
namespace {

// The relations set's member prefixes (lua_relations.h).
constexpr char kBlocks = 'b';
constexpr char kBlockedBy = 'B';
constexpr char kMutes = 'm';

std::string Relation(char kind, EntityId actor) {
  return absl::StrCat(absl::string_view(&kind, 1), BigEndian(actor));
}

}  // namespace

absl::StatusOr<RelationResult> RedisFeedEngine::Block(EntityId blocker,
                                                      EntityId blocked) {
  if (absl::Status status =
          internal::ValidateRelation(blocker, blocked, "Block");
      !status.ok()) {
    return status;
  }
  // Not resent after an unclear failure: a resend of a block that went
  // through would answer "already blocked". A retry by the caller
  // finishes the steps below, which are safe to repeat.
  absl::StatusOr<Reply> mine = client_->RunOne(ClusterClient::ScriptCommand(
      block_,
      {Key(blocker, "rl"), Key(blocker, "fg"), Key(blocker, "hf"),
       Key(blocker, "tl"), Key(blocker, "nt"), Key(blocker, "ng")},
      {BigEndian(blocked)}, /*idempotent=*/false));
  if (!mine.ok()) return mine.status();
  absl::StatusOr<std::vector<int64_t>> own =
      LeadingIntegers(*mine, 3, "a block");
  if (!own.ok()) return own.status();
  std::vector<Command> theirs;
  theirs.push_back(PlainCommand(
      {"ZADD", Key(blocked, "rl"), "0", Relation(kBlockedBy, blocker)}));
  theirs.push_back(ClusterClient::ScriptCommand(
      unfollow_, {Key(blocked, "tl"), Key(blocked, "fg"), Key(blocked, "hf")},
      {BigEndian(blocker)}));
  absl::StatusOr<std::vector<Reply>> ended = client_->Run(std::move(theirs));
  if (!ended.ok()) return ended.status();
  absl::StatusOr<std::vector<int64_t>> other =
      LeadingIntegers((*ended)[1], 2, "an unfollow");
  if (!other.ok()) return other.status();
  if (absl::Status dropped =
          client_
              ->Run({PlainCommand(
                         {"ZREM", Key(blocked, "fr"), BigEndian(blocker)}),
                     PlainCommand(
                         {"ZREM", Key(blocker, "fr"), BigEndian(blocked)})})
              .status();
      !dropped.ok()) {
    return dropped;
  }
  RelationResult result;
  result.changed = (*own)[0] == 1;
  result.follows_ended = static_cast<size_t>((*own)[1] + (*other)[0]);
  result.removed = static_cast<size_t>((*own)[2]);
  return result;
}

absl::StatusOr<RelationResult> RedisFeedEngine::Unblock(
    EntityId blocker, EntityId blocked, const RestoreOptions& options) {
  if (absl::Status status =
          internal::ValidateRelation(blocker, blocked, "Unblock");
      !status.ok()) {
    return status;
  }
  if (absl::Status status = internal::ValidateBackfill(options.backfill);
      !status.ok()) {
    return status;
  }
  // The blocker's side first, then the other (also when this one was
  // already gone, so that a retry finishes); then whether the blocker
  // follows the actor again, for the back-fill.
  Command mine =
      PlainCommand({"ZREM", Key(blocker, "rl"), Relation(kBlocks, blocked)});
  mine.idempotent = false;
  absl::StatusOr<Reply> removed = client_->RunOne(std::move(mine));
  if (!removed.ok()) return removed.status();
  if (removed->type != Reply::Type::kInteger) {
    return UnexpectedReply("an unblock", *removed);
  }
  std::vector<Command> rest;
  rest.push_back(PlainCommand(
      {"ZREM", Key(blocked, "rl"), Relation(kBlockedBy, blocker)}));
  // The edge, bare or parked (lua_relations.h).
  rest.push_back(PlainCommand({"ZRANGE", Key(blocker, "fg"),
                               absl::StrCat("[", BigEndian(blocked)),
                               absl::StrCat("[", BigEndian(blocked), "\xff"),
                               "BYLEX", "LIMIT", "0", "1"}));
  rest.push_back(
      PlainCommand({"HEXISTS", Key(blocker, "hf"), BigEndian(blocked)}));
  absl::StatusOr<std::vector<Reply>> state = client_->Run(std::move(rest));
  if (!state.ok()) return state.status();
  RelationResult result;
  if (removed->integer == 0) return result;
  result.changed = true;
  absl::StatusOr<size_t> restored =
      Restore(blocker, blocked, !(*state)[1].elements.empty(),
              (*state)[2].integer == 1, options.backfill);
  if (!restored.ok()) return restored.status();
  result.backfilled = *restored;
  return result;
}

absl::StatusOr<RelationResult> RedisFeedEngine::Mute(
    EntityId muter, EntityId muted, const MuteOptions& options) {
  if (absl::Status status = internal::ValidateRelation(muter, muted, "Mute");
      !status.ok()) {
    return status;
  }
  const Micros now = Now();
  absl::StatusOr<Micros> expires_at = internal::ResolveMuteExpiry(options, now);
  if (!expires_at.ok()) return expires_at.status();
  absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
      mute_,
      {Key(muter, "rl"), Key(muter, "fg"), Key(muter, "tl"), Key(muter, "nt"),
       Key(muter, "ng")},
      {BigEndian(muted), options.notifications ? "1" : "0",
       BigEndian(static_cast<uint64_t>(*expires_at)),
       BigEndian(static_cast<uint64_t>(now))},
      /*idempotent=*/false));
  if (!reply.ok()) return reply.status();
  absl::StatusOr<std::vector<int64_t>> done =
      LeadingIntegers(*reply, 2, "a mute");
  if (!done.ok()) return done.status();
  RelationResult result;
  result.changed = (*done)[0] == 1;
  result.removed = static_cast<size_t>((*done)[1]);
  return result;
}

absl::StatusOr<RelationResult> RedisFeedEngine::Unmute(
    EntityId muter, EntityId muted, const RestoreOptions& options) {
  if (absl::Status status = internal::ValidateRelation(muter, muted, "Unmute");
      !status.ok()) {
    return status;
  }
  if (absl::Status status = internal::ValidateBackfill(options.backfill);
      !status.ok()) {
    return status;
  }
  absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
      unmute_, {Key(muter, "rl"), Key(muter, "fg"), Key(muter, "hf")},
      {BigEndian(muted), BigEndian(static_cast<uint64_t>(Now()))},
      /*idempotent=*/false));
  if (!reply.ok()) return reply.status();
  absl::StatusOr<std::vector<int64_t>> state =
      LeadingIntegers(*reply, 3, "an unmute");
  if (!state.ok()) return state.status();
  RelationResult result;
  // An expired mute is dropped too, but nothing it hid changes.
  if ((*state)[0] == 0) return result;
  result.changed = true;
  absl::StatusOr<size_t> restored = Restore(muter, muted, (*state)[1] == 1,
                                            (*state)[2] == 1, options.backfill);
  if (!restored.ok()) return restored.status();
  result.backfilled = *restored;
  return result;
}

absl::StatusOr<size_t> RedisFeedEngine::Restore(EntityId user, EntityId actor,
                                                bool follows, bool merged,
                                                size_t backfill) {
  if (!follows) return 0;
  backfill = std::min(backfill, options_.max_timeline_length);
  if (merged) {
    // What the actor published while hidden, and what the hiding removed,
    // stays out: the merge restarts where a back-fill would begin.
    Command newest = PlainCommand({"HGET", Key(actor, "fo"), "np"});
    newest.write = false;
    absl::StatusOr<Reply> noted = client_->RunOne(std::move(newest));
    if (!noted.ok()) return noted.status();
    absl::StatusOr<std::string> boundary =
        FollowBoundary(actor, backfill, noted->is_nil() ? "" : noted->str);
    if (!boundary.ok()) return boundary.status();
    if (absl::Status status = MergeFor(absl::MakeConstSpan(&user, 1), actor,
                                       *boundary, /*keep_set=*/false);
        !status.ok()) {
      return status;
    }
    return 0;
  }
  const FollowPair pair{user, actor};
  absl::StatusOr<std::vector<size_t>> copied =
      CopyRecent(absl::MakeConstSpan(&pair, 1), {true}, backfill);
  if (!copied.ok()) return copied.status();
  return copied->front();
}

absl::StatusOr<EntityPage> RedisFeedEngine::Blocked(
    EntityId entity, const ListOptions& options) const {
  absl::StatusOr<MutedPage> page = ReadRelationList(false, entity, options);
  if (!page.ok()) return page.status();
  return internal::BlockedPage(*std::move(page));
}

absl::StatusOr<MutedPage> RedisFeedEngine::Muted(
    EntityId entity, const ListOptions& options) const {
  return ReadRelationList(true, entity, options);
}

absl::StatusOr<MutedPage> RedisFeedEngine::ReadRelationList(
    bool muted, EntityId entity, const ListOptions& options) const {
  if (absl::Status status =
          internal::ValidateList(options, options_.max_page_size);
      !status.ok()) {
    return status;
  }
  const char kind = muted ? kMutes : kBlocks;
  // Members are the kind's letter and the actor's 8 bytes (a mute has 9
  // more): lexical order is id order within the kind.
  std::string start = absl::StrCat("[", absl::string_view(&kind, 1));
  if (!options.cursor.empty()) {
    absl::StatusOr<EntityId> last =
        internal::DecodeRelationListCursorOf(options.cursor, muted, entity);
    if (!last.ok()) return last.status();
    start = absl::StrCat("(", Relation(kind, *last), "\xff");
  }
  const char next_kind = static_cast<char>(kind + 1);
  const std::string end = absl::StrCat("(", absl::string_view(&next_kind, 1));
  const Micros now = Now();
  MutedPage page;
  bool more = false;
  // Expired mutes are skipped, so a chunk may yield fewer than it read.
  while (!more) {
    Command range =
        PlainCommand({"ZRANGE", Key(entity, "rl"), start, end, "BYLEX", "LIMIT",
                      "0", absl::StrCat(options.limit + 1)});
    range.write = false;
    absl::StatusOr<Reply> reply = client_->RunOne(std::move(range));
    if (!reply.ok()) return reply.status();
    if (reply->type != Reply::Type::kArray) {
      return UnexpectedReply("a relation list read", *reply);
    }
    for (const Reply& member : reply->elements) {
      const std::string& m = member.str;
      if (m.size() != (muted ? 18 : 9)) {
        return absl::InternalError(
            "a relation set in redis holds a member this backend did not "
            "write");
      }
      MutedActor actor;
      actor.actor = ReadBigEndian(absl::string_view(m).substr(1, 8));
      if (muted) {
        actor.notifications = m[9] == '1';
        const auto expires_at = static_cast<Micros>(
            ReadBigEndian(absl::string_view(m).substr(10, 8)));
        if (expires_at != 0 && expires_at <= now) continue;
        if (expires_at != 0) actor.expires_at = expires_at;
      }
      if (page.actors.size() == options.limit) {
        more = true;
        break;
      }
      page.actors.push_back(actor);
    }
    if (reply->elements.size() < options.limit + 1) break;
    start = absl::StrCat("(", reply->elements.back().str, "\xff");
  }
  if (more) {
    page.next_cursor = internal::EncodeRelationListCursor(
        muted, entity, page.actors.back().actor);
  }
  return page;
}

}  // namespace feedcore::redis
