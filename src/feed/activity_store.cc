#include "feed/activity_store.h"

// XXH_INLINE_ALL: the hash of ShardIndex compiles to a few instructions.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace feedcore::internal {

ActivityStore::ActivityStore(size_t shards, ChangeLog* log,
                             uint32_t domain_base)
    : shard_count_(shards),
      log_(log),
      domain_base_(domain_base),
      shards_(new Shard[shards]) {}

void ActivityStore::LogStoreLocked(size_t s, ActivityId id,
                                   const StoredActivity& activity) const {
  ChangeRecord record;
  record.kind = ChangeKind::kActivityStore;
  record.domain = domain_base_ + static_cast<uint32_t>(s);
  record.entry = StoredEntry{activity.ts,
                             id,
                             activity.actor,
                             activity.expires_at,
                             0,
                             activity.payload,
                             activity.edited_at,
                             activity.kind};
  record.merged_at_read = !activity.copied;
  record.owners = activity.notified;
  record.other = activity.repost_of;
  log_->Append(std::move(record));
  if (activity.retracted) {
    ChangeRecord retract;
    retract.kind = ChangeKind::kActivityRetract;
    retract.domain = domain_base_ + static_cast<uint32_t>(s);
    retract.entry.activity_id = id;
    log_->Append(std::move(retract));
  }
}

void ActivityStore::LogCountersLocked(size_t s, ActivityId id,
                                      const StoredActivity& activity) const {
  ChangeRecord record;
  record.kind = ChangeKind::kCountersSet;
  record.domain = domain_base_ + static_cast<uint32_t>(s);
  record.entry.activity_id = id;
  // The engine clock's time of the change; the record's own `time` is the
  // stream clock's.
  record.entry.ts = activity.counters_changed_at;
  record.counters.assign(activity.counters.begin(), activity.counters.end());
  log_->Append(std::move(record));
}

void ActivityStore::EditLocked(Shard& shard, size_t s, ActivityId id,
                               StoredActivity& activity,
                               std::string_view payload, Micros edited_at) {
  shard.payload_bytes += payload.size();
  shard.payload_bytes -= activity.payload.size();
  activity.payload.assign(payload.data(), payload.size());
  activity.edited_at = edited_at;
  if (log_ != nullptr) LogEditLocked(s, id, activity);
}

void ActivityStore::LogEditLocked(size_t s, ActivityId id,
                                  const StoredActivity& activity) const {
  ChangeRecord record;
  record.kind = ChangeKind::kActivityEdit;
  record.domain = domain_base_ + static_cast<uint32_t>(s);
  record.entry.activity_id = id;
  record.entry.payload = activity.payload;
  record.entry.edited_at = activity.edited_at;
  log_->Append(std::move(record));
}

void ActivityStore::EraseLocked(
    Shard& shard,
    absl::flat_hash_map<ActivityId, StoredActivity>::iterator it) {
  shard.expiry.erase({it->second.expires_at, it->first});
  if (it->second.retracted) --shard.retracted;
  shard.payload_bytes -= it->second.payload.size();
  shard.notified -= it->second.notified.size();
  std::vector<ActivityId> notices;  // expire with the activity
  shard.reactions.DropActivity(it->first, &notices);
  shard.activities.erase(it);
}

void ActivityStore::Restore(ActivityId id, const StoredActivity& activity) {
  const size_t s = ShardIndex(id);
  Shard& shard = shards_[s];
  WriterLock lock(&shard.mu);
  ReplaceLocked(shard, id, activity);
  if (log_ != nullptr) LogStoreLocked(s, id, activity);
}

void ActivityStore::Load(ActivityId id, const StoredActivity& activity) {
  Shard& shard = shards_[ShardIndex(id)];
  WriterLock lock(&shard.mu);
  ReplaceLocked(shard, id, activity);
}

void ActivityStore::ReplaceLocked(Shard& shard, ActivityId id,
                                  const StoredActivity& activity) {
  auto it = shard.activities.find(id);
  if (it != shard.activities.end()) EraseLocked(shard, it);
  shard.activities.emplace(id, activity);
  shard.expiry.insert({activity.expires_at, id});
  shard.payload_bytes += activity.payload.size();
  shard.notified += activity.notified.size();
  if (activity.retracted) ++shard.retracted;
}

void ActivityStore::Drop(ActivityId id) {
  const size_t s = ShardIndex(id);
  Shard& shard = shards_[s];
  WriterLock lock(&shard.mu);
  auto it = shard.activities.find(id);
  if (it == shard.activities.end()) return;
  const Micros ts = it->second.ts;
  EraseLocked(shard, it);
  if (log_ != nullptr) {
    ChangeRecord record;
    record.kind = ChangeKind::kActivityExpire;
    record.domain = domain_base_ + static_cast<uint32_t>(s);
    record.keys.push_back({ts, id});
    log_->Append(std::move(record));
  }
}

size_t ActivityStore::ShardIndex(ActivityId id) const {
  // A different seed from the timeline routing, so that ids used both as
  // entity and activity ids do not pile onto the same shard numbers. As
  // FeedEngineImpl::ShardIndex: inlined, and a mask for a power-of-two
  // count, both giving exactly the hash modulo the count.
  const uint64_t hash =
      XXH3_64bits_withSeed(&id, sizeof(id), 0x61637469766974ULL);
  return (shard_count_ & (shard_count_ - 1)) == 0 ? hash & (shard_count_ - 1)
                                                  : hash % shard_count_;
}

absl::StatusOr<bool> ActivityStore::Put(ActivityId id,
                                        const StoredActivity& activity) {
  const size_t s = ShardIndex(id);
  Shard& shard = shards_[s];
  WriterLock lock(&shard.mu);
  auto [it, inserted] = shard.activities.try_emplace(id, activity);
  if (!inserted) {
    const StoredActivity& existing = it->second;
    if (existing.retracted) {
      return absl::FailedPreconditionError(
          absl::StrCat("activity ", id,
                       " was retracted; a retracted id cannot be "
                       "published again until it expires"));
    }
    // The payload of an edited activity is the edit's: a retried publish
    // of it still names it by actor and ts.
    const bool same_payload =
        existing.edited_at != 0 || existing.payload == activity.payload;
    if (existing.actor != activity.actor || existing.ts != activity.ts ||
        existing.kind != activity.kind ||
        existing.repost_of != activity.repost_of || !same_payload) {
      return absl::AlreadyExistsError(
          absl::StrCat("activity ", id, " already exists with a different ",
                       existing.actor != activity.actor           ? "actor"
                       : existing.ts != activity.ts               ? "timestamp"
                       : existing.kind != activity.kind           ? "kind"
                       : existing.repost_of != activity.repost_of ? "repost_of"
                                                                  : "payload",
                       "; activity ids must be unique"));
    }
    return false;
  }
  shard.expiry.insert({activity.expires_at, id});
  shard.payload_bytes += activity.payload.size();
  shard.notified += activity.notified.size();
  if (log_ != nullptr) LogStoreLocked(s, id, activity);
  return true;
}

absl::StatusOr<StoredActivity> ActivityStore::Retract(
    ActivityId id, bool* already, std::vector<ActivityId>* notices) {
  const size_t s = ShardIndex(id);
  Shard& shard = shards_[s];
  WriterLock lock(&shard.mu);
  auto it = shard.activities.find(id);
  if (it == shard.activities.end()) {
    return absl::NotFoundError(
        absl::StrCat("no activity ", id, " (never published, or expired)"));
  }
  StoredActivity& activity = it->second;
  *already = activity.retracted;
  StoredActivity before = activity;
  if (!activity.retracted) {
    activity.retracted = true;
    shard.payload_bytes -= activity.payload.size();
    std::string().swap(activity.payload);  // give the bytes back now
    shard.notified -= activity.notified.size();
    std::vector<EntityId>().swap(activity.notified);
    std::vector<ActivityId> dropped_notices;
    shard.reactions.DropActivity(
        id, notices != nullptr ? notices : &dropped_notices);
    ++shard.retracted;
    if (log_ != nullptr) {
      ChangeRecord record;
      record.kind = ChangeKind::kActivityRetract;
      record.domain = domain_base_ + static_cast<uint32_t>(s);
      record.entry.activity_id = id;
      log_->Append(std::move(record));
    }
  }
  return before;
}

void ActivityStore::Hydrate(std::vector<StoredEntry>* entries, bool payloads,
                            bool kinds) const {
  if (entries->empty()) return;
  std::vector<uint32_t> shard_of(entries->size());
  for (size_t i = 0; i < entries->size(); ++i) {
    shard_of[i] = static_cast<uint32_t>(ShardIndex((*entries)[i].activity_id));
  }
  std::vector<bool> done(entries->size(), false);
  for (size_t first = 0; first < entries->size(); ++first) {
    if (done[first]) continue;
    const Shard& shard = shards_[shard_of[first]];
    ReaderLock lock(&shard.mu);
    for (size_t i = first; i < entries->size(); ++i) {
      if (done[i] || shard_of[i] != shard_of[first]) continue;
      done[i] = true;
      StoredEntry& entry = (*entries)[i];
      auto it = shard.activities.find(entry.activity_id);
      if (it == shard.activities.end()) continue;
      if (kinds) entry.kind = it->second.kind;
      if (payloads && !it->second.retracted) {
        entry.payload = it->second.payload;
        entry.edited_at = it->second.edited_at;
      }
    }
  }
}

void ActivityStore::RepostsOf(absl::Span<const StoredEntry> entries,
                              uint64_t repost_kinds,
                              std::vector<ActivityId>* reposted) const {
  reposted->assign(entries.size(), 0);
  // Shard of each entry to look up, kNone for the others.
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> shard_of(entries.size(), kNone);
  for (size_t i = 0; i < entries.size(); ++i) {
    if (((repost_kinds >> entries[i].kind) & 1) != 0) {
      shard_of[i] = static_cast<uint32_t>(ShardIndex(entries[i].activity_id));
    }
  }
  for (size_t first = 0; first < entries.size(); ++first) {
    if (shard_of[first] == kNone) continue;
    const uint32_t s = shard_of[first];
    const Shard& shard = shards_[s];
    ReaderLock lock(&shard.mu);
    for (size_t i = first; i < entries.size(); ++i) {
      if (shard_of[i] != s) continue;
      shard_of[i] = kNone;
      auto it = shard.activities.find(entries[i].activity_id);
      if (it != shard.activities.end()) (*reposted)[i] = it->second.repost_of;
    }
  }
}

absl::StatusOr<Micros> ActivityStore::Edit(ActivityId id, EntityId actor,
                                           std::string_view payload,
                                           const Clock& clock) {
  const size_t s = ShardIndex(id);
  Shard& shard = shards_[s];
  WriterLock lock(&shard.mu);
  auto it = shard.activities.find(id);
  const Micros now = clock.Now();
  if (it == shard.activities.end() || it->second.retracted ||
      it->second.expires_at <= now) {
    return absl::NotFoundError(
        absl::StrCat("activity ", id,
                     " is not a published activity (unknown, retracted "
                     "or expired)"));
  }
  StoredActivity& activity = it->second;
  if (activity.actor != actor) {
    return absl::PermissionDeniedError(
        absl::StrCat("activity ", id, " was published by ", activity.actor,
                     ", not by ", actor, ": only its actor edits it"));
  }
  // At least 1: edited_at 0 means never edited.
  EditLocked(shard, s, id, activity, payload, std::max<Micros>(now, 1));
  return activity.edited_at;
}

bool ActivityStore::RestoreEdit(ActivityId id, std::string_view payload,
                                Micros edited_at) {
  const size_t s = ShardIndex(id);
  Shard& shard = shards_[s];
  WriterLock lock(&shard.mu);
  auto it = shard.activities.find(id);
  if (it == shard.activities.end() || it->second.retracted) return false;
  EditLocked(shard, s, id, it->second, payload, edited_at);
  return true;
}

std::optional<ActivityFacts> ActivityStore::FindLive(ActivityId id,
                                                     Micros now) const {
  const Shard& shard = shards_[ShardIndex(id)];
  ReaderLock lock(&shard.mu);
  auto it = shard.activities.find(id);
  if (it == shard.activities.end() || it->second.retracted ||
      it->second.expires_at <= now) {
    return std::nullopt;
  }
  return ActivityFacts{it->second.actor, it->second.ts, it->second.expires_at};
}

void ActivityStore::KeepCopyable(std::vector<StoredEntry>* entries) const {
  std::vector<StoredEntry> kept;
  kept.reserve(entries->size());
  for (StoredEntry& entry : *entries) {
    const Shard& shard = shards_[ShardIndex(entry.activity_id)];
    ReaderLock lock(&shard.mu);
    auto it = shard.activities.find(entry.activity_id);
    if (it != shard.activities.end() && it->second.copied &&
        !it->second.retracted) {
      kept.push_back(std::move(entry));
    }
  }
  entries->swap(kept);
}

void ActivityStore::KeepLive(std::vector<StoredEntry>* entries) const {
  std::erase_if(*entries, [this](const StoredEntry& entry) {
    const Shard& shard = shards_[ShardIndex(entry.activity_id)];
    ReaderLock lock(&shard.mu);
    auto it = shard.activities.find(entry.activity_id);
    return it == shard.activities.end() || it->second.retracted;
  });
}

namespace {

absl::Status NoCounters(ActivityId id, const char* why) {
  return absl::NotFoundError(
      absl::StrCat("no activity ", id, " to count (", why, ")"));
}

}  // namespace

absl::StatusOr<ActivityCounters> ActivityStore::IncrementCounter(
    ActivityId id, size_t counter, int64_t delta, const Clock& clock) {
  const size_t s = ShardIndex(id);
  Shard& shard = shards_[s];
  WriterLock lock(&shard.mu);
  const Micros now = clock.Now();
  auto it = shard.activities.find(id);
  if (it == shard.activities.end()) {
    return NoCounters(id, "never published, or evicted");
  }
  StoredActivity& activity = it->second;
  if (activity.retracted) return NoCounters(id, "retracted");
  if (activity.expires_at <= now) return NoCounters(id, "expired");
  int64_t& value = activity.counters[counter];
  const bool overflows =
      delta > 0 ? value > std::numeric_limits<int64_t>::max() - delta
                : value < std::numeric_limits<int64_t>::min() - delta;
  if (overflows) {
    return absl::InvalidArgumentError(
        absl::StrCat("counter ", counter, " of activity ", id, " is ", value,
                     "; adding ", delta, " leaves the range of int64"));
  }
  value += delta;
  activity.counters_changed_at = now;
  if (log_ != nullptr) LogCountersLocked(s, id, activity);
  return activity.counters;
}

absl::StatusOr<ActivityCounters> ActivityStore::Counters(ActivityId id,
                                                         Micros now) const {
  const Shard& shard = shards_[ShardIndex(id)];
  ReaderLock lock(&shard.mu);
  auto it = shard.activities.find(id);
  if (it == shard.activities.end()) {
    return NoCounters(id, "never published, or evicted");
  }
  if (it->second.retracted) return NoCounters(id, "retracted");
  if (it->second.expires_at <= now) return NoCounters(id, "expired");
  return it->second.counters;
}

bool ActivityStore::RestoreCounters(ActivityId id,
                                    const ActivityCounters& counters,
                                    Micros changed_at) {
  const size_t s = ShardIndex(id);
  Shard& shard = shards_[s];
  WriterLock lock(&shard.mu);
  auto it = shard.activities.find(id);
  if (it == shard.activities.end()) return false;
  it->second.counters = counters;
  it->second.counters_changed_at = changed_at;
  if (log_ != nullptr) LogCountersLocked(s, id, it->second);
  return true;
}

void ActivityStore::OrderByShard(size_t n,
                                 absl::FunctionRef<ActivityId(size_t)> id_of,
                                 ShardOrder* order, ShardOrder* run_end) const {
  // A counting sort: O(n + shards).
  ShardOrder shard_of(n);
  run_end->assign(shard_count_ + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    shard_of[i] = static_cast<uint32_t>(ShardIndex(id_of(i)));
    ++(*run_end)[shard_of[i] + 1];
  }
  for (size_t s = 0; s < shard_count_; ++s) (*run_end)[s + 1] += (*run_end)[s];
  order->resize(n);
  ShardOrder fill(run_end->begin(), run_end->end() - 1);
  for (size_t i = 0; i < n; ++i) {
    (*order)[fill[shard_of[i]]++] = static_cast<uint32_t>(i);
  }
}

void ActivityStore::LookupCounters(absl::Span<const StoredEntry> entries,
                                   std::vector<CounterState>* out) const {
  out->assign(entries.size(), CounterState{});
  if (entries.empty()) return;
  ShardOrder order, run_end;
  OrderByShard(
      entries.size(), [&](size_t i) { return entries[i].activity_id; }, &order,
      &run_end);
  for (size_t s = 0; s < shard_count_; ++s) {
    const size_t first = run_end[s];
    const size_t end = run_end[s + 1];
    if (first == end) continue;
    const Shard& shard = shards_[s];
    ReaderLock lock(&shard.mu);
    // Every slot of the run requested before the first is read: the
    // misses overlap instead of following one another.
    for (size_t k = first; k < end; ++k) {
      shard.activities.prefetch(entries[order[k]].activity_id);
    }
    for (size_t k = first; k < end; ++k) {
      const size_t i = order[k];
      auto it = shard.activities.find(entries[i].activity_id);
      if (it == shard.activities.end()) continue;
      CounterState& state = (*out)[i];
      state.counters = it->second.counters;
      state.changed_at = it->second.counters_changed_at;
    }
  }
}

size_t ActivityStore::EvictExpired(Micros now, size_t budget) {
  // At most kEvictionChunk activities per hold of a shard's lock, so that
  // publishes and hydrating reads wait for one chunk at most.
  constexpr size_t kEvictionChunk = 64;
  size_t evicted = 0;
  for (size_t s = 0; s < shard_count_ && evicted < budget; ++s) {
    Shard& shard = shards_[s];
    for (bool more = true; more && evicted < budget;) {
      const size_t chunk_end =
          evicted + std::min(budget - evicted, kEvictionChunk);
      WriterLock lock(&shard.mu);
      ChangeRecord record;
      while (evicted < chunk_end) {
        if (shard.expiry.empty() || shard.expiry.begin()->first > now) {
          more = false;
          break;
        }
        auto it = shard.activities.find(shard.expiry.begin()->second);
        if (log_ != nullptr) record.keys.push_back({it->second.ts, it->first});
        EraseLocked(shard, it);
        ++shard.evicted;
        ++evicted;
      }
      if (!record.keys.empty()) {
        record.kind = ChangeKind::kActivityExpire;
        record.domain = domain_base_ + static_cast<uint32_t>(s);
        log_->Append(std::move(record));
      }
    }
  }
  return evicted;
}

ActivityStoreStats ActivityStore::Stats() const {
  using Map = absl::flat_hash_map<ActivityId, StoredActivity>;
  ActivityStoreStats stats;
  for (size_t s = 0; s < shard_count_; ++s) {
    const Shard& shard = shards_[s];
    ReaderLock lock(&shard.mu);
    stats.activities += shard.activities.size();
    stats.retracted += shard.retracted;
    stats.payload_bytes += shard.payload_bytes;
    stats.evicted += shard.evicted;
    // Table slots (value + control byte) and the expiry btree (nodes at
    // least half full), plus the payload bytes themselves.
    stats.bytes_used +=
        shard.activities.capacity() * (sizeof(Map::value_type) + 1) +
        2 * shard.expiry.size() * sizeof(std::pair<Micros, ActivityId>) +
        shard.payload_bytes + shard.notified * sizeof(EntityId) +
        shard.reactions.bytes_used();
  }
  return stats;
}

}  // namespace feedcore::internal
