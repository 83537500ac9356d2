// The engine group and random operations of social_model_test.cc: every
// engine of a group differs only in hybrid_fanout_threshold and
// inactive_after, and is compared with its own FeedModel after every
// operation (see social_model_test.cc for what the sequences cover and why).
#ifndef FEEDCORE_TESTS_FEED_SOCIAL_MODEL_RUNNER_H_
#define FEEDCORE_TESTS_FEED_SOCIAL_MODEL_RUNNER_H_

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
#include "model/feed_model.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore::social_model {

using Key = std::pair<Micros, ActivityId>;
using testing::Feed;

inline constexpr Micros kDefaultTtl = 500;
inline constexpr size_t kCap = 100'000;  // never reached
inline constexpr size_t kCompleteBackfill = 1'000'000;
inline constexpr size_t kMaxPage = 40;
inline constexpr size_t kMaxPayload = 8;
inline constexpr size_t kNeverHybrid = size_t{1} << 32;
inline constexpr uint64_t kEvictAll = uint64_t{1} << 40;
// Small ranges of verbs and objects and a short time bucket, against the
// few dozen activities alive at a time, make groups of several activities;
// lists shorter than those groups exercise the bounds.
inline constexpr uint64_t kVerbs = 3;
inline constexpr EntityId kObjects = 2;
inline constexpr Micros kTimeBucket = 40;
inline constexpr size_t kMaxGroupActors = 2;
inline constexpr size_t kMaxGroupEntries = 3;

inline Key KeyOf(const StoredEntry& e) { return {e.ts, e.activity_id}; }
// Where a group stands in a grouped read: its newest entry.
inline Key PlaceOf(const FeedGroup& g) { return KeyOf(g.recent.front()); }

// The engines' group key: 0 (ungrouped) with neither verb nor object,
// otherwise distinct for every (verb, object, time bucket).
inline GroupKey GroupKeyOf(const Activity& a) {
  if (a.verb == 0 && a.object == 0) return 0;
  return 1 + a.verb +
         kVerbs *
             (a.object + kObjects * static_cast<uint64_t>(a.ts / kTimeBucket));
}

using Model = testing::FeedModel;

struct Config {
  std::string name;
  bool complete_backfill;
  // max_timeline_length (kCap: never reached).
  size_t cap;
  // Whether sequences unfollow, retract, advance the clock and evict.
  // Without, a timeline never loses an entry and nothing expires: see
  // feed_engine.h for what a merged timeline at its cap shows otherwise.
  bool removals;
  size_t shards;
  size_t fanout_threads;
  size_t parallel_fanout_min_followers;
  EntityId entities;
  // Engines that differ only in inactive_after, none merging at read, so
  // that sequences may also expire mutes and remove entries at a reached
  // cap. Nothing expires but mutes, and nothing is retracted: a dormant
  // reader's merged view over its cap that then loses entries that way is
  // the sequence where it may differ (feed_engine.h).
  bool inactive_only = false;
  // EngineOptions::reposts.window, reposts of kind kRepostKind (0: off,
  // and no activity reposts another).
  size_t repost_window = 0;
  // Whether sequences make and read lists of accounts (DoAccountLists).
  bool account_lists = true;
};

// The kind reposts are published with where a Config sets a repost
// window.
inline constexpr ActivityKind kRepostKind = 1;

// The entries' lifetime in `inactive_only` runs: longer than any run.
inline constexpr Micros kLongTtl = Micros{1} << 40;

// How long a reader of the members with inactive readers may stay idle:
// the clock advances draw 0..59.
inline constexpr Micros kInactiveAfter = 40;

// Entities 1..kWatchedTimelines have their timeline watched by a
// subscription of every member (FeedDeliveries).
inline constexpr EntityId kWatchedTimelines = 3;

// One engine of a group with its model.
struct Member {
  size_t threshold;
  // EngineOptions::inactive_after (0: off).
  Micros inactive_after;
  std::unique_ptr<InProcessFeedEngine> engine;
  Model model;
  // Deliveries to the watched timelines (kWatchedTimelines), from the
  // engine's subscription and from what the model's timelines gained,
  // since the last CheckDeliveries.
  using Deliveries = std::multiset<std::pair<EntityId, Key>>;
  std::shared_ptr<Deliveries> delivered;
  Deliveries expected;
  // Whether the engine holds every copy the model counts: none is merged
  // at read, by hybrid fan-out or by a dormant reader.
  bool HoldsAllCopies() const {
    return model.merged_count() == 0 && inactive_after == 0;
  }
};

// A paging walk left open across other operations; one position per
// member, each checked against its own model. A grouped
// walk reads `owner`'s timeline with ReadGroups, newest first, and `last`
// is the place of the last group returned.
struct Session {
  Feed feed;
  EntityId owner;
  ReadOrder order;
  std::optional<Micros> min_ts, max_ts;
  bool hydrate;
  // The activity kinds a flat read keeps (KindFilter::kinds).
  uint64_t kinds = KindFilter::kEveryKind;
  bool grouped = false;
  std::vector<std::string> cursor;
  std::vector<std::optional<Key>> last;
  std::vector<bool> done;
  // Keys of the groups the first member's walk returned so far: one that
  // comes again has moved down.
  std::set<GroupKey> shown;
};

inline const char* FeedName(Feed f) {
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

inline std::string Show(const PublishResult& r) {
  std::ostringstream os;
  os << "{created=" << r.created << " fanned_out=" << r.fanned_out
     << " merged=" << r.merged_at_read << " pending=" << r.pending << "}";
  return os.str();
}

inline std::string Show(const std::vector<FeedGroup>& groups) {
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
        relation_rng_(seed ^ 0x6d757465),
        inactive_rng_(seed ^ 0x69646c65),
        reaction_rng_(seed ^ 0x6c696b65),
        kind_rng_(seed ^ 0x6b696e64),
        group_kind_rng_(seed ^ 0x67726f7570),
        repost_rng_(seed ^ 0x7270737473),
        list_rng_(seed ^ 0x6c69737473),
        clock_(std::make_shared<ManualClock>(1'000'000)) {
    // Readers go inactive only as the clock advances: in runs with
    // removals. Those add members whose idle readers are made dormant.
    // The member that never merges stays last (never_hybrid_merged).
    std::vector<std::pair<size_t, Micros>> variants = {
        {0, 0}, {1, 0}, {3, 0}, {6, 0}};
    if (config.removals) {
      variants.push_back({0, kInactiveAfter});
      variants.push_back({3, kInactiveAfter});
    }
    variants.push_back({kNeverHybrid, 0});
    if (config.inactive_only) {
      // Two idle times: readers go dormant at different steps.
      variants = {{0, 0}, {0, kInactiveAfter}, {0, kInactiveAfter / 2}};
    }
    for (const auto& [threshold, inactive_after] : variants) {
      EngineOptions o;
      o.shards = config.shards;
      o.default_ttl = config.inactive_only ? kLongTtl : kDefaultTtl;
      o.max_timeline_length = config.cap;
      o.world_timeline_length = kCap;
      o.max_page_size = kMaxPage;
      o.max_payload_bytes = kMaxPayload;
      o.default_backfill = config.complete_backfill ? kCompleteBackfill : 3;
      o.hybrid_fanout_threshold = threshold;
      o.inactive_after = inactive_after;
      o.fanout_threads = config.fanout_threads;
      o.parallel_fanout_min_followers = config.parallel_fanout_min_followers;
      o.fanout_queue_capacity = 4;
      o.aggregation.enabled = true;
      o.aggregation.time_bucket = kTimeBucket;
      o.aggregation.group_key = GroupKeyOf;
      o.aggregation.max_group_actors = kMaxGroupActors;
      o.aggregation.max_group_entries = kMaxGroupEntries;
      o.background_deliveries = false;
      o.reposts.window = config.repost_window;
      if (config.repost_window != 0) {
        o.reposts.kinds = KindFilter::Only({kRepostKind});
      }
      members_.push_back(Member{threshold,
                                inactive_after,
                                testing::NewManualEngine(clock_, o),
                                Model(o),
                                std::make_shared<Member::Deliveries>(),
                                {}});
      Member& m = members_.back();
      SubscriptionOptions subscription;
      subscription.callback = [delivered = m.delivered](const Delivery& d) {
        delivered->insert({d.where.owner, {d.entry.ts, d.entry.activity_id}});
      };
      subscription.queue_capacity = kMaxDeliveryQueueCapacity;
      const absl::StatusOr<SubscriptionId> id =
          m.engine->Subscribe(std::move(subscription));
      REQUIRE(id.ok());
      for (EntityId owner = 1; owner <= kWatchedTimelines; ++owner) {
        REQUIRE(*m.engine->Watch(*id, {DeliveryFeed::kTimeline, owner}));
      }
    }
  }

  void Run(int ops);

  struct Coverage {
    uint64_t merged_actors = 0, async_publishes = 0, retracted = 0,
             removed_on_unfollow = 0, backfilled = 0, walks_finished = 0,
             evicted = 0, hidden_expired = 0, idempotent = 0, conflicts = 0,
             group_walks_finished = 0, shared_groups = 0, ungrouped = 0,
             actors_bounded = 0, entries_bounded = 0, indexed_groups = 0,
             merged_groups = 0, expired_groups = 0, groups_shown_again = 0,
             hidden_removed = 0, hidden_skipped = 0, follows_refused = 0,
             restored = 0, hidden_by_boundary = 0, trimmed = 0,
             markers_moved = 0, markers_unread = 0, mentions_counted = 0,
             made_dormant = 0, expiring_mutes = 0, reactions_changed = 0,
             notices = 0, reactors_paged = 0, reposts_hidden = 0,
             lists_read = 0, home_excluded = 0;
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
      hidden_removed += o.hidden_removed;
      hidden_skipped += o.hidden_skipped;
      follows_refused += o.follows_refused;
      restored += o.restored;
      hidden_by_boundary += o.hidden_by_boundary;
      trimmed += o.trimmed;
      markers_moved += o.markers_moved;
      mentions_counted += o.mentions_counted;
      markers_unread += o.markers_unread;
      made_dormant += o.made_dormant;
      expiring_mutes += o.expiring_mutes;
      reactions_changed += o.reactions_changed;
      notices += o.notices;
      reactors_paged += o.reactors_paged;
      reposts_hidden += o.reposts_hidden;
      lists_read += o.lists_read;
      home_excluded += o.home_excluded;
    }
  };
  Coverage coverage() const {
    Coverage c = coverage_;
    for (const Member& m : members_) c.merged_actors += m.model.merged_count();
    return c;
  }
  // Actors merged at read by the engine whose threshold never triggers.
  size_t never_hybrid_merged() const {
    return members_.back().model.merged_count();
  }

 private:
  EntityId Entity() { return 1 + rng_() % config_.entities; }

  // Makes sure no asynchronous fan-out is still running before a read.
  void Settle() {
    if (!pending_) return;
    for (Member& m : members_) m.engine->WaitForFanout();
    pending_ = false;
    CheckDeliveries();
  }

  // Every member's subscription was told of exactly the entries its
  // model's watched timelines gained by publishes; at a reached cap, also
  // of copies trimmed at once. REQUIRES: no fan-out pending.
  void CheckDeliveries();

  // Settle, in a run that removes entries at a reached cap: which entries
  // a Follow's back-fill keeps, and which an Unfollow leaves, depend there
  // on whether a delivery still in flight lands before or after it; the
  // model has every publish land before the next call.
  void SettleAtCap() {
    if (config_.cap != kCap && config_.removals) Settle();
  }

  void DoFollow();

  void DoUnfollow();

  // Block, Unblock, Mute (with or without notifications; with an expiry
  // only in `inactive_only` runs) or Unmute (with a back-fill) of two
  // random entities, then the user's Blocked and Muted lists.
  void DoRelation();
  // ReleaseInactiveReaders on every member: those with inactive readers
  // make their idle readers dormant (later reads must not notice), the
  // others refuse.
  void DoReleaseInactive();
  void CheckRelationLists(EntityId user);
  // React or Unreact (social_model_reactions.cc), sometimes with a notice,
  // of a random user to a known or unknown activity, with a kind in range
  // or not; or "did I react" for a set of activities and the paged
  // reactors of one. Compares every answer, the counters and the actor's
  // notification counts with each member's model.
  void DoReaction();
  // SetList (exclusive or not), DeleteList, AddToList or RemoveFromList of
  // a random owner's list, sometimes with a bad id or name, or its Lists,
  // ListMembers or a whole ReadList walk in random pages
  // (social_model_lists.cc), every answer compared with each member's
  // model.
  void DoAccountLists();

  std::string Payload() {
    std::string p(rng_() % (kMaxPayload + 1), ' ');
    for (char& c : p) c = static_cast<char>('a' + rng_() % 3);
    return p;
  }

  Activity NewActivity();

  // An activity some model has seen (any member's model has the same
  // activities), if any.
  std::optional<std::pair<ActivityId, Model::Activity>> AnyKnown() {
    const auto& acts = members_[0].model.activities();
    if (acts.empty()) return std::nullopt;
    auto it = acts.begin();
    std::advance(it, static_cast<long>(rng_() % acts.size()));
    return *it;
  }

  void DoPublish();

  void DoRetract();

  void RandomWindow(std::optional<Micros>* min_ts,
                    std::optional<Micros>* max_ts);

  // Reads the next page of `s` on every member, compares each with its
  // model and with the first member's page.
  void ReadPage(Session& s);

  // As ReadPage, for a grouped walk.
  void ReadGroupPage(Session& s);

  // Records what grouped reads reached, for the checks of RunConfig.
  void CountGroups(Session& s, size_t k, const GroupPage& page,
                   Model::GroupSource source);

  // Starts a grouped walk of a reader's timeline; sometimes also reads the
  // whole of it at once, from the first page to the end.
  void DoNewGroupRead();

  void DoNewRead();

  void DoContinue();

  void DoCountNewer();

  void DoLists();

  void DoEvict();

  void DoInvalid();

  // Sets a read marker of a user in its home feed, an own feed or the
  // world feed (forward, backward, forced) and reads it back.
  void DoMarkers();

  void CheckStats();

  const Config config_;
  std::mt19937_64 rng_;
  // Draws of DoRelation, apart so that the other operations keep the
  // sequences they had without it.
  std::mt19937_64 relation_rng_;
  // ReleaseInactiveReaders, drawn apart for the same reason.
  std::mt19937_64 inactive_rng_;
  // DoReaction, drawn apart for the same reason.
  std::mt19937_64 reaction_rng_;
  // Activity kinds and the kinds reads keep, drawn apart for the same
  // reason.
  std::mt19937_64 kind_rng_;
  // The filters of grouped walks, apart, so that the other draws keep
  // their sequences.
  std::mt19937_64 group_kind_rng_;
  // Draws of reposts, only where the Config sets a repost window.
  std::mt19937_64 repost_rng_;
  // DoAccountLists, drawn apart.
  std::mt19937_64 list_rng_;
  // The activity DoReaction last changed a reaction of: drawn again often,
  // so that reactions pile up on one activity and its reactors take pages.
  ActivityId last_reacted_ = 0;
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

}  // namespace feedcore::social_model

#endif  // FEEDCORE_TESTS_FEED_SOCIAL_MODEL_RUNNER_H_
