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
// A second case races increments against walks on threads sharing one
// manual clock: no walk may show an entry twice, which on the cluster
// rests on how an increment dates its change (docs/scale-out.md). A third
// puts a walk's first page between an increment's first clock read and
// its change, the interleaving that dating decides, deterministically.
//
// FEEDCORE_MODEL_SEED overrides the seed, FEEDCORE_MODEL_OPS the number of
// operations (fewer by default on the cluster, where each costs round
// trips).

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "conformance/backend.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/social.h"
#include "model/feed_model.h"
#include "support/social_test_util.h"
#include "support/test_util.h"
#include "support/thread_failures.h"

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
        FeedMaintenance* maintenance = engine_->maintenance();
        if (maintenance == nullptr) continue;
        const Micros now = clock_->Now();
        REQUIRE(maintenance->EvictExpired(uint64_t{1} << 40).ok());
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
        engine_->ranked()->IncrementCounter(id, counter, delta);
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
    const absl::StatusOr<ActivityCounters> got =
        engine_->ranked()->GetCounters(id);
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
        engine_->ranked()->ReadRanked(w.owner, w.options);
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
  const int ops =
      static_cast<int>(testing::ModelOps(testing::OnCluster() ? 4000 : 15000));
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

// A manual clock that runs `hook` once, on the first Now() after Arm, and
// answers that call with the time from before the hook.
class HookClock final : public Clock {
 public:
  explicit HookClock(Micros now) : now_(now) {}
  Micros Now() const override {
    const Micros now = now_.load();
    if (armed_.exchange(false)) hook_();
    return now;
  }
  void Advance(Micros by) { now_.fetch_add(by); }
  void Arm(std::function<void()> hook) {
    hook_ = std::move(hook);
    armed_.store(true);
  }

 private:
  std::atomic<Micros> now_;
  mutable std::atomic<bool> armed_{false};
  std::function<void()> hook_;
};

TEST_CASE(
    "ranked conformance: a change a first page missed is not dated before "
    "the walk's start") {
  auto clock = std::make_shared<HookClock>(kStart);
  EngineOptions options;
  options.fanout_threads = 0;
  options.sweep_interval = 0;
  options.clock = clock;
  absl::StatusOr<std::unique_ptr<FeedEngine>> made =
      testing::MakeEngine(std::move(options), "ranked_dating");
  REQUIRE_MESSAGE(made.ok(), made.status());
  FeedEngine& engine = **made;
  REQUIRE(engine.Follow(1, 2).ok());
  // Counters 100, 50, 10: activity 1 ranks first.
  const int64_t counts[] = {100, 50, 10};
  for (ActivityId id = 1; id <= 3; ++id) {
    REQUIRE(engine.Publish(testing::MakeActivity(id, 2, kStart - 1000)).ok());
    REQUIRE(engine.ranked()->IncrementCounter(id, 0, counts[id - 1]).ok());
  }
  clock->Advance(1);
  RankedReadOptions read;
  read.window = 10;
  read.limit = 1;
  absl::StatusOr<RankedPage> first;
  auto first_page = [&] {
    clock->Advance(1);  // the walk starts after the increment's first read
    first = engine.ranked()->ReadRanked(1, read);
  };
  if (testing::OnCluster()) {
    // Inside the increment: after its first clock read, before its script.
    clock->Arm(first_page);
  } else {
    // In process the clock is read under the lock that the page's counter
    // lookup takes, so the page can only come before.
    first_page();
  }
  // Activity 1 drops below the others, under the first page's cursor.
  const absl::StatusOr<ActivityCounters> after =
      engine.ranked()->IncrementCounter(1, 0, -95);
  REQUIRE_MESSAGE(after.ok(), after.status());
  CHECK((*after)[0] == 5);
  REQUIRE_MESSAGE(first.ok(), first.status());
  REQUIRE(first->entries.size() == 1);
  CHECK(first->entries[0].entry.activity_id == 1);
  CHECK(first->entries[0].counters[0] == 100);
  REQUIRE_FALSE(first->next_cursor.empty());
  read.cursor = first->next_cursor;
  read.limit = 10;
  const absl::StatusOr<RankedPage> rest = engine.ranked()->ReadRanked(1, read);
  REQUIRE_MESSAGE(rest.ok(), rest.status());
  std::vector<ActivityId> ids;
  for (const RankedEntry& e : rest->entries) {
    ids.push_back(e.entry.activity_id);
  }
  // Left out, as changed at or after the start: not shown twice.
  CHECK(ids == std::vector<ActivityId>{2, 3});
  CHECK(rest->next_cursor.empty());
}

TEST_CASE(
    "ranked conformance: a retracted activity keeps its counters for an "
    "entry that reuses its id") {
  auto clock = std::make_shared<ManualClock>(kStart);
  EngineOptions options;
  options.sweep_interval = 0;
  options.clock = clock;
  absl::StatusOr<std::unique_ptr<FeedEngine>> made =
      testing::MakeEngine(std::move(options), "ranked_retracted");
  REQUIRE_MESSAGE(made.ok(), made.status());
  FeedEngine& engine = **made;
  REQUIRE(engine.Publish(testing::MakeActivity(7, 2, kStart - 10)).ok());
  REQUIRE(engine.ranked()->IncrementCounter(7, 1, 40).ok());
  REQUIRE(engine.Retract(7).ok());
  CHECK(absl::IsNotFound(engine.ranked()->IncrementCounter(7, 1, 1).status()));
  CHECK(absl::IsNotFound(engine.ranked()->GetCounters(7).status()));
  // The program's own entry under the retracted id ranks with the
  // counters the activity had, as every other entry of that id would.
  REQUIRE(engine.Insert(1, {kStart - 10, 7, 2}).ok());
  RankedReadOptions read;
  read.window = 10;
  const absl::StatusOr<RankedPage> page = engine.ranked()->ReadRanked(1, read);
  REQUIRE_MESSAGE(page.ok(), page.status());
  REQUIRE(page->entries.size() == 1);
  CHECK(page->entries[0].counters == ActivityCounters{0, 40, 0, 0});
}

TEST_CASE(
    "ranked conformance: walks never repeat an entry while counters "
    "change") {
  const ActivityId activities = testing::OnCluster() ? 60 : 300;
  const uint64_t walks = testing::OnCluster() ? 15 : 60;
  auto clock = std::make_shared<ManualClock>(kStart);
  EngineOptions options;
  options.shards = 4;
  options.fanout_threads = 0;
  std::unique_ptr<FeedEngine> engine = Sequence::MakeEngine(clock, options);
  REQUIRE(engine->Follow(1, 2).ok());
  for (ActivityId id = 1; id <= activities; ++id) {
    REQUIRE(engine
                ->Publish(testing::MakeActivity(
                    id, 2, kStart - static_cast<Micros>(id) * 60'000'000))
                .ok());
  }
  testing::Failures failures;
  std::atomic<bool> writing{true};
  std::atomic<uint64_t> increments{0};
  auto writer = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    while (writing.load(std::memory_order_relaxed)) {
      const ActivityId id = 1 + rng() % activities;
      const int64_t delta = static_cast<int64_t>(rng() % 201) - 100;
      if (delta == 0) continue;
      failures.Check(
          engine->ranked()
              ->IncrementCounter(id, rng() % kActivityCounterCount, delta)
              .status(),
          "IncrementCounter");
      increments.fetch_add(1, std::memory_order_relaxed);
      if (rng() % 4 == 0) clock->Advance(1);
    }
  };
  std::atomic<uint64_t> left_out{0};
  auto reader = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (uint64_t walk = 0; walk < walks; ++walk) {
      RankedReadOptions read;
      read.window = activities;
      read.formula.gravity = 0.5;
      std::set<ActivityId> shown;
      std::tuple<double, Micros, ActivityId> floor{0, 0, 0};
      bool first = true;
      for (;;) {
        read.limit = 1 + rng() % 12;
        const absl::StatusOr<RankedPage> page =
            engine->ranked()->ReadRanked(1, read);
        if (!page.ok()) {
          failures.Check(page.status(), "ReadRanked");
          return;
        }
        for (const RankedEntry& e : page->entries) {
          const std::tuple<double, Micros, ActivityId> place{
              e.score, e.entry.ts, e.entry.activity_id};
          if (!first && !(place < floor)) failures.Add("out of order");
          floor = place;
          first = false;
          if (!shown.insert(e.entry.activity_id).second) {
            failures.Add("activity " + std::to_string(e.entry.activity_id) +
                         " shown twice in one walk");
          }
        }
        if (page->next_cursor.empty()) break;
        read.cursor = page->next_cursor;
      }
      left_out.fetch_add(activities - shown.size(), std::memory_order_relaxed);
    }
  };
  std::vector<std::thread> writers;
  for (uint64_t t = 0; t < 2; ++t) writers.emplace_back(writer, 100 + t);
  std::vector<std::thread> readers;
  for (uint64_t t = 0; t < 2; ++t) readers.emplace_back(reader, 200 + t);
  for (std::thread& t : readers) t.join();
  writing.store(false);
  for (std::thread& t : writers) t.join();
  failures.Report();
  // The race happened: counters moved during walks, which then left
  // entries out.
  CHECK(increments.load() > 0);
  CHECK(left_out.load() > 0);
}

}  // namespace
}  // namespace feedcore
