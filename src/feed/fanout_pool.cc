#include "feed/fanout_pool.h"

#include <cassert>
#include <utility>

namespace feedcore::internal {

FanoutPool::FanoutPool(size_t threads, size_t capacity) : capacity_(capacity) {
  assert(threads >= 1 && capacity >= 1);
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i)
    workers_.emplace_back([this] { Work(); });
}

FanoutPool::~FanoutPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  has_task_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

bool FanoutPool::Reserve(size_t n, bool wait) {
  assert(n <= capacity_);
  std::unique_lock<std::mutex> lock(mu_);
  auto has_room = [&] { return queue_.size() + reserved_ + n <= capacity_; };
  if (!has_room()) {
    if (!wait) return false;
    has_room_.wait(lock, has_room);
  }
  reserved_ += n;
  return true;
}

void FanoutPool::Unreserve(size_t n) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    assert(reserved_ >= n);
    reserved_ -= n;
  }
  has_room_.notify_all();
  idle_.notify_all();
}

void FanoutPool::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    assert(reserved_ > 0);
    --reserved_;
    queue_.push_back(std::move(task));
  }
  has_task_.notify_one();
}

void FanoutPool::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock,
             [&] { return queue_.empty() && reserved_ == 0 && running_ == 0; });
}

void FanoutPool::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    has_task_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    // Drain before stopping: a queued task is a promise to a publisher.
    if (queue_.empty()) return;
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    has_room_.notify_all();
    task();
    task = nullptr;  // release what the task holds before counting it done
    lock.lock();
    --running_;
    if (queue_.empty() && reserved_ == 0 && running_ == 0) idle_.notify_all();
  }
}

}  // namespace feedcore::internal
