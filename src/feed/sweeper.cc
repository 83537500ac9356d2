#include "feed/sweeper.h"

#include <utility>

namespace feedcore::internal {

Sweeper::Sweeper(std::function<bool()> pass, std::chrono::microseconds interval)
    : pass_(std::move(pass)), interval_(interval), thread_([this] { Run(); }) {}

Sweeper::~Sweeper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Sweeper::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait_for(lock, interval_, [this] { return stop_; });
    if (stop_) return;
    // Run passes with the lock dropped so the destructor never waits for
    // more than one pass; repeat while a pass reports a backlog.
    bool more = true;
    while (more && !stop_) {
      lock.unlock();
      more = pass_();
      lock.lock();
    }
  }
}

}  // namespace feedcore::internal
