#include "bench/driver/workload.h"

#include <algorithm>
#include <cmath>

namespace feedcore::bench {

ZipfSampler::ZipfSampler(size_t n, double exponent) : cdf_(n) {
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += 1.0 / std::pow(static_cast<double>(i + 1), exponent);
    cdf_[i] = sum;
  }
}

size_t ZipfSampler::operator()(std::mt19937_64& rng) const {
  std::uniform_real_distribution<double> uniform(0, cdf_.back());
  const auto it = std::lower_bound(cdf_.begin(), cdf_.end(), uniform(rng));
  return std::min(static_cast<size_t>(it - cdf_.begin()), cdf_.size() - 1);
}

FollowGraph MakePowerLawGraph(size_t users, size_t followees_per_user,
                              uint64_t seed) {
  FollowGraph graph;
  graph.followees.resize(users);
  graph.followers.resize(users);
  const ZipfSampler popularity(users, 1.0);
  std::mt19937_64 rng(seed);
  for (EntityId user = 0; user < users; ++user) {
    std::vector<EntityId>& mine = graph.followees[user];
    for (size_t k = 0; k < followees_per_user; ++k) {
      const EntityId followee = popularity(rng);
      if (followee != user) mine.push_back(followee);
    }
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    for (const EntityId followee : mine) {
      graph.followers[followee].push_back(user);
    }
    graph.edges += mine.size();
  }
  for (const auto& followers : graph.followers) {
    graph.max_followers = std::max(graph.max_followers, followers.size());
  }
  return graph;
}

}  // namespace feedcore::bench
