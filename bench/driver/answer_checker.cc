#include "bench/driver/answer_checker.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace feedcore::bench {
namespace {

// Mismatches printed in full; after that only counted, so a systematic
// difference does not flood the terminal.
constexpr size_t kPrintedMismatches = 5;

std::string Excerpt(absl::Span<const int64_t> values, size_t around) {
  const size_t begin = around > 3 ? around - 3 : 0;
  const size_t end = std::min(values.size(), around + 4);
  return absl::StrFormat(
      "[%s%s%s] (%d values)", begin > 0 ? "... " : "",
      absl::StrJoin(values.subspan(begin, end - begin), ", "),
      end < values.size() ? " ..." : "", values.size());
}

}  // namespace

bool AnswerChecker::Check(std::string_view scenario, std::string_view question,
                          std::string_view system,
                          absl::Span<const int64_t> expected,
                          absl::Span<const int64_t> answer) {
  ++comparisons_;
  if (expected == answer) return true;
  ++mismatches_;
  if (mismatches_ <= kPrintedMismatches) {
    size_t first = 0;
    while (first < expected.size() && first < answer.size() &&
           expected[first] == answer[first]) {
      ++first;
    }
    absl::FPrintF(stderr,
                  "\n*** ANSWER MISMATCH in %s, %s: %s differs from feedcore "
                  "at position %d\n***   feedcore: %s\n***   %s: %s\n",
                  scenario, question, system, first, Excerpt(expected, first),
                  system, Excerpt(answer, first));
  }
  return false;
}

void AnswerChecker::Fail(std::string_view scenario, std::string_view system,
                         const absl::Status& status) {
  ++failures_;
  absl::FPrintF(stderr, "\n*** FAILED CALL in %s, %s: %s\n", scenario, system,
                status.ToString());
}

}  // namespace feedcore::bench
