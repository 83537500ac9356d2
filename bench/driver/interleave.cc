#include "bench/driver/interleave.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace feedcore::bench {

void RunInterleaved(RunContext& context, std::string_view scenario,
                    std::string_view step, size_t rounds,
                    std::vector<SystemUnderTest>& systems) {
  const size_t n = systems.size();
  for (size_t round = 0; round < rounds; ++round) {
    context.progress.Update(scenario, step, round, rounds);
    for (size_t k = 0; k < n; ++k) {
      SystemUnderTest& system = systems[(round + k) % n];
      if (system.failed) continue;
      absl::Status status = system.run(round, system.samples);
      if (!status.ok()) {
        context.progress.Clear();
        context.answers.Fail(scenario, system.name, status);
        system.failed = true;
      }
    }
  }
  context.progress.Update(scenario, step, rounds, rounds);
  context.progress.Clear();
}

void AddFigures(RunContext& context, std::string_view scenario,
                std::string_view metric, std::string_view unit,
                const std::vector<SystemUnderTest>& systems,
                std::optional<double> redis_target) {
  for (const SystemUnderTest& system : systems) {
    if (system.failed || system.samples.empty()) continue;
    Figure figure;
    figure.scenario = std::string(scenario);
    figure.metric = std::string(metric);
    figure.system = system.name;
    figure.unit = std::string(unit);
    figure.summary = Summarize(system.samples);
    if (system.name == kFeedcore) figure.redis_target = redis_target;
    context.report.Add(std::move(figure));
  }
}

}  // namespace feedcore::bench
