#include "bench/driver/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace feedcore::bench {
namespace {

// Nearest rank: the smallest sample with at least p% of the samples at or
// below it. With few samples p99 is the maximum, which is what a reader of
// a 5-round figure should see.
double NearestRank(const std::vector<double>& sorted, double p) {
  const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

}  // namespace

Summary Summarize(std::vector<double> samples) {
  Summary summary;
  if (samples.empty()) return summary;
  std::sort(samples.begin(), samples.end());
  summary.count = samples.size();
  summary.median = NearestRank(samples, 50);
  summary.p99 = NearestRank(samples, 99);
  summary.min = samples.front();
  summary.max = samples.back();
  summary.mean = std::accumulate(samples.begin(), samples.end(), 0.0) /
                 static_cast<double>(samples.size());
  return summary;
}

}  // namespace feedcore::bench
