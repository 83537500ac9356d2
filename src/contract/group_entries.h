// How both backends group a feed's entries for ReadGroups and notification
// feeds when they group at read time (the in-process engine for a timeline
// holding expired entries not yet reclaimed, the Redis backend always), and
// the pieces the in-process GroupIndex shares with them, so that groups
// come out the same whichever way they were built.
//
// Thread safety: pure functions; a RecentActors belongs to one caller.
#ifndef FEEDCORE_SRC_CONTRACT_GROUP_ENTRIES_H_
#define FEEDCORE_SRC_CONTRACT_GROUP_ENTRIES_H_

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "feedcore/types.h"

// Exported from the shared libfeedcore for the Redis backend's library,
// which calls this one copy (CMakeLists.txt, feedcore_contract).
#pragma GCC visibility push(default)
namespace feedcore::internal {

// How much of a group a read lists (AggregationOptions).
struct GroupListLimits {
  size_t max_actors = 5;
  size_t max_entries = 10;
};

// Collects the distinct actors of a group, most recent first. Groups list
// a handful of actors, so a linear scan beats hashing until the list gets
// long.
class RecentActors {
 public:
  // Reserves room for `max` only when asked: the index knows its groups'
  // sizes, a read-time grouping does not.
  explicit RecentActors(size_t max, bool reserve = false) : max_(max) {
    if (reserve) actors_.reserve(max);
  }
  bool full() const { return actors_.size() >= max_; }
  void Offer(EntityId actor) {
    if (full()) return;
    if (actors_.size() < kLinearLimit) {
      if (std::find(actors_.begin(), actors_.end(), actor) != actors_.end()) {
        return;
      }
      if (actors_.size() + 1 == kLinearLimit) {
        seen_.insert(actors_.begin(), actors_.end());
        seen_.insert(actor);
      }
    } else if (!seen_.insert(actor).second) {
      return;
    }
    actors_.push_back(actor);
  }
  std::vector<EntityId> Take() { return std::move(actors_); }

 private:
  static constexpr size_t kLinearLimit = 32;
  const size_t max_;
  std::vector<EntityId> actors_;
  absl::flat_hash_set<EntityId> seen_;
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
                                    std::optional<EntryKey> after, size_t want,
                                    const GroupListLimits& limits);

}  // namespace feedcore::internal
#pragma GCC visibility pop

#endif  // FEEDCORE_SRC_CONTRACT_GROUP_ENTRIES_H_
