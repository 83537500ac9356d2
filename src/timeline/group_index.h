// GroupIndex: one timeline's entries indexed by group key, so that a page of
// groups (FeedEngine::ReadGroups) costs O(log n + page) instead of a walk of
// the whole timeline.
//
// Entries with the same non-zero GroupKey form one group; an entry with key
// 0 is a group of its own. A group's place in the feed is the key of its
// newest entry, so a group moves to the top when an entry joins it and down
// when its newest entry leaves. Each group holds its entries (key, actor,
// expiry) oldest first in one array, inline while it has one entry, and
// the number of distinct actors among them, so the entry and actor counts
// are O(1). The timeline keeps each entry's group key in its node and
// passes it in, so the index needs no map from entry to group.
//
// Costs: adding the newest entry of a group appends; any other insert or
// removal shifts the group's array, and a change of actor scans it for the
// actor: O(group size). Groups are small in a feed (a few entries on
// average); a group as large as the timeline makes these O(timeline).
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
// Memory: per group one allocation (the group with its first entry), a
// slot of the hash map from group key to group and an element of the
// order btree; per further entry 32 bytes of the group's array.
//
// Thread safety
// -------------
// None; it belongs to a Timeline and follows its rules.
#ifndef FEEDCORE_SRC_TIMELINE_GROUP_INDEX_H_
#define FEEDCORE_SRC_TIMELINE_GROUP_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "contract/group_entries.h"
#include "feedcore/types.h"

namespace feedcore::internal {

class GroupIndex {
 public:
  GroupIndex() = default;
  GroupIndex(const GroupIndex&) = delete;
  GroupIndex& operator=(const GroupIndex&) = delete;

  // Indexes a new entry in group `entry.group`. REQUIRES: its key is not
  // indexed.
  void Add(const StoredEntry& entry);
  // The entry with this key, indexed in group `old_group`, was
  // overwritten: its group, actor or expiry may have changed.
  void Replace(GroupKey old_group, const StoredEntry& entry);
  // Forgets the entry `key` of group `group`. REQUIRES: it is indexed
  // there.
  void Remove(EntryKey key, GroupKey group);

  // Appends to `out`, newest first, up to `want` groups whose place is
  // older than `after` (all groups if unset), with their seen and read
  // flags.
  void Collect(std::optional<EntryKey> after, size_t want,
               const GroupListLimits& limits,
               std::vector<FeedGroup>* out) const;

  // The seen and read flags of the group `group`, which holds the entry
  // `key`. REQUIRES: `key` is indexed there. O(1).
  void FlagsOf(EntryKey key, GroupKey group, bool* seen, bool* read) const;

  size_t entry_count() const { return entries_; }
  // Approximate heap bytes of the index (tables, groups with the
  // allocator's header, arrays, btree nodes at least half full). O(1).
  size_t bytes_used() const;
  size_t group_count() const { return order_.size(); }
  size_t unseen_count() const { return unseen_; }
  size_t unread_count() const { return unread_; }

  // Marks every group seen. O(groups).
  void MarkAllSeen();
  // Marks every group read and seen. O(groups).
  void MarkAllRead();
  // Marks read and seen the group `group`, which holds the entry `key`.
  // REQUIRES: `key` is indexed there.
  void MarkRead(EntryKey key, GroupKey group);

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
  bool SetSeen(EntryKey place, bool read);

  // Checks that every structure agrees with the others; false on the first
  // violation. O(n); for tests.
  bool CheckInvariants() const;

 private:
  struct Member {
    EntryKey key;
    EntityId actor;
    Micros expires_at;
    ActivityKind kind;
  };
  struct Group {
    GroupKey key = 0;
    bool seen = false;
    bool read = false;
    uint32_t actors = 0;  // distinct actors among `members`
    // Oldest first, so that the common insert (the newest) appends.
    absl::InlinedVector<Member, 1> members;
  };
  // Which group a key belongs in: the group key, or for key 0 the entry's
  // own key (a group of one).
  struct Slot {
    GroupKey key = 0;
    EntryKey solo;

    friend bool operator==(const Slot&, const Slot&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Slot& s) {
      return H::combine(std::move(h), s.key, s.solo);
    }
  };
  static Slot SlotOf(EntryKey key, GroupKey group) {
    return group != 0 ? Slot{group, {}} : Slot{0, key};
  }

  Group* Find(EntryKey key, GroupKey group) const;
  void Insert(Group* group, const Member& member);
  void Erase(Group* group, EntryKey key);
  void SetFlags(Group* group, bool seen, bool read);
  // Bytes of the group's array outside the group itself.
  static size_t SpilledBytes(const Group& group) {
    return group.members.capacity() > 1
               ? group.members.capacity() * sizeof(Member)
               : 0;
  }

  absl::flat_hash_map<Slot, std::unique_ptr<Group>> groups_;
  // (newest key of the group) -> group, newest first.
  absl::btree_map<EntryKey, Group*, std::greater<EntryKey>> order_;
  size_t entries_ = 0;
  // The sum of SpilledBytes over the groups.
  size_t spilled_bytes_ = 0;
  // Groups with `seen` false, and with `read` false.
  size_t unseen_ = 0;
  size_t unread_ = 0;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_TIMELINE_GROUP_INDEX_H_
