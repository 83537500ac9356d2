// GroupIndex: one timeline's entries indexed by group key, so that a page of
// groups (FeedEngine::ReadGroups) costs O(log n + page) instead of a walk of
// the whole timeline.
//
// Entries with the same non-zero GroupKey form one group; an entry with key
// 0 is a group of its own. A group's place in the feed is the key of its
// newest entry, so a group moves to the top when an entry joins it and down
// when its newest entry leaves. The index holds, per group, its entries
// newest first (key, actor, expiry) and how many entries each actor has in
// it, so the entry and distinct-actor counts are O(1).
//
// The index knows nothing of time: it counts every entry it holds. A
// timeline that holds expired entries not yet reclaimed must be grouped
// with GroupEntries from its visible entries instead (the engine does so),
// or have them reclaimed first (notification feeds).
//
// Seen and read (notification feeds). Each group is seen or not and read
// or not (read implies seen); an entry joining a group, or a new group,
// makes it unseen and unread. The index counts the unseen and unread
// groups as they change, so the counts are O(1); a group leaving takes its
// share with it.
//
// Memory: per entry one slot of a hash map (key -> group) and one element
// of the group's btree; per group a btree root, a small hash map of actor
// counts and one element of the order btree. docs/architecture.md has the
// measured bytes per entry.
//
// Thread safety
// -------------
// None; it belongs to a Timeline and follows its rules.
#ifndef FEEDCORE_SRC_GROUP_INDEX_H_
#define FEEDCORE_SRC_GROUP_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "feedcore/types.h"
#include "timeline_key.h"

namespace feedcore::internal {

// How much of a group a read lists (AggregationOptions).
struct GroupListLimits {
  size_t max_actors = 5;
  size_t max_entries = 10;
};

class GroupIndex {
 public:
  GroupIndex() = default;
  GroupIndex(const GroupIndex&) = delete;
  GroupIndex& operator=(const GroupIndex&) = delete;

  // Indexes a new entry. REQUIRES: its key is not indexed.
  void Add(const StoredEntry& entry);
  // The entry with this key was overwritten: its group, actor or expiry
  // may have changed. REQUIRES: its key is indexed.
  void Replace(const StoredEntry& entry);
  // Forgets the entry with `key`. REQUIRES: `key` is indexed.
  void Remove(TimelineKey key);

  // The group key of the indexed entry `key` (0 if it has none).
  // REQUIRES: `key` is indexed.
  GroupKey GroupOf(TimelineKey key) const;

  // Appends to `out`, newest first, up to `want` groups whose place is
  // older than `after` (all groups if unset), with their seen and read
  // flags.
  void Collect(std::optional<TimelineKey> after, size_t want,
               const GroupListLimits& limits,
               std::vector<FeedGroup>* out) const;

  size_t entry_count() const { return group_of_.size(); }
  size_t group_count() const { return order_.size(); }
  size_t unseen_count() const { return unseen_; }
  size_t unread_count() const { return unread_; }

  // Marks every group seen. O(groups).
  void MarkAllSeen();
  // Marks every group read and seen. O(groups).
  void MarkAllRead();
  // Marks the group holding the entry `key` read and seen; false (nothing
  // changes) if `key` is not indexed.
  bool MarkRead(TimelineKey key);

  // Calls `fn(place, read)` for every seen group, `place` being the key of
  // its newest entry. For snapshots.
  template <typename Fn>
  void ForEachSeenGroup(Fn&& fn) const {
    for (const auto& [place, group] : order_) {
      if (group->seen) fn(place, group->read);
    }
  }
  // Sets the group whose newest entry is `place` seen, and read if `read`
  // (loading a snapshot). False (nothing changes) if no group's newest
  // entry is `place`.
  bool SetSeen(TimelineKey place, bool read);

  // Checks that every map agrees with the others; false on the first
  // violation. O(n); for tests.
  bool CheckInvariants() const;

 private:
  struct Member {
    EntityId actor;
    Micros expires_at;
  };
  struct Group {
    GroupKey key = 0;
    bool seen = false;
    bool read = false;
    // Newest first.
    absl::btree_map<TimelineKey, Member, std::greater<TimelineKey>> members;
    absl::flat_hash_map<EntityId, uint32_t> actor_entries;
  };
  // Which group a key belongs in: the group key, or for key 0 the entry's
  // own key (a group of one).
  struct Slot {
    GroupKey key = 0;
    TimelineKey solo;

    friend bool operator==(const Slot&, const Slot&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Slot& s) {
      return H::combine(std::move(h), s.key, s.solo);
    }
  };
  static Slot SlotOf(const StoredEntry& entry) {
    return entry.group != 0 ? Slot{entry.group, {}}
                            : Slot{0, {entry.ts, entry.activity_id}};
  }

  void Insert(Group* group, TimelineKey key, const Member& member);
  void Erase(Group* group, TimelineKey key);
  void SetFlags(Group* group, bool seen, bool read);

  absl::flat_hash_map<Slot, std::unique_ptr<Group>> groups_;
  absl::flat_hash_map<TimelineKey, Group*> group_of_;
  // (newest key of the group) -> group, newest first.
  absl::btree_map<TimelineKey, Group*, std::greater<TimelineKey>> order_;
  // Groups with `seen` false, and with `read` false.
  size_t unseen_ = 0;
  size_t unread_ = 0;
};

// The default group key of AggregationOptions: 0 for an activity with
// neither verb nor object, otherwise a non-zero hash of verb, object and
// ts / time_bucket.
GroupKey DefaultGroupKey(const Activity& activity, Micros time_bucket);

// The groups of `entries` (visible entries of one feed, newest first, each
// key once) whose place is older than `after` (all if unset), newest first,
// at most `want`: what GroupIndex::Collect returns for a timeline of those
// entries. O(entries).
std::vector<FeedGroup> GroupEntries(const std::vector<StoredEntry>& entries,
                                    std::optional<TimelineKey> after,
                                    size_t want, const GroupListLimits& limits);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_GROUP_INDEX_H_
