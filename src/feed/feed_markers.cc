// FeedEngineImpl's read markers.
//
// A marker lives in the reader's graph node (GraphNode::read_markers), in
// the reader's shard, whatever feed it is for: setting one takes that one
// shard lock, and the change record and snapshot of that shard carry it.
// The unread count reads the marked feed afterwards, as CountNewer does
// (through CollectFeed, which merges the hybrid followees of a home feed),
// so it is exact for the marker it read and the feed as it was when the
// count ran.
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

}  // namespace

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
  shard.Node(user).read_markers[which] = key;
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
  {
    const Shard& shard = ShardOf(user);
    ReaderLock lock(&shard.mu());
    if (const GraphNode* node = shard.FindNode(user); node != nullptr) {
      auto it = node->read_markers.find({feed.type, feed.owner});
      if (it != node->read_markers.end()) marker.key = it->second;
    }
  }
  CountUnread(feed, max_unread, options_.clock->Now(), &marker);
  return marker;
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
  bool more = false;
  {
    const Shard& shard = ShardOf(user);
    ReaderLock lock(&shard.mu());
    if (const GraphNode* node = shard.FindNode(user); node != nullptr) {
      const auto& markers = node->read_markers;
      auto it =
          after.has_value() ? markers.upper_bound(*after) : markers.begin();
      for (; it != markers.end() && page.feeds.size() < options.limit; ++it) {
        FeedReadState state;
        state.feed = {it->first.first, it->first.second};
        state.marker.key = it->second;
        page.feeds.push_back(state);
      }
      more = it != markers.end();
    }
  }
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
  std::vector<StoredEntry> unread;
  for (size_t g = 0; g < own.size();) {
    const Shard& shard = shards_[own[g].first];
    ReaderLock lock(&shard.mu());
    for (const size_t s = own[g].first; g < own.size() && own[g].first == s;
         ++g) {
      FeedReadState& state = page.feeds[own[g].second];
      const std::optional<EntryKey> lo = FirstUnread(state.marker);
      const Timeline* feed =
          shard.FindTimeline({state.feed.owner, FeedType::kOwn});
      if (!lo.has_value() || feed == nullptr) continue;
      unread.clear();
      feed->Collect(ReadOrder::kOldestFirst, *lo, EntryKey::Max(), now,
                    options.max_unread + 1, &unread);
      state.marker.unread = std::min(unread.size(), options.max_unread);
      state.marker.more_unread = unread.size() > options.max_unread;
    }
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
  const MarkerFeedKey which{feed.type, feed.owner};
  // The record holds the marker as the source left it (forced or not).
  shard.Node(record.entity).read_markers[which] = record.keys[0];
  if (log_ != nullptr) {
    shard.Log(MarkerRecord(record.entity, which, record.keys[0]));
  }
  return absl::OkStatus();
}

}  // namespace feedcore::internal
