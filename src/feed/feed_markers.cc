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
  EntryKey lo = EntryKey::Min();
  if (marker.key.has_value()) {
    const std::optional<EntryKey> newer =
        NewerKey({marker.key->ts, marker.key->activity_id});
    if (!newer.has_value()) return marker;
    lo = *newer;
  }
  // One more than asked tells whether more are unread.
  std::vector<StoredEntry> unread;
  CollectFeed(feed.type, feed.owner, ReadOrder::kOldestFirst, lo,
              EntryKey::Max(), options_.clock->Now(), max_unread + 1, &unread);
  marker.unread = std::min(unread.size(), max_unread);
  marker.more_unread = unread.size() > max_unread;
  return marker;
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
