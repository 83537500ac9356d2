// A random time window for the model tests' reads: unset a third of the
// time, otherwise a bound or both within [0, head + 1].
#ifndef FEEDCORE_TESTS_SUPPORT_RANDOM_WINDOW_H_
#define FEEDCORE_TESTS_SUPPORT_RANDOM_WINDOW_H_

#include <algorithm>
#include <optional>
#include <random>

#include "feedcore/types.h"

namespace feedcore::testing {

inline void RandomWindow(std::mt19937_64& rng, Micros head,
                         std::optional<Micros>* min_ts,
                         std::optional<Micros>* max_ts) {
  min_ts->reset();
  max_ts->reset();
  if (rng() % 3 != 0) return;
  const Micros a = static_cast<Micros>(rng() % (head + 2));
  const Micros b = static_cast<Micros>(rng() % (head + 2));
  if (rng() % 3 != 0) *min_ts = std::min(a, b);
  if (rng() % 3 != 0) *max_ts = std::max(a, b);
}

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_SUPPORT_RANDOM_WINDOW_H_
