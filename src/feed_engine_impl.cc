#include "feed_engine_impl.h"

#include <xxhash.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cursor.h"
#include "engine_options.h"

namespace feedcore {

absl::StatusOr<std::unique_ptr<FeedEngine>> FeedEngine::Create(
    EngineOptions options) {
  absl::StatusOr<EngineOptions> resolved =
      internal::ResolveEngineOptions(std::move(options));
  if (!resolved.ok()) return resolved.status();
  return std::unique_ptr<FeedEngine>(
      new internal::FeedEngineImpl(*std::move(resolved)));
}

namespace internal {
namespace {

// Fixed so that runs are reproducible; heights only affect speed.
constexpr uint64_t kHeightSeed = 0x9e3779b97f4a7c15ULL;

// Approximate bytes one timeline costs in its shard's hash map: the node
// (key, record) plus its slot pointer and control byte.
template <typename Map>
constexpr size_t TimelineOverheadBytes() {
  return sizeof(typename Map::value_type) + sizeof(void*) + 1;
}
// A btree_set node is at least half full.
constexpr size_t kExpiryIndexBytesPerTimeline =
    2 * sizeof(std::pair<Micros, EntityId>);

// The key just older than `key`, if any.
std::optional<TimelineKey> OlderKey(TimelineKey key) {
  if (key.activity_id > 0) return TimelineKey{key.ts, key.activity_id - 1};
  if (key.ts > 0) {
    return TimelineKey{key.ts - 1, std::numeric_limits<ActivityId>::max()};
  }
  return std::nullopt;
}

// The key just newer than `key`, if any.
std::optional<TimelineKey> NewerKey(TimelineKey key) {
  if (key.activity_id < std::numeric_limits<ActivityId>::max()) {
    return TimelineKey{key.ts, key.activity_id + 1};
  }
  if (key.ts < std::numeric_limits<Micros>::max()) {
    return TimelineKey{key.ts + 1, 0};
  }
  return std::nullopt;
}

void AddPut(const Timeline::PutResult& put, InsertResult* result) {
  switch (put.outcome) {
    case Timeline::PutOutcome::kInserted:
      ++result->inserted;
      break;
    case Timeline::PutOutcome::kReplaced:
      ++result->replaced;
      break;
    case Timeline::PutOutcome::kRejectedByCap:
      ++result->rejected_by_cap;
      break;
  }
  result->trimmed += put.trimmed;
}

}  // namespace

FeedEngineImpl::FeedEngineImpl(EngineOptions options)
    : options_(std::move(options)),
      height_seed_(kHeightSeed),
      shards_(new Shard[options_.shards]) {
  if (options_.sweep_interval > 0) {
    const size_t budget = options_.sweep_budget;
    sweeper_ = std::make_unique<Sweeper>(
        [this, budget] { return EvictExpired(budget) == budget; },
        std::chrono::microseconds(options_.sweep_interval));
  }
}

FeedEngineImpl::~FeedEngineImpl() {
  sweeper_.reset();  // no pass may run while the shards are destroyed
}

size_t FeedEngineImpl::ShardIndex(EntityId owner) const {
  return XXH3_64bits(&owner, sizeof(owner)) % options_.shards;
}

void FeedEngineImpl::PutLocked(Shard& shard, EntityId owner,
                               const StoredEntry& entry, InsertResult* result) {
  auto it =
      shard.timelines.try_emplace(owner, &shard.arena, height_seed_).first;
  Timeline& timeline = it->second.timeline;
  const size_t index_bytes_before = timeline.index_bytes();
  const size_t size_before = timeline.size();
  const Timeline::PutResult put =
      timeline.Put(entry, options_.max_timeline_length);
  AddPut(put, result);
  shard.entries += timeline.size();
  shard.entries -= size_before;
  shard.trimmed += put.trimmed;
  AfterChangeLocked(shard, it, index_bytes_before);
}

void FeedEngineImpl::AfterChangeLocked(
    Shard& shard, absl::node_hash_map<EntityId, TimelineRecord>::iterator it,
    size_t index_bytes_before) {
  TimelineRecord& record = it->second;
  shard.index_bytes += record.timeline.index_bytes();
  shard.index_bytes -= index_bytes_before;
  const Micros min_expiry = record.timeline.MinExpiry();
  if (min_expiry != record.indexed_expiry) {
    if (record.indexed_expiry != std::numeric_limits<Micros>::max()) {
      shard.expiry.erase({record.indexed_expiry, it->first});
    }
    if (min_expiry != std::numeric_limits<Micros>::max()) {
      shard.expiry.insert({min_expiry, it->first});
    }
    record.indexed_expiry = min_expiry;
  }
  if (record.timeline.empty()) shard.timelines.erase(it);
}

absl::StatusOr<InsertResult> FeedEngineImpl::Insert(
    EntityId owner, const TimelineEntry& entry, const InsertOptions& options) {
  return InsertFanout(absl::MakeConstSpan(&owner, 1), entry, options);
}

absl::StatusOr<InsertResult> FeedEngineImpl::InsertFanout(
    absl::Span<const EntityId> owners, const TimelineEntry& entry,
    const InsertOptions& options) {
  if (absl::Status status = ValidateEntry(entry); !status.ok()) return status;
  absl::StatusOr<Micros> expires_at =
      ResolveExpiry(options, options_.default_ttl, options_.clock->Now());
  if (!expires_at.ok()) return expires_at.status();
  const StoredEntry stored{entry.ts, entry.activity_id, entry.actor,
                           *expires_at};
  InsertResult result;
  if (owners.size() == 1) {
    Shard& shard = shards_[ShardIndex(owners[0])];
    WriterLock lock(&shard.mu);
    PutLocked(shard, owners[0], stored, &result);
    return result;
  }
  // Group by shard (a counting sort) so each shard's lock is taken once.
  const size_t shard_count = options_.shards;
  std::vector<uint32_t> shard_of(owners.size());
  std::vector<size_t> start(shard_count + 1, 0);
  for (size_t i = 0; i < owners.size(); ++i) {
    shard_of[i] = static_cast<uint32_t>(ShardIndex(owners[i]));
    ++start[shard_of[i] + 1];
  }
  for (size_t s = 0; s < shard_count; ++s) start[s + 1] += start[s];
  std::vector<EntityId> grouped(owners.size());
  {
    std::vector<size_t> fill(start.begin(), start.end() - 1);
    for (size_t i = 0; i < owners.size(); ++i) {
      grouped[fill[shard_of[i]]++] = owners[i];
    }
  }
  for (size_t s = 0; s < shard_count; ++s) {
    if (start[s] == start[s + 1]) continue;
    Shard& shard = shards_[s];
    WriterLock lock(&shard.mu);
    for (size_t i = start[s]; i < start[s + 1]; ++i) {
      PutLocked(shard, grouped[i], stored, &result);
    }
  }
  return result;
}

absl::StatusOr<InsertResult> FeedEngineImpl::InsertBatch(
    absl::Span<const OwnedEntry> entries, const InsertOptions& options) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (absl::Status status = ValidateEntry(entries[i].entry); !status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("entries[", i, "]: ", status.message()));
    }
  }
  absl::StatusOr<Micros> expires_at =
      ResolveExpiry(options, options_.default_ttl, options_.clock->Now());
  if (!expires_at.ok()) return expires_at.status();
  const size_t shard_count = options_.shards;
  std::vector<uint32_t> shard_of(entries.size());
  std::vector<size_t> start(shard_count + 1, 0);
  for (size_t i = 0; i < entries.size(); ++i) {
    shard_of[i] = static_cast<uint32_t>(ShardIndex(entries[i].owner));
    ++start[shard_of[i] + 1];
  }
  for (size_t s = 0; s < shard_count; ++s) start[s + 1] += start[s];
  // Positions into `entries`, grouped by shard, in call order within each.
  std::vector<uint32_t> grouped(entries.size());
  {
    std::vector<size_t> fill(start.begin(), start.end() - 1);
    for (size_t i = 0; i < entries.size(); ++i) {
      grouped[fill[shard_of[i]]++] = static_cast<uint32_t>(i);
    }
  }
  InsertResult result;
  for (size_t s = 0; s < shard_count; ++s) {
    if (start[s] == start[s + 1]) continue;
    Shard& shard = shards_[s];
    WriterLock lock(&shard.mu);
    for (size_t g = start[s]; g < start[s + 1]; ++g) {
      const OwnedEntry& item = entries[grouped[g]];
      const StoredEntry stored{item.entry.ts, item.entry.activity_id,
                               item.entry.actor, *expires_at};
      PutLocked(shard, item.owner, stored, &result);
    }
  }
  return result;
}

absl::Status FeedEngineImpl::Remove(EntityId owner, Micros ts,
                                    ActivityId activity_id) {
  if (ts < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("timestamp is ", ts, "; it must be >= 0"));
  }
  Shard& shard = shards_[ShardIndex(owner)];
  WriterLock lock(&shard.mu);
  auto it = shard.timelines.find(owner);
  const size_t index_bytes_before =
      it == shard.timelines.end() ? 0 : it->second.timeline.index_bytes();
  if (it == shard.timelines.end() ||
      !it->second.timeline.Remove({ts, activity_id})) {
    return absl::NotFoundError(absl::StrCat("timeline ", owner,
                                            " has no entry with ts ", ts,
                                            " and activity id ", activity_id));
  }
  --shard.entries;
  AfterChangeLocked(shard, it, index_bytes_before);
  return absl::OkStatus();
}

absl::StatusOr<Page> FeedEngineImpl::ReadTimeline(
    EntityId owner, const ReadOptions& options) const {
  if (absl::Status status = ValidateRead(options, options_.max_page_size);
      !status.ok()) {
    return status;
  }
  TimelineKey lo = TimelineKey::Min();
  TimelineKey hi = TimelineKey::Max();
  if (options.min_ts.has_value() && *options.min_ts > 0) {
    lo = {*options.min_ts, 0};
  }
  // A window entirely below zero holds nothing (timestamps are >= 0), but
  // the cursor is still checked first: a bad cursor is an error whatever
  // the window.
  const bool window_below_zero =
      options.max_ts.has_value() && *options.max_ts < 0;
  if (options.max_ts.has_value() && !window_below_zero) {
    hi = {*options.max_ts, std::numeric_limits<ActivityId>::max()};
  }
  if (!options.cursor.empty()) {
    absl::StatusOr<TimelineCursor> cursor =
        DecodeTimelineCursor(options.cursor);
    if (!cursor.ok()) return cursor.status();
    if (cursor->owner != owner) {
      return absl::InvalidArgumentError(
          absl::StrCat("cursor belongs to timeline ", cursor->owner,
                       ", not to timeline ", owner));
    }
    if (cursor->order != options.order) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cursor was made for ",
          cursor->order == ReadOrder::kNewestFirst ? "newest" : "oldest",
          "-first reading; keep the order of the first page"));
    }
    const TimelineKey after{cursor->ts, cursor->activity_id};
    if (options.order == ReadOrder::kNewestFirst) {
      std::optional<TimelineKey> older = OlderKey(after);
      if (!older.has_value()) return Page{};
      hi = std::min(hi, *older);
    } else {
      std::optional<TimelineKey> newer = NewerKey(after);
      if (!newer.has_value()) return Page{};
      lo = std::max(lo, *newer);
    }
  }
  Page page;
  if (window_below_zero || lo > hi) return page;
  const Micros now = options_.clock->Now();
  page.entries.reserve(options.limit + 1);
  {
    const Shard& shard = shards_[ShardIndex(owner)];
    ReaderLock lock(&shard.mu);
    auto it = shard.timelines.find(owner);
    if (it == shard.timelines.end()) return page;
    // One more than asked tells whether another page follows.
    it->second.timeline.Collect(options.order, lo, hi, now, options.limit + 1,
                                &page.entries);
  }
  if (page.entries.size() > options.limit) {
    page.entries.pop_back();
    const StoredEntry& last = page.entries.back();
    page.next_cursor =
        EncodeTimelineCursor({owner, options.order, last.ts, last.activity_id});
  }
  return page;
}

size_t FeedEngineImpl::EvictShard(Shard& shard, Micros now, size_t budget) {
  WriterLock lock(&shard.mu);
  size_t evicted = 0;
  while (evicted < budget && !shard.expiry.empty() &&
         shard.expiry.begin()->first <= now) {
    const EntityId owner = shard.expiry.begin()->second;
    auto it = shard.timelines.find(owner);
    Timeline& timeline = it->second.timeline;
    const size_t index_bytes_before = timeline.index_bytes();
    const size_t n = timeline.EvictExpired(now, budget - evicted);
    evicted += n;
    shard.entries -= n;
    AfterChangeLocked(shard, it, index_bytes_before);
    if (n == 0) break;  // cannot happen while MinExpiry is exact
  }
  shard.evicted += evicted;
  shard.arena.ReleaseSpareBlocks();
  return evicted;
}

size_t FeedEngineImpl::EvictExpired(size_t budget) {
  const Micros now = options_.clock->Now();
  const size_t shard_count = options_.shards;
  const size_t first =
      next_eviction_shard_.fetch_add(1, std::memory_order_relaxed) %
      shard_count;
  size_t evicted = 0;
  for (size_t k = 0; k < shard_count && evicted < budget; ++k) {
    evicted +=
        EvictShard(shards_[(first + k) % shard_count], now, budget - evicted);
  }
  return evicted;
}

EngineStats FeedEngineImpl::Stats() const {
  using Map = absl::node_hash_map<EntityId, TimelineRecord>;
  EngineStats stats;
  stats.shards.resize(options_.shards);
  for (size_t s = 0; s < options_.shards; ++s) {
    const Shard& shard = shards_[s];
    ReaderLock lock(&shard.mu);
    ShardStats& out = stats.shards[s];
    out.timelines = shard.timelines.size();
    out.entries = shard.entries;
    const size_t structures =
        shard.timelines.size() *
            (TimelineOverheadBytes<Map>() + kExpiryIndexBytesPerTimeline) +
        shard.index_bytes;
    out.bytes_used = shard.arena.bytes_used() + structures;
    out.bytes_reserved = shard.arena.bytes_reserved() + structures +
                         shard.timelines.bucket_count() * sizeof(void*);
    stats.timelines += out.timelines;
    stats.entries += out.entries;
    stats.bytes_used += out.bytes_used;
    stats.bytes_reserved += out.bytes_reserved;
    stats.evicted += shard.evicted;
    stats.trimmed += shard.trimmed;
  }
  return stats;
}

}  // namespace internal
}  // namespace feedcore
