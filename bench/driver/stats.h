// Order statistics of measured samples (latencies, times per operation).
#ifndef FEEDCORE_BENCH_DRIVER_STATS_H_
#define FEEDCORE_BENCH_DRIVER_STATS_H_

#include <chrono>
#include <cstddef>
#include <vector>

namespace feedcore::bench {

struct Summary {
  size_t count = 0;
  double median = 0;
  double p99 = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
};

// Nearest-rank percentiles (p in [0, 100]) of `samples`; all zero when
// there are none. Takes a copy because it sorts.
Summary Summarize(std::vector<double> samples);

using Stopwatch = std::chrono::steady_clock;

// Microseconds from `start` until now.
inline double MicrosSince(Stopwatch::time_point start) {
  return std::chrono::duration<double, std::micro>(Stopwatch::now() - start)
      .count();
}

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_STATS_H_
