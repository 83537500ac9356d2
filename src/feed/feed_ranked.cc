// FeedEngineImpl's activity counters and ranked reads.
//
// Counters live with their activity in the ActivityStore (one hash lookup
// under the store shard's lock). A ranked page collects the newest
// `window` visible entries of the merged timeline (CollectFeed, as
// ReadTimeline), looks their counters up one store shard at a time,
// scores them and keeps the best `limit + 1` after the cursor with a
// partial sort: O(window) lookups plus O(window log limit).
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
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "feed/feed_engine_impl.h"
#include "feed/rank_formula.h"
#include "timeline/cursor.h"

namespace feedcore::internal {
namespace {

struct Scored {
  double score;
  uint32_t index;  // into the window
};

}  // namespace

absl::StatusOr<ActivityCounters> FeedEngineImpl::IncrementCounter(
    ActivityId activity_id, size_t counter, int64_t delta) {
  if (counter >= kActivityCounterCount) {
    return absl::InvalidArgumentError(
        absl::StrCat("counter ", counter, " is out of range; it must be 0..",
                     kActivityCounterCount - 1, " (kActivityCounterCount)"));
  }
  if (delta == 0) {
    return absl::InvalidArgumentError(
        "delta is 0: an increment must change the counter (GetCounters "
        "reads them)");
  }
  return store_.IncrementCounter(activity_id, counter, delta, *options_.clock);
}

absl::StatusOr<ActivityCounters> FeedEngineImpl::GetCounters(
    ActivityId activity_id) const {
  return store_.Counters(activity_id, options_.clock->Now());
}

absl::StatusOr<RankedPage> FeedEngineImpl::ReadRanked(
    EntityId owner, const RankedReadOptions& options) const {
  if (absl::Status bad = ValidateRankedRead(options, options_.max_page_size,
                                            options_.max_timeline_length);
      !bad.ok()) {
    return bad;
  }
  const uint64_t fingerprint = RankFingerprint(options.formula, options.window);
  std::optional<RankedCursor> after;
  if (!options.cursor.empty()) {
    absl::StatusOr<RankedCursor> cursor =
        DecodeRankedCursorOf(options.cursor, owner, fingerprint);
    if (!cursor.ok()) return cursor.status();
    after = *cursor;
  }
  NoteTimelineRead(owner);
  const Micros now = options_.clock->Now();
  const Micros start = after.has_value() ? after->start : now;
  RankedPage page;
  TimelineKey newest = TimelineKey::Max();
  if (after.has_value()) {
    if (start < 0) return page;  // nothing is dated before it
    newest = {start, std::numeric_limits<ActivityId>::max()};
  }
  std::vector<StoredEntry> window;
  window.reserve(options.window);
  CollectFeed(FeedType::kHome, owner, ReadOrder::kNewestFirst,
              TimelineKey::Min(), newest, now, options.window, &window);
  std::vector<CounterState> counters;
  store_.LookupCounters(window, &counters);

  std::vector<Scored> ranked;
  ranked.reserve(window.size());
  for (size_t i = 0; i < window.size(); ++i) {
    const StoredEntry& e = window[i];
    if (after.has_value() && counters[i].changed_at >= start) continue;
    const double score =
        RankScore(options.formula, counters[i].counters, start, e.ts);
    if (after.has_value() &&
        std::tuple(score, e.ts, e.activity_id) >=
            std::tuple(after->score, after->ts, after->activity_id)) {
      continue;
    }
    ranked.push_back({score, static_cast<uint32_t>(i)});
  }
  auto higher = [&window](const Scored& a, const Scored& b) {
    const StoredEntry& x = window[a.index];
    const StoredEntry& y = window[b.index];
    return std::tuple(a.score, x.ts, x.activity_id) >
           std::tuple(b.score, y.ts, y.activity_id);
  };
  // One more than asked tells whether another page follows.
  const size_t keep = std::min(ranked.size(), options.limit + 1);
  std::partial_sort(ranked.begin(), ranked.begin() + keep, ranked.end(),
                    higher);
  const size_t shown = std::min(ranked.size(), options.limit);
  page.entries.reserve(shown);
  for (size_t k = 0; k < shown; ++k) {
    const Scored& s = ranked[k];
    page.entries.push_back(RankedEntry{std::move(window[s.index]),
                                       counters[s.index].counters, s.score});
  }
  if (ranked.size() > options.limit) {
    const RankedEntry& last = page.entries.back();
    page.next_cursor =
        EncodeRankedCursor({owner, start, fingerprint, last.score,
                            last.entry.ts, last.entry.activity_id});
  }
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
