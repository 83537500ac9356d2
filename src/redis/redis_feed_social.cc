// RedisFeedEngine's read markers.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "contract/cursor.h"
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
  if (!reply->is_nil()) {
    if (reply->type != Reply::Type::kString || reply->str.size() != 16) {
      return UnexpectedReply("a read marker", *reply);
    }
    marker.key = redis::EntryKeyOfBytes(reply->str);
  }
  if (absl::Status counted = CountUnread(feed, max_unread, &marker);
      !counted.ok()) {
    return counted;
  }
  return marker;
}

absl::Status RedisFeedEngine::CountUnread(const MarkedFeed& feed,
                                          size_t max_unread,
                                          ReadMarker* marker) const {
  EntryKey lo = EntryKey::Min();
  if (marker->key.has_value()) {
    // Keys strictly newer than the marker.
    const std::optional<EntryKey> newer = internal::NewerKey(*marker->key);
    if (!newer.has_value()) return absl::OkStatus();
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
  marker->unread = std::min(unread->size(), max_unread);
  marker->more_unread = unread->size() > max_unread;
  return absl::OkStatus();
}

absl::StatusOr<ReadStatePage> RedisFeedEngine::ListReadMarkers(
    EntityId user, const ReadStateOptions& options) const {
  if (absl::Status bad =
          internal::ValidateReadStateOptions(options, options_.max_page_size);
      !bad.ok()) {
    return bad;
  }
  std::optional<std::pair<FeedType, EntityId>> after;
  if (!options.cursor.empty()) {
    absl::StatusOr<std::pair<FeedType, EntityId>> place =
        internal::DecodeReadMarkerCursorOf(options.cursor, user);
    if (!place.ok()) return place.status();
    after = *place;
  }
  // The whole hash, ordered here as the in-process engine orders it.
  absl::StatusOr<Reply> reply =
      client_->RunOne(PlainCommand({"HGETALL", Key(user, "mk")}));
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kArray || reply->elements.size() % 2 != 0) {
    return UnexpectedReply("the read markers", *reply);
  }
  std::vector<std::pair<std::pair<FeedType, EntityId>, EntryKey>> markers;
  for (size_t i = 0; i < reply->elements.size(); i += 2) {
    const Reply& field = reply->elements[i];
    const Reply& value = reply->elements[i + 1];
    int type = 0;
    EntityId owner = 0;
    const std::vector<std::string> parts = absl::StrSplit(field.str, ':');
    if (field.type != Reply::Type::kString || parts.size() != 2 ||
        !absl::SimpleAtoi(parts[0], &type) || type < 0 ||
        type > static_cast<int>(FeedType::kNotification) ||
        !absl::SimpleAtoi(parts[1], &owner) ||
        value.type != Reply::Type::kString || value.str.size() != 16) {
      return UnexpectedReply("a read marker", *reply);
    }
    markers.push_back({{static_cast<FeedType>(type), owner},
                       redis::EntryKeyOfBytes(value.str)});
  }
  std::sort(markers.begin(), markers.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  auto it = markers.begin();
  if (after.has_value()) {
    it = std::upper_bound(
        markers.begin(), markers.end(), *after,
        [](const auto& place, const auto& m) { return place < m.first; });
  }
  ReadStatePage page;
  for (; it != markers.end() && page.feeds.size() < options.limit; ++it) {
    FeedReadState state;
    state.feed = {it->first.first, it->first.second};
    state.marker.key = it->second;
    if (absl::Status counted =
            CountUnread(state.feed, options.max_unread, &state.marker);
        !counted.ok()) {
      return counted;
    }
    page.feeds.push_back(state);
  }
  if (it != markers.end()) {
    const MarkedFeed& last = page.feeds.back().feed;
    page.next_cursor =
        internal::EncodeReadMarkerCursor(user, last.type, last.owner);
  }
  return page;
}

}  // namespace feedcore::redis
