// Sweeper: a background thread that runs a pass at a fixed real-time
// interval until destroyed.
//
// Thread safety: construction and destruction from one thread; the pass
// runs on the sweeper's own thread and must be safe against every other
// use of what it touches. The destructor wakes the thread and joins it, so
// no pass runs after it returns.
#ifndef FEEDCORE_SRC_FEED_SWEEPER_H_
#define FEEDCORE_SRC_FEED_SWEEPER_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace feedcore::internal {

class Sweeper {
 public:
  // `pass` returns true to run again at once (it had more work than its
  // budget), false to wait for the next interval.
  Sweeper(std::function<bool()> pass, std::chrono::microseconds interval);
  ~Sweeper();
  Sweeper(const Sweeper&) = delete;
  Sweeper& operator=(const Sweeper&) = delete;

 private:
  void Run();

  const std::function<bool()> pass_;
  const std::chrono::microseconds interval_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;   // guarded by mu_
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_FEED_SWEEPER_H_
