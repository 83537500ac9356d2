// FeedEngineImpl's activity counters and ranked reads.
//
// Counters live with their activity in the ActivityStore (one hash lookup
// under the store shard's lock). A ranked page collects the newest
// `window` visible entries of the merged timeline (CollectFeed, as
// ReadTimeline), looks their counters up one store shard at a time,
// scores them and keeps the best `limit + 1` after the cursor with a
// partial sort (RankWindow, rank_formula.h, which the cluster backend
// shares): O(window) lookups plus O(window log limit).
//
// Why a walk never shows an entry twice: the cursor holds the walk's start
// time and the (score, key) of the last entry shown, and each page shows
// only entries strictly below it. An entry's score depends on its ts, its
// counters, the formula and the start time; the cursor pins the last two
// (the fingerprint refuses another formula or window), so the score of an
// entry whose counters did not change since the start is the same on
// every page, and once shown it stays at or above every later cursor.
// Counters that changed at or after the start could lift an entry back
// above the cursor, so later pages leave such entries out; the store reads
// the clock for a change under the shard lock that a page's lookup takes
// too, so a change the first page did not see is never dated before the
// start (with a clock that does not go backwards). Entries dated after the
// start are left out of later pages as well: they joined the timeline
// after the walk began, or come from the future and were ranked at age 0.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/rank_formula.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

absl::StatusOr<ActivityCounters> FeedEngineImpl::IncrementCounterInMemory(
    ActivityId activity_id, size_t counter, int64_t delta) {
  if (absl::Status bad = ValidateCounterChange(counter, delta); !bad.ok()) {
    return bad;
  }
  return store_.IncrementCounter(activity_id, counter, delta, *options_.clock);
}

absl::StatusOr<ActivityCounters> FeedEngineImpl::GetCounters(
    ActivityId activity_id) const {
  return store_.Counters(activity_id, options_.clock->Now());
}

absl::StatusOr<RankedPage> FeedEngineImpl::ReadRanked(
    EntityId owner, const RankedReadOptions& options) const {
  const Micros now = options_.clock->Now();
  absl::StatusOr<RankedWalk> walk =
      BeginRankedWalk(owner, options, options_.max_page_size,
                      options_.max_timeline_length, now);
  if (!walk.ok()) return walk.status();
  NoteTimelineRead(owner);
  if (walk->done) return RankedPage{};
  std::vector<StoredEntry> window;
  window.reserve(options.window);
  CollectFeed(FeedType::kHome, owner, ReadOrder::kNewestFirst, EntryKey::Min(),
              {walk->newest_ts, walk->newest_id}, now, options.window, &window,
              options.kinds.kinds);
  std::vector<CounterState> counters;
  store_.LookupCounters(window, &counters);
  RankedPage page =
      RankWindow(owner, options, *walk, std::move(window), counters);
  if (options.hydrate && !page.entries.empty()) {
    std::vector<StoredEntry> entries;
    entries.reserve(page.entries.size());
    for (RankedEntry& r : page.entries) entries.push_back(std::move(r.entry));
    store_.Hydrate(&entries);
    for (size_t k = 0; k < entries.size(); ++k) {
      page.entries[k].entry = std::move(entries[k]);
    }
  }
  return page;
}

absl::Status FeedEngineImpl::ApplyCountersChange(const ChangeRecord& r) {
  const ActivityId id = r.entry.activity_id;
  if (r.counters.size() != kActivityCounterCount) {
    return absl::InvalidArgumentError(absl::StrCat(
        "change record ", r.sequence, " (kind ", static_cast<int>(r.kind),
        "): ", r.counters.size(), " counters, not ", kActivityCounterCount));
  }
  if (r.domain - options_.shards != store_.ShardOf(id)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "change record ", r.sequence, " (kind ", static_cast<int>(r.kind),
        "): activity ", id, " is not in activity-store shard ",
        r.domain - options_.shards));
  }
  ActivityCounters counters;
  std::copy(r.counters.begin(), r.counters.end(), counters.begin());
  // An exact replay holds the activity; like a repeated retract, an
  // unknown id changes nothing.
  store_.RestoreCounters(id, counters, r.entry.ts);
  return absl::OkStatus();
}

}  // namespace feedcore::internal
