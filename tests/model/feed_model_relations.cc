// FeedModel's mutes and blocks (feed_model.h).
#include <algorithm>
#include <vector>

#include "model/feed_model.h"

namespace feedcore::testing {

const FeedModel::MuteEntry* FeedModel::ActiveMute(EntityId user, EntityId actor,
                                                  Micros now) const {
  auto m = muting_.find(user);
  if (m == muting_.end()) return nullptr;
  auto it = m->second.find(actor);
  return it != m->second.end() && it->second.ActiveAt(now) ? &it->second
                                                           : nullptr;
}

bool FeedModel::Blocks(EntityId user, EntityId actor) const {
  auto b = blocking_.find(user);
  return b != blocking_.end() && b->second.contains(actor);
}

bool FeedModel::HidesInTimeline(EntityId user, EntityId actor,
                                Micros now) const {
  return Blocks(user, actor) || ActiveMute(user, actor, now) != nullptr;
}

bool FeedModel::HidesInNotifications(EntityId user, EntityId actor,
                                     Micros now) const {
  const MuteEntry* mute = ActiveMute(user, actor, now);
  return Blocks(user, actor) || (mute != nullptr && mute->notifications);
}

bool FeedModel::EitherBlocks(EntityId a, EntityId b) const {
  return Blocks(a, b) || Blocks(b, a);
}

size_t FeedModel::PurgeActor(EntityId user, EntityId actor,
                             bool notifications) {
  size_t removed = std::erase_if(timelines_[user], [&](const auto& kv) {
    return kv.second.actor == actor;
  });
  if (notifications) {
    NotificationFeed& feed = notification_feeds_[user];
    std::vector<Key> keys;
    for (const auto& [key, value] : feed.notes) {
      if (value.actor == actor) keys.push_back(key);
    }
    for (const Key& key : keys) EraseNote(feed, key);
    removed += keys.size();
  }
  return removed;
}

RelationResult FeedModel::Block(EntityId blocker, EntityId blocked) {
  RelationResult r;
  if (!blocking_[blocker].insert(blocked).second) return r;
  r.changed = true;
  const UnfollowResult out = Unfollow(blocker, blocked);
  r.follows_ended += out.was_following;
  r.removed += out.removed;
  r.follows_ended += Unfollow(blocked, blocker).was_following;
  r.removed += PurgeActor(blocker, blocked, /*notifications=*/true);
  return r;
}

RelationResult FeedModel::Unblock(EntityId blocker, EntityId blocked,
                                  size_t backfill, Micros now) {
  RelationResult r;
  if (blocking_[blocker].erase(blocked) == 0) return r;
  r.changed = true;
  if (Follows(blocker, blocked)) {
    const size_t copied = Backfill(blocker, blocked, backfill, now);
    if (!merged_.contains(blocked)) r.backfilled = copied;
  }
  return r;
}

RelationResult FeedModel::Mute(EntityId muter, EntityId muted,
                               const MuteOptions& options, Micros now) {
  const MuteEntry mute{options.notifications, options.expires_at.value_or(0)};
  std::map<EntityId, MuteEntry>& mutes = muting_[muter];
  RelationResult r;
  if (auto it = mutes.find(muted);
      it != mutes.end() && it->second.ActiveAt(now) &&
      it->second.notifications == mute.notifications &&
      it->second.expires_at == mute.expires_at) {
    return r;  // the same mute again
  }
  mutes[muted] = mute;
  r.changed = true;
  r.removed = PurgeActor(muter, muted, mute.notifications);
  return r;
}

RelationResult FeedModel::Unmute(EntityId muter, EntityId muted,
                                 size_t backfill, Micros now) {
  RelationResult r;
  auto m = muting_.find(muter);
  if (m == muting_.end()) return r;
  auto it = m->second.find(muted);
  if (it == m->second.end()) return r;
  const bool active = it->second.ActiveAt(now);
  m->second.erase(it);
  if (!active) return r;
  r.changed = true;
  if (Follows(muter, muted)) {
    const size_t copied = Backfill(muter, muted, backfill, now);
    if (!merged_.contains(muted)) r.backfilled = copied;
  }
  return r;
}

std::vector<EntityId> FeedModel::BlockedList(EntityId user) const {
  auto it = blocking_.find(user);
  if (it == blocking_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

std::vector<MutedActor> FeedModel::MutedList(EntityId user, Micros now) const {
  std::vector<MutedActor> out;
  auto it = muting_.find(user);
  if (it == muting_.end()) return out;
  for (const auto& [actor, mute] : it->second) {
    if (!mute.ActiveAt(now)) continue;
    out.push_back({actor, mute.notifications,
                   mute.expires_at == 0
                       ? std::nullopt
                       : std::optional<Micros>(mute.expires_at)});
  }
  return out;
}

}  // namespace feedcore::testing
