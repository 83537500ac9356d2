// FeedEngineImpl's mute and block (the state is described in relations.h).
//
// Hiding an actor follows Unfollow's order: the state that stops new
// copies (the muter in the actor's `muted_by`, read when a publish
// snapshots followers; the user's own lists, read by merged reads,
// back-fill and notifications) is set first, then the call waits for the
// deliveries of the actor that began earlier, then it purges what they
// left. Mute, Unmute and Unblock of one user are serialized by the user's
// follow stripe, so the two sides of a mute never disagree once a call
// returns; Block changes one side only and ends the follows with
// Unfollow itself.
#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/cursor.h"
#include "contract/feed_arguments.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {
namespace {

void LogRelation(const Shard& shard, ChangeKind kind, EntityId user,
                 EntityId actor, const MuteState& mute)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu()) {
  ChangeRecord record;
  record.kind = kind;
  record.entity = user;
  record.other = actor;
  record.merged_at_read = mute.notifications;
  record.entry.expires_at = mute.expires_at;
  shard.Log(std::move(record));
}

// Applies one side of a relation record to `shard`: the user's side if
// `user_side`, the muted actor's if `actor_side`.
void ApplySides(Shard& shard, const ChangeRecord& r, bool user_side,
                bool actor_side) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu()) {
  const MuteState mute{r.merged_at_read, r.entry.expires_at};
  if (user_side) {
    Relations& relations = shard.Node(r.entity).relations;
    switch (r.kind) {
      case ChangeKind::kBlockAdd:
        relations.blocking.insert(r.other);
        break;
      case ChangeKind::kBlockRemove:
        relations.blocking.erase(r.other);
        break;
      case ChangeKind::kMuteAdd:
        relations.muting[r.other] = mute;
        break;
      default:
        relations.muting.erase(r.other);
        break;
    }
    shard.MaybeEraseNode(r.entity);
  }
  if (actor_side) {
    Relations& relations = shard.Node(r.other).relations;
    if (r.kind == ChangeKind::kMuteAdd) {
      relations.muted_by[r.entity] = mute.expires_at;
    } else {
      relations.muted_by.erase(r.entity);
    }
    shard.MaybeEraseNode(r.other);
  }
}

// Makes the change `r` describes to the sides of it that live in `shard`,
// and records it there, under one hold of the shard's lock.
void ChangeRelation(Shard& shard, ChangeLog* log, const ChangeRecord& r,
                    bool user_side, bool actor_side) {
  WriterLock lock(&shard.mu());
  ApplySides(shard, r, user_side, actor_side);
  if (log != nullptr) {
    LogRelation(shard, r.kind, r.entity, r.other,
                {r.merged_at_read, r.entry.expires_at});
  }
}

ChangeRecord RelationRecord(ChangeKind kind, EntityId user, EntityId actor,
                            const MuteState& mute = {}) {
  ChangeRecord r;
  r.kind = kind;
  r.entity = user;
  r.other = actor;
  r.merged_at_read = mute.notifications;
  r.entry.expires_at = mute.expires_at;
  return r;
}

}  // namespace

void FeedEngineImpl::ChangeBothSides(const ChangeRecord& r) {
  Shard& user_shard = ShardOf(r.entity);
  Shard& actor_shard = ShardOf(r.other);
  if (&user_shard == &actor_shard) {
    ChangeRelation(user_shard, log_, r, true, true);
    return;
  }
  // Adding, the actor's side first: its publishes skip the user before the
  // user's reads change; removing, the user's side first.
  const bool adding = r.kind == ChangeKind::kMuteAdd;
  ChangeRelation(adding ? actor_shard : user_shard, log_, r, !adding, adding);
  ChangeRelation(adding ? user_shard : actor_shard, log_, r, adding, !adding);
}

bool FeedEngineImpl::Blocks(EntityId user, EntityId actor) const {
  const Shard& shard = ShardOf(user);
  ReaderLock lock(&shard.mu());
  const GraphNode* node = shard.FindNode(user);
  return node != nullptr && node->relations.blocking.contains(actor);
}

std::optional<MuteState> FeedEngineImpl::MuteOf(EntityId user,
                                                EntityId actor) const {
  const Shard& shard = ShardOf(user);
  ReaderLock lock(&shard.mu());
  const GraphNode* node = shard.FindNode(user);
  if (node == nullptr) return std::nullopt;
  auto it = node->relations.muting.find(actor);
  if (it == node->relations.muting.end()) return std::nullopt;
  return it->second;
}

bool FeedEngineImpl::EitherBlocks(EntityId a, EntityId b) const {
  return Blocks(a, b) || Blocks(b, a);
}

absl::Span<const EntityId> FeedEngineImpl::NotificationAudience(
    const Shard& shard, absl::Span<const EntityId> owners, EntityId actor,
    std::vector<EntityId>* kept) const {
  const Micros now = options_.clock->Now();
  size_t first = 0;
  for (; first < owners.size(); ++first) {
    const GraphNode* node = shard.FindNode(owners[first]);
    if (node != nullptr && node->relations.HidesInNotifications(actor, now)) {
      break;
    }
  }
  if (first == owners.size()) return owners;
  kept->assign(owners.begin(), owners.begin() + first);
  for (size_t i = first + 1; i < owners.size(); ++i) {
    const GraphNode* node = shard.FindNode(owners[i]);
    if (node == nullptr || !node->relations.HidesInNotifications(actor, now)) {
      kept->push_back(owners[i]);
    }
  }
  return *kept;
}

size_t FeedEngineImpl::PurgeHidden(EntityId user, EntityId actor,
                                   bool notifications) {
  // A publish, back-fill or notification of the actor that read the old
  // state must finish writing before its copies are removed.
  tracker_.WaitForEarlier(actor);
  Shard& shard = ShardOf(user);
  WriterLock lock(&shard.mu());
  size_t removed = 0;
  const FeedType kinds[] = {FeedType::kHome, FeedType::kNotification};
  for (size_t k = 0; k < (notifications ? 2 : 1); ++k) {
    const size_t n = shard.RemoveActor(user, actor, kinds[k]);
    if (n > 0 && log_ != nullptr) {
      ChangeRecord record;
      record.kind = ChangeKind::kTimelineRemoveActor;
      record.feed = kinds[k];
      record.entity = user;
      record.other = actor;
      shard.Log(std::move(record));
    }
    removed += n;
  }
  return removed;
}

size_t FeedEngineImpl::RestoreBackfill(EntityId user, EntityId actor,
                                       size_t count) {
  count = std::min(count, options_.max_timeline_length);
  bool merged = false;
  {
    const Shard& shard = ShardOf(user);
    ReaderLock lock(&shard.mu());
    const GraphNode* node = shard.FindNode(user);
    if (node == nullptr || !node->following.contains(actor)) return 0;
    merged = node->FindMerged(actor) != nullptr;
  }
  if (!merged) {
    if (count == 0) return 0;
    const FollowPair pair{user, actor};
    return BackfillPairs(absl::MakeConstSpan(&pair, 1), {true}, count)[0];
  }
  // A merged actor reaches the user's reads without copies. Its merge
  // restarts where the back-fill would begin, as a copied actor's timeline
  // would: what it published while hidden, and what the hiding removed,
  // stays out.
  EntryKey boundary;
  {
    const Shard& shard = ShardOf(actor);
    ReaderLock lock(&shard.mu());
    const GraphNode* node = shard.FindNode(actor);
    if (node == nullptr) return 0;
    boundary = FollowBoundary(shard, *node, actor, count,
                              node->relations.KindsDeliveredTo(user),
                              options_.clock->Now());
  }
  Shard& shard = ShardOf(user);
  WriterLock lock(&shard.mu());
  GraphNode* node = shard.FindNode(user);
  if (node != nullptr && node->SetMergedBoundary(actor, boundary) &&
      log_ != nullptr) {
    ChangeRecord record;
    record.kind = ChangeKind::kMergeAdd;
    record.entity = user;
    record.other = actor;
    record.merged_at_read = true;
    record.keys.push_back({boundary.ts, boundary.activity_id});
    shard.Log(std::move(record));
  }
  return 0;
}

absl::StatusOr<RelationResult> FeedEngineImpl::BlockInMemory(EntityId blocker,
                                                             EntityId blocked) {
  if (absl::Status status = ValidateRelation(blocker, blocked, "Block");
      !status.ok()) {
    return status;
  }
  RelationResult result;
  {
    std::lock_guard<std::mutex> serial(FollowStripe(blocker));
    if (Blocks(blocker, blocked)) return result;
    // What the block removes leaves a materialized timeline (see
    // RebuildDormant).
    if (options_.inactive_after > 0) RebuildDormant(blocker);
    ChangeRelation(ShardOf(blocker), log_,
                   RelationRecord(ChangeKind::kBlockAdd, blocker, blocked),
                   true, false);
  }
  result.changed = true;
  // Follow refuses both directions from here on; a Follow that checked
  // before holds its follower's stripe, so these Unfollows end after it.
  for (const auto& [follower, followee] :
       {std::pair{blocker, blocked}, std::pair{blocked, blocker}}) {
    absl::StatusOr<UnfollowResult> ended =
        UnfollowInMemory(follower, followee, {});
    if (ended.ok() && ended->was_following) {
      ++result.follows_ended;
      if (follower == blocker) result.removed += ended->removed;
    }
  }
  // Entries that came by other ways (inserts, notifications).
  result.removed += PurgeHidden(blocker, blocked, /*notifications=*/true);
  return result;
}

absl::StatusOr<RelationResult> FeedEngineImpl::UnblockInMemory(
    EntityId blocker, EntityId blocked, const RestoreOptions& options) {
  if (absl::Status status = ValidateRelation(blocker, blocked, "Unblock");
      !status.ok()) {
    return status;
  }
  if (absl::Status status = ValidateBackfill(options.backfill); !status.ok()) {
    return status;
  }
  std::lock_guard<std::mutex> serial(FollowStripe(blocker));
  RelationResult result;
  if (!Blocks(blocker, blocked)) return result;
  ChangeRelation(ShardOf(blocker), log_,
                 RelationRecord(ChangeKind::kBlockRemove, blocker, blocked),
                 true, false);
  result.changed = true;
  result.backfilled = RestoreBackfill(blocker, blocked, options.backfill);
  return result;
}

absl::StatusOr<RelationResult> FeedEngineImpl::MuteInMemory(
    EntityId muter, EntityId muted, const MuteOptions& options) {
  if (absl::Status status = ValidateRelation(muter, muted, "Mute");
      !status.ok()) {
    return status;
  }
  const Micros now = options_.clock->Now();
  absl::StatusOr<Micros> expires_at = ResolveMuteExpiry(options, now);
  if (!expires_at.ok()) return expires_at.status();
  const MuteState mute{options.notifications, *expires_at};
  std::lock_guard<std::mutex> serial(FollowStripe(muter));
  const std::optional<MuteState> before = MuteOf(muter, muted);
  if (before.has_value() && before->ActiveAt(now) && *before == mute) {
    return RelationResult{};
  }
  // What the mute removes leaves a materialized timeline (see
  // RebuildDormant), and no dormant merge of the muted actor is left to
  // show, once the mute expires, what it published during the mute.
  if (options_.inactive_after > 0) RebuildDormant(muter);
  ChangeBothSides(RelationRecord(ChangeKind::kMuteAdd, muter, muted, mute));
  RelationResult result;
  result.changed = true;
  result.removed = PurgeHidden(muter, muted, options.notifications);
  return result;
}

absl::StatusOr<RelationResult> FeedEngineImpl::UnmuteInMemory(
    EntityId muter, EntityId muted, const RestoreOptions& options) {
  if (absl::Status status = ValidateRelation(muter, muted, "Unmute");
      !status.ok()) {
    return status;
  }
  if (absl::Status status = ValidateBackfill(options.backfill); !status.ok()) {
    return status;
  }
  const Micros now = options_.clock->Now();
  std::lock_guard<std::mutex> serial(FollowStripe(muter));
  const std::optional<MuteState> before = MuteOf(muter, muted);
  if (!before.has_value()) return RelationResult{};
  // An expired mute is dropped too, but nothing it hid changes.
  const bool was_active = before->ActiveAt(now);
  ChangeBothSides(RelationRecord(ChangeKind::kMuteRemove, muter, muted));
  RelationResult result;
  if (!was_active) return result;
  result.changed = true;
  result.backfilled = RestoreBackfill(muter, muted, options.backfill);
  return result;
}

absl::StatusOr<MutedPage> FeedEngineImpl::ReadRelationList(
    bool muted, EntityId entity, const ListOptions& options) const {
  if (absl::Status status = ValidateList(options, options_.max_page_size);
      !status.ok()) {
    return status;
  }
  std::optional<EntityId> after;
  if (!options.cursor.empty()) {
    absl::StatusOr<EntityId> last =
        DecodeRelationListCursorOf(options.cursor, muted, entity);
    if (!last.ok()) return last.status();
    after = *last;
  }
  const Micros now = options_.clock->Now();
  MutedPage page;
  const Shard& shard = ShardOf(entity);
  ReaderLock lock(&shard.mu());
  const GraphNode* node = shard.FindNode(entity);
  if (node == nullptr) return page;
  bool more = false;
  auto add = [&](EntityId actor, const MuteState& mute) {
    if (page.actors.size() == options.limit) {
      more = true;
      return false;
    }
    page.actors.push_back({actor, mute.notifications,
                           mute.expires_at == 0
                               ? std::nullopt
                               : std::optional<Micros>(mute.expires_at)});
    return true;
  };
  if (muted) {
    const auto& set = node->relations.muting;
    for (auto it = after ? set.upper_bound(*after) : set.begin();
         it != set.end(); ++it) {
      if (it->second.ActiveAt(now) && !add(it->first, it->second)) break;
    }
  } else {
    const auto& set = node->relations.blocking;
    for (auto it = after ? set.upper_bound(*after) : set.begin();
         it != set.end(); ++it) {
      if (!add(*it, {})) break;
    }
  }
  if (more) {
    page.next_cursor =
        EncodeRelationListCursor(muted, entity, page.actors.back().actor);
  }
  return page;
}

absl::StatusOr<EntityPage> FeedEngineImpl::Blocked(
    EntityId entity, const ListOptions& options) const {
  absl::StatusOr<MutedPage> page = ReadRelationList(false, entity, options);
  if (!page.ok()) return page.status();
  return BlockedPage(*std::move(page));
}

absl::StatusOr<MutedPage> FeedEngineImpl::Muted(
    EntityId entity, const ListOptions& options) const {
  return ReadRelationList(true, entity, options);
}

absl::Status FeedEngineImpl::ApplyRelationChange(const ChangeRecord& r) {
  auto malformed = [&](const char* what) {
    return absl::InvalidArgumentError(
        absl::StrCat("change record ", r.sequence, " (kind ",
                     static_cast<int>(r.kind), "): ", what));
  };
  if (r.entity == r.other) return malformed("an entity cannot hide itself");
  const bool mute = r.kind == ChangeKind::kMuteAdd;
  if (r.entry.expires_at < 0 || (!mute && r.entry.expires_at != 0) ||
      (!mute && r.merged_at_read)) {
    return malformed("mute fields out of range");
  }
  const bool user_side = ShardIndex(r.entity) == r.domain;
  const bool actor_side =
      (r.kind == ChangeKind::kMuteAdd || r.kind == ChangeKind::kMuteRemove) &&
      ShardIndex(r.other) == r.domain;
  if (!user_side && !actor_side) {
    return malformed("domain is the shard of neither side of the relation");
  }
  ChangeRelation(shards_[r.domain], log_, r, user_side, actor_side);
  return absl::OkStatus();
}

}  // namespace feedcore::internal
