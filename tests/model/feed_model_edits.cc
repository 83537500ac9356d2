// FeedModel's edits and pins (feed_model.h).
#include <algorithm>

#include "feedcore/feed_facets.h"
#include "model/feed_model.h"

namespace feedcore::testing {

absl::StatusOr<Micros> FeedModel::EditActivity(EntityId actor, ActivityId id,
                                               const std::string& payload,
                                               Micros now) {
  if (payload.size() > max_payload_bytes_) {
    return absl::InvalidArgumentError("payload too large");
  }
  auto it = activities_.find(id);
  if (it == activities_.end() || it->second.retracted ||
      it->second.expires_at <= now) {
    return absl::NotFoundError("no such published activity");
  }
  Activity& a = it->second;
  if (a.actor != actor) return absl::PermissionDeniedError("another actor");
  a.payload = payload;
  a.edited_at = std::max<Micros>(now, 1);
  return a.edited_at;
}

absl::StatusOr<bool> FeedModel::Pin(EntityId owner, ActivityId id, Micros now) {
  auto it = activities_.find(id);
  if (it == activities_.end() || it->second.retracted ||
      it->second.expires_at <= now || it->second.actor != owner) {
    return absl::NotFoundError("nothing of this owner to pin");
  }
  std::vector<PinnedKey>& pins = pins_[owner];
  std::erase_if(pins,
                [now](const PinnedKey& pin) { return pin.expires_at <= now; });
  for (const PinnedKey& pin : pins) {
    if (pin.key.second == id) return false;
  }
  if (pins.size() >= kMaxPinnedEntries) {
    return absl::FailedPreconditionError("too many pins");
  }
  pins.insert(pins.begin(),
              PinnedKey{{it->second.ts, id}, it->second.expires_at});
  return true;
}

bool FeedModel::Unpin(EntityId owner, ActivityId id) {
  auto it = pins_.find(owner);
  if (it == pins_.end()) return false;
  return std::erase_if(it->second, [id](const PinnedKey& pin) {
           return pin.key.second == id;
         }) > 0;
}

std::vector<StoredEntry> FeedModel::Pinned(EntityId owner, Micros now,
                                           bool hydrate) const {
  std::vector<StoredEntry> out;
  auto it = pins_.find(owner);
  if (it == pins_.end()) return out;
  for (const PinnedKey& pin : it->second) {
    if (pin.expires_at <= now) continue;
    StoredEntry e;
    e.ts = pin.key.first;
    e.activity_id = pin.key.second;
    e.actor = owner;
    e.expires_at = pin.expires_at;
    if (auto a = activities_.find(e.activity_id); a != activities_.end()) {
      e.kind = a->second.kind;
    }
    if (hydrate) {
      e.payload = Payload(e.activity_id);
      e.edited_at = EditedAt(e.activity_id);
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace feedcore::testing
