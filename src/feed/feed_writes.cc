// FeedEngineImpl's low-level writes: entries put into (or removed from)
// home timelines directly, with no activity and no follow graph.
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/feed_arguments.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

absl::StatusOr<InsertResult> FeedEngineImpl::InsertFanoutInMemory(
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
                           KeptGroup(entry.group, FeedType::kHome),
                           {},
                           0,
                           entry.kind};
  InsertResult result;
  if (owners.size() == 1) {
    Shard& shard = ShardOf(owners[0]);
    WriterLock lock(&shard.mu());
    shard.Put({owners[0], FeedType::kHome}, stored, &result);
    if (log_ != nullptr) {
      shard.LogEntries(ChangeKind::kTimelinePut, FeedType::kHome, owners,
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
    WriterLock lock(&shard.mu());
    shard.PutMany(group, FeedType::kHome, stored, &result);
    if (log_ != nullptr) {
      shard.LogEntries(ChangeKind::kTimelinePut, FeedType::kHome, group,
                       stored);
    }
  }
  return result;
}

absl::StatusOr<InsertResult> FeedEngineImpl::InsertBatchInMemory(
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
    WriterLock lock(&shard.mu());
    for (size_t g = start[s]; g < start[s + 1]; ++g) {
      const OwnedEntry& item = entries[grouped[g]];
      const StoredEntry stored{item.entry.ts,
                               item.entry.activity_id,
                               item.entry.actor,
                               *expires_at,
                               KeptGroup(item.entry.group, FeedType::kHome),
                               {},
                               0,
                               item.entry.kind};
      shard.Put({item.owner, FeedType::kHome}, stored, &result);
      if (log_ != nullptr) {
        shard.LogEntries(ChangeKind::kTimelinePut, FeedType::kHome,
                         absl::MakeConstSpan(&item.owner, 1), stored);
      }
    }
  }
  return result;
}

absl::Status FeedEngineImpl::RemoveInMemory(EntityId owner,
                                            const EntryKey& key) {
  if (absl::Status bad = ValidateEntryKey(key, "key"); !bad.ok()) return bad;
  Shard& shard = ShardOf(owner);
  WriterLock lock(&shard.mu());
  if (!shard.RemoveKey({owner, FeedType::kHome}, key)) {
    return NoEntryWithKey(owner, key);
  }
  if (log_ != nullptr) {
    shard.LogEntries(ChangeKind::kTimelineRemove, FeedType::kHome,
                     absl::MakeConstSpan(&owner, 1),
                     StoredEntry{key.ts, key.activity_id, 0, 0, 0, {}, 0});
  }
  return absl::OkStatus();
}

}  // namespace feedcore::internal
