// FanoutPool: a fixed set of worker threads running fan-out tasks from a
// bounded queue.
//
// Capacity is reserved before anything is done, so a publish that cannot
// get room for all of its tasks fails (or waits) before it changes
// anything: no task is ever dropped. The destructor runs every task still
// queued, then joins the workers.
//
// Thread safety
// -------------
// Every method is thread-safe. The pool's mutex is a leaf: it is never held
// while a task runs or while any other lock is taken.
#ifndef FEEDCORE_SRC_FEED_FANOUT_POOL_H_
#define FEEDCORE_SRC_FEED_FANOUT_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace feedcore::internal {

class FanoutPool {
 public:
  // REQUIRES: threads >= 1, capacity >= 1.
  FanoutPool(size_t threads, size_t capacity);
  ~FanoutPool();
  FanoutPool(const FanoutPool&) = delete;
  FanoutPool& operator=(const FanoutPool&) = delete;

  // Reserves room for `n` tasks (n <= capacity). When the queue lacks room,
  // waits for it if `wait`, else returns false having reserved nothing.
  bool Reserve(size_t n, bool wait);
  // Gives back `n` reserved slots that will not be used.
  void Unreserve(size_t n);
  // Queues a task into room reserved by Reserve.
  void Submit(std::function<void()> task);
  // Returns once no task is queued, reserved or running.
  void WaitIdle();

  size_t capacity() const { return capacity_; }

 private:
  void Work();

  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable has_task_;
  std::condition_variable has_room_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  size_t reserved_ = 0;  // guarded by mu_: room promised, not yet queued
  size_t running_ = 0;   // guarded by mu_
  bool stop_ = false;    // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_FEED_FANOUT_POOL_H_
