// The random steps of feed_conformance_model_test.cc against one backend and
// the FeedModel they are compared with (see feed_conformance_model_test.cc
// for what the steps cover and how expiry is kept out of the comparison).
#ifndef FEEDCORE_TESTS_CONFORMANCE_FEED_CONFORMANCE_MODEL_RUNNER_H_
#define FEEDCORE_TESTS_CONFORMANCE_FEED_CONFORMANCE_MODEL_RUNNER_H_

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
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
#include "feedcore/stats.h"
#include "feedcore/types.h"
#include "model/feed_model.h"
#include "support/test_util.h"

namespace feedcore::conformance_model {

using testing::Feed;
using testing::OnCluster;
using Key = testing::FeedModel::Key;

struct Config {
  size_t shards;  // in-process engine only
  size_t cap;     // max_timeline_length
  size_t world_cap;
  size_t max_page_size;
  size_t default_backfill;
  EntityId entities;  // ids 1..entities
};

inline constexpr Micros kDefaultTtl = 300;
inline constexpr size_t kMaxPayload = 24;
// Low-level inserts use ids from here on (a small pool, so keys collide);
// published activities count up from 1 and never reach it.
inline constexpr ActivityId kLowLevelIds = 1'000'000;
// Small group lists, so that groups outgrow them.
inline constexpr size_t kMaxGroupActors = 2;
inline constexpr size_t kMaxGroupEntries = 3;

// The group key of a published activity; low-level entries draw theirs
// from the same few keys, so both kinds share groups.
inline GroupKey GroupKeyOf(const Activity& a) {
  return a.verb * 1000 + a.object;
}

inline const char* Name(Feed kind) {
  switch (kind) {
    case Feed::kTimeline:
      return "timeline";
    case Feed::kOwn:
      return "own";
    case Feed::kWorld:
      return "world";
  }
  return "?";
}

inline std::string Describe(const InsertResult& r) {
  std::ostringstream os;
  os << "{inserted=" << r.inserted << " replaced=" << r.replaced
     << " rejected=" << r.rejected_by_cap << " trimmed=" << r.trimmed << "}";
  return os.str();
}

// A paging walk left open across other steps.
struct Walk {
  Feed kind;
  EntityId owner;
  ReadOrder order;
  std::optional<Micros> min_ts, max_ts;
  bool hydrate;
  std::string cursor;
  Key last;
};

class Runner {
 public:
  Runner(const Config& config, uint64_t seed)
      : config_(config),
        rng_(seed),
        clock_(std::make_shared<ManualClock>(1'000'000)),
        model_(Options(config)) {
    EngineOptions o = Options(config);
    o.sweep_interval = 0;
    o.clock = clock_;
    absl::StatusOr<std::unique_ptr<FeedEngine>> made =
        testing::MakeEngine(std::move(o), "feedmodel");
    REQUIRE_MESSAGE(made.ok(), made.status());
    engine_ = *std::move(made);
  }

  static EngineOptions Options(const Config& config) {
    EngineOptions o;
    o.shards = config.shards;
    o.max_timeline_length = config.cap;
    o.world_timeline_length = config.world_cap;
    o.max_page_size = config.max_page_size;
    o.default_backfill = config.default_backfill;
    o.default_ttl = kDefaultTtl;
    o.max_payload_bytes = kMaxPayload;
    o.aggregation.enabled = true;
    o.aggregation.group_key = GroupKeyOf;
    o.aggregation.max_group_actors = kMaxGroupActors;
    o.aggregation.max_group_entries = kMaxGroupEntries;
    return o;
  }

  void Run(int steps);

  struct Coverage {
    uint64_t replaced = 0, rejected = 0, trimmed = 0, expired = 0,
             backfilled = 0, unfollow_removed = 0, retracted = 0,
             republished = 0, conflicts = 0, refused = 0, walks_finished = 0,
             shared_groups = 0, group_walks = 0, hidden_removed = 0,
             follows_refused = 0, restored = 0, muted_deliveries = 0,
             kept_histories = 0;
    void Add(const Coverage& o) {
      replaced += o.replaced;
      rejected += o.rejected;
      trimmed += o.trimmed;
      expired += o.expired;
      backfilled += o.backfilled;
      unfollow_removed += o.unfollow_removed;
      retracted += o.retracted;
      republished += o.republished;
      conflicts += o.conflicts;
      refused += o.refused;
      walks_finished += o.walks_finished;
      shared_groups += o.shared_groups;
      group_walks += o.group_walks;
      hidden_removed += o.hidden_removed;
      follows_refused += o.follows_refused;
      restored += o.restored;
      muted_deliveries += o.muted_deliveries;
      kept_histories += o.kept_histories;
    }
  };
  const Coverage& coverage() const { return coverage_; }

 private:
  EntityId Entity() { return 1 + rng_() % config_.entities; }
  Micros Now() const { return clock_->Now(); }
  bool OneIn(uint64_t n) { return rng_() % n == 0; }

  Micros RecentTs() {
    const Micros now = Now();
    if (OneIn(10)) return now - static_cast<Micros>(rng_() % 2000);
    if (OneIn(20)) return now + static_cast<Micros>(rng_() % 20);
    return now - static_cast<Micros>(rng_() % 60);
  }

  Micros Ttl();

  // The expiry a put with `o` gets now.
  Micros ExpiryOf(const InsertOptions& o) const {
    if (o.expires_at) return *o.expires_at;
    return Now() + (o.ttl == 0 ? kDefaultTtl : o.ttl);
  }

  std::optional<ActivityId> AnyStored(bool retracted_too);

  // What the step may have changed, compared right after it.
  void Touch(EntityId e) { touched_.insert(e); }
  void TouchActor(EntityId actor) {
    Touch(actor);
    for (const EntityId f : model_.Followers(actor)) Touch(f);
    touched_world_ = true;
  }

  void Record(const InsertResult& r) {
    coverage_.replaced += r.replaced;
    coverage_.rejected += r.rejected_by_cap;
    coverage_.trimmed += r.trimmed;
  }

  // --- Social steps ---

  void DoPublish();

  // The same activity again (a no-op), or another under its id.
  void DoRepublish();

  void DoRetract();

  void DoFollow();

  void DoUnfollow();

  // Block, Unblock, Mute (sometimes expiring) or Unmute
  // (feed_conformance_model_relations.cc).
  void DoRelation();

  // --- Low-level steps ---

  // An entry and its insert options: a fresh low-level key, or the key
  // (or id) of a stored activity, which then expires with it.
  std::pair<TimelineEntry, InsertOptions> LowLevel();

  void CheckInsert(const absl::StatusOr<InsertResult>& got,
                   const InsertResult& want) {
    REQUIRE_MESSAGE(got.ok(), got.status());
    INFO("want " << Describe(want) << " got " << Describe(*got));
    CHECK(Describe(*got) == Describe(want));
    Record(want);
  }

  void DoInsert();

  void DoFanout();

  void DoBatch();

  void DoRemove();

  // A call the engine must refuse, having changed nothing (the comparison
  // after every step sees any change).
  void DoRefused();

  void DoAdvance();

  // --- Reads ---

  absl::StatusOr<Page> ReadKind(Feed kind, EntityId owner,
                                const ReadOptions& r) const;

  // Reads one page of `w` (from its cursor) and compares it with the model.
  Page ReadPage(const Walk& w, std::optional<Key> after);

  // Every page of one feed, compared page by page.
  void WholeFeed(Feed kind, EntityId owner, ReadOrder order);

  // A new walk with a random window: one page, then to the end now, left
  // open for later steps, or dropped.
  void DoWalk();

  void DoContinue();

  std::vector<EntityId> WholeList(bool followers, EntityId entity);
  // Every page of `owner`'s grouped timeline (ReadGroups, a random
  // limit), compared page by page.
  void WholeGroups(EntityId owner);

  // Every page of `user`'s blocked and muted lists, compared.
  void CheckRelationLists(EntityId user);

  // Everything a reader can see of `e`, compared with the model.
  void CheckEntity(EntityId e);
  // The comparison after a step: what it touched, or everything.
  void CheckStep();

  void CheckWorld() {
    for (const ReadOrder order :
         {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
      WholeFeed(Feed::kWorld, 0, order);
    }
  }

  // Everything a reader can see. Its walk of every feed, newest first and
  // to the end, is also what makes the cluster drop the members that have
  // expired (see the file comment).
  void CheckAll();

  const Config config_;
  std::mt19937_64 rng_;
  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<FeedEngine> engine_;
  testing::FeedModel model_;
  std::vector<Walk> walks_;
  std::set<EntityId> touched_;
  bool touched_world_ = false;
  bool check_all_ = false;
  ActivityId next_id_ = 1;
  Coverage coverage_;
  int step_ = 0;
  std::string what_ = "start";
};

}  // namespace feedcore::conformance_model

#endif  // FEEDCORE_TESTS_CONFORMANCE_FEED_CONFORMANCE_MODEL_RUNNER_H_
