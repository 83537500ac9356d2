// FeedModel's read markers and mentions (feed_model.h).
#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "feedcore/options.h"
#include "model/feed_model.h"

namespace feedcore::testing {
namespace {

absl::Status MarkedFeedError(EntityId user, const MarkedFeed& feed) {
  const bool ok = (feed.type == FeedType::kHome && feed.owner == user) ||
                  feed.type == FeedType::kOwn ||
                  (feed.type == FeedType::kWorld && feed.owner == 0);
  return ok ? absl::OkStatus() : absl::InvalidArgumentError("marked feed");
}

Feed ModelFeed(FeedType type) {
  return type == FeedType::kHome  ? Feed::kTimeline
         : type == FeedType::kOwn ? Feed::kOwn
                                  : Feed::kWorld;
}

}  // namespace

void FeedModel::Mention(EntityId user, EntityId channel, const Key& key,
                        Micros now) {
  if (HidesInNotifications(user, channel, now)) return;
  if (auto marker = markers_.find({user, FeedType::kOwn, channel});
      marker != markers_.end() && !(marker->second < key)) {
    return;  // already read
  }
  std::set<Key>& keys = mentions_[{user, channel}];
  if (keys.size() == kMaxMentionsPerFeed) {
    if (key < *keys.begin()) return;  // older than all it keeps
    if (!keys.contains(key)) keys.erase(keys.begin());
  }
  keys.insert(key);
}

absl::StatusOr<bool> FeedModel::SetReadMarker(EntityId user,
                                              const MarkedFeed& feed, Key key,
                                              bool force) {
  if (absl::Status bad = MarkedFeedError(user, feed); !bad.ok()) return bad;
  if (key.first < 0) return absl::InvalidArgumentError("key.ts");
  const MarkerKey where{user, feed.type, feed.owner};
  auto it = markers_.find(where);
  if (it != markers_.end() &&
      (it->second == key || (!force && key < it->second))) {
    return false;
  }
  markers_[where] = key;
  if (feed.type == FeedType::kOwn) {
    if (auto m = mentions_.find({user, feed.owner}); m != mentions_.end()) {
      m->second.erase(m->second.begin(), m->second.upper_bound(key));
      if (m->second.empty()) mentions_.erase(m);
    }
  }
  return true;
}

absl::StatusOr<ReadMarker> FeedModel::GetReadMarker(EntityId user,
                                                    const MarkedFeed& feed,
                                                    size_t max_unread,
                                                    Micros now) const {
  if (absl::Status bad = MarkedFeedError(user, feed); !bad.ok()) return bad;
  if (max_unread == 0 || max_unread > max_page_size_) {
    return absl::InvalidArgumentError("max_unread");
  }
  ReadMarker marker;
  std::optional<Key> after;
  if (auto it = markers_.find({user, feed.type, feed.owner});
      it != markers_.end()) {
    after = it->second;
    marker.key = EntryKey{it->second.first, it->second.second};
  }
  const size_t newer =
      Read(ModelFeed(feed.type), feed.owner, ReadOrder::kOldestFirst,
           std::nullopt, std::nullopt, after, now, false)
          .size();
  marker.unread = std::min(newer, max_unread);
  marker.more_unread = newer > max_unread;
  if (feed.type != FeedType::kOwn) return marker;
  auto m = mentions_.find({user, feed.owner});
  if (m == mentions_.end()) return marker;
  // Kept until a marker passes them, counted while the channel's own feed
  // holds them visible.
  auto channel = own_.find(feed.owner);
  if (channel == own_.end()) return marker;
  for (const Key& key : m->second) {
    if (after.has_value() && !(*after < key)) continue;
    auto held = channel->second.find(key);
    marker.mentions +=
        held != channel->second.end() && now < held->second.expires_at;
  }
  return marker;
}

std::vector<FeedReadState> FeedModel::ReadStates(EntityId user,
                                                 size_t max_unread,
                                                 Micros now) const {
  std::set<std::pair<FeedType, EntityId>> feeds;
  for (auto it = markers_.lower_bound({user, FeedType::kHome, 0});
       it != markers_.end() && std::get<0>(it->first) == user; ++it) {
    feeds.insert({std::get<1>(it->first), std::get<2>(it->first)});
  }
  for (auto it = mentions_.lower_bound({user, 0});
       it != mentions_.end() && it->first.first == user; ++it) {
    feeds.insert({FeedType::kOwn, it->first.second});
  }
  std::vector<FeedReadState> states;
  for (const auto& [type, owner] : feeds) {
    const MarkedFeed feed{type, owner};
    states.push_back({feed, *GetReadMarker(user, feed, max_unread, now)});
  }
  return states;
}

}  // namespace feedcore::testing
