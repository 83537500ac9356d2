#include "feed/shard.h"

#include <algorithm>
#include <iterator>
#include <new>
#include <thread>

namespace feedcore::internal {
namespace {

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
    2 * (sizeof(FollowerEdge) + sizeof(EntityId));

}  // namespace

FeedCaps FeedCapsOf(size_t max_timeline_length, size_t world_timeline_length,
                    size_t notification_length) {
  FeedCaps caps;
  caps[static_cast<size_t>(FeedType::kHome)] = max_timeline_length;
  caps[static_cast<size_t>(FeedType::kOwn)] = max_timeline_length;
  caps[static_cast<size_t>(FeedType::kWorld)] = world_timeline_length;
  caps[static_cast<size_t>(FeedType::kNotification)] = notification_length;
  return caps;
}

void GraphNode::SnapshotFollowers(FollowerSnapshot* snapshot,
                                  bool with_unfollowing,
                                  bool with_dormant) const {
  uint32_t current = std::numeric_limits<uint32_t>::max();
  auto add = [&](const FollowerEdge& follower) {
    if (follower.first != current) {
      current = follower.first;
      snapshot->starts.push_back(snapshot->ids.size());
      snapshot->shard_of_group.push_back(follower.first);
    }
    snapshot->ids.push_back(follower.second);
  };
  const bool dormant = with_dormant && !dormant_followers.empty();
  const bool leaving =
      with_unfollowing && (!unfollowing.empty() || !history_kept.empty());
  if (!dormant && !leaving) {
    snapshot->ids.reserve(followers.size());
    for (const auto& follower : followers) add(follower);
  } else {
    // Each set is ordered by (shard, id): merge them, keeping one of any
    // follower two of them hold.
    std::vector<FollowerEdge> all(followers.begin(), followers.end());
    auto merge_in = [&all](const absl::btree_set<FollowerEdge>& set) {
      if (set.empty()) return;
      std::vector<FollowerEdge> merged;
      merged.reserve(all.size() + set.size());
      std::set_union(all.begin(), all.end(), set.begin(), set.end(),
                     std::back_inserter(merged));
      all.swap(merged);
    };
    if (dormant) merge_in(dormant_followers);
    if (leaving) {
      merge_in(unfollowing);
      merge_in(history_kept);
    }
    snapshot->ids.reserve(all.size());
    for (const auto& follower : all) add(follower);
  }
  snapshot->starts.push_back(snapshot->ids.size());
}

EntryKey GraphNode::MergeBoundaryNow() const {
  if (!newest_published.has_value()) return EntryKey::Min();
  const EntryKey newest = *newest_published;
  if (newest == EntryKey::Max()) return newest;
  return newest.activity_id == std::numeric_limits<ActivityId>::max()
             ? EntryKey{newest.ts + 1, 0}
             : EntryKey{newest.ts, newest.activity_id + 1};
}

Shard::Shard(const ShardConfig& config, uint32_t domain)
    : config_(config), domain_(domain) {}

void Shard::PrefetchRecord(const RecordSlot& slot) {
  const char* record = reinterpret_cast<const char*>(slot.record.get());
  for (size_t line = 0; line < sizeof(TimelineRecord); line += 64) {
    __builtin_prefetch(record + line, /*rw=*/1);
  }
  __builtin_prefetch(slot.newest_chunk, /*rw=*/1);
}

void Shard::Put(TimelineId id, const StoredEntry& entry, InsertResult* result) {
  // The lookup reads a control group and then a slot; fetching the slot at
  // the start of the probe now overlaps the two misses.
  timelines_.prefetch(id);
  PutFetched(id, entry, result, /*record_fetched=*/false);
}

void Shard::PutFetched(TimelineId id, const StoredEntry& entry,
                       InsertResult* result, bool record_fetched) {
  auto [it, created] = timelines_.try_emplace(id);
  if (created) {
    it->second.record =
        std::make_unique<TimelineRecord>(&arena_, config_.height_seed);
    // Each kind keeps its newest entries for the follows that deliver
    // only some kinds (timeline.h, KeepCapPerKind).
    if (id.kind == FeedType::kOwn) it->second->timeline.KeepCapPerKind();
    if (KeepsGroups(id.kind)) {
      // Own and world feeds only hand their group keys on (back-fill,
      // merged reads); home and notification feeds are read as groups.
      it->second->timeline.EnableGroups(id.kind == FeedType::kHome ||
                                        id.kind == FeedType::kNotification);
    }
  } else if (!record_fetched) {
    PrefetchRecord(it->second);
  }
  Timeline& timeline = it->second->timeline;
  const size_t index_bytes_before = timeline.index_bytes();
  const size_t size_before = timeline.size();
  const Timeline::PutResult put = timeline.Put(entry, Cap(id.kind));
  AddPut(put, result);
  if (id.kind == FeedType::kOwn) {
    if (auto node = graph_.find(id.id); node != graph_.end()) {
      node->second.NotePublished({entry.ts, entry.activity_id});
    }
  }
  trimmed_ += put.trimmed;
  AfterChange(it, index_bytes_before, size_before);
}

void Shard::PutMany(absl::Span<const EntityId> owners, FeedType kind,
                    const StoredEntry& entry, InsertResult* result) {
  // Each put misses the cache on the hash slot and on the record; fetch
  // both early so the misses of consecutive owners overlap.
  constexpr size_t kSlotsAhead = 16;
  constexpr size_t kRecordsAhead = 8;
  const size_t n = owners.size();
  for (size_t i = 0; i < std::min(n, kSlotsAhead); ++i) {
    timelines_.prefetch(TimelineId{owners[i], kind});
  }
  for (size_t i = 0; i < n; ++i) {
    if (i + kSlotsAhead < n) {
      timelines_.prefetch(TimelineId{owners[i + kSlotsAhead], kind});
    }
    if (i + kRecordsAhead < n) {
      auto ahead = timelines_.find(TimelineId{owners[i + kRecordsAhead], kind});
      if (ahead != timelines_.end()) PrefetchRecord(ahead->second);
    }
    // Slot and record were fetched ahead above; a put that did not find
    // its timeline then creates it.
    PutFetched({owners[i], kind}, entry, result, /*record_fetched=*/true);
  }
}

bool Shard::RemoveKey(TimelineId id, EntryKey key) {
  auto it = timelines_.find(id);
  if (it == timelines_.end()) return false;
  Timeline& timeline = it->second->timeline;
  const size_t index_bytes_before = timeline.index_bytes();
  const size_t size_before = timeline.size();
  const bool removed = timeline.Remove(key);
  AfterChange(it, index_bytes_before, size_before);
  return removed;
}

size_t Shard::RemoveActor(EntityId owner, EntityId actor, FeedType kind,
                          EntryKey from) {
  auto it = timelines_.find({owner, kind});
  if (it == timelines_.end()) return 0;
  Timeline& timeline = it->second->timeline;
  const size_t index_bytes_before = timeline.index_bytes();
  const size_t size_before = timeline.size();
  const size_t removed = timeline.RemoveActor(actor, from);
  AfterChange(it, index_bytes_before, size_before);
  return removed;
}

void Shard::AfterChange(TimelineMap::iterator it, size_t index_bytes_before,
                        size_t size_before, bool exact_key) {
  TimelineRecord& record = *it->second;
  entries_ += record.timeline.size();
  entries_ -= size_before;
  index_bytes_ += record.timeline.index_bytes();
  index_bytes_ -= index_bytes_before;
  const Micros min_expiry = record.timeline.MinExpiry();  // max when empty
  const bool rekey = exact_key || record.timeline.empty()
                         ? min_expiry != record.indexed_expiry
                         : min_expiry < record.indexed_expiry;
  if (rekey) {
    if (record.indexed_expiry != std::numeric_limits<Micros>::max()) {
      expiry_.erase({record.indexed_expiry, it->first});
    }
    if (min_expiry != std::numeric_limits<Micros>::max()) {
      expiry_.insert({min_expiry, it->first});
    }
    record.indexed_expiry = min_expiry;
  }
  it->second.newest_chunk = record.timeline.newest_chunk();
  if (record.timeline.empty()) {
    // An empty group index may keep its table's capacity.
    index_bytes_ -= record.timeline.index_bytes();
    timelines_.erase(it);
  }
}

void Shard::Collect(TimelineId id, ReadOrder order, EntryKey lo, EntryKey hi,
                    Micros now, size_t want, std::vector<StoredEntry>* out,
                    uint64_t kinds) const {
  ReaderLock lock(&mu_);
  auto it = timelines_.find(id);
  if (it == timelines_.end()) return;
  it->second->timeline.Collect(order, lo, hi, now, want, out, kinds);
}

Timeline* Shard::Notifications(EntityId user, Micros now) {
  const TimelineId id{user, FeedType::kNotification};
  auto it = timelines_.find(id);
  if (it == timelines_.end()) return nullptr;
  if (it->second->timeline.MinExpiry() > now) return &it->second->timeline;
  // Bounded by NotificationOptions::max_length.
  EvictTimeline(it, now, std::numeric_limits<size_t>::max());
  return FindTimeline(id);
}

bool Shard::Mark(Timeline& feed, EntityId user, bool read,
                 const EntryKey* key) {
  GroupIndex& groups = *feed.mutable_groups();
  if (key != nullptr) {
    // The timeline knows whether it holds `key`, and in which group.
    const std::optional<GroupKey> group = feed.GroupOf(*key);
    if (!group.has_value()) return false;
    groups.MarkRead(*key, *group);
  } else if (read) {
    groups.MarkAllRead();
  } else {
    groups.MarkAllSeen();
  }
  if (config_.log != nullptr) {
    ChangeRecord record;
    record.kind =
        read ? ChangeKind::kNotificationRead : ChangeKind::kNotificationSeen;
    record.feed = FeedType::kNotification;
    record.entity = user;
    if (key != nullptr) record.keys.push_back({key->ts, key->activity_id});
    Log(std::move(record));
  }
  return true;
}

std::optional<EntryKey> Shard::NewestOwnKey(EntityId actor) const {
  const Timeline* own = FindTimeline({actor, FeedType::kOwn});
  if (own == nullptr) return std::nullopt;
  std::vector<StoredEntry> newest;
  own->Collect(ReadOrder::kNewestFirst, EntryKey::Min(), EntryKey::Max(),
               std::numeric_limits<Micros>::min(), 1, &newest);
  if (newest.empty()) return std::nullopt;
  return EntryKey{newest.front().ts, newest.front().activity_id};
}

GraphNode* Shard::AddFollower(EntityId followee, FollowerEdge edge) {
  GraphNode& node = graph_[followee];
  if (node.dormant_followers.contains(edge) ||
      !node.followers.insert(edge).second) {
    return nullptr;
  }
  node.history_kept.erase(edge);
  if (std::optional<EntryKey> newest = NewestOwnKey(followee)) {
    node.NotePublished(*newest);
  }
  ++follow_edges_;
  return &node;
}

GraphNode* Shard::RemoveFollower(EntityId followee, FollowerEdge edge) {
  auto node = graph_.find(followee);
  if (node == graph_.end() ||
      (node->second.followers.erase(edge) == 0 &&
       node->second.dormant_followers.erase(edge) == 0)) {
    return nullptr;
  }
  node->second.relations.follower_kinds.erase(edge.second);
  --follow_edges_;
  return &node->second;
}

void Shard::MaybeEraseNode(EntityId entity) {
  auto it = graph_.find(entity);
  if (it != graph_.end() && it->second.Unused()) graph_.erase(it);
}

size_t Shard::Evict(Micros now, size_t budget) {
  size_t evicted = 0;
  // The lock is taken per chunk, so readers and writers of the shard wait
  // for one chunk of eviction at most, however large the budget.
  for (bool more = true; more && evicted < budget;) {
    const size_t chunk_end =
        evicted + std::min(budget - evicted, kEvictionChunk);
    {
      WriterLock lock(&mu_);
      more = EvictChunk(now, chunk_end, &evicted);
      if (!more || evicted == budget) arena_.ReleaseSpareBlocks();
    }
    // A thread that went to sleep on the lock needs a moment to take it;
    // without this, the next chunk would usually win it again.
    if (more) std::this_thread::yield();
  }
  return evicted;
}

bool Shard::EvictChunk(Micros now, size_t chunk_end, size_t* evicted_so_far) {
  size_t evicted = *evicted_so_far;
  size_t stale_visits = 0;
  bool more = true;
  while (evicted < chunk_end) {
    if (expiry_.empty() || expiry_.begin()->first > now) {
      more = false;
      break;
    }
    // A timeline whose key was below its earliest expiry may have nothing
    // expired: the visit makes its key exact, so it is not met again, and
    // counts towards the chunk so that the lock is held for a bounded time.
    const size_t n = EvictTimeline(timelines_.find(expiry_.begin()->second),
                                   now, chunk_end - evicted);
    evicted += n;
    if (n == 0 && ++stale_visits >= kEvictionChunk) break;
  }
  *evicted_so_far = evicted;
  return more;
}

size_t Shard::EvictTimeline(TimelineMap::iterator it, Micros now,
                            size_t budget) {
  const TimelineId id = it->first;
  Timeline& timeline = it->second->timeline;
  const size_t index_bytes_before = timeline.index_bytes();
  const size_t size_before = timeline.size();
  std::vector<EntryKey> keys;
  const bool logged = config_.log != nullptr;
  const size_t n = timeline.EvictExpired(now, budget, logged ? &keys : nullptr);
  AfterChange(it, index_bytes_before, size_before, /*exact_key=*/true);
  evicted_ += n;
  if (logged && !keys.empty()) {
    ChangeRecord record;
    record.kind = ChangeKind::kTimelineExpire;
    record.feed = id.kind;
    record.entity = id.id;
    record.keys.reserve(keys.size());
    for (const EntryKey& key : keys) {
      record.keys.push_back({key.ts, key.activity_id});
    }
    Log(std::move(record));
  }
  return n;
}

void Shard::LogEntries(ChangeKind kind, FeedType feed,
                       absl::Span<const EntityId> owners,
                       const StoredEntry& entry) const {
  ChangeRecord record;
  record.kind = kind;
  record.feed = feed;
  record.owners.assign(owners.begin(), owners.end());
  record.entry = StoredEntry{entry.ts,
                             entry.activity_id,
                             entry.actor,
                             entry.expires_at,
                             KeptGroup(entry.group, feed, config_.aggregation),
                             {},
                             0,
                             entry.kind};
  Log(std::move(record));
}

void Shard::LogEdge(ChangeKind kind, EntityId entity, EntityId other,
                    bool merged) const {
  ChangeRecord record;
  record.kind = kind;
  record.entity = entity;
  record.other = other;
  record.merged_at_read = merged;
  Log(std::move(record));
}

void Shard::LogMode(EntityId actor, ActorMode mode) const {
  ChangeRecord record;
  record.kind = ChangeKind::kActorMode;
  record.entity = actor;
  record.mode = mode;
  Log(std::move(record));
}

void Shard::Log(ChangeRecord&& record) const {
  record.domain = domain_;
  config_.log->Append(std::move(record));
}

void Shard::AddStats(ShardStats* out, EngineStats* totals) const {
  ReaderLock lock(&mu_);
  out->timelines = timelines_.size();
  out->entries = entries_;
  const size_t structures =
      timelines_.size() *
          (TimelineOverheadBytes<TimelineMap, TimelineRecord>() +
           kExpiryIndexBytesPerTimeline) +
      index_bytes_ + follow_edges_ * kBytesPerFollowEdge;
  out->bytes_used = arena_.bytes_used() + structures;
  out->bytes_reserved = arena_.bytes_reserved() + structures +
                        timelines_.bucket_count() * sizeof(void*);
  totals->timelines += out->timelines;
  totals->entries += out->entries;
  totals->bytes_used += out->bytes_used;
  totals->bytes_reserved += out->bytes_reserved;
  totals->evicted += evicted_;
  totals->trimmed += trimmed_;
  totals->follow_edges += follow_edges_;
}

ShardSet::ShardSet(size_t count, const ShardConfig& config)
    : count_(count), shards_(std::allocator<Shard>().allocate(count)) {
  for (size_t s = 0; s < count; ++s) {
    new (&shards_[s]) Shard(config, static_cast<uint32_t>(s));
  }
}

ShardSet::~ShardSet() {
  for (size_t s = count_; s > 0; --s) shards_[s - 1].~Shard();
  std::allocator<Shard>().deallocate(shards_, count_);
}

}  // namespace feedcore::internal
