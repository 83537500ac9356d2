// The reads of RedisFeedEngine: feed pages (a plain ZRANGE when it settles
// the answer, a script that also reclaims expired members when it does
// not), follow lists and counts.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "contract/cursor.h"
#include "contract/feed_arguments.h"
#include "contract/page_merger.h"
#include "contract/page_range.h"
#include "redis/entry_codec.h"
#include "redis/redis_feed_engine.h"

namespace feedcore::redis {
namespace {

using internal::DecodeFollowListCursorOf;
using internal::EncodeFollowListCursor;
using internal::FollowListCursor;

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

absl::StatusOr<size_t> RedisFeedEngine::CountNewer(EntityId reader,
                                                   const EntryKey& after,
                                                   size_t max_count) const {
  if (absl::Status bad = internal::ValidateCountNewer(after, max_count,
                                                      options_.max_page_size);
      !bad.ok()) {
    return bad;
  }
  const std::optional<EntryKey> lo = internal::NewerKey(after);
  if (!lo.has_value()) return 0;
  absl::StatusOr<std::vector<StoredEntry>> newer = CollectHome(
      reader, ReadOrder::kOldestFirst, *lo, EntryKey::Max(), max_count);
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
    std::string key, ReadOrder order, EntryKey lo, EntryKey hi,
    size_t want) const {
  const Micros now = Now();
  std::vector<StoredEntry> entries;
  absl::StatusOr<bool> complete =
      CollectPlain(key, order, lo, hi, want, now, &entries);
  if (!complete.ok()) return complete.status();
  if (*complete) return entries;
  // Expired or out-of-range members in the way: the script skips them
  // (removing the expired ones) in one atomic pass.
  Command read = ClusterClient::ScriptCommand(
      read_, std::move(key),
      {order == ReadOrder::kNewestFirst ? "rev" : "fwd",
       redis::EntryScore(lo.ts), redis::EntryScore(hi.ts),
       redis::EntryKeyBytes(lo), redis::EntryKeyBytes(hi), absl::StrCat(want),
       BigEndian(static_cast<uint64_t>(now))});
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
    const std::string& key, ReadOrder order, EntryKey lo, EntryKey hi,
    size_t want, Micros now, std::vector<StoredEntry>* entries) const {
  // A cursor's own entry shares the bound's score and is filtered out.
  constexpr size_t kSlack = 4;
  const size_t fetch = want + kSlack;
  const bool newest_first = order == ReadOrder::kNewestFirst;
  const std::string lo_score = redis::EntryScore(lo.ts);
  const std::string hi_score = redis::EntryScore(hi.ts);
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
  entries->reserve(want);
  for (const Reply& member : reply->elements) {
    std::optional<StoredEntry> entry = redis::DecodeEntryMember(member.str);
    if (!entry.has_value()) return ForeignMember();
    const EntryKey key_of_entry = entry->key();
    if (key_of_entry < lo || hi < key_of_entry) continue;
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
  absl::StatusOr<internal::PageRange> range =
      internal::ResolvePageRange(feed, owner, options, options_.max_page_size);
  if (!range.ok()) return range.status();
  if (!options.kinds.every_kind()) return NoActivityKinds("ReadOptions.kinds");
  Page page;
  if (range->empty) return page;
  // One more than asked tells whether another page follows.
  absl::StatusOr<std::vector<StoredEntry>> entries =
      feed == FeedType::kHome
          ? CollectHome(owner, options.order, range->lo, range->hi,
                        options.limit + 1)
          : Collect(FeedKey(feed, owner), options.order, range->lo, range->hi,
                    options.limit + 1);
  if (!entries.ok()) return entries.status();
  page.entries = *std::move(entries);
  internal::FinishPage(feed, owner, options, &page);
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
    commands.push_back(PlainCommand(
        {"HMGET", ActivityKey(entry.activity_id), "payload", "edited"}));
  }
  absl::StatusOr<std::vector<Reply>> replies =
      client_->Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  for (size_t i = 0; i < entries->size(); ++i) {
    Reply& reply = (*replies)[i];
    if (reply.type != Reply::Type::kArray || reply.elements.size() != 2) {
      return UnexpectedReply("a payload read", reply);
    }
    StoredEntry& entry = (*entries)[i];
    entry.payload.clear();
    entry.edited_at = 0;
    // No payload (a retracted activity, or an entry put by Insert): no
    // edit time either, as in process.
    if (reply.elements[0].is_nil()) continue;
    entry.payload = std::move(reply.elements[0].str);
    const Reply& edited = reply.elements[1];
    if (!edited.is_nil() && !absl::SimpleAtoi(edited.str, &entry.edited_at)) {
      return UnexpectedReply("a payload read", reply);
    }
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
