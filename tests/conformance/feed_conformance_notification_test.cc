// Model-based conformance test of the notification feeds, run against the
// backend that FEEDCORE_TEST_BACKEND selects (conformance/backend.h): long
// sequences of Publish with PublishOptions::notify, Retract,
// MarkSeen, MarkRead, MarkAllRead, GetNotificationCounts, ReadNotifications
// paging walks (random limits), clock advances and (in process, the one
// backend with on-demand eviction) EvictExpired, every answer compared
// exactly with a plain reference model. One configuration groups notifications
// (NotificationOptions::aggregated), the other keeps a flat feed.
//
// The model keeps, per user, the notifications its feed holds, keyed by
// (ts, activity id) with actor, expiry and group key, and the seen and read
// flags of each group present. Group keys come from a group key function of
// the test's own (verb * 1000 + object, 0 for neither), so the model knows
// them; in the flat configuration every key is 0.
//   * A publish puts its entry into each distinct recipient's feed; a new
//     group, or an entry joining a group, makes that group unseen and
//     unread. A feed holds at most max_length entries: beyond it the oldest
//     go, expired or not, since expired entries count towards the cap until
//     they are reclaimed; an entry older than everything in a full feed is
//     not stored at all (so it makes no group unseen).
//   * Every notification call of a user first reclaims the expired entries
//     of that user's feed, exactly as the engine does; so the model holds
//     expired entries, as the engine does, until such a call, EvictExpired
//     or a retraction takes them. EvictExpired is always called with a
//     budget that reclaims everything: a partial budget reclaims an order of
//     feeds (own and world feeds included) that is the engine's business,
//     and which entries it leaves decides what a later put into a full feed
//     trims. Its count (own and world feed entries of every expired,
//     unretracted activity, plus the notifications no call reclaimed yet)
//     is compared too.
//   * Retract removes the activity's entry from every recipient's feed,
//     expired or not, while the store still holds the activity; once
//     eviction dropped an expired activity, Retract is NotFound.
//   * A group whose last entry leaves (trim, expiry, retraction) takes its
//     flags with it; a later group with the same key starts unseen and
//     unread.
//   * A user who blocks an actor, or mutes it with notifications (until
//     Unmute, or until the mute expires), gets none of its notifications;
//     Block and such a Mute remove the actor's entries from the feed,
//     expired or not.
// Reads are grouped with ReferenceGroups (model/feed_model.h) and carry the
// model's flags; counts are the model's groups not seen, not read, and all.
//
// Seeds are fixed and printed on failure; FEEDCORE_MODEL_SEED overrides the
// seed and FEEDCORE_MODEL_OPS the number of operations per configuration.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "conformance/backend.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/types.h"
#include "model/feed_model.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

// Few users and a short feed, so that feeds fill, trim and reject.
constexpr EntityId kUsers = 6;
constexpr EntityId kActors = 4;
constexpr size_t kMaxLength = 6;
constexpr size_t kMaxGroupActors = 2;
constexpr size_t kMaxGroupEntries = 3;
constexpr size_t kMaxLimit = 7;
// Short-lived notifications expire within a few dozen operations, while
// they are still in their feeds; the default ttl never runs out.
constexpr Micros kShortTtlMin = 30;
constexpr Micros kShortTtlSpan = 270;
constexpr Micros kMaxAdvance = 40;
constexpr Micros kTsSpread = 150;
constexpr size_t kEvictAll = 1'000'000;

using Key = testing::FeedModel::Key;

GroupKey GroupKeyOf(const Activity& a) { return a.verb * 1000 + a.object; }

std::string Describe(const FeedGroup& g) {
  std::ostringstream os;
  os << "{key=" << g.key << " activities=" << g.activity_count
     << " actors=" << g.actor_count << " recent_actors=[";
  for (const EntityId a : g.recent_actors) os << " " << a;
  os << " ] recent=[";
  for (const StoredEntry& e : g.recent) {
    os << " " << e.ts << "/" << e.activity_id << "@" << e.actor << "~"
       << e.expires_at << "#" << e.group;
  }
  os << " ] first_ts=" << g.first_ts << " last_ts=" << g.last_ts
     << " seen=" << g.seen << " read=" << g.read << "}";
  return os.str();
}

std::string Describe(const NotificationCounts& c) {
  std::ostringstream os;
  os << "{unseen=" << c.unseen << " unread=" << c.unread
     << " groups=" << c.groups << "}";
  return os.str();
}

struct Config {
  std::string name;
  bool aggregated;
  size_t shards;
};

class Runner {
 public:
  Runner(const Config& config, uint64_t seed)
      : rng_(seed),
        clock_(std::make_shared<ManualClock>(testing::SocialFixture::kStart)) {
    EngineOptions o;
    o.shards = config.shards;
    o.fanout_threads = 0;
    // Own and world feeds never trim, so that every published activity
    // leaves exactly two entries there for EvictExpired to count.
    o.max_timeline_length = 100'000;
    o.world_timeline_length = 100'000;
    o.notifications.aggregated = config.aggregated;
    o.notifications.max_length = kMaxLength;
    o.aggregation.group_key = GroupKeyOf;
    o.aggregation.max_group_actors = kMaxGroupActors;
    o.aggregation.max_group_entries = kMaxGroupEntries;
    o.sweep_interval = 0;
    o.clock = clock_;
    model_ = std::make_unique<testing::FeedModel>(o);
    absl::StatusOr<std::unique_ptr<FeedEngine>> engine =
        testing::MakeEngine(std::move(o), "notifications");
    REQUIRE_MESSAGE(engine.ok(), engine.status());
    engine_ = *std::move(engine);
  }

  struct Coverage {
    uint64_t trimmed = 0, rejected = 0, reclaimed_on_call = 0, evicted = 0,
             retracted = 0, retract_again = 0, retract_not_found = 0,
             mark_read_ok = 0, mark_read_not_found = 0, rejoined_seen = 0,
             multi_page_walks = 0, actors_bounded = 0, entries_bounded = 0,
             seen_groups = 0, read_groups = 0, hidden_removed = 0,
             hidden_notifications = 0;
  };

  Coverage coverage() const {
    Coverage c = coverage_;
    const testing::FeedModel::NotificationTally& tally =
        model_->notification_tally();
    c.trimmed = tally.trimmed;
    c.rejected = tally.rejected;
    c.rejoined_seen = tally.rejoined_seen;
    return c;
  }

  void Run(int ops) {
    for (step_ = 0; step_ < ops; ++step_) {
      INFO("step " << step_ << ": " << what_);
      if (rng_() % 100 < 4) DoRelation();
      const int op = static_cast<int>(rng_() % 100);
      if (op < 34) {
        DoPublish();
      } else if (op < 40) {
        DoRetract();
      } else if (op < 45) {
        DoMarkSeen();
      } else if (op < 49) {
        DoMarkAllRead();
      } else if (op < 59) {
        DoMarkRead();
      } else if (op < 66) {
        DoCounts(RandomUser());
      } else if (op < 82) {
        DoWalk(RandomUser());
      } else if (op < 93) {
        const Micros by = static_cast<Micros>(rng_() % (kMaxAdvance + 1));
        what_ = "advance clock by " + std::to_string(by);
        clock_->Advance(by);
      } else if (op < 96) {
        DoEvict();
      } else {
        what_ = "every user's counts and walk";
        for (EntityId user = 1; user <= kUsers; ++user) {
          DoCounts(user);
          DoWalk(user);
        }
      }
    }
  }

 private:
  EntityId RandomUser() { return 1 + rng_() % kUsers; }
  Micros Now() const { return clock_->Now(); }

  // What every notification call of `user` does first.
  void Reclaim(EntityId user) {
    coverage_.reclaimed_on_call += model_->ReclaimNotifications(user, Now());
  }

  void CheckCounts(const NotificationCounts& got, EntityId user) {
    const NotificationCounts want = model_->Counts(user);
    REQUIRE_MESSAGE(got == want, "user " << user << " got " << Describe(got)
                                         << " want " << Describe(want));
  }

  void DoPublish() {
    const ActivityId id = published_ts_.size() + 1;
    // One draw per statement: the order in which arguments are evaluated
    // differs between compilers, and a seed must replay alike with each.
    const EntityId actor = 1 + rng_() % kActors;
    const Micros ts =
        Now() + static_cast<Micros>(rng_() % (2 * kTsSpread + 1)) - kTsSpread;
    Activity a = testing::MakeActivity(id, actor, ts);
    if (rng_() % 5 < 2) {
      a.ttl = kShortTtlMin + static_cast<Micros>(rng_() % kShortTtlSpan);
    }
    // Mostly object 1, so that groups outgrow their actor and entry lists;
    // verb 0 with object 0 is the ungrouped case.
    a.verb = rng_() % 3 == 0 ? 0 : 1;
    a.object = rng_() % 4 == 0 ? rng_() % 3 : 1;
    PublishOptions options;
    const size_t n = rng_() % 4;
    for (size_t i = 0; i < n; ++i) options.notify.push_back(RandomUser());
    std::ostringstream what;
    what << "publish " << id << " actor " << a.actor << " ts " << a.ts
         << " ttl " << a.ttl << " key " << GroupKeyOf(a) << " notify [";
    for (const EntityId u : options.notify) what << " " << u;
    what << " ]";
    what_ = what.str();

    const absl::StatusOr<PublishResult> r = engine_->Publish(a, options);
    REQUIRE_MESSAGE(r.ok(), r.status());

    const absl::StatusOr<PublishResult> want =
        model_->Publish(a, options, Now());
    REQUIRE(want.ok());
    CHECK(r->created == want->created);
    CHECK(r->fanned_out == want->fanned_out);
    CHECK(r->notified == want->notified);
    coverage_.hidden_notifications +=
        std::set<EntityId>(options.notify.begin(), options.notify.end())
            .size() -
        want->notified;
    published_ts_.push_back(a.ts);
  }

  // Block, Unblock, Mute (with notifications mostly, sometimes expiring)
  // or Unmute of an actor by a user.
  void DoRelation() {
    const EntityId user = RandomUser();
    EntityId actor = 1 + rng_() % kActors;
    if (actor == user) actor = actor % kActors + 1;
    const int kind = static_cast<int>(rng_() % 4);
    MuteOptions mute;
    mute.notifications = rng_() % 4 != 0;
    if (rng_() % 3 == 0) {
      mute.expires_at = Now() + 1 + static_cast<Micros>(rng_() % 200);
    }
    what_ = "relation " + std::to_string(kind) + " " + std::to_string(user) +
            " -> " + std::to_string(actor);
    RelationResult want;
    absl::StatusOr<RelationResult> got;
    switch (kind) {
      case 0:
        want = model_->Block(user, actor);
        got = engine_->relations()->Block(user, actor);
        break;
      case 1:
        want = model_->Unblock(user, actor, 0, Now());
        got = engine_->relations()->Unblock(user, actor);
        break;
      case 2:
        want = model_->Mute(user, actor, mute, Now());
        got = engine_->relations()->Mute(user, actor, mute);
        break;
      default:
        want = model_->Unmute(user, actor, 0, Now());
        got = engine_->relations()->Unmute(user, actor);
        break;
    }
    REQUIRE_MESSAGE(got.ok(), got.status());
    CHECK(got->changed == want.changed);
    CHECK(got->removed == want.removed);
    coverage_.hidden_removed += want.removed;
  }

  void DoRetract() {
    if (published_ts_.empty()) return;
    const ActivityId id = 1 + rng_() % published_ts_.size();
    what_ = "retract " + std::to_string(id);
    const auto stored = model_->activities().find(id);
    const bool evicted = stored == model_->activities().end();
    const bool again = !evicted && stored->second.retracted;
    const absl::Status s = engine_->Retract(id);
    REQUIRE_MESSAGE(s.code() == model_->Retract(id), s);
    if (evicted) {
      ++coverage_.retract_not_found;
    } else if (again) {
      ++coverage_.retract_again;
    } else {
      ++coverage_.retracted;
    }
  }

  void DoMarkSeen() {
    const EntityId user = RandomUser();
    what_ = "mark seen " + std::to_string(user);
    Reclaim(user);
    model_->MarkSeen(user);
    CheckCounts(engine_->notifications()->MarkSeen(user).value(), user);
  }

  void DoMarkAllRead() {
    const EntityId user = RandomUser();
    what_ = "mark all read " + std::to_string(user);
    Reclaim(user);
    model_->MarkAllRead(user);
    CheckCounts(engine_->notifications()->MarkAllRead(user).value(), user);
  }

  void DoMarkRead() {
    const EntityId user = RandomUser();
    Key key{Now(), 0};
    const testing::FeedModel::FeedMap& notes = model_->notifications(user);
    if (!notes.empty() && rng_() % 2 == 0) {
      // One the feed holds, perhaps expired by now.
      auto it = notes.begin();
      std::advance(it, static_cast<long>(rng_() % notes.size()));
      key = it->first;
    } else if (!published_ts_.empty()) {
      // Any notification, most likely one the user never got or lost.
      const ActivityId id = 1 + rng_() % published_ts_.size();
      key = {published_ts_[id - 1], id};
    }
    // A timestamp that does not match names nothing.
    if (rng_() % 5 == 0) key.first += 1;
    what_ = "mark read " + std::to_string(user) + " " +
            std::to_string(key.first) + "/" + std::to_string(key.second);
    Reclaim(user);
    const absl::StatusOr<NotificationCounts> got =
        engine_->notifications()->MarkRead(user, {key.first, key.second});
    if (!model_->MarkRead(user, key)) {
      REQUIRE_MESSAGE(got.status().code() == absl::StatusCode::kNotFound,
                      got.status());
      ++coverage_.mark_read_not_found;
      return;
    }
    REQUIRE_MESSAGE(got.ok(), got.status());
    ++coverage_.mark_read_ok;
    CheckCounts(*got, user);
  }

  void DoCounts(EntityId user) {
    what_ = "counts " + std::to_string(user);
    Reclaim(user);
    CheckCounts(engine_->notifications()->GetNotificationCounts(user).value(),
                user);
  }

  std::vector<FeedGroup> Expected(EntityId user) {
    std::vector<FeedGroup> groups = model_->Notifications(user);
    for (FeedGroup& g : groups) {
      if (g.actor_count > kMaxGroupActors) ++coverage_.actors_bounded;
      if (g.activity_count > kMaxGroupEntries) ++coverage_.entries_bounded;
      if (g.seen) ++coverage_.seen_groups;
      if (g.read) ++coverage_.read_groups;
    }
    return groups;
  }

  void DoWalk(EntityId user) {
    const size_t limit = 1 + rng_() % kMaxLimit;
    what_ = "walk " + std::to_string(user) + " limit " + std::to_string(limit);
    Reclaim(user);
    const std::vector<FeedGroup> want = Expected(user);
    GroupReadOptions read;
    read.limit = limit;
    size_t at = 0;
    for (int pages = 0;; ++pages) {
      INFO("page " << pages << " from group " << at << " of " << want.size());
      REQUIRE(pages <= static_cast<int>(kMaxLength));
      const absl::StatusOr<GroupPage> page =
          engine_->notifications()->ReadNotifications(user, read);
      REQUIRE_MESSAGE(page.ok(), page.status());
      const size_t expected = std::min(limit, want.size() - at);
      REQUIRE(page->groups.size() == expected);
      for (size_t i = 0; i < expected; ++i) {
        REQUIRE_MESSAGE(page->groups[i] == want[at + i],
                        "group " << at + i << " got "
                                 << Describe(page->groups[i]) << " want "
                                 << Describe(want[at + i]));
      }
      at += expected;
      REQUIRE(page->next_cursor.empty() == (at == want.size()));
      if (page->next_cursor.empty()) break;
      if (pages == 0) ++coverage_.multi_page_walks;
      read.cursor = page->next_cursor;
    }
  }

  void DoEvict() {
    what_ = "evict expired";
    // The cluster has no on-demand eviction: its feeds are reclaimed by
    // the notification calls alone, as the model's are without this.
    FeedMaintenance* maintenance = engine_->maintenance();
    if (maintenance == nullptr) return;
    const size_t want = model_->EvictExpired(Now());
    const size_t got = maintenance->EvictExpired(kEvictAll).value();
    REQUIRE(got == want);
    coverage_.evicted += got;
  }

  std::mt19937_64 rng_;
  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<FeedEngine> engine_;
  std::unique_ptr<testing::FeedModel> model_;
  std::vector<Micros> published_ts_;  // activity id - 1
  int step_ = 0;
  std::string what_ = "start";
  Coverage coverage_;
};

std::vector<uint64_t> Seeds() {
  const uint64_t env = testing::EnvU64("FEEDCORE_MODEL_SEED", 0);
  if (env != 0) return {env};
  return {20240611, 7};
}

// Fewer on the cluster, where every call is a round trip.
int Ops() {
  return static_cast<int>(
      testing::ModelOps(testing::OnCluster() ? 5000 : 20000));
}

void RunConfig(const Config& config) {
  Runner::Coverage total;
  for (const uint64_t seed : Seeds()) {
    INFO("config " << config.name << " seed " << seed
                   << " (FEEDCORE_MODEL_SEED=" << seed << " reproduces it)");
    Runner runner(config, seed);
    runner.Run(Ops());
    const Runner::Coverage c = runner.coverage();
    total.trimmed += c.trimmed;
    total.rejected += c.rejected;
    total.reclaimed_on_call += c.reclaimed_on_call;
    total.evicted += c.evicted;
    total.retracted += c.retracted;
    total.retract_again += c.retract_again;
    total.retract_not_found += c.retract_not_found;
    total.mark_read_ok += c.mark_read_ok;
    total.mark_read_not_found += c.mark_read_not_found;
    total.rejoined_seen += c.rejoined_seen;
    total.multi_page_walks += c.multi_page_walks;
    total.actors_bounded += c.actors_bounded;
    total.entries_bounded += c.entries_bounded;
    total.seen_groups += c.seen_groups;
    total.read_groups += c.read_groups;
    total.hidden_removed += c.hidden_removed;
    total.hidden_notifications += c.hidden_notifications;
  }
  // The sequences reached what they exist to test.
  INFO("config " << config.name);
  CHECK(total.trimmed > 0);
  CHECK(total.rejected > 0);
  CHECK(total.reclaimed_on_call > 0);
  CHECK(total.retracted > 0);
  CHECK(total.retract_again > 0);
  if (!testing::OnCluster()) {
    CHECK(total.evicted > 0);
    CHECK(total.retract_not_found > 0);
  }
  CHECK(total.mark_read_ok > 0);
  CHECK(total.mark_read_not_found > 0);
  CHECK(total.multi_page_walks > 0);
  CHECK(total.seen_groups > 0);
  CHECK(total.read_groups > 0);
  CHECK(total.hidden_removed > 0);
  CHECK(total.hidden_notifications > 0);
  if (config.aggregated) {
    CHECK(total.rejoined_seen > 0);
    CHECK(total.actors_bounded > 0);
    CHECK(total.entries_bounded > 0);
  }
}

TEST_CASE("notification model: aggregated feeds, 4 shards") {
  RunConfig({"aggregated, 4 shards", true, 4});
}

TEST_CASE("notification model: flat feeds, 4 shards") {
  RunConfig({"flat, 4 shards", false, 4});
}

}  // namespace
}  // namespace feedcore
