// FeedEngineImpl's inactive readers (EngineOptions::inactive_after): a
// reader that stopped reading is made dormant (each followee it copied
// becomes a dormant merge, its copies of it leave, and the followee's
// publishes in timestamp order skip it), and its next read rebuilds the
// copies.
//
// Both run under the reader's follow stripe, so they never interleave with
// each other or with a Follow, Unfollow, Mute, Unmute, Block or Unblock of
// the reader. Each visits the reader's shard and its followees' shards one
// lock at a time, in an order that keeps every read in between exact: a
// followee is merged before its copies leave or stop arriving, and copied
// again before its merge ends; meanwhile reads drop the duplicates.
#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "contract/page_merger.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {
namespace {

// Every entry held counts, expired ones too, as in a timeline's cap.
constexpr Micros kNothingExpired = std::numeric_limits<Micros>::min();

ChangeRecord DormantFolloweeRecord(EntityId reader, EntityId followee,
                                   bool dormant,
                                   std::optional<EntryKey> boundary) {
  ChangeRecord record;
  record.kind = ChangeKind::kDormantFollowee;
  record.entity = reader;
  record.other = followee;
  record.merged_at_read = dormant;
  if (boundary.has_value()) {
    record.keys.push_back({boundary->ts, boundary->activity_id});
  }
  return record;
}

ChangeRecord DormantFollowerRecord(EntityId followee, EntityId reader,
                                   bool dormant) {
  ChangeRecord record;
  record.kind = ChangeKind::kDormantFollower;
  record.entity = followee;
  record.other = reader;
  record.merged_at_read = dormant;
  return record;
}

// Whether MakeDormant would merge `followee` of `node` at `now`: copied,
// and not hidden. A followee the reader blocks or mutes stays copied, as
// it is for a reader that stays materialized: its publishes are not
// delivered while it is hidden, and never show after a mute ends. A merge
// would show them once a mute expires, with nothing run at the expiry
// that could move its boundary.
bool MergesWhenDormant(const GraphNode& node, EntityId followee, Micros now) {
  return node.FindMerged(followee) == nullptr &&
         !node.relations.HidesInTimeline(followee, now);
}

// Whether `node` has a followee MakeDormant would merge at `now`.
bool HasFolloweeToRelease(const GraphNode& node, Micros now) {
  if (node.following.size() == node.hybrid_following.size()) return false;
  if (node.relations.blocking.empty() && node.relations.muting.empty()) {
    return true;
  }
  return std::any_of(node.following.begin(), node.following.end(),
                     [&](EntityId followee) {
                       return MergesWhenDormant(node, followee, now);
                     });
}

}  // namespace

absl::StatusOr<size_t> FeedEngineImpl::ReleaseInactiveReadersInMemory(
    size_t budget) {
  if (options_.inactive_after == 0) {
    return absl::FailedPreconditionError(
        "ReleaseInactiveReaders needs EngineOptions.inactive_after (it is 0: "
        "inactive readers are off)");
  }
  const Micros now = options_.clock->Now();
  const Micros cutoff = now - options_.inactive_after;
  const size_t shard_count = options_.shards;
  const size_t first =
      next_release_shard_.fetch_add(1, std::memory_order_relaxed) % shard_count;
  size_t released = 0;
  std::vector<EntityId> candidates;
  for (size_t k = 0; k < shard_count && released < budget; ++k) {
    const Shard& shard = shards_[(first + k) % shard_count];
    candidates.clear();
    {
      ReaderLock lock(&shard.mu());
      shard.ForEachNode([&](EntityId entity, const GraphNode& node) {
        if (node.last_read.Load() < cutoff && HasFolloweeToRelease(node, now)) {
          candidates.push_back(entity);
        }
      });
    }
    for (const EntityId reader : candidates) {
      if (released == budget) break;
      released += MakeDormant(reader, cutoff) ? 1 : 0;
    }
  }
  return released;
}

bool FeedEngineImpl::MakeDormant(EntityId reader, Micros cutoff) {
  std::lock_guard<std::mutex> stripe(FollowStripe(reader));
  Shard& home = ShardOf(reader);
  // One instant for what the reader hides: its relations cannot change
  // under the stripe, but a mute can expire.
  const Micros now = options_.clock->Now();
  std::vector<EntityId> followees;
  {
    const Shard& shard = home;
    ReaderLock lock(&shard.mu());
    const GraphNode* node = shard.FindNode(reader);
    if (node == nullptr || node->last_read.Load() >= cutoff) return false;
    for (const EntityId followee : node->following) {
      if (MergesWhenDormant(*node, followee, now)) {
        followees.push_back(followee);
      }
    }
  }
  if (followees.empty()) return false;
  const size_t n = followees.size();
  const auto by_followee = RunsByShard(n, [&](size_t i) {
    return static_cast<uint32_t>(ShardIndex(followees[i]));
  });
  // Where each merge begins for now: just above what the followee has
  // published. Everything older the reader holds as copies.
  std::vector<EntryKey> top(n, EntryKey::Min());
  for (const auto& [s, run] : by_followee) {
    const Shard& shard = shards_[s];
    ReaderLock lock(&shard.mu());
    for (const size_t i : run) {
      if (const GraphNode* node = shard.FindNode(followees[i])) {
        top[i] = node->MergeBoundaryNow();
      }
    }
  }
  // The reader merges each followee from there (copies may still arrive:
  // reads drop the duplicates) and lists the visible copies it holds
  // below, oldest first.
  std::vector<bool> merged(n, false);
  std::vector<std::vector<EntryKey>> held(n);
  {
    WriterLock lock(&home.mu());
    GraphNode* node = home.FindNode(reader);
    if (node == nullptr || node->last_read.Load() >= cutoff) return false;
    absl::flat_hash_map<EntityId, size_t> position;
    for (size_t i = 0; i < n; ++i) {
      // A followee that became merged at read meanwhile is merged already.
      if (!node->AddMerged(followees[i], top[i], /*dormant=*/true)) continue;
      merged[i] = true;
      position[followees[i]] = i;
      home.RemoveActor(reader, followees[i], FeedType::kHome, top[i]);
      if (log_ != nullptr) {
        home.Log(DormantFolloweeRecord(reader, followees[i], true, top[i]));
      }
    }
    if (position.empty()) return false;
    if (const Timeline* timeline =
            home.FindTimeline({reader, FeedType::kHome})) {
      std::vector<StoredEntry> entries;
      timeline->Collect(ReadOrder::kOldestFirst, EntryKey::Min(),
                        EntryKey::Max(), now, timeline->size(), &entries);
      for (const StoredEntry& entry : entries) {
        if (auto it = position.find(entry.actor); it != position.end()) {
          held[it->second].push_back(entry.key());
        }
      }
    }
  }
  // In each followee's shard: in-order publishes stop copying to the
  // reader, and the copies held are checked against the own feed. They
  // differ where the reader removed one, hid the followee for a while, or
  // a delivery is still in flight; the merge then keeps beginning at `top`.
  const FollowerEdge edge{static_cast<uint32_t>(ShardIndex(reader)), reader};
  std::vector<bool> matches(n, false);
  for (const auto& [s, run] : by_followee) {
    Shard& shard = shards_[s];
    WriterLock lock(&shard.mu());
    for (const size_t i : run) {
      if (!merged[i]) continue;
      GraphNode* node = shard.FindNode(followees[i]);
      if (node == nullptr || !node->HasFollower(edge)) continue;
      if (node->SetDormantFollower(edge, true) && log_ != nullptr) {
        shard.Log(DormantFollowerRecord(followees[i], reader, true));
      }
      const std::optional<EntryKey> below = OlderKey(top[i]);
      const Timeline* own = shard.FindTimeline({followees[i], FeedType::kOwn});
      if (held[i].empty() || !below.has_value() || own == nullptr) continue;
      std::vector<StoredEntry> shown;
      own->Collect(ReadOrder::kOldestFirst, held[i].front(), *below, now,
                   held[i].size() + 1, &shown,
                   node->relations.KindsDeliveredTo(reader));
      matches[i] = std::equal(
          shown.begin(), shown.end(), held[i].begin(), held[i].end(),
          [](const StoredEntry& e, EntryKey key) { return e.key() == key; });
    }
  }
  // The merge of each matching followee moves down to its oldest copy,
  // unless something moved it meanwhile (Unmute), and the copies leave.
  WriterLock lock(&home.mu());
  GraphNode* node = home.FindNode(reader);
  for (size_t i = 0; i < n && node != nullptr; ++i) {
    if (!matches[i]) continue;
    MergedFollowee* merge = node->FindMerged(followees[i]);
    if (merge == nullptr || !merge->dormant || merge->boundary != top[i]) {
      continue;
    }
    merge->boundary = held[i].front();
    home.RemoveActor(reader, followees[i], FeedType::kHome, held[i].front());
    if (log_ != nullptr) {
      home.Log(
          DormantFolloweeRecord(reader, followees[i], true, held[i].front()));
    }
  }
  return true;
}

bool FeedEngineImpl::RebuildReader(EntityId reader) {
  std::unique_lock<std::mutex> stripe(FollowStripe(reader), std::try_to_lock);
  if (!stripe.owns_lock()) return false;
  return RebuildDormant(reader);
}

bool FeedEngineImpl::RebuildDormant(EntityId reader) {
  Shard& home = ShardOf(reader);
  // What the reader hides is decided once: its relations cannot change
  // under the stripe, but a mute can expire meanwhile.
  const Micros now = options_.clock->Now();
  std::vector<MergedFollowee> dormant;
  std::vector<bool> hidden;
  {
    const Shard& shard = home;
    ReaderLock lock(&shard.mu());
    const GraphNode* node = shard.FindNode(reader);
    if (node == nullptr || node->dormant_merges == 0) return false;
    for (const MergedFollowee& merge : node->hybrid_following) {
      if (!merge.dormant) continue;
      dormant.push_back(merge);
      hidden.push_back(node->relations.HidesInTimeline(merge.actor, now));
    }
  }
  const size_t n = dormant.size();
  // A delivery like a back-fill: Unfollow and Retract wait for it.
  std::vector<std::unique_ptr<FanoutTicket>> tickets;
  tickets.reserve(n);
  for (const MergedFollowee& merge : dormant) {
    tickets.push_back(std::make_unique<FanoutTicket>(&tracker_, merge.actor));
  }
  const auto by_followee = RunsByShard(n, [&](size_t i) {
    return static_cast<uint32_t>(ShardIndex(dormant[i].actor));
  });
  // In each followee's shard: its publishes copy to the reader again, and
  // what the merge shows is read (every entry held, expired ones too, as
  // copies would hold them). A publish from then on is either in what is
  // read or delivered. A followee the reader hides shows nothing, so none
  // of its entries is read: counted below, they would push shown entries
  // out of the newest `cap`.
  const size_t cap = options_.max_timeline_length;
  const FollowerEdge edge{static_cast<uint32_t>(ShardIndex(reader)), reader};
  std::vector<StoredEntry> copies;
  std::vector<bool> stays_merged(n, false);
  for (const auto& [s, run] : by_followee) {
    Shard& shard = shards_[s];
    WriterLock lock(&shard.mu());
    for (const size_t i : run) {
      const EntityId actor = dormant[i].actor;
      GraphNode* node = shard.FindNode(actor);
      if (node == nullptr) continue;
      if (node->SetDormantFollower(edge, false) && log_ != nullptr) {
        shard.Log(DormantFollowerRecord(actor, reader, false));
      }
      if (node->hybrid || node->becoming_hybrid) {
        stays_merged[i] = true;  // merged at read for every follower now
        continue;
      }
      if (hidden[i]) continue;
      if (const Timeline* own = shard.FindTimeline({actor, FeedType::kOwn})) {
        own->Collect(ReadOrder::kNewestFirst, dormant[i].boundary,
                     EntryKey::Max(), kNothingExpired, cap, &copies,
                     node->relations.KindsDeliveredTo(reader));
      }
    }
  }
  // Only the newest `cap` can be kept: the timeline's cap then leaves the
  // newest of these and of what it holds, which is what the merge showed.
  auto newer = [](const StoredEntry& a, const StoredEntry& b) {
    return b.key() < a.key();
  };
  if (copies.size() > cap) {
    std::nth_element(copies.begin(), copies.begin() + cap, copies.end(), newer);
    copies.resize(cap);
  }
  // Retracted activities are copied to no one (BackfillPairs says why).
  store_.KeepLive(&copies);
  // Oldest first: each put then lands in front of what is already held.
  std::sort(copies.rbegin(), copies.rend(), newer);
  // The copies go in and the merges end under one hold of the reader's
  // lock: a read sees one or the other, never neither.
  WriterLock lock(&home.mu());
  GraphNode* node = home.FindNode(reader);
  if (node == nullptr) return true;
  // The merges that end (under the stripe, all of them), and the actors
  // whose entries become copies: what the reader hides was neither merged
  // nor would have been copied.
  std::vector<bool> ends(n, false);
  absl::flat_hash_set<EntityId> copied;
  for (size_t i = 0; i < n; ++i) {
    const MergedFollowee* merge = node->FindMerged(dormant[i].actor);
    ends[i] = merge != nullptr && merge->dormant;
    if (ends[i] && !stays_merged[i] && !hidden[i]) {
      copied.insert(dormant[i].actor);
    }
  }
  // Copies first, as the records replay them: a replica's reader never
  // sees a merge ended before its copies are in.
  InsertResult ignored;
  for (const StoredEntry& entry : copies) {
    if (!copied.contains(entry.actor)) continue;
    home.Put({reader, FeedType::kHome}, entry, &ignored);
    if (log_ != nullptr) {
      home.LogEntries(ChangeKind::kTimelinePut, FeedType::kHome,
                      absl::MakeConstSpan(&reader, 1), entry);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (!ends[i]) continue;
    const EntityId actor = dormant[i].actor;
    std::optional<EntryKey> kept_merge;
    if (stays_merged[i]) {
      kept_merge = node->FindMerged(actor)->boundary;
      node->EndDormantMerge(actor);
    } else {
      node->EraseMerged(actor);
    }
    if (log_ != nullptr) {
      home.Log(DormantFolloweeRecord(reader, actor, false, kept_merge));
    }
  }
  return true;
}

void FeedEngineImpl::NoteTimelineRead(EntityId reader) const {
  if (options_.inactive_after == 0) return;
  bool dormant = false;
  {
    const Shard& shard = ShardOf(reader);
    ReaderLock lock(&shard.mu());
    const GraphNode* node = shard.FindNode(reader);
    if (node == nullptr) return;
    node->last_read.Store(options_.clock->Now());
    dormant = node->dormant_merges > 0;
  }
  // A rebuild changes how the reader's entries are held, never which
  // entries any read returns: logically a read.
  if (dormant) const_cast<FeedEngineImpl*>(this)->RebuildReader(reader);
}

absl::Status FeedEngineImpl::ApplyInactiveChange(const ChangeRecord& record) {
  auto malformed = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("change record ", record.sequence, " (kind ",
                     static_cast<int>(record.kind), "): ", what));
  };
  if (record.entity == record.other) {
    return malformed("an entity cannot follow itself");
  }
  if (record.domain != ShardIndex(record.entity)) {
    return malformed("domain is not the shard of `entity`");
  }
  const bool dormant = record.merged_at_read;
  const bool followee_record = record.kind == ChangeKind::kDormantFollowee;
  if (followee_record && dormant && record.keys.size() != 1) {
    return malformed("a dormant merge needs its boundary in keys[0]");
  }
  if (record.keys.size() > (followee_record ? 1 : 0) ||
      (!record.keys.empty() && record.keys[0].ts < 0)) {
    return malformed("unexpected keys");
  }
  Shard& shard = ShardOf(record.entity);
  WriterLock lock(&shard.mu());
  GraphNode* node = shard.FindNode(record.entity);
  if (!followee_record) {
    const FollowerEdge edge{static_cast<uint32_t>(ShardIndex(record.other)),
                            record.other};
    if (node != nullptr) node->SetDormantFollower(edge, dormant);
    if (log_ != nullptr) {
      shard.Log(DormantFollowerRecord(record.entity, record.other, dormant));
    }
    return absl::OkStatus();
  }
  std::optional<EntryKey> boundary;
  if (!record.keys.empty()) {
    boundary = EntryKey{record.keys[0].ts, record.keys[0].activity_id};
  }
  if (node != nullptr && node->following.contains(record.other)) {
    MergedFollowee* merge = node->FindMerged(record.other);
    if (dormant) {
      if (merge == nullptr) {
        node->AddMerged(record.other, *boundary, /*dormant=*/true);
      } else if (merge->dormant) {
        merge->boundary = *boundary;
      }
      shard.RemoveActor(record.entity, record.other, FeedType::kHome,
                        *boundary);
    } else if (merge != nullptr && merge->dormant) {
      if (boundary.has_value()) {
        node->EndDormantMerge(record.other);
      } else {
        node->EraseMerged(record.other);
      }
    }
  }
  if (log_ != nullptr) {
    shard.Log(
        DormantFolloweeRecord(record.entity, record.other, dormant, boundary));
  }
  return absl::OkStatus();
}

}  // namespace feedcore::internal
