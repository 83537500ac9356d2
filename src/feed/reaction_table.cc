#include "feed/reaction_table.h"

#include <iterator>
#include <limits>

namespace feedcore::internal {

bool ReactionTable::Add(const ReactionFacts& reaction, Micros expires_at) {
  const ReactionKinds bit = ReactionKinds{1} << reaction.kind;
  UserReactions& mine = by_user_[UserKey{reaction.activity, reaction.user}];
  if ((mine.kinds & bit) != 0) return false;
  mine.kinds |= bit;
  mine.expires_at = expires_at;
  mine.at[reaction.kind] = reaction.reacted_at;
  by_time_.insert({reaction.activity, static_cast<uint8_t>(reaction.kind),
                   reaction.reacted_at, reaction.user});
  if (reaction.notice_id != 0) {
    notices_[NoticeKey{reaction.activity, reaction.user,
                       static_cast<uint8_t>(reaction.kind)}] =
        reaction.notice_id;
  }
  return true;
}

std::optional<ActivityId> ReactionTable::Remove(ActivityId activity,
                                                EntityId user,
                                                ReactionKind kind) {
  const ReactionKinds bit = ReactionKinds{1} << kind;
  auto it = by_user_.find(UserKey{activity, user});
  if (it == by_user_.end() || (it->second.kinds & bit) == 0) {
    return std::nullopt;
  }
  by_time_.erase(
      {activity, static_cast<uint8_t>(kind), it->second.at[kind], user});
  it->second.kinds &= static_cast<ReactionKinds>(~bit);
  if (it->second.kinds == 0) by_user_.erase(it);
  ActivityId notice = 0;
  auto n = notices_.find(NoticeKey{activity, user, static_cast<uint8_t>(kind)});
  if (n != notices_.end()) {
    notice = n->second;
    notices_.erase(n);
  }
  return notice;
}

ReactionKinds ReactionTable::KindsOf(ActivityId activity, EntityId user) const {
  auto it = by_user_.find(UserKey{activity, user});
  return it == by_user_.end() ? 0 : it->second.kinds;
}

ActivityId ReactionTable::NoticeOf(ActivityId activity, EntityId user,
                                   ReactionKind kind) const {
  auto n = notices_.find(NoticeKey{activity, user, static_cast<uint8_t>(kind)});
  return n == notices_.end() ? 0 : n->second;
}

std::vector<Reactor> ReactionTable::Page(ActivityId activity, ReactionKind kind,
                                         const std::optional<Reactor>& after,
                                         size_t limit) const {
  const uint8_t k = static_cast<uint8_t>(kind);
  // The range's end: just below `after`, or past the kind's last key.
  auto end =
      after.has_value()
          ? by_time_.lower_bound({activity, k, after->reacted_at, after->user})
          : by_time_.upper_bound({activity, k,
                                  std::numeric_limits<Micros>::max(),
                                  std::numeric_limits<EntityId>::max()});
  const auto begin = by_time_.lower_bound(
      {activity, k, std::numeric_limits<Micros>::min(), 0});
  std::vector<Reactor> page;
  while (end != begin && page.size() < limit) {
    --end;
    page.push_back({std::get<3>(*end), std::get<2>(*end)});
  }
  return page;
}

size_t ReactionTable::DropActivity(ActivityId activity,
                                   std::vector<ActivityId>* notices) {
  const auto begin = by_time_.lower_bound(
      {activity, 0, std::numeric_limits<Micros>::min(), 0});
  auto end = begin;
  size_t dropped = 0;
  while (end != by_time_.end() && std::get<0>(*end) == activity) {
    const auto& [a, kind, at, user] = *end;
    by_user_.erase(UserKey{a, user});
    auto n = notices_.find(NoticeKey{a, user, kind});
    if (n != notices_.end()) {
      notices->push_back(n->second);
      notices_.erase(n);
    }
    ++end;
    ++dropped;
  }
  by_time_.erase(begin, end);
  return dropped;
}

ReactionFacts ReactionTable::FactsOf(const TimeKey& key) const {
  const auto& [activity, kind, at, user] = key;
  auto n = notices_.find(NoticeKey{activity, user, kind});
  return {activity, user, kind, at, n == notices_.end() ? 0 : n->second};
}

size_t ReactionTable::bytes_used() const {
  // Table slots (value + control byte); B-tree nodes at least half full.
  return by_user_.capacity() * (sizeof(std::pair<UserKey, UserReactions>) + 1) +
         2 * by_time_.size() * sizeof(TimeKey) +
         notices_.capacity() * (sizeof(std::pair<NoticeKey, ActivityId>) + 1);
}

}  // namespace feedcore::internal
