// FeedEngineImpl's follow graph: Follow (with back-fill, and the switch
// of an actor with many followers to merge-at-read), Unfollow, and the
// follower and followee lists.
//
// An edge lives in two shards: in the followee's node (its followers) and
// in the follower's (its followees). Follow and Unfollow of one follower
// are serialized by its follow stripe and change one shard at a time.
#include <xxhash.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "feed/engine_options.h"
#include "feed/feed_engine_impl.h"
#include "timeline/cursor.h"

namespace feedcore::internal {

std::mutex& FeedEngineImpl::FollowStripe(EntityId follower) {
  return follow_stripes_[XXH3_64bits(&follower, sizeof(follower)) %
                         kFollowStripes];
}

absl::StatusOr<FollowResult> FeedEngineImpl::Follow(
    EntityId follower, EntityId followee, const FollowOptions& options) {
  if (follower == followee) {
    return absl::InvalidArgumentError(absl::StrCat(
        "entity ", follower, " cannot follow itself (follower == followee)"));
  }
  if (options.backfill.has_value()) {
    if (absl::Status status = ValidateBackfill(*options.backfill);
        !status.ok()) {
      return status;
    }
  }
  // More than the cap could not be kept anyway.
  const size_t backfill =
      std::min(options.backfill.value_or(options_.default_backfill),
               options_.max_timeline_length);
  std::lock_guard<std::mutex> serial(FollowStripe(follower));
  if (EitherBlocks(follower, followee)) {
    return absl::FailedPreconditionError(
        absl::StrCat("entity ", follower, " cannot follow ", followee,
                     ": one of them blocks the other"));
  }
  Shard& followee_shard = ShardOf(followee);
  Shard& follower_shard = ShardOf(follower);
  bool followee_hybrid = false;
  bool start_transition = false;
  {
    WriterLock lock(&followee_shard.mu());
    GraphNode* const added = followee_shard.AddFollower(
        followee, {static_cast<uint32_t>(ShardIndex(follower)), follower});
    if (added == nullptr) return FollowResult{};
    GraphNode& node = *added;
    if (log_ != nullptr) {
      followee_shard.LogEdge(ChangeKind::kFollowerAdd, followee, follower);
    }
    followee_hybrid = node.hybrid || node.becoming_hybrid;
    if (!followee_hybrid && options_.hybrid_fanout_threshold > 0 &&
        node.followers.size() > options_.hybrid_fanout_threshold) {
      node.becoming_hybrid = true;
      start_transition = true;
      followee_hybrid = true;
      if (log_ != nullptr) {
        followee_shard.LogMode(followee, ActorMode::kBecomingMerged);
      }
    }
  }
  auto add_following = [&](bool merged) {
    WriterLock lock(&follower_shard.mu());
    GraphNode& node = follower_shard.Node(follower);
    node.following.insert(followee);
    if (merged &&
        std::find(node.hybrid_following.begin(), node.hybrid_following.end(),
                  followee) == node.hybrid_following.end()) {
      node.hybrid_following.push_back(followee);
    }
    if (log_ != nullptr) {
      follower_shard.LogEdge(ChangeKind::kFollowingAdd, follower, followee,
                             merged);
    }
  };
  add_following(followee_hybrid);
  if (start_transition) {
    BecomeHybrid(followee);
  } else if (!followee_hybrid) {
    // Another Follow may have started a transition after the check above
    // and before this follower was in the followee set it told; look again.
    {
      const Shard& shard = followee_shard;
      ReaderLock lock(&shard.mu());
      const GraphNode* node = shard.FindNode(followee);
      followee_hybrid =
          node != nullptr && (node->hybrid || node->becoming_hybrid);
    }
    if (followee_hybrid) add_following(true);
  }
  FollowResult result;
  result.created = true;
  if (!followee_hybrid && backfill > 0) {
    result.backfilled = Backfill(follower, followee, backfill);
  }
  return result;
}

void FeedEngineImpl::BecomeHybrid(EntityId actor) {
  Shard& actor_shard = ShardOf(actor);
  FollowerSnapshot followers;
  {
    const Shard& shard = actor_shard;
    ReaderLock lock(&shard.mu());
    const GraphNode* node = shard.FindNode(actor);
    if (node != nullptr) node->SnapshotFollowers(&followers);
  }
  // Every follower merges the actor before publishes stop copying it;
  // until then entries may be both copied and merged (reads drop the
  // duplicate).
  for (size_t g = 0; g < followers.groups(); ++g) {
    Shard& shard = shards_[followers.shard_of_group[g]];
    WriterLock lock(&shard.mu());
    for (size_t i = followers.starts[g]; i < followers.starts[g + 1]; ++i) {
      GraphNode* node = shard.FindNode(followers.ids[i]);
      if (node == nullptr || !node->following.contains(actor)) {
        continue;  // unfollowed meanwhile
      }
      auto& merged = node->hybrid_following;
      if (std::find(merged.begin(), merged.end(), actor) == merged.end()) {
        merged.push_back(actor);
        if (log_ != nullptr) {
          shard.LogEdge(ChangeKind::kMergeAdd, followers.ids[i], actor);
        }
      }
    }
  }
  WriterLock lock(&actor_shard.mu());
  GraphNode& node = actor_shard.Node(actor);
  node.hybrid = true;
  node.becoming_hybrid = false;
  if (log_ != nullptr) actor_shard.LogMode(actor, ActorMode::kMerged);
}

size_t FeedEngineImpl::Backfill(EntityId follower, EntityId followee,
                                size_t count) {
  // A delivery like a publish: Unfollow/Retract wait for it.
  FanoutTicket ticket(&tracker_, followee);
  std::vector<StoredEntry> recent;
  ShardOf(followee).Collect({followee, FeedType::kOwn}, ReadOrder::kNewestFirst,
                            TimelineKey::Min(), TimelineKey::Max(),
                            options_.clock->Now(), count, &recent);
  // Activities published while the followee was merged at read time reach
  // this follower through the merge, and retracted ones not at all; a
  // Retract that set its tombstone before this check waits for this
  // ticket and purges after us, one that sets it later sees our copy.
  store_.KeepCopyable(&recent);
  if (recent.empty()) return 0;
  Shard& shard = ShardOf(follower);
  WriterLock lock(&shard.mu());
  // Nothing of an actor the follower blocks or mutes is copied; a Mute
  // that set its state before this check purges after this ticket.
  const GraphNode* node = shard.FindNode(follower);
  if (node != nullptr &&
      node->relations.HidesInTimeline(followee, options_.clock->Now())) {
    return 0;
  }
  InsertResult result;
  for (const StoredEntry& entry : recent) {
    shard.Put({follower, FeedType::kHome}, entry, &result);
    if (log_ != nullptr) {
      shard.LogEntries(ChangeKind::kTimelinePut, FeedType::kHome,
                       absl::MakeConstSpan(&follower, 1), entry);
    }
  }
  return result.inserted + result.replaced;
}

absl::StatusOr<UnfollowResult> FeedEngineImpl::Unfollow(
    EntityId follower, EntityId followee,
    [[maybe_unused]] const UnfollowOptions& options) {
  if (follower == followee) {
    return absl::InvalidArgumentError(absl::StrCat(
        "entity ", follower, " cannot unfollow itself (follower == followee)"));
  }
  std::lock_guard<std::mutex> serial(FollowStripe(follower));
  Shard& followee_shard = ShardOf(followee);
  Shard& follower_shard = ShardOf(follower);
  UnfollowResult result;
  {
    WriterLock lock(&followee_shard.mu());
    const FollowerEdge edge{static_cast<uint32_t>(ShardIndex(follower)),
                            follower};
    if (GraphNode* node = followee_shard.RemoveFollower(followee, edge)) {
      result.was_following = true;
      if (log_ != nullptr) {
        followee_shard.LogEdge(ChangeKind::kFollowerRemove, followee, follower);
      }
      // Until its copies are gone, a Retract must still reach them.
      node->unfollowing.insert(edge);
    }
  }
  if (!result.was_following) return result;
  {
    WriterLock lock(&follower_shard.mu());
    GraphNode* node = follower_shard.FindNode(follower);
    if (node != nullptr) {
      node->following.erase(followee);
      auto& merged = node->hybrid_following;
      merged.erase(std::remove(merged.begin(), merged.end(), followee),
                   merged.end());
      follower_shard.MaybeEraseNode(follower);
      if (log_ != nullptr) {
        follower_shard.LogEdge(ChangeKind::kFollowingRemove, follower,
                               followee);
      }
    }
  }
  // A publish or back-fill of the followee that read the old follower set
  // must finish writing before its copies are removed.
  tracker_.WaitForEarlier(followee);
  {
    WriterLock lock(&follower_shard.mu());
    result.removed = follower_shard.RemoveActor(follower, followee);
    if (log_ != nullptr && result.removed > 0) {
      follower_shard.LogEdge(ChangeKind::kTimelineRemoveActor, follower,
                             followee);
    }
  }
  WriterLock lock(&followee_shard.mu());
  GraphNode* node = followee_shard.FindNode(followee);
  if (node != nullptr) {
    node->unfollowing.erase(
        {static_cast<uint32_t>(ShardIndex(follower)), follower});
    followee_shard.MaybeEraseNode(followee);
  }
  return result;
}

absl::StatusOr<EntityPage> FeedEngineImpl::ReadList(
    bool followers, EntityId entity, const ListOptions& options) const {
  if (absl::Status status = ValidateList(options, options_.max_page_size);
      !status.ok()) {
    return status;
  }
  std::optional<FollowListCursor> after;
  if (!options.cursor.empty()) {
    absl::StatusOr<FollowListCursor> cursor =
        DecodeFollowListCursorOf(options.cursor, followers, entity);
    if (!cursor.ok()) return cursor.status();
    after = *cursor;
  }
  EntityPage page;
  const Shard& shard = ShardOf(entity);
  ReaderLock lock(&shard.mu());
  const GraphNode* node = shard.FindNode(entity);
  if (node == nullptr) return page;
  bool more = false;
  if (followers) {
    const auto& set = node->followers;
    auto it = after.has_value() ? set.upper_bound({after->shard, after->last})
                                : set.begin();
    for (; it != set.end(); ++it) {
      if (page.ids.size() == options.limit) {
        more = true;
        break;
      }
      page.ids.push_back(it->second);
    }
    if (more) {
      page.next_cursor = EncodeFollowListCursor(
          {true, entity, static_cast<uint32_t>(ShardIndex(page.ids.back())),
           page.ids.back()});
    }
  } else {
    const auto& set = node->following;
    auto it = after.has_value() ? set.upper_bound(after->last) : set.begin();
    for (; it != set.end(); ++it) {
      if (page.ids.size() == options.limit) {
        more = true;
        break;
      }
      page.ids.push_back(*it);
    }
    if (more) {
      page.next_cursor =
          EncodeFollowListCursor({false, entity, 0, page.ids.back()});
    }
  }
  return page;
}

absl::StatusOr<EntityPage> FeedEngineImpl::Followers(
    EntityId entity, const ListOptions& options) const {
  return ReadList(true, entity, options);
}

absl::StatusOr<EntityPage> FeedEngineImpl::Following(
    EntityId entity, const ListOptions& options) const {
  return ReadList(false, entity, options);
}

absl::StatusOr<size_t> FeedEngineImpl::FollowerCount(EntityId entity) const {
  const Shard& shard = ShardOf(entity);
  ReaderLock lock(&shard.mu());
  const GraphNode* node = shard.FindNode(entity);
  return node == nullptr ? 0 : node->followers.size();
}

absl::StatusOr<size_t> FeedEngineImpl::FollowingCount(EntityId entity) const {
  const Shard& shard = ShardOf(entity);
  ReaderLock lock(&shard.mu());
  const GraphNode* node = shard.FindNode(entity);
  return node == nullptr ? 0 : node->following.size();
}

}  // namespace feedcore::internal
