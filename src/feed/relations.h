// Mute, block and per-follow kind state of one entity's graph node (shard.h
// GraphNode), and the follower snapshot that leaves out the followers
// muting an actor or filtering out the kind of its activity.
//
// A relation lives on both sides, each side in its entity's shard:
//   * the user's node (the one who hides) keeps what it blocks and mutes:
//     the lists, merged reads (which skip hidden followees), back-fill and
//     notifications (which skip a hidden actor) read it under the user's
//     shard lock;
//   * the muted actor's node keeps who mutes it (`muted_by`), read under
//     the actor's shard lock when a publish snapshots its followers, so the
//     fan-out never reaches a muter. Blocks need no such side: a block ends
//     both follow edges and Follow refuses to make them again.
// A follow's kinds (FollowOptions::kinds) live on both sides the same
// way: the follower's node keeps the filter per followee (merged reads,
// back-fill), the followee's the filter per follower (the fan-out); a
// follow of every kind keeps neither.
// An actor nobody mutes or filters pays one emptiness test per publish.
//
// Not thread-safe: guarded by the lock of the shard holding the node.
#ifndef FEEDCORE_SRC_FEED_RELATIONS_H_
#define FEEDCORE_SRC_FEED_RELATIONS_H_

#include <string>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "feedcore/types.h"

namespace feedcore::internal {

class ByteReader;
class ByteWriter;
struct FollowerSnapshot;
struct GraphNode;

// A mute as its user's node keeps it.
struct MuteState {
  bool notifications = false;
  Micros expires_at = 0;  // 0: until Unmute

  bool ActiveAt(Micros now) const {
    return expires_at == 0 || expires_at > now;
  }
  friend bool operator==(const MuteState&, const MuteState&) = default;
};

struct Relations {
  // Actors this entity blocks.
  absl::btree_set<EntityId> blocking;
  // Actors this entity mutes (expired mutes stay until Unmute or a new
  // Mute replaces them; every test goes through ActiveAt).
  absl::btree_map<EntityId, MuteState> muting;
  // Entities muting this one: muter -> the mute's expiry (0: none).
  absl::btree_map<EntityId, Micros> muted_by;
  // As a follower: followee -> the kinds its follow delivers, for follows
  // of fewer than every kind.
  absl::btree_map<EntityId, uint64_t> follow_kinds;
  // As a followee: follower -> the kinds delivered to it, likewise.
  absl::btree_map<EntityId, uint64_t> follower_kinds;

  bool empty() const {
    return blocking.empty() && muting.empty() && muted_by.empty() &&
           follow_kinds.empty() && follower_kinds.empty();
  }
  // The kinds this entity's follow of `followee` delivers (every kind when
  // it does not follow it).
  uint64_t KindsFollowed(EntityId followee) const {
    auto it = follow_kinds.find(followee);
    return it == follow_kinds.end() ? KindFilter::kEveryKind : it->second;
  }
  // The kinds this entity's activities reach `follower` with.
  uint64_t KindsDeliveredTo(EntityId follower) const {
    auto it = follower_kinds.find(follower);
    return it == follower_kinds.end() ? KindFilter::kEveryKind : it->second;
  }
  // Whether this entity's timeline hides `actor` at `now`: blocked, or
  // muted by a mute still in force.
  bool HidesInTimeline(EntityId actor, Micros now) const {
    if (blocking.empty() && muting.empty()) return false;
    if (blocking.contains(actor)) return true;
    auto it = muting.find(actor);
    return it != muting.end() && it->second.ActiveAt(now);
  }
  // Whether this entity's notification feed refuses `actor` at `now`.
  bool HidesInNotifications(EntityId actor, Micros now) const {
    if (blocking.empty() && muting.empty()) return false;
    if (blocking.contains(actor)) return true;
    auto it = muting.find(actor);
    return it != muting.end() && it->second.notifications &&
           it->second.ActiveAt(now);
  }
};

// Appends the followers of `node` that do not mute it at `now` and whose
// follow delivers `kind` to `snapshot` (without `with_dormant`, none of its
// dormant followers), grouped by shard as GraphNode::SnapshotFollowers
// does. O(followers) with one hash probe each while a mute is in force or
// a follow filters `kind` out, else as SnapshotFollowers.
void SnapshotAudience(const GraphNode& node, Micros now, bool with_dormant,
                      ActivityKind kind, FollowerSnapshot* snapshot);

// The snapshot fields of `relations` (feed_snapshot.cc): u64 n + n blocked
// ids, u64 n + n mutes (u64 actor, u8 notifications, i64 expires_at or 0),
// u64 n + n muters (u64 muter, i64 expires_at or 0), u64 n + n followee
// filters (u64 followee, u64 kinds), u64 n + n follower filters (u64
// follower, u64 kinds); each kinds non-zero and not every kind.
void WriteRelations(const Relations& relations, ByteWriter& w);
// Reads what WriteRelations wrote for `entity`'s node; false (with the
// reason in `error`) if it is malformed.
bool ReadRelations(EntityId entity, ByteReader& r, Relations* relations,
                   std::string* error);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_FEED_RELATIONS_H_
