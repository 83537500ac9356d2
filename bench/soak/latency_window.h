// Latency samples of one kind of call, collected from many threads and
// taken out one interval at a time by the sampling thread.
#ifndef FEEDCORE_BENCH_SOAK_LATENCY_WINDOW_H_
#define FEEDCORE_BENCH_SOAK_LATENCY_WINDOW_H_

#include <mutex>
#include <utility>
#include <vector>

namespace feedcore::bench {

class LatencyWindow {
 public:
  void Add(double micros) {
    std::lock_guard<std::mutex> lock(mu_);
    samples_.push_back(micros);
  }

  // The samples since the last call; starts a new interval.
  std::vector<double> Take() {
    std::vector<double> out;
    out.reserve(1024);
    std::lock_guard<std::mutex> lock(mu_);
    std::swap(out, samples_);
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<double> samples_;
};

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_SOAK_LATENCY_WINDOW_H_
