// The reads of RedisFeedEngine: feed pages (a plain ZRANGE when it settles
// the answer, a script that also reclaims expired members when it does
// not), follow lists and counts.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "feed/engine_options.h"
#include "redis/entry_codec.h"
#include "redis/redis_feed_engine.h"
#include "timeline/cursor.h"

namespace feedcore::redis {
namespace {

using internal::DecodeFollowListCursorOf;
using internal::DecodeTimelineCursor;
using internal::EncodeFollowListCursor;
using internal::EncodeTimelineCursor;
using internal::FollowListCursor;
using internal::TimelineCursor;

// Cursors carry the FeedType code, as the in-process engine's do, so the
// two backends' cursors read alike.
const char* FeedName(uint8_t feed) {
  switch (static_cast<FeedType>(feed)) {
    case FeedType::kHome:
      return "home timeline";
    case FeedType::kOwn:
      return "own feed";
    case FeedType::kWorld:
      return "world feed";
    case FeedType::kNotification:
      return "notification feed";
  }
  return "feed of another kind";
}

}  // namespace

absl::StatusOr<Page> RedisFeedEngine::ReadTimeline(
    EntityId owner, const ReadOptions& options) const {
  return ReadFeed(FeedType::kHome, owner, options);
}

absl::StatusOr<Page> RedisFeedEngine::ReadOwn(
    EntityId actor, const ReadOptions& options) const {
  return ReadFeed(FeedType::kOwn, actor, options);
}

absl::StatusOr<Page> RedisFeedEngine::ReadWorld(
    const ReadOptions& options) const {
  return ReadFeed(FeedType::kWorld, 0, options);
}

absl::StatusOr<size_t> RedisFeedEngine::CountNewer(EntityId reader, Micros ts,
                                                   ActivityId activity_id,
                                                   size_t max_count) const {
  if (absl::Status bad =
          internal::ValidateCountNewer(ts, max_count, options_.max_page_size);
      !bad.ok()) {
    return bad;
  }
  if (activity_id == std::numeric_limits<ActivityId>::max() &&
      ts == std::numeric_limits<Micros>::max()) {
    return 0;
  }
  // Keys strictly newer than (ts, activity_id).
  const Micros lo_ts =
      activity_id == std::numeric_limits<ActivityId>::max() ? ts + 1 : ts;
  const ActivityId lo_id = activity_id == std::numeric_limits<ActivityId>::max()
                               ? 0
                               : activity_id + 1;
  absl::StatusOr<std::vector<StoredEntry>> newer =
      CollectHome(reader, ReadOrder::kOldestFirst, lo_ts, lo_id,
                  std::numeric_limits<Micros>::max(),
                  std::numeric_limits<ActivityId>::max(), max_count);
  if (!newer.ok()) return newer.status();
  return newer->size();
}

absl::StatusOr<EntityPage> RedisFeedEngine::Followers(
    EntityId entity, const ListOptions& options) const {
  return ReadList(/*followers=*/true, entity, options);
}

absl::StatusOr<EntityPage> RedisFeedEngine::Following(
    EntityId entity, const ListOptions& options) const {
  return ReadList(/*followers=*/false, entity, options);
}

absl::StatusOr<size_t> RedisFeedEngine::FollowerCount(EntityId entity) const {
  return Count(Key(entity, "fr"));
}

absl::StatusOr<size_t> RedisFeedEngine::FollowingCount(EntityId entity) const {
  return Count(Key(entity, "fg"));
}

std::string RedisFeedEngine::FeedKey(FeedType feed, EntityId owner) const {
  if (feed == FeedType::kWorld) return WorldKey();
  return Key(owner, feed == FeedType::kOwn ? "own" : "tl");
}

absl::StatusOr<std::vector<StoredEntry>> RedisFeedEngine::Collect(
    std::string key, ReadOrder order, Micros lo_ts, ActivityId lo_id,
    Micros hi_ts, ActivityId hi_id, size_t want) const {
  const Micros now = Now();
  std::vector<StoredEntry> entries;
  absl::StatusOr<bool> complete =
      CollectPlain(key, order, lo_ts, lo_id, hi_ts, hi_id, want, now, &entries);
  if (!complete.ok()) return complete.status();
  if (*complete) return entries;
  // Expired or out-of-range members in the way: the script skips them
  // (removing the expired ones) in one atomic pass.
  Command read = ClusterClient::ScriptCommand(
      read_, std::move(key),
      {order == ReadOrder::kNewestFirst ? "rev" : "fwd",
       redis::EntryScore(lo_ts), redis::EntryScore(hi_ts),
       redis::EntryKeyBytes(lo_ts, lo_id), redis::EntryKeyBytes(hi_ts, hi_id),
       absl::StrCat(want), BigEndian(static_cast<uint64_t>(now))});
  // A read: the expired entries it drops, a later read drops again, so it
  // never waits for replicas.
  read.write = false;
  absl::StatusOr<Reply> reply = client_->RunOne(std::move(read));
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kArray) {
    return UnexpectedReply("a feed read", *reply);
  }
  entries.clear();
  entries.reserve(reply->elements.size());
  for (const Reply& member : reply->elements) {
    std::optional<StoredEntry> entry = redis::DecodeEntryMember(member.str);
    if (!entry.has_value()) return ForeignMember();
    entries.push_back(*std::move(entry));
  }
  return entries;
}

absl::StatusOr<bool> RedisFeedEngine::CollectPlain(
    const std::string& key, ReadOrder order, Micros lo_ts, ActivityId lo_id,
    Micros hi_ts, ActivityId hi_id, size_t want, Micros now,
    std::vector<StoredEntry>* entries) const {
  // A cursor's own entry shares the bound's score and is filtered out.
  constexpr size_t kSlack = 4;
  const size_t fetch = want + kSlack;
  const bool newest_first = order == ReadOrder::kNewestFirst;
  const std::string lo_score = redis::EntryScore(lo_ts);
  const std::string hi_score = redis::EntryScore(hi_ts);
  std::vector<std::string> args = {
      "ZRANGE", key, newest_first ? hi_score : lo_score,
      newest_first ? lo_score : hi_score, "BYSCORE"};
  if (newest_first) args.push_back("REV");
  args.insert(args.end(), {"LIMIT", "0", absl::StrCat(fetch)});
  absl::StatusOr<Reply> reply = client_->RunOne(PlainCommand(std::move(args)));
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kArray) {
    return UnexpectedReply("a feed read", *reply);
  }
  auto below = [](Micros a_ts, ActivityId a_id, Micros b_ts, ActivityId b_id) {
    return a_ts != b_ts ? a_ts < b_ts : a_id < b_id;
  };
  entries->reserve(want);
  for (const Reply& member : reply->elements) {
    std::optional<StoredEntry> entry = redis::DecodeEntryMember(member.str);
    if (!entry.has_value()) return ForeignMember();
    if (below(entry->ts, entry->activity_id, lo_ts, lo_id) ||
        below(hi_ts, hi_id, entry->ts, entry->activity_id)) {
      continue;
    }
    if (now >= entry->expires_at) return false;
    entries->push_back(*std::move(entry));
    if (entries->size() == want) return true;
  }
  return reply->elements.size() < fetch;
}

absl::Status RedisFeedEngine::ForeignMember() {
  return absl::InternalError(
      "a feed in redis holds a member this backend did not write");
}

absl::StatusOr<Page> RedisFeedEngine::ReadFeed(
    FeedType feed, EntityId owner, const ReadOptions& options) const {
  if (absl::Status status =
          internal::ValidateRead(options, options_.max_page_size);
      !status.ok()) {
    return status;
  }
  Micros lo_ts = 0;
  ActivityId lo_id = 0;
  Micros hi_ts = std::numeric_limits<Micros>::max();
  ActivityId hi_id = std::numeric_limits<ActivityId>::max();
  if (options.min_ts.has_value() && *options.min_ts > 0) {
    lo_ts = *options.min_ts;
  }
  const bool window_below_zero =
      options.max_ts.has_value() && *options.max_ts < 0;
  if (options.max_ts.has_value() && !window_below_zero) {
    hi_ts = *options.max_ts;
  }
  auto below = [](Micros a_ts, ActivityId a_id, Micros b_ts, ActivityId b_id) {
    return a_ts != b_ts ? a_ts < b_ts : a_id < b_id;
  };
  if (!options.cursor.empty()) {
    absl::StatusOr<TimelineCursor> cursor =
        DecodeTimelineCursor(options.cursor);
    if (!cursor.ok()) return cursor.status();
    if (cursor->feed != static_cast<uint8_t>(feed)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cursor belongs to a ", FeedName(cursor->feed),
                       ", not to a ", FeedName(static_cast<uint8_t>(feed))));
    }
    if (cursor->owner != owner) {
      return absl::InvalidArgumentError(
          absl::StrCat("cursor belongs to the ", FeedName(cursor->feed), " of ",
                       cursor->owner, ", not of ", owner));
    }
    if (cursor->order != options.order) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cursor was made for ",
          cursor->order == ReadOrder::kNewestFirst ? "newest" : "oldest",
          "-first reading; keep the order of the first page"));
    }
    if (options.order == ReadOrder::kNewestFirst) {
      // Strictly older than the cursor's key.
      if (cursor->ts == 0 && cursor->activity_id == 0) return Page{};
      Micros ts = cursor->ts;
      ActivityId id = cursor->activity_id;
      if (id == 0) {
        --ts;
        id = std::numeric_limits<ActivityId>::max();
      } else {
        --id;
      }
      if (below(ts, id, hi_ts, hi_id)) {
        hi_ts = ts;
        hi_id = id;
      }
    } else {
      if (cursor->ts == std::numeric_limits<Micros>::max() &&
          cursor->activity_id == std::numeric_limits<ActivityId>::max()) {
        return Page{};
      }
      Micros ts = cursor->ts;
      ActivityId id = cursor->activity_id;
      if (id == std::numeric_limits<ActivityId>::max()) {
        ++ts;
        id = 0;
      } else {
        ++id;
      }
      if (below(lo_ts, lo_id, ts, id)) {
        lo_ts = ts;
        lo_id = id;
      }
    }
  }
  Page page;
  if (window_below_zero || below(hi_ts, hi_id, lo_ts, lo_id)) return page;
  // One more than asked tells whether another page follows.
  absl::StatusOr<std::vector<StoredEntry>> entries =
      feed == FeedType::kHome
          ? CollectHome(owner, options.order, lo_ts, lo_id, hi_ts, hi_id,
                        options.limit + 1)
          : Collect(FeedKey(feed, owner), options.order, lo_ts, lo_id, hi_ts,
                    hi_id, options.limit + 1);
  if (!entries.ok()) return entries.status();
  page.entries = *std::move(entries);
  if (page.entries.size() > options.limit) {
    page.entries.pop_back();
    const StoredEntry& last = page.entries.back();
    page.next_cursor = EncodeTimelineCursor(
        TimelineCursor{owner, options.order, last.ts, last.activity_id,
                       static_cast<uint8_t>(feed)});
  }
  if (options.hydrate) {
    if (absl::Status status = Hydrate(&page.entries); !status.ok()) {
      return status;
    }
  }
  return page;
}

absl::Status RedisFeedEngine::Hydrate(std::vector<StoredEntry>* entries) const {
  if (entries->empty()) return absl::OkStatus();
  std::vector<Command> commands;
  commands.reserve(entries->size());
  for (const StoredEntry& entry : *entries) {
    commands.push_back(
        PlainCommand({"HGET", ActivityKey(entry.activity_id), "payload"}));
  }
  absl::StatusOr<std::vector<Reply>> replies =
      client_->Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  for (size_t i = 0; i < entries->size(); ++i) {
    (*entries)[i].payload = std::move((*replies)[i].str);
  }
  return absl::OkStatus();
}

absl::StatusOr<EntityPage> RedisFeedEngine::ReadList(
    bool followers, EntityId entity, const ListOptions& options) const {
  if (absl::Status status =
          internal::ValidateList(options, options_.max_page_size);
      !status.ok()) {
    return status;
  }
  std::string start = "-";
  if (!options.cursor.empty()) {
    absl::StatusOr<FollowListCursor> cursor =
        DecodeFollowListCursorOf(options.cursor, followers, entity);
    if (!cursor.ok()) return cursor.status();
    start = ListStartAfter(cursor->last);
  }
  absl::StatusOr<std::vector<EntityId>> ids =
      ListIds(Key(entity, followers ? "fr" : "fg"), start, options.limit + 1);
  if (!ids.ok()) return ids.status();
  EntityPage page;
  page.ids = *std::move(ids);
  if (page.ids.size() > options.limit) {
    page.ids.pop_back();
    page.next_cursor = EncodeFollowListCursor(
        FollowListCursor{followers, entity, 0, page.ids.back()});
  }
  return page;
}

absl::StatusOr<std::vector<EntityId>> RedisFeedEngine::ListIds(
    const std::string& key, const std::string& start, size_t count) const {
  absl::StatusOr<Reply> reply = client_->RunOne(PlainCommand(
      {"ZRANGE", key, start, "+", "BYLEX", "LIMIT", "0", absl::StrCat(count)}));
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kArray) {
    return UnexpectedReply("a follow list read", *reply);
  }
  std::vector<EntityId> ids;
  ids.reserve(reply->elements.size());
  for (const Reply& member : reply->elements) {
    // An id, or a following set's parked edge: the id, 'm', an expiry.
    if (member.str.size() != 8 && member.str.size() != 17) {
      return absl::InternalError(
          "a follow list in redis holds a member this backend did not "
          "write");
    }
    ids.push_back(redis::ReadBigEndian(member.str));
  }
  return ids;
}

absl::StatusOr<size_t> RedisFeedEngine::Count(const std::string& key) const {
  absl::StatusOr<Reply> reply = client_->RunOne(PlainCommand({"ZCARD", key}));
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kInteger) {
    return UnexpectedReply("a count", *reply);
  }
  return static_cast<size_t>(reply->integer);
}

}  // namespace feedcore::redis
