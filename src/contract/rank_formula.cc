#include "contract/rank_formula.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "contract/feed_arguments.h"

namespace feedcore::internal {
namespace {

absl::Status Bad(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("RankedReadOptions.", field, " ", why));
}

void PutDouble(double value, std::string* out) {
  if (value == 0) value = 0;  // -0 and 0 are the same formula
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  for (int i = 0; i < 8; ++i)
    out->push_back(static_cast<char>(bits >> (8 * i)));
}

struct Scored {
  double score;
  uint32_t index;  // into the window
};

}  // namespace

absl::Status ValidateRankedRead(const RankedReadOptions& options,
                                size_t max_page_size,
                                size_t max_timeline_length) {
  if (options.limit == 0 || options.limit > max_page_size) {
    return Bad("limit",
               absl::StrCat("is ", options.limit, "; it must be 1..",
                            max_page_size, " (EngineOptions.max_page_size)"));
  }
  if (options.window == 0 || options.window > max_timeline_length) {
    return Bad("window", absl::StrCat("is ", options.window, "; it must be 1..",
                                      max_timeline_length,
                                      " (EngineOptions.max_timeline_length)"));
  }
  const RankFormula& f = options.formula;
  if (!std::isfinite(f.base)) return Bad("formula.base", "is not finite");
  for (size_t i = 0; i < f.weights.size(); ++i) {
    if (!std::isfinite(f.weights[i])) {
      return Bad(absl::StrCat("formula.weights[", i, "]"), "is not finite");
    }
  }
  if (!(f.gravity >= 0 && f.gravity <= kMaxRankGravity)) {
    return Bad(
        "formula.gravity",
        absl::StrCat("is ", f.gravity, "; it must be 0..", kMaxRankGravity));
  }
  if (!(f.age_offset_hours > 0) || !std::isfinite(f.age_offset_hours)) {
    return Bad("formula.age_offset_hours",
               absl::StrCat("is ", f.age_offset_hours,
                            "; it must be finite and above 0"));
  }
  return ValidateKindFilter(options.kinds, "RankedReadOptions.kinds");
}

double RankScore(const RankFormula& formula, const ActivityCounters& counters,
                 Micros start, Micros ts) {
  double popularity = formula.base;
  for (size_t i = 0; i < kActivityCounterCount; ++i) {
    popularity += formula.weights[i] * static_cast<double>(counters[i]);
  }
  const double age_hours = ts >= start
                               ? 0.0
                               : static_cast<double>(start - ts) /
                                     static_cast<double>(kMicrosPerHour);
  const double score =
      popularity /
      std::pow(age_hours + formula.age_offset_hours, formula.gravity);
  if (std::isnan(score) || score == 0) return 0;
  return score;
}

uint64_t RankFingerprint(const RankFormula& formula, size_t window,
                         uint64_t kinds) {
  std::string bytes;
  PutDouble(formula.base, &bytes);
  for (const double weight : formula.weights) PutDouble(weight, &bytes);
  PutDouble(formula.gravity, &bytes);
  PutDouble(formula.age_offset_hours, &bytes);
  PutDouble(static_cast<double>(window), &bytes);
  if (kinds != KindFilter::kEveryKind) {
    for (int shift = 0; shift < 64; shift += 8) {
      bytes.push_back(static_cast<char>((kinds >> shift) & 0xff));
    }
  }
  return XXH3_64bits(bytes.data(), bytes.size());
}

absl::Status ValidateCounterChange(size_t counter, int64_t delta) {
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
  return absl::OkStatus();
}

absl::StatusOr<RankedWalk> BeginRankedWalk(EntityId owner,
                                           const RankedReadOptions& options,
                                           size_t max_page_size,
                                           size_t max_timeline_length,
                                           Micros now) {
  if (absl::Status bad =
          ValidateRankedRead(options, max_page_size, max_timeline_length);
      !bad.ok()) {
    return bad;
  }
  RankedWalk walk;
  walk.fingerprint =
      RankFingerprint(options.formula, options.window, options.kinds.kinds);
  walk.start = now;
  if (!options.cursor.empty()) {
    absl::StatusOr<RankedCursor> cursor =
        DecodeRankedCursorOf(options.cursor, owner, walk.fingerprint);
    if (!cursor.ok()) return cursor.status();
    walk.after = *cursor;
    walk.start = cursor->start;
    walk.done = walk.start < 0;  // nothing is dated before it
    walk.newest_ts = walk.start;
  }
  return walk;
}

RankedPage RankWindow(EntityId owner, const RankedReadOptions& options,
                      const RankedWalk& walk, std::vector<StoredEntry> window,
                      absl::Span<const CounterState> counters) {
  const std::optional<RankedCursor>& after = walk.after;
  std::vector<Scored> ranked;
  ranked.reserve(window.size());
  for (size_t i = 0; i < window.size(); ++i) {
    const StoredEntry& e = window[i];
    if (after.has_value() && counters[i].changed_at >= walk.start) continue;
    const double score =
        RankScore(options.formula, counters[i].counters, walk.start, e.ts);
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
  RankedPage page;
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
        EncodeRankedCursor({owner, walk.start, walk.fingerprint, last.score,
                            last.entry.ts, last.entry.activity_id});
  }
  return page;
}

}  // namespace feedcore::internal
