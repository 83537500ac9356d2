// Measures resident memory per stored timeline entry, for feedcore and for
// the baselines of bench/baselines.h.
//
// Each (system, shape) pair runs in its own forked child process, so that no
// measurement inherits memory that another one allocated and freed. The
// child reads its resident set size (/proc/self/statm) after
// `malloc_trim(0)`, inserts every entry, trims again and reads it again;
// the difference divided by the number of entries is the figure reported.
// It also reports the peak (VmHWM) over the same baseline, and for feedcore
// `EngineStats::bytes_used` and `bytes_reserved` per entry.
//
// Entries are inserted round-robin over the timelines in time order, the
// way a live feed fills them: entry j of every timeline, then entry j + 1.
//
// Usage:
//   feedcore_memory [--shape=deep|wide|all] [--system=NAME|all]
//                   [--timelines=N --per_timeline=M]
//
//   deep  10,000 timelines x 1,000 entries (10 million entries)
//   wide  1,000,000 timelines x 10 entries (10 million entries)
//   NAME  feedcore, std_map_mutex or btree_per_user
//
// --timelines/--per_timeline replace the shapes with one custom shape.

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/baselines.h"
#include "bench/child_process.h"
#include "feedcore/feedcore.h"

namespace feedcore::bench {
namespace {

constexpr Micros kStartTime = 1'700'000'000'000'000;
constexpr size_t kCap = 1000;

struct Shape {
  std::string name;
  size_t timelines;
  size_t per_timeline;
  size_t entries() const { return timelines * per_timeline; }
};

// What a child sends back to the parent through a pipe.
struct Measurement {
  bool ok = false;
  int64_t rss_before = 0;
  int64_t rss_after = 0;
  int64_t hwm_after = 0;
  double fill_seconds = 0;
  // feedcore only; 0 for the baselines.
  uint64_t stats_entries = 0;
  uint64_t stats_timelines = 0;
  uint64_t bytes_used = 0;
  uint64_t bytes_reserved = 0;
};

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size_pages = 0;
  int64_t resident_pages = 0;
  statm >> size_pages >> resident_pages;
  return resident_pages * sysconf(_SC_PAGESIZE);
}

// Peak resident set size (VmHWM) in bytes.
int64_t PeakResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::strtoll(line.c_str() + 6, nullptr, 10) * 1024;
    }
  }
  return 0;
}

EntityId OwnerId(size_t timeline) { return timeline + 1; }

// Inserts shape.entries() entries round-robin through `insert(owner,
// entry)`, which returns false on failure, moving `clock` to each entry's
// timestamp first.
template <typename InsertFn>
bool Fill(const Shape& shape, ManualClock& clock, InsertFn insert) {
  Micros ts = kStartTime;
  for (size_t j = 0; j < shape.per_timeline; ++j) {
    for (size_t t = 0; t < shape.timelines; ++t) {
      clock.Set(ts);
      TimelineEntry entry{.ts = ts,
                          .activity_id = static_cast<ActivityId>(ts),
                          .actor = static_cast<EntityId>(1 + (ts & 1023))};
      ++ts;
      if (!insert(OwnerId(t), entry)) return false;
    }
  }
  return true;
}

template <typename Body>
Measurement MeasureChild(Body body) {
  Measurement m;
  malloc_trim(0);
  m.rss_before = ResidentBytes();
  auto start = std::chrono::steady_clock::now();
  m.ok = body(m);
  m.fill_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return m;
}

Measurement MeasureFeedcore(const Shape& shape) {
  return MeasureChild([&](Measurement& m) {
    EngineOptions options;
    options.max_timeline_length = kCap;
    options.sweep_interval = 0;
    auto clock = std::make_shared<ManualClock>(kStartTime);
    options.clock = clock;
    auto engine = FeedEngine::Create(std::move(options));
    if (!engine.ok()) {
      std::fprintf(stderr, "%s\n", engine.status().ToString().c_str());
      return false;
    }
    InProcessFeedEngine& e = **engine;
    bool ok =
        Fill(shape, *clock, [&](EntityId owner, const TimelineEntry& entry) {
          return e.Insert(owner, entry).ok();
        });
    malloc_trim(0);
    m.rss_after = ResidentBytes();
    m.hwm_after = PeakResidentBytes();
    EngineStats stats = e.Stats().value();
    m.stats_entries = stats.entries;
    m.stats_timelines = stats.timelines;
    m.bytes_used = stats.bytes_used;
    m.bytes_reserved = stats.bytes_reserved;
    return ok && stats.entries == shape.entries();
  });
}

template <typename Baseline>
Measurement MeasureBaseline(const Shape& shape) {
  return MeasureChild([&](Measurement& m) {
    auto clock = std::make_shared<ManualClock>(kStartTime);
    Baseline baseline(BaselineOptions{
        .cap = kCap, .ttl = EngineOptions().default_ttl, .clock = clock});
    bool ok =
        Fill(shape, *clock, [&](EntityId owner, const TimelineEntry& entry) {
          return baseline.Insert(owner, entry) == BaselinePut::kInserted;
        });
    malloc_trim(0);
    m.rss_after = ResidentBytes();
    m.hwm_after = PeakResidentBytes();
    return ok;
  });
}

Measurement Measure(std::string_view system, const Shape& shape) {
  if (system == "feedcore") return MeasureFeedcore(shape);
  if (system == "std_map_mutex") return MeasureBaseline<StdMapBaseline>(shape);
  if (system == "btree_per_user") return MeasureBaseline<BtreeBaseline>(shape);
  return Measurement{};
}

// Runs Measure(system, shape) in a child process.
Measurement MeasureInChild(std::string_view system, const Shape& shape) {
  return RunInChild<Measurement>([&] { return Measure(system, shape); });
}

bool ParseFlag(std::string_view arg, std::string_view name,
               std::string* value) {
  std::string prefix = "--" + std::string(name) + "=";
  if (arg.substr(0, prefix.size()) != prefix) return false;
  *value = std::string(arg.substr(prefix.size()));
  return true;
}

int Usage() {
  std::fprintf(stderr,
               "usage: feedcore_memory [--shape=deep|wide|all] "
               "[--system=feedcore|std_map_mutex|btree_per_user|all] "
               "[--timelines=N --per_timeline=M]\n");
  return 2;
}

int Main(int argc, char** argv) {
  std::string shape_flag = "all";
  std::string system_flag = "all";
  std::string timelines_flag;
  std::string per_timeline_flag;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (!ParseFlag(arg, "shape", &shape_flag) &&
        !ParseFlag(arg, "system", &system_flag) &&
        !ParseFlag(arg, "timelines", &timelines_flag) &&
        !ParseFlag(arg, "per_timeline", &per_timeline_flag)) {
      return Usage();
    }
  }

  std::vector<Shape> shapes;
  if (!timelines_flag.empty() || !per_timeline_flag.empty()) {
    size_t timelines = std::strtoull(timelines_flag.c_str(), nullptr, 10);
    size_t per_timeline = std::strtoull(per_timeline_flag.c_str(), nullptr, 10);
    if (timelines == 0 || per_timeline == 0 || per_timeline > kCap) {
      std::fprintf(stderr,
                   "--timelines and --per_timeline must both be set; "
                   "1 <= per_timeline <= %zu\n",
                   kCap);
      return 2;
    }
    shapes.push_back({"custom", timelines, per_timeline});
  } else {
    if (shape_flag == "deep" || shape_flag == "all") {
      shapes.push_back({"deep", 10'000, 1'000});
    }
    if (shape_flag == "wide" || shape_flag == "all") {
      shapes.push_back({"wide", 1'000'000, 10});
    }
    if (shapes.empty()) return Usage();
  }

  std::vector<std::string> systems;
  for (const char* name : {"feedcore", "std_map_mutex", "btree_per_user"}) {
    if (system_flag == "all" || system_flag == name) systems.push_back(name);
  }
  if (systems.empty()) return Usage();

  std::printf("%-6s %-15s %10s %8s %11s %12s %10s %13s %15s %8s\n", "shape",
              "system", "timelines", "per_tl", "entries", "rss_delta_MB",
              "rss_B/ent", "peak_rss_B/ent", "used/rsvd B/ent", "fill_s");
  bool all_ok = true;
  for (const Shape& shape : shapes) {
    for (const std::string& system : systems) {
      Measurement m = MeasureInChild(system, shape);
      if (!m.ok) {
        std::printf("%-6s %-15s FAILED\n", shape.name.c_str(), system.c_str());
        all_ok = false;
        continue;
      }
      const double n = static_cast<double>(shape.entries());
      const double delta = static_cast<double>(m.rss_after - m.rss_before);
      const double peak = static_cast<double>(m.hwm_after - m.rss_before);
      char stats[32] = "-";
      if (system == "feedcore") {
        std::snprintf(stats, sizeof(stats), "%.1f / %.1f",
                      static_cast<double>(m.bytes_used) / n,
                      static_cast<double>(m.bytes_reserved) / n);
      }
      std::printf(
          "%-6s %-15s %10zu %8zu %11zu %12.1f %10.1f %13.1f %15s %8.2f\n",
          shape.name.c_str(), system.c_str(), shape.timelines,
          shape.per_timeline, shape.entries(), delta / (1 << 20), delta / n,
          peak / n, stats, m.fill_seconds);
      std::fflush(stdout);
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace feedcore::bench

int main(int argc, char** argv) { return feedcore::bench::Main(argc, argv); }
