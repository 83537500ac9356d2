#include "social_ranked_ops.h"

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/feed_engine.h"
#include "fuzz_check.h"

namespace feedcore::fuzz {

namespace {

constexpr size_t kMaxWindow = 12;
constexpr size_t kMaxRankedWalks = 3;

}  // namespace

ActivityId RankedOps::AnyActivity() {
  if (c_.in.Below(4) != 0) {
    if (auto known = c_.Known()) return known->first;
  }
  return c_.next_id + 1 + c_.in.Below(3);  // never published
}

void RankedOps::IncrementCounter() {
  const ActivityId id = AnyActivity();
  const size_t counter = c_.in.Below(kActivityCounterCount + 1);
  int64_t delta = static_cast<int64_t>(c_.in.Below(6)) - 2;  // 0 refused
  switch (c_.in.Below(16)) {
    case 0:
      delta = std::numeric_limits<int64_t>::max();
      break;
    case 1:
      delta = std::numeric_limits<int64_t>::min();
      break;
    default:
      break;
  }
  const uint64_t records = c_.Records();
  const absl::StatusOr<ActivityCounters> want =
      c_.model.IncrementCounter(id, counter, delta, c_.Now());
  const absl::StatusOr<ActivityCounters> got =
      c_.engine->IncrementCounter(id, counter, delta);
  if (c_.SameOutcome(got.status(), want.status(), records)) {
    FUZZ_CHECK(*got == *want);
  }
}

void RankedOps::GetCounters() {
  const ActivityId id = AnyActivity();
  const absl::StatusOr<ActivityCounters> want = c_.model.Counters(id, c_.Now());
  const absl::StatusOr<ActivityCounters> got = c_.engine->GetCounters(id);
  FUZZ_CHECK(got.status().code() == want.status().code());
  if (want.ok()) FUZZ_CHECK(*got == *want);
}

RankFormula RankedOps::DrawFormula() {
  RankFormula f;
  f.base = static_cast<double>(c_.in.Below(5)) - 1;
  for (double& w : f.weights) {
    w = (static_cast<double>(c_.in.Below(7)) - 2) *
        (c_.in.Below(3) == 0 ? 0.25 : 1);
  }
  f.gravity = static_cast<double>(c_.in.Below(41)) / 4;
  // The clock moves by microseconds: a tiny offset lets age count.
  constexpr double kOffsets[] = {1e-6, 0.5, 1, 2};
  f.age_offset_hours = kOffsets[c_.in.Below(4)];
  return f;
}

void RankedOps::ReadRanked() {
  RankedWalk walk;
  walk.owner = c_.Entity();
  walk.options.formula = DrawFormula();
  walk.options.window = 1 + c_.in.Below(kMaxWindow);
  ReadAndCompare(std::move(walk));
}

void RankedOps::ContinueRanked() {
  if (walks_.empty()) return ReadRanked();
  const size_t i = c_.in.Below(walks_.size());
  RankedWalk walk = std::move(walks_[i]);
  walks_.erase(walks_.begin() + static_cast<long>(i));
  ReadAndCompare(std::move(walk));
}

void RankedOps::ReadAndCompare(RankedWalk walk) {
  RankedReadOptions& r = walk.options;
  r.limit = 1 + c_.in.Below(c_.options.max_page_size);
  r.hydrate = c_.in.Below(4) == 0;
  const absl::StatusOr<RankedPage> got = c_.engine->ReadRanked(walk.owner, r);
  FUZZ_CHECK_DETAIL(got.ok(), std::fprintf(stderr, "status: %s\n",
                                           got.status().ToString().c_str()));
  // A reader whose timeline differs from the model's ranks other entries.
  if (!c_.Comparable(walk.owner)) return;
  const testing::FeedModel::RankedResult want =
      c_.model.Ranked(walk.owner, r.formula, r.window, r.limit, walk.place,
                      c_.Now(), r.hydrate);
  FUZZ_CHECK_DETAIL(got->entries.size() == want.entries.size(),
                    std::fprintf(stderr, "ranked page of %zu, model %zu\n",
                                 got->entries.size(), want.entries.size()));
  for (size_t i = 0; i < want.entries.size(); ++i) {
    const RankedEntry& g = got->entries[i];
    const RankedEntry& m = want.entries[i];
    FUZZ_CHECK_DETAIL(
        g.entry == m.entry,
        std::fprintf(stderr, "entry %zu: id %llu, model %llu\n", i,
                     static_cast<unsigned long long>(g.entry.activity_id),
                     static_cast<unsigned long long>(m.entry.activity_id)));
    FUZZ_CHECK(g.counters == m.counters);
    FUZZ_CHECK_DETAIL(
        std::bit_cast<uint64_t>(g.score) == std::bit_cast<uint64_t>(m.score),
        std::fprintf(stderr, "entry %zu: score %.17g, model %.17g\n", i,
                     g.score, m.score));
  }
  FUZZ_CHECK(got->next_cursor.empty() == !want.next.has_value());
  if (!want.next) return;
  walk.place = want.next;
  r.cursor = got->next_cursor;
  if (walks_.size() >= kMaxRankedWalks) walks_.erase(walks_.begin());
  walks_.push_back(std::move(walk));
}

void RankedOps::Invalid() {
  const uint64_t records = c_.Records();
  const EntityId owner = c_.Entity();
  switch (c_.in.Below(4)) {
    case 0: {
      // A counter out of range, or a zero delta, of any activity.
      const bool zero = c_.in.Bool();
      const size_t counter = zero ? c_.in.Below(kActivityCounterCount)
                                  : kActivityCounterCount + c_.in.Below(4);
      const ActivityId id = AnyActivity();
      FUZZ_CHECK(
          !c_.model.IncrementCounter(id, counter, zero ? 0 : 1, c_.Now()).ok());
      return c_.CheckRefused(
          c_.engine->IncrementCounter(id, counter, zero ? 0 : 1).status(),
          records);
    }
    case 1: {
      // A limit or window out of range.
      RankedReadOptions r;
      r.limit = 1;
      switch (c_.in.Below(4)) {
        case 0:
          r.limit = 0;
          break;
        case 1:
          r.limit = c_.options.max_page_size + 1;
          break;
        case 2:
          r.window = 0;
          break;
        default:
          r.window = c_.options.max_timeline_length + 1;
          break;
      }
      return c_.CheckRefused(c_.engine->ReadRanked(owner, r).status(), records);
    }
    case 2: {
      // A formula value that is not finite or out of its range.
      RankedReadOptions r;
      r.limit = 1;
      const double not_finite = c_.in.Bool()
                                    ? std::numeric_limits<double>::infinity()
                                    : std::numeric_limits<double>::quiet_NaN();
      switch (c_.in.Below(5)) {
        case 0:
          r.formula.base = not_finite;
          break;
        case 1:
          r.formula.weights[c_.in.Below(kActivityCounterCount)] = not_finite;
          break;
        case 2:
          r.formula.gravity = c_.in.Bool() ? -0.25 : 10.25;
          break;
        case 3:
          r.formula.age_offset_hours = c_.in.Bool() ? 0 : -1;
          break;
        default:
          r.formula.age_offset_hours = not_finite;
          break;
      }
      return c_.CheckRefused(c_.engine->ReadRanked(owner, r).status(), records);
    }
    default: {
      // Junk, or an open walk's cursor with another owner, formula or
      // window.
      RankedReadOptions r;
      r.limit = 1;
      r.cursor = "not a cursor";
      EntityId reader = owner;
      if (!walks_.empty()) {
        const RankedWalk& walk = walks_[c_.in.Below(walks_.size())];
        r = walk.options;
        reader = walk.owner;
        switch (c_.in.Below(3)) {
          case 0:
            reader = walk.owner % c_.entities + 1;
            break;
          case 1:
            r.formula.base += 1;
            break;
          default:
            r.window = r.window % kMaxWindow + 1;
            break;
        }
      }
      return c_.CheckRefused(c_.engine->ReadRanked(reader, r).status(),
                             records);
    }
  }
}

}  // namespace feedcore::fuzz
