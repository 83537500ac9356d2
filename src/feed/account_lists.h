// An entity's lists of accounts (FeedLists), as its graph node keeps them:
// each list's settings and members, and how many exclusive lists hold each
// account, which home reads test per entry.
//
// Not thread-safe: guarded by the lock of the shard holding the node.
#ifndef FEEDCORE_SRC_FEED_ACCOUNT_LISTS_H_
#define FEEDCORE_SRC_FEED_ACCOUNT_LISTS_H_

#include <cstdint>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "feedcore/social.h"
#include "feedcore/types.h"

namespace feedcore::internal {

struct AccountListState {
  ListSettings settings;
  absl::btree_set<EntityId> members;
};

class OwnerLists {
 public:
  bool empty() const { return lists_.empty(); }
  size_t size() const { return lists_.size(); }
  const absl::btree_map<ListId, AccountListState>& lists() const {
    return lists_;
  }
  const AccountListState* Find(ListId list) const {
    auto it = lists_.find(list);
    return it == lists_.end() ? nullptr : &it->second;
  }

  // Creates `list` or changes its settings; true when created.
  bool Set(ListId list, const ListSettings& settings);
  // Deletes `list` with its members; false when there was none.
  bool Delete(ListId list);
  // Adds or removes `member` of the existing `list`; true when it changed.
  bool Add(ListId list, EntityId member);
  bool Remove(ListId list, EntityId member);

  // Whether home reads leave out `actor`'s entries: it is a member of an
  // exclusive list.
  bool Excludes(EntityId actor) const {
    return !exclusive_.empty() && exclusive_.contains(actor);
  }
  bool has_exclusive() const { return !exclusive_.empty(); }
  // The accounts Excludes is true of, in no order.
  std::vector<EntityId> Excluded() const;

 private:
  void CountExclusive(const AccountListState& list, int sign);

  absl::btree_map<ListId, AccountListState> lists_;
  // Account -> how many exclusive lists hold it (never 0).
  absl::flat_hash_map<EntityId, uint32_t> exclusive_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_FEED_ACCOUNT_LISTS_H_
