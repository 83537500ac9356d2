// Snapshot save and load speed, and how long writers wait while a snapshot
// is saved.
//
//   feedcore_snapshot_speed [--entries=N] [--per_timeline=N] [--dir=PATH]
//
// Fills an engine with N timeline entries (default 10 million: N /
// per_timeline users with `per_timeline` entries each), then saves a
// snapshot while a writer thread keeps inserting and records the longest
// single insert, and loads the snapshot back into a new engine. Prints MB/s
// and entries/s for both directions.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "feedcore/feedcore.h"

namespace {

using WallClock = std::chrono::steady_clock;

double SecondsSince(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

uint64_t FlagValue(int argc, char** argv, const char* name, uint64_t fallback) {
  const size_t length = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, length) == 0 && argv[i][length] == '=') {
      return std::strtoull(argv[i] + length + 1, nullptr, 10);
    }
  }
  return fallback;
}

std::string FlagText(int argc, char** argv, const char* name,
                     std::string fallback) {
  const size_t length = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, length) == 0 && argv[i][length] == '=') {
      return argv[i] + length + 1;
    }
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace feedcore;
  const uint64_t entries = FlagValue(argc, argv, "--entries", 10'000'000);
  const uint64_t per_timeline = FlagValue(argc, argv, "--per_timeline", 100);
  const std::string dir = FlagText(
      argc, argv, "--dir", std::filesystem::temp_directory_path().string());
  if (entries == 0 || per_timeline == 0 || per_timeline > 1000) {
    std::fprintf(stderr, "--entries must be > 0, --per_timeline 1..1000\n");
    return 2;
  }
  const std::string path =
      dir + "/feedcore-snapshot-speed-" + std::to_string(::getpid());
  EngineOptions options;
  options.sweep_interval = 0;
  options.shards = 16;
  std::unique_ptr<InProcessFeedEngine> engine = FeedEngine::Create(options).value();

  const uint64_t users = (entries + per_timeline - 1) / per_timeline;
  const Micros start = 1'700'000'000'000'000;
  auto fill_start = WallClock::now();
  std::vector<OwnedEntry> batch;
  batch.reserve(100'000);
  uint64_t made = 0;
  for (uint64_t round = 0; round < per_timeline && made < entries; ++round) {
    for (uint64_t user = 1; user <= users && made < entries; ++user) {
      const Micros ts = start + static_cast<Micros>(round);
      batch.push_back({user, {ts, made + 1, user % 977}});
      ++made;
      if (batch.size() == batch.capacity()) {
        engine->InsertBatch(batch).IgnoreError();
        batch.clear();
      }
    }
  }
  engine->InsertBatch(batch).IgnoreError();
  std::printf(
      "filled %llu entries in %llu timelines in %.1f s\n",
      static_cast<unsigned long long>(engine->Stats().value().entries),
      static_cast<unsigned long long>(engine->Stats().value().timelines),
      SecondsSince(fill_start));

  // A writer keeps inserting while the snapshot is saved.
  std::atomic<bool> saving{true};
  std::atomic<int64_t> longest_insert_ns{0};
  std::atomic<uint64_t> inserts{0};
  std::thread writer([&] {
    uint64_t n = 0;
    while (saving.load(std::memory_order_relaxed)) {
      const auto before = WallClock::now();
      engine
          ->Insert(1 + n % users, {start + 1'000'000 + static_cast<Micros>(n),
                                   entries + 1 + n, 5})
          .IgnoreError();
      const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             WallClock::now() - before)
                             .count();
      if (ns > longest_insert_ns.load(std::memory_order_relaxed)) {
        longest_insert_ns.store(ns, std::memory_order_relaxed);
      }
      ++n;
    }
    inserts.store(n);
  });
  const auto save_start = WallClock::now();
  absl::StatusOr<SnapshotInfo> info = SaveSnapshot(*engine, path);
  const double save_seconds = SecondsSince(save_start);
  saving.store(false);
  writer.join();
  if (!info.ok()) {
    std::fprintf(stderr, "save failed: %s\n", info.status().ToString().c_str());
    return 1;
  }
  const double mb = static_cast<double>(info->file_bytes) / 1e6;
  std::printf(
      "save: %.1f MB in %.2f s = %.0f MB/s, %.2f M entries/s "
      "(%zu shards: %.1f ms per shard on average)\n",
      mb, save_seconds, mb / save_seconds,
      static_cast<double>(made) / save_seconds / 1e6, options.shards,
      save_seconds * 1e3 / static_cast<double>(options.shards));
  std::printf(
      "writer during save: %llu inserts, longest single insert %.1f ms\n",
      static_cast<unsigned long long>(inserts.load()),
      static_cast<double>(longest_insert_ns.load()) / 1e6);

  const auto load_start = WallClock::now();
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(path, options);
  const double load_seconds = SecondsSince(load_start);
  std::remove(path.c_str());
  if (!replica.ok()) {
    std::fprintf(stderr, "load failed: %s\n",
                 replica.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "load: %.1f MB in %.2f s = %.0f MB/s, %.2f M entries/s\n", mb,
      load_seconds, mb / load_seconds,
      static_cast<double>((*replica)->engine().Stats().value().entries) /
          load_seconds / 1e6);
  return 0;
}
