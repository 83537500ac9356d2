// The mute and block steps of the conformance model runner: each call's
// result against the reference model, and the relation lists paged to the
// end. What they hide is then compared by the runner's usual walks of the
// touched timelines.
#include "conformance/feed_conformance_model_runner.h"

namespace feedcore::conformance_model {

void Runner::DoRelation() {
  const EntityId user = Entity();
  EntityId actor = Entity();
  // Mostly an actor the user follows, so that hiding it removes entries.
  const std::set<EntityId>& following = model_.Following(user);
  if (!following.empty() && !OneIn(3)) {
    auto it = following.begin();
    std::advance(it, static_cast<long>(rng_() % following.size()));
    actor = *it;
  }
  if (actor == user) actor = user % config_.entities + 1;
  const int kind = static_cast<int>(rng_() % 100);
  MuteOptions mute;
  mute.notifications = OneIn(2);
  // An expiring mute runs out within a few clock advances.
  if (OneIn(3)) mute.expires_at = Now() + 1 + static_cast<Micros>(rng_() % 400);
  RestoreOptions restore;
  restore.backfill = rng_() % (config_.cap + 3);
  const char* name = kind < 20   ? "Block"
                     : kind < 35 ? "Unblock"
                     : kind < 75 ? "Mute"
                                 : "Unmute";
  what_ = std::string(name) + " " + std::to_string(user) + " -> " +
          std::to_string(actor) + " backfill " +
          std::to_string(restore.backfill) +
          (mute.expires_at ? " expiring" : "");
  Touch(user);
  Touch(actor);
  if (OneIn(12)) {
    // Refused, changing nothing: a user hiding itself, a mute already over.
    check_all_ = true;
    ++coverage_.refused;
    CHECK(absl::IsInvalidArgument(
        engine_->relations()->Mute(user, user).status()));
    CHECK(absl::IsInvalidArgument(
        engine_->relations()->Block(actor, actor).status()));
    MuteOptions over;
    over.expires_at = Now();
    CHECK(absl::IsInvalidArgument(
        engine_->relations()->Mute(user, actor, over).status()));
    return;
  }
  RelationResult want;
  absl::StatusOr<RelationResult> got;
  if (kind < 20) {
    want = model_.Block(user, actor);
    got = engine_->relations()->Block(user, actor);
  } else if (kind < 35) {
    want = model_.Unblock(user, actor, restore.backfill, Now());
    got = engine_->relations()->Unblock(user, actor, restore);
  } else if (kind < 75) {
    want = model_.Mute(user, actor, mute, Now());
    got = engine_->relations()->Mute(user, actor, mute);
  } else {
    want = model_.Unmute(user, actor, restore.backfill, Now());
    got = engine_->relations()->Unmute(user, actor, restore);
  }
  REQUIRE_MESSAGE(got.ok(), got.status());
  CHECK(got->changed == want.changed);
  CHECK(got->removed == want.removed);
  CHECK(got->backfilled == want.backfilled);
  CHECK(got->follows_ended == want.follows_ended);
  coverage_.hidden_removed += want.removed;
  coverage_.restored += want.backfilled;
}

void Runner::CheckRelationLists(EntityId user) {
  INFO("relation lists of " << user);
  ListOptions o;
  o.limit = 1 + rng_() % config_.max_page_size;
  std::vector<EntityId> blocked;
  for (ListOptions page = o;;) {
    const absl::StatusOr<EntityPage> got =
        engine_->relations()->Blocked(user, page);
    REQUIRE_MESSAGE(got.ok(), got.status());
    REQUIRE(got->ids.size() <= o.limit);
    blocked.insert(blocked.end(), got->ids.begin(), got->ids.end());
    if (got->next_cursor.empty()) break;
    page.cursor = got->next_cursor;
  }
  std::vector<MutedActor> muted;
  for (ListOptions page = o;;) {
    const absl::StatusOr<MutedPage> got =
        engine_->relations()->Muted(user, page);
    REQUIRE_MESSAGE(got.ok(), got.status());
    REQUIRE(got->actors.size() <= o.limit);
    muted.insert(muted.end(), got->actors.begin(), got->actors.end());
    if (got->next_cursor.empty()) break;
    page.cursor = got->next_cursor;
  }
  CHECK(blocked == model_.BlockedList(user));
  CHECK(muted == model_.MutedList(user, Now()));
}

}  // namespace feedcore::conformance_model
