// Model-based test of the social calls: long random sequences of Follow,
// Unfollow, Publish (synchronous, and asynchronous followed later by
// WaitForFanout), Retract, ReadTimeline, ReadOwn and ReadWorld (random
// limits, orders, windows, hydration, and paging walks left open across
// other operations), ReadGroups (grouped timeline walks, also left open),
// CountNewer, Followers/Following, clock advances and EvictExpired, each
// compared exactly with a plain reference model.
//
// Every sequence runs on a group of engines that differ only in
// hybrid_fanout_threshold (0 = off, 1, 3, 6, and one never reached), each
// with its own model instance, so every engine is compared page by page
// with a model that knows which actors it merges at read.
//
// The model:
//   * who follows whom; which actors are merged at read (an actor becomes
//     so, for good, when a Follow leaves it with more followers than the
//     threshold; that follower gets no back-fill);
//   * activities (actor, ts, expiry, payload, group key, retracted), kept
//     until eviction reclaims them, tombstones included;
//   * each reader's materialized copies: a publish copies the activity to
//     every current follower unless the actor is merged at read; a Follow
//     of a copied actor copies the newest K visible activities of the
//     actor's own feed; Unfollow drops the reader's copies of that actor;
//     Retract drops every copy; eviction drops expired ones.
//   * a reader's timeline: its visible copies plus, for every merged actor
//     it follows, that actor's visible activities (the merged own feed).
// Caps (max_timeline_length, world_timeline_length) are far above anything
// a sequence reaches, so the model never trims; the back-fill count and
// EvictExpired budgets are chosen so that the model knows exactly what each
// call copies or reclaims.
//
// "Changing the threshold never changes what a reader sees": a reader of a
// merged actor sees its whole own feed, a reader of a copied actor what
// was delivered or back-filled. The two agree when the back-fill copies
// everything the actor has (and nothing is trimmed). Configurations marked
// `complete_backfill` follow with a back-fill count above any actor's
// number of activities, and there every engine of the group must return
// identical pages (entries and cursors) for every read, whatever its
// threshold; the other configurations use small random back-fill counts,
// where the engines legitimately differ and each is held to its own model.
//
// Grouped reads: every engine aggregates, with a group key function of the
// test's own (the default key is a hash private to the engine) so that the
// model knows every entry's key and flat reads compare it too. Activities
// get a verb and an object from a small range and a short time bucket, so
// groups of several activities form and outgrow the small actor and entry
// lists, while activities with neither verb nor object stay ungrouped.
// ReadGroups walks of a reader's timeline (random limits) are left open
// across other operations like the flat walks: a group cursor names the
// place (newest entry) of the last group returned, so the next page is
// exactly the groups of the reader's current visible timeline placed below
// it. The model groups its expected timeline with ReferenceGroups
// (group_reference.h) and every page is compared exactly, groups and
// whether a cursor follows; a group that gained an activity has moved above
// the cursor and is not expected again, one whose newest entry went may
// show again. Some new walks are also paged at once to the end with
// another page size. With complete back-fill every engine returns
// identical group pages and cursors. The engine answers from the
// timeline's group index, or by grouping the merged feed when the reader
// follows merged-at-read actors or holds expired entries not yet
// reclaimed; every configuration checks that its sequences read groups in
// all three states, and that some walk met a group again after its newest
// entry went.
//
// Seeds are fixed and printed on failure; FEEDCORE_MODEL_SEED overrides the
// seed and FEEDCORE_MODEL_OPS the number of operations per configuration.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
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
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "model/group_reference.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using Key = std::pair<Micros, ActivityId>;
using testing::Feed;

constexpr Micros kDefaultTtl = 500;
constexpr size_t kCap = 100'000;  // never reached
constexpr size_t kCompleteBackfill = 1'000'000;
constexpr size_t kMaxPage = 40;
constexpr size_t kMaxPayload = 8;
constexpr size_t kNeverHybrid = size_t{1} << 32;
constexpr uint64_t kEvictAll = uint64_t{1} << 40;
// Small ranges of verbs and objects and a short time bucket, against the
// few dozen activities alive at a time, make groups of several activities;
// lists shorter than those groups exercise the bounds.
constexpr uint64_t kVerbs = 3;
constexpr EntityId kObjects = 2;
constexpr Micros kTimeBucket = 40;
constexpr size_t kMaxGroupActors = 2;
constexpr size_t kMaxGroupEntries = 3;

Key KeyOf(const StoredEntry& e) { return {e.ts, e.activity_id}; }
// Where a group stands in a grouped read: its newest entry.
Key PlaceOf(const FeedGroup& g) { return KeyOf(g.recent.front()); }

// The engines' group key: 0 (ungrouped) with neither verb nor object,
// otherwise distinct for every (verb, object, time bucket).
GroupKey GroupKeyOf(const Activity& a) {
  if (a.verb == 0 && a.object == 0) return 0;
  return 1 + a.verb +
         kVerbs *
             (a.object + kObjects * static_cast<uint64_t>(a.ts / kTimeBucket));
}

class Model {
 public:
  explicit Model(size_t threshold) : threshold_(threshold) {}

  struct Act {
    EntityId actor;
    Micros ts;
    Micros expires_at;
    std::string payload;
    GroupKey group;
    bool retracted;
  };

  bool Visible(const Act& a, Micros now) const {
    return !a.retracted && a.expires_at > now;
  }

  FollowResult Follow(EntityId follower, EntityId followee, size_t backfill,
                      Micros now) {
    if (!followers_[followee].insert(follower).second) return {};
    following_[follower].insert(followee);
    bool merged = hybrid_.contains(followee);
    if (!merged && threshold_ > 0 && followers_[followee].size() > threshold_) {
      hybrid_.insert(followee);
      merged = true;
    }
    FollowResult r;
    r.created = true;
    if (!merged && backfill > 0) {
      const std::vector<StoredEntry> own =
          Read(Feed::kOwn, followee, ReadOrder::kNewestFirst, std::nullopt,
               std::nullopt, std::nullopt, now, false);
      const size_t n = std::min({backfill, own.size(), kCap});
      for (size_t i = 0; i < n; ++i) {
        copies_[follower].insert(own[i].activity_id);
      }
      r.backfilled = n;
    }
    return r;
  }

  UnfollowResult Unfollow(EntityId follower, EntityId followee) {
    if (followers_[followee].erase(follower) == 0) return {};
    following_[follower].erase(followee);
    UnfollowResult r;
    r.was_following = true;
    r.removed = std::erase_if(copies_[follower], [&](ActivityId id) {
      return acts_.at(id).actor == followee;
    });
    return r;
  }

  absl::StatusOr<PublishResult> Publish(const Activity& a, Micros now) {
    if (a.ts < 0 || a.payload.size() > kMaxPayload || a.ttl < 0 ||
        a.ttl > kMaxTtl) {
      return absl::InvalidArgumentError("invalid");
    }
    auto it = acts_.find(a.id);
    if (it != acts_.end()) {
      if (it->second.retracted) return absl::FailedPreconditionError("");
      if (it->second.actor != a.actor || it->second.ts != a.ts ||
          it->second.payload != a.payload) {
        return absl::AlreadyExistsError("");
      }
      return PublishResult{};
    }
    const bool merged = hybrid_.contains(a.actor);
    acts_[a.id] = {.actor = a.actor,
                   .ts = a.ts,
                   .expires_at = now + (a.ttl == 0 ? kDefaultTtl : a.ttl),
                   .payload = a.payload,
                   .group = GroupKeyOf(a),
                   .retracted = false};
    PublishResult r;
    r.created = true;
    r.merged_at_read = merged;
    if (!merged) {
      for (const EntityId f : followers_[a.actor]) copies_[f].insert(a.id);
      r.fanned_out = followers_[a.actor].size();
    }
    return r;
  }

  absl::StatusCode Retract(ActivityId id) {
    auto it = acts_.find(id);
    if (it == acts_.end()) return absl::StatusCode::kNotFound;
    if (it->second.retracted) return absl::StatusCode::kOk;
    it->second.retracted = true;
    for (auto& [reader, ids] : copies_) ids.erase(id);
    return absl::StatusCode::kOk;
  }

  // Expired timeline entries held (copies, own and world entries).
  size_t ExpiredEntries(Micros now) const {
    size_t n = 0;
    for (const auto& [reader, ids] : copies_) {
      for (const ActivityId id : ids) n += acts_.at(id).expires_at <= now;
    }
    for (const auto& [id, a] : acts_) {
      if (!a.retracted && a.expires_at <= now) n += 2;
    }
    return n;
  }

  // What EvictExpired with an unlimited budget reclaims.
  void EvictAll(Micros now) {
    for (auto& [reader, ids] : copies_) {
      std::erase_if(
          ids, [&](ActivityId id) { return acts_.at(id).expires_at <= now; });
    }
    activities_evicted_ += std::erase_if(
        acts_, [&](const auto& kv) { return kv.second.expires_at <= now; });
  }

  // The visible entries of a feed in `order`, within the window, strictly
  // after `after` in that order.
  std::vector<StoredEntry> Read(Feed feed, EntityId owner, ReadOrder order,
                                std::optional<Micros> min_ts,
                                std::optional<Micros> max_ts,
                                std::optional<Key> after, Micros now,
                                bool hydrate) const {
    std::set<ActivityId> ids;
    auto add_actor = [&](EntityId actor) {
      for (const auto& [id, a] : acts_) {
        if (a.actor == actor && Visible(a, now)) ids.insert(id);
      }
    };
    switch (feed) {
      case Feed::kTimeline: {
        if (auto c = copies_.find(owner); c != copies_.end()) {
          for (const ActivityId id : c->second) {
            if (Visible(acts_.at(id), now)) ids.insert(id);
          }
        }
        if (auto f = following_.find(owner); f != following_.end()) {
          for (const EntityId actor : f->second) {
            if (hybrid_.contains(actor)) add_actor(actor);
          }
        }
        break;
      }
      case Feed::kOwn:
        add_actor(owner);
        break;
      case Feed::kWorld:
        for (const auto& [id, a] : acts_) {
          if (Visible(a, now)) ids.insert(id);
        }
        break;
    }
    std::vector<StoredEntry> out;
    for (const ActivityId id : ids) {
      const Act& a = acts_.at(id);
      const Key key{a.ts, id};
      if (min_ts && a.ts < *min_ts) continue;
      if (max_ts && a.ts > *max_ts) continue;
      if (after && order == ReadOrder::kNewestFirst && !(key < *after)) {
        continue;
      }
      if (after && order == ReadOrder::kOldestFirst && !(key > *after)) {
        continue;
      }
      out.push_back(
          {a.ts, id, a.actor, a.expires_at, a.group, hydrate ? a.payload : ""});
    }
    std::sort(out.begin(), out.end(),
              [order](const StoredEntry& x, const StoredEntry& y) {
                return order == ReadOrder::kNewestFirst ? KeyOf(x) > KeyOf(y)
                                                        : KeyOf(x) < KeyOf(y);
              });
    return out;
  }

  // Every group of `reader`'s timeline, newest first.
  std::vector<FeedGroup> Groups(EntityId reader, Micros now) const {
    return testing::ReferenceGroups(
        Read(Feed::kTimeline, reader, ReadOrder::kNewestFirst, std::nullopt,
             std::nullopt, std::nullopt, now, false),
        kMaxGroupActors, kMaxGroupEntries);
  }

  // How the engine groups `reader`'s timeline: from its group index
  // unless the reader follows a merged actor or holds an expired copy (the
  // index counts those).
  enum class GroupSource { kIndex, kMerged, kExpired };
  GroupSource GroupsFrom(EntityId reader, Micros now) const {
    if (auto f = following_.find(reader); f != following_.end()) {
      for (const EntityId actor : f->second) {
        if (hybrid_.contains(actor)) return GroupSource::kMerged;
      }
    }
    if (auto c = copies_.find(reader); c != copies_.end()) {
      for (const ActivityId id : c->second) {
        if (acts_.at(id).expires_at <= now) return GroupSource::kExpired;
      }
    }
    return GroupSource::kIndex;
  }

  std::set<EntityId> Followers(EntityId e) const {
    auto it = followers_.find(e);
    return it == followers_.end() ? std::set<EntityId>{} : it->second;
  }
  std::set<EntityId> Following(EntityId e) const {
    auto it = following_.find(e);
    return it == following_.end() ? std::set<EntityId>{} : it->second;
  }

  struct Totals {
    size_t entries = 0, activities = 0, retracted = 0, payload_bytes = 0,
           follow_edges = 0;
    uint64_t activities_evicted = 0;
  };
  Totals Expected() const {
    Totals t;
    for (const auto& [reader, ids] : copies_) t.entries += ids.size();
    for (const auto& [id, a] : acts_) {
      ++t.activities;
      if (a.retracted) {
        ++t.retracted;
      } else {
        t.entries += 2;  // own feed and world feed
        t.payload_bytes += a.payload.size();
      }
    }
    for (const auto& [e, f] : followers_) t.follow_edges += f.size();
    t.activities_evicted = activities_evicted_;
    return t;
  }

  const std::map<ActivityId, Act>& acts() const { return acts_; }
  size_t hybrid_count() const { return hybrid_.size(); }

 private:
  const size_t threshold_;
  std::map<ActivityId, Act> acts_;
  std::map<EntityId, std::set<EntityId>> followers_;
  std::map<EntityId, std::set<EntityId>> following_;
  std::set<EntityId> hybrid_;
  std::map<EntityId, std::set<ActivityId>> copies_;
  uint64_t activities_evicted_ = 0;
};

struct Config {
  std::string name;
  bool complete_backfill;
  size_t shards;
  size_t fanout_threads;
  size_t parallel_fanout_min_followers;
  EntityId entities;
};

// One engine of a group with its model.
struct Member {
  size_t threshold;
  std::unique_ptr<FeedEngine> engine;
  Model model;
};

// A paging walk left open across other operations; one position per
// member (the members' pages differ when back-fill is partial). A grouped
// walk reads `owner`'s timeline with ReadGroups, newest first, and `last`
// is the place of the last group returned.
struct Session {
  Feed feed;
  EntityId owner;
  ReadOrder order;
  std::optional<Micros> min_ts, max_ts;
  bool hydrate;
  bool grouped = false;
  std::vector<std::string> cursor;
  std::vector<std::optional<Key>> last;
  std::vector<bool> done;
  // Keys of the groups the first member's walk returned so far: one that
  // comes again has moved down.
  std::set<GroupKey> shown;
};

const char* FeedName(Feed f) {
  switch (f) {
    case Feed::kTimeline:
      return "timeline";
    case Feed::kOwn:
      return "own";
    case Feed::kWorld:
      return "world";
  }
  return "?";
}

std::string Show(const PublishResult& r) {
  std::ostringstream os;
  os << "{created=" << r.created << " fanned_out=" << r.fanned_out
     << " merged=" << r.merged_at_read << " pending=" << r.pending << "}";
  return os.str();
}

std::string Show(const std::vector<FeedGroup>& groups) {
  std::ostringstream os;
  for (const FeedGroup& g : groups) {
    os << "{key " << g.key << " count " << g.activity_count << " actors "
       << g.actor_count << " [";
    for (const EntityId a : g.recent_actors) os << " " << a;
    os << " ] ts " << g.first_ts << ".." << g.last_ts << " ids";
    for (const StoredEntry& e : g.recent) {
      os << " " << e.ts << "/" << e.activity_id << "@" << e.actor << "~"
         << e.expires_at << "#" << e.group;
    }
    os << "} ";
  }
  return os.str();
}

class Runner {
 public:
  Runner(const Config& config, uint64_t seed)
      : config_(config),
        rng_(seed),
        clock_(std::make_shared<ManualClock>(1'000'000)) {
    for (const size_t threshold :
         {size_t{0}, size_t{1}, size_t{3}, size_t{6}, kNeverHybrid}) {
      EngineOptions o;
      o.shards = config.shards;
      o.default_ttl = kDefaultTtl;
      o.max_timeline_length = kCap;
      o.world_timeline_length = kCap;
      o.max_page_size = kMaxPage;
      o.max_payload_bytes = kMaxPayload;
      o.default_backfill = config.complete_backfill ? kCompleteBackfill : 3;
      o.hybrid_fanout_threshold = threshold;
      o.fanout_threads = config.fanout_threads;
      o.parallel_fanout_min_followers = config.parallel_fanout_min_followers;
      o.fanout_queue_capacity = 4;
      o.aggregation.enabled = true;
      o.aggregation.time_bucket = kTimeBucket;
      o.aggregation.group_key = GroupKeyOf;
      o.aggregation.max_group_actors = kMaxGroupActors;
      o.aggregation.max_group_entries = kMaxGroupEntries;
      members_.push_back(
          {threshold, testing::NewManualEngine(clock_, o), Model(threshold)});
    }
  }

  void Run(int ops) {
    for (step_ = 0; step_ < ops; ++step_) {
      INFO("step " << step_ << ": " << what_);
      const int op = static_cast<int>(rng_() % 100);
      if (op < 14) {
        DoFollow();
      } else if (op < 21) {
        DoUnfollow();
      } else if (op < 41) {
        DoPublish();
      } else if (op < 46) {
        DoRetract();
      } else if (op < 58) {
        DoNewRead();
      } else if (op < 66) {
        DoNewGroupRead();
      } else if (op < 78) {
        DoContinue();
      } else if (op < 82) {
        DoCountNewer();
      } else if (op < 85) {
        DoLists();
      } else if (op < 92) {
        what_ = "advance clock";
        clock_->Advance(static_cast<Micros>(rng_() % 60));
      } else if (op < 95) {
        DoEvict();
      } else if (op < 97) {
        DoInvalid();
      } else {
        CheckStats();
      }
    }
    INFO("final check");
    CheckStats();
  }

  struct Coverage {
    uint64_t merged_actors = 0, async_publishes = 0, retracted = 0,
             removed_on_unfollow = 0, backfilled = 0, walks_finished = 0,
             evicted = 0, hidden_expired = 0, idempotent = 0, conflicts = 0,
             group_walks_finished = 0, shared_groups = 0, ungrouped = 0,
             actors_bounded = 0, entries_bounded = 0, indexed_groups = 0,
             merged_groups = 0, expired_groups = 0, groups_shown_again = 0;
    void Add(const Coverage& o) {
      merged_actors += o.merged_actors;
      async_publishes += o.async_publishes;
      retracted += o.retracted;
      removed_on_unfollow += o.removed_on_unfollow;
      backfilled += o.backfilled;
      walks_finished += o.walks_finished;
      evicted += o.evicted;
      hidden_expired += o.hidden_expired;
      idempotent += o.idempotent;
      conflicts += o.conflicts;
      group_walks_finished += o.group_walks_finished;
      shared_groups += o.shared_groups;
      ungrouped += o.ungrouped;
      actors_bounded += o.actors_bounded;
      entries_bounded += o.entries_bounded;
      indexed_groups += o.indexed_groups;
      merged_groups += o.merged_groups;
      expired_groups += o.expired_groups;
      groups_shown_again += o.groups_shown_again;
    }
  };
  Coverage coverage() const {
    Coverage c = coverage_;
    for (const Member& m : members_) c.merged_actors += m.model.hybrid_count();
    return c;
  }
  // Actors merged at read by the engine whose threshold never triggers.
  size_t never_hybrid_merged() const {
    return members_.back().model.hybrid_count();
  }

 private:
  EntityId Entity() { return 1 + rng_() % config_.entities; }

  // Makes sure no asynchronous fan-out is still running before a read.
  void Settle() {
    if (!pending_) return;
    for (Member& m : members_) m.engine->WaitForFanout();
    pending_ = false;
  }

  void DoFollow() {
    const EntityId follower = Entity();
    EntityId followee = Entity();
    if (followee == follower) followee = follower % config_.entities + 1;
    FollowOptions options;
    size_t count = kCompleteBackfill;
    if (!config_.complete_backfill) {
      switch (rng_() % 5) {
        case 0:
          count = 0;
          break;
        case 1:
          count = 1;
          break;
        case 2:
          count = 2 + rng_() % 6;
          break;
        case 3:
          count = 3;  // the engine default, left unset
          break;
        default:
          count = kCompleteBackfill;
          break;
      }
      if (count != 3) options.backfill = count;
    } else if (rng_() % 2 == 0) {
      options.backfill = count;
    }
    what_ = "Follow " + std::to_string(follower) + " -> " +
            std::to_string(followee) + " backfill " + std::to_string(count);
    for (Member& m : members_) {
      INFO("threshold " << m.threshold);
      const FollowResult want =
          m.model.Follow(follower, followee, count, clock_->Now());
      const absl::StatusOr<FollowResult> got =
          m.engine->Follow(follower, followee, options);
      REQUIRE_MESSAGE(got.ok(), got.status());
      REQUIRE(got->created == want.created);
      REQUIRE(got->backfilled == want.backfilled);
      coverage_.backfilled += got->backfilled;
    }
  }

  void DoUnfollow() {
    const EntityId follower = Entity();
    EntityId followee = Entity();
    if (followee == follower) followee = follower % config_.entities + 1;
    what_ = "Unfollow " + std::to_string(follower) + " -> " +
            std::to_string(followee);
    for (Member& m : members_) {
      INFO("threshold " << m.threshold);
      const UnfollowResult want = m.model.Unfollow(follower, followee);
      const absl::StatusOr<UnfollowResult> got =
          m.engine->Unfollow(follower, followee);
      REQUIRE_MESSAGE(got.ok(), got.status());
      REQUIRE(got->was_following == want.was_following);
      REQUIRE(got->removed == want.removed);
      coverage_.removed_on_unfollow += got->removed;
    }
  }

  std::string Payload() {
    std::string p(rng_() % (kMaxPayload + 1), ' ');
    for (char& c : p) c = static_cast<char>('a' + rng_() % 3);
    return p;
  }

  Activity NewActivity() {
    head_ += static_cast<Micros>(rng_() % 3);
    Activity a;
    a.id = ++next_id_;
    a.actor = Entity();
    // Mostly recent, some anywhere in the past; equal timestamps common.
    a.ts = rng_() % 4 != 0 ? head_ - static_cast<Micros>(rng_() % 5)
                           : static_cast<Micros>(rng_() % (head_ + 1));
    a.ts = std::max<Micros>(a.ts, 0);
    a.payload = Payload();
    a.ttl = rng_() % 3 == 0 ? 0 : 1 + static_cast<Micros>(rng_() % 600);
    if (rng_() % 4 != 0) {  // otherwise neither: ungrouped
      a.verb = rng_() % kVerbs;
      a.object = rng_() % kObjects;
    }
    return a;
  }

  // An activity some model has seen (any member's model has the same
  // activities), if any.
  std::optional<std::pair<ActivityId, Model::Act>> AnyKnown() {
    const auto& acts = members_[0].model.acts();
    if (acts.empty()) return std::nullopt;
    auto it = acts.begin();
    std::advance(it, static_cast<long>(rng_() % acts.size()));
    return *it;
  }

  void DoPublish() {
    Activity a = NewActivity();
    const int kind = static_cast<int>(rng_() % 100);
    if (kind < 10) {
      if (auto known = AnyKnown()) {  // the same again: idempotent
        a.id = known->first;
        a.actor = known->second.actor;
        a.ts = known->second.ts;
        a.payload = known->second.payload;
      }
    } else if (kind < 14) {
      if (auto known = AnyKnown()) {  // a different activity, same id
        a.id = known->first;
        a.actor = known->second.actor;
        a.ts = known->second.ts;
        a.payload = known->second.payload + "x";
        if (a.payload.size() > kMaxPayload) a.payload = "";
      }
    }
    PublishOptions options;
    const bool async = rng_() % 3 == 0;
    if (async) options.completion = FanoutCompletion::kAsynchronous;
    what_ = std::string(async ? "async " : "") + "Publish id " +
            std::to_string(a.id) + " actor " + std::to_string(a.actor) +
            " ts " + std::to_string(a.ts) + " ttl " + std::to_string(a.ttl);
    std::optional<absl::StatusOr<PublishResult>> first;
    for (Member& m : members_) {
      INFO("threshold " << m.threshold);
      const absl::StatusOr<PublishResult> want =
          m.model.Publish(a, clock_->Now());
      const absl::StatusOr<PublishResult> got = m.engine->Publish(a, options);
      INFO("want " << (want.ok() ? Show(*want) : want.status().ToString())
                   << " got "
                   << (got.ok() ? Show(*got) : got.status().ToString()));
      REQUIRE(got.status().code() == want.status().code());
      if (!first) first = got;
      if (!want.ok()) continue;
      REQUIRE(got->created == want->created);
      REQUIRE(got->fanned_out == want->fanned_out);
      REQUIRE(got->merged_at_read == want->merged_at_read);
      if (!async) REQUIRE_FALSE(got->pending);
      if (got->pending) pending_ = true;
    }
    coverage_.async_publishes += async;
    if (first->ok() && !(*first)->created) ++coverage_.idempotent;
    if (absl::IsAlreadyExists(first->status())) ++coverage_.conflicts;
  }

  void DoRetract() {
    ActivityId id = next_id_ + 1 + rng_() % 3;  // unknown
    if (rng_() % 6 != 0) {
      if (auto known = AnyKnown()) id = known->first;
    }
    what_ = "Retract " + std::to_string(id);
    for (Member& m : members_) {
      INFO("threshold " << m.threshold);
      const absl::StatusCode want = m.model.Retract(id);
      const absl::Status got = m.engine->Retract(id);
      INFO(got);
      REQUIRE(got.code() == want);
    }
    ++coverage_.retracted;
  }

  void RandomWindow(std::optional<Micros>* min_ts,
                    std::optional<Micros>* max_ts) {
    min_ts->reset();
    max_ts->reset();
    if (rng_() % 3 != 0) return;
    const Micros a = static_cast<Micros>(rng_() % (head_ + 2));
    const Micros b = static_cast<Micros>(rng_() % (head_ + 2));
    if (rng_() % 3 != 0) *min_ts = std::min(a, b);
    if (rng_() % 3 != 0) *max_ts = std::max(a, b);
  }

  // Reads the next page of `s` on every member, compares each with its
  // model and, with complete back-fill, with the first member's page.
  void ReadPage(Session& s) {
    if (s.grouped) return ReadGroupPage(s);
    Settle();
    const size_t limit = 1 + rng_() % kMaxPage;
    const Micros now = clock_->Now();
    std::optional<Page> first;
    bool all_done = true;
    for (size_t k = 0; k < members_.size(); ++k) {
      Member& m = members_[k];
      if (s.done[k]) continue;
      INFO("threshold " << m.threshold << " read " << FeedName(s.feed)
                        << " owner " << s.owner << " limit " << limit
                        << " oldest_first "
                        << (s.order == ReadOrder::kOldestFirst) << " min_ts "
                        << (s.min_ts ? *s.min_ts : -1) << " max_ts "
                        << (s.max_ts ? *s.max_ts : -1) << " hydrate "
                        << s.hydrate << " after "
                        << (s.last[k] ? s.last[k]->first : -1) << "/"
                        << (s.last[k] ? s.last[k]->second : 0));
      ReadOptions r;
      r.limit = limit;
      r.order = s.order;
      r.min_ts = s.min_ts;
      r.max_ts = s.max_ts;
      r.hydrate = s.hydrate;
      r.cursor = s.cursor[k];
      const std::vector<StoredEntry> visible =
          m.model.Read(s.feed, s.owner, s.order, s.min_ts, s.max_ts, s.last[k],
                       now, s.hydrate);
      if (k == 0) {
        coverage_.hidden_expired +=
            m.model
                .Read(s.feed, s.owner, s.order, s.min_ts, s.max_ts, s.last[k],
                      std::numeric_limits<Micros>::min(), false)
                .size() -
            visible.size();
      }
      const absl::StatusOr<Page> page =
          testing::ReadFeed(*m.engine, s.feed, s.owner, r);
      REQUIRE_MESSAGE(page.ok(), page.status());
      const std::vector<StoredEntry> want(
          visible.begin(),
          visible.begin() + static_cast<long>(std::min(limit, visible.size())));
      REQUIRE(page->entries == want);
      REQUIRE(page->next_cursor.empty() == (visible.size() <= limit));
      if (config_.complete_backfill) {
        if (!first) {
          first = *page;
        } else {
          // The threshold changes nothing a reader sees, cursors included.
          REQUIRE(page->entries == first->entries);
          REQUIRE(page->next_cursor == first->next_cursor);
        }
      }
      if (!page->entries.empty()) s.last[k] = KeyOf(page->entries.back());
      s.cursor[k] = page->next_cursor;
      if (page->next_cursor.empty()) {
        s.done[k] = true;
      } else {
        all_done = false;
      }
    }
    if (all_done) ++coverage_.walks_finished;
  }

  // As ReadPage, for a grouped walk.
  void ReadGroupPage(Session& s) {
    Settle();
    const size_t limit = 1 + rng_() % kMaxPage;
    const Micros now = clock_->Now();
    std::optional<GroupPage> first;
    bool all_done = true;
    for (size_t k = 0; k < members_.size(); ++k) {
      Member& m = members_[k];
      if (s.done[k]) continue;
      INFO("threshold " << m.threshold << " ReadGroups owner " << s.owner
                        << " limit " << limit << " after "
                        << (s.last[k] ? s.last[k]->first : -1) << "/"
                        << (s.last[k] ? s.last[k]->second : 0));
      std::vector<FeedGroup> below = m.model.Groups(s.owner, now);
      if (s.last[k]) {
        std::erase_if(below, [&](const FeedGroup& g) {
          return !(PlaceOf(g) < *s.last[k]);
        });
      }
      const std::vector<FeedGroup> want(
          below.begin(),
          below.begin() + static_cast<long>(std::min(limit, below.size())));
      GroupReadOptions r;
      r.limit = limit;
      r.cursor = s.cursor[k];
      const absl::StatusOr<GroupPage> page = m.engine->ReadGroups(s.owner, r);
      REQUIRE_MESSAGE(page.ok(), page.status());
      REQUIRE_MESSAGE(page->groups == want,
                      "got " << Show(page->groups) << "\nwant " << Show(want));
      REQUIRE(page->next_cursor.empty() == (below.size() <= limit));
      if (config_.complete_backfill) {
        if (!first) {
          first = *page;
        } else {
          REQUIRE(page->groups == first->groups);
          REQUIRE(page->next_cursor == first->next_cursor);
        }
      }
      CountGroups(s, k, *page, m.model.GroupsFrom(s.owner, now));
      if (!page->groups.empty()) s.last[k] = PlaceOf(page->groups.back());
      s.cursor[k] = page->next_cursor;
      if (page->next_cursor.empty()) {
        s.done[k] = true;
      } else {
        all_done = false;
      }
    }
    if (all_done) ++coverage_.group_walks_finished;
  }

  // Records what grouped reads reached, for the checks of RunConfig.
  void CountGroups(Session& s, size_t k, const GroupPage& page,
                   Model::GroupSource source) {
    if (page.groups.empty()) return;
    switch (source) {
      case Model::GroupSource::kIndex:
        ++coverage_.indexed_groups;
        break;
      case Model::GroupSource::kMerged:
        ++coverage_.merged_groups;
        break;
      case Model::GroupSource::kExpired:
        ++coverage_.expired_groups;
        break;
    }
    if (k != 0) return;
    for (const FeedGroup& g : page.groups) {
      coverage_.shared_groups += g.activity_count > 1;
      coverage_.ungrouped += g.key == 0;
      coverage_.actors_bounded += g.actor_count > kMaxGroupActors;
      coverage_.entries_bounded += g.activity_count > kMaxGroupEntries;
      if (g.key != 0 && !s.shown.insert(g.key).second) {
        ++coverage_.groups_shown_again;
      }
    }
  }

  // Starts a grouped walk of a reader's timeline; sometimes also reads the
  // whole of it at once, from the first page to the end.
  void DoNewGroupRead() {
    const EntityId owner = Entity();
    Session s;
    s.feed = Feed::kTimeline;
    s.owner = owner;
    s.order = ReadOrder::kNewestFirst;
    s.hydrate = false;
    s.grouped = true;
    s.cursor.assign(members_.size(), "");
    s.last.assign(members_.size(), std::nullopt);
    s.done.assign(members_.size(), false);
    what_ = "ReadGroups of " + std::to_string(owner);
    ReadPage(s);
    if (std::find(s.done.begin(), s.done.end(), false) != s.done.end()) {
      if (sessions_.size() >= 6) sessions_.erase(sessions_.begin());
      sessions_.push_back(std::move(s));
    }
    if (rng_() % 4 != 0) return;
    const size_t limit = 1 + rng_() % kMaxPage;
    for (Member& m : members_) {
      INFO("threshold " << m.threshold << " all groups of " << owner
                        << " limit " << limit);
      const std::vector<FeedGroup> got =
          testing::AllGroups(*m.engine, owner, limit);
      const std::vector<FeedGroup> want = m.model.Groups(owner, clock_->Now());
      REQUIRE_MESSAGE(got == want,
                      "got " << Show(got) << "\nwant " << Show(want));
    }
  }

  void DoNewRead() {
    Session s;
    const int kind = static_cast<int>(rng_() % 10);
    s.feed = kind < 7 ? Feed::kTimeline : kind < 9 ? Feed::kOwn : Feed::kWorld;
    s.owner = s.feed == Feed::kWorld ? 0 : Entity();
    s.order = rng_() % 2 ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst;
    RandomWindow(&s.min_ts, &s.max_ts);
    s.hydrate = rng_() % 4 == 0;
    s.cursor.assign(members_.size(), "");
    s.last.assign(members_.size(), std::nullopt);
    s.done.assign(members_.size(), false);
    what_ = std::string("read ") + FeedName(s.feed) + " of " +
            std::to_string(s.owner);
    ReadPage(s);
    if (std::find(s.done.begin(), s.done.end(), false) != s.done.end()) {
      if (sessions_.size() >= 6) sessions_.erase(sessions_.begin());
      sessions_.push_back(std::move(s));
    }
  }

  void DoContinue() {
    if (sessions_.empty()) return DoNewRead();
    const size_t i = rng_() % sessions_.size();
    what_ = std::string("continue ") +
            (sessions_[i].grouped ? "groups" : FeedName(sessions_[i].feed)) +
            " of " + std::to_string(sessions_[i].owner);
    ReadPage(sessions_[i]);
    const auto& done = sessions_[i].done;
    if (std::find(done.begin(), done.end(), false) == done.end()) {
      sessions_.erase(sessions_.begin() + static_cast<long>(i));
    }
  }

  void DoCountNewer() {
    Settle();
    const EntityId reader = Entity();
    Key key{static_cast<Micros>(rng_() % (head_ + 2)), rng_() % (next_id_ + 2)};
    if (rng_() % 2 == 0) {
      const std::vector<StoredEntry> all = members_[0].model.Read(
          Feed::kTimeline, reader, ReadOrder::kNewestFirst, std::nullopt,
          std::nullopt, std::nullopt, clock_->Now(), false);
      if (!all.empty()) key = KeyOf(all[rng_() % all.size()]);
    }
    const size_t max_count = 1 + rng_() % kMaxPage;
    what_ = "CountNewer " + std::to_string(reader);
    std::optional<size_t> first;
    for (Member& m : members_) {
      INFO("threshold " << m.threshold);
      const std::vector<StoredEntry> newer =
          m.model.Read(Feed::kTimeline, reader, ReadOrder::kOldestFirst,
                       std::nullopt, std::nullopt, key, clock_->Now(), false);
      const absl::StatusOr<size_t> got =
          m.engine->CountNewer(reader, key.first, key.second, max_count);
      REQUIRE_MESSAGE(got.ok(), got.status());
      REQUIRE(*got == std::min(max_count, newer.size()));
      if (config_.complete_backfill) {
        if (!first) first = *got;
        REQUIRE(*got == *first);
      }
    }
  }

  void DoLists() {
    Settle();
    const EntityId e = Entity();
    const size_t limit = 1 + rng_() % 4;
    what_ = "lists of " + std::to_string(e);
    for (Member& m : members_) {
      INFO("threshold " << m.threshold);
      const std::set<EntityId> followers = m.model.Followers(e);
      const std::set<EntityId> following = m.model.Following(e);
      const std::vector<EntityId> got_followers =
          testing::WholeList(*m.engine, true, e, limit);
      const std::vector<EntityId> got_following =
          testing::WholeList(*m.engine, false, e, limit);
      REQUIRE(got_followers.size() == followers.size());
      REQUIRE(std::set<EntityId>(got_followers.begin(), got_followers.end()) ==
              followers);
      REQUIRE(got_following ==
              std::vector<EntityId>(following.begin(), following.end()));
      REQUIRE(m.engine->FollowerCount(e).value() == followers.size());
      REQUIRE(m.engine->FollowingCount(e).value() == following.size());
    }
  }

  void DoEvict() {
    Settle();
    const Micros now = clock_->Now();
    const uint64_t budget = rng_() % 2 == 0 ? 1 + rng_() % 5 : kEvictAll;
    what_ = "EvictExpired " + std::to_string(budget);
    for (Member& m : members_) {
      INFO("threshold " << m.threshold);
      const size_t expired = m.model.ExpiredEntries(now);
      const size_t first = m.engine->EvictExpired(budget).value();
      REQUIRE(first == std::min<uint64_t>(budget, expired));
      // Reclaim the rest, so that the model knows what is held.
      const size_t rest = m.engine->EvictExpired(kEvictAll).value();
      REQUIRE(rest == expired - first);
      m.model.EvictAll(now);
      coverage_.evicted += expired;
    }
  }

  void DoInvalid() {
    Settle();
    what_ = "invalid calls";
    Activity bad = NewActivity();
    switch (rng_() % 3) {
      case 0:
        bad.ts = -1 - static_cast<Micros>(rng_() % 5);
        break;
      case 1:
        bad.payload = std::string(kMaxPayload + 1, 'q');
        break;
      default:
        bad.ttl = kMaxTtl + 1;
        break;
    }
    const EntityId e = Entity();
    for (size_t k = 0; k < members_.size(); ++k) {
      Member& m = members_[k];
      INFO("threshold " << m.threshold);
      const auto before = testing::Social(m.engine->Stats().value());
      CHECK(absl::IsInvalidArgument(m.engine->Publish(bad).status()));
      CHECK(absl::IsInvalidArgument(m.engine->Follow(e, e).status()));
      FollowOptions too_many;
      too_many.backfill = kMaxTimelineLengthLimit + 1;
      CHECK(absl::IsInvalidArgument(
          m.engine->Follow(e, e % config_.entities + 1, too_many).status()));
      ReadOptions foreign;
      foreign.cursor = "definitely not a cursor";
      CHECK(
          absl::IsInvalidArgument(m.engine->ReadTimeline(e, foreign).status()));
      CHECK(absl::IsInvalidArgument(
          m.engine->CountNewer(e, 0, 0, kMaxPage + 1).status()));
      GroupReadOptions groups;
      groups.limit = 0;
      CHECK(absl::IsInvalidArgument(m.engine->ReadGroups(e, groups).status()));
      groups.limit = kMaxPage + 1;
      CHECK(absl::IsInvalidArgument(m.engine->ReadGroups(e, groups).status()));
      groups.limit = 1;
      groups.cursor = foreign.cursor;
      CHECK(absl::IsInvalidArgument(m.engine->ReadGroups(e, groups).status()));
      // Cursors of open walks: a flat one, or a grouped one of another
      // reader, is no group cursor of `e`.
      for (const Session& s : sessions_) {
        const std::string& cursor = s.cursor[k];
        if (cursor.empty() || (s.grouped && s.owner == e)) continue;
        groups.cursor = cursor;
        CHECK(
            absl::IsInvalidArgument(m.engine->ReadGroups(e, groups).status()));
        if (!s.grouped) continue;
        foreign.cursor = cursor;
        CHECK(absl::IsInvalidArgument(
            m.engine->ReadTimeline(e, foreign).status()));
      }
      REQUIRE(testing::Social(m.engine->Stats().value()) == before);
    }
    --next_id_;  // the id was not taken
  }

  void CheckStats() {
    Settle();
    what_ = "Stats";
    for (Member& m : members_) {
      INFO("threshold " << m.threshold);
      const EngineStats got = m.engine->Stats().value();
      const Model::Totals want = m.model.Expected();
      CHECK(got.entries == want.entries);
      CHECK(got.activities == want.activities);
      CHECK(got.retracted_activities == want.retracted);
      CHECK(got.payload_bytes == want.payload_bytes);
      CHECK(got.follow_edges == want.follow_edges);
      CHECK(got.activities_evicted == want.activities_evicted);
      CHECK(got.trimmed == 0);
      size_t shard_entries = 0;
      for (const ShardStats& s : got.shards) shard_entries += s.entries;
      CHECK(shard_entries == got.entries);
    }
  }

  const Config config_;
  std::mt19937_64 rng_;
  std::shared_ptr<ManualClock> clock_;
  std::vector<Member> members_;
  std::vector<Session> sessions_;
  ActivityId next_id_ = 0;
  Micros head_ = 100;
  bool pending_ = false;
  int step_ = 0;
  std::string what_ = "start";
  Coverage coverage_;
};

std::vector<uint64_t> Seeds() {
  const uint64_t env = testing::EnvU64("FEEDCORE_MODEL_SEED", 0);
  if (env != 0) return {env};
  return {20240611, 7};
}

int Ops(int fallback) {
  return static_cast<int>(testing::EnvU64("FEEDCORE_MODEL_OPS", fallback));
}

void RunConfig(const Config& config, int default_ops) {
  Runner::Coverage total;
  size_t never_merged = 0;
  for (const uint64_t seed : Seeds()) {
    INFO("config " << config.name << " seed " << seed
                   << " (FEEDCORE_MODEL_SEED=" << seed << " reproduces it)");
    Runner runner(config, seed);
    runner.Run(Ops(default_ops));
    total.Add(runner.coverage());
    never_merged += runner.never_hybrid_merged();
  }
  // The sequences reached what they exist to test.
  INFO("config " << config.name);
  CHECK(total.merged_actors > 0);
  CHECK(never_merged == 0);
  CHECK(total.async_publishes > 0);
  CHECK(total.retracted > 0);
  CHECK(total.removed_on_unfollow > 0);
  CHECK(total.backfilled > 0);
  CHECK(total.walks_finished > 0);
  CHECK(total.evicted > 0);
  CHECK(total.hidden_expired > 0);
  CHECK(total.idempotent > 0);
  CHECK(total.conflicts > 0);
  CHECK(total.group_walks_finished > 0);
  CHECK(total.shared_groups > 0);
  CHECK(total.ungrouped > 0);
  CHECK(total.actors_bounded > 0);
  CHECK(total.entries_bounded > 0);
  CHECK(total.indexed_groups > 0);
  CHECK(total.merged_groups > 0);
  CHECK(total.expired_groups > 0);
  CHECK(total.groups_shown_again > 0);
}

TEST_CASE("social model: partial back-fill, every engine against its model") {
  RunConfig({"partial back-fill, 4 shards, pool", false, 4, 1, 2, 9}, 20000);
}

TEST_CASE("social model: partial back-fill, 8 shards, inline fan-out") {
  RunConfig({"partial back-fill, 8 shards, inline", false, 8, 0, 1, 12}, 20000);
}

TEST_CASE("social model: complete back-fill, every threshold reads alike") {
  RunConfig({"complete back-fill, 4 shards, pool", true, 4, 2, 2, 9}, 20000);
}

TEST_CASE("social model: complete back-fill, one shard, few entities") {
  RunConfig({"complete back-fill, 1 shard, pool", true, 1, 1, 1, 5}, 20000);
}

}  // namespace
}  // namespace feedcore
