// FeedEngineImpl's follows and unfollows of many pairs at once: the work
// of Follow and Unfollow (a call of one pair) and of FollowMany and
// UnfollowMany.
//
// A call runs in phases; each phase visits the shards it needs once, in
// shard order, and does the part of every pair that lives there under one
// hold of that shard's lock:
//   Follow:   followee shards (edge, mode, merge boundary), follower shards
//             (followee, merged entry), switches to merge-at-read, a second
//             look at the followees that were copied, back-fill (read from
//             the followee shards, written to the follower shards);
//   Unfollow: followee shards (edge), follower shards (followee, merged
//             entry), a wait for deliveries that read the old follower set,
//             follower shards (copies removed), followee shards (cleanup).
// Pairs of one follower are serialized with every other Follow/Unfollow of
// it by its follow stripe; a call takes the stripes of all its followers,
// in stripe order, before its first phase.
#include <xxhash.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/strings/str_cat.h"
#include "contract/feed_arguments.h"
#include "contract/page_merger.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {
namespace {

ChangeRecord EdgeRecord(ChangeKind kind, EntityId entity, EntityId other,
                        bool flag) {
  ChangeRecord record;
  record.kind = kind;
  record.entity = entity;
  record.other = other;
  record.merged_at_read = flag;
  return record;
}

// A follow record's `score`: the kinds the follow delivers, 0 for every
// kind (a filter keeping none is refused, so 0 never means one).
int64_t KindsField(uint64_t kinds) {
  return kinds == KindFilter::kEveryKind ? 0 : static_cast<int64_t>(kinds);
}

ChangeRecord MergeRecord(ChangeKind kind, EntityId follower, EntityId followee,
                         EntryKey boundary) {
  ChangeRecord record = EdgeRecord(kind, follower, followee, true);
  record.keys.push_back({boundary.ts, boundary.activity_id});
  return record;
}

}  // namespace

absl::StatusOr<size_t> FeedEngineImpl::BackfillCount(
    const FollowOptions& options) const {
  if (options.backfill.has_value()) {
    if (absl::Status status = ValidateBackfill(*options.backfill);
        !status.ok()) {
      return status;
    }
  }
  if (options.kinds.has_value()) {
    if (absl::Status status =
            ValidateKindFilter(*options.kinds, "FollowOptions.kinds");
        !status.ok()) {
      return status;
    }
  }
  // More than the cap could not be kept anyway.
  return std::min(options.backfill.value_or(options_.default_backfill),
                  options_.max_timeline_length);
}

EntryKey FeedEngineImpl::FollowBoundary(const Shard& shard,
                                        const GraphNode& actor_node,
                                        EntityId actor, size_t count,
                                        uint64_t kinds, Micros now) const {
  if (count > 0) {
    if (const Timeline* own = shard.FindTimeline({actor, FeedType::kOwn})) {
      std::vector<StoredEntry> copied;
      own->Collect(ReadOrder::kNewestFirst, EntryKey::Min(), EntryKey::Max(),
                   now, count, &copied, kinds);
      if (!copied.empty()) return copied.back().key();
    }
  }
  return actor_node.MergeBoundaryNow();
}

absl::StatusOr<std::vector<FollowResult>> FeedEngineImpl::FollowPairs(
    absl::Span<const FollowPair> pairs, size_t backfill,
    std::optional<uint64_t> kinds) {
  struct Step {
    uint32_t follower_shard = 0;
    uint32_t followee_shard = 0;
    bool merged = false;            // merged at read from `boundary`
    bool start_transition = false;  // this pair makes the followee merged
    bool late_merge = false;        // found merged at the second look
    EntryKey boundary;
  };
  const size_t n = pairs.size();
  std::vector<FollowResult> results(n);
  std::vector<Step> steps(n);
  for (size_t i = 0; i < n; ++i) {
    steps[i].follower_shard =
        static_cast<uint32_t>(ShardIndex(pairs[i].follower));
    steps[i].followee_shard =
        static_cast<uint32_t>(ShardIndex(pairs[i].followee));
  }
  absl::btree_set<size_t> stripe_ids;
  for (const FollowPair& pair : pairs) {
    stripe_ids.insert(&FollowStripe(pair.follower) - follow_stripes_.data());
  }
  std::vector<std::unique_lock<std::mutex>> stripes;
  for (const size_t s : stripe_ids) stripes.emplace_back(follow_stripes_[s]);
  // The stripes keep every edge of these followers as it is now: a follow
  // of other kinds is refused before anything changes.
  if (kinds.has_value()) {
    for (const FollowPair& pair : pairs) {
      const Shard& shard = ShardOf(pair.follower);
      ReaderLock lock(&shard.mu());
      const GraphNode* node = shard.FindNode(pair.follower);
      if (node != nullptr && node->following.contains(pair.followee) &&
          node->relations.KindsFollowed(pair.followee) != *kinds) {
        return absl::FailedPreconditionError(absl::StrCat(
            pair.follower, " follows ", pair.followee,
            " with other kinds already; Unfollow, then Follow, to change "
            "them"));
      }
    }
  }
  const uint64_t new_kinds = kinds.value_or(KindFilter::kEveryKind);
  for (size_t i = 0; i < n; ++i) {
    results[i].blocked = EitherBlocks(pairs[i].follower, pairs[i].followee);
  }
  const auto by_followee =
      RunsByShard(n, [&](size_t i) { return steps[i].followee_shard; });
  const auto by_follower =
      RunsByShard(n, [&](size_t i) { return steps[i].follower_shard; });

  // The edge in the followee's node; whether the followee is merged and,
  // if so, where this follower's merge begins.
  for (const auto& [s, run] : by_followee) {
    Shard& shard = shards_[s];
    WriterLock lock(&shard.mu());
    for (const size_t i : run) {
      if (results[i].blocked) continue;
      const FollowPair& pair = pairs[i];
      GraphNode* const added = shard.AddFollower(
          pair.followee, {steps[i].follower_shard, pair.follower});
      if (added == nullptr) continue;
      results[i].created = true;
      GraphNode& node = *added;
      if (new_kinds != KindFilter::kEveryKind) {
        node.relations.follower_kinds[pair.follower] = new_kinds;
      }
      if (log_ != nullptr) {
        ChangeRecord record = EdgeRecord(ChangeKind::kFollowerAdd,
                                         pair.followee, pair.follower, false);
        record.score = KindsField(new_kinds);
        shard.Log(std::move(record));
      }
      bool merged = node.hybrid || node.becoming_hybrid;
      if (!merged && options_.hybrid_fanout_threshold > 0 &&
          node.follower_count() > options_.hybrid_fanout_threshold) {
        node.becoming_hybrid = true;
        steps[i].start_transition = true;
        merged = true;
        if (log_ != nullptr) {
          shard.LogMode(pair.followee, ActorMode::kBecomingMerged);
        }
      }
      if (merged) {
        steps[i].merged = true;
        steps[i].boundary = FollowBoundary(shard, node, pair.followee, backfill,
                                           new_kinds, options_.clock->Now());
      }
    }
  }
  // The followee in the follower's node.
  for (const auto& [s, run] : by_follower) {
    Shard& shard = shards_[s];
    WriterLock lock(&shard.mu());
    for (const size_t i : run) {
      if (!results[i].created) continue;
      const FollowPair& pair = pairs[i];
      GraphNode& node = shard.Node(pair.follower);
      node.following.insert(pair.followee);
      if (new_kinds != KindFilter::kEveryKind) {
        node.relations.follow_kinds[pair.followee] = new_kinds;
      }
      // Following is reading's first step (EngineOptions::inactive_after).
      if (options_.inactive_after > 0) {
        node.last_read.Store(options_.clock->Now());
      }
      if (steps[i].merged) {
        node.AddMerged(pair.followee, steps[i].boundary);
      }
      if (log_ != nullptr) {
        ChangeRecord record =
            steps[i].merged
                ? MergeRecord(ChangeKind::kFollowingAdd, pair.follower,
                              pair.followee, steps[i].boundary)
                : EdgeRecord(ChangeKind::kFollowingAdd, pair.follower,
                             pair.followee, false);
        record.score = KindsField(new_kinds);
        shard.Log(std::move(record));
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (steps[i].start_transition) BecomeHybrid(pairs[i].followee);
  }
  // A Follow elsewhere may have started a switch after the first phase and
  // before this follower was in the followee set it told: look again. Such
  // a follower still gets its back-fill (below), and merges what the
  // followee publishes from now on.
  for (const auto& [s, run] : by_followee) {
    const Shard& shard = shards_[s];
    ReaderLock lock(&shard.mu());
    for (const size_t i : run) {
      if (!results[i].created || steps[i].merged) continue;
      const GraphNode* node = shard.FindNode(pairs[i].followee);
      if (node != nullptr && (node->hybrid || node->becoming_hybrid)) {
        steps[i].late_merge = true;
        steps[i].boundary = node->MergeBoundaryNow();
      }
    }
  }
  for (const auto& [s, run] : by_follower) {
    Shard& shard = shards_[s];
    bool any = false;
    for (const size_t i : run) any = any || steps[i].late_merge;
    if (!any) continue;
    WriterLock lock(&shard.mu());
    for (const size_t i : run) {
      if (!steps[i].late_merge) continue;
      GraphNode* node = shard.FindNode(pairs[i].follower);
      if (node != nullptr && node->following.contains(pairs[i].followee) &&
          node->AddMerged(pairs[i].followee, steps[i].boundary) &&
          log_ != nullptr) {
        shard.Log(MergeRecord(ChangeKind::kMergeAdd, pairs[i].follower,
                              pairs[i].followee, steps[i].boundary));
      }
    }
  }
  if (backfill == 0) return results;
  std::vector<bool> copied(n);
  for (size_t i = 0; i < n; ++i) {
    copied[i] = results[i].created && !steps[i].merged;
  }
  const std::vector<size_t> counts = BackfillPairs(pairs, copied, backfill);
  for (size_t i = 0; i < n; ++i) results[i].backfilled = counts[i];
  return results;
}

std::vector<size_t> FeedEngineImpl::BackfillPairs(
    absl::Span<const FollowPair> pairs, const std::vector<bool>& wanted,
    size_t backfill) {
  const size_t n = pairs.size();
  std::vector<size_t> counts(n, 0);
  std::vector<std::vector<StoredEntry>> recent(n);
  const auto by_followee = RunsByShard(n, [&](size_t i) {
    return static_cast<uint32_t>(ShardIndex(pairs[i].followee));
  });
  const auto by_follower = RunsByShard(n, [&](size_t i) {
    return static_cast<uint32_t>(ShardIndex(pairs[i].follower));
  });
  // Back-fill: a delivery like a publish, so Unfollow and Retract wait for
  // it; the tickets are taken before the own feeds are read.
  std::vector<std::unique_ptr<FanoutTicket>> tickets;
  for (size_t i = 0; i < n; ++i) {
    if (wanted[i]) {
      tickets.push_back(
          std::make_unique<FanoutTicket>(&tracker_, pairs[i].followee));
    }
  }
  if (tickets.empty()) return counts;
  // What is visible is decided once the edges exist and the tickets are
  // held: a publish from then on is either in the own feed read below or
  // delivered to the follower.
  const Micros now = options_.clock->Now();
  for (const auto& [s, run] : by_followee) {
    const Shard& shard = shards_[s];
    ReaderLock lock(&shard.mu());
    for (const size_t i : run) {
      if (!wanted[i]) continue;
      const Timeline* own =
          shard.FindTimeline({pairs[i].followee, FeedType::kOwn});
      const GraphNode* followee = shard.FindNode(pairs[i].followee);
      if (own != nullptr) {
        own->Collect(ReadOrder::kNewestFirst, EntryKey::Min(), EntryKey::Max(),
                     now, backfill, &recent[i],
                     followee == nullptr ? KindFilter::kEveryKind
                                         : followee->relations.KindsDeliveredTo(
                                               pairs[i].follower));
      }
    }
  }
  // Retracted activities are copied to no one; a Retract that set its
  // tombstone before this check waits for the tickets and purges after
  // the copies, one that sets it later sees them.
  for (size_t i = 0; i < n; ++i) {
    if (!recent[i].empty()) store_.KeepLive(&recent[i]);
  }
  for (const auto& [s, run] : by_follower) {
    Shard& shard = shards_[s];
    bool any = false;
    for (const size_t i : run) any = any || !recent[i].empty();
    if (!any) continue;
    WriterLock lock(&shard.mu());
    for (const size_t i : run) {
      if (recent[i].empty()) continue;
      const EntityId follower = pairs[i].follower;
      // Nothing of an actor the follower blocks or mutes is copied; a
      // Mute that set its state before this check purges after the
      // tickets.
      const GraphNode* node = shard.FindNode(follower);
      if (node != nullptr &&
          node->relations.HidesInTimeline(pairs[i].followee, now)) {
        continue;
      }
      InsertResult put;
      for (const StoredEntry& entry : recent[i]) {
        shard.Put({follower, FeedType::kHome}, entry, &put);
        if (log_ != nullptr) {
          shard.LogEntries(ChangeKind::kTimelinePut, FeedType::kHome,
                           absl::MakeConstSpan(&follower, 1), entry);
        }
      }
      counts[i] = put.inserted + put.replaced;
    }
  }
  return counts;
}

std::vector<UnfollowResult> FeedEngineImpl::UnfollowPairs(
    absl::Span<const FollowPair> pairs, bool keep_history) {
  const size_t n = pairs.size();
  std::vector<UnfollowResult> results(n);
  std::vector<uint32_t> follower_shard(n), followee_shard(n);
  for (size_t i = 0; i < n; ++i) {
    follower_shard[i] = static_cast<uint32_t>(ShardIndex(pairs[i].follower));
    followee_shard[i] = static_cast<uint32_t>(ShardIndex(pairs[i].followee));
  }
  absl::btree_set<size_t> stripe_ids;
  for (const FollowPair& pair : pairs) {
    stripe_ids.insert(&FollowStripe(pair.follower) - follow_stripes_.data());
  }
  std::vector<std::unique_lock<std::mutex>> stripes;
  for (const size_t s : stripe_ids) stripes.emplace_back(follow_stripes_[s]);
  // What the unfollows remove leaves materialized timelines (see
  // RebuildDormant).
  if (options_.inactive_after > 0) {
    absl::btree_set<EntityId> followers;
    for (const FollowPair& pair : pairs) followers.insert(pair.follower);
    for (const EntityId follower : followers) RebuildDormant(follower);
  }
  const auto by_followee =
      RunsByShard(n, [&](size_t i) { return followee_shard[i]; });
  const auto by_follower =
      RunsByShard(n, [&](size_t i) { return follower_shard[i]; });

  for (const auto& [s, run] : by_followee) {
    Shard& shard = shards_[s];
    WriterLock lock(&shard.mu());
    for (const size_t i : run) {
      const FollowerEdge edge{follower_shard[i], pairs[i].follower};
      GraphNode* node = shard.RemoveFollower(pairs[i].followee, edge);
      if (node == nullptr) continue;
      results[i].was_following = true;
      if (log_ != nullptr) {
        shard.Log(EdgeRecord(ChangeKind::kFollowerRemove, pairs[i].followee,
                             pairs[i].follower, keep_history));
      }
      if (keep_history) {
        // Its copies stay; a Retract must still reach them.
        node->history_kept.insert(edge);
      } else {
        // Until its copies are gone, a Retract must still reach them.
        node->unfollowing.insert(edge);
      }
    }
  }
  // A follower keeping the history of a merged followee keeps what the
  // merge showed it: those entries become copies.
  std::vector<std::optional<EntryKey>> merged_from(n);
  std::vector<uint64_t> merged_kinds(n, KindFilter::kEveryKind);
  for (const auto& [s, run] : by_follower) {
    Shard& shard = shards_[s];
    WriterLock lock(&shard.mu());
    for (const size_t i : run) {
      if (!results[i].was_following) continue;
      GraphNode* node = shard.FindNode(pairs[i].follower);
      if (node == nullptr) continue;
      node->following.erase(pairs[i].followee);
      if (const MergedFollowee* merged = node->FindMerged(pairs[i].followee);
          merged != nullptr && keep_history) {
        merged_from[i] = merged->boundary;
        merged_kinds[i] = node->relations.KindsFollowed(pairs[i].followee);
      }
      node->relations.follow_kinds.erase(pairs[i].followee);
      node->EraseMerged(pairs[i].followee);
      shard.MaybeEraseNode(pairs[i].follower);
      if (log_ != nullptr) {
        shard.LogEdge(ChangeKind::kFollowingRemove, pairs[i].follower,
                      pairs[i].followee);
      }
    }
  }
  if (keep_history) KeepMergedHistory(pairs, merged_from, merged_kinds);
  if (!keep_history) {
    // A publish or back-fill of the followee that read the old follower
    // set must finish writing before its copies are removed.
    absl::btree_set<EntityId> waited;
    for (size_t i = 0; i < n; ++i) {
      if (results[i].was_following && waited.insert(pairs[i].followee).second) {
        tracker_.WaitForEarlier(pairs[i].followee);
      }
    }
    for (const auto& [s, run] : by_follower) {
      Shard& shard = shards_[s];
      WriterLock lock(&shard.mu());
      for (const size_t i : run) {
        if (!results[i].was_following) continue;
        results[i].removed =
            shard.RemoveActor(pairs[i].follower, pairs[i].followee);
        if (log_ != nullptr && results[i].removed > 0) {
          shard.LogEdge(ChangeKind::kTimelineRemoveActor, pairs[i].follower,
                        pairs[i].followee);
        }
      }
    }
  }
  for (const auto& [s, run] : by_followee) {
    Shard& shard = shards_[s];
    WriterLock lock(&shard.mu());
    for (const size_t i : run) {
      if (!results[i].was_following || keep_history) continue;
      GraphNode* node = shard.FindNode(pairs[i].followee);
      if (node != nullptr) {
        node->unfollowing.erase({follower_shard[i], pairs[i].follower});
        shard.MaybeEraseNode(pairs[i].followee);
      }
    }
  }
  return results;
}

void FeedEngineImpl::KeepMergedHistory(
    absl::Span<const FollowPair> pairs,
    absl::Span<const std::optional<EntryKey>> merged_from,
    absl::Span<const uint64_t> merged_kinds) {
  // Every entry held counts, expired ones too, as copies would have.
  constexpr Micros kNothingExpired = std::numeric_limits<Micros>::min();
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!merged_from[i].has_value()) continue;
    std::vector<StoredEntry> kept;
    ShardOf(pairs[i].followee)
        .Collect({pairs[i].followee, FeedType::kOwn}, ReadOrder::kNewestFirst,
                 *merged_from[i], EntryKey::Max(), kNothingExpired,
                 options_.max_timeline_length, &kept, merged_kinds[i]);
    if (kept.empty()) continue;
    Shard& shard = ShardOf(pairs[i].follower);
    WriterLock lock(&shard.mu());
    // A followee the follower blocks or mutes showed nothing to keep.
    const GraphNode* node = shard.FindNode(pairs[i].follower);
    if (node != nullptr && node->relations.HidesInTimeline(
                               pairs[i].followee, options_.clock->Now())) {
      continue;
    }
    InsertResult ignored;
    for (const StoredEntry& entry : kept) {
      shard.Put({pairs[i].follower, FeedType::kHome}, entry, &ignored);
      if (log_ != nullptr) {
        shard.LogEntries(ChangeKind::kTimelinePut, FeedType::kHome,
                         absl::MakeConstSpan(&pairs[i].follower, 1), entry);
      }
    }
  }
}

absl::StatusOr<std::vector<FollowResult>> FeedEngineImpl::FollowManyInMemory(
    absl::Span<const FollowPair> pairs, const FollowOptions& options) {
  if (absl::Status status = ValidateFollowPairs(pairs, "follow");
      !status.ok()) {
    return status;
  }
  absl::StatusOr<size_t> backfill = BackfillCount(options);
  if (!backfill.ok()) return backfill.status();
  return FollowPairs(pairs, *backfill,
                     options.kinds.has_value()
                         ? std::optional<uint64_t>(options.kinds->kinds)
                         : std::nullopt);
}

absl::StatusOr<std::vector<UnfollowResult>>
FeedEngineImpl::UnfollowManyInMemory(absl::Span<const FollowPair> pairs,
                                     const UnfollowOptions& options) {
  if (absl::Status status = ValidateFollowPairs(pairs, "unfollow");
      !status.ok()) {
    return status;
  }
  return UnfollowPairs(pairs, options.keep_history);
}

}  // namespace feedcore::internal
