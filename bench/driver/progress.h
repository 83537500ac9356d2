// A one-line progress indicator on stderr for long runs. It draws only when
// stderr is a terminal (isatty), so logs and CI output stay clean.
#ifndef FEEDCORE_BENCH_DRIVER_PROGRESS_H_
#define FEEDCORE_BENCH_DRIVER_PROGRESS_H_

#include <chrono>
#include <cstddef>
#include <string_view>

namespace feedcore::bench {

class Progress {
 public:
  Progress();  // enabled when stderr is a terminal
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Redraws "scenario: step done/total" at most ten times a second.
  void Update(std::string_view scenario, std::string_view step, size_t done,
              size_t total);
  // Clears the line so that the next output starts on a clean line.
  void Clear();

 private:
  const bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_PROGRESS_H_
