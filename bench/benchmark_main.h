// What the Google Benchmark programs of bench/ share: their default flags
// and how they stop when a fixture is broken.
#ifndef FEEDCORE_BENCH_BENCHMARK_MAIN_H_
#define FEEDCORE_BENCH_BENCHMARK_MAIN_H_

#include <benchmark/benchmark.h>
#include <errno.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace feedcore::bench {

// Stops the program: a fixture that does not hold what it should would
// make every figure after it meaningless.
[[noreturn]] inline void Die(std::string_view what) {
  std::fprintf(stderr, "%s: %.*s\n", program_invocation_short_name,
               static_cast<int>(what.size()), what.data());
  std::abort();
}

// Initializes Google Benchmark with five repetitions, aggregates only,
// unless the command line says otherwise: the defaults go first, so the
// same flags given later win. False (after reporting it) when an argument
// is not a benchmark flag.
inline bool InitializeWithDefaults(int argc, char** argv) {
  std::string repetitions = "--benchmark_repetitions=5";
  std::string aggregates = "--benchmark_report_aggregates_only=true";
  std::vector<char*> args;
  args.push_back(argv[0]);
  args.push_back(repetitions.data());
  args.push_back(aggregates.data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  int args_count = static_cast<int>(args.size());
  benchmark::Initialize(&args_count, args.data());
  return !benchmark::ReportUnrecognizedArguments(args_count, args.data());
}

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_BENCHMARK_MAIN_H_
