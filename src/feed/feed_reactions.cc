// FeedEngineImpl's reactions (FeedReactions).
//
// A reaction lives in the reacted activity's store shard (ReactionTable),
// changed under that shard's lock together with the counter it counts, so
// a reaction never outlives its activity: Retract and eviction drop the
// activity's reactions as they drop it. A notice (ReactOptions::notice_id)
// is an activity of its own, stored and delivered to the actor's
// notification feed after the reaction is in place; Unreact, and a retract
// of the reacted activity, retract it as Retract retracts any activity,
// and React retracts it itself when one of those ran before it was stored.
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/cursor.h"
#include "contract/feed_arguments.h"
#include "contract/group_pages.h"
#include "feed/fanout_tracker.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

absl::StatusOr<ReactionResult> FeedEngineImpl::ReactInMemory(
    EntityId user, ActivityId activity_id, ReactionKind kind,
    const ReactOptions& options) {
  if (absl::Status bad =
          ValidateReact(activity_id, kind, options, options_.max_payload_bytes);
      !bad.ok()) {
    return bad;
  }
  if (options.notice_id != 0 && store_.Holds(options.notice_id)) {
    return absl::AlreadyExistsError(
        absl::StrCat("ReactOptions.notice_id ", options.notice_id,
                     " is the id of another activity; activity ids must be "
                     "unique"));
  }
  absl::StatusOr<ActivityStore::ReactionChange> change =
      store_.React(activity_id, user, kind, options.notice_id, *options_.clock);
  if (!change.ok()) return change.status();
  ReactionResult result{change->changed, change->counters, false};
  if (!change->changed || change->notice_id == 0) return result;
  absl::StatusOr<bool> notified =
      PublishNotice(change->notice_id, options, user, activity_id,
                    change->facts, options_.clock->Now());
  if (!notified.ok()) {
    // The id was taken between the check and the store: the reaction goes
    // back, and the call fails.
    store_.Unreact(activity_id, user, kind, *options_.clock).IgnoreError();
    return notified.status();
  }
  // An Unreact or a Retract that ran between the reaction and the notice's
  // store found no notice to retract: the notice goes now, as it would
  // have gone then.
  if (!store_.HoldsNotice(activity_id, user, kind, change->notice_id)) {
    RetractInMemory(change->notice_id).IgnoreError();
    return result;
  }
  result.notified = *notified;
  return result;
}

absl::StatusOr<bool> FeedEngineImpl::PublishNotice(
    ActivityId notice_id, const ReactOptions& options, EntityId reactor,
    ActivityId reacted, const ActivityFacts& facts, Micros now) {
  StoredActivity notice;
  notice.actor = reactor;
  notice.ts = now;
  notice.expires_at = facts.expires_at;
  notice.payload = options.notice_payload;
  // Not in any timeline: a retract has only the notification feed to purge.
  notice.copied = false;
  const FollowerSnapshot recipients =
      GroupByShard(absl::MakeConstSpan(&facts.actor, 1));
  notice.notified = recipients.ids;
  // As Publish: a Retract of the notice that finds it stored waits for the
  // delivery.
  const FanoutTicket ticket(&tracker_, reactor);
  absl::StatusOr<bool> created = store_.Put(notice_id, notice);
  if (!created.ok()) return created.status();
  if (!*created) {
    return absl::AlreadyExistsError(absl::StrCat(
        "ReactOptions.notice_id ", notice_id, " is already published"));
  }
  Activity as_published;
  as_published.id = notice_id;
  as_published.actor = reactor;
  as_published.ts = now;
  as_published.verb = options.notice_verb;
  as_published.object = reacted;
  const StoredEntry entry{now,
                          notice_id,
                          reactor,
                          facts.expires_at,
                          NotificationGroupKey(options_, as_published),
                          {},
                          0};
  return DeliverNotifications(recipients, entry) > 0;
}

absl::StatusOr<ReactionResult> FeedEngineImpl::UnreactInMemory(
    EntityId user, ActivityId activity_id, ReactionKind kind) {
  if (absl::Status bad = ValidateReactionKind(kind); !bad.ok()) return bad;
  absl::StatusOr<ActivityStore::ReactionChange> change =
      store_.Unreact(activity_id, user, kind, *options_.clock);
  if (!change.ok()) return change.status();
  if (change->notice_id != 0) {
    // NotFound: the program retracted the notice itself, or it expired.
    RetractInMemory(change->notice_id).IgnoreError();
  }
  return ReactionResult{change->changed, change->counters, false};
}

absl::StatusOr<std::vector<ReactionKinds>> FeedEngineImpl::GetOwnReactions(
    EntityId user, absl::Span<const ActivityId> activity_ids) const {
  if (absl::Status bad = ValidateReactionLookup(activity_ids.size());
      !bad.ok()) {
    return bad;
  }
  std::vector<ReactionKinds> kinds;
  store_.LookupReactions(user, activity_ids, options_.clock->Now(), &kinds);
  return kinds;
}

absl::StatusOr<ReactorPage> FeedEngineImpl::ReadReactors(
    ActivityId activity_id, ReactionKind kind,
    const ListOptions& options) const {
  if (absl::Status bad = ValidateReactionKind(kind); !bad.ok()) return bad;
  if (absl::Status bad = ValidateList(options, options_.max_page_size);
      !bad.ok()) {
    return bad;
  }
  std::optional<Reactor> after;
  if (!options.cursor.empty()) {
    absl::StatusOr<Reactor> last =
        DecodeReactorCursorOf(options.cursor, activity_id, kind);
    if (!last.ok()) return last.status();
    after = *last;
  }
  absl::StatusOr<std::vector<Reactor>> reactors = store_.Reactors(
      activity_id, kind, after, options.limit + 1, options_.clock->Now());
  if (!reactors.ok()) return reactors.status();
  ReactorPage page;
  page.reactors = *std::move(reactors);
  if (page.reactors.size() > options.limit) {
    page.reactors.pop_back();
    page.next_cursor =
        EncodeReactorCursor(activity_id, kind, page.reactors.back());
  }
  return page;
}

absl::Status FeedEngineImpl::ApplyReactionChange(const ChangeRecord& r) {
  const ActivityId id = r.entry.activity_id;
  if (r.score < 0 || r.score >= static_cast<int64_t>(kActivityCounterCount)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "change record ", r.sequence, " (kind ", static_cast<int>(r.kind),
        "): reaction kind ", r.score, " is out of range"));
  }
  if (r.domain - options_.shards != store_.ShardOf(id)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "change record ", r.sequence, " (kind ", static_cast<int>(r.kind),
        "): activity ", id, " is not in activity-store shard ",
        r.domain - options_.shards));
  }
  // As a repeated retract, a reaction to an unknown activity changes
  // nothing.
  store_.RestoreReaction(
      {id, r.entity, static_cast<ReactionKind>(r.score), r.entry.ts, r.other},
      r.kind == ChangeKind::kReactionAdd);
  return absl::OkStatus();
}

}  // namespace feedcore::internal
