// Micro-benchmarks of feedcore's timeline hot paths, each next to two
// baselines measured in the same process run (see bench/baselines.h):
//
//   BM_InOrderInsert/<cap>/<system>   newer-than-everything inserts into one
//                                     timeline, uncapped and at cap 1000
//   BM_RandomInsert/<system>          inserts into random timelines among
//                                     1,000,000 users, on 1 and 2 threads
//   BM_ReadFirstPage/<system>         a 50-entry page from the newest entry
//   BM_ReadPageAtCursor/<system>      a 50-entry page after a cursor in a
//                                     1,000-entry timeline
//   BM_DependentLoad/1GiB             dependent cache misses: the floor
//                                     under a random insert
//
// <system> is `feedcore`, `std_map_mutex` or `btree_per_user`. Every
// benchmark reports items_per_second (inserts or pages per second) and, by
// default, only the mean, median, standard deviation and coefficient of
// variation of 5 repetitions; any `--benchmark_*` flag given on the command
// line overrides those defaults.
//
// The engine runs without a sweeper thread (`sweep_interval = 0`), so no
// background work runs during a measurement. Every system reads time from
// its own `ManualClock`, which the benchmarks move forward with the entry
// timestamps (one microsecond of simulated time per insert), so that
// expiries differ from entry to entry as in a live feed while nothing
// expires within a run. Random choices come from fixed-seed generators and
// are drawn before the timed loops.

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/baselines.h"
#include "bench/benchmark_main.h"
#include "feedcore/feedcore.h"

namespace feedcore::bench {
namespace {

// Capacity meaning "hold everything" for the baselines; feedcore gets its
// largest accepted `max_timeline_length` instead.
constexpr size_t kUncapped = std::numeric_limits<size_t>::max();
constexpr size_t kDefaultCap = 1000;
// In-order inserts per repetition of the uncapped benchmark: fixed so that
// every system stores the same number of entries, and below feedcore's
// kMaxTimelineLengthLimit so that nothing is trimmed.
constexpr int64_t kUncappedInserts = 4'000'000;
static_assert(kUncappedInserts <=
              static_cast<int64_t>(kMaxTimelineLengthLimit));

constexpr size_t kUsers = 1'000'000;
// Entries every user's timeline holds before the random-insert benchmark
// starts, so that it measures inserts into existing timelines.
constexpr int kPrefillPerUser = 10;
// Random-insert iterations per thread and repetition: fixed so that every
// system ends with the same number of entries.
constexpr int64_t kRandomInsertsPerThread = 1'000'000;
// Pre-drawn owners for the random-insert benchmark (a power of two).
constexpr size_t kRandomOwners = size_t{1} << 22;
constexpr uint64_t kOwnerSeed = 20240501;

constexpr size_t kReadTimelineLength = 1000;
constexpr size_t kPageSize = 50;
constexpr uint64_t kCursorSeed = 7;

// Start of the manual clocks and of the benchmark timestamps (2023 in
// microseconds since the epoch).
constexpr Micros kStartTime = 1'700'000'000'000'000;

TimelineEntry MakeEntry(Micros ts) {
  return TimelineEntry{.ts = ts,
                       .activity_id = static_cast<ActivityId>(ts),
                       .actor = static_cast<EntityId>(1 + (ts & 1023))};
}

// ---------------------------------------------------------------------------
// Adapters: one shape for the three systems.
//
// Each adapter has `Insert(owner, entry) -> bool` (false on an error),
// a `Cursor` type, `Cursors(owner)` giving the cursor after each entry of
// `owner`'s timeline in newest-first order, `FirstPage()` and
// `ReadPage(owner, cursor) -> entries returned`.

// `kShards` is EngineOptions::shards (0: the engine's default).
template <const char* kSystemName, size_t kShards>
class FeedcoreSystemT {
 public:
  static constexpr const char* kName = kSystemName;
  using Cursor = ReadOptions;  // the cursor string plus the page size

  explicit FeedcoreSystemT(size_t cap) {
    EngineOptions options;
    options.shards = kShards;
    options.max_timeline_length =
        cap == kUncapped ? kMaxTimelineLengthLimit : cap;
    options.sweep_interval = 0;
    options.clock = clock_;
    auto engine = FeedEngine::Create(std::move(options));
    if (!engine.ok()) Die(engine.status().ToString());
    engine_ = *std::move(engine);
  }

  // Moves the system's clock forward to `now` (never backwards).
  void AdvanceTo(Micros now) {
    if (clock_->Now() < now) clock_->Set(now);
  }

  bool Insert(EntityId owner, const TimelineEntry& entry) {
    auto result = engine_->Insert(owner, entry);
    benchmark::DoNotOptimize(result);
    return result.ok();
  }

  std::vector<Cursor> Cursors(EntityId owner) const {
    // Pages of one entry: the cursor of page p points after entry p.
    std::vector<Cursor> cursors;
    ReadOptions read;
    read.limit = 1;
    do {
      auto page = engine_->ReadTimeline(owner, read);
      if (!page.ok()) Die(page.status().ToString());
      read.cursor = std::move(page->next_cursor);
      if (!read.cursor.empty()) {
        ReadOptions at;
        at.limit = kPageSize;
        at.cursor = read.cursor;
        cursors.push_back(std::move(at));
      }
    } while (!read.cursor.empty());
    return cursors;
  }

  Cursor FirstPage() const {
    ReadOptions read;
    read.limit = kPageSize;
    return read;
  }

  size_t ReadPage(EntityId owner, const Cursor& cursor) const {
    auto page = engine_->ReadTimeline(owner, cursor);
    benchmark::DoNotOptimize(page);
    return page.ok() ? page->entries.size() : 0;
  }

  const InProcessFeedEngine& engine() const { return *engine_; }

 private:
  const std::shared_ptr<ManualClock> clock_ =
      std::make_shared<ManualClock>(kStartTime);
  std::unique_ptr<InProcessFeedEngine> engine_;
};

template <typename Baseline, const char* kSystemName>
class BaselineSystem {
 public:
  static constexpr const char* kName = kSystemName;
  using Cursor = std::optional<BaselineKey>;

  explicit BaselineSystem(size_t cap)
      : clock_(std::make_shared<ManualClock>(kStartTime)),
        baseline_(BaselineOptions{
            .cap = cap, .ttl = EngineOptions().default_ttl, .clock = clock_}) {}

  // Moves the system's clock forward to `now` (never backwards).
  void AdvanceTo(Micros now) {
    if (clock_->Now() < now) clock_->Set(now);
  }

  bool Insert(EntityId owner, const TimelineEntry& entry) {
    auto result = baseline_.Insert(owner, entry);
    benchmark::DoNotOptimize(result);
    return true;
  }

  std::vector<Cursor> Cursors(EntityId owner) const {
    std::vector<Cursor> cursors;
    for (const BaselineKey& key : baseline_.Keys(owner)) {
      cursors.emplace_back(key);
    }
    // The last entry has nothing after it, as in feedcore.
    if (!cursors.empty()) cursors.pop_back();
    return cursors;
  }

  Cursor FirstPage() const { return std::nullopt; }

  size_t ReadPage(EntityId owner, const Cursor& cursor) const {
    BaselinePage page = baseline_.ReadPage(owner, cursor, kPageSize);
    benchmark::DoNotOptimize(page);
    return page.entries.size();
  }

 private:
  const std::shared_ptr<ManualClock> clock_;
  Baseline baseline_;
};

constexpr char kFeedcoreName[] = "feedcore";
// The engine with many more shards than its default, to show how much of
// the multi-threaded cost is contention between shards' writers.
constexpr char kFeedcore1024Name[] = "feedcore_shards1024";
using FeedcoreSystem = FeedcoreSystemT<kFeedcoreName, 0>;
using Feedcore1024System = FeedcoreSystemT<kFeedcore1024Name, 1024>;

constexpr char kStdMapName[] = "std_map_mutex";
constexpr char kBtreeName[] = "btree_per_user";
using StdMapSystem = BaselineSystem<StdMapBaseline, kStdMapName>;
using BtreeSystem = BaselineSystem<BtreeBaseline, kBtreeName>;

// ---------------------------------------------------------------------------
// In-order inserts into one timeline.

template <typename System>
void BM_InOrderInsert(benchmark::State& state, size_t cap) {
  constexpr EntityId kOwner = 42;
  System system(cap);
  Micros ts = kStartTime;
  // At a cap, fill the timeline first so that every timed insert also
  // drops the oldest entry.
  if (cap != kUncapped) {
    for (size_t i = 0; i < cap; ++i, ++ts) {
      system.AdvanceTo(ts);
      system.Insert(kOwner, MakeEntry(ts));
    }
  }
  for (auto _ : state) {
    system.AdvanceTo(ts);
    if (!system.Insert(kOwner, MakeEntry(ts))) {
      state.SkipWithError("Insert failed");
      break;
    }
    ++ts;
  }
  state.SetItemsProcessed(state.iterations());
}

// ---------------------------------------------------------------------------
// Inserts into random timelines among kUsers users.

const std::vector<EntityId>& RandomOwners() {
  static const std::vector<EntityId>* const owners = [] {
    auto* v = new std::vector<EntityId>(kRandomOwners);
    std::mt19937_64 rng(kOwnerSeed);
    std::uniform_int_distribution<EntityId> user(1, kUsers);
    for (EntityId& owner : *v) owner = user(rng);
    return v;
  }();
  return *owners;
}

// The system that the random-insert benchmark of one system shares between
// its threads and its repetitions. Built (and prefilled) by whichever thread
// asks first; replaced, after freeing the previous one, when another
// system's benchmark starts.
struct SharedRandomSystem {
  std::mutex mu;
  std::string name;              // guarded by mu
  std::shared_ptr<void> system;  // guarded by mu
  // Next unused timestamp. Threads reserve chunks of kTsChunk, so entries
  // arrive in nearly global time order, as in a live feed.
  std::atomic<Micros> next_ts{kStartTime};
};
constexpr Micros kTsChunk = 256;

SharedRandomSystem& Shared() {
  static SharedRandomSystem* const shared = new SharedRandomSystem;
  return *shared;
}

template <typename System>
System* AcquireRandomSystem() {
  SharedRandomSystem& shared = Shared();
  std::lock_guard<std::mutex> lock(shared.mu);
  if (shared.name != System::kName) {
    shared.system.reset();
    auto system = std::make_shared<System>(kDefaultCap);
    for (int round = 0; round < kPrefillPerUser; ++round) {
      const Micros base = shared.next_ts.fetch_add(kUsers);
      for (size_t user = 0; user < kUsers; ++user) {
        system->AdvanceTo(base + user);
        if (!system->Insert(user + 1, MakeEntry(base + user))) {
          Die("prefill insert failed");
        }
      }
    }
    shared.system = std::move(system);
    shared.name = System::kName;
  }
  return static_cast<System*>(shared.system.get());
}

// Voluntary context switches of the whole process so far: each is a thread
// going to sleep, e.g. on a contended lock.
int64_t VoluntaryContextSwitches() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_nvcsw;
}

template <typename System>
void BM_RandomInsert(benchmark::State& state) {
  const std::vector<EntityId>& owners = RandomOwners();
  System* const system = AcquireRandomSystem<System>();
  std::atomic<Micros>& next_ts = Shared().next_ts;
  // Threads start at different places of the pre-drawn owners.
  size_t pos = (static_cast<size_t>(state.thread_index()) * 1'048'573) &
               (kRandomOwners - 1);
  Micros ts = 0;
  Micros ts_end = 0;
  const int64_t sleeps_before = VoluntaryContextSwitches();
  for (auto _ : state) {
    if (ts == ts_end) {
      // The clock moves once per chunk, not per insert, so that threads do
      // not contend on it.
      ts = next_ts.fetch_add(kTsChunk, std::memory_order_relaxed);
      ts_end = ts + kTsChunk;
      system->AdvanceTo(ts);
    }
    if (!system->Insert(owners[pos], MakeEntry(ts))) {
      state.SkipWithError("Insert failed");
      break;
    }
    ++ts;
    pos = (pos + 1) & (kRandomOwners - 1);
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    // Every thread has left the loop here (the loop ends at a barrier).
    // A thread that blocks on a lock held by another one shows up as a
    // voluntary context switch of the process.
    const double inserts =
        static_cast<double>(state.iterations()) * state.threads();
    state.counters["sleeps_per_1k"] = benchmark::Counter(
        static_cast<double>(VoluntaryContextSwitches() - sleeps_before) *
        1000.0 / inserts);
  }
}

// ---------------------------------------------------------------------------
// Page reads in one kReadTimelineLength-entry timeline.

constexpr EntityId kReadOwner = 7;

template <typename System>
void FillReadTimeline(System& system) {
  for (size_t i = 0; i < kReadTimelineLength; ++i) {
    const Micros ts = kStartTime + static_cast<Micros>(i);
    system.AdvanceTo(ts);
    system.Insert(kReadOwner, MakeEntry(ts));
  }
}

template <typename System>
void BM_ReadPageAtCursor(benchmark::State& state) {
  System system(kDefaultCap);
  FillReadTimeline(system);
  std::vector<typename System::Cursor> all = system.Cursors(kReadOwner);
  if (all.size() != kReadTimelineLength - 1) Die("unexpected cursor count");
  // Cursors after positions 0 .. length - page - 1, so that every read
  // returns a full page, visited in a fixed shuffled order.
  std::vector<size_t> positions(kReadTimelineLength - kPageSize);
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = i;
  std::shuffle(positions.begin(), positions.end(),
               std::mt19937_64(kCursorSeed));
  std::vector<typename System::Cursor> cursors;
  cursors.reserve(positions.size());
  for (size_t p : positions) {
    cursors.push_back(all[p]);
    if (system.ReadPage(kReadOwner, cursors.back()) != kPageSize) {
      Die("a read at a cursor returned less than a full page");
    }
  }
  size_t i = 0;
  for (auto _ : state) {
    size_t n = system.ReadPage(kReadOwner, cursors[i]);
    benchmark::DoNotOptimize(n);
    if (++i == cursors.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}

template <typename System>
void BM_ReadFirstPage(benchmark::State& state) {
  System system(kDefaultCap);
  FillReadTimeline(system);
  const typename System::Cursor first = system.FirstPage();
  if (system.ReadPage(kReadOwner, first) != kPageSize) {
    Die("the first page is not full");
  }
  for (auto _ : state) {
    size_t n = system.ReadPage(kReadOwner, first);
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations());
}

// ---------------------------------------------------------------------------

template <typename System>
void RegisterInOrder(const char* cap_name, size_t cap) {
  auto* b = benchmark::RegisterBenchmark(
      (std::string("BM_InOrderInsert/") + cap_name + "/" + System::kName)
          .c_str(),
      [cap](benchmark::State& state) { BM_InOrderInsert<System>(state, cap); });
  if (cap == kUncapped) b->Iterations(kUncappedInserts);
}

template <typename System>
void RegisterRandom() {
  benchmark::RegisterBenchmark(
      (std::string("BM_RandomInsert/") + System::kName).c_str(),
      BM_RandomInsert<System>)
      ->Iterations(kRandomInsertsPerThread)
      ->Threads(1)
      ->Threads(2)
      // Wall time, so that items_per_second is the total rate of all
      // threads rather than the rate per thread.
      ->UseRealTime();
}

// ---------------------------------------------------------------------------
// The floor under an insert into a random timeline: each step of it (hash
// control bytes, hash slot, record, chunk) is a load whose address comes
// from the load before, in memory far larger than the caches. This chases
// pointers through one shuffled cycle over kChaseBytes, about what the
// random-insert benchmark's engine holds, so items_per_second is dependent
// cache misses per second on this machine.

constexpr size_t kChaseBytes = size_t{1} << 30;

void BM_DependentLoad(benchmark::State& state) {
  using Line = std::array<uint64_t, 8>;  // one 64-byte cache line
  static const std::vector<Line>* const lines = [] {
    const size_t count = kChaseBytes / sizeof(Line);
    std::vector<uint32_t> order(count);
    for (size_t i = 0; i < count; ++i) order[i] = static_cast<uint32_t>(i);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(kOwnerSeed));
    auto* cycle = new std::vector<Line>(count);
    for (size_t i = 0; i < count; ++i) {
      (*cycle)[order[i]][0] = order[(i + 1) % count];
    }
    return cycle;
  }();
  uint64_t at = 0;
  for (auto _ : state) at = (*lines)[at][0];
  benchmark::DoNotOptimize(at);
  state.SetItemsProcessed(state.iterations());
}

template <typename System>
void RegisterReads() {
  benchmark::RegisterBenchmark(
      (std::string("BM_ReadFirstPage/") + System::kName).c_str(),
      BM_ReadFirstPage<System>);
  benchmark::RegisterBenchmark(
      (std::string("BM_ReadPageAtCursor/") + System::kName).c_str(),
      BM_ReadPageAtCursor<System>);
}

void RegisterAll() {
  RegisterInOrder<FeedcoreSystem>("uncapped", kUncapped);
  RegisterInOrder<StdMapSystem>("uncapped", kUncapped);
  RegisterInOrder<BtreeSystem>("uncapped", kUncapped);
  RegisterInOrder<FeedcoreSystem>("cap1000", kDefaultCap);
  RegisterInOrder<StdMapSystem>("cap1000", kDefaultCap);
  RegisterInOrder<BtreeSystem>("cap1000", kDefaultCap);

  RegisterRandom<FeedcoreSystem>();
  RegisterRandom<Feedcore1024System>();
  RegisterRandom<StdMapSystem>();
  RegisterRandom<BtreeSystem>();

  RegisterReads<FeedcoreSystem>();
  RegisterReads<StdMapSystem>();
  RegisterReads<BtreeSystem>();

  benchmark::RegisterBenchmark("BM_DependentLoad/1GiB", BM_DependentLoad)
      ->Iterations(4'000'000);
}

}  // namespace
}  // namespace feedcore::bench

int main(int argc, char** argv) {
  if (!feedcore::bench::InitializeWithDefaults(argc, argv)) return 1;

  {
    feedcore::bench::FeedcoreSystem probe(feedcore::bench::kDefaultCap);
    benchmark::AddCustomContext(
        "feedcore_shards", std::to_string(probe.engine().options().shards));
  }
  benchmark::AddCustomContext("random_insert_users",
                              std::to_string(feedcore::bench::kUsers));
  // Draw the random owners before any benchmark runs.
  feedcore::bench::RandomOwners();

  feedcore::bench::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
