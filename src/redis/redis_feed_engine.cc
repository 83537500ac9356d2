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
#include "redis/redis_feed_engine.h"

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
#include "contract/feed_arguments.h"
#include "contract/group_pages.h"
#include "feedcore/redis_cluster.h"
#include "redis/cluster_client.h"
#include "redis/counter_scripts.h"
#include "redis/edit_scripts.h"
#include "redis/entry_codec.h"
#include "redis/feed_scripts.h"
#include "redis/hybrid_scripts.h"
#include "redis/marker_scripts.h"
#include "redis/notification_scripts.h"
#include "redis/relation_scripts.h"

namespace feedcore::redis {
namespace {

// A feed's key expires this long after its newest entry does, so a feed
// whose entries have all expired disappears from Redis on its own; the
// margin keeps Redis's clock from ever dropping an entry that the engine's
// clock still shows.
constexpr Micros kKeyExpiryMargin = 10 * kMicrosPerMinute;

// Followers read per round trip when a publish or retract walks them.
// Their timelines go out one script call per slot, so a chunk must be
// several times the 16,384 slots for the calls to serve several timelines
// each (eight on average here); it costs a few tens of MiB while it lasts.
constexpr size_t kFollowerChunk = 131072;

absl::StatusOr<int64_t> ParseDecimal(const Reply& reply, size_t index,
                                     absl::string_view what) {
  int64_t value = 0;
  if (reply.type != Reply::Type::kArray || reply.elements.size() <= index ||
      !absl::SimpleAtoi(reply.elements[index].str, &value)) {
    return UnexpectedReply(what, reply);
  }
  return value;
}

}  // namespace

absl::Status UnexpectedReply(absl::string_view what, const Reply& reply) {
  return absl::InternalError(
      absl::StrCat("unexpected reply from redis to ", what,
                   reply.is_error() ? ": " + reply.str : std::string()));
}

absl::Status NoActivityKinds(absl::string_view what) {
  return absl::UnimplementedError(
      absl::StrCat(what,
                   " is not available on the Redis Cluster backend, "
                   "which keeps no activity kinds"));
}

absl::StatusOr<std::vector<int64_t>> LeadingIntegers(const Reply& reply,
                                                     size_t n,
                                                     absl::string_view what) {
  if (reply.type != Reply::Type::kArray || reply.elements.size() < n) {
    return UnexpectedReply(what, reply);
  }
  std::vector<int64_t> values;
  values.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (reply.elements[i].type != Reply::Type::kInteger) {
      return UnexpectedReply(what, reply);
    }
    values.push_back(reply.elements[i].integer);
  }
  return values;
}

absl::Status RedisFeedEngine::LoadScripts() {
  const std::pair<redis::Script*, const char*> scripts[] = {
      {&insert_, redis::kInsertScript},
      {&read_, redis::kReadScript},
      {&remove_, redis::kRemoveScript},
      {&unfollow_, redis::kUnfollowScript},
      {&store_activity_, redis::kStoreActivityScript},
      {&finish_publish_, redis::kFinishPublishScript},
      {&retract_, redis::kRetractScript},
      {&finish_retract_, redis::kFinishRetractScript},
      {&set_marker_, redis::kSetMarkerScript},
      {&note_publish_, redis::kNotePublishScript},
      {&notify_, redis::kNotifyScript},
      {&unnotify_, redis::kUnnotifyScript},
      {&read_notifications_, redis::kReadNotificationsScript},
      {&mark_notifications_, redis::kMarkNotificationsScript},
      {&add_follower_, redis::kAddFollowerScript},
      {&merge_followee_, redis::kMergeFolloweeScript},
      {&increment_counter_, redis::kIncrementCounterScript},
      {&date_counters_, redis::kDateCountersScript},
      {&follow_edge_, redis::kFollowEdgeScript},
      {&block_, redis::kBlockScript},
      {&mute_, redis::kMuteScript},
      {&unmute_, redis::kUnmuteScript},
      {&merged_followees_, redis::kMergedFolloweesScript},
      {&edit_activity_, redis::kEditActivityScript},
      {&pin_, redis::kPinScript},
      {&unpin_, redis::kUnpinScript},
  };
  for (const auto& [script, body] : scripts) {
    absl::StatusOr<redis::Script> loaded = client_->LoadScript(body);
    if (!loaded.ok()) return loaded.status();
    *script = *loaded;
  }
  return absl::OkStatus();
}

absl::StatusOr<InsertResult> RedisFeedEngine::InsertFanout(
    absl::Span<const EntityId> owners, const TimelineEntry& entry,
    const InsertOptions& options) {
  const Micros now = Now();
  absl::StatusOr<Micros> expires_at =
      internal::ResolveExpiry(options, options_.default_ttl, now);
  if (!expires_at.ok()) return expires_at.status();
  if (absl::Status status = internal::ValidateEntry(entry); !status.ok()) {
    return status;
  }
  if (entry.kind != 0) return NoActivityKinds("TimelineEntry.kind");
  const StoredEntry stored{entry.ts,    entry.activity_id,      entry.actor,
                           *expires_at, KeptGroup(entry.group), {}};
  return RunInserts(InsertCommands(HomeTimelineKeys(owners), stored,
                                   options_.max_timeline_length, now,
                                   /*only_if_following=*/std::nullopt));
}

absl::StatusOr<InsertResult> RedisFeedEngine::InsertBatch(
    absl::Span<const OwnedEntry> entries, const InsertOptions& options) {
  const Micros now = Now();
  absl::StatusOr<Micros> expires_at =
      internal::ResolveExpiry(options, options_.default_ttl, now);
  if (!expires_at.ok()) return expires_at.status();
  for (const OwnedEntry& owned : entries) {
    if (absl::Status status = internal::ValidateEntry(owned.entry);
        !status.ok()) {
      return status;
    }
    if (owned.entry.kind != 0) return NoActivityKinds("TimelineEntry.kind");
  }
  std::vector<Command> commands;
  commands.reserve(entries.size());
  for (const OwnedEntry& owned : entries) {
    const StoredEntry stored{
        owned.entry.ts, owned.entry.activity_id,      owned.entry.actor,
        *expires_at,    KeptGroup(owned.entry.group), {}};
    commands.push_back(InsertCommand(
        Key(owned.owner, "tl"), Key(owned.owner, "fg"), stored,
        options_.max_timeline_length, now, /*only_if_following=*/std::nullopt));
  }
  return RunInserts(std::move(commands));
}

absl::Status RedisFeedEngine::Remove(EntityId owner, const EntryKey& key) {
  if (absl::Status bad = internal::ValidateEntryKey(key, "key"); !bad.ok()) {
    return bad;
  }
  absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
      remove_, Key(owner, "tl"),
      {redis::EntryScore(key.ts), redis::EntryKeyBytes(key)}));
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kInteger) {
    return UnexpectedReply("a timeline remove", *reply);
  }
  if (reply->integer == 0) return internal::NoEntryWithKey(owner, key);
  return absl::OkStatus();
}

absl::StatusOr<PublishResult> RedisFeedEngine::Publish(
    const Activity& activity, const PublishOptions& options) {
  if (absl::Status status = internal::ValidateActivity(
          activity, options_.max_payload_bytes, options_.reposts);
      !status.ok()) {
    return status;
  }
  if (absl::Status status = internal::ValidateNotify(options); !status.ok()) {
    return status;
  }
  if (activity.kind != 0) return NoActivityKinds("Activity.kind");
  if (activity.repost_of != 0) return NoActivityKinds("Activity.repost_of");
  if (!options.mentions.empty()) {
    return absl::UnimplementedError(
        "PublishOptions.mentions is not available on the Redis Cluster "
        "backend (ReadMarker::mentions stays 0 there)");
  }
  const Micros now = Now();
  InsertOptions expiry_options;
  expiry_options.ttl = activity.ttl;
  absl::StatusOr<Micros> expires_at =
      internal::ResolveExpiry(expiry_options, options_.default_ttl, now);
  if (!expires_at.ok()) return expires_at.status();

  std::vector<EntityId> recipients(options.notify.begin(),
                                   options.notify.end());
  std::sort(recipients.begin(), recipients.end());
  recipients.erase(std::unique(recipients.begin(), recipients.end()),
                   recipients.end());
  // The recipients are recorded with the activity, before any is notified,
  // so that a Retract running from then on finds every feed the
  // notification may reach.
  std::vector<std::string> store_args = {
      absl::StrCat(activity.actor), absl::StrCat(activity.ts), activity.payload,
      absl::StrCat(*expires_at), absl::StrCat(KeyTtlMillis(*expires_at, now))};
  store_args.reserve(store_args.size() + recipients.size());
  for (EntityId recipient : recipients) {
    store_args.push_back(absl::StrCat(recipient));
  }
  absl::StatusOr<Reply> stored = client_->RunOne(ClusterClient::ScriptCommand(
      store_activity_, {ActivityKey(activity.id), RecipientsKey(activity.id)},
      std::move(store_args)));
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
  const StoredEntry entry{activity.ts,
                          activity.id,
                          activity.actor,
                          *kept_expiry,
                          internal::TimelineGroupKey(options_, activity),
                          {}};
  PublishResult result;
  result.created = true;
  if (!recipients.empty()) {
    StoredEntry note = entry;
    note.group = internal::NotificationGroupKey(options_, activity);
    absl::StatusOr<size_t> notified = Notify(recipients, note, now);
    if (!notified.ok()) return notified.status();
    result.notified = *notified;
  }
  const std::string key_bytes = redis::EntryKeyBytes(entry.key());
  std::vector<Command> commands;
  commands.push_back(
      InsertCommand(Key(activity.actor, "own"), Key(activity.actor, "fg"),
                    entry, options_.max_timeline_length, now, std::nullopt));
  commands.push_back(InsertCommand(WorldKey(), WorldKey(), entry,
                                   options_.world_timeline_length, now,
                                   std::nullopt));
  // With hybrid fan-out the key is noted in the same round trip, behind the
  // own feed's insert on the actor's node.
  if (hybrid()) {
    commands.push_back(ClusterClient::ScriptCommand(
        note_publish_, Key(activity.actor, "fo"), {key_bytes}));
  }
  absl::StatusOr<std::vector<Reply>> own = client_->Run(std::move(commands));
  if (!own.ok()) return own.status();
  for (size_t i = 0; i < 2; ++i) {
    if ((*own)[i].type != Reply::Type::kArray ||
        (*own)[i].elements.size() != 5) {
      return UnexpectedReply("a timeline insert", (*own)[i]);
    }
  }
  if (hybrid()) {
    const Reply& noted = (*own)[2];
    if (noted.type != Reply::Type::kArray || noted.elements.size() != 2) {
      return UnexpectedReply("noting a publish", noted);
    }
    if (noted.elements[0].str == "merged") {
      result.merged_at_read = true;
      // Followers merge from a boundary at or below the newest key noted
      // before this one: a newer key shows through every merge. An older
      // one (an out-of-order timestamp) is copied to every follower, and
      // the reads of those that merge it too drop the duplicate.
      const std::string& newest = noted.elements[1].str;
      if (newest.empty() || !(key_bytes < newest)) {
        return FinishPublish(entry, result);
      }
    }
  }
  absl::Status walked = ForEachFollowerChunk(
      activity.actor, [&](const std::vector<EntityId>& followers) {
        size_t skipped = 0;
        absl::StatusOr<InsertResult> copied = RunInserts(
            InsertCommands(HomeTimelineKeys(followers), entry,
                           options_.max_timeline_length, now, activity.actor),
            &skipped);
        if (!copied.ok()) return copied.status();
        // Followers who mute the actor (or just unfollowed) got nothing.
        if (!result.merged_at_read) {
          result.fanned_out += followers.size() - skipped;
        }
        return absl::OkStatus();
      });
  if (!walked.ok()) return walked;
  return FinishPublish(entry, result);
}

absl::StatusOr<PublishResult> RedisFeedEngine::FinishPublish(
    const StoredEntry& entry, const PublishResult& result) {
  absl::StatusOr<Reply> finished = client_->RunOne(ClusterClient::ScriptCommand(
      finish_publish_, ActivityKey(entry.activity_id), {}));
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

absl::Status RedisFeedEngine::Retract(ActivityId activity_id) {
  absl::StatusOr<Reply> reply = client_->RunOne(
      ClusterClient::ScriptCommand(retract_, ActivityKey(activity_id), {}));
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kArray || reply->elements.size() != 4) {
    return UnexpectedReply("a retract", *reply);
  }
  if (reply->elements[0].str == "missing") {
    return absl::NotFoundError(absl::StrCat("no activity with id ", activity_id,
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

int64_t RedisFeedEngine::KeyTtlMillis(Micros expires_at, Micros now) {
  // Capped so that adding the margin cannot overflow (an expires_at near
  // Micros max on a clock near 0); a key kept kMaxTtl is kept for good.
  const Micros left = std::clamp<Micros>(expires_at - now, 0, kMaxTtl);
  return (left + kKeyExpiryMargin) / kMicrosPerMillisecond + 1;
}

std::vector<Command> RedisFeedEngine::InsertCommands(
    std::vector<std::string> keys, const StoredEntry& entry, size_t cap,
    Micros now, std::optional<EntityId> only_if_following) const {
  return ClusterClient::ScriptCommandsBySlot(
      insert_, std::move(keys), /*keys_per_group=*/2, kTimelinesPerCall,
      InsertArgs(entry, cap, now, only_if_following));
}

Command RedisFeedEngine::InsertCommand(
    std::string timeline, std::string following, const StoredEntry& entry,
    size_t cap, Micros now, std::optional<EntityId> only_if_following) const {
  return ClusterClient::ScriptCommand(
      insert_, {std::move(timeline), std::move(following)},
      InsertArgs(entry, cap, now, only_if_following));
}

std::vector<std::string> RedisFeedEngine::InsertArgs(
    const StoredEntry& entry, size_t cap, Micros now,
    std::optional<EntityId> only_if_following) {
  return {redis::EntryScore(entry.ts),
          redis::EncodeEntryMember(entry),
          absl::StrCat(cap),
          absl::StrCat(KeyTtlMillis(entry.expires_at, now)),
          only_if_following.has_value() ? BigEndian(*only_if_following)
                                        : std::string(),
          BigEndian(static_cast<uint64_t>(now))};
}

std::vector<std::string> RedisFeedEngine::HomeTimelineKeys(
    absl::Span<const EntityId> owners) const {
  std::vector<std::string> keys;
  keys.reserve(2 * owners.size());
  for (EntityId owner : owners) {
    keys.push_back(Key(owner, "tl"));
    keys.push_back(Key(owner, "fg"));
  }
  return keys;
}

absl::StatusOr<std::vector<InsertResult>> RedisFeedEngine::RunInsertsEach(
    std::vector<Command> commands, size_t* skipped) {
  std::vector<InsertResult> results;
  if (commands.empty()) return results;
  absl::StatusOr<std::vector<Reply>> replies =
      client_->Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  results.reserve(replies->size());
  for (const Reply& reply : *replies) {
    if (reply.type != Reply::Type::kArray || reply.elements.size() != 5) {
      return UnexpectedReply("a timeline insert", reply);
    }
    InsertResult& result = results.emplace_back();
    result.inserted = reply.elements[0].integer;
    result.replaced = reply.elements[1].integer;
    result.rejected_by_cap = reply.elements[2].integer;
    result.trimmed = reply.elements[3].integer;
    if (skipped != nullptr) *skipped += reply.elements[4].integer;
  }
  return results;
}

absl::StatusOr<InsertResult> RedisFeedEngine::RunInserts(
    std::vector<Command> commands, size_t* skipped) {
  absl::StatusOr<std::vector<InsertResult>> each =
      RunInsertsEach(std::move(commands), skipped);
  if (!each.ok()) return each.status();
  InsertResult sum;
  for (const InsertResult& result : *each) {
    sum.inserted += result.inserted;
    sum.replaced += result.replaced;
    sum.rejected_by_cap += result.rejected_by_cap;
    sum.trimmed += result.trimmed;
  }
  return sum;
}

absl::Status RedisFeedEngine::ForEachFollowerChunk(
    EntityId actor,
    absl::FunctionRef<absl::Status(const std::vector<EntityId>&)> visit) const {
  return ForEachIdChunk(Key(actor, "fr"), visit);
}

absl::Status RedisFeedEngine::ForEachIdChunk(
    const std::string& key,
    absl::FunctionRef<absl::Status(const std::vector<EntityId>&)> visit) const {
  std::string start = "-";
  while (true) {
    absl::StatusOr<std::vector<EntityId>> chunk =
        ListIds(key, start, kFollowerChunk);
    if (!chunk.ok()) return chunk.status();
    if (chunk->empty()) return absl::OkStatus();
    if (absl::Status status = visit(*chunk); !status.ok()) return status;
    if (chunk->size() < kFollowerChunk) return absl::OkStatus();
    start = ListStartAfter(chunk->back());
  }
}

absl::Status RedisFeedEngine::RemoveCopies(const StoredEntry& entry) {
  const std::vector<std::string> args = {redis::EntryScore(entry.ts),
                                         redis::EntryKeyBytes(entry.key())};
  std::vector<Command> commands;
  commands.push_back(
      ClusterClient::ScriptCommand(remove_, Key(entry.actor, "own"), args));
  commands.push_back(ClusterClient::ScriptCommand(remove_, WorldKey(), args));
  // The pin goes with the own feed's copy, in the actor's slot. A Pin that
  // read the activity before the retract marked it checks the mark again
  // once it has pinned (redis_feed_edits.cc), so no pin outlives this.
  commands.push_back(ClusterClient::ScriptCommand(
      unpin_, PinKey(entry.actor), {BigEndian(entry.activity_id)}));
  absl::StatusOr<std::vector<Reply>> done = client_->Run(std::move(commands));
  if (!done.ok()) return done.status();
  if (absl::Status status = RemoveNotifications(entry); !status.ok()) {
    return status;
  }
  auto remove = [&](const std::vector<EntityId>& readers) {
    std::vector<std::string> timelines;
    timelines.reserve(readers.size());
    for (EntityId reader : readers) timelines.push_back(Key(reader, "tl"));
    return client_
        ->Run(ClusterClient::ScriptCommandsBySlot(remove_, std::move(timelines),
                                                  /*keys_per_group=*/1,
                                                  kTimelinesPerCall, args))
        .status();
  };
  // The followers, and the former ones that kept their copies
  // (UnfollowOptions::keep_history).
  if (absl::Status status = ForEachIdChunk(Key(entry.actor, "fr"), remove);
      !status.ok()) {
    return status;
  }
  return ForEachIdChunk(Key(entry.actor, "fk"), remove);
}

}  // namespace feedcore::redis

namespace feedcore {

absl::StatusOr<std::unique_ptr<RedisClusterFeedEngine>>
CreateRedisClusterFeedEngine(const RedisClusterOptions& cluster,
                             EngineOptions engine) {
  absl::StatusOr<EngineOptions> resolved =
      internal::ResolveEngineOptions(std::move(engine));
  if (!resolved.ok()) return resolved.status();
  if (resolved->inactive_after != 0) {
    return absl::UnimplementedError(
        "EngineOptions.inactive_after must be 0 for the Redis Cluster "
        "backend: its timelines are Redis keys, which Redis evicts by its "
        "own policies (the backend has no FeedMaintenance)");
  }
  if (resolved->reposts.window != 0) {
    return redis::NoActivityKinds("EngineOptions.reposts.window");
  }
  if (resolved->change_stream != nullptr) {
    return absl::InvalidArgumentError(
        "EngineOptions.change_stream must be null for the Redis Cluster "
        "backend: one ordered record per change, written atomically with "
        "it, would send every write through one stream key on one node "
        "(docs/scale-out.md, \"The change stream\": use Redis persistence "
        "and replicas for the data, and write your own events after each "
        "call)");
  }
  absl::StatusOr<std::unique_ptr<redis::ClusterClient>> client =
      redis::ClusterClient::Connect(cluster);
  if (!client.ok()) return client.status();
  auto engine_impl = std::make_unique<redis::RedisFeedEngine>(
      *std::move(client), *std::move(resolved));
  if (absl::Status status = engine_impl->LoadScripts(); !status.ok()) {
    return status;
  }
  return engine_impl;
}

}  // namespace feedcore
