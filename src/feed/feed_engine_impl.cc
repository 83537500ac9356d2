#include "feed/feed_engine_impl.h"

#include <xxhash.h>

#include <algorithm>
#include <iterator>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "feed/engine_options.h"
#include "timeline/cursor.h"

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

// Approximate bytes one timeline costs in its shard's hash map: the slot
// (key, pointer) and control byte, and the boxed record with the
// allocator's header.
template <typename Map, typename Record>
constexpr size_t TimelineOverheadBytes() {
  return sizeof(typename Map::value_type) + 1 + sizeof(Record) + 16;
}
// A btree_set node is at least half full.
constexpr size_t kExpiryIndexBytesPerTimeline =
    2 * sizeof(std::pair<Micros, TimelineId>);
// A follow edge is one element in the followee's follower set and one in
// the follower's followee set, in btrees at least half full.
constexpr size_t kBytesPerFollowEdge =
    2 * (sizeof(std::pair<uint32_t, EntityId>) + sizeof(EntityId));

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

TimelineKey KeyOf(const StoredEntry& e) { return {e.ts, e.activity_id}; }

// The best `want` entries of several sources, kept sorted in `order`
// without duplicate keys (an entry may be both copied and merged while an
// actor becomes hybrid). Once it holds `want` entries, only keys that would
// still make the page are worth collecting from the next source, so each
// source is read within a narrowing range: merging k sources copies about
// want x ln(k) entries instead of want x k.
class PageMerger {
 public:
  PageMerger(ReadOrder order, size_t want) : order_(order), want_(want) {}

  // Narrows [lo, hi] to the keys that could still enter the page; false if
  // none can.
  bool Narrow(TimelineKey* lo, TimelineKey* hi) const {
    if (best_.size() < want_) return true;
    const TimelineKey worst = KeyOf(best_.back());
    if (order_ == ReadOrder::kNewestFirst) {
      std::optional<TimelineKey> newer = NewerKey(worst);
      if (!newer.has_value()) return false;
      *lo = std::max(*lo, *newer);
    } else {
      std::optional<TimelineKey> older = OlderKey(worst);
      if (!older.has_value()) return false;
      *hi = std::min(*hi, *older);
    }
    return *lo <= *hi;
  }

  // Adds a source's entries, sorted in `order`.
  void Add(std::vector<StoredEntry>&& source) {
    if (source.empty()) return;
    if (best_.empty()) {
      best_ = std::move(source);
      return;
    }
    merged_.clear();
    merged_.reserve(std::min(want_, best_.size() + source.size()));
    auto a = best_.begin();
    auto b = source.begin();
    while (merged_.size() < want_ && (a != best_.end() || b != source.end())) {
      const bool take_a =
          b == source.end() ||
          (a != best_.end() &&
           (order_ == ReadOrder::kNewestFirst ? KeyOf(*a) >= KeyOf(*b)
                                              : KeyOf(*a) <= KeyOf(*b)));
      StoredEntry& next = take_a ? *a++ : *b++;
      if (!merged_.empty() && KeyOf(merged_.back()) == KeyOf(next)) continue;
      merged_.push_back(std::move(next));
    }
    best_.swap(merged_);
  }

  std::vector<StoredEntry> Take() { return std::move(best_); }

 private:
  const ReadOrder order_;
  const size_t want_;
  std::vector<StoredEntry> best_;
  std::vector<StoredEntry> merged_;
};

uint64_t FeedCode(FeedKind kind) { return static_cast<uint64_t>(kind); }

const char* FeedName(FeedKind kind) {
  switch (kind) {
    case FeedKind::kHome:
      return "timeline";
    case FeedKind::kOwn:
      return "own feed";
    case FeedKind::kWorld:
      return "world feed";
    case FeedKind::kNotification:
      return "notification feed";
  }
  return "feed";
}

}  // namespace

// One publish's fan-out: the entry, the followers to reach, and the ticket
// that Unfollow/Retract wait on. The publisher and any workers pull shard
// groups from `next_group`; whoever delivers the last group ends the
// ticket and wakes a publisher waiting for completion.
struct FeedEngineImpl::FanoutJob {
  FanoutJob(FanoutTracker* tracker, EntityId actor)
      : tracker(tracker), actor(actor), ticket(tracker->Begin(actor)) {}
  FanoutTracker* const tracker;
  const EntityId actor;
  const uint64_t ticket;
  StoredEntry entry;
  FollowerSnapshot followers;
  std::atomic<size_t> next_group{0};
  std::atomic<size_t> groups_done{0};

  // Ends the ticket at once when there is nothing to deliver.
  void FinishIfEmpty() {
    if (followers.groups() == 0) tracker->End(actor, ticket);
  }
  void GroupDone() {
    if (groups_done.fetch_add(1, std::memory_order_acq_rel) + 1 ==
        followers.groups()) {
      tracker->End(actor, ticket);
      groups_done.notify_all();
    }
  }
  void WaitAllGroups() {
    size_t done = groups_done.load(std::memory_order_acquire);
    while (done < followers.groups()) {
      groups_done.wait(done, std::memory_order_acquire);
      done = groups_done.load(std::memory_order_acquire);
    }
  }
};

FeedEngineImpl::FeedEngineImpl(EngineOptions options)
    : options_(std::move(options)),
      log_(ChangeStreamAccess::Log(options_.change_stream.get())),
      height_seed_(kHeightSeed),
      shards_(new Shard[options_.shards]),
      store_(options_.shards, log_, static_cast<uint32_t>(options_.shards)) {
  if (options_.fanout_threads > 0) {
    pool_ = std::make_unique<FanoutPool>(options_.fanout_threads,
                                         options_.fanout_queue_capacity);
  }
  if (options_.sweep_interval > 0) {
    const size_t budget = options_.sweep_budget;
    sweeper_ = std::make_unique<Sweeper>(
        [this, budget] { return *EvictExpired(budget) == budget; },
        std::chrono::microseconds(options_.sweep_interval));
  }
}

FeedEngineImpl::~FeedEngineImpl() {
  sweeper_.reset();  // no pass may run while the shards are destroyed
  pool_.reset();     // runs what is still queued, then joins
}

size_t FeedEngineImpl::ShardIndex(EntityId entity) const {
  return XXH3_64bits(&entity, sizeof(entity)) % options_.shards;
}

size_t FeedEngineImpl::CapFor(FeedKind kind) const {
  switch (kind) {
    case FeedKind::kWorld:
      return options_.world_timeline_length;
    case FeedKind::kNotification:
      return options_.notifications.max_length;
    case FeedKind::kHome:
    case FeedKind::kOwn:
      break;
  }
  return options_.max_timeline_length;
}

void FeedEngineImpl::PutLocked(Shard& shard, TimelineId id,
                               const StoredEntry& entry, InsertResult* result) {
  auto [it, created] = shard.timelines.try_emplace(id);
  if (created) {
    it->second = std::make_unique<TimelineRecord>(&shard.arena, height_seed_);
    if (KeepsGroups(id.kind)) {
      // Own and world feeds only hand their group keys on (back-fill,
      // merged reads); home and notification feeds are read as groups.
      it->second->timeline.EnableGroups(id.kind == FeedKind::kHome ||
                                        id.kind == FeedKind::kNotification);
    }
  }
  Timeline& timeline = it->second->timeline;
  const size_t index_bytes_before = timeline.index_bytes();
  const size_t size_before = timeline.size();
  const Timeline::PutResult put = timeline.Put(entry, CapFor(id.kind));
  AddPut(put, result);
  shard.trimmed += put.trimmed;
  AfterChangeLocked(shard, it, index_bytes_before, size_before);
}

void FeedEngineImpl::PutManyLocked(Shard& shard,
                                   absl::Span<const EntityId> owners,
                                   FeedKind kind, const StoredEntry& entry,
                                   InsertResult* result) {
  // Each put misses the cache on the hash slot and on the record; fetch
  // both early so the misses of consecutive owners overlap.
  constexpr size_t kSlotsAhead = 16;
  constexpr size_t kRecordsAhead = 8;
  const size_t n = owners.size();
  for (size_t i = 0; i < std::min(n, kSlotsAhead); ++i) {
    shard.timelines.prefetch(TimelineId{owners[i], kind});
  }
  for (size_t i = 0; i < n; ++i) {
    if (i + kSlotsAhead < n) {
      shard.timelines.prefetch(TimelineId{owners[i + kSlotsAhead], kind});
    }
    if (i + kRecordsAhead < n) {
      auto ahead =
          shard.timelines.find(TimelineId{owners[i + kRecordsAhead], kind});
      if (ahead != shard.timelines.end()) {
        const char* record = reinterpret_cast<const char*>(ahead->second.get());
        for (size_t line = 0; line < sizeof(TimelineRecord); line += 64) {
          __builtin_prefetch(record + line, /*rw=*/1);
        }
      }
    }
    PutLocked(shard, {owners[i], kind}, entry, result);
  }
}

bool FeedEngineImpl::RemoveKeyLocked(Shard& shard, TimelineId id,
                                     TimelineKey key) {
  auto it = shard.timelines.find(id);
  if (it == shard.timelines.end()) return false;
  Timeline& timeline = it->second->timeline;
  const size_t index_bytes_before = timeline.index_bytes();
  const size_t size_before = timeline.size();
  const bool removed = timeline.Remove(key);
  AfterChangeLocked(shard, it, index_bytes_before, size_before);
  return removed;
}

void FeedEngineImpl::AfterChangeLocked(Shard& shard, TimelineMap::iterator it,
                                       size_t index_bytes_before,
                                       size_t size_before) {
  TimelineRecord& record = *it->second;
  shard.entries += record.timeline.size();
  shard.entries -= size_before;
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
  if (record.timeline.empty()) {
    // An empty group index may keep its table's capacity.
    shard.index_bytes -= record.timeline.index_bytes();
    shard.timelines.erase(it);
  }
}

void FeedEngineImpl::LogEntries(const Shard& shard, ChangeKind kind,
                                FeedKind feed,
                                absl::Span<const EntityId> owners,
                                const StoredEntry& entry) const {
  ChangeRecord record;
  record.kind = kind;
  record.domain = DomainOf(shard);
  record.feed = static_cast<FeedType>(feed);
  record.owners.assign(owners.begin(), owners.end());
  record.entry = StoredEntry{entry.ts,
                             entry.activity_id,
                             entry.actor,
                             entry.expires_at,
                             KeptGroup(entry.group, feed),
                             {}};
  log_->Append(std::move(record));
}

void FeedEngineImpl::LogEdge(const Shard& shard, ChangeKind kind,
                             EntityId entity, EntityId other,
                             bool merged) const {
  ChangeRecord record;
  record.kind = kind;
  record.domain = DomainOf(shard);
  record.entity = entity;
  record.other = other;
  record.merged_at_read = merged;
  log_->Append(std::move(record));
}

void FeedEngineImpl::LogMode(const Shard& shard, EntityId actor,
                             ActorMode mode) const {
  ChangeRecord record;
  record.kind = ChangeKind::kActorMode;
  record.domain = DomainOf(shard);
  record.entity = actor;
  record.mode = mode;
  log_->Append(std::move(record));
}

void FeedEngineImpl::MaybeEraseGraphNodeLocked(Shard& shard, EntityId entity) {
  auto it = shard.graph.find(entity);
  if (it != shard.graph.end() && it->second.Unused()) shard.graph.erase(it);
}

// ---------------------------------------------------------------------------
// Low-level inserts

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
  const StoredEntry stored{entry.ts,
                           entry.activity_id,
                           entry.actor,
                           *expires_at,
                           KeptGroup(entry.group, FeedKind::kHome),
                           {}};
  InsertResult result;
  if (owners.size() == 1) {
    Shard& shard = shards_[ShardIndex(owners[0])];
    WriterLock lock(&shard.mu);
    PutLocked(shard, {owners[0], FeedKind::kHome}, stored, &result);
    if (log_ != nullptr) {
      LogEntries(shard, ChangeKind::kTimelinePut, FeedKind::kHome, owners,
                 stored);
    }
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
    const absl::Span<const EntityId> group =
        absl::MakeConstSpan(grouped.data() + start[s], start[s + 1] - start[s]);
    WriterLock lock(&shard.mu);
    PutManyLocked(shard, group, FeedKind::kHome, stored, &result);
    if (log_ != nullptr) {
      LogEntries(shard, ChangeKind::kTimelinePut, FeedKind::kHome, group,
                 stored);
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
      const StoredEntry stored{item.entry.ts,
                               item.entry.activity_id,
                               item.entry.actor,
                               *expires_at,
                               KeptGroup(item.entry.group, FeedKind::kHome),
                               {}};
      PutLocked(shard, {item.owner, FeedKind::kHome}, stored, &result);
      if (log_ != nullptr) {
        LogEntries(shard, ChangeKind::kTimelinePut, FeedKind::kHome,
                   absl::MakeConstSpan(&item.owner, 1), stored);
      }
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
  if (!RemoveKeyLocked(shard, {owner, FeedKind::kHome}, {ts, activity_id})) {
    return absl::NotFoundError(absl::StrCat("timeline ", owner,
                                            " has no entry with ts ", ts,
                                            " and activity id ", activity_id));
  }
  if (log_ != nullptr) {
    LogEntries(shard, ChangeKind::kTimelineRemove, FeedKind::kHome,
               absl::MakeConstSpan(&owner, 1),
               StoredEntry{ts, activity_id, 0, 0, 0, {}});
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Reads

void FeedEngineImpl::CollectOne(size_t shard_index, TimelineId id,
                                ReadOrder order, TimelineKey lo, TimelineKey hi,
                                Micros now, size_t want,
                                std::vector<StoredEntry>* out) const {
  const Shard& shard = shards_[shard_index];
  ReaderLock lock(&shard.mu);
  auto it = shard.timelines.find(id);
  if (it == shard.timelines.end()) return;
  it->second->timeline.Collect(order, lo, hi, now, want, out);
}

void FeedEngineImpl::CollectFeed(FeedKind kind, EntityId owner, ReadOrder order,
                                 TimelineKey lo, TimelineKey hi, Micros now,
                                 size_t want,
                                 std::vector<StoredEntry>* out) const {
  if (kind == FeedKind::kOwn) {
    CollectOne(ShardIndex(owner), {owner, kind}, order, lo, hi, now, want, out);
    return;
  }
  PageMerger merger(order, want);
  auto add_source = [&](size_t shard_index, TimelineId id) {
    TimelineKey source_lo = lo;
    TimelineKey source_hi = hi;
    if (!merger.Narrow(&source_lo, &source_hi)) return;
    std::vector<StoredEntry> entries;
    CollectOne(shard_index, id, order, source_lo, source_hi, now, want,
               &entries);
    merger.Add(std::move(entries));
  };
  if (kind == FeedKind::kWorld) {
    for (size_t s = 0; s < options_.shards; ++s) {
      add_source(s, {0, FeedKind::kWorld});
    }
  } else {
    // The home timeline and the list of merged-at-read followees come from
    // one shard under one lock; each followee's own feed from its shard.
    // Collected straight into `out` (reserved by the caller): with no
    // merged-at-read followee, that is the whole answer.
    std::vector<EntityId> hybrid;
    {
      const Shard& shard = shards_[ShardIndex(owner)];
      ReaderLock lock(&shard.mu);
      auto it = shard.timelines.find({owner, FeedKind::kHome});
      if (it != shard.timelines.end()) {
        it->second->timeline.Collect(order, lo, hi, now, want, out);
      }
      auto node = shard.graph.find(owner);
      if (node != shard.graph.end()) hybrid = node->second.hybrid_following;
    }
    if (hybrid.empty()) return;
    merger.Add(std::move(*out));
    out->clear();
    for (const EntityId actor : hybrid) {
      add_source(ShardIndex(actor), {actor, FeedKind::kOwn});
    }
  }
  *out = merger.Take();
}

absl::StatusOr<Page> FeedEngineImpl::ReadFeed(
    FeedKind kind, EntityId owner, const ReadOptions& options) const {
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
    if (cursor->feed != FeedCode(kind)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cursor belongs to a ", FeedName(static_cast<FeedKind>(cursor->feed)),
          ", not to a ", FeedName(kind)));
    }
    if (cursor->owner != owner) {
      return absl::InvalidArgumentError(
          absl::StrCat("cursor belongs to the ", FeedName(kind), " of ",
                       cursor->owner, ", not of ", owner));
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
  page.entries.reserve(options.limit + 1);
  // One more than asked tells whether another page follows.
  CollectFeed(kind, owner, options.order, lo, hi, options_.clock->Now(),
              options.limit + 1, &page.entries);
  if (page.entries.size() > options.limit) {
    page.entries.pop_back();
    const StoredEntry& last = page.entries.back();
    TimelineCursor next{owner, options.order, last.ts, last.activity_id,
                        static_cast<uint8_t>(FeedCode(kind))};
    page.next_cursor = EncodeTimelineCursor(next);
  }
  if (options.hydrate) store_.Hydrate(&page.entries);
  return page;
}

absl::StatusOr<Page> FeedEngineImpl::ReadTimeline(
    EntityId owner, const ReadOptions& options) const {
  return ReadFeed(FeedKind::kHome, owner, options);
}

absl::StatusOr<Page> FeedEngineImpl::ReadOwn(EntityId actor,
                                             const ReadOptions& options) const {
  return ReadFeed(FeedKind::kOwn, actor, options);
}

absl::StatusOr<Page> FeedEngineImpl::ReadWorld(
    const ReadOptions& options) const {
  return ReadFeed(FeedKind::kWorld, 0, options);
}

absl::StatusOr<size_t> FeedEngineImpl::CountNewer(EntityId reader, Micros ts,
                                                  ActivityId activity_id,
                                                  size_t max_count) const {
  if (ts < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("timestamp is ", ts, "; it must be >= 0"));
  }
  if (max_count == 0 || max_count > options_.max_page_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_count is ", max_count, "; it must be 1..",
                     options_.max_page_size, " (EngineOptions.max_page_size)"));
  }
  std::optional<TimelineKey> lo = NewerKey({ts, activity_id});
  if (!lo.has_value()) return 0;
  std::vector<StoredEntry> newer;
  CollectFeed(FeedKind::kHome, reader, ReadOrder::kOldestFirst, *lo,
              TimelineKey::Max(), options_.clock->Now(), max_count, &newer);
  return newer.size();
}

absl::StatusOr<GroupPage> FeedEngineImpl::ReadGroups(
    EntityId owner, const GroupReadOptions& options) const {
  if (!options_.aggregation.enabled) {
    return absl::FailedPreconditionError(
        "grouped reads need EngineOptions.aggregation.enabled");
  }
  absl::StatusOr<std::optional<TimelineKey>> start =
      GroupReadStart(owner, options, /*notifications=*/false);
  if (!start.ok()) return start.status();
  const std::optional<TimelineKey> after = *start;
  const GroupListLimits limits{options_.aggregation.max_group_actors,
                               options_.aggregation.max_group_entries};
  const Micros now = options_.clock->Now();
  // One more than asked tells whether another page follows.
  const size_t want = options.limit + 1;
  GroupPage page;
  bool indexed = false;
  size_t sources = 1;
  {
    const Shard& shard = shards_[ShardIndex(owner)];
    ReaderLock lock(&shard.mu);
    auto node = shard.graph.find(owner);
    if (node != shard.graph.end()) {
      sources += node->second.hybrid_following.size();
    }
    if (sources == 1) {
      auto it = shard.timelines.find({owner, FeedKind::kHome});
      if (it == shard.timelines.end()) {
        indexed = true;
      } else if (it->second->timeline.MinExpiry() > now) {
        // Nothing in it has expired, so the index's counts are the
        // visible ones.
        it->second->timeline.groups()->Collect(after, want, limits,
                                               &page.groups);
        indexed = true;
      }
    }
  }
  if (!indexed) {
    std::vector<StoredEntry> entries;
    CollectFeed(FeedKind::kHome, owner, ReadOrder::kNewestFirst,
                TimelineKey::Min(), TimelineKey::Max(), now,
                sources * options_.max_timeline_length, &entries);
    page.groups = GroupEntries(entries, after, want, limits);
  }
  FinishGroupPage(owner, options, /*notifications=*/false, &page);
  return page;
}

absl::StatusOr<EntityPage> FeedEngineImpl::ReadList(
    bool followers, EntityId entity, const ListOptions& options) const {
  if (absl::Status status = ValidateList(options, options_.max_page_size);
      !status.ok()) {
    return status;
  }
  std::optional<FollowListCursor> after;
  if (!options.cursor.empty()) {
    absl::StatusOr<FollowListCursor> cursor =
        DecodeFollowListCursor(options.cursor);
    if (!cursor.ok()) return cursor.status();
    if (cursor->followers != followers || cursor->entity != entity) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cursor belongs to the ", cursor->followers ? "follower" : "followee",
          " list of ", cursor->entity, ", not to the ",
          followers ? "follower" : "followee", " list of ", entity));
    }
    after = *cursor;
  }
  EntityPage page;
  const Shard& shard = shards_[ShardIndex(entity)];
  ReaderLock lock(&shard.mu);
  auto node = shard.graph.find(entity);
  if (node == shard.graph.end()) return page;
  bool more = false;
  if (followers) {
    const auto& set = node->second.followers;
    auto it = after.has_value() ? set.upper_bound({after->shard, after->last})
                                : set.begin();
    for (; it != set.end(); ++it) {
      if (page.ids.size() == options.limit) {
        more = true;
        break;
      }
      page.ids.push_back(it->second);
    }
    if (more) {
      page.next_cursor = EncodeFollowListCursor(
          {true, entity, static_cast<uint32_t>(ShardIndex(page.ids.back())),
           page.ids.back()});
    }
  } else {
    const auto& set = node->second.following;
    auto it = after.has_value() ? set.upper_bound(after->last) : set.begin();
    for (; it != set.end(); ++it) {
      if (page.ids.size() == options.limit) {
        more = true;
        break;
      }
      page.ids.push_back(*it);
    }
    if (more) {
      page.next_cursor =
          EncodeFollowListCursor({false, entity, 0, page.ids.back()});
    }
  }
  return page;
}

absl::StatusOr<EntityPage> FeedEngineImpl::Followers(
    EntityId entity, const ListOptions& options) const {
  return ReadList(true, entity, options);
}

absl::StatusOr<EntityPage> FeedEngineImpl::Following(
    EntityId entity, const ListOptions& options) const {
  return ReadList(false, entity, options);
}

absl::StatusOr<size_t> FeedEngineImpl::FollowerCount(EntityId entity) const {
  const Shard& shard = shards_[ShardIndex(entity)];
  ReaderLock lock(&shard.mu);
  auto node = shard.graph.find(entity);
  return node == shard.graph.end() ? 0 : node->second.followers.size();
}

absl::StatusOr<size_t> FeedEngineImpl::FollowingCount(EntityId entity) const {
  const Shard& shard = shards_[ShardIndex(entity)];
  ReaderLock lock(&shard.mu);
  auto node = shard.graph.find(entity);
  return node == shard.graph.end() ? 0 : node->second.following.size();
}

// ---------------------------------------------------------------------------
// Fan-out

void FeedEngineImpl::SnapshotFollowersLocked(const GraphNode& node,
                                             FollowerSnapshot* snapshot,
                                             bool unfollowing) const {
  uint32_t current = std::numeric_limits<uint32_t>::max();
  auto add = [&](const std::pair<uint32_t, EntityId>& follower) {
    if (follower.first != current) {
      current = follower.first;
      snapshot->starts.push_back(snapshot->ids.size());
      snapshot->shard_of_group.push_back(follower.first);
    }
    snapshot->ids.push_back(follower.second);
  };
  if (unfollowing && !node.unfollowing.empty()) {
    // Both sets are ordered by (shard, id) and disjoint: merge them.
    std::vector<std::pair<uint32_t, EntityId>> all;
    all.reserve(node.followers.size() + node.unfollowing.size());
    std::merge(node.followers.begin(), node.followers.end(),
               node.unfollowing.begin(), node.unfollowing.end(),
               std::back_inserter(all));
    snapshot->ids.reserve(all.size());
    for (const auto& follower : all) add(follower);
  } else {
    snapshot->ids.reserve(node.followers.size());
    for (const auto& follower : node.followers) add(follower);
  }
  snapshot->starts.push_back(snapshot->ids.size());
}

void FeedEngineImpl::DeliverGroup(const FollowerSnapshot& snapshot,
                                  size_t group, const StoredEntry& entry) {
  const absl::Span<const EntityId> owners =
      absl::MakeConstSpan(snapshot.ids.data() + snapshot.starts[group],
                          snapshot.starts[group + 1] - snapshot.starts[group]);
  Shard& shard = shards_[snapshot.shard_of_group[group]];
  {
    WriterLock lock(&shard.mu);
    InsertResult ignored;
    PutManyLocked(shard, owners, FeedKind::kHome, entry, &ignored);
    if (log_ != nullptr) {
      LogEntries(shard, ChangeKind::kTimelinePut, FeedKind::kHome, owners,
                 entry);
    }
  }
  if (options_.on_delivery) {
    options_.on_delivery(
        owners, TimelineEntry{entry.ts, entry.activity_id, entry.actor});
  }
}

void FeedEngineImpl::PurgeKey(const FollowerSnapshot& snapshot, FeedKind kind,
                              TimelineKey key) {
  std::vector<EntityId> removed;
  for (size_t g = 0; g < snapshot.groups(); ++g) {
    Shard& shard = shards_[snapshot.shard_of_group[g]];
    removed.clear();
    WriterLock lock(&shard.mu);
    for (size_t i = snapshot.starts[g]; i < snapshot.starts[g + 1]; ++i) {
      if (RemoveKeyLocked(shard, {snapshot.ids[i], kind}, key)) {
        removed.push_back(snapshot.ids[i]);
      }
    }
    if (log_ != nullptr && !removed.empty()) {
      LogEntries(shard, ChangeKind::kTimelineRemove, kind, removed,
                 StoredEntry{key.ts, key.activity_id, 0, 0, 0, {}});
    }
  }
}

FeedEngineImpl::FollowerSnapshot FeedEngineImpl::GroupByShard(
    absl::Span<const EntityId> ids) const {
  std::vector<std::pair<uint32_t, EntityId>> placed;
  placed.reserve(ids.size());
  for (const EntityId id : ids) {
    placed.emplace_back(static_cast<uint32_t>(ShardIndex(id)), id);
  }
  std::sort(placed.begin(), placed.end());
  placed.erase(std::unique(placed.begin(), placed.end()), placed.end());
  FollowerSnapshot snapshot;
  snapshot.ids.reserve(placed.size());
  for (const auto& [shard, id] : placed) {
    if (snapshot.shard_of_group.empty() ||
        snapshot.shard_of_group.back() != shard) {
      snapshot.starts.push_back(snapshot.ids.size());
      snapshot.shard_of_group.push_back(shard);
    }
    snapshot.ids.push_back(id);
  }
  snapshot.starts.push_back(snapshot.ids.size());
  return snapshot;
}

void FeedEngineImpl::DeliverNotifications(const FollowerSnapshot& recipients,
                                          const StoredEntry& entry) {
  const auto& on_notify = options_.notifications.on_notify;
  std::vector<NotificationCounts> counts;
  for (size_t g = 0; g < recipients.groups(); ++g) {
    const absl::Span<const EntityId> owners =
        absl::MakeConstSpan(recipients.ids.data() + recipients.starts[g],
                            recipients.starts[g + 1] - recipients.starts[g]);
    Shard& shard = shards_[recipients.shard_of_group[g]];
    counts.clear();
    {
      WriterLock lock(&shard.mu);
      InsertResult ignored;
      PutManyLocked(shard, owners, FeedKind::kNotification, entry, &ignored);
      if (log_ != nullptr) {
        LogEntries(shard, ChangeKind::kTimelinePut, FeedKind::kNotification,
                   owners, entry);
      }
      if (on_notify) {
        // The badge must not count what has expired meanwhile.
        const Micros now = options_.clock->Now();
        for (const EntityId owner : owners) {
          counts.push_back(CountsOf(
              TimelineAt(shard, NotificationsLocked(shard, owner, now))));
        }
      }
    }
    if (on_notify) {
      for (size_t i = 0; i < owners.size(); ++i) {
        on_notify(owners[i], counts[i]);
      }
    }
  }
}

GroupKey FeedEngineImpl::GroupKeyOf(const Activity& activity) const {
  const AggregationOptions& aggregation = options_.aggregation;
  if (!aggregation.enabled) return 0;
  if (aggregation.group_key) return aggregation.group_key(activity);
  return DefaultGroupKey(activity, aggregation.time_bucket);
}

GroupKey FeedEngineImpl::NotificationGroupOf(const Activity& activity) const {
  if (!options_.notifications.aggregated) return 0;
  const AggregationOptions& aggregation = options_.aggregation;
  if (aggregation.group_key) return aggregation.group_key(activity);
  return DefaultGroupKey(activity, aggregation.time_bucket);
}

absl::StatusOr<PublishResult> FeedEngineImpl::Publish(
    const Activity& activity, const PublishOptions& options) {
  if (absl::Status status =
          ValidateActivity(activity, options_.max_payload_bytes);
      !status.ok()) {
    return status;
  }
  if (options.notify.size() > kMaxNotifyRecipients) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PublishOptions.notify lists ", options.notify.size(),
        " recipients; at most ", kMaxNotifyRecipients, " are accepted"));
  }
  InsertOptions expiry_options;
  expiry_options.ttl = activity.ttl;
  absl::StatusOr<Micros> expires_at = ResolveExpiry(
      expiry_options, options_.default_ttl, options_.clock->Now());
  if (!expires_at.ok()) return expires_at.status();

  Shard& actor_shard = shards_[ShardIndex(activity.actor)];
  bool hybrid = false;
  size_t follower_count = 0;
  {
    ReaderLock lock(&actor_shard.mu);
    auto node = actor_shard.graph.find(activity.actor);
    if (node != actor_shard.graph.end()) {
      hybrid = node->second.hybrid;
      follower_count = node->second.followers.size();
    }
  }
  // Room in the queue is reserved before anything changes, so a full
  // queue rejects the publish cleanly.
  const bool parallel =
      pool_ != nullptr && !hybrid &&
      follower_count >= options_.parallel_fanout_min_followers;
  const size_t workers = parallel
                             ? std::min({options_.fanout_threads,
                                         options_.shards, pool_->capacity()})
                             : 0;
  const bool async =
      parallel && options.completion == FanoutCompletion::kAsynchronous;
  size_t reserved = 0;
  if (async) {
    if (!pool_->Reserve(workers, options.wait_when_queue_full)) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "fan-out queue is full (EngineOptions.fanout_queue_capacity = ",
          options_.fanout_queue_capacity,
          "); nothing was published: retry later, or publish with "
          "wait_when_queue_full"));
    }
    reserved = workers;
  }

  StoredActivity record;
  record.actor = activity.actor;
  record.ts = activity.ts;
  record.expires_at = *expires_at;
  record.payload = activity.payload;
  // Hybrid is never undone, so an actor seen hybrid here gets no copies.
  record.copied = !hybrid;
  FollowerSnapshot recipients;
  if (!options.notify.empty()) {
    recipients = GroupByShard(options.notify);
    record.notified = recipients.ids;
  }
  // The delivery ticket is taken before the activity becomes visible in
  // the store: a Retract that finds it waits for this whole delivery.
  auto job = std::make_shared<FanoutJob>(&tracker_, activity.actor);
  absl::StatusOr<bool> created = store_.Put(activity.id, record);
  if (!created.ok() || !*created) {
    if (reserved > 0) pool_->Unreserve(reserved);
    job->FinishIfEmpty();  // no followers snapshotted: ends the ticket
    if (!created.ok()) return created.status();
    return PublishResult{};  // the same activity again: nothing to do
  }

  job->entry = StoredEntry{activity.ts, activity.id,          activity.actor,
                           *expires_at, GroupKeyOf(activity), {}};
  PublishResult result;
  result.created = true;
  {
    // Own feed and world feed first, then the followers as of now: a
    // concurrent Follow either is in this snapshot or back-fills from the
    // own feed, which already holds the entry.
    WriterLock lock(&actor_shard.mu);
    InsertResult ignored;
    PutLocked(actor_shard, {activity.actor, FeedKind::kOwn}, job->entry,
              &ignored);
    PutLocked(actor_shard, {0, FeedKind::kWorld}, job->entry, &ignored);
    if (log_ != nullptr) {
      const EntityId world = 0;
      LogEntries(actor_shard, ChangeKind::kTimelinePut, FeedKind::kOwn,
                 absl::MakeConstSpan(&activity.actor, 1), job->entry);
      LogEntries(actor_shard, ChangeKind::kTimelinePut, FeedKind::kWorld,
                 absl::MakeConstSpan(&world, 1), job->entry);
    }
    auto node = actor_shard.graph.find(activity.actor);
    if (node != actor_shard.graph.end()) {
      if (node->second.hybrid) {
        result.merged_at_read = true;
      } else {
        SnapshotFollowersLocked(node->second, &job->followers);
      }
    }
  }
  result.fanned_out = job->followers.ids.size();
  const size_t groups = job->followers.groups();
  if (recipients.groups() > 0) {
    // Under the ticket, like the followers' copies: a Retract waits for it.
    StoredEntry notification = job->entry;
    notification.group = NotificationGroupOf(activity);
    DeliverNotifications(recipients, notification);
    result.notified = recipients.ids.size();
  }
  job->FinishIfEmpty();

  auto run = [this](FanoutJob& j) {
    for (size_t g = j.next_group.fetch_add(1, std::memory_order_relaxed);
         g < j.followers.groups();
         g = j.next_group.fetch_add(1, std::memory_order_relaxed)) {
      DeliverGroup(j.followers, g, j.entry);
      j.GroupDone();
    }
  };
  const size_t tasks = std::min(workers, groups);
  if (async) {
    pool_->Unreserve(reserved - tasks);
    for (size_t t = 0; t < tasks; ++t) {
      pool_->Submit([job, run] { run(*job); });
    }
    result.pending = tasks > 0;
    return result;
  }
  // Synchronous: workers help if there is room for them right now; the
  // publisher works too and waits only for the groups, not for the tasks.
  if (tasks > 0 && pool_->Reserve(tasks, /*wait=*/false)) {
    for (size_t t = 0; t < tasks; ++t) {
      pool_->Submit([job, run] { run(*job); });
    }
  }
  run(*job);
  job->WaitAllGroups();
  return result;
}

void FeedEngineImpl::WaitForFanout() {
  if (pool_ != nullptr) pool_->WaitIdle();
}

absl::Status FeedEngineImpl::Retract(ActivityId activity_id) {
  bool already = false;
  absl::StatusOr<StoredActivity> activity =
      store_.Retract(activity_id, &already);
  if (!activity.ok()) return activity.status();
  if (already) return absl::OkStatus();
  const TimelineKey key{activity->ts, activity_id};
  const EntityId actor = activity->actor;
  // The tombstone is set. Deliveries of the actor that began earlier (the
  // publish of this very activity among them) may still be writing it;
  // later ones see the tombstone (back-fill skips retracted activities).
  tracker_.WaitForEarlier(actor);
  Shard& actor_shard = shards_[ShardIndex(actor)];
  FollowerSnapshot followers;
  {
    WriterLock lock(&actor_shard.mu);
    const bool from_own =
        RemoveKeyLocked(actor_shard, {actor, FeedKind::kOwn}, key);
    const bool from_world =
        RemoveKeyLocked(actor_shard, {0, FeedKind::kWorld}, key);
    if (log_ != nullptr) {
      const EntityId world = 0;
      const StoredEntry removed{key.ts, key.activity_id, 0, 0, 0, {}};
      if (from_own) {
        LogEntries(actor_shard, ChangeKind::kTimelineRemove, FeedKind::kOwn,
                   absl::MakeConstSpan(&actor, 1), removed);
      }
      if (from_world) {
        LogEntries(actor_shard, ChangeKind::kTimelineRemove, FeedKind::kWorld,
                   absl::MakeConstSpan(&world, 1), removed);
      }
    }
    auto node = actor_shard.graph.find(actor);
    if (activity->copied && node != actor_shard.graph.end()) {
      // Followers who followed later got it by back-fill and are in the
      // set; those who left are either gone (their Unfollow purged all of
      // the actor's entries) or still leaving (purged here too).
      SnapshotFollowersLocked(node->second, &followers, /*unfollowing=*/true);
    }
  }
  PurgeKey(followers, FeedKind::kHome, key);
  if (!activity->notified.empty()) {
    // The store keeps the ids only; their shard groups are worked out again.
    PurgeKey(GroupByShard(activity->notified), FeedKind::kNotification, key);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Social graph

absl::StatusOr<FollowResult> FeedEngineImpl::Follow(
    EntityId follower, EntityId followee, const FollowOptions& options) {
  if (follower == followee) {
    return absl::InvalidArgumentError(absl::StrCat(
        "entity ", follower, " cannot follow itself (follower == followee)"));
  }
  if (options.backfill.has_value()) {
    if (absl::Status status = ValidateBackfill(*options.backfill);
        !status.ok()) {
      return status;
    }
  }
  // More than the cap could not be kept anyway.
  const size_t backfill =
      std::min(options.backfill.value_or(options_.default_backfill),
               options_.max_timeline_length);
  std::lock_guard<std::mutex> serial(
      follow_stripes_[XXH3_64bits(&follower, sizeof(follower)) %
                      kFollowStripes]);
  Shard& followee_shard = shards_[ShardIndex(followee)];
  Shard& follower_shard = shards_[ShardIndex(follower)];
  bool followee_hybrid = false;
  bool start_transition = false;
  {
    WriterLock lock(&followee_shard.mu);
    GraphNode& node = followee_shard.graph[followee];
    if (!node.followers
             .insert({static_cast<uint32_t>(ShardIndex(follower)), follower})
             .second) {
      return FollowResult{};
    }
    ++followee_shard.follow_edges;
    if (log_ != nullptr) {
      LogEdge(followee_shard, ChangeKind::kFollowerAdd, followee, follower);
    }
    followee_hybrid = node.hybrid || node.becoming_hybrid;
    if (!followee_hybrid && options_.hybrid_fanout_threshold > 0 &&
        node.followers.size() > options_.hybrid_fanout_threshold) {
      node.becoming_hybrid = true;
      start_transition = true;
      followee_hybrid = true;
      if (log_ != nullptr) {
        LogMode(followee_shard, followee, ActorMode::kBecomingMerged);
      }
    }
  }
  auto add_following = [&](bool merged) {
    WriterLock lock(&follower_shard.mu);
    GraphNode& node = follower_shard.graph[follower];
    node.following.insert(followee);
    if (merged &&
        std::find(node.hybrid_following.begin(), node.hybrid_following.end(),
                  followee) == node.hybrid_following.end()) {
      node.hybrid_following.push_back(followee);
    }
    if (log_ != nullptr) {
      LogEdge(follower_shard, ChangeKind::kFollowingAdd, follower, followee,
              merged);
    }
  };
  add_following(followee_hybrid);
  if (start_transition) {
    BecomeHybrid(followee);
  } else if (!followee_hybrid) {
    // Another Follow may have started a transition after the check above
    // and before this follower was in the followee set it told; look again.
    {
      ReaderLock lock(&followee_shard.mu);
      auto node = followee_shard.graph.find(followee);
      followee_hybrid = node != followee_shard.graph.end() &&
                        (node->second.hybrid || node->second.becoming_hybrid);
    }
    if (followee_hybrid) add_following(true);
  }
  FollowResult result;
  result.created = true;
  if (!followee_hybrid && backfill > 0) {
    result.backfilled = Backfill(follower, followee, backfill);
  }
  return result;
}

void FeedEngineImpl::BecomeHybrid(EntityId actor) {
  Shard& actor_shard = shards_[ShardIndex(actor)];
  FollowerSnapshot followers;
  {
    ReaderLock lock(&actor_shard.mu);
    auto node = actor_shard.graph.find(actor);
    if (node != actor_shard.graph.end()) {
      SnapshotFollowersLocked(node->second, &followers);
    }
  }
  // Every follower merges the actor before publishes stop copying it;
  // until then entries may be both copied and merged (reads drop the
  // duplicate).
  for (size_t g = 0; g < followers.groups(); ++g) {
    Shard& shard = shards_[followers.shard_of_group[g]];
    WriterLock lock(&shard.mu);
    for (size_t i = followers.starts[g]; i < followers.starts[g + 1]; ++i) {
      auto node = shard.graph.find(followers.ids[i]);
      if (node == shard.graph.end() ||
          !node->second.following.contains(actor)) {
        continue;  // unfollowed meanwhile
      }
      auto& merged = node->second.hybrid_following;
      if (std::find(merged.begin(), merged.end(), actor) == merged.end()) {
        merged.push_back(actor);
        if (log_ != nullptr) {
          LogEdge(shard, ChangeKind::kMergeAdd, followers.ids[i], actor);
        }
      }
    }
  }
  WriterLock lock(&actor_shard.mu);
  GraphNode& node = actor_shard.graph[actor];
  node.hybrid = true;
  node.becoming_hybrid = false;
  if (log_ != nullptr) LogMode(actor_shard, actor, ActorMode::kMerged);
}

size_t FeedEngineImpl::Backfill(EntityId follower, EntityId followee,
                                size_t count) {
  // A delivery like a publish: Unfollow/Retract wait for it.
  FanoutTicket ticket(&tracker_, followee);
  std::vector<StoredEntry> recent;
  CollectOne(ShardIndex(followee), {followee, FeedKind::kOwn},
             ReadOrder::kNewestFirst, TimelineKey::Min(), TimelineKey::Max(),
             options_.clock->Now(), count, &recent);
  // Activities published while the followee was merged at read time reach
  // this follower through the merge, and retracted ones not at all; a
  // Retract that set its tombstone before this check waits for this
  // ticket and purges after us, one that sets it later sees our copy.
  store_.KeepCopyable(&recent);
  if (recent.empty()) return 0;
  Shard& shard = shards_[ShardIndex(follower)];
  WriterLock lock(&shard.mu);
  InsertResult result;
  for (const StoredEntry& entry : recent) {
    PutLocked(shard, {follower, FeedKind::kHome}, entry, &result);
    if (log_ != nullptr) {
      LogEntries(shard, ChangeKind::kTimelinePut, FeedKind::kHome,
                 absl::MakeConstSpan(&follower, 1), entry);
    }
  }
  return result.inserted + result.replaced;
}

absl::StatusOr<UnfollowResult> FeedEngineImpl::Unfollow(EntityId follower,
                                                        EntityId followee) {
  if (follower == followee) {
    return absl::InvalidArgumentError(absl::StrCat(
        "entity ", follower, " cannot unfollow itself (follower == followee)"));
  }
  std::lock_guard<std::mutex> serial(
      follow_stripes_[XXH3_64bits(&follower, sizeof(follower)) %
                      kFollowStripes]);
  Shard& followee_shard = shards_[ShardIndex(followee)];
  Shard& follower_shard = shards_[ShardIndex(follower)];
  UnfollowResult result;
  {
    WriterLock lock(&followee_shard.mu);
    auto node = followee_shard.graph.find(followee);
    const std::pair<uint32_t, EntityId> edge{
        static_cast<uint32_t>(ShardIndex(follower)), follower};
    if (node != followee_shard.graph.end() &&
        node->second.followers.erase(edge) > 0) {
      result.was_following = true;
      --followee_shard.follow_edges;
      if (log_ != nullptr) {
        LogEdge(followee_shard, ChangeKind::kFollowerRemove, followee,
                follower);
      }
      // Until its copies are gone, a Retract must still reach them.
      node->second.unfollowing.insert(edge);
    }
  }
  if (!result.was_following) return result;
  {
    WriterLock lock(&follower_shard.mu);
    auto node = follower_shard.graph.find(follower);
    if (node != follower_shard.graph.end()) {
      node->second.following.erase(followee);
      auto& merged = node->second.hybrid_following;
      merged.erase(std::remove(merged.begin(), merged.end(), followee),
                   merged.end());
      MaybeEraseGraphNodeLocked(follower_shard, follower);
      if (log_ != nullptr) {
        LogEdge(follower_shard, ChangeKind::kFollowingRemove, follower,
                followee);
      }
    }
  }
  // A publish or back-fill of the followee that read the old follower set
  // must finish writing before its copies are removed.
  tracker_.WaitForEarlier(followee);
  {
    WriterLock lock(&follower_shard.mu);
    auto it = follower_shard.timelines.find({follower, FeedKind::kHome});
    if (it != follower_shard.timelines.end()) {
      Timeline& timeline = it->second->timeline;
      const size_t index_bytes_before = timeline.index_bytes();
      const size_t size_before = timeline.size();
      result.removed = timeline.RemoveActor(followee);
      AfterChangeLocked(follower_shard, it, index_bytes_before, size_before);
      if (log_ != nullptr && result.removed > 0) {
        LogEdge(follower_shard, ChangeKind::kTimelineRemoveActor, follower,
                followee);
      }
    }
  }
  WriterLock lock(&followee_shard.mu);
  auto node = followee_shard.graph.find(followee);
  if (node != followee_shard.graph.end()) {
    node->second.unfollowing.erase(
        {static_cast<uint32_t>(ShardIndex(follower)), follower});
    MaybeEraseGraphNodeLocked(followee_shard, followee);
  }
  return result;
}

// ---------------------------------------------------------------------------
// Expiry and statistics

size_t FeedEngineImpl::EvictShard(Shard& shard, Micros now, size_t budget) {
  size_t evicted = 0;
  // The lock is taken per chunk, so readers and writers of the shard wait
  // for one chunk of eviction at most, however large the budget.
  for (bool more = true; more && evicted < budget;) {
    const size_t chunk_end =
        evicted + std::min(budget - evicted, kEvictionChunk);
    {
      WriterLock lock(&shard.mu);
      more = EvictChunkLocked(shard, now, chunk_end, &evicted);
      if (!more || evicted == budget) shard.arena.ReleaseSpareBlocks();
    }
    // A thread that went to sleep on the lock needs a moment to take it;
    // without this, the next chunk would usually win it again.
    if (more) std::this_thread::yield();
  }
  return evicted;
}

bool FeedEngineImpl::EvictChunkLocked(Shard& shard, Micros now,
                                      size_t chunk_end,
                                      size_t* evicted_so_far) {
  size_t evicted = *evicted_so_far;
  bool more = true;
  while (evicted < chunk_end) {
    if (shard.expiry.empty() || shard.expiry.begin()->first > now) {
      more = false;
      break;
    }
    const size_t n = EvictTimelineLocked(
        shard, shard.timelines.find(shard.expiry.begin()->second), now,
        chunk_end - evicted);
    evicted += n;
    if (n == 0) {  // cannot happen while MinExpiry is exact
      more = false;
      break;
    }
  }
  *evicted_so_far = evicted;
  return more;
}

size_t FeedEngineImpl::EvictTimelineLocked(Shard& shard,
                                           TimelineMap::iterator it, Micros now,
                                           size_t budget) {
  const TimelineId id = it->first;
  Timeline& timeline = it->second->timeline;
  const size_t index_bytes_before = timeline.index_bytes();
  const size_t size_before = timeline.size();
  std::vector<TimelineKey> keys;
  const size_t n =
      timeline.EvictExpired(now, budget, log_ != nullptr ? &keys : nullptr);
  AfterChangeLocked(shard, it, index_bytes_before, size_before);
  shard.evicted += n;
  if (log_ != nullptr && !keys.empty()) {
    ChangeRecord record;
    record.kind = ChangeKind::kTimelineExpire;
    record.domain = DomainOf(shard);
    record.feed = static_cast<FeedType>(id.kind);
    record.entity = id.id;
    record.keys.reserve(keys.size());
    for (const TimelineKey& key : keys) {
      record.keys.push_back({key.ts, key.activity_id});
    }
    log_->Append(std::move(record));
  }
  return n;
}

absl::StatusOr<size_t> FeedEngineImpl::EvictExpired(size_t budget) {
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
  if (evicted < budget) store_.EvictExpired(now, budget - evicted);
  return evicted;
}

absl::StatusOr<EngineStats> FeedEngineImpl::Stats() const {
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
            (TimelineOverheadBytes<TimelineMap, TimelineRecord>() +
             kExpiryIndexBytesPerTimeline) +
        shard.index_bytes + shard.follow_edges * kBytesPerFollowEdge;
    out.bytes_used = shard.arena.bytes_used() + structures;
    out.bytes_reserved = shard.arena.bytes_reserved() + structures +
                         shard.timelines.bucket_count() * sizeof(void*);
    stats.timelines += out.timelines;
    stats.entries += out.entries;
    stats.bytes_used += out.bytes_used;
    stats.bytes_reserved += out.bytes_reserved;
    stats.evicted += shard.evicted;
    stats.trimmed += shard.trimmed;
    stats.follow_edges += shard.follow_edges;
  }
  const ActivityStoreStats store = store_.Stats();
  stats.activities = store.activities;
  stats.retracted_activities = store.retracted;
  stats.payload_bytes = store.payload_bytes;
  stats.activities_evicted = store.evicted;
  stats.bytes_used += store.bytes_used;
  stats.bytes_reserved += store.bytes_used;
  return stats;
}

}  // namespace internal
}  // namespace feedcore
