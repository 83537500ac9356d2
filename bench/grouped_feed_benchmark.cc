// Benchmarks of grouped (aggregated) feeds, each next to the same work on an
// engine that does not aggregate, in the same process run (results in
// docs/benchmark-results.md):
//
//   BM_Publish/<mode>                 Publish with fan-out to 40 followers
//                                     on average (2,000 readers following
//                                     10 of 500 actors each), every reader
//                                     timeline already at its 1,000-entry
//                                     cap, so every delivery also trims.
//                                     <mode>: `flat` (aggregation off) or
//                                     `aggregated` (aggregation on).
//   BM_ReadGroups/<page>/<path>/<heap>
//                                     ReadGroups of 25 groups from a
//                                     1,000-entry timeline (about 370
//                                     groups). <page>: `first_page` or
//                                     `at_cursor` (each full page after the
//                                     first, in turn). <path>: `index` (the
//                                     timeline's group index) or `fallback`
//                                     (its oldest entry has expired and is
//                                     not reclaimed, so the engine groups
//                                     the visible entries at read time).
//   BM_ReadTimeline/<page>/<mode>/<heap>
//                                     ReadTimeline of 25 entries from the
//                                     same timeline, on the aggregating
//                                     engine and on a flat one.
//
// <heap>: every read runs twice, `fresh_heap` (before the publishes) and
// `after_publish` (once the aggregated publish engine exists): what malloc
// and free cost a page depends on what else the heap holds.
//
// Publishes report items_per_second (publishes) and deliveries_per_second;
// the aggregated run also reports the groups its readers see
// (groups_per_timeline, entries_per_group). Page reads report
// items_per_second (pages) and, for groups, activities_per_page.
//
// Activities take a verb (like, comment, share: 6:3:1) and an object drawn
// by popularity (Zipf, exponent 1.1, over 100 objects), and each reader
// timeline gets about 250 of them per simulated day, so that the default
// group key (verb, object, day) forms groups of the spread seen in a social
// feed: many single entries and a few large groups.
//
// Every engine runs without a sweeper or fan-out thread (`sweep_interval =
// 0`, `fanout_threads = 0`) and reads a ManualClock, moved forward with the
// activities' timestamps. Random choices come from fixed-seed generators and
// are drawn before the timed loops. By default each benchmark reports the
// aggregates of 5 repetitions; `--benchmark_*` flags override that.
//
//   feedcore_grouped_feed_benchmarks --memory_per_entry
//
// runs none of the benchmarks and prints instead the resident memory per
// timeline entry of 10,000 timelines x 1,000 entries (the same activity
// mix, put with Insert round-robin in time order), and
// EngineStats::bytes_used per entry, for a flat and an aggregating engine,
// each built in a forked child process.

#include <benchmark/benchmark.h>
#include <malloc.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/benchmark_main.h"
#include "bench/child_process.h"
#include "bench/soak/resident_memory.h"
#include "feedcore/feedcore.h"

namespace feedcore::bench {
namespace {

// 2023 in microseconds since the epoch: where every clock starts.
constexpr Micros kStart = 1'700'000'000'000'000;

// The activity mix.
constexpr size_t kObjects = 100;
constexpr double kObjectZipfExponent = 1.1;
constexpr uint64_t kVerbs = 3;
// Entries a reader timeline receives per simulated day: with a day's time
// bucket, how many entries can fall into one group.
constexpr Micros kEntriesPerDay = 250;

// What one activity does, to what, and who does it (an index into the
// actors of the benchmark).
struct Draw {
  size_t actor;
  uint64_t verb;
  EntityId object;
};

std::vector<Draw> DrawActivities(uint64_t seed, size_t count, size_t actors) {
  std::mt19937_64 rng(seed);
  std::discrete_distribution<uint64_t> verb({6, 3, 1});
  std::vector<double> popularity(kObjects);
  for (size_t i = 0; i < kObjects; ++i) {
    popularity[i] =
        1.0 / std::pow(static_cast<double>(i + 1), kObjectZipfExponent);
  }
  std::discrete_distribution<EntityId> object(popularity.begin(),
                                              popularity.end());
  std::uniform_int_distribution<size_t> actor(0, actors - 1);
  std::vector<Draw> draws(count);
  for (Draw& d : draws) {
    d.actor = actor(rng);
    d.verb = 1 + verb(rng);
    d.object = 1 + object(rng);
  }
  return draws;
}

EngineOptions Options(bool aggregated, std::shared_ptr<ManualClock> clock) {
  EngineOptions options;
  options.sweep_interval = 0;
  options.fanout_threads = 0;
  options.clock = std::move(clock);
  options.aggregation.enabled = aggregated;
  return options;
}

std::unique_ptr<InProcessFeedEngine> NewEngine(EngineOptions options) {
  absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> engine =
      FeedEngine::Create(std::move(options));
  if (!engine.ok()) Die(engine.status().ToString());
  return *std::move(engine);
}

void Require(const absl::Status& status, std::string_view what) {
  if (!status.ok()) Die(std::string(what) + ": " + status.ToString());
}

const char* ModeName(bool aggregated) {
  return aggregated ? "aggregated" : "flat";
}

// ---------------------------------------------------------------------------
// Publish with fan-out

constexpr size_t kReaders = 2000;
constexpr size_t kActors = 500;
constexpr size_t kFolloweesPerReader = 10;
constexpr EntityId kFirstActor = 1'000'000;
// A reader receives kFolloweesPerReader / kActors of all publishes; the
// step makes that kEntriesPerDay a day.
constexpr Micros kPublishStep =
    kMicrosPerDay * kFolloweesPerReader / (kEntriesPerDay * kActors);
// About twice what fills every reader timeline to its cap.
constexpr size_t kPrefillPublishes = 100'000;
constexpr int64_t kPublishesPerRepetition = 20'000;
// Pre-drawn activities, cycled through by the timed loops (a power of two).
constexpr size_t kPublishDraws = size_t{1} << 16;
constexpr uint64_t kGraphSeed = 20240601;
constexpr uint64_t kPublishSeed = 20240602;
// Readers whose groups the aggregated run reports (counters, not timed).
constexpr EntityId kCountedReaders = 100;

const std::vector<Draw>& PublishDraws() {
  static const std::vector<Draw>* const draws = new std::vector<Draw>(
      DrawActivities(kPublishSeed, kPublishDraws, kActors));
  return *draws;
}

// One engine per mode, kept for all the repetitions: after the prefill
// every reader timeline is full, so each repetition measures the steady
// state of a live feed, and both modes get the same publishes.
struct PublishFixture {
  std::shared_ptr<ManualClock> clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> engine;
  ActivityId next_id = 1;
  size_t next_draw = 0;

  explicit PublishFixture(bool aggregated) {
    EngineOptions options = Options(aggregated, clock);
    // Long enough that nothing expires however many repetitions a run asks
    // for, so no read of the counters below falls back to a scan.
    options.default_ttl = 365 * kMicrosPerDay;
    engine = NewEngine(std::move(options));
    std::mt19937_64 rng(kGraphSeed);
    std::uniform_int_distribution<size_t> actor(0, kActors - 1);
    FollowOptions no_backfill;
    no_backfill.backfill = 0;
    for (EntityId reader = 1; reader <= kReaders; ++reader) {
      size_t followed = 0;
      while (followed < kFolloweesPerReader) {
        absl::StatusOr<FollowResult> follow =
            engine->Follow(reader, kFirstActor + actor(rng), no_backfill);
        Require(follow.status(), "Follow");
        if (follow->created) ++followed;
      }
    }
    for (size_t i = 0; i < kPrefillPublishes; ++i) {
      if (PublishNext() < 0) Die("prefill publish failed");
    }
  }

  // Publishes the next activity of the stream; returns the number of
  // follower timelines it reached, or -1 on an error.
  int64_t PublishNext() {
    const Draw& draw = PublishDraws()[next_draw];
    next_draw = (next_draw + 1) & (kPublishDraws - 1);
    clock->Advance(kPublishStep);
    Activity activity;
    activity.id = next_id++;
    activity.actor = kFirstActor + draw.actor;
    activity.ts = clock->Now();
    activity.verb = draw.verb;
    activity.object = draw.object;
    absl::StatusOr<PublishResult> result = engine->Publish(activity);
    if (!result.ok() || !result->created) return -1;
    return static_cast<int64_t>(result->fanned_out);
  }
};

// Built by the first benchmark that needs each, never freed.
PublishFixture* publish_fixtures[2] = {nullptr, nullptr};

PublishFixture& SharedPublishFixture(bool aggregated) {
  PublishFixture*& f = publish_fixtures[aggregated ? 1 : 0];
  if (f == nullptr) f = new PublishFixture(aggregated);
  return *f;
}

void BM_Publish(benchmark::State& state, bool aggregated) {
  PublishFixture& f = SharedPublishFixture(aggregated);
  int64_t delivered = 0;
  for (auto _ : state) {
    const int64_t fanned_out = f.PublishNext();
    if (fanned_out < 0) {
      state.SkipWithError("Publish failed");
      break;
    }
    delivered += fanned_out;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["deliveries_per_second"] = benchmark::Counter(
      static_cast<double>(delivered), benchmark::Counter::kIsRate);
  state.counters["fanout"] = benchmark::Counter(
      static_cast<double>(delivered) / static_cast<double>(state.iterations()));
  if (!aggregated) return;
  // The groups the readers see, after the timed loop: proof that the mix
  // forms groups, and of what size.
  GroupReadOptions read;
  read.limit = f.engine->options().max_page_size;
  size_t groups = 0;
  size_t entries = 0;
  for (EntityId reader = 1; reader <= kCountedReaders; ++reader) {
    absl::StatusOr<GroupPage> page = f.engine->ReadGroups(reader, read);
    Require(page.status(), "ReadGroups");
    if (!page->next_cursor.empty()) Die("a timeline has more groups than fit");
    groups += page->groups.size();
    for (const FeedGroup& g : page->groups) entries += g.activity_count;
  }
  state.counters["groups_per_timeline"] = benchmark::Counter(
      static_cast<double>(groups) / static_cast<double>(kCountedReaders));
  state.counters["entries_per_group"] = benchmark::Counter(
      static_cast<double>(entries) / static_cast<double>(groups));
}

// ---------------------------------------------------------------------------
// Page reads of one 1,000-entry timeline

constexpr EntityId kReadOwner = 1;
constexpr size_t kReadFollowees = 20;
constexpr size_t kReadEntries = 1000;
constexpr Micros kReadStep = kMicrosPerDay / kEntriesPerDay;
constexpr size_t kPageSize = 25;
constexpr uint64_t kReadSeed = 20240603;

// The state of the heap a read runs in. A page read allocates a vector
// per listed group, and what malloc and free cost depends on what else the
// heap holds: `kFresh`, little besides the read fixtures (these reads are
// registered before the publishes); `kAfterPublish`, the aggregated
// publish fixture too, whose group indexes are millions of small
// allocations churned by trims, as in the heap of an aggregating server.
enum class Heap { kFresh, kAfterPublish };

const char* HeapName(Heap heap) {
  return heap == Heap::kFresh ? "fresh_heap" : "after_publish";
}

// Brings the heap into the state `heap` names; false if that is no longer
// possible (the publish fixtures were built before a fresh-heap read, as
// when benchmarks are interleaved).
bool SetUpHeap(Heap heap) {
  if (heap == Heap::kAfterPublish) {
    SharedPublishFixture(/*aggregated=*/true);
    return true;
  }
  return publish_fixtures[0] == nullptr && publish_fixtures[1] == nullptr;
}

enum class ReadEngine {
  kAggregated,
  kFlat,
  // Aggregating, and the oldest entry has expired but is not reclaimed:
  // ReadGroups cannot trust the index's counts and groups at read time.
  kAggregatedWithExpired,
};

struct ReadFixture {
  std::shared_ptr<ManualClock> clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> engine;
};

// The same publishes for every engine: kReadOwner follows kReadFollowees
// actors, who publish kReadEntries activities.
ReadFixture MakeReadFixture(ReadEngine kind) {
  ReadFixture f;
  f.engine = NewEngine(Options(kind != ReadEngine::kFlat, f.clock));
  for (size_t a = 0; a < kReadFollowees; ++a) {
    Require(f.engine->Follow(kReadOwner, kFirstActor + a).status(), "Follow");
  }
  const std::vector<Draw> draws =
      DrawActivities(kReadSeed, kReadEntries, kReadFollowees);
  for (size_t i = 0; i < draws.size(); ++i) {
    f.clock->Advance(kReadStep);
    Activity activity;
    activity.id = i + 1;
    activity.actor = kFirstActor + draws[i].actor;
    activity.ts = f.clock->Now();
    activity.verb = draws[i].verb;
    activity.object = draws[i].object;
    // Expired long before the last publish (days later), never reclaimed:
    // nothing runs eviction.
    if (i == 0 && kind == ReadEngine::kAggregatedWithExpired) {
      activity.ttl = kMicrosPerHour;
    }
    Require(f.engine->Publish(activity).status(), "Publish");
  }
  return f;
}

const ReadFixture& SharedReadFixture(ReadEngine kind) {
  static const ReadFixture* fixtures[3] = {nullptr, nullptr, nullptr};
  const ReadFixture*& f = fixtures[static_cast<int>(kind)];
  if (f == nullptr) f = new ReadFixture(MakeReadFixture(kind));
  return *f;
}

// The cursors after each page of kPageSize that is followed by a full page.
template <typename Read, typename ReadFn>
std::vector<std::string> FullPageCursors(ReadFn read_page) {
  std::vector<std::string> cursors;
  Read read;
  read.limit = kPageSize;
  for (;;) {
    auto [size, next] = read_page(read);
    if (size != kPageSize) {
      // The last cursor led to a short page.
      if (!cursors.empty()) cursors.pop_back();
      break;
    }
    if (next.empty()) break;
    cursors.push_back(next);
    read.cursor = std::move(next);
  }
  return cursors;
}

void BM_ReadGroups(benchmark::State& state, ReadEngine kind, bool at_cursor,
                   Heap heap) {
  const ReadFixture& f = SharedReadFixture(kind);
  if (!SetUpHeap(heap)) {
    state.SkipWithError("fresh-heap reads must run before the publishes");
    return;
  }
  auto read_page = [&](const GroupReadOptions& read) {
    absl::StatusOr<GroupPage> page = f.engine->ReadGroups(kReadOwner, read);
    Require(page.status(), "ReadGroups");
    return std::make_pair(page->groups.size(), page->next_cursor);
  };
  std::vector<GroupReadOptions> reads(1);
  reads[0].limit = kPageSize;
  if (at_cursor) {
    reads.clear();
    for (std::string& cursor : FullPageCursors<GroupReadOptions>(read_page)) {
      GroupReadOptions& read = reads.emplace_back();
      read.limit = kPageSize;
      read.cursor = std::move(cursor);
    }
    if (reads.empty()) Die("no full group page after the first");
  }
  // What the pages hold, before timing: full pages, and how many
  // activities their groups stand for.
  size_t activities = 0;
  for (const GroupReadOptions& read : reads) {
    absl::StatusOr<GroupPage> page = f.engine->ReadGroups(kReadOwner, read);
    Require(page.status(), "ReadGroups");
    if (page->groups.size() != kPageSize) Die("a group page is not full");
    for (const FeedGroup& g : page->groups) activities += g.activity_count;
  }
  GroupReadOptions whole;
  whole.limit = kReadEntries;
  absl::StatusOr<GroupPage> all = f.engine->ReadGroups(kReadOwner, whole);
  Require(all.status(), "ReadGroups");
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<GroupPage> page = f.engine->ReadGroups(kReadOwner, reads[i]);
    benchmark::DoNotOptimize(page);
    if (++i == reads.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["activities_per_page"] = benchmark::Counter(
      static_cast<double>(activities) / static_cast<double>(reads.size()));
  state.counters["pages"] =
      benchmark::Counter(static_cast<double>(reads.size()));
  state.counters["groups_in_timeline"] =
      benchmark::Counter(static_cast<double>(all->groups.size()));
}

void BM_ReadTimeline(benchmark::State& state, ReadEngine kind, bool at_cursor,
                     Heap heap) {
  const ReadFixture& f = SharedReadFixture(kind);
  if (!SetUpHeap(heap)) {
    state.SkipWithError("fresh-heap reads must run before the publishes");
    return;
  }
  auto read_page = [&](const ReadOptions& read) {
    absl::StatusOr<Page> page = f.engine->ReadTimeline(kReadOwner, read);
    Require(page.status(), "ReadTimeline");
    return std::make_pair(page->entries.size(), page->next_cursor);
  };
  std::vector<ReadOptions> reads(1);
  reads[0].limit = kPageSize;
  if (at_cursor) {
    reads.clear();
    for (std::string& cursor : FullPageCursors<ReadOptions>(read_page)) {
      ReadOptions& read = reads.emplace_back();
      read.limit = kPageSize;
      read.cursor = std::move(cursor);
    }
    if (reads.empty()) Die("no full page after the first");
  }
  for (const ReadOptions& read : reads) {
    if (read_page(read).first != kPageSize) Die("a page is not full");
  }
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<Page> page = f.engine->ReadTimeline(kReadOwner, reads[i]);
    benchmark::DoNotOptimize(page);
    if (++i == reads.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["pages"] =
      benchmark::Counter(static_cast<double>(reads.size()));
}

void RegisterReads(Heap heap) {
  for (bool at_cursor : {false, true}) {
    const std::string page = at_cursor ? "at_cursor" : "first_page";
    for (ReadEngine kind :
         {ReadEngine::kAggregated, ReadEngine::kAggregatedWithExpired}) {
      const char* path = kind == ReadEngine::kAggregated ? "index" : "fallback";
      benchmark::RegisterBenchmark(
          ("BM_ReadGroups/" + page + "/" + path + "/" + HeapName(heap)).c_str(),
          [kind, at_cursor, heap](benchmark::State& state) {
            BM_ReadGroups(state, kind, at_cursor, heap);
          });
    }
    for (ReadEngine kind : {ReadEngine::kAggregated, ReadEngine::kFlat}) {
      benchmark::RegisterBenchmark(
          ("BM_ReadTimeline/" + page + "/" +
           ModeName(kind == ReadEngine::kAggregated) + "/" + HeapName(heap))
              .c_str(),
          [kind, at_cursor, heap](benchmark::State& state) {
            BM_ReadTimeline(state, kind, at_cursor, heap);
          });
    }
  }
}

// Benchmarks run in the order registered (unless interleaved).
void RegisterAll() {
  RegisterReads(Heap::kFresh);
  for (bool aggregated : {false, true}) {
    benchmark::RegisterBenchmark(
        (std::string("BM_Publish/") + ModeName(aggregated)).c_str(),
        [aggregated](benchmark::State& state) {
          BM_Publish(state, aggregated);
        })
        ->Iterations(kPublishesPerRepetition);
  }
  RegisterReads(Heap::kAfterPublish);
}

// ---------------------------------------------------------------------------
// Memory per entry (--memory_per_entry)

constexpr size_t kMemoryTimelines = 10'000;
constexpr size_t kMemoryPerTimeline = 1000;
constexpr uint64_t kMemorySeed = 20240604;

// What a child sends back to the parent through a pipe.
struct Measurement {
  bool ok = false;
  int64_t rss_delta = 0;
  uint64_t entries = 0;
  uint64_t bytes_used = 0;
  double groups_per_timeline = 0;
  double fill_seconds = 0;
};

// The default group key's grouping (verb, object, day) as one number:
// equal for the same triple, never 0.
GroupKey KeyOf(const Draw& draw, Micros ts) {
  const uint64_t day = static_cast<uint64_t>(ts / kMicrosPerDay);
  return 1 + ((day * kVerbs + (draw.verb - 1)) * kObjects + (draw.object - 1));
}

Measurement MeasureMemory(bool aggregated) {
  Measurement m;
  // Drawn a round at a time: all of them at once would be 240 MB next to
  // the engine being measured.
  std::vector<Draw> draws;
  std::mt19937_64 seeds(kMemorySeed);
  auto clock = std::make_shared<ManualClock>(kStart);
  malloc_trim(0);
  const size_t rss_before = ResidentBytes();
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<InProcessFeedEngine> engine = NewEngine(Options(aggregated, clock));
  bool ok = true;
  // Entry j of every timeline, then entry j + 1, as a live feed fills them;
  // each timeline gets kEntriesPerDay a day.
  for (size_t j = 0; j < kMemoryPerTimeline && ok; ++j) {
    draws = DrawActivities(seeds(), kMemoryTimelines, kReadFollowees);
    const Micros round = kStart + static_cast<Micros>(j) * kReadStep;
    for (size_t t = 0; t < kMemoryTimelines; ++t) {
      const Micros ts = round + static_cast<Micros>(t);
      clock->Set(ts);
      const Draw& d = draws[t];
      const TimelineEntry entry{.ts = ts,
                                .activity_id = j * kMemoryTimelines + t + 1,
                                .actor = kFirstActor + d.actor,
                                .group = KeyOf(d, ts)};
      ok = engine->Insert(t + 1, entry).ok();
      if (!ok) break;
    }
  }
  draws = {};
  malloc_trim(0);
  m.rss_delta =
      static_cast<int64_t>(ResidentBytes()) - static_cast<int64_t>(rss_before);
  m.fill_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const EngineStats stats = engine->Stats().value();
  m.entries = stats.entries;
  m.bytes_used = stats.bytes_used;
  if (aggregated) {
    GroupReadOptions read;
    read.limit = engine->options().max_page_size;
    size_t groups = 0;
    for (EntityId owner = 1; owner <= kCountedReaders; ++owner) {
      absl::StatusOr<GroupPage> page = engine->ReadGroups(owner, read);
      ok = ok && page.ok() && page->next_cursor.empty();
      if (page.ok()) groups += page->groups.size();
    }
    m.groups_per_timeline =
        static_cast<double>(groups) / static_cast<double>(kCountedReaders);
  }
  m.ok = ok && m.entries == kMemoryTimelines * kMemoryPerTimeline;
  return m;
}

// Runs MeasureMemory in a child process, so that no measurement reuses
// memory another one allocated and freed.
Measurement MeasureMemoryInChild(bool aggregated) {
  return RunInChild<Measurement>([&] { return MeasureMemory(aggregated); });
}

int RunMemory() {
  std::printf("%-10s %10s %8s %11s %10s %11s %9s %7s\n", "mode", "timelines",
              "per_tl", "entries", "rss_B/ent", "used_B/ent", "groups/tl",
              "fill_s");
  bool all_ok = true;
  for (bool aggregated : {false, true}) {
    const Measurement m = MeasureMemoryInChild(aggregated);
    if (!m.ok) {
      std::printf("%-10s FAILED\n", ModeName(aggregated));
      all_ok = false;
      continue;
    }
    const double n = static_cast<double>(m.entries);
    std::printf("%-10s %10zu %8zu %11llu %10.1f %11.1f %9.1f %7.2f\n",
                ModeName(aggregated), kMemoryTimelines, kMemoryPerTimeline,
                static_cast<unsigned long long>(m.entries),
                static_cast<double>(m.rss_delta) / n,
                static_cast<double>(m.bytes_used) / n, m.groups_per_timeline,
                m.fill_seconds);
    std::fflush(stdout);
  }
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace feedcore::bench

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--memory_per_entry") {
      if (argc != 2) {
        std::fprintf(stderr, "--memory_per_entry takes no other flags\n");
        return 2;
      }
      return feedcore::bench::RunMemory();
    }
  }
  if (!feedcore::bench::InitializeWithDefaults(argc, argv)) return 1;
  benchmark::AddCustomContext(
      "group_key", "verb (6:3:1 of 3), object (Zipf 1.1 of 100), day");
  // Draw the publishes before any benchmark runs.
  feedcore::bench::PublishDraws();
  feedcore::bench::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
