#include "feed/relations.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/byte_codec.h"
#include "feed/shard.h"

namespace feedcore::internal {

void SnapshotAudience(const GraphNode& node, Micros now, bool with_dormant,
                      ActivityKind kind, FollowerSnapshot* snapshot) {
  const auto& muted_by = node.relations.muted_by;
  const auto& follower_kinds = node.relations.follower_kinds;
  if (muted_by.empty() && follower_kinds.empty()) {
    return node.SnapshotFollowers(snapshot, false, with_dormant);
  }
  absl::flat_hash_set<EntityId> hidden;
  for (const auto& [muter, expires_at] : muted_by) {
    if (MuteState{false, expires_at}.ActiveAt(now)) hidden.insert(muter);
  }
  for (const auto& [follower, kinds] : follower_kinds) {
    if (((kinds >> kind) & 1) == 0) hidden.insert(follower);
  }
  if (hidden.empty()) {
    return node.SnapshotFollowers(snapshot, false, with_dormant);
  }
  FollowerSnapshot all;
  node.SnapshotFollowers(&all, false, with_dormant);
  snapshot->ids.reserve(snapshot->ids.size() + all.ids.size());
  for (size_t g = 0; g < all.groups(); ++g) {
    bool opened = false;
    for (size_t i = all.starts[g]; i < all.starts[g + 1]; ++i) {
      if (hidden.contains(all.ids[i])) continue;
      if (!opened) {
        snapshot->starts.push_back(snapshot->ids.size());
        snapshot->shard_of_group.push_back(all.shard_of_group[g]);
        opened = true;
      }
      snapshot->ids.push_back(all.ids[i]);
    }
  }
  // SnapshotFollowers always closes the last group, even with none.
  if (snapshot->starts.size() == snapshot->shard_of_group.size()) {
    snapshot->starts.push_back(snapshot->ids.size());
  } else {
    snapshot->starts.back() = snapshot->ids.size();
  }
}

void WriteRelations(const Relations& relations, ByteWriter& w) {
  w.U64(relations.blocking.size());
  for (const EntityId actor : relations.blocking) w.U64(actor);
  w.U64(relations.muting.size());
  for (const auto& [actor, mute] : relations.muting) {
    w.U64(actor);
    w.U8(mute.notifications ? 1 : 0);
    w.I64(mute.expires_at);
  }
  w.U64(relations.muted_by.size());
  for (const auto& [muter, expires_at] : relations.muted_by) {
    w.U64(muter);
    w.I64(expires_at);
  }
  for (const auto* filters :
       {&relations.follow_kinds, &relations.follower_kinds}) {
    w.U64(filters->size());
    for (const auto& [other, kinds] : *filters) {
      w.U64(other);
      w.U64(kinds);
    }
  }
}

bool ReadRelations(EntityId entity, ByteReader& r, Relations* relations,
                   std::string* error) {
  const uint64_t blocked = r.Count(sizeof(EntityId));
  for (uint64_t i = 0; i < blocked && r.ok(); ++i) {
    relations->blocking.insert(r.U64());
  }
  const uint64_t mutes = r.Count(sizeof(EntityId) + 1 + sizeof(Micros));
  for (uint64_t i = 0; i < mutes && r.ok(); ++i) {
    const EntityId actor = r.U64();
    const uint8_t notifications = r.U8();
    const Micros expires_at = r.I64();
    if (notifications > 1 || expires_at < 0) {
      *error =
          absl::StrCat("entity ", entity, " has a malformed mute of ", actor);
      return false;
    }
    relations->muting[actor] = {notifications == 1, expires_at};
  }
  const uint64_t muters = r.Count(sizeof(EntityId) + sizeof(Micros));
  for (uint64_t i = 0; i < muters && r.ok(); ++i) {
    const EntityId muter = r.U64();
    const Micros expires_at = r.I64();
    if (expires_at < 0) {
      *error =
          absl::StrCat("entity ", entity, " has a malformed mute by ", muter);
      return false;
    }
    relations->muted_by[muter] = expires_at;
  }
  for (auto* filters : {&relations->follow_kinds, &relations->follower_kinds}) {
    const uint64_t count = r.Count(2 * sizeof(uint64_t));
    for (uint64_t i = 0; i < count && r.ok(); ++i) {
      const EntityId other = r.U64();
      const uint64_t kinds = r.U64();
      if (kinds == 0 || kinds == KindFilter::kEveryKind || other == entity ||
          !filters->emplace(other, kinds).second) {
        *error = absl::StrCat("entity ", entity,
                              " has a malformed follow filter with ", other);
        return false;
      }
    }
  }
  if (!r.ok()) return true;  // the caller reports the truncation
  if (relations->blocking.size() != blocked ||
      relations->muting.size() != mutes ||
      relations->muted_by.size() != muters) {
    *error = absl::StrCat("entity ", entity, " lists a relation twice");
    return false;
  }
  if (relations->blocking.contains(entity) ||
      relations->muting.contains(entity) ||
      relations->muted_by.contains(entity)) {
    *error = absl::StrCat("entity ", entity, " hides itself");
    return false;
  }
  return true;
}

}  // namespace feedcore::internal
