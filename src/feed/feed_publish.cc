// FeedEngineImpl::Publish, its fan-out, and Retract.
//
// Publish stores the activity once, puts its entry into the actor's own
// feed and its shard's world feed, then copies it into the home timeline of
// every follower, one shard group (one lock) at a time, on this thread and
// on fan-out pool workers; an actor merged at read time gets no copies.
// Each delivery holds a FanoutTracker ticket from before it reads the
// follower set until its last write, so that Unfollow and Retract can wait
// for the deliveries that read the old state before they purge.
#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/feed_arguments.h"
#include "contract/group_pages.h"
#include "contract/page_merger.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

// One publish's fan-out: the entry, the followers to reach, and the ticket
// that Unfollow/Retract wait on. The publisher and any workers pull shard
// groups from `next_group`; whoever delivers the last group ends the
// ticket and wakes a publisher waiting for completion.
struct FeedEngineImpl::FanoutJob {
  FanoutJob(FanoutTracker* tracker, EntityId actor)
      : tracker(tracker), actor(actor), ticket(tracker->Begin(actor)) {}
  FanoutTracker* const tracker;
  const EntityId actor;
  const uint64_t ticket;
  StoredEntry entry;
  FollowerSnapshot followers;
  // The entry is older than something the actor published before, and
  // some followers merge the actor (it is merged at read, or they are
  // dormant readers): those whose merge begins at or below the entry see
  // it through the merge and get no copy. `merging[i]` says whether
  // followers.ids[i] is one of them as of the snapshot; a dormant reader
  // that its followee's shard has since made active again must get the
  // copy even if its merge has not ended yet (feed_inactive.cc).
  bool below_boundaries = false;
  std::vector<bool> merging;
  // Watched timelines that see the entry through a merge and get no copy
  // (FeedEngineImpl::MergedWatchers): told once the own feed holds it.
  std::vector<EntityId> merged_watchers;
  std::atomic<size_t> next_group{0};
  std::atomic<size_t> groups_done{0};

  // Ends the ticket at once when there is nothing to deliver.
  void FinishIfEmpty() {
    if (followers.groups() == 0) tracker->End(actor, ticket);
  }
  void GroupDone() {
    if (groups_done.fetch_add(1, std::memory_order_acq_rel) + 1 ==
        followers.groups()) {
      tracker->End(actor, ticket);
      groups_done.notify_all();
    }
  }
  void WaitAllGroups() {
    size_t done = groups_done.load(std::memory_order_acquire);
    while (done < followers.groups()) {
      groups_done.wait(done, std::memory_order_acquire);
      done = groups_done.load(std::memory_order_acquire);
    }
  }
};

absl::StatusOr<PublishResult> FeedEngineImpl::PublishInMemory(
    const Activity& activity, const PublishOptions& options) {
  absl::StatusOr<Micros> expires_at = ValidatePublish(activity, options);
  if (!expires_at.ok()) return expires_at.status();
  absl::StatusOr<FanoutPlan> plan = PlanFanout(activity.actor, options);
  if (!plan.ok()) return plan.status();

  StoredActivity record;
  record.actor = activity.actor;
  record.ts = activity.ts;
  record.expires_at = *expires_at;
  record.payload = activity.payload;
  record.kind = activity.kind;
  record.repost_of = activity.repost_of;
  // Hybrid is never undone, so an actor seen hybrid here gets no copies.
  record.copied = !plan->hybrid;
  FollowerSnapshot recipients;
  if (!options.notify.empty()) {
    recipients = GroupByShard(options.notify);
    record.notified = recipients.ids;
  }
  // The delivery ticket is taken before the activity becomes visible in
  // the store: a Retract that finds it waits for this whole delivery.
  auto job = std::make_shared<FanoutJob>(&tracker_, activity.actor);
  absl::StatusOr<bool> created = store_.Put(activity.id, record);
  if (!created.ok() || !*created) {
    if (plan->reserved > 0) pool_->Unreserve(plan->reserved);
    job->FinishIfEmpty();  // no followers snapshotted: ends the ticket
    if (!created.ok()) return created.status();
    return PublishResult{};  // the same activity again: nothing to do
  }

  job->entry = StoredEntry{activity.ts,
                           activity.id,
                           activity.actor,
                           *expires_at,
                           TimelineGroupKey(options_, activity),
                           {},
                           0,
                           activity.kind};
  PublishResult result;
  result.created = true;
  WriteOwnAndWorld(activity, *job, &result);
  if (!job->merged_watchers.empty()) {
    deliveries_.Deliver(DeliveryFeed::kTimeline, job->merged_watchers,
                        TimelineEntry{activity.ts, activity.id, activity.actor,
                                      0, activity.kind});
  }
  if (recipients.groups() > 0) {
    // Under the ticket, like the followers' copies: a Retract waits for it.
    StoredEntry notification = job->entry;
    notification.group = NotificationGroupKey(options_, activity);
    result.notified = DeliverNotifications(recipients, notification);
  }
  if (!options.mentions.empty()) {
    DeliverMentions(GroupByShard(options.mentions), job->entry);
  }
  job->FinishIfEmpty();
  RunFanout(job, *plan, &result);
  return result;
}

absl::StatusOr<Micros> FeedEngineImpl::ValidatePublish(
    const Activity& activity, const PublishOptions& options) const {
  if (absl::Status status = ValidateActivity(
          activity, options_.max_payload_bytes, options_.reposts);
      !status.ok()) {
    return status;
  }
  if (absl::Status status = ValidateNotify(options); !status.ok()) {
    return status;
  }
  InsertOptions expiry_options;
  expiry_options.ttl = activity.ttl;
  return ResolveExpiry(expiry_options, options_.default_ttl,
                       options_.clock->Now());
}

absl::StatusOr<FeedEngineImpl::FanoutPlan> FeedEngineImpl::PlanFanout(
    EntityId actor, const PublishOptions& options) {
  FanoutPlan plan;
  size_t follower_count = 0;
  {
    const Shard& actor_shard = ShardOf(actor);
    ReaderLock lock(&actor_shard.mu());
    const GraphNode* node = actor_shard.FindNode(actor);
    if (node != nullptr) {
      plan.hybrid = node->hybrid;
      follower_count = node->followers.size();  // the dormant get no copies
    }
  }
  // Room in the queue is reserved before anything changes, so a full
  // queue rejects the publish cleanly.
  const bool parallel =
      pool_ != nullptr && !plan.hybrid &&
      follower_count >= options_.parallel_fanout_min_followers;
  plan.workers = parallel ? std::min({options_.fanout_threads, options_.shards,
                                      pool_->capacity()})
                          : 0;
  plan.async =
      parallel && options.completion == FanoutCompletion::kAsynchronous;
  if (plan.async) {
    if (!pool_->Reserve(plan.workers, options.wait_when_queue_full)) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "fan-out queue is full (EngineOptions.fanout_queue_capacity = ",
          options_.fanout_queue_capacity,
          "); nothing was published: retry later, or publish with "
          "wait_when_queue_full"));
    }
    plan.reserved = plan.workers;
  }
  return plan;
}

void FeedEngineImpl::WriteOwnAndWorld(const Activity& activity, FanoutJob& job,
                                      PublishResult* result) {
  // Own feed and world feed first, then the followers as of now: a
  // concurrent Follow either is in this snapshot or back-fills from the
  // own feed, which already holds the entry.
  Shard& actor_shard = ShardOf(activity.actor);
  WriterLock lock(&actor_shard.mu());
  // Every merge boundary of the actor's followers is at most just above
  // what it published before this (GraphNode::newest_published).
  bool out_of_order = false;
  if (const GraphNode* node = actor_shard.FindNode(activity.actor)) {
    out_of_order = node->newest_published.has_value() &&
                   job.entry.key() < *node->newest_published;
  }
  InsertResult ignored;
  actor_shard.Put({activity.actor, FeedType::kOwn}, job.entry, &ignored);
  actor_shard.Put({0, FeedType::kWorld}, job.entry, &ignored);
  if (log_ != nullptr) {
    const EntityId world = 0;
    actor_shard.LogEntries(ChangeKind::kTimelinePut, FeedType::kOwn,
                           absl::MakeConstSpan(&activity.actor, 1), job.entry);
    actor_shard.LogEntries(ChangeKind::kTimelinePut, FeedType::kWorld,
                           absl::MakeConstSpan(&world, 1), job.entry);
  }
  const GraphNode* node = actor_shard.FindNode(activity.actor);
  if (node != nullptr) {
    const Micros now = options_.clock->Now();
    if (node->hybrid) {
      result->merged_at_read = true;
      if (out_of_order) {
        job.below_boundaries = true;
        SnapshotAudience(*node, now, /*with_dormant=*/true, job.entry.kind,
                         &job.followers);
        job.merging.assign(job.followers.ids.size(), true);
      }
    } else if (out_of_order && !node->dormant_followers.empty()) {
      // Dormant followers merge the actor from their boundaries: those
      // whose merge begins above the entry need a copy as well.
      job.below_boundaries = true;
      SnapshotAudience(*node, now, /*with_dormant=*/true, job.entry.kind,
                       &job.followers);
      job.merging.reserve(job.followers.ids.size());
      for (const EntityId follower : job.followers.ids) {
        const bool dormant = node->dormant_followers.contains(
            {static_cast<uint32_t>(ShardIndex(follower)), follower});
        job.merging.push_back(dormant);
        result->fanned_out += !dormant;
      }
    } else {
      // Followers muting the actor, and dormant ones, are left out.
      SnapshotAudience(*node, now, /*with_dormant=*/false, job.entry.kind,
                       &job.followers);
      result->fanned_out = job.followers.ids.size();
    }
    // Out of order, every follower is in the snapshot and told by
    // DeliverGroup, copied or not.
    if (!job.below_boundaries &&
        (node->hybrid || !node->dormant_followers.empty()) &&
        deliveries_.Watching(DeliveryFeed::kTimeline)) {
      MergedWatchers(*node, node->hybrid, now, job.entry.kind,
                     &job.merged_watchers);
    }
  }
}

void FeedEngineImpl::MergedWatchers(const GraphNode& node, bool all, Micros now,
                                    ActivityKind kind,
                                    std::vector<EntityId>* watchers) const {
  const auto& muted_by = node.relations.muted_by;
  const auto sees = [&](EntityId follower) {
    if (((node.relations.KindsDeliveredTo(follower) >> kind) & 1) == 0) {
      return false;
    }
    auto mute = muted_by.find(follower);
    return mute == muted_by.end() ||
           !MuteState{false, mute->second}.ActiveAt(now);
  };
  const size_t candidates =
      all ? node.follower_count() : node.dormant_followers.size();
  if (deliveries_.WatchedCount(DeliveryFeed::kTimeline) <= candidates) {
    std::vector<EntityId> watched;
    deliveries_.WatchedOwners(DeliveryFeed::kTimeline, &watched);
    for (const EntityId owner : watched) {
      const FollowerEdge edge{static_cast<uint32_t>(ShardIndex(owner)), owner};
      const bool follows =
          all ? node.HasFollower(edge) : node.dormant_followers.contains(edge);
      if (follows && sees(owner)) watchers->push_back(owner);
    }
  } else {
    const auto add = [&](const absl::btree_set<FollowerEdge>& edges) {
      for (const auto& [shard, follower] : edges) {
        if (deliveries_.Watched(DeliveryFeed::kTimeline, follower) &&
            sees(follower)) {
          watchers->push_back(follower);
        }
      }
    };
    add(node.dormant_followers);
    if (all) add(node.followers);
  }
  std::sort(watchers->begin(), watchers->end());
}

void FeedEngineImpl::DeliverGroups(FanoutJob& job) {
  for (size_t g = job.next_group.fetch_add(1, std::memory_order_relaxed);
       g < job.followers.groups();
       g = job.next_group.fetch_add(1, std::memory_order_relaxed)) {
    DeliverGroup(job, g);
    job.GroupDone();
  }
}

void FeedEngineImpl::RunFanout(const std::shared_ptr<FanoutJob>& job,
                               const FanoutPlan& plan, PublishResult* result) {
  const size_t tasks = std::min(plan.workers, job->followers.groups());
  if (plan.async) {
    pool_->Unreserve(plan.reserved - tasks);
    for (size_t t = 0; t < tasks; ++t) {
      pool_->Submit([this, job] { DeliverGroups(*job); });
    }
    result->pending = tasks > 0;
    return;
  }
  // Synchronous: workers help if there is room for them right now; the
  // publisher works too and waits only for the groups, not for the tasks.
  if (tasks > 0 && pool_->Reserve(tasks, /*wait=*/false)) {
    for (size_t t = 0; t < tasks; ++t) {
      pool_->Submit([this, job] { DeliverGroups(*job); });
    }
  }
  DeliverGroups(*job);
  job->WaitAllGroups();
}

void FeedEngineImpl::DeliverGroup(const FanoutJob& job, size_t group) {
  const FollowerSnapshot& snapshot = job.followers;
  const StoredEntry& entry = job.entry;
  const absl::Span<const EntityId> group_ids =
      absl::MakeConstSpan(snapshot.ids.data() + snapshot.starts[group],
                          snapshot.starts[group + 1] - snapshot.starts[group]);
  absl::Span<const EntityId> owners = group_ids;
  Shard& shard = shards_[snapshot.shard_of_group[group]];
  std::vector<EntityId> below;
  {
    WriterLock lock(&shard.mu());
    if (job.below_boundaries) {
      // Checked under the follower's lock, where its boundary lives. A
      // follower with no merged entry for the actor is between the two
      // halves of a Follow (it then merges from a boundary computed after
      // this entry was in the own feed: a copy is at worst a duplicate the
      // reads drop) or of an Unfollow (which purges after this delivery).
      const EntryKey key = entry.key();
      for (size_t i = snapshot.starts[group]; i < snapshot.starts[group + 1];
           ++i) {
        const EntityId owner = snapshot.ids[i];
        if (!job.merging[i]) {
          below.push_back(owner);
          continue;
        }
        const GraphNode* node = shard.FindNode(owner);
        const MergedFollowee* merged =
            node == nullptr ? nullptr : node->FindMerged(entry.actor);
        if (merged == nullptr || key < merged->boundary) below.push_back(owner);
      }
      owners = below;
    }
    if (!owners.empty()) {
      InsertResult ignored;
      shard.PutMany(owners, FeedType::kHome, entry, &ignored);
      if (log_ != nullptr) {
        shard.LogEntries(ChangeKind::kTimelinePut, FeedType::kHome, owners,
                         entry);
      }
    }
  }
  const TimelineEntry delivered{entry.ts, entry.activity_id, entry.actor, 0,
                                entry.kind};
  if (options_.on_delivery && !owners.empty()) {
    options_.on_delivery(owners, delivered);
  }
  if (deliveries_.Watching(DeliveryFeed::kTimeline)) {
    // Below the boundaries, those left out see the entry by their merge.
    deliveries_.Deliver(DeliveryFeed::kTimeline,
                        job.below_boundaries ? group_ids : owners, delivered);
  }
}

void FeedEngineImpl::PurgeKey(const FollowerSnapshot& snapshot, FeedType kind,
                              EntryKey key) {
  std::vector<EntityId> removed;
  for (size_t g = 0; g < snapshot.groups(); ++g) {
    Shard& shard = shards_[snapshot.shard_of_group[g]];
    removed.clear();
    WriterLock lock(&shard.mu());
    for (size_t i = snapshot.starts[g]; i < snapshot.starts[g + 1]; ++i) {
      if (shard.RemoveKey({snapshot.ids[i], kind}, key)) {
        removed.push_back(snapshot.ids[i]);
      }
    }
    if (log_ != nullptr && !removed.empty()) {
      shard.LogEntries(ChangeKind::kTimelineRemove, kind, removed,
                       StoredEntry{key.ts, key.activity_id, 0, 0, 0, {}, 0});
    }
  }
}

FollowerSnapshot FeedEngineImpl::GroupByShard(
    absl::Span<const EntityId> ids) const {
  std::vector<std::pair<uint32_t, EntityId>> placed;
  placed.reserve(ids.size());
  for (const EntityId id : ids) {
    placed.emplace_back(static_cast<uint32_t>(ShardIndex(id)), id);
  }
  std::sort(placed.begin(), placed.end());
  placed.erase(std::unique(placed.begin(), placed.end()), placed.end());
  FollowerSnapshot snapshot;
  snapshot.ids.reserve(placed.size());
  for (const auto& [shard, id] : placed) {
    if (snapshot.shard_of_group.empty() ||
        snapshot.shard_of_group.back() != shard) {
      snapshot.starts.push_back(snapshot.ids.size());
      snapshot.shard_of_group.push_back(shard);
    }
    snapshot.ids.push_back(id);
  }
  snapshot.starts.push_back(snapshot.ids.size());
  return snapshot;
}

size_t FeedEngineImpl::DeliverNotifications(const FollowerSnapshot& recipients,
                                            const StoredEntry& entry) {
  const auto& on_notify = options_.notifications.on_notify;
  const bool watched = deliveries_.Watching(DeliveryFeed::kNotifications);
  std::vector<NotificationCounts> counts;
  std::vector<EntityId> kept;
  size_t delivered = 0;
  for (size_t g = 0; g < recipients.groups(); ++g) {
    const absl::Span<const EntityId> listed =
        absl::MakeConstSpan(recipients.ids.data() + recipients.starts[g],
                            recipients.starts[g + 1] - recipients.starts[g]);
    Shard& shard = shards_[recipients.shard_of_group[g]];
    counts.clear();
    absl::Span<const EntityId> owners;
    {
      WriterLock lock(&shard.mu());
      // Recipients who block or mute the actor get nothing (relations.h).
      owners = NotificationAudience(shard, listed, entry.actor, &kept);
      delivered += owners.size();
      if (owners.empty()) continue;
      InsertResult ignored;
      shard.PutMany(owners, FeedType::kNotification, entry, &ignored);
      if (log_ != nullptr) {
        shard.LogEntries(ChangeKind::kTimelinePut, FeedType::kNotification,
                         owners, entry);
      }
      if (on_notify || watched) {
        // The badge must not count what has expired meanwhile.
        const Micros now = options_.clock->Now();
        for (const EntityId owner : owners) {
          counts.push_back(CountsOf(shard.Notifications(owner, now)));
        }
      }
    }
    if (on_notify) {
      for (size_t i = 0; i < owners.size(); ++i) {
        on_notify(owners[i], counts[i]);
      }
    }
    if (watched) {
      deliveries_.Deliver(DeliveryFeed::kNotifications, owners,
                          TimelineEntry{entry.ts, entry.activity_id,
                                        entry.actor, 0, entry.kind},
                          counts);
    }
  }
  return delivered;
}

void FeedEngineImpl::WaitForFanout() {
  if (pool_ != nullptr) pool_->WaitIdle();
}

absl::Status FeedEngineImpl::RetractInMemory(ActivityId activity_id) {
  bool already = false;
  std::vector<ActivityId> notices;
  absl::StatusOr<StoredActivity> activity =
      store_.Retract(activity_id, &already, &notices);
  if (!activity.ok()) return activity.status();
  if (already) return absl::OkStatus();
  const EntryKey key{activity->ts, activity_id};
  const EntityId actor = activity->actor;
  // The tombstone is set. Deliveries of the actor that began earlier (the
  // publish of this very activity among them) may still be writing it;
  // later ones see the tombstone (back-fill skips retracted activities).
  tracker_.WaitForEarlier(actor);
  Shard& actor_shard = ShardOf(actor);
  FollowerSnapshot followers;
  {
    WriterLock lock(&actor_shard.mu());
    const bool from_own = actor_shard.RemoveKey({actor, FeedType::kOwn}, key);
    const bool from_world = actor_shard.RemoveKey({0, FeedType::kWorld}, key);
    if (log_ != nullptr) {
      const EntityId world = 0;
      const StoredEntry removed{key.ts, key.activity_id, 0, 0, 0, {}, 0};
      if (from_own) {
        actor_shard.LogEntries(ChangeKind::kTimelineRemove, FeedType::kOwn,
                               absl::MakeConstSpan(&actor, 1), removed);
      }
      if (from_world) {
        actor_shard.LogEntries(ChangeKind::kTimelineRemove, FeedType::kWorld,
                               absl::MakeConstSpan(&world, 1), removed);
      }
    }
    DropPinLocked(actor_shard, actor, activity_id);
    const GraphNode* node = actor_shard.FindNode(actor);
    if (node != nullptr) {
      // Followers who followed later got it by back-fill and are in the
      // set; those who left are either gone (their Unfollow purged all of
      // the actor's entries), still leaving, or kept their history (purged
      // here too). An activity of a merged actor may have copies as well:
      // it was published out of order, or back-filled by a Follow that
      // met the switch to merge-at-read.
      node->SnapshotFollowers(&followers, /*with_unfollowing=*/true);
    }
  }
  PurgeKey(followers, FeedType::kHome, key);
  if (!activity->notified.empty()) {
    // The store keeps the ids only; their shard groups are worked out again.
    PurgeKey(GroupByShard(activity->notified), FeedType::kNotification, key);
  }
  // The notices of its reactions go with it (feed_reactions.cc); one the
  // program retracted already, or that expired, is NotFound or a no-op.
  for (const ActivityId notice : notices) {
    RetractInMemory(notice).IgnoreError();
  }
  return absl::OkStatus();
}

}  // namespace feedcore::internal
