// Failures found on worker threads, collected and reported on the main
// thread: doctest assertions are not used off the main thread.
#ifndef FEEDCORE_TESTS_SUPPORT_THREAD_FAILURES_H_
#define FEEDCORE_TESTS_SUPPORT_THREAD_FAILURES_H_

#include <doctest/doctest.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace feedcore::testing {

class Failures {
 public:
  // Records one failure; the first 20 keep their text.
  void Add(std::string what) {
    std::lock_guard<std::mutex> l(mu_);
    if (list_.size() < 20) list_.push_back(std::move(what));
    ++count_;
  }
  // Records `status` under `what` unless it is OK.
  void Check(const absl::Status& status, const std::string& what) {
    if (!status.ok()) Add(what + ": " + status.ToString());
  }
  // On the main thread: fails the test once per kept failure, and if any
  // was recorded.
  void Report() {
    std::lock_guard<std::mutex> l(mu_);
    for (const std::string& f : list_) CHECK_MESSAGE(false, f);
    CHECK(count_ == 0);
  }
  bool any() {
    std::lock_guard<std::mutex> l(mu_);
    return count_ > 0;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> list_;
  size_t count_ = 0;
};

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_SUPPORT_THREAD_FAILURES_H_
