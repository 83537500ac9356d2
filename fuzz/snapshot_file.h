// What the snapshot fuzz target and its seed writer share: the options a
// fuzzed snapshot is loaded with, a scratch file to load it from, and
// resealing, which recomputes the header's and every section's checksum so
// that mutated bytes reach the parsing behind the checksums.
//
// The layout resealing walks is the one src/snapshot/snapshot.cc documents:
//   header   "FEEDSNAP" | u32 version | u32 sections | u64 flags
//            | u64 XXH3 of the 24 bytes before
//   section  u32 type | u32 index | u64 length | u64 XXH3 of payload
//            | payload
// with every XXH3 seeded with kSnapshotChecksumSeed.
#ifndef FEEDCORE_FUZZ_SNAPSHOT_FILE_H_
#define FEEDCORE_FUZZ_SNAPSHOT_FILE_H_

#include <unistd.h>
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "feedcore/clock.h"
#include "feedcore/options.h"
#include "feedcore/types.h"

namespace feedcore::fuzz {

inline constexpr uint64_t kSnapshotChecksumSeed = 0x66656564736e6170ULL;
inline constexpr size_t kSnapshotMaxTimelineLength = 16;
inline constexpr size_t kSnapshotWorldTimelineLength = 32;
// The time of the clock both sides use, so that the seeds' entries are
// visible when loaded, not expired.
inline constexpr Micros kSnapshotClockTime = 1'000'000;

// The options both the seeds are saved with and fuzzed files are loaded
// with (the loader requires the two lengths to match). A manual clock, no
// threads.
inline EngineOptions SnapshotEngineOptions() {
  EngineOptions options;
  options.clock = std::make_shared<ManualClock>(kSnapshotClockTime);
  options.shards = 0;  // the snapshot's
  options.max_timeline_length = kSnapshotMaxTimelineLength;
  options.world_timeline_length = kSnapshotWorldTimelineLength;
  options.sweep_interval = 0;
  options.fanout_threads = 0;
  return options;
}

// A file of this process in a memory-backed directory when there is one
// (every fuzz run writes it thousands of times a second).
inline std::string ScratchSnapshotPath(const char* name) {
  std::filesystem::path dir = "/dev/shm";
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error) ||
      ::access(dir.c_str(), W_OK) != 0) {
    dir = std::filesystem::temp_directory_path();
  }
  return (dir / ("feedcore-fuzz-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

inline uint64_t LoadU64(const std::string& bytes, size_t at) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) {
    value = (value << 8) | static_cast<uint8_t>(bytes[at + i]);
  }
  return value;
}

inline void StoreU64(std::string& bytes, size_t at, uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    bytes[at + i] = static_cast<char>(value >> (8 * i));
  }
}

// Recomputes every checksum that lies inside `bytes`; stops at the first
// section whose length runs past the end.
inline void ResealSnapshot(std::string& bytes) {
  constexpr size_t kHeader = 32, kSectionHeader = 24;
  if (bytes.size() < kHeader) return;
  StoreU64(bytes, 24,
           XXH3_64bits_withSeed(bytes.data(), 24, kSnapshotChecksumSeed));
  for (size_t at = kHeader; bytes.size() - at >= kSectionHeader;) {
    const uint64_t length = LoadU64(bytes, at + 8);
    const size_t payload = at + kSectionHeader;
    if (length > bytes.size() - payload) return;
    StoreU64(bytes, at + 16,
             XXH3_64bits_withSeed(bytes.data() + payload, length,
                                  kSnapshotChecksumSeed));
    at = payload + length;
  }
}

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_SNAPSHOT_FILE_H_
