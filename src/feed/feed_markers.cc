// FeedEngineImpl's read markers.
//
// A marker lives in the reader's graph node (GraphNode::read_markers), in
// the reader's shard, whatever feed it is for: setting one takes that one
// shard lock, and the change record and snapshot of that shard carry it.
// The unread count reads the marked feed afterwards, as CountNewer does
// (through CollectFeed, which merges the hybrid followees of a home feed),
// so it is exact for the marker it read and the feed as it was when the
// count ran; an own feed (a channel) is counted in place under its one
// shard lock (CountOwnFeedLocked), nothing copied. Mentions live beside the
// markers in the mentioned user's node (GraphNode::mentions); a publish
// adds them (DeliverMentions), a marker clears those it passes, and a count
// is of those the channel's own feed still holds visible, so retracted,
// expired and trimmed ones drop out without a lookup elsewhere.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "contract/cursor.h"
#include "contract/feed_arguments.h"
#include "contract/page_merger.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {
namespace {

ChangeRecord MarkerRecord(EntityId user, const MarkerFeedKey& feed,
                          const EntryKey& key) {
  ChangeRecord record;
  record.kind = ChangeKind::kReadMarkerSet;
  record.entity = user;
  record.feed = feed.first;
  record.other = feed.second;
  record.keys = {key};
  return record;
}

ChangeRecord MentionRecord(EntityId user, EntityId channel,
                           const EntryKey& key) {
  ChangeRecord record;
  record.kind = ChangeKind::kMentionAdd;
  record.entity = user;
  record.feed = FeedType::kOwn;
  record.other = channel;
  record.keys = {key};
  return record;
}

// Clears `node`'s mentions in `feed` up to `marker`.
void ClearMentions(GraphNode& node, const MarkerFeedKey& feed,
                   const EntryKey& marker) {
  if (feed.first != FeedType::kOwn) return;
  auto it = node.mentions.find(feed.second);
  if (it == node.mentions.end()) return;
  std::vector<EntryKey>& keys = it->second;
  keys.erase(keys.begin(), std::upper_bound(keys.begin(), keys.end(), marker));
  if (keys.empty()) node.mentions.erase(it);
}

// Appends the keys of `mentions` (ascending) newer than `marker` to `out`.
void AppendMentionsAfter(const std::vector<EntryKey>& mentions,
                         const std::optional<EntryKey>& marker,
                         std::vector<EntryKey>* out) {
  auto from = marker.has_value()
                  ? std::upper_bound(mentions.begin(), mentions.end(), *marker)
                  : mentions.begin();
  out->insert(out->end(), from, mentions.end());
}

}  // namespace

bool FeedEngineImpl::AddMentionLocked(Shard& shard, EntityId user,
                                      EntityId channel, const EntryKey& key) {
  GraphNode& node = shard.Node(user);
  auto marker = node.read_markers.find({FeedType::kOwn, channel});
  if (marker != node.read_markers.end() && !(marker->second < key)) {
    return false;  // already read
  }
  std::vector<EntryKey>& keys = node.mentions[channel];
  auto at = std::lower_bound(keys.begin(), keys.end(), key);
  if (at != keys.end() && *at == key) return false;
  if (keys.size() == kMaxMentionsPerFeed) {
    if (at == keys.begin()) return false;  // older than all it keeps
    keys.erase(keys.begin());
    at = std::lower_bound(keys.begin(), keys.end(), key);
  }
  keys.insert(at, key);
  if (log_ != nullptr) shard.Log(MentionRecord(user, channel, key));
  return true;
}

void FeedEngineImpl::DeliverMentions(const FollowerSnapshot& mentioned,
                                     const StoredEntry& entry) {
  std::vector<EntityId> kept;
  const EntryKey key = entry.key();
  for (size_t g = 0; g < mentioned.groups(); ++g) {
    const absl::Span<const EntityId> listed =
        absl::MakeConstSpan(mentioned.ids.data() + mentioned.starts[g],
                            mentioned.starts[g + 1] - mentioned.starts[g]);
    Shard& shard = shards_[mentioned.shard_of_group[g]];
    WriterLock lock(&shard.mu());
    // Those who block or mute the actor are not told, as for notify.
    for (const EntityId user :
         NotificationAudience(shard, listed, entry.actor, &kept)) {
      AddMentionLocked(shard, user, entry.actor, key);
    }
  }
}

absl::StatusOr<bool> FeedEngineImpl::SetReadMarkerInMemory(
    EntityId user, const MarkedFeed& feed, const EntryKey& key,
    const SetMarkerOptions& options) {
  if (absl::Status bad = ValidateMarkedFeed(user, feed); !bad.ok()) return bad;
  if (absl::Status bad = ValidateEntryKey(key, "key"); !bad.ok()) return bad;
  const MarkerFeedKey which{feed.type, feed.owner};
  const EntryKey wanted{key.ts, key.activity_id};
  Shard& shard = ShardOf(user);
  WriterLock lock(&shard.mu());
  if (const GraphNode* node = shard.FindNode(user); node != nullptr) {
    auto it = node->read_markers.find(which);
    if (it != node->read_markers.end()) {
      const EntryKey current{it->second.ts, it->second.activity_id};
      if (current == wanted || (!options.force && wanted < current)) {
        return false;
      }
    }
  }
  GraphNode& node = shard.Node(user);
  node.read_markers[which] = key;
  ClearMentions(node, which, key);
  if (log_ != nullptr) shard.Log(MarkerRecord(user, which, key));
  return true;
}

absl::StatusOr<ReadMarker> FeedEngineImpl::GetReadMarker(
    EntityId user, const MarkedFeed& feed, size_t max_unread) const {
  if (absl::Status bad = ValidateMarkedFeed(user, feed); !bad.ok()) return bad;
  if (absl::Status bad = ValidateMaxUnread(max_unread, options_.max_page_size);
      !bad.ok()) {
    return bad;
  }
  ReadMarker marker;
  std::vector<EntryKey> mentions;
  {
    const Shard& shard = ShardOf(user);
    ReaderLock lock(&shard.mu());
    if (const GraphNode* node = shard.FindNode(user); node != nullptr) {
      auto it = node->read_markers.find({feed.type, feed.owner});
      if (it != node->read_markers.end()) marker.key = it->second;
      if (auto it = node->mentions.find(feed.owner);
          feed.type == FeedType::kOwn && it != node->mentions.end()) {
        AppendMentionsAfter(it->second, marker.key, &mentions);
      }
    }
  }
  const Micros now = options_.clock->Now();
  if (feed.type != FeedType::kOwn) {
    CountUnread(feed, max_unread, now, &marker);
    return marker;
  }
  const Shard& shard = ShardOf(feed.owner);
  ReaderLock lock(&shard.mu());
  CountOwnFeedLocked(shard.FindTimeline({feed.owner, FeedType::kOwn}), mentions,
                     max_unread, now, &marker);
  return marker;
}

void FeedEngineImpl::CountOwnFeedLocked(const Timeline* feed,
                                        absl::Span<const EntryKey> mentions,
                                        size_t max_unread, Micros now,
                                        ReadMarker* marker) {
  const std::optional<EntryKey> lo = FirstUnread(*marker);
  if (!lo.has_value() || feed == nullptr) return;
  // One more than asked tells whether more are unread.
  const size_t unread = feed->CountVisible(*lo, now, max_unread + 1);
  marker->unread = std::min(unread, max_unread);
  marker->more_unread = unread > max_unread;
  marker->mentions = feed->CountHeld(mentions, now);
}

std::optional<EntryKey> FeedEngineImpl::FirstUnread(const ReadMarker& marker) {
  if (!marker.key.has_value()) return EntryKey::Min();
  return NewerKey({marker.key->ts, marker.key->activity_id});
}

void FeedEngineImpl::CountUnread(const MarkedFeed& feed, size_t max_unread,
                                 Micros now, ReadMarker* marker) const {
  const std::optional<EntryKey> lo = FirstUnread(*marker);
  if (!lo.has_value()) return;
  // One more than asked tells whether more are unread.
  std::vector<StoredEntry> unread;
  CollectFeed(feed.type, feed.owner, ReadOrder::kOldestFirst, *lo,
              EntryKey::Max(), now, max_unread + 1, &unread);
  marker->unread = std::min(unread.size(), max_unread);
  marker->more_unread = unread.size() > max_unread;
}

absl::StatusOr<ReadStatePage> FeedEngineImpl::ListReadMarkers(
    EntityId user, const ReadStateOptions& options) const {
  if (absl::Status bad =
          ValidateReadStateOptions(options, options_.max_page_size);
      !bad.ok()) {
    return bad;
  }
  std::optional<MarkerFeedKey> after;
  if (!options.cursor.empty()) {
    absl::StatusOr<std::pair<FeedType, EntityId>> place =
        DecodeReadMarkerCursorOf(options.cursor, user);
    if (!place.ok()) return place.status();
    after = *place;
  }
  ReadStatePage page;
  // Mentions newer than each listed feed's marker, all in one vector:
  // feed i's are [mention_starts[i], mention_starts[i + 1]).
  std::vector<EntryKey> mention_keys;
  std::vector<size_t> mention_starts;
  bool more = false;
  {
    const Shard& shard = ShardOf(user);
    ReaderLock lock(&shard.mu());
    if (const GraphNode* node = shard.FindNode(user); node != nullptr) {
      // Feeds with a marker and channels with mentions, merged in
      // (feed type, owner) order.
      const auto& markers = node->read_markers;
      const auto& mentioned = node->mentions;
      auto m =
          after.has_value() ? markers.upper_bound(*after) : markers.begin();
      auto n = mentioned.begin();
      if (after.has_value()) {
        n = after->first < FeedType::kOwn ? mentioned.begin()
            : after->first == FeedType::kOwn
                ? mentioned.upper_bound(after->second)
                : mentioned.end();
      }
      while ((m != markers.end() || n != mentioned.end()) &&
             page.feeds.size() < options.limit) {
        const std::optional<MarkerFeedKey> from_markers =
            m == markers.end() ? std::nullopt
                               : std::optional<MarkerFeedKey>(m->first);
        const std::optional<MarkerFeedKey> from_mentions =
            n == mentioned.end()
                ? std::nullopt
                : std::optional<MarkerFeedKey>({FeedType::kOwn, n->first});
        const MarkerFeedKey next =
            !from_mentions.has_value() ? *from_markers
            : !from_markers.has_value()
                ? *from_mentions
                : std::min(*from_markers, *from_mentions);
        FeedReadState state;
        state.feed = {next.first, next.second};
        if (from_markers == next) {
          state.marker.key = m->second;
          ++m;
        }
        mention_starts.push_back(mention_keys.size());
        if (from_mentions == next) {
          AppendMentionsAfter(n->second, state.marker.key, &mention_keys);
          ++n;
        }
        page.feeds.push_back(state);
      }
      more = m != markers.end() || n != mentioned.end();
    }
  }
  mention_starts.push_back(mention_keys.size());
  if (more) {
    const MarkedFeed& last = page.feeds.back().feed;
    page.next_cursor = EncodeReadMarkerCursor(user, last.type, last.owner);
  }
  // Own feeds (channels) are counted shard by shard, one lock each; a home
  // or world feed may merge several shards, as GetReadMarker counts it.
  const Micros now = options_.clock->Now();
  std::vector<std::pair<size_t, size_t>> own;  // (shard, index in the page)
  for (size_t i = 0; i < page.feeds.size(); ++i) {
    FeedReadState& state = page.feeds[i];
    if (state.feed.type == FeedType::kOwn) {
      own.emplace_back(ShardIndex(state.feed.owner), i);
    } else {
      CountUnread(state.feed, options.max_unread, now, &state.marker);
    }
  }
  std::sort(own.begin(), own.end());
  std::vector<const Timeline*> feeds;
  for (size_t g = 0; g < own.size();) {
    const Shard& shard = shards_[own[g].first];
    ReaderLock lock(&shard.mu());
    size_t end = g;
    while (end < own.size() && own[end].first == own[g].first) ++end;
    // Each feed is a few cache misses away (its map slot, the timeline,
    // its newest chunk): found and prefetched for all first, so that the
    // misses overlap, then counted.
    feeds.clear();
    for (size_t k = g; k < end; ++k) {
      const Timeline* feed = shard.FindTimeline(
          {page.feeds[own[k].second].feed.owner, FeedType::kOwn});
      if (feed != nullptr) __builtin_prefetch(feed->newest_chunk());
      feeds.push_back(feed);
    }
    for (size_t k = g; k < end; ++k) {
      const size_t i = own[k].second;
      CountOwnFeedLocked(
          feeds[k - g],
          absl::MakeConstSpan(mention_keys.data() + mention_starts[i],
                              mention_starts[i + 1] - mention_starts[i]),
          options.max_unread, now, &page.feeds[i].marker);
    }
    g = end;
  }
  return page;
}

absl::Status FeedEngineImpl::ApplyMarkerChange(const ChangeRecord& record) {
  auto malformed = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("change record ", record.sequence, " (kind ",
                     static_cast<int>(record.kind), "): ", what));
  };
  if (record.keys.size() != 1) return malformed("a marker names one key");
  const MarkedFeed feed{record.feed, record.other};
  if (absl::Status bad = ValidateMarkedFeed(record.entity, feed); !bad.ok()) {
    return malformed(bad.message());
  }
  if (absl::Status bad = ValidateEntryKey(record.keys[0], "key"); !bad.ok()) {
    return malformed(bad.message());
  }
  if (record.domain != ShardIndex(record.entity)) {
    return malformed("domain is not the shard of the marker's user");
  }
  Shard& shard = ShardOf(record.entity);
  WriterLock lock(&shard.mu());
  if (record.kind == ChangeKind::kMentionAdd) {
    if (feed.type != FeedType::kOwn)
      return malformed("a mention is of a channel");
    AddMentionLocked(shard, record.entity, feed.owner, record.keys[0]);
    return absl::OkStatus();
  }
  const MarkerFeedKey which{feed.type, feed.owner};
  // The record holds the marker as the source left it (forced or not).
  GraphNode& node = shard.Node(record.entity);
  node.read_markers[which] = record.keys[0];
  ClearMentions(node, which, record.keys[0]);
  if (log_ != nullptr) {
    shard.Log(MarkerRecord(record.entity, which, record.keys[0]));
  }
  return absl::OkStatus();
}

}  // namespace feedcore::internal
