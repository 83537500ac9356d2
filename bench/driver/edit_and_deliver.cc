// edit-and-deliver: what an edit costs next to a publish, and what a
// delivery subscription adds to a publish.
//
// Edit vs publish: actors with `edit_small_followers` and `edit_followers`
// followers publish once untimed, then `edit_rounds` rounds of a Publish
// each, then as many of an EditActivity each, of the activity published in
// that round (payloads of kPayloadBytes). A publish copies the entry into
// every timeline; an edit rewrites the one payload they all hydrate from.
// Edits get rounds of their own: right after a fan-out to 100,000
// timelines an edit pays for the caches it evicted, a cost of the publish.
// The target, O(1) and not O(followers): the larger actor's edit within 2x
// of the smaller's. On the Redis Cluster backend, when the run has one,
// only the edits are timed (celebrity-post times its large publishes).
//
// Deliveries: an actor with `delivery_followers` followers publishes on
// four engines, copied or merged at read, each with no subscription and
// with one watching `delivery_watched` of those timelines whose callback,
// on the engine's delivery thread, only counts (one engine each: any
// subscription makes every publish look for watchers). Every watched
// timeline must be told of every timed publish, none missed. The cluster
// backend has no FeedDeliveries.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/driver/cluster_feed.h"
#include "bench/driver/interleave.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/stats.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "edit-and-deliver";
constexpr size_t kPayloadBytes = 200;
constexpr EntityId kSmallActor = 1;
constexpr EntityId kLargeActor = 2;
constexpr EntityId kDeliveryActor = 3;
constexpr EntityId kFirstFollower = 1'000'000;
constexpr ActivityId kIdsPerActor = 1'000'000;
constexpr size_t kCheckedEntries = 10;
constexpr size_t kClusterSetupThreads = 8;
// Report::Compare takes "times better": edit at 1,000 followers / edit at
// 100,000 followers >= 1/2 is an edit within 2x.
constexpr double kEditTarget = 1.0 / 2;

// Activity `number` of `actor`, one second after its previous one.
Activity Post(EntityId actor, size_t number) {
  Activity post;
  post.id = actor * kIdsPerActor + number;
  post.actor = actor;
  post.ts = kBenchStartTime + static_cast<Micros>(number) * kMicrosPerSecond;
  post.payload = absl::StrCat("post ", number, " by ", actor, " ");
  post.payload.resize(kPayloadBytes, '.');
  return post;
}

// Times one Publish, which must have copied the entry into `copies`
// follower timelines (none when the actor is merged at read).
absl::Status TimedPublish(FeedEngine& engine, const Activity& post,
                          size_t copies, std::vector<double>& samples) {
  const auto start = Stopwatch::now();
  absl::StatusOr<PublishResult> result = engine.Publish(post);
  samples.push_back(MicrosSince(start));
  if (!result.ok()) return result.status();
  if (result->fanned_out != copies) {
    return absl::InternalError(
        absl::StrCat("fanned out to ", result->fanned_out, ", not ", copies));
  }
  return absl::OkStatus();
}

// One actor of the edit comparison on one engine.
struct EditActor {
  EntityId id;
  size_t followers;
  EntityId first_follower;
  std::string system;     // as reported, e.g. "feedcore, 1000 followers"
  size_t published = 0;   // its activities 0..published-1
  ActivityId edited = 0;  // edited last, with `edited_payload`
  std::string edited_payload{};
};

// A hydrated read of one follower's newest entries must show the last
// edit's payload, stamped edited, on that activity alone.
void CheckEdit(RunContext& context, const FeedEngine& engine,
               const EditActor& actor) {
  if (actor.edited == 0) return;  // its edits failed, and were reported
  ReadOptions read;
  read.limit = kCheckedEntries;
  read.hydrate = true;
  absl::StatusOr<Page> page = engine.ReadTimeline(actor.first_follower, read);
  if (!page.ok()) {
    return context.answers.Fail(kScenario, actor.system, page.status());
  }
  std::vector<int64_t> edited;
  for (const StoredEntry& e : page->entries) {
    if (e.edited_at != 0 && e.payload == actor.edited_payload) {
      edited.push_back(static_cast<int64_t>(e.activity_id));
    }
  }
  context.answers.Check(
      kScenario,
      absl::StrCat("edited entry of follower ", actor.first_follower),
      actor.system, {static_cast<int64_t>(actor.edited)}, edited);
}

void RunEdits(RunContext& context, FeedEngine& engine,
              const std::string& system, bool on_cluster) {
  const DriverOptions& o = context.options;
  EditsAndPins* edits = engine.edits_and_pins();
  if (edits == nullptr) {
    return context.answers.Fail(kScenario, system,
                                absl::UnimplementedError("no EditsAndPins"));
  }
  std::vector<EditActor> actors = {
      {kSmallActor, o.edit_small_followers, kFirstFollower,
       absl::StrCat(system, ", ", o.edit_small_followers, " followers")},
      {kLargeActor, o.edit_followers, kFirstFollower + o.edit_small_followers,
       absl::StrCat(system, ", ", o.edit_followers, " followers")}};
  std::vector<SystemUnderTest> publishes, edited;
  for (EditActor& actor : actors) {
    // The follows, on the cluster concurrently (one call at a time its
    // round trips would take minutes), and the untimed first activity.
    auto follow = [&](size_t i) {
      return engine.Follow(actor.first_follower + i, actor.id).status();
    };
    absl::Status s =
        on_cluster
            ? RunConcurrently(context, kScenario, "following on Redis Cluster",
                              actor.followers, kClusterSetupThreads, follow)
            : absl::OkStatus();
    for (size_t i = 0; !on_cluster && s.ok() && i < actor.followers; ++i) {
      s = follow(i);
    }
    if (s.ok()) s = engine.Publish(Post(actor.id, 0)).status();
    if (!s.ok()) return context.answers.Fail(kScenario, actor.system, s);
    actor.published = 1;
    auto publish = [&engine, &actor](size_t, std::vector<double>& samples) {
      const Activity post = Post(actor.id, actor.published);
      absl::Status s = TimedPublish(engine, post, actor.followers, samples);
      actor.published += s.ok();
      return s;
    };
    // Round r edits activity r + 1, the one published in round r (on the
    // cluster, activity 0 every round).
    auto edit = [edits, &actor](size_t round, std::vector<double>& samples) {
      const ActivityId id = Post(actor.id, (round + 1) % actor.published).id;
      std::string payload = absl::StrCat("edit ", round, " ");
      payload.resize(kPayloadBytes, '.');
      const auto start = Stopwatch::now();
      absl::StatusOr<Micros> edited_at =
          edits->EditActivity(actor.id, id, payload);
      samples.push_back(MicrosSince(start));
      if (!edited_at.ok()) return edited_at.status();
      if (*edited_at <= 0) {
        return absl::InternalError(absl::StrCat("edited at ", *edited_at));
      }
      actor.edited = id;
      actor.edited_payload = std::move(payload);
      return absl::OkStatus();
    };
    publishes.push_back({actor.system, publish, {}, false});
    edited.push_back({actor.system, edit, {}, false});
  }
  const std::string size = absl::StrCat(", ", kPayloadBytes, "-byte payload");
  if (!on_cluster) {
    RunInterleaved(context, kScenario, "publishing", o.edit_rounds, publishes);
    const std::string metric = absl::StrCat("Publish", size);
    AddFigures(context, kScenario, metric, "us", publishes);
    // No target: the publish's growth with the followers, for contrast.
    context.report.Compare(kScenario, metric, actors[1].system,
                           actors[0].system, std::nullopt);
  }
  RunInterleaved(context, kScenario, absl::StrCat("editing, ", system),
                 o.edit_rounds, edited);
  for (const EditActor& actor : actors) CheckEdit(context, engine, actor);
  const std::string metric = absl::StrCat("EditActivity", size);
  AddFigures(context, kScenario, metric, "us", edited);
  context.report.Compare(kScenario, metric, actors[1].system, actors[0].system,
                         kEditTarget);
}

// One engine of the delivery comparison. `delivered` is declared before
// `engine`, so that it outlives the engine's delivery thread.
struct DeliveryEngine {
  bool merged = false;
  bool subscribed = false;
  std::atomic<uint64_t> delivered{0};
  SubscriptionId subscription = 0;
  std::unique_ptr<InProcessFeedEngine> engine;
};

absl::Status SetUpDeliveries(const DriverOptions& o,
                             std::shared_ptr<ManualClock> clock,
                             DeliveryEngine& d) {
  EngineOptions options = NewEngineOptions(std::move(clock), o.timeline_cap);
  // The followers follow nobody else: a threshold of 1 merges the actor.
  options.hybrid_fanout_threshold = d.merged ? 1 : 0;
  options.background_deliveries = true;
  absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> created =
      FeedEngine::Create(options);
  if (!created.ok()) return created.status();
  d.engine = *std::move(created);
  for (size_t i = 0; i < o.delivery_followers; ++i) {
    absl::Status s =
        d.engine->Follow(kFirstFollower + i, kDeliveryActor).status();
    if (!s.ok()) return s;
  }
  // Untimed, so that no timed publish creates the followers' timelines;
  // subscribed after it, so that the count is of the timed publishes.
  absl::Status s = d.engine->Publish(Post(kDeliveryActor, 0)).status();
  if (!s.ok() || !d.subscribed) return s;
  absl::StatusOr<SubscriptionId> id = d.engine->Subscribe(
      {kMaxDeliveryQueueCapacity, [&delivered = d.delivered](const Delivery&) {
         delivered.fetch_add(1);
         delivered.notify_all();
       }});
  if (!id.ok()) return id.status();
  d.subscription = *id;
  // Spread over the followers, and so over the shards.
  const size_t step = o.delivery_followers / o.delivery_watched;
  for (size_t w = 0; w < o.delivery_watched; ++w) {
    absl::StatusOr<bool> watched = d.engine->Watch(
        d.subscription, {DeliveryFeed::kTimeline, kFirstFollower + w * step});
    if (!watched.ok()) return watched.status();
  }
  return absl::OkStatus();
}

void RunDeliveries(RunContext& context) {
  const DriverOptions& o = context.options;
  const std::string plain = absl::StrCat(kFeedcore, ", no subscription");
  const std::string watching =
      absl::StrCat(kFeedcore, ", watching ", o.delivery_watched, " timelines");
  auto clock = std::make_shared<ManualClock>(kBenchStartTime);
  DeliveryEngine engines[4];
  std::vector<SystemUnderTest> systems;
  for (size_t i = 0; i < 4; ++i) {
    DeliveryEngine& d = engines[i];
    d.merged = i >= 2;
    d.subscribed = i % 2 == 1;
    const std::string& name = d.subscribed ? watching : plain;
    if (absl::Status s = SetUpDeliveries(o, clock, d); !s.ok()) {
      return context.answers.Fail(kScenario, name, s);
    }
    const size_t copies = d.merged ? 0 : o.delivery_followers;
    auto publish = [&d, copies](size_t round, std::vector<double>& samples) {
      return TimedPublish(*d.engine, Post(kDeliveryActor, round + 1), copies,
                          samples);
    };
    systems.push_back({name, publish, {}, false});
  }
  RunInterleaved(context, kScenario, "publishing with deliveries",
                 o.delivery_rounds, systems);
  for (size_t i = 0; i < 4; ++i) {
    DeliveryEngine& d = engines[i];
    if (!d.subscribed || systems[i].failed) continue;
    // Every delivery fits in the queue (main.cc checks), so none can be
    // dropped and the count does reach this.
    const uint64_t expected = uint64_t{o.delivery_rounds} * o.delivery_watched;
    d.engine->WaitForFanout();
    for (uint64_t n = d.delivered.load(); n < expected;
         n = d.delivered.load()) {
      d.delivered.wait(n);
    }
    absl::StatusOr<SubscriptionStats> stats =
        d.engine->GetSubscriptionStats(d.subscription);
    if (!stats.ok()) {
      context.answers.Fail(kScenario, watching, stats.status());
      continue;
    }
    context.answers.Check(
        kScenario,
        absl::StrCat("deliveries and misses, ", d.merged ? "merged" : "copied"),
        watching, {static_cast<int64_t>(expected), 0},
        {static_cast<int64_t>(d.delivered.load()),
         static_cast<int64_t>(stats->missed)});
  }
  for (const size_t first : {0, 2}) {
    const std::string metric =
        absl::StrCat("publish to ", o.delivery_followers, " followers, ",
                     first == 2 ? "merged at read" : "copied");
    AddFigures(context, kScenario, metric, "us",
               {systems[first], systems[first + 1]});
    context.report.Compare(kScenario, metric, watching, plain, std::nullopt);
  }
}

}  // namespace

void RunEditAndDeliver(RunContext& context) {
  const size_t cap = context.options.timeline_cap;
  if (absl::StatusOr<FeedSetup> feed = NewFeedSetup(cap); !feed.ok()) {
    context.answers.Fail(kScenario, kFeedcore, feed.status());
  } else {
    RunEdits(context, *feed->engine, kFeedcore, /*on_cluster=*/false);
  }
  if (std::unique_ptr<ClusterFeed> cluster = OpenClusterFeed(
          context, kScenario,
          NewEngineOptions(std::make_shared<ManualClock>(kBenchStartTime),
                           cap))) {
    RunEdits(context, cluster->engine(), kFeedcoreCluster, /*on_cluster=*/true);
    if (cluster->engine().deliveries() == nullptr) {
      context.report.Note(absl::StrCat(
          kScenario, ": ", kFeedcoreCluster,
          ": publish with delivery subscriptions not compared (the Redis "
          "Cluster backend has no FeedDeliveries)"));
    }
  }
  RunDeliveries(context);
}

}  // namespace feedcore::bench
