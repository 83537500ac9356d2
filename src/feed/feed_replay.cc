// FeedEngineImpl::ApplyChange: replaying change records.
//
// Each record describes one change made under one lock in the source, and
// records of one domain arrive in the order they were made, so applying
// them one by one reproduces every piece of state exactly. The source's
// transient bookkeeping (followers still being unfollowed) is not
// reproduced: it only matters to calls in flight in the source.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {
namespace {

absl::Status Malformed(const ChangeRecord& record, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("change record ", record.sequence, " (kind ",
                   static_cast<int>(record.kind), "): ", what));
}

}  // namespace

absl::Status FeedEngineImpl::ApplyChange(const ChangeRecord& r) {
  const size_t shard_count = options_.shards;
  if (r.domain >= domain_count()) {
    return Malformed(r, absl::StrCat("domain ", r.domain, " is not below ",
                                     domain_count(), " (2 x shards)"));
  }
  if (static_cast<uint8_t>(r.feed) >
      static_cast<uint8_t>(FeedType::kNotification)) {
    return Malformed(r, "unknown feed type");
  }
  const FeedType feed = r.feed;
  // The shard a timeline lives in: the world feed's slices by domain.
  auto shard_of = [&](EntityId owner) -> Shard& {
    return shards_[feed == FeedType::kWorld ? r.domain : ShardIndex(owner)];
  };
  if ((r.kind >= ChangeKind::kBoardCreate &&
       r.kind <= ChangeKind::kBoardClear) ||
      r.kind == ChangeKind::kBoardRename) {
    return Malformed(r, "a leaderboard record is not for the feed engine");
  }
  const bool is_store_record = r.kind == ChangeKind::kActivityStore ||
                               r.kind == ChangeKind::kActivityRetract ||
                               r.kind == ChangeKind::kActivityExpire ||
                               r.kind == ChangeKind::kCountersSet ||
                               r.kind == ChangeKind::kActivityEdit ||
                               r.kind == ChangeKind::kReactionAdd ||
                               r.kind == ChangeKind::kReactionRemove;
  if (is_store_record != (r.domain >= shard_count)) {
    return Malformed(r, "domain does not match the kind of record");
  }
  switch (r.kind) {
    case ChangeKind::kTimelinePut:
    case ChangeKind::kTimelineRemove: {
      if (r.owners.empty()) return Malformed(r, "no owners");
      if (r.entry.ts < 0) return Malformed(r, "timestamp below zero");
      if (feed == FeedType::kWorld &&
          (r.owners.size() != 1 || r.owners[0] != 0)) {
        return Malformed(r, "the world feed's owner is 0");
      }
      const bool put = r.kind == ChangeKind::kTimelinePut;
      const EntryKey key{r.entry.ts, r.entry.activity_id};
      for (const EntityId owner : r.owners) {
        Shard& shard = shard_of(owner);
        WriterLock lock(&shard.mu());
        if (put) {
          InsertResult ignored;
          shard.Put({owner, feed}, r.entry, &ignored);
        } else {
          shard.RemoveKey({owner, feed}, key);
        }
        if (log_ != nullptr) {
          shard.LogEntries(r.kind, feed, absl::MakeConstSpan(&owner, 1),
                           r.entry);
        }
      }
      return absl::OkStatus();
    }
    case ChangeKind::kTimelineRemoveActor: {
      if (feed != FeedType::kHome && feed != FeedType::kNotification) {
        return Malformed(r, "actors leave home and notification feeds only");
      }
      Shard& shard = ShardOf(r.entity);
      WriterLock lock(&shard.mu());
      shard.RemoveActor(r.entity, r.other, feed);
      if (log_ != nullptr) {
        ChangeRecord copy;
        copy.kind = r.kind;
        copy.feed = feed;
        copy.entity = r.entity;
        copy.other = r.other;
        shard.Log(std::move(copy));
      }
      return absl::OkStatus();
    }
    case ChangeKind::kTimelineExpire: {
      if (feed == FeedType::kWorld && r.entity != 0) {
        return Malformed(r, "the world feed's owner is 0");
      }
      Shard& shard = shard_of(r.entity);
      WriterLock lock(&shard.mu());
      for (const EntryKey& key : r.keys) {
        shard.RemoveKey({r.entity, feed}, {key.ts, key.activity_id});
      }
      if (log_ != nullptr) {
        ChangeRecord copy;
        copy.kind = r.kind;
        copy.feed = r.feed;
        copy.entity = r.entity;
        copy.keys = r.keys;
        shard.Log(std::move(copy));
      }
      return absl::OkStatus();
    }
    case ChangeKind::kActivityStore: {
      if (r.entry.ts < 0) return Malformed(r, "timestamp below zero");
      StoredActivity activity;
      activity.actor = r.entry.actor;
      activity.ts = r.entry.ts;
      activity.expires_at = r.entry.expires_at;
      activity.payload = r.entry.payload;
      activity.edited_at = r.entry.edited_at;
      activity.kind = r.entry.kind;
      activity.repost_of = r.other;
      activity.copied = !r.merged_at_read;
      activity.notified = r.owners;
      store_.Restore(r.entry.activity_id, activity);
      return absl::OkStatus();
    }
    case ChangeKind::kActivityRetract: {
      bool already = false;
      // Unknown ids cannot happen in an exact replay; like a repeated
      // retract they change nothing.
      store_.Retract(r.entry.activity_id, &already).IgnoreError();
      return absl::OkStatus();
    }
    case ChangeKind::kActivityExpire:
      for (const EntryKey& key : r.keys) store_.Drop(key.activity_id);
      return absl::OkStatus();
    case ChangeKind::kNotificationSeen:
    case ChangeKind::kNotificationRead: {
      const bool read = r.kind == ChangeKind::kNotificationRead;
      if (r.feed != FeedType::kNotification) {
        return Malformed(r, "not about a notification feed");
      }
      if (r.keys.size() > (read ? 1 : 0)) return Malformed(r, "too many keys");
      Shard& shard = ShardOf(r.entity);
      WriterLock lock(&shard.mu());
      Timeline* notifications =
          shard.FindTimeline({r.entity, FeedType::kNotification});
      // The source marked a feed that existed; an exact replay has it too.
      if (notifications == nullptr) return absl::OkStatus();
      const EntryKey key = r.keys.empty()
                               ? EntryKey{}
                               : EntryKey{r.keys[0].ts, r.keys[0].activity_id};
      shard.Mark(*notifications, r.entity, read,
                 r.keys.empty() ? nullptr : &key);
      return absl::OkStatus();
    }
    case ChangeKind::kFollowerAdd:
    case ChangeKind::kFollowerRemove:
    case ChangeKind::kFollowingAdd:
    case ChangeKind::kFollowingRemove:
    case ChangeKind::kMergeAdd:
    case ChangeKind::kActorMode: {
      if (r.kind != ChangeKind::kActorMode && r.entity == r.other) {
        return Malformed(r, "an entity cannot follow itself");
      }
      if (static_cast<uint8_t>(r.mode) >
          static_cast<uint8_t>(ActorMode::kMerged)) {
        return Malformed(r, "unknown actor mode");
      }
      const bool merges =
          r.kind == ChangeKind::kMergeAdd ||
          (r.kind == ChangeKind::kFollowingAdd && r.merged_at_read);
      if (merges && r.keys.size() != 1) {
        return Malformed(r, "a merged followee needs its boundary in keys[0]");
      }
      const EntryKey boundary =
          merges ? EntryKey{r.keys[0].ts, r.keys[0].activity_id} : EntryKey{};
      // A follow of fewer than every kind carries them in `score`.
      const uint64_t kinds = static_cast<uint64_t>(r.score);
      const bool filtered = r.score != 0;
      Shard& shard = ShardOf(r.entity);
      WriterLock lock(&shard.mu());
      const FollowerEdge edge{static_cast<uint32_t>(ShardIndex(r.other)),
                              r.other};
      switch (r.kind) {
        case ChangeKind::kFollowerAdd:
          if (GraphNode* node = shard.AddFollower(r.entity, edge);
              node != nullptr && filtered) {
            node->relations.follower_kinds[r.other] = kinds;
          }
          break;
        case ChangeKind::kFollowerRemove:
          if (GraphNode* node = shard.RemoveFollower(r.entity, edge);
              node != nullptr && r.merged_at_read) {
            node->history_kept.insert(edge);
          }
          break;
        case ChangeKind::kFollowingAdd: {
          GraphNode& node = shard.Node(r.entity);
          node.following.insert(r.other);
          if (filtered) node.relations.follow_kinds[r.other] = kinds;
          if (options_.inactive_after > 0) {
            node.last_read.Store(options_.clock->Now());
          }
          if (r.merged_at_read) node.AddMerged(r.other, boundary);
          break;
        }
        case ChangeKind::kFollowingRemove: {
          GraphNode* node = shard.FindNode(r.entity);
          if (node != nullptr) {
            node->following.erase(r.other);
            node->relations.follow_kinds.erase(r.other);
            node->EraseMerged(r.other);
          }
          break;
        }
        case ChangeKind::kMergeAdd: {
          GraphNode* node = shard.FindNode(r.entity);
          // A record for a followee merged already moves its boundary
          // (Unmute, Unblock).
          if (node != nullptr && node->following.contains(r.other) &&
              !node->AddMerged(r.other, boundary)) {
            node->SetMergedBoundary(r.other, boundary);
          }
          break;
        }
        default: {  // kActorMode
          GraphNode& node = shard.Node(r.entity);
          node.becoming_hybrid = r.mode == ActorMode::kBecomingMerged;
          node.hybrid = r.mode == ActorMode::kMerged;
          break;
        }
      }
      shard.MaybeEraseNode(r.entity);
      if (log_ != nullptr) {
        if (r.kind == ChangeKind::kActorMode) {
          shard.LogMode(r.entity, r.mode);
        } else {
          ChangeRecord copy;
          copy.kind = r.kind;
          copy.entity = r.entity;
          copy.other = r.other;
          copy.merged_at_read = r.merged_at_read;
          copy.keys = r.keys;
          shard.Log(std::move(copy));
        }
      }
      return absl::OkStatus();
    }
    case ChangeKind::kReadMarkerSet:
    case ChangeKind::kMentionAdd:
      return ApplyMarkerChange(r);
    case ChangeKind::kBlockAdd:
    case ChangeKind::kBlockRemove:
    case ChangeKind::kMuteAdd:
    case ChangeKind::kMuteRemove:
      return ApplyRelationChange(r);
    case ChangeKind::kCountersSet:
      return ApplyCountersChange(r);
    case ChangeKind::kReactionAdd:
    case ChangeKind::kReactionRemove:
      return ApplyReactionChange(r);
    case ChangeKind::kDormantFollowee:
    case ChangeKind::kDormantFollower:
      return ApplyInactiveChange(r);
    case ChangeKind::kActivityEdit:
    case ChangeKind::kPinAdd:
    case ChangeKind::kPinRemove:
      return ApplyEditChange(r);
    case ChangeKind::kListSet:
    case ChangeKind::kListDelete:
    case ChangeKind::kListMemberAdd:
    case ChangeKind::kListMemberRemove:
      return ApplyListChange(r);
    case ChangeKind::kBoardCreate:
    case ChangeKind::kBoardDrop:
    case ChangeKind::kScoreSet:
    case ChangeKind::kScoreRemove:
    case ChangeKind::kBoardClear:
    case ChangeKind::kBoardRename:
      return Malformed(r, "a leaderboard record is not for the feed engine");
    case ChangeKind::kNameAssign:
      return Malformed(r, "a name record is not for the feed engine");
    case ChangeKind::kWriteGroupTag:
      return Malformed(r, "a write-group record is not for the feed engine");
  }
  return Malformed(r, "unknown kind");
}

}  // namespace feedcore::internal
