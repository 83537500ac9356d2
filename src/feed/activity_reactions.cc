// ActivityStore's reactions: each store shard keeps the reactions to its
// activities in a ReactionTable beside them, under the same lock, so that
// a reaction, its counter and the activity's liveness change together.
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "feed/activity_store.h"

namespace feedcore::internal {
namespace {

absl::Status NotReactable(ActivityId id, const char* why) {
  return absl::NotFoundError(
      absl::StrCat("no activity ", id, " to react to (", why, ")"));
}

// The live activity `id` of `activities` (const or not), or NotFound.
template <typename Activities>
auto LiveIn(Activities& activities, ActivityId id, Micros now)
    -> absl::StatusOr<decltype(&activities.begin()->second)> {
  auto it = activities.find(id);
  if (it == activities.end()) {
    return NotReactable(id, "never published, or evicted");
  }
  if (it->second.retracted) return NotReactable(id, "retracted");
  if (it->second.expires_at <= now) return NotReactable(id, "expired");
  return &it->second;
}

// What React and Unreact answer when they change nothing.
ActivityStore::ReactionChange Unchanged(const StoredActivity& activity) {
  ActivityStore::ReactionChange change;
  change.facts = {activity.actor, activity.ts, activity.expires_at};
  change.counters = activity.counters;
  return change;
}

}  // namespace

bool ActivityStore::Holds(ActivityId id) const {
  const Shard& shard = shards_[ShardIndex(id)];
  ReaderLock lock(&shard.mu);
  return shard.activities.contains(id);
}

void ActivityStore::LogReactionLocked(size_t s, const ReactionFacts& reaction,
                                      bool add) const {
  ChangeRecord record;
  record.kind = add ? ChangeKind::kReactionAdd : ChangeKind::kReactionRemove;
  record.domain = domain_base_ + static_cast<uint32_t>(s);
  record.entity = reaction.user;
  record.other = reaction.notice_id;
  record.entry.activity_id = reaction.activity;
  record.entry.ts = reaction.reacted_at;
  record.score = static_cast<int64_t>(reaction.kind);
  log_->Append(std::move(record));
}

absl::StatusOr<ActivityStore::ReactionChange> ActivityStore::React(
    ActivityId id, EntityId user, ReactionKind kind, ActivityId notice_id,
    const Clock& clock) {
  const size_t s = ShardIndex(id);
  Shard& shard = shards_[s];
  WriterLock lock(&shard.mu);
  const Micros now = clock.Now();
  absl::StatusOr<StoredActivity*> live = LiveIn(shard.activities, id, now);
  if (!live.ok()) return live.status();
  StoredActivity& activity = **live;
  ReactionChange change = Unchanged(activity);
  if ((shard.reactions.KindsOf(id, user) & (ReactionKinds{1} << kind)) != 0) {
    return change;
  }
  if (activity.counters[kind] == std::numeric_limits<int64_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("counter ", kind, " of activity ", id,
                     " is at the int64 maximum; a reaction cannot count"));
  }
  change.notice_id = activity.actor == user ? 0 : notice_id;
  const ReactionFacts reaction{id, user, kind, now, change.notice_id};
  shard.reactions.Add(reaction, activity.expires_at);
  ++activity.counters[kind];
  activity.counters_changed_at = now;
  if (log_ != nullptr) {
    LogReactionLocked(s, reaction, /*add=*/true);
    LogCountersLocked(s, id, activity);
  }
  change.changed = true;
  change.counters = activity.counters;
  return change;
}

absl::StatusOr<ActivityStore::ReactionChange> ActivityStore::Unreact(
    ActivityId id, EntityId user, ReactionKind kind, const Clock& clock) {
  const size_t s = ShardIndex(id);
  Shard& shard = shards_[s];
  WriterLock lock(&shard.mu);
  const Micros now = clock.Now();
  absl::StatusOr<StoredActivity*> live = LiveIn(shard.activities, id, now);
  if (!live.ok()) return live.status();
  StoredActivity& activity = **live;
  ReactionChange change = Unchanged(activity);
  if ((shard.reactions.KindsOf(id, user) & (ReactionKinds{1} << kind)) == 0) {
    return change;
  }
  if (activity.counters[kind] == std::numeric_limits<int64_t>::min()) {
    return absl::InvalidArgumentError(
        absl::StrCat("counter ", kind, " of activity ", id,
                     " is at the int64 minimum; a reaction cannot be "
                     "taken back from it"));
  }
  change.notice_id = *shard.reactions.Remove(id, user, kind);
  --activity.counters[kind];
  activity.counters_changed_at = now;
  if (log_ != nullptr) {
    LogReactionLocked(s, {id, user, kind, now, change.notice_id},
                      /*add=*/false);
    LogCountersLocked(s, id, activity);
  }
  change.changed = true;
  change.counters = activity.counters;
  return change;
}

void ActivityStore::LookupReactions(EntityId user,
                                    absl::Span<const ActivityId> ids,
                                    Micros now,
                                    std::vector<ReactionKinds>* out) const {
  out->assign(ids.size(), 0);
  if (ids.empty()) return;
  ShardOrder order, run_end;
  OrderByShard(
      ids.size(), [&](size_t i) { return ids[i]; }, &order, &run_end);
  for (size_t s = 0; s < shard_count_; ++s) {
    const size_t first = run_end[s];
    const size_t end = run_end[s + 1];
    if (first == end) continue;
    const Shard& shard = shards_[s];
    ReaderLock lock(&shard.mu);
    for (size_t k = first; k < end; ++k) {
      shard.reactions.Prefetch(ids[order[k]], user);
    }
    for (size_t k = first; k < end; ++k) {
      const size_t i = order[k];
      (*out)[i] = shard.reactions.LiveKindsOf(ids[i], user, now);
    }
  }
}

bool ActivityStore::HoldsNotice(ActivityId id, EntityId user, ReactionKind kind,
                                ActivityId notice_id) const {
  const Shard& shard = shards_[ShardIndex(id)];
  ReaderLock lock(&shard.mu);
  return shard.reactions.NoticeOf(id, user, kind) == notice_id;
}

absl::StatusOr<std::vector<Reactor>> ActivityStore::Reactors(
    ActivityId id, ReactionKind kind, const std::optional<Reactor>& after,
    size_t limit, Micros now) const {
  const Shard& shard = shards_[ShardIndex(id)];
  ReaderLock lock(&shard.mu);
  if (absl::Status live = LiveIn(shard.activities, id, now).status();
      !live.ok()) {
    return live;
  }
  return shard.reactions.Page(id, kind, after, limit);
}

bool ActivityStore::RestoreReaction(const ReactionFacts& reaction, bool add) {
  const size_t s = ShardIndex(reaction.activity);
  Shard& shard = shards_[s];
  WriterLock lock(&shard.mu);
  auto it = shard.activities.find(reaction.activity);
  if (it == shard.activities.end() || it->second.retracted) return false;
  const bool changed =
      add ? shard.reactions.Add(reaction, it->second.expires_at)
          : shard.reactions
                .Remove(reaction.activity, reaction.user, reaction.kind)
                .has_value();
  if (changed && log_ != nullptr) LogReactionLocked(s, reaction, add);
  return true;
}

bool ActivityStore::LoadReaction(const ReactionFacts& reaction) {
  Shard& shard = shards_[ShardIndex(reaction.activity)];
  WriterLock lock(&shard.mu);
  auto it = shard.activities.find(reaction.activity);
  if (it == shard.activities.end() || it->second.retracted) return false;
  shard.reactions.Add(reaction, it->second.expires_at);
  return true;
}

}  // namespace feedcore::internal
