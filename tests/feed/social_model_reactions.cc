// Runner::DoReaction (social_model_runner.h): reactions against the model.
#include <string>
#include <vector>

#include "feed/social_model_runner.h"

namespace feedcore::social_model {

void Runner::DoReaction() {
  Settle();
  std::mt19937_64& rng = reaction_rng_;
  const EntityId user = 1 + rng() % config_.entities;
  ActivityId id = next_id_ + 1 + rng() % 3;  // unknown
  if (last_reacted_ != 0 && rng() % 2 == 0) {
    id = last_reacted_;
  } else if (rng() % 8 != 0) {
    const auto& acts = members_[0].model.activities();
    if (!acts.empty()) {
      auto it = acts.begin();
      std::advance(it, static_cast<long>(rng() % acts.size()));
      id = it->first;
    }
  }
  // One kind in twenty is out of range.
  const ReactionKind kind = rng() % 20 == 0 ? kActivityCounterCount : rng() % 2;
  const uint64_t op = rng() % 100;
  const Micros now = clock_->Now();
  if (op < 60 || (op < 80 && !config_.removals)) {
    ReactOptions options;
    // Notices only where removals are drawn: Unreact retracts them.
    if (config_.removals && rng() % 3 == 0) {
      // A fresh id, or now and then one that is taken.
      options.notice_id = rng() % 6 == 0 ? id : ++next_id_;
      if (rng() % 6 == 0) options.notice_id = 1 + rng() % (next_id_ + 1);
      options.notice_verb = rng() % 2;
      options.notice_payload = Payload();
    }
    what_ = "React " + std::to_string(user) + " to " + std::to_string(id) +
            " kind " + std::to_string(kind) + " notice " +
            std::to_string(options.notice_id);
    for (Member& m : members_) {
      INFO("threshold " << m.threshold << " inactive_after "
                        << m.inactive_after);
      const absl::StatusOr<ReactionResult> want =
          m.model.React(user, id, kind, options, now);
      const absl::StatusOr<ReactionResult> got =
          m.engine->React(user, id, kind, options);
      INFO(got.status());
      REQUIRE(got.status().code() == want.status().code());
      if (!got.ok()) continue;
      REQUIRE(got->changed == want->changed);
      REQUIRE(got->counters == want->counters);
      REQUIRE(got->notified == want->notified);
      coverage_.reactions_changed += got->changed;
      coverage_.notices += got->notified;
      if (got->changed) last_reacted_ = id;
    }
  } else if (op < 80) {
    what_ = "Unreact " + std::to_string(user) + " to " + std::to_string(id) +
            " kind " + std::to_string(kind);
    for (Member& m : members_) {
      INFO("threshold " << m.threshold << " inactive_after "
                        << m.inactive_after);
      const absl::StatusOr<ReactionResult> want =
          m.model.Unreact(user, id, kind, now);
      const absl::StatusOr<ReactionResult> got =
          m.engine->Unreact(user, id, kind);
      INFO(got.status());
      REQUIRE(got.status().code() == want.status().code());
      if (!got.ok()) continue;
      REQUIRE(got->changed == want->changed);
      REQUIRE(got->counters == want->counters);
      coverage_.reactions_changed += got->changed;
    }
  } else {
    std::vector<ActivityId> ids;
    const size_t n = rng() % 12;
    for (size_t i = 0; i < n; ++i) ids.push_back(1 + rng() % (next_id_ + 2));
    ids.push_back(id);
    const size_t limit = 1 + rng() % 4;
    what_ = "GetOwnReactions " + std::to_string(user) + " and ReadReactors " +
            std::to_string(id) + " kind " + std::to_string(kind) + " by " +
            std::to_string(limit);
    for (Member& m : members_) {
      INFO("threshold " << m.threshold << " inactive_after "
                        << m.inactive_after);
      const absl::StatusOr<std::vector<ReactionKinds>> own =
          m.engine->GetOwnReactions(user, ids);
      REQUIRE_MESSAGE(own.ok(), own.status());
      REQUIRE(*own == m.model.OwnReactions(user, ids, now));
      const absl::StatusOr<std::vector<Reactor>> want =
          m.model.Reactors(id, kind, now);
      std::vector<Reactor> got;
      ListOptions list;
      list.limit = limit;
      for (;;) {
        const absl::StatusOr<ReactorPage> page =
            m.engine->ReadReactors(id, kind, list);
        INFO(page.status());
        REQUIRE(page.status().code() == want.status().code());
        if (!page.ok()) break;
        got.insert(got.end(), page->reactors.begin(), page->reactors.end());
        REQUIRE(got.size() <= config_.entities * kActivityCounterCount);
        if (page->next_cursor.empty()) break;
        REQUIRE(page->reactors.size() == limit);
        list.cursor = page->next_cursor;
        ++coverage_.reactors_paged;
      }
      if (want.ok()) REQUIRE(got == *want);
    }
  }
  // The reacted activity's actor: its notification badge as the model's.
  const auto& acts = members_[0].model.activities();
  auto it = acts.find(id);
  if (it == acts.end()) return;
  const EntityId actor = it->second.actor;
  for (Member& m : members_) {
    m.model.ReclaimNotifications(actor, now);
    const absl::StatusOr<NotificationCounts> counts =
        m.engine->GetNotificationCounts(actor);
    REQUIRE_MESSAGE(counts.ok(), counts.status());
    REQUIRE(*counts == m.model.Counts(actor));
  }
}

}  // namespace feedcore::social_model
