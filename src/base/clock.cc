#include "feedcore/clock.h"

#include <chrono>

namespace feedcore {

Micros SystemClock::Now() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace feedcore
