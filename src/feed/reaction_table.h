// ReactionTable: the reactions (FeedReactions) to the activities of one
// activity-store shard, kept beside them.
//
// Two indexes of the same set of (activity, user, kind, time):
//   * by (activity, user), a hash map to the kinds that user reacted with
//     and when: React's "already there?" and GetOwnReactions' lookups are
//     one probe each, whatever the number of kinds;
//   * by (activity, kind, time, user), a B-tree: ReadReactors pages it from
//     the most recent reaction back, and a retract or eviction drops an
//     activity's reactions as one range.
// Notices (ReactOptions::notice_id) are a third, small map, holding only
// the reactions that have one.
//
// Not thread-safe: guarded by the lock of the store shard that holds it.
#ifndef FEEDCORE_SRC_FEED_REACTION_TABLE_H_
#define FEEDCORE_SRC_FEED_REACTION_TABLE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "feedcore/social.h"
#include "feedcore/types.h"

namespace feedcore::internal {

// One reaction, as snapshots and replay carry it.
struct ReactionFacts {
  ActivityId activity = 0;
  EntityId user = 0;
  ReactionKind kind = 0;
  Micros reacted_at = 0;
  ActivityId notice_id = 0;  // 0: none
};

class ReactionTable {
 public:
  // Adds the reaction to an activity that expires at `expires_at`; false
  // (nothing changes) if it is there.
  bool Add(const ReactionFacts& reaction, Micros expires_at);
  // Removes `user`'s reaction `kind` to `activity` and returns its notice
  // id (0: none); nullopt if there was none.
  std::optional<ActivityId> Remove(ActivityId activity, EntityId user,
                                   ReactionKind kind);
  // The kinds `user` reacted to `activity` with.
  ReactionKinds KindsOf(ActivityId activity, EntityId user) const;
  // The same, 0 once the activity has expired at `now`: a retracted or
  // evicted activity has no reactions left, so this one probe answers
  // GetOwnReactions without the activity's own entry.
  ReactionKinds LiveKindsOf(ActivityId activity, EntityId user,
                            Micros now) const {
    auto it = by_user_.find(UserKey{activity, user});
    if (it == by_user_.end() || it->second.expires_at <= now) return 0;
    return it->second.kinds;
  }
  // The notice id of `user`'s reaction `kind` to `activity`; 0 for none
  // (or no such reaction).
  ActivityId NoticeOf(ActivityId activity, EntityId user,
                      ReactionKind kind) const;
  // Starts loading the slot KindsOf(activity, user) reads.
  void Prefetch(ActivityId activity, EntityId user) const {
    by_user_.prefetch(UserKey{activity, user});
  }
  // Up to `limit` reactors of (`activity`, `kind`), the most recent first,
  // from just below `after` on (nullopt: from the most recent).
  std::vector<Reactor> Page(ActivityId activity, ReactionKind kind,
                            const std::optional<Reactor>& after,
                            size_t limit) const;
  // Drops every reaction to `activity`, appending their notice ids to
  // `notices`; returns how many it dropped.
  size_t DropActivity(ActivityId activity, std::vector<ActivityId>* notices);

  // Calls fn(const ReactionFacts&) for every reaction, by activity, kind
  // and time.
  template <typename Fn>
  void Visit(Fn&& fn) const {
    for (const TimeKey& key : by_time_) fn(FactsOf(key));
  }

  size_t size() const { return by_time_.size(); }
  // The bytes the three indexes hold, as EngineStats counts them.
  size_t bytes_used() const;

 private:
  struct UserKey {
    ActivityId activity;
    EntityId user;
    friend bool operator==(const UserKey&, const UserKey&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const UserKey& k) {
      return H::combine(std::move(h), k.activity, k.user);
    }
  };
  struct UserReactions {
    ReactionKinds kinds = 0;
    Micros expires_at = 0;  // the activity's
    // When each kind of `kinds` was made: the B-tree key to erase.
    std::array<Micros, kActivityCounterCount> at = {};
  };
  // Ordered by activity, kind, then time and user, so a kind's reactors
  // read backwards from the end of its range are the most recent first.
  using TimeKey = std::tuple<ActivityId, uint8_t, Micros, EntityId>;
  struct NoticeKey {
    ActivityId activity;
    EntityId user;
    uint8_t kind;
    friend bool operator==(const NoticeKey&, const NoticeKey&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const NoticeKey& k) {
      return H::combine(std::move(h), k.activity, k.user, k.kind);
    }
  };

  ReactionFacts FactsOf(const TimeKey& key) const;

  absl::flat_hash_map<UserKey, UserReactions> by_user_;
  absl::btree_set<TimeKey> by_time_;
  absl::flat_hash_map<NoticeKey, ActivityId> notices_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_FEED_REACTION_TABLE_H_
