// Time source of the engine.
//
// Everything in feedcore that depends on time (expiry, the default timestamp
// of nothing, eviction) asks an injected `Clock`, so tests can control time
// without sleeping. `SystemClock` is the default; `ManualClock` is public so
// that an embedding program's own unit tests can drive the engine as a
// fixture.
//
// Thread safety
// -------------
// `Now()` is called concurrently from any thread that uses the engine, and
// from the background sweeper; implementations must be thread-safe. Both
// clocks here are.
#ifndef FEEDCORE_CLOCK_H_
#define FEEDCORE_CLOCK_H_

#include <atomic>
#include <memory>

#include "feedcore/export.h"
#include "feedcore/types.h"

namespace feedcore {

class FEEDCORE_EXPORT Clock {
 public:
  virtual ~Clock() = default;
  // Current time in microseconds. Should not go backwards; if it does,
  // entries simply stay visible longer.
  virtual Micros Now() const = 0;
};

// Wall-clock time: microseconds since the Unix epoch.
class FEEDCORE_EXPORT SystemClock final : public Clock {
 public:
  Micros Now() const override;
};

// A clock that moves only when told to. Thread-safe: `Advance` and `Set` may
// race with `Now` from other threads.
class FEEDCORE_EXPORT ManualClock final : public Clock {
 public:
  explicit ManualClock(Micros start = 0) : now_(start) {}
  Micros Now() const override { return now_.load(std::memory_order_acquire); }
  // Moves time forward by `delta` (which may be negative in tests that
  // want to see what a clock going backwards does).
  void Advance(Micros delta) {
    now_.fetch_add(delta, std::memory_order_acq_rel);
  }
  void Set(Micros now) { now_.store(now, std::memory_order_release); }

 private:
  // acquire/release so that a test thread which advances the clock and then
  // signals a reader makes the new time visible together with the signal.
  std::atomic<Micros> now_;
};

}  // namespace feedcore

#endif  // FEEDCORE_CLOCK_H_
