// Baselines that feedcore's benchmarks compare against.
//
// Each baseline is the container a server would reach for first to hold
// per-user timelines in memory, doing the same work as `FeedEngine`:
//
//   * the same entry payload: key `(ts, activity_id)`, `actor` and
//     `expires_at`, with `expires_at = clock.Now() + ttl` at insert time;
//   * idempotent puts: an existing key is overwritten, never duplicated;
//   * the same cap: at most `cap` entries per timeline; inserting into a full
//     timeline drops the oldest entry, and an entry older than everything in
//     a full timeline is rejected;
//   * the same page read: seek to the entry after the cursor key, copy up to
//     `limit` unexpired entries newest-first into a fresh vector, and produce
//     the position of the next page (empty at the end).
//
// `StdMapBaseline` keeps `std::map<owner, std::map<key, value>>`;
// `BtreeBaseline` keeps `absl::flat_hash_map<owner, absl::btree_map<key,
// value>>`. The inner maps order keys newest-first so a page is a forward
// walk, as in feedcore's skiplist.
//
// Thread safety
// -------------
// Every method may be called from any number of threads: one `std::mutex`
// guards the whole container, as a program without lock sharding would do.
#ifndef FEEDCORE_BENCH_BASELINES_H_
#define FEEDCORE_BENCH_BASELINES_H_

#include <compare>
#include <cstddef>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "feedcore/clock.h"
#include "feedcore/types.h"

namespace feedcore::bench {

// A timeline key. Greater means newer.
struct BaselineKey {
  Micros ts = 0;
  ActivityId activity_id = 0;

  friend auto operator<=>(const BaselineKey&, const BaselineKey&) = default;
};

struct BaselineValue {
  EntityId actor = 0;
  Micros expires_at = 0;
};

struct BaselineOptions {
  // Entries kept per timeline; the oldest are dropped beyond it.
  size_t cap = std::numeric_limits<size_t>::max();
  // Time-to-live given to every inserted entry.
  Micros ttl = 30 * kMicrosPerDay;
  // Source of time for expiry. Must not be null.
  std::shared_ptr<Clock> clock;
};

// What an insert did, in the terms of `feedcore::InsertResult`.
enum class BaselinePut {
  kInserted,
  kReplaced,
  kRejectedByCap,
};

// One page: entries newest-first and, when more entries follow, the key of
// the last one returned (the position to read the next page after).
struct BaselinePage {
  std::vector<StoredEntry> entries;
  std::optional<BaselineKey> next;
};

namespace internal {

// Shared logic of both baselines over any ordered map type `Inner` whose
// iteration order is newest-first (`std::greater<BaselineKey>`).
template <typename Inner>
BaselinePut PutCapped(Inner& timeline, const TimelineEntry& entry,
                      Micros expires_at, size_t cap) {
  const BaselineKey key{entry.ts, entry.activity_id};
  if (timeline.size() >= cap && !timeline.empty()) {
    // The last element in newest-first order is the oldest.
    const BaselineKey& oldest = std::prev(timeline.end())->first;
    if (key < oldest) return BaselinePut::kRejectedByCap;
  }
  auto [it, inserted] =
      timeline.try_emplace(key, BaselineValue{entry.actor, expires_at});
  if (!inserted) {
    it->second = BaselineValue{entry.actor, expires_at};
    return BaselinePut::kReplaced;
  }
  if (timeline.size() > cap) timeline.erase(std::prev(timeline.end()));
  return BaselinePut::kInserted;
}

template <typename Inner>
BaselinePage ReadAfter(const Inner& timeline,
                       const std::optional<BaselineKey>& after, size_t limit,
                       Micros now) {
  BaselinePage page;
  page.entries.reserve(limit);
  // Newest-first order: the entries after the cursor are the keys that
  // compare greater under std::greater, i.e. older ones.
  auto it = after.has_value() ? timeline.upper_bound(*after) : timeline.begin();
  for (; it != timeline.end() && page.entries.size() < limit; ++it) {
    if (it->second.expires_at <= now) continue;
    StoredEntry& out = page.entries.emplace_back();
    out.ts = it->first.ts;
    out.activity_id = it->first.activity_id;
    out.actor = it->second.actor;
    out.expires_at = it->second.expires_at;
  }
  if (it != timeline.end() && !page.entries.empty()) {
    const StoredEntry& last = page.entries.back();
    page.next = BaselineKey{last.ts, last.activity_id};
  }
  return page;
}

}  // namespace internal

// `std::map` per owner inside a `std::map` of owners, under one mutex.
class StdMapBaseline {
 public:
  explicit StdMapBaseline(BaselineOptions options)
      : options_(std::move(options)) {}
  StdMapBaseline(const StdMapBaseline&) = delete;
  StdMapBaseline& operator=(const StdMapBaseline&) = delete;

  BaselinePut Insert(EntityId owner, const TimelineEntry& entry) {
    const Micros expires_at = options_.clock->Now() + options_.ttl;
    std::lock_guard<std::mutex> lock(mu_);
    return internal::PutCapped(timelines_[owner], entry, expires_at,
                               options_.cap);
  }

  BaselinePage ReadPage(EntityId owner, const std::optional<BaselineKey>& after,
                        size_t limit) const {
    const Micros now = options_.clock->Now();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = timelines_.find(owner);
    if (it == timelines_.end()) return {};
    return internal::ReadAfter(it->second, after, limit, now);
  }

  // Every key of `owner`'s timeline, newest first.
  std::vector<BaselineKey> Keys(EntityId owner) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<BaselineKey> keys;
    auto it = timelines_.find(owner);
    if (it == timelines_.end()) return keys;
    for (const auto& [key, value] : it->second) keys.push_back(key);
    return keys;
  }

 private:
  using Timeline =
      std::map<BaselineKey, BaselineValue, std::greater<BaselineKey>>;

  const BaselineOptions options_;
  mutable std::mutex mu_;
  std::map<EntityId, Timeline> timelines_;  // guarded by mu_
};

// `absl::btree_map` per owner inside an `absl::flat_hash_map` of owners,
// under one mutex.
class BtreeBaseline {
 public:
  explicit BtreeBaseline(BaselineOptions options)
      : options_(std::move(options)) {}
  BtreeBaseline(const BtreeBaseline&) = delete;
  BtreeBaseline& operator=(const BtreeBaseline&) = delete;

  BaselinePut Insert(EntityId owner, const TimelineEntry& entry) {
    const Micros expires_at = options_.clock->Now() + options_.ttl;
    std::lock_guard<std::mutex> lock(mu_);
    return internal::PutCapped(timelines_[owner], entry, expires_at,
                               options_.cap);
  }

  BaselinePage ReadPage(EntityId owner, const std::optional<BaselineKey>& after,
                        size_t limit) const {
    const Micros now = options_.clock->Now();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = timelines_.find(owner);
    if (it == timelines_.end()) return {};
    return internal::ReadAfter(it->second, after, limit, now);
  }

  // Every key of `owner`'s timeline, newest first.
  std::vector<BaselineKey> Keys(EntityId owner) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<BaselineKey> keys;
    auto it = timelines_.find(owner);
    if (it == timelines_.end()) return keys;
    for (const auto& [key, value] : it->second) keys.push_back(key);
    return keys;
  }

 private:
  using Timeline =
      absl::btree_map<BaselineKey, BaselineValue, std::greater<BaselineKey>>;

  const BaselineOptions options_;
  mutable std::mutex mu_;
  absl::flat_hash_map<EntityId, Timeline> timelines_;  // guarded by mu_
};

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_BASELINES_H_
