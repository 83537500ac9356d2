// Fan-out on read, the design feedcore's fan-out on write replaces: every
// actor's posts are kept once (its own feed, a `StdMapBaseline` timeline
// from bench/baselines.h) and a reader's page merges the feeds of everyone
// it follows at read time, as `WHERE actor IN (followees) ORDER BY ts DESC
// LIMIT n` does. Publishing costs one insert; reading costs one seek per
// followee.
#ifndef FEEDCORE_BENCH_DRIVER_MERGE_ON_READ_BASELINE_H_
#define FEEDCORE_BENCH_DRIVER_MERGE_ON_READ_BASELINE_H_

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "bench/baselines.h"

namespace feedcore::bench {

class MergeOnReadBaseline {
 public:
  explicit MergeOnReadBaseline(BaselineOptions options)
      : own_feeds_(std::move(options)) {}

  void Follow(EntityId follower, EntityId followee) {
    std::lock_guard<std::mutex> lock(mu_);
    following_[follower].push_back(followee);
  }

  void Publish(const TimelineEntry& entry) {
    own_feeds_.Insert(entry.actor, entry);
  }

  // The `limit` newest entries after `after` across everything `reader`
  // follows; `next` is set when more may follow.
  BaselinePage Read(EntityId reader, const std::optional<BaselineKey>& after,
                    size_t limit) const {
    std::vector<EntityId> followees;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = following_.find(reader);
      if (it != following_.end()) followees = it->second;
    }
    BaselinePage page;
    bool more = false;
    for (const EntityId followee : followees) {
      BaselinePage part = own_feeds_.ReadPage(followee, after, limit);
      more = more || part.next.has_value();
      page.entries.insert(page.entries.end(), part.entries.begin(),
                          part.entries.end());
    }
    const auto newer = [](const StoredEntry& a, const StoredEntry& b) {
      return std::pair(a.ts, a.activity_id) > std::pair(b.ts, b.activity_id);
    };
    if (page.entries.size() > limit) {
      std::partial_sort(page.entries.begin(),
                        page.entries.begin() + static_cast<ptrdiff_t>(limit),
                        page.entries.end(), newer);
      page.entries.resize(limit);
      more = true;
    } else {
      std::sort(page.entries.begin(), page.entries.end(), newer);
    }
    if (more && !page.entries.empty()) {
      page.next =
          BaselineKey{page.entries.back().ts, page.entries.back().activity_id};
    }
    return page;
  }

 private:
  StdMapBaseline own_feeds_;
  mutable std::mutex mu_;
  std::map<EntityId, std::vector<EntityId>> following_;  // guarded by mu_
};

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_MERGE_ON_READ_BASELINE_H_
