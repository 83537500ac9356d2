// RedisFeedEngine's read markers.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/feed_arguments.h"
#include "contract/page_merger.h"
#include "redis/entry_codec.h"
#include "redis/redis_feed_engine.h"

namespace feedcore::redis {
namespace {

// The field of a user's marker hash that holds its marker in `feed`.
std::string MarkerField(const MarkedFeed& feed) {
  return absl::StrCat(static_cast<int>(feed.type), ":", feed.owner);
}

}  // namespace

absl::StatusOr<bool> RedisFeedEngine::SetReadMarker(
    EntityId user, const MarkedFeed& feed, const EntryKey& key,
    const SetMarkerOptions& options) {
  if (absl::Status bad = internal::ValidateMarkedFeed(user, feed); !bad.ok()) {
    return bad;
  }
  if (absl::Status bad = internal::ValidateEntryKey(key, "key"); !bad.ok()) {
    return bad;
  }
  // Not retried: a retry of a set that went through would answer 0.
  absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
      set_marker_, Key(user, "mk"),
      {MarkerField(feed), redis::EntryKeyBytes(key), options.force ? "1" : "0"},
      /*idempotent=*/false));
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kInteger) {
    return UnexpectedReply("a read marker set", *reply);
  }
  return reply->integer == 1;
}

absl::StatusOr<ReadMarker> RedisFeedEngine::GetReadMarker(
    EntityId user, const MarkedFeed& feed, size_t max_unread) const {
  if (absl::Status bad = internal::ValidateMarkedFeed(user, feed); !bad.ok()) {
    return bad;
  }
  if (absl::Status bad =
          internal::ValidateMaxUnread(max_unread, options_.max_page_size);
      !bad.ok()) {
    return bad;
  }
  absl::StatusOr<Reply> reply = client_->RunOne(
      PlainCommand({"HGET", Key(user, "mk"), MarkerField(feed)}));
  if (!reply.ok()) return reply.status();
  ReadMarker marker;
  EntryKey lo = EntryKey::Min();
  if (!reply->is_nil()) {
    if (reply->type != Reply::Type::kString || reply->str.size() != 16) {
      return UnexpectedReply("a read marker", *reply);
    }
    const EntryKey key = redis::EntryKeyOfBytes(reply->str);
    marker.key = key;
    // Keys strictly newer than the marker.
    const std::optional<EntryKey> newer = internal::NewerKey(key);
    if (!newer.has_value()) return marker;
    lo = *newer;
  }
  // One more than asked tells whether more are unread. A home feed counts
  // as ReadTimeline shows it, merged.
  absl::StatusOr<std::vector<StoredEntry>> unread =
      feed.type == FeedType::kHome
          ? CollectHome(feed.owner, ReadOrder::kOldestFirst, lo,
                        EntryKey::Max(), max_unread + 1)
          : Collect(FeedKey(feed.type, feed.owner), ReadOrder::kOldestFirst, lo,
                    EntryKey::Max(), max_unread + 1);
  if (!unread.ok()) return unread.status();
  marker.unread = std::min(unread->size(), max_unread);
  marker.more_unread = unread->size() > max_unread;
  return marker;
}

}  // namespace feedcore::redis
