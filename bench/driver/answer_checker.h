// Makes sure that every system answered the same reads the same way, so
// that none wins by doing less. A mismatch or a failed call is printed at
// once, loudly, and fails the run.
#ifndef FEEDCORE_BENCH_DRIVER_ANSWER_CHECKER_H_
#define FEEDCORE_BENCH_DRIVER_ANSWER_CHECKER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace feedcore::bench {

class AnswerChecker {
 public:
  // Compares `system`'s answer to `question` with `expected` (feedcore's).
  // Returns true when they are equal.
  bool Check(std::string_view scenario, std::string_view question,
             std::string_view system, absl::Span<const int64_t> expected,
             absl::Span<const int64_t> answer);

  // Records that a system failed a call it should not fail.
  void Fail(std::string_view scenario, std::string_view system,
            const absl::Status& status);

  size_t comparisons() const { return comparisons_; }
  size_t mismatches() const { return mismatches_; }
  size_t failures() const { return failures_; }
  bool ok() const { return mismatches_ == 0 && failures_ == 0; }

 private:
  size_t comparisons_ = 0;
  size_t mismatches_ = 0;
  size_t failures_ = 0;
};

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_ANSWER_CHECKER_H_
