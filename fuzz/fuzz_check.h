// FUZZ_CHECK: the assertion of the fuzz targets. A failed check prints what
// failed and where, then aborts, which libFuzzer reports as a crash and
// saves the input; the replay tests report it as a failed test. Unlike
// assert() it stays on in release builds.
#ifndef FEEDCORE_FUZZ_FUZZ_CHECK_H_
#define FEEDCORE_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                               \
  do {                                                                      \
    if (!(condition)) {                                                     \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                   #condition);                                             \
      std::abort();                                                         \
    }                                                                       \
  } while (false)

// As FUZZ_CHECK, with a message printed by `print_detail` (any statement,
// e.g. a fprintf of the values involved) before aborting.
#define FUZZ_CHECK_DETAIL(condition, print_detail)                          \
  do {                                                                      \
    if (!(condition)) {                                                     \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                   #condition);                                             \
      print_detail;                                                         \
      std::abort();                                                         \
    }                                                                       \
  } while (false)

#endif  // FEEDCORE_FUZZ_FUZZ_CHECK_H_
