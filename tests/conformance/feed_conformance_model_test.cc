// Model-based conformance test of FeedEngine, run against the backend that
// FEEDCORE_TEST_BACKEND selects (conformance/backend.h): long random
// sequences of Follow, Unfollow, Publish (new, repeated, conflicting),
// Retract, Insert, InsertFanout, InsertBatch, Remove, refused calls and
// clock advances, on a small graph with short TTLs and a small
// max_timeline_length so that caps, back-fill limits and expiry happen all
// the time. Every result is compared exactly with a plain reference model,
// and so is everything a reader can see: each timeline, own feed and the
// world feed paged to the end in both orders (random page sizes, hydrated
// or not), the follower and followee lists and counts, and CountNewer;
// after every step for the entities the step touched (and the world feed),
// for all of them every fourth step and after every clock advance and every
// refused call. Paging walks are also left open across other steps, with
// random windows, and continued later.
//
// The reference, from the contract in feed_engine.h:
//   * a feed is a map (ts, activity_id) -> (actor, expires_at); a put of an
//     existing key replaces actor and expiry; a put into a feed at its cap
//     drops the oldest entry, or the new one if it is older than all;
//     timelines and own feeds are capped at max_timeline_length, the world
//     feed at world_timeline_length;
//   * Publish stores the activity and puts its entry into the actor's own
//     feed, the world feed and the timeline of every current follower;
//     publishing the same activity again changes nothing, another activity
//     under a taken id is AlreadyExists, a retracted id FailedPrecondition;
//   * Follow back-fills the newest min(backfill, cap) entries of the
//     followee's own feed into the follower's timeline, newest first, each
//     put as above (back-filled = inserted + replaced); following again
//     changes nothing;
//   * Unfollow removes every entry whose actor is the followee from the
//     follower's timeline, low-level inserts included;
//   * Retract removes the activity's key from its actor's own feed, the
//     world feed and every current follower's timeline; again, a no-op;
//   * hydrate gives the payload of the activity with the entry's id while
//     it is stored and not retracted, else nothing.
//
// Reclamation is the one thing the contract leaves to each backend: expired
// entries that are not yet reclaimed still count towards a cap (and a cap
// may then drop them instead of visible ones), and an expired activity is
// known until eviction drops it. So the test keeps both backends free of
// expired entries whenever anything is written: the clock only moves in a
// step of its own, which is followed at once by EvictExpired on the
// in-process engine (its sweeper is off) and by the full comparison, whose
// walk of every feed makes the cluster drop each expired member it passes
// (its reads do; EvictExpired does nothing there). The model then simply
// forgets what expired. Activities are never published again once expired,
// and a low-level entry under a published id never outlives the activity,
// so no result depends on when an expired activity is evicted; a Retract of an
// expired id may answer OK (cluster: the record lives on until Redis expires
// its key) or NotFound (evicted), and must change nothing visible.
//
// FEEDCORE_MODEL_SEED overrides the seed, FEEDCORE_MODEL_OPS the number of
// steps per run.
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
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::OnCluster;
using Key = std::pair<Micros, ActivityId>;

struct Config {
  size_t shards;  // in-process engine only
  size_t cap;     // max_timeline_length
  size_t world_cap;
  size_t max_page_size;
  size_t default_backfill;
  EntityId entities;  // ids 1..entities
};

constexpr Micros kDefaultTtl = 300;
constexpr size_t kMaxPayload = 24;
// Low-level inserts use ids from here on (a small pool, so keys collide);
// published activities count up from 1 and never reach it.
constexpr ActivityId kLowLevelIds = 1'000'000;

enum class FeedKind { kHome, kOwn, kWorld };

const char* Name(FeedKind kind) {
  switch (kind) {
    case FeedKind::kHome:
      return "timeline";
    case FeedKind::kOwn:
      return "own";
    case FeedKind::kWorld:
      return "world";
  }
  return "?";
}

std::string Describe(const InsertResult& r) {
  std::ostringstream os;
  os << "{inserted=" << r.inserted << " replaced=" << r.replaced
     << " rejected=" << r.rejected_by_cap << " trimmed=" << r.trimmed << "}";
  return os.str();
}

// The reference model: plain containers, obviously right.
class Reference {
 public:
  struct Value {
    EntityId actor;
    Micros expires_at;
  };
  using Feed = std::map<Key, Value>;
  struct Stored {
    EntityId actor;
    Micros ts;
    std::string payload;
    Micros expires_at;
    bool retracted = false;
  };

  explicit Reference(const Config& config) : config_(config) {}

  // A put into `feed` capped at `cap`, counted as Insert counts it.
  static void Put(Feed& feed, size_t cap, Key key, Value value,
                  InsertResult* r) {
    auto it = feed.find(key);
    if (it != feed.end()) {
      it->second = value;
      ++r->replaced;
      return;
    }
    if (feed.size() >= cap && key < feed.begin()->first) {
      ++r->rejected_by_cap;
      return;
    }
    feed[key] = value;
    ++r->inserted;
    while (feed.size() > cap) {
      feed.erase(feed.begin());
      ++r->trimmed;
    }
  }

  void Insert(EntityId owner, Key key, Value value, InsertResult* r) {
    Put(home_[owner], config_.cap, key, value, r);
  }

  bool Remove(EntityId owner, Key key) { return home_[owner].erase(key) > 0; }

  // The fan-out count of a new activity.
  size_t Publish(ActivityId id, const Stored& a) {
    store_[id] = a;
    const Key key{a.ts, id};
    const Value value{a.actor, a.expires_at};
    InsertResult ignored;
    Put(own_[a.actor], config_.cap, key, value, &ignored);
    Put(world_, config_.world_cap, key, value, &ignored);
    for (const EntityId f : followers_[a.actor]) {
      Put(home_[f], config_.cap, key, value, &ignored);
    }
    return followers_[a.actor].size();
  }

  void Retract(ActivityId id) {
    Stored& a = store_.at(id);
    if (a.retracted) return;
    a.retracted = true;
    const Key key{a.ts, id};
    own_[a.actor].erase(key);
    world_.erase(key);
    for (const EntityId f : followers_[a.actor]) home_[f].erase(key);
  }

  FollowResult Follow(EntityId follower, EntityId followee, size_t backfill) {
    FollowResult r;
    if (!following_[follower].insert(followee).second) return r;
    followers_[followee].insert(follower);
    r.created = true;
    const Feed& own = own_[followee];
    InsertResult put;
    size_t n = 0;
    for (auto it = own.rbegin();
         it != own.rend() && n < std::min(backfill, config_.cap); ++it, ++n) {
      Put(home_[follower], config_.cap, it->first, it->second, &put);
    }
    r.backfilled = put.inserted + put.replaced;
    return r;
  }

  UnfollowResult Unfollow(EntityId follower, EntityId followee) {
    UnfollowResult r;
    if (following_[follower].erase(followee) == 0) return r;
    followers_[followee].erase(follower);
    r.was_following = true;
    r.removed = std::erase_if(home_[follower], [&](const auto& kv) {
      return kv.second.actor == followee;
    });
    return r;
  }

  // Forgets everything that expired at `now`; returns how many feed
  // entries that was (what the in-process EvictExpired reclaims).
  size_t Expire(Micros now) {
    size_t n = 0;
    auto drop = [&](Feed& feed) {
      n += std::erase_if(
          feed, [&](const auto& kv) { return kv.second.expires_at <= now; });
    };
    for (auto& [e, feed] : home_) drop(feed);
    for (auto& [e, feed] : own_) drop(feed);
    drop(world_);
    for (auto it = store_.begin(); it != store_.end();) {
      if (it->second.expires_at <= now) {
        expired_.insert(it->first);
        it = store_.erase(it);
      } else {
        ++it;
      }
    }
    return n;
  }

  const Feed& feed(FeedKind kind, EntityId owner) {
    switch (kind) {
      case FeedKind::kHome:
        return home_[owner];
      case FeedKind::kOwn:
        return own_[owner];
      case FeedKind::kWorld:
        break;
    }
    return world_;
  }

  // What a read of `kind` returns, in `order`, inside the window, strictly
  // after `after` when given.
  std::vector<StoredEntry> Visible(FeedKind kind, EntityId owner,
                                   ReadOrder order,
                                   std::optional<Micros> min_ts,
                                   std::optional<Micros> max_ts,
                                   std::optional<Key> after, bool hydrate) {
    std::vector<StoredEntry> out;
    auto visit = [&](const Key& k, const Value& v) {
      if (min_ts && k.first < *min_ts) return;
      if (max_ts && k.first > *max_ts) return;
      if (after) {
        if (order == ReadOrder::kNewestFirst && !(k < *after)) return;
        if (order == ReadOrder::kOldestFirst && !(k > *after)) return;
      }
      out.push_back({k.first, k.second, v.actor, v.expires_at, 0,
                     hydrate ? Payload(k.second) : std::string()});
    };
    const Feed& f = feed(kind, owner);
    if (order == ReadOrder::kNewestFirst) {
      for (auto it = f.rbegin(); it != f.rend(); ++it) {
        visit(it->first, it->second);
      }
    } else {
      for (const auto& [k, v] : f) visit(k, v);
    }
    return out;
  }

  std::string Payload(ActivityId id) const {
    auto it = store_.find(id);
    if (it == store_.end() || it->second.retracted) return {};
    return it->second.payload;
  }

  size_t CountNewer(EntityId reader, Key key, size_t max_count) {
    const Feed& f = home_[reader];
    const size_t n = static_cast<size_t>(
        std::distance(f.upper_bound({key.first, key.second}), f.end()));
    return std::min(n, max_count);
  }

  size_t Entries() const {
    size_t n = world_.size();
    for (const auto& [e, feed] : home_) n += feed.size();
    for (const auto& [e, feed] : own_) n += feed.size();
    return n;
  }
  size_t Edges() const {
    size_t n = 0;
    for (const auto& [e, set] : following_) n += set.size();
    return n;
  }

  bool Follows(EntityId follower, EntityId followee) {
    return following_[follower].count(followee) > 0;
  }
  const std::set<EntityId>& followers(EntityId e) { return followers_[e]; }
  const std::set<EntityId>& following(EntityId e) { return following_[e]; }
  const std::map<ActivityId, Stored>& store() const { return store_; }
  const std::set<ActivityId>& expired() const { return expired_; }

 private:
  const Config config_;
  std::map<EntityId, Feed> home_, own_;
  Feed world_;
  std::map<EntityId, std::set<EntityId>> followers_, following_;
  // Published activities that have not expired, retracted ones included.
  std::map<ActivityId, Stored> store_;
  std::set<ActivityId> expired_;
};

// A paging walk left open across other steps.
struct Walk {
  FeedKind kind;
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
        model_(config) {
    EngineOptions o;
    o.shards = config.shards;
    o.max_timeline_length = config.cap;
    o.world_timeline_length = config.world_cap;
    o.max_page_size = config.max_page_size;
    o.default_backfill = config.default_backfill;
    o.default_ttl = kDefaultTtl;
    o.max_payload_bytes = kMaxPayload;
    o.sweep_interval = 0;
    o.clock = clock_;
    absl::StatusOr<std::unique_ptr<FeedEngine>> made =
        testing::MakeEngine(std::move(o), "feedmodel");
    REQUIRE_MESSAGE(made.ok(), made.status());
    engine_ = *std::move(made);
  }

  void Run(int steps) {
    for (step_ = 0; step_ < steps; ++step_) {
      INFO("step " << step_ << ": " << what_);
      const int op = static_cast<int>(rng_() % 100);
      if (op < 18) {
        DoPublish();
      } else if (op < 22) {
        DoRepublish();
      } else if (op < 28) {
        DoRetract();
      } else if (op < 41) {
        DoFollow();
      } else if (op < 49) {
        DoUnfollow();
      } else if (op < 57) {
        DoInsert();
      } else if (op < 61) {
        DoFanout();
      } else if (op < 65) {
        DoBatch();
      } else if (op < 70) {
        DoRemove();
      } else if (op < 74) {
        DoRefused();
      } else if (op < 86) {
        DoAdvance();
      } else if (op < 93) {
        DoWalk();
      } else {
        DoContinue();
      }
      INFO("after step " << step_ << ": " << what_);
      if (check_all_ || step_ % 4 == 3) {
        CheckAll();
      } else {
        for (const EntityId e : touched_) CheckEntity(e);
        if (touched_world_) CheckWorld();
      }
      touched_.clear();
      touched_world_ = false;
      check_all_ = false;
    }
  }

  struct Coverage {
    uint64_t replaced = 0, rejected = 0, trimmed = 0, expired = 0,
             backfilled = 0, unfollow_removed = 0, retracted = 0,
             republished = 0, conflicts = 0, refused = 0, walks_finished = 0;
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

  Micros Ttl() {
    switch (rng_() % 4) {
      case 0:
        return 0;  // default_ttl
      case 1:
        return 2000 + static_cast<Micros>(rng_() % 2000);
      default:
        return 1 + static_cast<Micros>(rng_() % 400);
    }
  }

  // The expiry a put with `o` gets now.
  Micros ExpiryOf(const InsertOptions& o) const {
    if (o.expires_at) return *o.expires_at;
    return Now() + (o.ttl == 0 ? kDefaultTtl : o.ttl);
  }

  std::optional<ActivityId> AnyStored(bool retracted_too) {
    std::vector<ActivityId> ids;
    for (const auto& [id, a] : model_.store()) {
      if (retracted_too || !a.retracted) ids.push_back(id);
    }
    if (ids.empty()) return std::nullopt;
    return ids[rng_() % ids.size()];
  }

  // What the step may have changed, compared right after it.
  void Touch(EntityId e) { touched_.insert(e); }
  void TouchActor(EntityId actor) {
    Touch(actor);
    for (const EntityId f : model_.followers(actor)) Touch(f);
    touched_world_ = true;
  }

  void Record(const InsertResult& r) {
    coverage_.replaced += r.replaced;
    coverage_.rejected += r.rejected_by_cap;
    coverage_.trimmed += r.trimmed;
  }

  // --- Social steps ---

  void DoPublish() {
    Activity a;
    a.id = next_id_++;
    a.actor = Entity();
    a.ts = RecentTs();
    a.ttl = Ttl();
    a.payload = OneIn(8) ? std::string()
                         : std::string(rng_() % (kMaxPayload + 1),
                                       static_cast<char>('a' + a.id % 26));
    what_ = "Publish " + std::to_string(a.id) + " by " +
            std::to_string(a.actor) + " ts " + std::to_string(a.ts);
    TouchActor(a.actor);
    const absl::StatusOr<PublishResult> r = engine_->Publish(a);
    REQUIRE_MESSAGE(r.ok(), r.status());
    const Micros expires_at = Now() + (a.ttl == 0 ? kDefaultTtl : a.ttl);
    const size_t fanned =
        model_.Publish(a.id, {a.actor, a.ts, a.payload, expires_at, false});
    CHECK(r->created);
    CHECK(r->fanned_out == fanned);
    CHECK_FALSE(r->merged_at_read);
    CHECK(r->notified == 0);
  }

  // The same activity again (a no-op), or another under its id.
  void DoRepublish() {
    const std::optional<ActivityId> id = AnyStored(/*retracted_too=*/true);
    if (!id) return DoPublish();
    const Reference::Stored& s = model_.store().at(*id);
    Activity a;
    a.id = *id;
    a.actor = s.actor;
    a.ts = s.ts;
    a.payload = s.payload;
    a.ttl = Ttl();  // not compared
    const int change = static_cast<int>(rng_() % 4);
    if (change == 1) a.actor = a.actor % config_.entities + 1;
    if (change == 2) a.ts += 1;
    if (change == 3) {
      if (a.payload.empty()) {
        a.payload = "x";
      } else {
        a.payload[0] = static_cast<char>(a.payload[0] ^ 1);
      }
    }
    what_ = "Publish again " + std::to_string(a.id) + " change " +
            std::to_string(change);
    TouchActor(s.actor);
    TouchActor(a.actor);
    const absl::StatusOr<PublishResult> r = engine_->Publish(a);
    INFO(r.status());
    if (s.retracted) {
      CHECK(absl::IsFailedPrecondition(r.status()));
    } else if (change != 0) {
      CHECK(absl::IsAlreadyExists(r.status()));
      ++coverage_.conflicts;
    } else {
      REQUIRE(r.ok());
      CHECK_FALSE(r->created);
      CHECK(r->fanned_out == 0);
      ++coverage_.republished;
    }
  }

  void DoRetract() {
    const int kind = static_cast<int>(rng_() % 10);
    if (kind == 0) {
      // Never published (ids below next_id_ that failed to publish are
      // unknown too).
      const ActivityId id = next_id_ + 1000 + rng_() % 1000;
      what_ = "Retract unknown " + std::to_string(id);
      CHECK(absl::IsNotFound(engine_->Retract(id)));
      return;
    }
    if (kind == 1 && !model_.expired().empty()) {
      // Expired: OK while the backend still knows the id, NotFound once
      // evicted; every copy of it has expired, so nothing visible changes.
      auto it = model_.expired().begin();
      std::advance(it, static_cast<long>(rng_() % model_.expired().size()));
      what_ = "Retract expired " + std::to_string(*it);
      check_all_ = true;
      const absl::Status s = engine_->Retract(*it);
      CHECK_MESSAGE((s.ok() || absl::IsNotFound(s)), s);
      return;
    }
    const std::optional<ActivityId> id = AnyStored(/*retracted_too=*/true);
    if (!id) return;
    what_ = "Retract " + std::to_string(*id);
    TouchActor(model_.store().at(*id).actor);
    const absl::Status s = engine_->Retract(*id);
    CHECK_MESSAGE(s.ok(), s);
    coverage_.retracted += !model_.store().at(*id).retracted;
    model_.Retract(*id);
  }

  void DoFollow() {
    const EntityId follower = Entity();
    EntityId followee = Entity();
    if (followee == follower) followee = follower % config_.entities + 1;
    FollowOptions o;
    switch (rng_() % 4) {
      case 0:
        break;  // default_backfill
      case 1:
        o.backfill = rng_() % (config_.cap + 3);
        break;
      case 2:
        o.backfill = kMaxTimelineLengthLimit;
        break;
      default:
        o.backfill = rng_() % 3;
        break;
    }
    what_ = "Follow " + std::to_string(follower) + " -> " +
            std::to_string(followee) + " backfill " +
            (o.backfill ? std::to_string(*o.backfill) : "default");
    Touch(follower);
    Touch(followee);
    const absl::StatusOr<FollowResult> r =
        engine_->Follow(follower, followee, o);
    REQUIRE_MESSAGE(r.ok(), r.status());
    const FollowResult want = model_.Follow(
        follower, followee, o.backfill.value_or(config_.default_backfill));
    CHECK(r->created == want.created);
    CHECK(r->backfilled == want.backfilled);
    coverage_.backfilled += want.backfilled;
  }

  void DoUnfollow() {
    const EntityId follower = Entity();
    EntityId followee = Entity();
    if (followee == follower) followee = follower % config_.entities + 1;
    // Mostly an existing edge.
    if (!OneIn(4)) {
      const std::set<EntityId>& following = model_.following(follower);
      if (!following.empty()) {
        auto it = following.begin();
        std::advance(it, static_cast<long>(rng_() % following.size()));
        followee = *it;
      }
    }
    what_ = "Unfollow " + std::to_string(follower) + " -> " +
            std::to_string(followee);
    Touch(follower);
    Touch(followee);
    const absl::StatusOr<UnfollowResult> r =
        engine_->Unfollow(follower, followee);
    REQUIRE_MESSAGE(r.ok(), r.status());
    const UnfollowResult want = model_.Unfollow(follower, followee);
    CHECK(r->was_following == want.was_following);
    CHECK(r->removed == want.removed);
    coverage_.unfollow_removed += want.removed;
  }

  // --- Low-level steps ---

  // An entry and its insert options: a fresh low-level key, or the key
  // (or id) of a stored activity, which then expires with it.
  std::pair<TimelineEntry, InsertOptions> LowLevel() {
    TimelineEntry e;
    InsertOptions o;
    const std::optional<ActivityId> published =
        OneIn(3) ? AnyStored(/*retracted_too=*/true) : std::nullopt;
    if (published) {
      const Reference::Stored& s = model_.store().at(*published);
      e.activity_id = *published;
      e.ts = OneIn(4) ? s.ts - 1 - static_cast<Micros>(rng_() % 5) : s.ts;
      e.actor = OneIn(2) ? s.actor : Entity();
      o.expires_at = s.expires_at;
      return {e, o};
    }
    e.activity_id = kLowLevelIds + rng_() % 6;
    e.ts = Now() - static_cast<Micros>(rng_() % (OneIn(4) ? 400 : 12));
    e.actor = Entity();
    switch (rng_() % 3) {
      case 0:
        o.ttl = 1 + static_cast<Micros>(rng_() % 400);
        break;
      case 1:
        o.expires_at = Now() + 1 + static_cast<Micros>(rng_() % 400);
        break;
      default:
        break;  // default_ttl
    }
    return {e, o};
  }

  void CheckInsert(const absl::StatusOr<InsertResult>& got,
                   const InsertResult& want) {
    REQUIRE_MESSAGE(got.ok(), got.status());
    INFO("want " << Describe(want) << " got " << Describe(*got));
    CHECK(Describe(*got) == Describe(want));
    Record(want);
  }

  void DoInsert() {
    const EntityId owner = Entity();
    const auto [e, o] = LowLevel();
    what_ = "Insert into " + std::to_string(owner) + " (" +
            std::to_string(e.ts) + ", " + std::to_string(e.activity_id) +
            ") actor " + std::to_string(e.actor);
    Touch(owner);
    InsertResult want;
    model_.Insert(owner, {e.ts, e.activity_id}, {e.actor, ExpiryOf(o)}, &want);
    CheckInsert(engine_->Insert(owner, e, o), want);
  }

  void DoFanout() {
    std::vector<EntityId> owners;
    const size_t n = rng_() % (config_.entities + 2);
    for (size_t i = 0; i < n; ++i) owners.push_back(Entity());
    const auto [e, o] = LowLevel();
    what_ = "InsertFanout to " + std::to_string(owners.size()) + " owners";
    InsertResult want;
    for (const EntityId owner : owners) {
      Touch(owner);
      model_.Insert(owner, {e.ts, e.activity_id}, {e.actor, ExpiryOf(o)},
                    &want);
    }
    CheckInsert(engine_->InsertFanout(owners, e, o), want);
  }

  void DoBatch() {
    std::vector<OwnedEntry> batch(rng_() % 7);
    InsertOptions o;
    std::optional<Micros> shared_expiry;
    for (OwnedEntry& pair : batch) {
      auto [e, eo] = LowLevel();
      pair.owner = Entity();
      pair.entry = e;
      // One set of options for the whole batch: an entry of a stored
      // activity must not outlive it, so the batch takes the earliest
      // such expiry.
      if (eo.expires_at &&
          (!shared_expiry || *eo.expires_at < *shared_expiry)) {
        shared_expiry = eo.expires_at;
      }
    }
    if (shared_expiry) {
      o.expires_at = shared_expiry;
    } else if (OneIn(2)) {
      o.ttl = 1 + static_cast<Micros>(rng_() % 400);
    }
    what_ = "InsertBatch of " + std::to_string(batch.size());
    InsertResult want;
    for (const OwnedEntry& pair : batch) {
      Touch(pair.owner);
      model_.Insert(pair.owner, {pair.entry.ts, pair.entry.activity_id},
                    {pair.entry.actor, ExpiryOf(o)}, &want);
    }
    CheckInsert(engine_->InsertBatch(batch, o), want);
  }

  void DoRemove() {
    const EntityId owner = Entity();
    Key key{Now() - static_cast<Micros>(rng_() % 12),
            kLowLevelIds + rng_() % 6};
    const Reference::Feed& home = model_.feed(FeedKind::kHome, owner);
    if (!home.empty() && !OneIn(4)) {
      auto it = home.begin();
      std::advance(it, static_cast<long>(rng_() % home.size()));
      key = it->first;
    }
    what_ = "Remove from " + std::to_string(owner) + " (" +
            std::to_string(key.first) + ", " + std::to_string(key.second) + ")";
    Touch(owner);
    const bool present = model_.Remove(owner, key);
    const absl::Status s = engine_->Remove(owner, key.first, key.second);
    INFO(s);
    if (present) {
      CHECK(s.ok());
    } else {
      CHECK(absl::IsNotFound(s));
    }
  }

  // A call the engine must refuse, having changed nothing (the comparison
  // after every step sees any change).
  void DoRefused() {
    check_all_ = true;
    const EntityId e = Entity();
    absl::Status s;
    const absl::StatusCode want = absl::StatusCode::kInvalidArgument;
    switch (rng_() % 12) {
      case 0:
        what_ = "Insert with ts < 0";
        s = engine_->Insert(e, {-1 - static_cast<Micros>(rng_() % 5), 1, e})
                .status();
        break;
      case 1: {
        what_ = "InsertFanout expiring now or before";
        InsertOptions o;
        o.expires_at = Now() - static_cast<Micros>(rng_() % 3);
        s = engine_->InsertFanout({e, Entity()}, {Now(), 5, e}, o).status();
        break;
      }
      case 2: {
        what_ = "InsertBatch with one bad pair";
        std::vector<OwnedEntry> batch;
        for (int i = 0; i < 4; ++i) batch.push_back({Entity(), {Now(), 7, e}});
        batch[rng_() % 4].entry.ts = -1;
        s = engine_->InsertBatch(batch).status();
        break;
      }
      case 3:
        what_ = "Remove with ts < 0";
        s = engine_->Remove(e, -1, 1);
        break;
      case 4:
        what_ = "Follow of oneself";
        s = engine_->Follow(e, e).status();
        break;
      case 5: {
        what_ = "Follow with a bad back-fill";
        FollowOptions o;
        o.backfill = kMaxTimelineLengthLimit + 1 + rng_() % 10;
        s = engine_->Follow(e, e % config_.entities + 1, o).status();
        break;
      }
      case 6:
        what_ = "Unfollow of oneself";
        s = engine_->Unfollow(e, e).status();
        break;
      case 7: {
        what_ = "Publish refused";
        Activity a;
        a.id = next_id_++;  // never used again
        a.actor = e;
        a.ts = RecentTs();
        switch (rng_() % 3) {
          case 0:
            a.ts = -1;
            break;
          case 1:
            a.ttl = OneIn(2) ? -1 : kMaxTtl + 1;
            break;
          default:
            a.payload.assign(kMaxPayload + 1 + rng_() % 4, 'z');
            break;
        }
        s = engine_->Publish(a).status();
        break;
      }
      case 8: {
        what_ = "read with a bad limit or window";
        ReadOptions r;
        if (OneIn(2)) {
          r.limit = OneIn(2) ? 0 : config_.max_page_size + 1;
        } else {
          r.min_ts = Now();
          r.max_ts = Now() - 1;
        }
        s = ReadKind(static_cast<FeedKind>(rng_() % 3), e, r).status();
        break;
      }
      case 9: {
        what_ = "CountNewer with a bad argument";
        s = OneIn(2)
                ? engine_->CountNewer(e, -1, 0, 1).status()
                : engine_
                      ->CountNewer(e, 0, 0,
                                   OneIn(2) ? 0 : config_.max_page_size + 1)
                      .status();
        break;
      }
      default: {
        if (walks_.empty()) return;
        const Walk& w = walks_[rng_() % walks_.size()];
        ReadOptions r;
        r.cursor = w.cursor;
        r.order = w.order;
        FeedKind kind = w.kind;
        EntityId owner = w.owner;
        switch (rng_() % 3) {
          case 0:
            what_ = "read with a cursor of the other order";
            r.order = w.order == ReadOrder::kNewestFirst
                          ? ReadOrder::kOldestFirst
                          : ReadOrder::kNewestFirst;
            break;
          case 1:
            what_ = "read with a cursor of another feed";
            kind = static_cast<FeedKind>(
                (static_cast<int>(w.kind) + 1 + static_cast<int>(rng_() % 2)) %
                3);
            break;
          default:
            what_ = "read with another owner's cursor";
            if (kind == FeedKind::kWorld) kind = FeedKind::kHome;
            owner = w.owner + config_.entities;
            break;
        }
        s = ReadKind(kind, owner, r).status();
        break;
      }
    }
    INFO(what_ << ": " << s);
    CHECK(s.code() == want);
    ++coverage_.refused;
  }

  void DoAdvance() {
    const Micros by = 1 + static_cast<Micros>(rng_() % 100);
    what_ = "advance the clock by " + std::to_string(by);
    check_all_ = true;
    clock_->Advance(by);
    const size_t expired = model_.Expire(Now());
    coverage_.expired += expired;
    const absl::StatusOr<size_t> evicted =
        engine_->EvictExpired(size_t{1} << 32);
    if (engine_->Supports(FeedCapability::kEviction)) {
      REQUIRE_MESSAGE(evicted.ok(), evicted.status());
      CHECK(*evicted == expired);
    } else {
      // The cluster's reads and key expiry drop them instead.
      CHECK(absl::IsUnimplemented(evicted.status()));
    }
  }

  // --- Reads ---

  absl::StatusOr<Page> ReadKind(FeedKind kind, EntityId owner,
                                const ReadOptions& r) const {
    switch (kind) {
      case FeedKind::kHome:
        return engine_->ReadTimeline(owner, r);
      case FeedKind::kOwn:
        return engine_->ReadOwn(owner, r);
      case FeedKind::kWorld:
        break;
    }
    return engine_->ReadWorld(r);
  }

  // Reads one page of `w` (from its cursor) and compares it with the model.
  Page ReadPage(const Walk& w, std::optional<Key> after) {
    ReadOptions r;
    r.limit = 1 + rng_() % config_.max_page_size;
    r.order = w.order;
    r.min_ts = w.min_ts;
    r.max_ts = w.max_ts;
    r.hydrate = w.hydrate;
    r.cursor = w.cursor;
    const std::vector<StoredEntry> visible = model_.Visible(
        w.kind, w.owner, w.order, w.min_ts, w.max_ts, after, w.hydrate);
    INFO("read " << Name(w.kind) << " of " << w.owner << " limit " << r.limit
                 << " oldest_first " << (w.order == ReadOrder::kOldestFirst)
                 << " min_ts " << (w.min_ts ? *w.min_ts : -1) << " max_ts "
                 << (w.max_ts ? *w.max_ts : -1) << " hydrate " << w.hydrate
                 << " after " << (after ? after->first : -1) << "/"
                 << (after ? after->second : 0));
    const absl::StatusOr<Page> page = ReadKind(w.kind, w.owner, r);
    REQUIRE_MESSAGE(page.ok(), page.status());
    const std::vector<StoredEntry> want(
        visible.begin(),
        visible.begin() + static_cast<long>(std::min(r.limit, visible.size())));
    REQUIRE(page->entries == want);
    REQUIRE(page->next_cursor.empty() == (visible.size() <= r.limit));
    return *page;
  }

  // Every page of one feed, compared page by page.
  void WholeFeed(FeedKind kind, EntityId owner, ReadOrder order) {
    Walk w{kind, owner, order, std::nullopt, std::nullopt, OneIn(3), "", {}};
    std::optional<Key> after;
    for (int pages = 0;; ++pages) {
      REQUIRE(pages < 10'000);
      const Page page = ReadPage(w, after);
      if (page.next_cursor.empty()) return;
      w.cursor = page.next_cursor;
      after = Key{page.entries.back().ts, page.entries.back().activity_id};
    }
  }

  // A new walk with a random window: one page, then to the end now, left
  // open for later steps, or dropped.
  void DoWalk() {
    Walk w;
    w.kind = static_cast<FeedKind>(rng_() % 3);
    w.owner = w.kind == FeedKind::kWorld ? 0 : Entity();
    w.order = OneIn(2) ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst;
    w.hydrate = OneIn(2);
    if (OneIn(2)) {
      const Micros a = Now() - static_cast<Micros>(rng_() % 200);
      const Micros b = Now() - static_cast<Micros>(rng_() % 200);
      if (!OneIn(3)) w.min_ts = std::min(a, b);
      if (!OneIn(3)) w.max_ts = std::max(a, b);
    }
    what_ =
        std::string("walk ") + Name(w.kind) + " of " + std::to_string(w.owner);
    Page page = ReadPage(w, std::nullopt);
    const int mode = static_cast<int>(rng_() % 3);
    while (mode == 0 && !page.next_cursor.empty()) {
      w.cursor = page.next_cursor;
      page = ReadPage(
          w, Key{page.entries.back().ts, page.entries.back().activity_id});
    }
    if (mode == 0) ++coverage_.walks_finished;
    if (mode == 1 && !page.next_cursor.empty()) {
      w.cursor = page.next_cursor;
      w.last = {page.entries.back().ts, page.entries.back().activity_id};
      if (walks_.size() >= 6) walks_.erase(walks_.begin());
      walks_.push_back(w);
    }
  }

  void DoContinue() {
    if (walks_.empty()) return DoWalk();
    const size_t i = rng_() % walks_.size();
    Walk& w = walks_[i];
    what_ = std::string("continue a walk of ") + Name(w.kind) + " of " +
            std::to_string(w.owner);
    const Page page = ReadPage(w, w.last);
    if (page.next_cursor.empty()) {
      ++coverage_.walks_finished;
      walks_.erase(walks_.begin() + static_cast<long>(i));
    } else {
      w.cursor = page.next_cursor;
      w.last = {page.entries.back().ts, page.entries.back().activity_id};
    }
  }

  std::vector<EntityId> WholeList(bool followers, EntityId entity) {
    std::vector<EntityId> out;
    ListOptions o;
    o.limit = 1 + rng_() % config_.max_page_size;
    for (int pages = 0;; ++pages) {
      REQUIRE(pages < 10'000);
      const absl::StatusOr<EntityPage> page =
          followers ? engine_->Followers(entity, o)
                    : engine_->Following(entity, o);
      REQUIRE_MESSAGE(page.ok(), page.status());
      REQUIRE(page->ids.size() <= o.limit);
      out.insert(out.end(), page->ids.begin(), page->ids.end());
      if (page->next_cursor.empty()) return out;
      REQUIRE(page->ids.size() == o.limit);
      o.cursor = page->next_cursor;
    }
  }

  // Everything a reader can see of `e`, compared with the model.
  void CheckEntity(EntityId e) {
    INFO("entity " << e);
    for (const ReadOrder order :
         {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
      WholeFeed(FeedKind::kHome, e, order);
      WholeFeed(FeedKind::kOwn, e, order);
    }
    // Followers come in a stable order that differs by backend, so they
    // compare as a set (each once); followees by ascending id on both.
    const std::vector<EntityId> followers = WholeList(true, e);
    const std::set<EntityId>& want = model_.followers(e);
    CHECK(followers.size() == want.size());
    CHECK(std::set<EntityId>(followers.begin(), followers.end()) == want);
    const std::set<EntityId>& following = model_.following(e);
    CHECK(WholeList(false, e) ==
          std::vector<EntityId>(following.begin(), following.end()));
    CHECK(engine_->FollowerCount(e).value() == want.size());
    CHECK(engine_->FollowingCount(e).value() == following.size());

    // CountNewer from an entry of the timeline, or from anywhere.
    Key from{Now() - static_cast<Micros>(rng_() % 100), rng_() % 8};
    const Reference::Feed& home = model_.feed(FeedKind::kHome, e);
    if (!home.empty() && OneIn(2)) {
      auto it = home.begin();
      std::advance(it, static_cast<long>(rng_() % home.size()));
      from = it->first;
    }
    const size_t max_count = 1 + rng_() % config_.max_page_size;
    const absl::StatusOr<size_t> newer =
        engine_->CountNewer(e, from.first, from.second, max_count);
    REQUIRE_MESSAGE(newer.ok(), newer.status());
    CHECK(*newer == model_.CountNewer(e, from, max_count));
  }

  void CheckWorld() {
    for (const ReadOrder order :
         {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
      WholeFeed(FeedKind::kWorld, 0, order);
    }
  }

  // Everything a reader can see. Its walk of every feed, newest first and
  // to the end, is also what makes the cluster drop the members that have
  // expired (see the file comment).
  void CheckAll() {
    for (EntityId e = 1; e <= config_.entities; ++e) CheckEntity(e);
    CheckWorld();
    if (engine_->Supports(FeedCapability::kStats)) {
      // With nothing expired held, the figures are exact.
      const EngineStats stats = engine_->Stats().value();
      CHECK(stats.entries == model_.Entries());
      CHECK(stats.follow_edges == model_.Edges());
      CHECK(stats.activities == model_.store().size());
    }
  }

  const Config config_;
  std::mt19937_64 rng_;
  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<FeedEngine> engine_;
  Reference model_;
  std::vector<Walk> walks_;
  std::set<EntityId> touched_;
  bool touched_world_ = false;
  bool check_all_ = false;
  ActivityId next_id_ = 1;
  Coverage coverage_;
  int step_ = 0;
  std::string what_ = "start";
};

TEST_CASE("random social and low-level operations match the reference") {
  const uint64_t seed = testing::EnvU64("FEEDCORE_MODEL_SEED", 20261125);
  const int steps =
      static_cast<int>(testing::EnvU64("FEEDCORE_MODEL_OPS", 1500));
  // One shard in the first run makes the in-process world feed a single
  // capped feed, as the cluster's is, so its cap is compared too; the other
  // runs keep it out of reach (in memory it is a cap per shard).
  const Config configs[] = {
      {1, 5, 8, 4, 3, 6},
      {4, 4, 100'000, 6, 2, 7},
      {8, 3, 100'000, 3, 5, 5},
  };
  Runner::Coverage total;
  for (size_t c = 0; c < std::size(configs); ++c) {
    const Config& config = configs[c];
    const uint64_t run_seed = seed + c;
    INFO("FEEDCORE_MODEL_SEED=" << seed << " run " << c << " (run seed "
                                << run_seed << ", cap " << config.cap
                                << ", world cap " << config.world_cap
                                << ", max_page_size " << config.max_page_size
                                << ", entities " << config.entities << ")");
    const auto start = std::chrono::steady_clock::now();
    Runner runner(config, run_seed);
    runner.Run(steps);
    total.Add(runner.coverage());
    std::printf(
        "run %zu: %d steps in %.2f s\n", c, steps,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::printf(
      "replaced %llu, rejected by cap %llu, trimmed %llu, expired %llu, "
      "back-filled %llu, removed by unfollow %llu, retracted %llu, "
      "republished %llu, conflicts %llu, refused %llu, walks finished %llu\n",
      static_cast<unsigned long long>(total.replaced),
      static_cast<unsigned long long>(total.rejected),
      static_cast<unsigned long long>(total.trimmed),
      static_cast<unsigned long long>(total.expired),
      static_cast<unsigned long long>(total.backfilled),
      static_cast<unsigned long long>(total.unfollow_removed),
      static_cast<unsigned long long>(total.retracted),
      static_cast<unsigned long long>(total.republished),
      static_cast<unsigned long long>(total.conflicts),
      static_cast<unsigned long long>(total.refused),
      static_cast<unsigned long long>(total.walks_finished));
  // The runs reached every kind of event they exist to test.
  if (steps >= 1000) {
    CHECK(total.replaced > 0);
    CHECK(total.rejected > 0);
    CHECK(total.trimmed > 0);
    CHECK(total.expired > 0);
    CHECK(total.backfilled > 0);
    CHECK(total.unfollow_removed > 0);
    CHECK(total.retracted > 0);
    CHECK(total.republished > 0);
    CHECK(total.conflicts > 0);
    CHECK(total.refused > 0);
    CHECK(total.walks_finished > 0);
  }
}

}  // namespace
}  // namespace feedcore
