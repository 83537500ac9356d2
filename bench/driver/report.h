// What a run of feedcore-bench measured, and how it is written out: a
// table on stdout, JSON, the generated Markdown page
// (docs/benchmark-results.md) and a data file for the chart.
#ifndef FEEDCORE_BENCH_DRIVER_REPORT_H_
#define FEEDCORE_BENCH_DRIVER_REPORT_H_

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench/driver/stats.h"

namespace feedcore::bench {

// Names of the systems, as printed and written to JSON.
inline constexpr char kFeedcore[] = "feedcore";
// feedcore's FeedEngine on the Redis Cluster backend.
inline constexpr char kFeedcoreCluster[] = "feedcore_redis_cluster";
inline constexpr char kRedis[] = "redis";
inline constexpr char kStdMapMutex[] = "std_map_mutex";
inline constexpr char kMergeOnRead[] = "merge_on_read";

// One measured quantity of one system in one scenario.
struct Figure {
  std::string scenario;  // e.g. "celebrity-post"
  std::string metric;    // e.g. "publish to 210,000 followers"
  std::string system;    // kFeedcore, kRedis...
  std::string unit;      // "ms", "us", "ns/op", "ops/s", "bytes"
  // Throughputs: a larger median is better, and the ratio is inverted.
  bool higher_is_better = false;
  Summary summary;
  // On feedcore's figures: the target for feedcore / Redis, if any.
  std::optional<double> redis_target;
};

// How many times better `base` (feedcore, unless said otherwise) did than
// `other` on one metric: other's median time / base's median time (or
// base's throughput / other's). Above 1 means `base` did better.
struct Ratio {
  std::string scenario;
  std::string metric;
  std::string base = kFeedcore;
  std::string other;
  double value = 0;
  std::optional<double> target;  // the target, vs Redis only
  bool met() const { return !target.has_value() || value >= *target; }
};

struct MachineInfo {
  std::string cpu_model;
  unsigned cores = 0;
  std::string compiler;
  std::string build_type;
  std::string redis_version;  // empty when Redis did not run
  std::string redis_cluster;  // what the cluster is; empty when not run
  std::string commit;         // as passed with --commit
  std::string command;        // the driver's command line
  std::string date;           // UTC, when the run started
};

class Report {
 public:
  void Add(Figure figure) { figures_.push_back(std::move(figure)); }
  // Asks for the ratio of `base` to `other` on one metric, with a target,
  // besides the ones ComputeRatios makes by itself: for systems compared
  // with each other rather than with feedcore (a durable engine against
  // the in-memory one, or against Redis with the same fsync policy).
  void Compare(std::string scenario, std::string metric, std::string base,
               std::string other, std::optional<double> target) {
    comparisons_.push_back({std::move(scenario), std::move(metric),
                            std::move(base), std::move(other), 0, target});
  }
  // Notes printed with the results (skipped systems, sizes...).
  void Note(std::string note) { notes_.push_back(std::move(note)); }

  // Computes the ratio of feedcore to every other system, for every
  // (scenario, metric) where both have a figure, of feedcore on Redis
  // Cluster to Redis, and those asked for with Compare.
  void ComputeRatios();

  const std::vector<Figure>& figures() const { return figures_; }
  const std::vector<Ratio>& ratios() const { return ratios_; }
  const std::vector<std::string>& notes() const { return notes_; }

  void PrintTable(std::FILE* out, const MachineInfo& machine) const;
  absl::Status WriteJson(const std::string& path, const MachineInfo& machine,
                         bool answers_ok) const;
  // Writes `path` whole: a page of this run's tables only, the machine and
  // the size flags, no date and no commit id.
  absl::Status WriteMarkdown(const std::string& path,
                             const MachineInfo& machine) const;
  // One line per ratio vs Redis: label, ratio, target (for gnuplot).
  absl::Status WriteChartData(const std::string& path) const;

 private:
  std::vector<Figure> figures_;
  std::vector<Ratio> ratios_;
  std::vector<Ratio> comparisons_;  // asked for with Compare; value unset
  std::vector<std::string> notes_;
};

MachineInfo CollectMachineInfo();

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_REPORT_H_
