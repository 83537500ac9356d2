#include "feed/rank_formula.h"

#include <xxhash.h>

#include <cmath>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

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
  return absl::OkStatus();
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

uint64_t RankFingerprint(const RankFormula& formula, size_t window) {
  std::string bytes;
  PutDouble(formula.base, &bytes);
  for (const double weight : formula.weights) PutDouble(weight, &bytes);
  PutDouble(formula.gravity, &bytes);
  PutDouble(formula.age_offset_hours, &bytes);
  PutDouble(static_cast<double>(window), &bytes);
  return XXH3_64bits(bytes.data(), bytes.size());
}

}  // namespace feedcore::internal
