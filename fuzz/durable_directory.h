// What the durable-store fuzz target and its seed writer share: the options
// a store is opened with, the snapshots a fuzzed directory can hold, the
// calls that make the seeds' stores, and the encoding of a directory in a
// fuzz input.
//
// A fuzz input, after the mode byte of seed_files.h (bit 0: reseal every
// segment, see change_file.h):
//   u8 snapshots   (mod 4) 0 none, 1 the empty store's, 2 the small
//                  store's, 3 both
//   u8 segments    (mod 3) how many log segments follow
//   per segment    u32 first sequence (its name, log-<n>.fclog)
//                  | u32 length (the last segment: ignored, the rest of
//                  the input) | the file's bytes
// The snapshots are not in the input: they are made by real stores when
// the target starts (BaseSnapshots), so that the fuzzer spends its time on
// the log, which recovery reads record by record, rather than on snapshot
// parsing (snapshot_load_fuzzer's business).
#ifndef FEEDCORE_FUZZ_DURABLE_DIRECTORY_H_
#define FEEDCORE_FUZZ_DURABLE_DIRECTORY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "feedcore/clock.h"
#include "feedcore/durable_store.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/options.h"
#include "fuzz_check.h"
#include "snapshot_file.h"

namespace feedcore::fuzz {

// Engine options of every store here: a manual clock (time never moves, so
// what a store writes is the same in every run), no background threads but
// the log's own.
inline EngineOptions DirectoryEngineOptions() {
  EngineOptions options;
  options.clock = std::make_shared<ManualClock>(kSnapshotClockTime);
  options.shards = 2;
  options.max_timeline_length = kSnapshotMaxTimelineLength;
  options.world_timeline_length = kSnapshotWorldTimelineLength;
  options.hybrid_fanout_threshold = 3;
  options.default_ttl = 500;
  options.sweep_interval = 0;
  options.fanout_threads = 0;
  return options;
}

// No compaction and no sync but at close: a fuzz run opens thousands of
// stores a second in a memory-backed directory.
inline DurabilityOptions DirectoryDurability(const std::string& directory) {
  DurabilityOptions options;
  options.directory = directory;
  options.fsync = FsyncPolicy::kNever;
  options.segment_bytes = kMinLogSegmentBytes;
  options.compact_after_bytes = 0;
  return options;
}

inline std::unique_ptr<DurableStore> OpenOrDie(const std::string& directory) {
  absl::StatusOr<std::unique_ptr<DurableStore>> store = DurableStore::Open(
      DirectoryDurability(directory), DirectoryEngineOptions());
  FUZZ_CHECK_DETAIL(
      store.ok(),
      std::fprintf(stderr, "%s\n", store.status().ToString().c_str()));
  return *std::move(store);
}

// The calls the small store's snapshot holds.
inline void SmallWorkload(DurableStore& store) {
  InProcessFeedEngine& engine = store.engine();
  for (EntityId follower = 2; follower <= 5; ++follower) {
    FUZZ_CHECK(engine.Follow(follower, 1).ok());
  }
  for (ActivityId id = 1; id <= 6; ++id) {
    Activity activity;
    activity.id = id;
    activity.actor = 1 + id % 2;
    activity.ts = static_cast<Micros>(10 * id);
    // Appended, not "p" + to_string: GCC 12 misreads that as an overlapping
    // copy (-Wrestrict).
    activity.payload = "p";
    activity.payload += std::to_string(id);
    activity.ttl = id == 3 ? 5 : 0;
    PublishOptions options;
    if (id % 2 == 0) options.notify = {4};
    FUZZ_CHECK(engine.Publish(activity, options).ok());
  }
  FUZZ_CHECK(engine.Retract(5).ok());
  auto board = store.boards().GetOrCreate("season", {.partitions = 2}).value();
  for (MemberId m = 1; m <= 5; ++m) {
    FUZZ_CHECK(board->Set(m, static_cast<int64_t>(m % 3)).ok());
  }
}

// The calls the seeds' log segments hold: every kind of change a store
// logs for these calls, on top of either snapshot.
inline void LoggedWorkload(DurableStore& store) {
  InProcessFeedEngine& engine = store.engine();
  FUZZ_CHECK(engine.Follow(6, 1).ok());
  FUZZ_CHECK(engine.Follow(7, 2).ok());
  for (ActivityId id = 101; id <= 106; ++id) {
    Activity activity;
    activity.id = id;
    activity.actor = 1 + id % 2;
    activity.ts = static_cast<Micros>(id);
    activity.payload = "q";
    activity.payload += std::to_string(id);
    activity.verb = id % 2;
    activity.object = 9;
    PublishOptions options;
    if (id % 3 == 0) options.notify = {6, 7};
    FUZZ_CHECK(engine.Publish(activity, options).ok());
  }
  FUZZ_CHECK(engine.Retract(102).ok());
  FUZZ_CHECK(engine.MarkSeen(6).ok());
  FUZZ_CHECK(engine.MarkAllRead(7).ok());
  FUZZ_CHECK(engine.Unfollow(7, 2).ok());
  auto arena =
      store.boards()
          .GetOrCreate("arena", {.partitions = 2,
                                 .tie_break = TieBreak::kLowerMemberFirst})
          .value();
  FUZZ_CHECK(arena->Set(1, 10).ok());
  FUZZ_CHECK(arena->Increment(2, -3).ok());
  FUZZ_CHECK(arena->Increment(1, 4).ok());
  FUZZ_CHECK(arena->Remove(2).ok());
  auto daily = store.boards().GetOrCreate("daily").value();
  FUZZ_CHECK(daily->Set(3, 1).ok());
  FUZZ_CHECK(daily->Clear().ok());
  FUZZ_CHECK(store.boards().Drop("daily").ok());
}

struct NamedFile {
  std::string name;
  std::string bytes;
};

inline std::string ReadFileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void WriteFileBytes(const std::filesystem::path& path,
                           const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  FUZZ_CHECK(out.good());
}

// The files of `directory` whose names start with `prefix`, by name.
inline std::vector<NamedFile> FilesIn(const std::string& directory,
                                      const std::string& prefix) {
  std::vector<NamedFile> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) {
      files.push_back({name, ReadFileBytes(entry.path())});
    }
  }
  std::sort(
      files.begin(), files.end(),
      [](const NamedFile& a, const NamedFile& b) { return a.name < b.name; });
  return files;
}

// The only snapshot in `directory`.
inline NamedFile OnlySnapshot(const std::string& directory) {
  std::vector<NamedFile> snapshots = FilesIn(directory, "snapshot-");
  FUZZ_CHECK(snapshots.size() == 1);
  return std::move(snapshots.front());
}

// A store that has done SmallWorkload and compacted: its directory holds
// the small snapshot and an empty segment after it.
inline std::unique_ptr<DurableStore> OpenSmallStore(
    const std::string& directory) {
  std::filesystem::remove_all(directory);
  std::unique_ptr<DurableStore> store = OpenOrDie(directory);
  SmallWorkload(*store);
  FUZZ_CHECK(store->Compact().ok());
  return store;
}

struct BaseSnapshots {
  NamedFile empty;  // of a store that never wrote
  NamedFile small;  // of SmallWorkload, compacted
};

// Made by real stores in `scratch` (removed after).
inline BaseSnapshots MakeBaseSnapshots(const std::string& scratch) {
  BaseSnapshots base;
  std::filesystem::remove_all(scratch);
  OpenOrDie(scratch).reset();
  base.empty = OnlySnapshot(scratch);
  OpenSmallStore(scratch).reset();
  base.small = OnlySnapshot(scratch);
  std::filesystem::remove_all(scratch);
  return base;
}

// A directory as fuzz_input encodes it (see the top of this file), without
// the mode byte.
inline std::string EncodeDirectory(uint8_t snapshots,
                                   const std::vector<NamedFile>& segments) {
  std::string out;
  out.push_back(static_cast<char>(snapshots));
  out.push_back(static_cast<char>(segments.size()));
  auto u32 = [&out](uint64_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  };
  for (const NamedFile& segment : segments) {
    // log-<n>.fclog
    const std::string digits =
        segment.name.substr(4, segment.name.size() - 4 - 6);
    u32(std::stoull(digits));
    u32(segment.bytes.size());
    out += segment.bytes;
  }
  return out;
}

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_DURABLE_DIRECTORY_H_
