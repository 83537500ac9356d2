#include "bench/driver/progress.h"

#include <unistd.h>

#include <cstdio>

namespace feedcore::bench {

Progress::Progress() : enabled_(isatty(STDERR_FILENO) == 1) {}

void Progress::Update(std::string_view scenario, std::string_view step,
                      size_t done, size_t total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && done != total &&
      now - last_draw_ < std::chrono::milliseconds(100)) {
    return;
  }
  last_draw_ = now;
  drawn_ = true;
  // \r returns to the start of the line, \033[K erases what the previous,
  // possibly longer, line left behind.
  std::fprintf(stderr, "\r\033[K%.*s: %.*s %zu/%zu",
               static_cast<int>(scenario.size()), scenario.data(),
               static_cast<int>(step.size()), step.data(), done, total);
  std::fflush(stderr);
}

void Progress::Clear() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace feedcore::bench
