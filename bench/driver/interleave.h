// Runs the same workload on every system in rounds, interleaved: round r
// of every system before round r + 1 of any, and each round starts with a
// different system. Noise of the shared machine (other processes, turbo,
// page cache) then lands on all systems alike, which is what makes the
// ratios between them trustworthy.
#ifndef FEEDCORE_BENCH_DRIVER_INTERLEAVE_H_
#define FEEDCORE_BENCH_DRIVER_INTERLEAVE_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "bench/driver/scenario.h"

namespace feedcore::bench {

struct SystemUnderTest {
  std::string name;
  // Runs round `round` and appends its measurements to `samples`.
  std::function<absl::Status(size_t round, std::vector<double>& samples)> run;
  std::vector<double> samples;
  bool failed = false;  // a call failed; its figures are not reported
};

// Runs `rounds` rounds. A system whose round fails is reported to the
// answer checker (failing the run) and skipped from then on.
void RunInterleaved(RunContext& context, std::string_view scenario,
                    std::string_view step, size_t rounds,
                    std::vector<SystemUnderTest>& systems);

// Adds one figure per system that did not fail, from its samples.
void AddFigures(RunContext& context, std::string_view scenario,
                std::string_view metric, std::string_view unit,
                const std::vector<SystemUnderTest>& systems,
                std::optional<double> redis_target = std::nullopt);

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_INTERLEAVE_H_
