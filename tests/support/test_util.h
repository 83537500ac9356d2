// Small helpers shared by feedcore's tests: printing of feedcore types in
// doctest's failure messages, engine set-up without a background thread,
// reading a whole timeline, and knobs read from the environment.
#ifndef FEEDCORE_TESTS_TEST_UTIL_H_
#define FEEDCORE_TESTS_TEST_UTIL_H_

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/change_stream.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/types.h"

namespace feedcore {

// Found by argument-dependent lookup, so doctest prints the values of a
// failed comparison instead of "{?}".
inline std::ostream& operator<<(std::ostream& os, const StoredEntry& e) {
  return os << "{ts=" << e.ts << " id=" << e.activity_id << " actor=" << e.actor
            << " exp=" << e.expires_at << "}";
}

inline std::ostream& operator<<(std::ostream& os,
                                const std::vector<StoredEntry>& v) {
  os << "[" << v.size() << ":";
  for (const StoredEntry& e : v) os << " " << e;
  return os << "]";
}

namespace testing {

// The value of environment variable `name` as an unsigned number, or
// `fallback` when it is unset or not a number.
inline uint64_t EnvU64(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 0);
  if (end == nullptr || *end != '\0') return fallback;
  return value;
}

// How many operations a randomized model test runs per configuration:
// FEEDCORE_MODEL_OPS when it is set, otherwise `fallback` scaled by
// FEEDCORE_MODEL_OPS_PERCENT (100 when unset). The sanitizer build runs
// the model tests at a share of their length (make asan): there they look
// for memory errors along the same paths, while the Release build compares
// every operation of the full length with the model.
inline uint64_t ModelOps(uint64_t fallback) {
  const uint64_t ops = EnvU64("FEEDCORE_MODEL_OPS", 0);
  if (ops != 0) return ops;
  const uint64_t percent = EnvU64("FEEDCORE_MODEL_OPS_PERCENT", 100);
  return std::max<uint64_t>(1, fallback * percent / 100);
}

// An engine driven by `clock` with no background sweeper, so that every
// eviction in a test is an explicit call. Fails the test if creation fails.
inline std::unique_ptr<InProcessFeedEngine> NewManualEngine(
    std::shared_ptr<ManualClock> clock, EngineOptions options = {}) {
  options.sweep_interval = 0;
  options.clock = std::move(clock);
  absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> engine =
      FeedEngine::Create(std::move(options));
  REQUIRE_MESSAGE(engine.ok(), engine.status());
  return *std::move(engine);
}

// A change stream with default retention whose record times come from
// `clock`.
inline std::shared_ptr<ChangeStream> NewManualStream(
    std::shared_ptr<ManualClock> clock) {
  ChangeStreamOptions options;
  options.clock = std::move(clock);
  absl::StatusOr<std::shared_ptr<ChangeStream>> stream =
      ChangeStream::Create(options);
  REQUIRE_MESSAGE(stream.ok(), stream.status());
  return *std::move(stream);
}

// Every visible entry of `owner`'s timeline, following cursors to the end.
// `options.cursor` is the starting point (empty: the start).
inline std::vector<StoredEntry> ReadAll(const FeedEngine& engine,
                                        EntityId owner,
                                        ReadOptions options = {}) {
  std::vector<StoredEntry> out;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 1'000'000);
    absl::StatusOr<Page> page = engine.ReadTimeline(owner, options);
    REQUIRE_MESSAGE(page.ok(), page.status());
    out.insert(out.end(), page->entries.begin(), page->entries.end());
    if (page->next_cursor.empty()) break;
    options.cursor = page->next_cursor;
  }
  return out;
}

// The contents that matter when checking that a call changed nothing.
struct StatsDigest {
  size_t timelines, entries, bytes_used, bytes_reserved;
  uint64_t evicted, trimmed;
  friend bool operator==(const StatsDigest&, const StatsDigest&) = default;
};

inline StatsDigest Digest(const EngineStats& s) {
  return {s.timelines,      s.entries, s.bytes_used,
          s.bytes_reserved, s.evicted, s.trimmed};
}

inline std::ostream& operator<<(std::ostream& os, const StatsDigest& d) {
  return os << "{timelines=" << d.timelines << " entries=" << d.entries
            << " used=" << d.bytes_used << " reserved=" << d.bytes_reserved
            << " evicted=" << d.evicted << " trimmed=" << d.trimmed << "}";
}

// Checks that the per-shard figures add up to the totals.
inline void CheckShardSums(const EngineStats& s) {
  size_t timelines = 0, entries = 0, used = 0, reserved = 0;
  for (const ShardStats& shard : s.shards) {
    timelines += shard.timelines;
    entries += shard.entries;
    used += shard.bytes_used;
    reserved += shard.bytes_reserved;
  }
  CHECK(timelines == s.timelines);
  CHECK(entries == s.entries);
  CHECK(used == s.bytes_used);
  CHECK(reserved == s.bytes_reserved);
}

}  // namespace testing
}  // namespace feedcore

#endif  // FEEDCORE_TESTS_TEST_UTIL_H_
