// FeedEngineImpl's follow graph: Follow and Unfollow (their work, shared
// with FollowMany and UnfollowMany, is in feed_graph_batch.cc), the switch
// of an actor with many followers to merge-at-read, and the follower and
// followee lists.
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
#include "contract/cursor.h"
#include "contract/feed_arguments.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

std::mutex& FeedEngineImpl::FollowStripe(EntityId follower) {
  return follow_stripes_[XXH3_64bits(&follower, sizeof(follower)) %
                         kFollowStripes];
}

absl::StatusOr<FollowResult> FeedEngineImpl::FollowInMemory(
    EntityId follower, EntityId followee, const FollowOptions& options) {
  if (absl::Status status = ValidateFollowPair(follower, followee, "follow");
      !status.ok()) {
    return status;
  }
  absl::StatusOr<size_t> backfill = BackfillCount(options);
  if (!backfill.ok()) return backfill.status();
  const FollowPair pair{follower, followee};
  absl::StatusOr<std::vector<FollowResult>> results = FollowPairs(
      absl::MakeConstSpan(&pair, 1), *backfill,
      options.kinds.has_value() ? std::optional<uint64_t>(options.kinds->kinds)
                                : std::nullopt);
  if (!results.ok()) return results.status();
  const FollowResult result = (*results)[0];
  if (result.blocked) return BlockedFollow(follower, followee);
  return result;
}

void FeedEngineImpl::BecomeHybrid(EntityId actor) {
  Shard& actor_shard = ShardOf(actor);
  FollowerSnapshot followers;
  EntryKey boundary;
  {
    const Shard& shard = actor_shard;
    ReaderLock lock(&shard.mu());
    const GraphNode* node = shard.FindNode(actor);
    if (node != nullptr) {
      node->SnapshotFollowers(&followers);
      boundary = node->MergeBoundaryNow();
    }
  }
  // Every follower merges the actor before publishes stop copying it;
  // until then entries may be both copied and merged (reads drop the
  // duplicate). Each merges from just above everything published so far:
  // the older activities were copied to it. Older ones published later
  // are copied too (feed_publish.cc).
  for (size_t g = 0; g < followers.groups(); ++g) {
    Shard& shard = shards_[followers.shard_of_group[g]];
    WriterLock lock(&shard.mu());
    for (size_t i = followers.starts[g]; i < followers.starts[g + 1]; ++i) {
      GraphNode* node = shard.FindNode(followers.ids[i]);
      if (node == nullptr || !node->following.contains(actor)) {
        continue;  // unfollowed meanwhile
      }
      if (node->AddMerged(actor, boundary) && log_ != nullptr) {
        ChangeRecord record;
        record.kind = ChangeKind::kMergeAdd;
        record.entity = followers.ids[i];
        record.other = actor;
        record.merged_at_read = true;
        record.keys.push_back({boundary.ts, boundary.activity_id});
        shard.Log(std::move(record));
      }
    }
  }
  WriterLock lock(&actor_shard.mu());
  GraphNode& node = actor_shard.Node(actor);
  node.hybrid = true;
  node.becoming_hybrid = false;
  if (log_ != nullptr) actor_shard.LogMode(actor, ActorMode::kMerged);
}

absl::StatusOr<UnfollowResult> FeedEngineImpl::UnfollowInMemory(
    EntityId follower, EntityId followee, const UnfollowOptions& options) {
  if (absl::Status status = ValidateFollowPair(follower, followee, "unfollow");
      !status.ok()) {
    return status;
  }
  const FollowPair pair{follower, followee};
  return UnfollowPairs(absl::MakeConstSpan(&pair, 1), options.keep_history)[0];
}

absl::StatusOr<EntityPage> FeedEngineImpl::ReadFollowList(
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
    // Active and dormant followers are two sets, both ordered by (shard,
    // id): the page walks them as one.
    const auto& active = node->followers;
    const auto& dormant = node->dormant_followers;
    auto a = active.begin();
    auto d = dormant.begin();
    if (after.has_value()) {
      a = active.upper_bound({after->shard, after->last});
      d = dormant.upper_bound({after->shard, after->last});
    }
    while (a != active.end() || d != dormant.end()) {
      if (page.ids.size() == options.limit) {
        more = true;
        break;
      }
      const bool from_active =
          d == dormant.end() || (a != active.end() && *a < *d);
      page.ids.push_back(from_active ? (a++)->second : (d++)->second);
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
  return ReadFollowList(true, entity, options);
}

absl::StatusOr<EntityPage> FeedEngineImpl::Following(
    EntityId entity, const ListOptions& options) const {
  return ReadFollowList(false, entity, options);
}

absl::StatusOr<size_t> FeedEngineImpl::FollowerCount(EntityId entity) const {
  const Shard& shard = ShardOf(entity);
  ReaderLock lock(&shard.mu());
  const GraphNode* node = shard.FindNode(entity);
  return node == nullptr ? 0 : node->follower_count();
}

absl::StatusOr<size_t> FeedEngineImpl::FollowingCount(EntityId entity) const {
  const Shard& shard = ShardOf(entity);
  ReaderLock lock(&shard.mu());
  const GraphNode* node = shard.FindNode(entity);
  return node == nullptr ? 0 : node->following.size();
}

}  // namespace feedcore::internal
