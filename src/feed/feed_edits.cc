// FeedEngineImpl's edits and pins.
//
// An edit replaces the payload the activity store holds once: every feed
// holds the activity by key and hydrates from the store, so an edit is one
// store lookup under its shard's lock, however many feeds hold it.
//
// Pins live in the owner's graph node (GraphNode::pinned), in the owner's
// shard, with the key and expiry the activity had when pinned. Pin checks
// the activity in the store while it holds the owner's shard lock; Retract
// sets the tombstone first and takes that lock afterwards to drop the pin,
// so a pin and a retract racing end with no pin of a retracted activity.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "contract/feed_arguments.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {
namespace {

ChangeRecord PinRecord(ChangeKind kind, EntityId owner,
                       const PinnedEntry& pin) {
  ChangeRecord record;
  record.kind = kind;
  record.entity = owner;
  record.entry.ts = pin.key.ts;
  record.entry.activity_id = pin.key.activity_id;
  record.entry.actor = owner;
  record.entry.expires_at = pin.expires_at;
  return record;
}

}  // namespace

absl::StatusOr<Micros> FeedEngineImpl::EditActivityInMemory(
    EntityId actor, ActivityId activity_id, std::string_view payload) {
  if (absl::Status bad = ValidateEditedPayload(
          absl::string_view(payload.data(), payload.size()),
          options_.max_payload_bytes);
      !bad.ok()) {
    return bad;
  }
  return store_.Edit(activity_id, actor, payload, *options_.clock);
}

absl::StatusOr<bool> FeedEngineImpl::PinInMemory(EntityId owner,
                                                 ActivityId activity_id) {
  Shard& shard = ShardOf(owner);
  WriterLock lock(&shard.mu());
  const Micros now = options_.clock->Now();
  const std::optional<ActivityFacts> facts = store_.FindLive(activity_id, now);
  if (!facts.has_value() || facts->actor != owner) {
    return absl::NotFoundError(
        absl::StrCat("entity ", owner, " has no visible published activity ",
                     activity_id, " to pin"));
  }
  GraphNode& pinner = shard.Node(owner);
  // The expired pins go first, so that they never pile up nor count.
  for (auto it = pinner.pinned.begin(); it != pinner.pinned.end();) {
    if (now < it->expires_at) {
      ++it;
      continue;
    }
    if (log_ != nullptr) {
      shard.Log(PinRecord(ChangeKind::kPinRemove, owner, *it));
    }
    it = pinner.pinned.erase(it);
  }
  for (const PinnedEntry& pin : pinner.pinned) {
    if (pin.key.activity_id == activity_id) return false;
  }
  if (pinner.pinned.size() >= kMaxPinnedEntries) {
    return absl::FailedPreconditionError(
        absl::StrCat("entity ", owner, " has ", kMaxPinnedEntries,
                     " pins already (kMaxPinnedEntries); unpin one first"));
  }
  const PinnedEntry pin{{facts->ts, activity_id}, facts->expires_at};
  pinner.pinned.insert(pinner.pinned.begin(), pin);
  if (log_ != nullptr) shard.Log(PinRecord(ChangeKind::kPinAdd, owner, pin));
  return true;
}

absl::StatusOr<bool> FeedEngineImpl::UnpinInMemory(EntityId owner,
                                                   ActivityId activity_id) {
  Shard& shard = ShardOf(owner);
  WriterLock lock(&shard.mu());
  return DropPinLocked(shard, owner, activity_id);
}

bool FeedEngineImpl::DropPinLocked(Shard& shard, EntityId owner,
                                   ActivityId activity_id) {
  GraphNode* node = shard.FindNode(owner);
  if (node == nullptr) return false;
  auto it = std::find_if(node->pinned.begin(), node->pinned.end(),
                         [activity_id](const PinnedEntry& pin) {
                           return pin.key.activity_id == activity_id;
                         });
  if (it == node->pinned.end()) return false;
  if (log_ != nullptr) shard.Log(PinRecord(ChangeKind::kPinRemove, owner, *it));
  node->pinned.erase(it);
  shard.MaybeEraseNode(owner);
  return true;
}

absl::StatusOr<std::vector<StoredEntry>> FeedEngineImpl::ReadPinned(
    EntityId owner, bool hydrate) const {
  std::vector<StoredEntry> entries;
  {
    const Shard& shard = ShardOf(owner);
    ReaderLock lock(&shard.mu());
    const GraphNode* node = shard.FindNode(owner);
    if (node == nullptr) return entries;
    const Micros now = options_.clock->Now();
    for (const PinnedEntry& pin : node->pinned) {
      if (now >= pin.expires_at) continue;
      StoredEntry entry;
      entry.ts = pin.key.ts;
      entry.activity_id = pin.key.activity_id;
      entry.actor = owner;
      entry.expires_at = pin.expires_at;
      entries.push_back(std::move(entry));
    }
  }
  // A pin keeps the key; the kind comes from the activity.
  store_.Hydrate(&entries, /*payloads=*/hydrate, /*kinds=*/true);
  return entries;
}

absl::Status FeedEngineImpl::ApplyEditChange(const ChangeRecord& record) {
  auto malformed = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("change record ", record.sequence, " (kind ",
                     static_cast<int>(record.kind), "): ", what));
  };
  if (record.kind == ChangeKind::kActivityEdit) {
    if (record.domain !=
        options_.shards + store_.ShardOf(record.entry.activity_id)) {
      return malformed("domain is not the store shard of the activity");
    }
    if (record.entry.edited_at <= 0) return malformed("no edit time");
    // An activity the source held but this engine does not (it expired
    // here first) has nothing to edit, as a retract of it changes nothing.
    store_.RestoreEdit(record.entry.activity_id, record.entry.payload,
                       record.entry.edited_at);
    return absl::OkStatus();
  }
  if (record.domain != ShardIndex(record.entity)) {
    return malformed("domain is not the shard of the pin's owner");
  }
  if (record.entry.ts < 0) return malformed("timestamp below zero");
  Shard& shard = ShardOf(record.entity);
  WriterLock lock(&shard.mu());
  if (record.kind == ChangeKind::kPinRemove) {
    DropPinLocked(shard, record.entity, record.entry.activity_id);
    return absl::OkStatus();
  }
  GraphNode& node = shard.Node(record.entity);
  const PinnedEntry pin{{record.entry.ts, record.entry.activity_id},
                        record.entry.expires_at};
  std::erase_if(node.pinned, [&](const PinnedEntry& held) {
    return held.key.activity_id == pin.key.activity_id;
  });
  node.pinned.insert(node.pinned.begin(), pin);
  if (log_ != nullptr) {
    shard.Log(PinRecord(ChangeKind::kPinAdd, record.entity, pin));
  }
  return absl::OkStatus();
}

}  // namespace feedcore::internal
