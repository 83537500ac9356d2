// FeedEngine: per-entity timelines in memory, sharded by lock.
//
// A timeline is an ordered set of entries keyed by `(ts, activity_id)`, read
// newest-first (or oldest-first) a page at a time with opaque cursors.
// Every entry expires; expired entries are never returned and their memory
// is reclaimed by `EvictExpired` or by a background sweeper. Each timeline
// holds at most `EngineOptions::max_timeline_length` entries; inserting
// beyond that drops the oldest.
//
//   auto engine = feedcore::FeedEngine::Create({}).value();
//   engine->Insert(/*owner=*/42, {.ts = now, .activity_id = 7, .actor = 9});
//   feedcore::ReadOptions read;
//   do {
//     auto page = engine->ReadTimeline(42, read).value();
//     ...use page.entries...
//     read.cursor = page.next_cursor;
//   } while (!read.cursor.empty());
//
// Paging is keyset-based: a cursor names the last key returned, so entries
// inserted while a reader pages never cause a duplicate, and no entry older
// (for newest-first) than the cursor is skipped.
//
// Errors
// ------
// Every call validates all of its arguments before changing anything: a call
// that returns an error has changed nothing. Errors are
// `InvalidArgument` (bad option, malformed or foreign cursor, timestamp
// below zero, expiry in the past) or `NotFound` (removing an absent entry),
// with a message naming the offending argument.
//
// Thread safety
// -------------
// Every method may be called from any number of threads at once. Writes to
// timelines in different shards never contend; reads of one shard share its
// lock. Each call is atomic per shard: a reader sees a batch insert into
// its own timeline either entirely or not at all, but a batch that spans
// shards becomes visible shard by shard. The engine must outlive every call
// in progress; destroying it stops and joins the background sweeper.
#ifndef FEEDCORE_FEED_ENGINE_H_
#define FEEDCORE_FEED_ENGINE_H_

#include <cstddef>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "feedcore/options.h"
#include "feedcore/stats.h"
#include "feedcore/types.h"

namespace feedcore {

// What an insert did. `inserted + replaced + rejected_by_cap` equals the
// number of (owner, entry) pairs in the call.
struct InsertResult {
  size_t inserted = 0;  // new keys stored
  size_t replaced = 0;  // existing keys overwritten (idempotent put)
  // Entries older than a full timeline's oldest: dropped at once, as if
  // inserted and immediately trimmed.
  size_t rejected_by_cap = 0;
  size_t trimmed = 0;  // older entries dropped to make room
};

class FeedEngine {
 public:
  // Creates an engine. Fails with `InvalidArgument` naming the option when
  // one is out of range. Starts the background sweeper unless
  // `options.sweep_interval` is 0.
  static absl::StatusOr<std::unique_ptr<FeedEngine>> Create(
      EngineOptions options);

  virtual ~FeedEngine() = default;
  FeedEngine(const FeedEngine&) = delete;
  FeedEngine& operator=(const FeedEngine&) = delete;

  // Puts `entry` into `owner`'s timeline. An existing entry with the same
  // `(ts, activity_id)` is overwritten (actor and expiry), never duplicated.
  // O(1) expected when the entry is newer than everything in a timeline
  // below its cap, O(log n) otherwise.
  virtual absl::StatusOr<InsertResult> Insert(
      EntityId owner, const TimelineEntry& entry,
      const InsertOptions& options = {}) = 0;

  // Puts the same `entry` into every timeline in `owners` (fan-out). Takes
  // each shard's lock once for all the owners that live there. Duplicate
  // owners are harmless.
  virtual absl::StatusOr<InsertResult> InsertFanout(
      absl::Span<const EntityId> owners, const TimelineEntry& entry,
      const InsertOptions& options = {}) = 0;

  // Puts many (owner, entry) pairs, taking each shard's lock once per call.
  // `options` applies to every pair. Pairs for the same owner are applied
  // in the order given.
  virtual absl::StatusOr<InsertResult> InsertBatch(
      absl::Span<const OwnedEntry> entries,
      const InsertOptions& options = {}) = 0;

  // Removes the entry with key `(ts, activity_id)` from `owner`'s timeline.
  // `NotFound` if there is no such entry (expired entries that are not yet
  // reclaimed are still found and removed); `InvalidArgument` if ts < 0.
  virtual absl::Status Remove(EntityId owner, Micros ts,
                              ActivityId activity_id) = 0;

  // One page of `owner`'s timeline. An unknown owner reads as empty.
  // `InvalidArgument` for a limit of 0 or above `max_page_size`, an empty
  // or inverted time window, or a cursor that is malformed, was made by
  // another timeline or for the other order.
  virtual absl::StatusOr<Page> ReadTimeline(
      EntityId owner, const ReadOptions& options) const = 0;

  // Reclaims min(budget, expired entries held) expired entries and returns
  // how many it reclaimed; costs time in proportion to that number (plus a
  // logarithmic term per timeline touched), never to the number of stored
  // entries.
  virtual size_t EvictExpired(size_t budget) = 0;

  virtual EngineStats Stats() const = 0;

  // The options the engine runs with, with 0 ("pick for me") values
  // resolved and `clock` set.
  virtual const EngineOptions& options() const = 0;

 protected:
  FeedEngine() = default;
};

}  // namespace feedcore

#endif  // FEEDCORE_FEED_ENGINE_H_
