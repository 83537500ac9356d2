// Conformance of counters and ranked reads with the reference model, on
// both backends: random sequences of Follow, Unfollow, Publish (some dated
// in the future), Retract, IncrementCounter (valid, out of range, zero,
// overflowing, of unknown, retracted and expired activities), GetCounters,
// clock advances, EvictExpired (where the backend has kEviction) and
// ReadRanked walks (random formulas, windows, limits,
// hydration) left open across the other operations, each page compared
// exactly with the reference model (model/feed_model.h): entries, counters,
// the score's bits and whether a cursor follows.
//
// Every walk also checks the guarantee of feed_engine.h on its own: no
// entry shows twice in one walk, whatever the counters did meanwhile. The
// coverage checks make sure the sequences reached the cases that guarantee
// is about: pages that left out an entry changed after the walk's start,
// or one newer than it, and walks that ran to their end.
//
// FEEDCORE_MODEL_SEED overrides the seed, FEEDCORE_MODEL_OPS the number of
// operations (fewer by default on the cluster, where each costs round
// trips).

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "conformance/backend.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/social.h"
#include "model/feed_model.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using Model = testing::FeedModel;

constexpr Micros kStart = 1'000'000'000'000;
constexpr Micros kTtl = 40 * kMicrosPerHour;
constexpr EntityId kEntities = 8;
constexpr size_t kMaxWindow = 30;
constexpr size_t kMaxLimit = 8;

uint64_t Bits(double d) {
  uint64_t b = 0;
  std::memcpy(&b, &d, sizeof(b));
  return b;
}

struct Walk {
  EntityId owner = 0;
  RankedReadOptions options;
  std::optional<Model::RankedPlace> place;
  std::set<ActivityId> shown;
};

struct Coverage {
  uint64_t pages = 0, walks_finished = 0, left_out_changed = 0,
           left_out_newer = 0, overflows = 0, not_found = 0, increments = 0,
           nonzero_scores = 0;
};

class Sequence {
 public:
  Sequence(uint64_t seed, size_t shards, size_t threshold)
      : rng_(seed),
        clock_(std::make_shared<ManualClock>(kStart)),
        engine_(MakeEngine(clock_, Options(shards, threshold))),
        model_(engine_->options()) {}

  static std::unique_ptr<FeedEngine> MakeEngine(
      std::shared_ptr<ManualClock> clock, EngineOptions options) {
    options.clock = std::move(clock);
    options.sweep_interval = 0;
    absl::StatusOr<std::unique_ptr<FeedEngine>> made =
        testing::MakeEngine(std::move(options), "ranked");
    REQUIRE_MESSAGE(made.ok(), made.status());
    return *std::move(made);
  }

  static EngineOptions Options(size_t shards, size_t threshold) {
    EngineOptions o;
    o.shards = shards;
    o.fanout_threads = 0;
    o.max_timeline_length = 1000;
    o.world_timeline_length = 1000;
    o.max_page_size = 100;
    o.default_ttl = kTtl;
    o.hybrid_fanout_threshold = threshold;
    return o;
  }

  void Run(int ops) {
    for (int op = 0; op < ops; ++op) {
      INFO("op " << op);
      const int dice = Pick(100);
      if (dice < 20) {
        Publish();
      } else if (dice < 26) {
        Follow();
      } else if (dice < 28) {
        Unfollow();
      } else if (dice < 30) {
        Retract();
      } else if (dice < 55) {
        Increment();
      } else if (dice < 58) {
        Counters();
      } else if (dice < 66) {
        clock_->Advance(Pick(3) == 0 ? Pick(4) * kMicrosPerHour
                                     : Pick(600) * kMicrosPerSecond);
      } else if (dice < 68) {
        if (!engine_->Supports(FeedCapability::kEviction)) continue;
        const Micros now = clock_->Now();
        REQUIRE(engine_->EvictExpired(uint64_t{1} << 40).ok());
        model_.EvictExpired(now);
      } else {
        ReadPage();
      }
    }
  }

  const Coverage& coverage() const { return coverage_; }

 private:
  int Pick(int n) { return static_cast<int>(rng_() % n); }
  EntityId AnyEntity() { return 1 + rng_() % kEntities; }
  ActivityId AnyActivity() {
    return next_id_ == 1 ? 1 : 1 + rng_() % (next_id_ + 2);
  }

  void Publish() {
    const Micros now = clock_->Now();
    // Mostly the last hours; some from the future (ranked at age 0).
    const Micros ts = Pick(10) == 0
                          ? now + Pick(600) * kMicrosPerSecond
                          : now - Pick(30) * kMicrosPerHour / 4 - Pick(1000);
    Activity a =
        testing::MakeActivity(next_id_++, AnyEntity(), ts,
                              Pick(4) == 0 ? Pick(4) * kMicrosPerHour + 1 : 0);
    const absl::StatusOr<PublishResult> got = engine_->Publish(a);
    const absl::StatusOr<PublishResult> want = model_.Publish(a, now);
    REQUIRE(got.status().code() == want.status().code());
  }

  void Follow() {
    const EntityId follower = AnyEntity();
    const EntityId followee = AnyEntity();
    if (follower == followee) return;
    FollowOptions o;
    o.backfill = Pick(6);
    REQUIRE(engine_->Follow(follower, followee, o).ok());
    model_.Follow(follower, followee, *o.backfill, clock_->Now());
  }

  void Unfollow() {
    const EntityId follower = AnyEntity();
    const EntityId followee = AnyEntity();
    if (follower == followee) return;
    REQUIRE(engine_->Unfollow(follower, followee).ok());
    model_.Unfollow(follower, followee);
  }

  void Retract() {
    const ActivityId id = AnyActivity();
    CHECK(engine_->Retract(id).code() == model_.Retract(id));
  }

  void Increment() {
    const ActivityId id = AnyActivity();
    const size_t counter =
        Pick(20) == 0 ? kActivityCounterCount : static_cast<size_t>(Pick(4));
    int64_t delta = Pick(5) - 1;  // -1..3, 0 refused
    if (Pick(30) == 0) {
      delta = Pick(2) == 0 ? std::numeric_limits<int64_t>::max()
                           : std::numeric_limits<int64_t>::min();
    } else if (Pick(5) == 0) {
      delta *= 50;
    }
    const Micros now = clock_->Now();
    const absl::StatusOr<ActivityCounters> got =
        engine_->IncrementCounter(id, counter, delta);
    const absl::StatusOr<ActivityCounters> want =
        model_.IncrementCounter(id, counter, delta, now);
    INFO("increment " << id << " [" << counter << "] by " << delta << ": "
                      << got.status());
    REQUIRE(got.status().code() == want.status().code());
    if (got.ok()) {
      CHECK(*got == *want);
      ++coverage_.increments;
    } else if (got.status().code() == absl::StatusCode::kNotFound) {
      ++coverage_.not_found;
    } else if (counter < kActivityCounterCount && delta != 0) {
      ++coverage_.overflows;
    }
  }

  void Counters() {
    const ActivityId id = AnyActivity();
    const absl::StatusOr<ActivityCounters> got = engine_->GetCounters(id);
    const absl::StatusOr<ActivityCounters> want =
        model_.Counters(id, clock_->Now());
    REQUIRE(got.status().code() == want.status().code());
    if (got.ok()) CHECK(*got == *want);
  }

  RankFormula AnyFormula() {
    RankFormula f;
    f.base = Pick(4) == 0 ? 0 : Pick(5) - 1;
    for (double& w : f.weights) w = (Pick(7) - 2) * (Pick(3) == 0 ? 0.25 : 1);
    f.gravity = Pick(4) == 0 ? 0 : Pick(40) / 4.0;
    f.age_offset_hours = Pick(3) == 0 ? 0.5 : 1 + Pick(4);
    return f;
  }

  void ReadPage() {
    if (walks_.size() < 3 && (walks_.empty() || Pick(3) == 0)) {
      Walk w;
      w.owner = AnyEntity();
      w.options.formula = AnyFormula();
      w.options.window = 1 + Pick(kMaxWindow);
      walks_.push_back(std::move(w));
    }
    const size_t index = rng_() % walks_.size();
    Walk& w = walks_[index];
    w.options.limit = 1 + Pick(kMaxLimit);
    w.options.hydrate = Pick(4) == 0;
    const Micros now = clock_->Now();
    const absl::StatusOr<RankedPage> got =
        engine_->ReadRanked(w.owner, w.options);
    REQUIRE_MESSAGE(got.ok(), got.status());
    const Model::RankedResult want =
        model_.Ranked(w.owner, w.options.formula, w.options.window,
                      w.options.limit, w.place, now, w.options.hydrate);
    INFO("reader " << w.owner << " page " << w.shown.size() << " window "
                   << w.options.window << " limit " << w.options.limit);
    REQUIRE(got->entries.size() == want.entries.size());
    for (size_t i = 0; i < want.entries.size(); ++i) {
      const RankedEntry& g = got->entries[i];
      const RankedEntry& m = want.entries[i];
      INFO("entry " << i << ": " << g.entry << " score " << g.score
                    << " expected " << m.entry << " score " << m.score);
      CHECK(g.entry == m.entry);
      CHECK(g.counters == m.counters);
      CHECK(Bits(g.score) == Bits(m.score));
      coverage_.nonzero_scores += g.score != 0;
      // The guarantee itself: never twice in one walk.
      CHECK(w.shown.insert(g.entry.activity_id).second);
    }
    CHECK(got->next_cursor.empty() == !want.next.has_value());
    ++coverage_.pages;
    if (w.place.has_value()) Tally(w, now);
    if (!want.next.has_value()) {
      ++coverage_.walks_finished;
      walks_.erase(walks_.begin() + static_cast<long>(index));
      return;
    }
    w.place = want.next;
    w.options.cursor = got->next_cursor;
  }

  // Counts what a later page of `w` left out, from the model's state.
  void Tally(const Walk& w, Micros now) {
    for (const StoredEntry& e : model_.Timeline(w.owner, now)) {
      if (e.ts > w.place->start) {
        ++coverage_.left_out_newer;
        continue;
      }
      auto it = model_.activities().find(e.activity_id);
      if (it != model_.activities().end() &&
          it->second.counters_changed_at.has_value() &&
          *it->second.counters_changed_at >= w.place->start) {
        ++coverage_.left_out_changed;
      }
    }
  }

  std::mt19937_64 rng_;
  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<FeedEngine> engine_;
  Model model_;
  ActivityId next_id_ = 1;
  std::vector<Walk> walks_;
  Coverage coverage_;
};

void RunConfig(size_t shards, size_t threshold) {
  const uint64_t env = testing::EnvU64("FEEDCORE_MODEL_SEED", 0);
  const std::vector<uint64_t> seeds =
      env != 0 ? std::vector<uint64_t>{env} : std::vector<uint64_t>{11, 2026};
  const int ops = static_cast<int>(testing::EnvU64(
      "FEEDCORE_MODEL_OPS", testing::OnCluster() ? 4000 : 15000));
  Coverage total;
  for (const uint64_t seed : seeds) {
    INFO("seed " << seed << " (FEEDCORE_MODEL_SEED=" << seed
                 << " reproduces it), shards " << shards << ", threshold "
                 << threshold);
    Sequence sequence(seed, shards, threshold);
    sequence.Run(ops);
    const Coverage& c = sequence.coverage();
    total.pages += c.pages;
    total.walks_finished += c.walks_finished;
    total.left_out_changed += c.left_out_changed;
    total.left_out_newer += c.left_out_newer;
    total.overflows += c.overflows;
    total.not_found += c.not_found;
    total.increments += c.increments;
    total.nonzero_scores += c.nonzero_scores;
  }
  CHECK(total.walks_finished > 0);
  CHECK(total.left_out_changed > 0);
  CHECK(total.left_out_newer > 0);
  CHECK(total.overflows > 0);
  CHECK(total.not_found > 0);
  CHECK(total.increments > 0);
  CHECK(total.nonzero_scores > 0);
}

TEST_CASE("ranked conformance: copied fan-out, 4 shards") { RunConfig(4, 0); }

TEST_CASE("ranked conformance: merged-at-read actors, 1 shard") {
  RunConfig(1, 2);
}

}  // namespace
}  // namespace feedcore
