// FeedEngine on a Redis Cluster. The key layout and the reasons for it are
// in docs/scale-out.md; the scripts in feed_scripts.h. Every entity's keys
// carry its id as the hash tag, so one entity's timeline, own feed,
// follower and following sets share a slot and a script can change them
// together.
//
// Ordering that keeps copies right without cross-slot transactions:
//   * Follow adds the follower to the followee's follower set, then the
//     followee to the follower's following set, then reads the back-fill
//     from the followee's own feed and copies it. A publish puts its entry
//     in the own feed before it reads the follower set, and a fan-out copy
//     goes in only while the reader follows the actor (checked by the
//     insert script in the reader's slot). So a publish either reaches the
//     new follower or is already in the own feed when the back-fill reads
//     it.
//   * Unfollow drops the followee from the following set and its entries
//     from the timeline in one script: a fan-out still in flight finds the
//     follow gone and copies nothing.
//   * Retract marks the activity retracted before removing its copies, and
//     a publish checks the mark when its fan-out ends and removes what it
//     copied if a Retract ran meanwhile. The mark says "retracting" until
//     the copies are gone and "retracted" after, so a retry of a retract
//     that failed half-way finishes it, and retracting again after one
//     that finished is a no-op.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "feed/engine_options.h"
#include "feedcore/redis_cluster.h"
#include "redis/cluster_client.h"
#include "redis/entry_codec.h"
#include "redis/feed_scripts.h"
#include "timeline/cursor.h"

namespace feedcore {
namespace {

using internal::DecodeFollowListCursor;
using internal::DecodeTimelineCursor;
using internal::EncodeFollowListCursor;
using internal::EncodeTimelineCursor;
using internal::FollowListCursor;
using internal::TimelineCursor;
using redis::BigEndian;
using redis::ClusterClient;
using redis::Command;
using redis::Reply;

// Which feed a timeline cursor belongs to; the same codes as the
// in-process engine, so the two backends' cursors read alike.
enum class Feed : uint8_t { kHome = 0, kOwn = 1, kWorld = 2 };

const char* FeedName(uint8_t feed) {
  switch (static_cast<Feed>(feed)) {
    case Feed::kHome:
      return "home timeline";
    case Feed::kOwn:
      return "own feed";
    case Feed::kWorld:
      return "world feed";
  }
  return "feed of another kind";
}

// A feed's key expires this long after its newest entry does, so a feed
// whose entries have all expired disappears from Redis on its own; the
// margin keeps Redis's clock from ever dropping an entry that the engine's
// clock still shows.
constexpr Micros kKeyExpiryMargin = 10 * kMicrosPerMinute;

// Followers read per round trip when a publish or retract walks them.
constexpr size_t kFollowerChunk = 8192;

absl::Status UnexpectedReply(absl::string_view what, const Reply& reply) {
  return absl::InternalError(
      absl::StrCat("unexpected reply from redis to ", what,
                   reply.is_error() ? ": " + reply.str : std::string()));
}

absl::StatusOr<int64_t> IntegerAt(const Reply& reply, size_t index,
                                  absl::string_view what) {
  if (reply.type != Reply::Type::kArray || reply.elements.size() <= index ||
      reply.elements[index].type != Reply::Type::kInteger) {
    return UnexpectedReply(what, reply);
  }
  return reply.elements[index].integer;
}

absl::StatusOr<int64_t> ParseDecimal(const Reply& reply, size_t index,
                                     absl::string_view what) {
  int64_t value = 0;
  if (reply.type != Reply::Type::kArray || reply.elements.size() <= index ||
      !absl::SimpleAtoi(reply.elements[index].str, &value)) {
    return UnexpectedReply(what, reply);
  }
  return value;
}

class RedisFeedEngine final : public FeedEngine {
 public:
  RedisFeedEngine(std::unique_ptr<ClusterClient> client, EngineOptions options)
      : client_(std::move(client)), options_(std::move(options)) {}

  absl::Status LoadScripts() {
    const std::pair<redis::Script*, const char*> scripts[] = {
        {&insert_, redis::kInsertScript},
        {&read_, redis::kReadScript},
        {&remove_, redis::kRemoveScript},
        {&unfollow_, redis::kUnfollowScript},
        {&store_activity_, redis::kStoreActivityScript},
        {&finish_publish_, redis::kFinishPublishScript},
        {&retract_, redis::kRetractScript},
        {&finish_retract_, redis::kFinishRetractScript},
    };
    for (const auto& [script, body] : scripts) {
      absl::StatusOr<redis::Script> loaded = client_->LoadScript(body);
      if (!loaded.ok()) return loaded.status();
      *script = *loaded;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<InsertResult> Insert(EntityId owner,
                                      const TimelineEntry& entry,
                                      const InsertOptions& options) override {
    return InsertFanout(absl::MakeConstSpan(&owner, 1), entry, options);
  }

  absl::StatusOr<InsertResult> InsertFanout(
      absl::Span<const EntityId> owners, const TimelineEntry& entry,
      const InsertOptions& options) override {
    std::vector<OwnedEntry> pairs;
    pairs.reserve(owners.size());
    for (EntityId owner : owners) pairs.push_back({owner, entry});
    return InsertBatch(pairs, options);
  }

  absl::StatusOr<InsertResult> InsertBatch(
      absl::Span<const OwnedEntry> entries,
      const InsertOptions& options) override {
    const Micros now = Now();
    absl::StatusOr<Micros> expires_at =
        internal::ResolveExpiry(options, options_.default_ttl, now);
    if (!expires_at.ok()) return expires_at.status();
    for (const OwnedEntry& owned : entries) {
      if (absl::Status status = internal::ValidateEntry(owned.entry);
          !status.ok()) {
        return status;
      }
    }
    std::vector<Command> commands;
    commands.reserve(entries.size());
    for (const OwnedEntry& owned : entries) {
      // Grouping is off in this backend, so group keys read back as 0.
      const StoredEntry stored{owned.entry.ts,
                               owned.entry.activity_id,
                               owned.entry.actor,
                               *expires_at,
                               0,
                               {}};
      commands.push_back(InsertCommand(Key(owned.owner, "tl"),
                                       Key(owned.owner, "fg"), stored,
                                       options_.max_timeline_length, now,
                                       /*only_if_following=*/std::nullopt));
    }
    return RunInserts(std::move(commands));
  }

  absl::Status Remove(EntityId owner, Micros ts,
                      ActivityId activity_id) override {
    if (ts < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("timestamp is ", ts, "; it must be >= 0"));
    }
    absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
        remove_, Key(owner, "tl"),
        {redis::EntryScore(ts), redis::EntryKeyBytes(ts, activity_id)}));
    if (!reply.ok()) return reply.status();
    if (reply->type != Reply::Type::kInteger) {
      return UnexpectedReply("a timeline remove", *reply);
    }
    if (reply->integer == 0) {
      return absl::NotFoundError(absl::StrCat("timeline of ", owner,
                                              " holds no entry with key (", ts,
                                              ", ", activity_id, ")"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Page> ReadTimeline(EntityId owner,
                                    const ReadOptions& options) const override {
    return ReadFeed(Feed::kHome, owner, options);
  }
  absl::StatusOr<Page> ReadOwn(EntityId actor,
                               const ReadOptions& options) const override {
    return ReadFeed(Feed::kOwn, actor, options);
  }
  absl::StatusOr<Page> ReadWorld(const ReadOptions& options) const override {
    return ReadFeed(Feed::kWorld, 0, options);
  }

  absl::StatusOr<size_t> CountNewer(EntityId reader, Micros ts,
                                    ActivityId activity_id,
                                    size_t max_count) const override {
    if (ts < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("timestamp is ", ts, "; it must be >= 0"));
    }
    if (max_count == 0 || max_count > options_.max_page_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "max_count is ", max_count, "; it must be 1..",
          options_.max_page_size, " (EngineOptions.max_page_size)"));
    }
    if (activity_id == std::numeric_limits<ActivityId>::max() &&
        ts == std::numeric_limits<Micros>::max()) {
      return 0;
    }
    // Keys strictly newer than (ts, activity_id).
    const Micros lo_ts =
        activity_id == std::numeric_limits<ActivityId>::max() ? ts + 1 : ts;
    const ActivityId lo_id =
        activity_id == std::numeric_limits<ActivityId>::max() ? 0
                                                              : activity_id + 1;
    absl::StatusOr<std::vector<StoredEntry>> newer =
        Collect(Key(reader, "tl"), ReadOrder::kOldestFirst, lo_ts, lo_id,
                std::numeric_limits<Micros>::max(),
                std::numeric_limits<ActivityId>::max(), max_count);
    if (!newer.ok()) return newer.status();
    return newer->size();
  }

  absl::StatusOr<GroupPage> ReadGroups(EntityId,
                                       const GroupReadOptions&) const override {
    // The backend refuses aggregation at creation, as the in-process
    // engine answers when it is off.
    return absl::FailedPreconditionError(
        "grouped reads need EngineOptions.aggregation.enabled, which the "
        "Redis Cluster backend does not support");
  }

  // Publish refuses `notify`, so every notification feed of this backend
  // is empty, and these calls answer for an empty feed.
  absl::StatusOr<GroupPage> ReadNotifications(
      EntityId, const GroupReadOptions& options) override {
    if (options.limit == 0 || options.limit > options_.max_page_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "GroupReadOptions.limit is ", options.limit, "; it must be 1..",
          options_.max_page_size, " (EngineOptions.max_page_size)"));
    }
    if (!options.cursor.empty()) {
      return absl::InvalidArgumentError(
          "cursor does not belong to this notification feed (it is empty)");
    }
    return GroupPage{};
  }
  NotificationCounts GetNotificationCounts(EntityId) override { return {}; }
  NotificationCounts MarkSeen(EntityId) override { return {}; }
  absl::StatusOr<NotificationCounts> MarkRead(EntityId user, Micros ts,
                                              ActivityId activity_id) override {
    if (ts < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("timestamp is ", ts, "; it must be >= 0"));
    }
    return absl::NotFoundError(absl::StrCat("notification feed of ", user,
                                            " holds no notification (", ts,
                                            ", ", activity_id, ")"));
  }
  NotificationCounts MarkAllRead(EntityId) override { return {}; }

  absl::StatusOr<FollowResult> Follow(EntityId follower, EntityId followee,
                                      const FollowOptions& options) override {
    if (follower == followee) {
      return absl::InvalidArgumentError(absl::StrCat(
          "entity ", follower, " cannot follow itself (follower == followee)"));
    }
    if (options.backfill.has_value()) {
      if (absl::Status status = internal::ValidateBackfill(*options.backfill);
          !status.ok()) {
        return status;
      }
    }
    const size_t backfill =
        std::min(options.backfill.value_or(options_.default_backfill),
                 options_.max_timeline_length);
    // Order matters; see the file comment.
    absl::StatusOr<Reply> added = client_->RunOne(
        PlainCommand({"ZADD", Key(followee, "fr"), "0", BigEndian(follower)}));
    if (!added.ok()) return added.status();
    absl::StatusOr<Reply> following = client_->RunOne(
        PlainCommand({"ZADD", Key(follower, "fg"), "0", BigEndian(followee)}));
    if (!following.ok()) return following.status();
    if (following->type != Reply::Type::kInteger) {
      return UnexpectedReply("a follow", *following);
    }
    FollowResult result;
    if (following->integer == 0) return result;  // already following
    result.created = true;
    if (backfill == 0) return result;
    absl::StatusOr<std::vector<StoredEntry>> recent =
        Collect(Key(followee, "own"), ReadOrder::kNewestFirst, 0, 0,
                std::numeric_limits<Micros>::max(),
                std::numeric_limits<ActivityId>::max(), backfill);
    if (!recent.ok()) return recent.status();
    const Micros now = Now();
    std::vector<Command> commands;
    commands.reserve(recent->size());
    for (const StoredEntry& entry : *recent) {
      commands.push_back(InsertCommand(Key(follower, "tl"), Key(follower, "fg"),
                                       entry, options_.max_timeline_length, now,
                                       followee));
    }
    absl::StatusOr<InsertResult> copied = RunInserts(std::move(commands));
    if (!copied.ok()) return copied.status();
    result.backfilled = copied->inserted + copied->replaced;
    return result;
  }

  absl::StatusOr<UnfollowResult> Unfollow(EntityId follower,
                                          EntityId followee) override {
    if (follower == followee) {
      return absl::InvalidArgumentError(
          absl::StrCat("entity ", follower,
                       " cannot unfollow itself (follower == followee)"));
    }
    absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
        unfollow_, {Key(follower, "tl"), Key(follower, "fg")},
        {BigEndian(followee)}));
    if (!reply.ok()) return reply.status();
    absl::StatusOr<int64_t> was = IntegerAt(*reply, 0, "an unfollow");
    absl::StatusOr<int64_t> removed = IntegerAt(*reply, 1, "an unfollow");
    if (!was.ok()) return was.status();
    if (!removed.ok()) return removed.status();
    // Also after a follow that was already undone here, so a retry of an
    // Unfollow that failed half-way converges.
    absl::StatusOr<Reply> dropped = client_->RunOne(
        PlainCommand({"ZREM", Key(followee, "fr"), BigEndian(follower)}));
    if (!dropped.ok()) return dropped.status();
    return UnfollowResult{*was != 0, static_cast<size_t>(*removed)};
  }

  absl::StatusOr<EntityPage> Followers(
      EntityId entity, const ListOptions& options) const override {
    return ReadList(/*followers=*/true, entity, options);
  }
  absl::StatusOr<EntityPage> Following(
      EntityId entity, const ListOptions& options) const override {
    return ReadList(/*followers=*/false, entity, options);
  }
  size_t FollowerCount(EntityId entity) const override {
    return Count(Key(entity, "fr"));
  }
  size_t FollowingCount(EntityId entity) const override {
    return Count(Key(entity, "fg"));
  }

  absl::StatusOr<PublishResult> Publish(
      const Activity& activity, const PublishOptions& options) override {
    if (absl::Status status =
            internal::ValidateActivity(activity, options_.max_payload_bytes);
        !status.ok()) {
      return status;
    }
    if (!options.notify.empty()) {
      return absl::UnimplementedError(
          "PublishOptions.notify: notification feeds are not mapped to the "
          "Redis Cluster backend; nothing was published");
    }
    const Micros now = Now();
    InsertOptions expiry_options;
    expiry_options.ttl = activity.ttl;
    absl::StatusOr<Micros> expires_at =
        internal::ResolveExpiry(expiry_options, options_.default_ttl, now);
    if (!expires_at.ok()) return expires_at.status();

    absl::StatusOr<Reply> stored = client_->RunOne(ClusterClient::ScriptCommand(
        store_activity_, ActivityKey(activity.id),
        {absl::StrCat(activity.actor), absl::StrCat(activity.ts),
         activity.payload, absl::StrCat(*expires_at),
         absl::StrCat(KeyTtlMillis(*expires_at, now))}));
    if (!stored.ok()) return stored.status();
    if (stored->type != Reply::Type::kArray || stored->elements.size() != 2) {
      return UnexpectedReply("storing an activity", *stored);
    }
    const std::string& state = stored->elements[0].str;
    if (state == "conflict") {
      return absl::AlreadyExistsError(absl::StrCat(
          "activity id ", activity.id,
          " belongs to a different activity (actor, ts or payload differ)"));
    }
    if (state == "retracted") {
      return absl::FailedPreconditionError(
          absl::StrCat("activity ", activity.id,
                       " was retracted; its id cannot be reused "
                       "until it expires"));
    }
    if (state == "delivered") return PublishResult{};
    absl::StatusOr<int64_t> kept_expiry =
        ParseDecimal(*stored, 1, "storing an activity");
    if (!kept_expiry.ok()) return kept_expiry.status();

    // "new", or "delivering": a publish that did not finish (a failure, or
    // one running now); completing its fan-out again duplicates nothing.
    const StoredEntry entry{activity.ts,  activity.id, activity.actor,
                            *kept_expiry, 0,           {}};
    PublishResult result;
    result.created = true;
    {
      std::vector<Command> commands;
      commands.push_back(InsertCommand(
          Key(activity.actor, "own"), Key(activity.actor, "fg"), entry,
          options_.max_timeline_length, now, std::nullopt));
      commands.push_back(InsertCommand(WorldKey(), WorldKey(), entry,
                                       options_.world_timeline_length, now,
                                       std::nullopt));
      absl::StatusOr<InsertResult> own = RunInserts(std::move(commands));
      if (!own.ok()) return own.status();
    }
    absl::Status walked = ForEachFollowerChunk(
        activity.actor, [&](const std::vector<EntityId>& followers) {
          std::vector<Command> commands;
          commands.reserve(followers.size());
          for (EntityId follower : followers) {
            commands.push_back(InsertCommand(
                Key(follower, "tl"), Key(follower, "fg"), entry,
                options_.max_timeline_length, now, activity.actor));
          }
          absl::StatusOr<InsertResult> copied = RunInserts(std::move(commands));
          if (!copied.ok()) return copied.status();
          result.fanned_out += followers.size();
          return absl::OkStatus();
        });
    if (!walked.ok()) return walked;
    absl::StatusOr<Reply> finished =
        client_->RunOne(ClusterClient::ScriptCommand(
            finish_publish_, ActivityKey(activity.id), {}));
    if (!finished.ok()) return finished.status();
    if (finished->str == "retracting" || finished->str == "retracted") {
      // A Retract ran during the fan-out and may have missed copies made
      // after it passed: remove them as it would.
      if (absl::Status status = RemoveCopies(entry); !status.ok()) {
        return status;
      }
    }
    return result;
  }

  void WaitForFanout() override {}

  absl::Status Retract(ActivityId activity_id) override {
    absl::StatusOr<Reply> reply = client_->RunOne(
        ClusterClient::ScriptCommand(retract_, ActivityKey(activity_id), {}));
    if (!reply.ok()) return reply.status();
    if (reply->type != Reply::Type::kArray || reply->elements.size() != 4) {
      return UnexpectedReply("a retract", *reply);
    }
    if (reply->elements[0].str == "missing") {
      return absl::NotFoundError(
          absl::StrCat("no activity with id ", activity_id,
                       " (never published, or expired)"));
    }
    absl::StatusOr<int64_t> actor = ParseDecimal(*reply, 1, "a retract");
    absl::StatusOr<int64_t> ts = ParseDecimal(*reply, 2, "a retract");
    absl::StatusOr<int64_t> expires_at = ParseDecimal(*reply, 3, "a retract");
    if (!actor.ok()) return actor.status();
    if (!ts.ok()) return ts.status();
    if (!expires_at.ok()) return expires_at.status();
    // A retract that finished before: retracting twice is a no-op, even
    // if an entry with the key was put back since.
    if (reply->elements[0].str == "retracted") return absl::OkStatus();
    // Also when a retract before did not finish ("retracting"): the retry
    // finishes it. Removing what is gone changes nothing.
    const StoredEntry entry{
        *ts, activity_id, static_cast<EntityId>(*actor), *expires_at, 0, {}};
    if (absl::Status status = RemoveCopies(entry); !status.ok()) return status;
    return client_
        ->RunOne(ClusterClient::ScriptCommand(finish_retract_,
                                              ActivityKey(activity_id), {}))
        .status();
  }

  size_t EvictExpired(size_t) override { return 0; }

  EngineStats Stats() const override { return EngineStats{}; }

  const EngineOptions& options() const override { return options_; }

 private:
  Micros Now() const { return options_.clock->Now(); }

  std::string Key(EntityId entity, absl::string_view kind) const {
    return absl::StrCat(client_->options().key_prefix, ":{", entity,
                        "}:", kind);
  }
  std::string WorldKey() const {
    return absl::StrCat(client_->options().key_prefix, ":{world}:tl");
  }
  std::string ActivityKey(ActivityId id) const {
    return absl::StrCat(client_->options().key_prefix, ":{a", id, "}:act");
  }
  std::string FeedKey(Feed feed, EntityId owner) const {
    switch (feed) {
      case Feed::kHome:
        return Key(owner, "tl");
      case Feed::kOwn:
        return Key(owner, "own");
      case Feed::kWorld:
        break;
    }
    return WorldKey();
  }

  static int64_t KeyTtlMillis(Micros expires_at, Micros now) {
    // Capped so that adding the margin cannot overflow (an expires_at near
    // Micros max on a clock near 0); a key kept kMaxTtl is kept for good.
    const Micros left = std::clamp<Micros>(expires_at - now, 0, kMaxTtl);
    return (left + kKeyExpiryMargin) / kMicrosPerMillisecond + 1;
  }

  static Command PlainCommand(std::vector<std::string> args) {
    Command command;
    command.slot = redis::KeySlot(args[1]);
    command.args = std::move(args);
    return command;
  }

  Command InsertCommand(std::string timeline_key, std::string following_key,
                        const StoredEntry& entry, size_t cap, Micros now,
                        std::optional<EntityId> only_if_following) const {
    return ClusterClient::ScriptCommand(
        insert_, {std::move(timeline_key), std::move(following_key)},
        {redis::EntryScore(entry.ts), redis::EncodeEntryMember(entry),
         absl::StrCat(cap), absl::StrCat(KeyTtlMillis(entry.expires_at, now)),
         only_if_following.has_value() ? BigEndian(*only_if_following)
                                       : std::string()});
  }

  absl::StatusOr<InsertResult> RunInserts(std::vector<Command> commands) {
    InsertResult result;
    if (commands.empty()) return result;
    absl::StatusOr<std::vector<Reply>> replies =
        client_->Run(std::move(commands));
    if (!replies.ok()) return replies.status();
    for (const Reply& reply : *replies) {
      if (reply.type != Reply::Type::kArray || reply.elements.size() != 5) {
        return UnexpectedReply("a timeline insert", reply);
      }
      result.inserted += reply.elements[0].integer;
      result.replaced += reply.elements[1].integer;
      result.rejected_by_cap += reply.elements[2].integer;
      result.trimmed += reply.elements[3].integer;
    }
    return result;
  }

  // Up to `want` visible entries of the feed at `key` whose keys lie in
  // [(lo_ts, lo_id), (hi_ts, hi_id)], in `order`.
  absl::StatusOr<std::vector<StoredEntry>> Collect(
      std::string key, ReadOrder order, Micros lo_ts, ActivityId lo_id,
      Micros hi_ts, ActivityId hi_id, size_t want) const {
    const Micros now = Now();
    std::vector<StoredEntry> entries;
    absl::StatusOr<bool> complete = CollectPlain(
        key, order, lo_ts, lo_id, hi_ts, hi_id, want, now, &entries);
    if (!complete.ok()) return complete.status();
    if (*complete) return entries;
    // Expired or out-of-range members in the way: the script skips them
    // (removing the expired ones) in one atomic pass.
    absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
        read_, std::move(key),
        {order == ReadOrder::kNewestFirst ? "rev" : "fwd",
         redis::EntryScore(lo_ts), redis::EntryScore(hi_ts),
         redis::EntryKeyBytes(lo_ts, lo_id), redis::EntryKeyBytes(hi_ts, hi_id),
         absl::StrCat(want), BigEndian(static_cast<uint64_t>(now))}));
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

  // The common case without a script: one ZRANGE BYSCORE of a few more
  // members than wanted, filtered here. Returns true when that settles the
  // answer: `want` visible entries in the key range, or the score range
  // exhausted with nothing expired met. False when an expired member was
  // met (the script must reclaim it) or too many members fell outside the
  // key range (a cursor's or window's bound inside a timestamp shared by
  // several entries); `entries` is then to be discarded.
  absl::StatusOr<bool> CollectPlain(const std::string& key, ReadOrder order,
                                    Micros lo_ts, ActivityId lo_id,
                                    Micros hi_ts, ActivityId hi_id, size_t want,
                                    Micros now,
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
    absl::StatusOr<Reply> reply =
        client_->RunOne(PlainCommand(std::move(args)));
    if (!reply.ok()) return reply.status();
    if (reply->type != Reply::Type::kArray) {
      return UnexpectedReply("a feed read", *reply);
    }
    auto below = [](Micros a_ts, ActivityId a_id, Micros b_ts,
                    ActivityId b_id) {
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

  static absl::Status ForeignMember() {
    return absl::InternalError(
        "a feed in redis holds a member this backend did not write");
  }

  absl::StatusOr<Page> ReadFeed(Feed feed, EntityId owner,
                                const ReadOptions& options) const {
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
    auto below = [](Micros a_ts, ActivityId a_id, Micros b_ts,
                    ActivityId b_id) {
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
            absl::StrCat("cursor belongs to the ", FeedName(cursor->feed),
                         " of ", cursor->owner, ", not of ", owner));
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
        Collect(FeedKey(feed, owner), options.order, lo_ts, lo_id, hi_ts, hi_id,
                options.limit + 1);
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

  absl::Status Hydrate(std::vector<StoredEntry>* entries) const {
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

  absl::StatusOr<EntityPage> ReadList(bool followers, EntityId entity,
                                      const ListOptions& options) const {
    if (absl::Status status =
            internal::ValidateList(options, options_.max_page_size);
        !status.ok()) {
      return status;
    }
    std::string start = "-";
    if (!options.cursor.empty()) {
      absl::StatusOr<FollowListCursor> cursor =
          DecodeFollowListCursor(options.cursor);
      if (!cursor.ok()) return cursor.status();
      if (cursor->followers != followers || cursor->entity != entity) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cursor belongs to the ",
            cursor->followers ? "follower" : "followee", " list of ",
            cursor->entity, ", not to the ",
            followers ? "follower" : "followee", " list of ", entity));
      }
      start = absl::StrCat("(", BigEndian(cursor->last));
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

  // Up to `count` ids of the set at `key` from the lexical bound `start`
  // on; ids are 8-byte big-endian members of score 0, so lexical order is
  // id order.
  absl::StatusOr<std::vector<EntityId>> ListIds(const std::string& key,
                                                const std::string& start,
                                                size_t count) const {
    absl::StatusOr<Reply> reply =
        client_->RunOne(PlainCommand({"ZRANGE", key, start, "+", "BYLEX",
                                      "LIMIT", "0", absl::StrCat(count)}));
    if (!reply.ok()) return reply.status();
    if (reply->type != Reply::Type::kArray) {
      return UnexpectedReply("a follow list read", *reply);
    }
    std::vector<EntityId> ids;
    ids.reserve(reply->elements.size());
    for (const Reply& member : reply->elements) {
      if (member.str.size() != 8) {
        return absl::InternalError(
            "a follow list in redis holds a member this backend did not "
            "write");
      }
      ids.push_back(redis::ReadBigEndian(member.str));
    }
    return ids;
  }

  template <typename Visit>
  absl::Status ForEachFollowerChunk(EntityId actor, Visit visit) const {
    const std::string key = Key(actor, "fr");
    std::string start = "-";
    while (true) {
      absl::StatusOr<std::vector<EntityId>> chunk =
          ListIds(key, start, kFollowerChunk);
      if (!chunk.ok()) return chunk.status();
      if (chunk->empty()) return absl::OkStatus();
      if (absl::Status status = visit(*chunk); !status.ok()) return status;
      if (chunk->size() < kFollowerChunk) return absl::OkStatus();
      start = absl::StrCat("(", BigEndian(chunk->back()));
    }
  }

  // Removes the entry with `entry`'s key from its actor's own feed, the
  // world feed and the timelines of the actor's followers. By key, not by
  // member: a follower's copy may since have been overwritten by an Insert
  // with the same key (another actor or expiry), and it is still the
  // activity's entry, as the in-process engine sees it.
  absl::Status RemoveCopies(const StoredEntry& entry) {
    auto remove = [&](std::string key) {
      return ClusterClient::ScriptCommand(
          remove_, std::move(key),
          {redis::EntryScore(entry.ts),
           redis::EntryKeyBytes(entry.ts, entry.activity_id)});
    };
    std::vector<Command> commands;
    commands.push_back(remove(Key(entry.actor, "own")));
    commands.push_back(remove(WorldKey()));
    absl::StatusOr<std::vector<Reply>> done = client_->Run(std::move(commands));
    if (!done.ok()) return done.status();
    return ForEachFollowerChunk(
        entry.actor, [&](const std::vector<EntityId>& followers) {
          std::vector<Command> removals;
          removals.reserve(followers.size());
          for (EntityId follower : followers) {
            removals.push_back(remove(Key(follower, "tl")));
          }
          return client_->Run(std::move(removals)).status();
        });
  }

  size_t Count(const std::string& key) const {
    absl::StatusOr<Reply> reply = client_->RunOne(PlainCommand({"ZCARD", key}));
    // The interface has no room for an error here; an unreachable node
    // counts as nothing known.
    if (!reply.ok() || reply->type != Reply::Type::kInteger) return 0;
    return static_cast<size_t>(reply->integer);
  }

  const std::unique_ptr<ClusterClient> client_;
  const EngineOptions options_;
  redis::Script insert_;
  redis::Script read_;
  redis::Script remove_;
  redis::Script unfollow_;
  redis::Script store_activity_;
  redis::Script finish_publish_;
  redis::Script retract_;
  redis::Script finish_retract_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<FeedEngine>> CreateRedisClusterFeedEngine(
    const RedisClusterOptions& cluster, EngineOptions engine) {
  absl::StatusOr<EngineOptions> resolved =
      internal::ResolveEngineOptions(std::move(engine));
  if (!resolved.ok()) return resolved.status();
  if (resolved->hybrid_fanout_threshold != 0) {
    return absl::InvalidArgumentError(
        "EngineOptions.hybrid_fanout_threshold must be 0 for the Redis "
        "Cluster backend: merging at read time is not mapped to Redis");
  }
  if (resolved->aggregation.enabled) {
    return absl::InvalidArgumentError(
        "EngineOptions.aggregation.enabled must be false for the Redis "
        "Cluster backend: grouped feeds are not mapped to Redis");
  }
  if (resolved->change_stream != nullptr) {
    return absl::InvalidArgumentError(
        "EngineOptions.change_stream must be null for the Redis Cluster "
        "backend: the cluster keeps the data (use Redis replication)");
  }
  absl::StatusOr<std::unique_ptr<ClusterClient>> client =
      ClusterClient::Connect(cluster);
  if (!client.ok()) return client.status();
  auto engine_impl = std::make_unique<RedisFeedEngine>(*std::move(client),
                                                       *std::move(resolved));
  if (absl::Status status = engine_impl->LoadScripts(); !status.ok()) {
    return status;
  }
  return engine_impl;
}

}  // namespace feedcore
