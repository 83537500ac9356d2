// Random workloads shared by the scenarios, all from fixed seeds so every
// system (and every run) gets the same one.
#ifndef FEEDCORE_BENCH_DRIVER_WORKLOAD_H_
#define FEEDCORE_BENCH_DRIVER_WORKLOAD_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "feedcore/types.h"

namespace feedcore::bench {

// Draws 0..n-1 with P(i) proportional to 1 / (i + 1)^exponent: a few
// values are drawn very often, most rarely (Zipf).
class ZipfSampler {
 public:
  ZipfSampler(size_t n, double exponent);
  size_t operator()(std::mt19937_64& rng) const;

 private:
  std::vector<double> cdf_;  // cumulative, unnormalized
};

// A follow graph among users 0..users-1 in which each user follows up to
// `followees_per_user` others drawn from a Zipf (exponent 1) distribution:
// power-law follower counts, a few users with a large share of everyone.
struct FollowGraph {
  std::vector<std::vector<EntityId>> followees;  // by user, sorted, unique
  std::vector<std::vector<EntityId>> followers;  // by user
  size_t edges = 0;
  size_t max_followers = 0;
};

FollowGraph MakePowerLawGraph(size_t users, size_t followees_per_user,
                              uint64_t seed);

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_WORKLOAD_H_
