// The checks of a FeedEngine against the reference model that both
// sequence fuzz targets make (api_sequence_fuzzer.cc,
// social_sequence_fuzzer.cc): paged reads with the walks kept open across
// other calls, and eviction with a budget.
#ifndef FEEDCORE_FUZZ_FEED_MODEL_CHECKS_H_
#define FEEDCORE_FUZZ_FEED_MODEL_CHECKS_H_

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/types.h"
#include "fuzz_check.h"
#include "model/feed_model.h"

namespace feedcore::fuzz {

// A paging walk kept open across other calls.
struct Walk {
  testing::Feed feed = testing::Feed::kTimeline;
  EntityId owner = 0;
  ReadOrder order = ReadOrder::kNewestFirst;
  std::optional<Micros> min_ts, max_ts;
  // The activity kinds the walk keeps (KindFilter::kinds).
  uint64_t kinds = KindFilter::kEveryKind;
  std::string cursor;
  testing::FeedModel::Key last;
};

inline absl::StatusOr<Page> ReadFeed(const InProcessFeedEngine& engine,
                                     testing::Feed feed, EntityId owner,
                                     const ReadOptions& r) {
  switch (feed) {
    case testing::Feed::kTimeline:
      return engine.ReadTimeline(owner, r);
    case testing::Feed::kOwn:
      return engine.ReadOwn(owner, r);
    case testing::Feed::kWorld:
      return engine.ReadWorld(r);
  }
  return absl::InternalError("unknown feed");
}

// The walks open at once, so that a long input keeps revisiting a few
// cursors instead of accumulating them; a new walk beyond them ends the
// oldest.
class FeedWalks {
 public:
  static constexpr size_t kMaxOpen = 4;

  bool empty() const { return walks_.empty(); }
  size_t size() const { return walks_.size(); }
  const Walk& at(size_t i) const { return walks_[i]; }

  // Ends walk `i` and returns it, to be read on or dropped.
  Walk Take(size_t i) {
    Walk walk = std::move(walks_[i]);
    walks_.erase(walks_.begin() + static_cast<long>(i));
    return walk;
  }

  // Reads the next page of `walk` (its first when `first`) from `engine`
  // with the limit and hydration of `r`, checks that it is the page
  // `model` shows at `now`, and keeps the walk open if another follows.
  void ReadAndCompare(const InProcessFeedEngine& engine,
                      const testing::FeedModel& model, Walk walk, ReadOptions r,
                      bool first, Micros now) {
    r.order = walk.order;
    r.min_ts = walk.min_ts;
    r.max_ts = walk.max_ts;
    r.kinds.kinds = walk.kinds;
    r.cursor = first ? "" : walk.cursor;
    const std::vector<StoredEntry> visible =
        model.Read(walk.feed, walk.owner, walk.order, walk.min_ts, walk.max_ts,
                   first ? std::nullopt : std::optional(walk.last), now,
                   r.hydrate, walk.kinds);
    const absl::StatusOr<Page> page =
        ReadFeed(engine, walk.feed, walk.owner, r);
    FUZZ_CHECK(page.ok());
    const size_t n = std::min<size_t>(r.limit, visible.size());
    FUZZ_CHECK_DETAIL(
        page->entries ==
            std::vector<StoredEntry>(visible.begin(),
                                     visible.begin() + static_cast<long>(n)),
        std::fprintf(stderr, "page of %zu entries, model %zu (of %zu)\n",
                     page->entries.size(), n, visible.size()));
    FUZZ_CHECK(page->next_cursor.empty() == (visible.size() <= r.limit));
    if (page->next_cursor.empty()) return;
    walk.cursor = page->next_cursor;
    walk.last = {page->entries.back().ts, page->entries.back().activity_id};
    if (walks_.size() >= kMaxOpen) walks_.erase(walks_.begin());
    walks_.push_back(std::move(walk));
  }

 private:
  std::vector<Walk> walks_;
};

// Calls EvictExpired(budget) until a call reclaims less than the budget,
// each count checked against the expired entries `model` holds at `now`.
// False for a zero budget, which must reclaim nothing; otherwise the
// caller evicts in the model too.
[[nodiscard]] inline bool EvictAndCompare(InProcessFeedEngine& engine,
                                          const testing::FeedModel& model,
                                          size_t budget, Micros now) {
  const size_t expired = model.CountExpired(now);
  if (budget == 0) {
    FUZZ_CHECK(engine.EvictExpired(0).value() == 0);
    return false;
  }
  size_t total = 0;
  for (;;) {
    const size_t n = engine.EvictExpired(budget).value();
    FUZZ_CHECK_DETAIL(n == std::min(budget, expired - total),
                      std::fprintf(stderr,
                                   "evicted %zu with budget %zu, model held "
                                   "%zu expired, %zu evicted before\n",
                                   n, budget, expired, total));
    total += n;
    if (n < budget) return true;
  }
}

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_FEED_MODEL_CHECKS_H_
