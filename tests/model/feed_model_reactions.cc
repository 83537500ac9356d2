// FeedModel's reactions (feed_model.h): a map per activity, notices as
// activities of their own in the actor's notification feed.
#include <algorithm>
#include <limits>

#include "feedcore/feed_facets.h"
#include "model/feed_model.h"

namespace feedcore::testing {

absl::StatusOr<ReactionResult> FeedModel::React(EntityId user, ActivityId id,
                                                ReactionKind kind,
                                                const ReactOptions& options,
                                                Micros now) {
  if (kind >= kActivityCounterCount ||
      (options.notice_id != 0 && options.notice_id == id) ||
      options.notice_payload.size() > max_payload_bytes_) {
    return absl::InvalidArgumentError("bad kind or notice");
  }
  if (options.notice_id != 0 && activities_.contains(options.notice_id)) {
    return absl::AlreadyExistsError("notice id taken");
  }
  absl::StatusOr<ActivityCounters> counters = Counters(id, now);
  if (!counters.ok()) return counters.status();
  Activity& a = activities_.at(id);
  ReactionResult r;
  const auto who = std::make_pair(kind, user);
  if (a.reactions.contains(who)) {
    r.counters = a.counters;
    return r;
  }
  // A counter at the int64 bound cannot count one more (the engine's
  // InvalidArgument, changing nothing).
  if (a.counters[kind] == std::numeric_limits<int64_t>::max()) {
    return absl::InvalidArgumentError("counter at the int64 maximum");
  }
  const ActivityId notice = a.actor == user ? 0 : options.notice_id;
  a.reactions[who] = {now, notice};
  ++a.counters[kind];
  a.counters_changed_at = now;
  r.changed = true;
  r.counters = a.counters;
  if (notice == 0) return r;
  const EntityId actor = a.actor;
  const Micros expires_at = a.expires_at;
  Activity& stored = activities_[notice];
  stored.actor = user;
  stored.ts = now;
  stored.expires_at = expires_at;
  stored.payload = options.notice_payload;
  stored.recipients = {actor};
  if (!HidesInNotifications(actor, user, now)) {
    feedcore::Activity published;
    published.id = notice;
    published.actor = user;
    published.ts = now;
    published.verb = options.notice_verb;
    published.object = id;
    const GroupKey group = notification_options_.aggregated
                               ? aggregation_.group_key(published)
                               : 0;
    Notify(actor, {now, notice}, {user, expires_at, group});
    r.notified = true;
  }
  return r;
}

absl::StatusOr<ReactionResult> FeedModel::Unreact(EntityId user, ActivityId id,
                                                  ReactionKind kind,
                                                  Micros now) {
  if (kind >= kActivityCounterCount) {
    return absl::InvalidArgumentError("bad kind");
  }
  absl::StatusOr<ActivityCounters> counters = Counters(id, now);
  if (!counters.ok()) return counters.status();
  Activity& a = activities_.at(id);
  ReactionResult r;
  auto it = a.reactions.find({kind, user});
  if (it == a.reactions.end()) {
    r.counters = a.counters;
    return r;
  }
  if (a.counters[kind] == std::numeric_limits<int64_t>::min()) {
    return absl::InvalidArgumentError("counter at the int64 minimum");
  }
  const ActivityId notice = it->second.second;
  a.reactions.erase(it);
  --a.counters[kind];
  a.counters_changed_at = now;
  r.changed = true;
  r.counters = a.counters;
  if (notice != 0) Retract(notice);
  return r;
}

std::vector<ReactionKinds> FeedModel::OwnReactions(
    EntityId user, const std::vector<ActivityId>& ids, Micros now) const {
  std::vector<ReactionKinds> out;
  for (const ActivityId id : ids) {
    ReactionKinds kinds = 0;
    if (Counters(id, now).ok()) {
      for (const auto& [who, reaction] : activities_.at(id).reactions) {
        if (who.second == user) kinds |= ReactionKinds{1} << who.first;
      }
    }
    out.push_back(kinds);
  }
  return out;
}

absl::StatusOr<std::vector<Reactor>> FeedModel::Reactors(ActivityId id,
                                                         ReactionKind kind,
                                                         Micros now) const {
  if (kind >= kActivityCounterCount) {
    return absl::InvalidArgumentError("bad kind");
  }
  absl::StatusOr<ActivityCounters> counters = Counters(id, now);
  if (!counters.ok()) return counters.status();
  std::vector<Reactor> out;
  for (const auto& [who, reaction] : activities_.at(id).reactions) {
    if (who.first == kind) out.push_back({who.second, reaction.first});
  }
  // Most recent first; ties by descending user.
  std::sort(out.begin(), out.end(), [](const Reactor& x, const Reactor& y) {
    return x.reacted_at != y.reacted_at ? x.reacted_at > y.reacted_at
                                        : x.user > y.user;
  });
  return out;
}

}  // namespace feedcore::testing
