#include "bench/driver/report.h"

#include <sys/utsname.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

#ifndef FEEDCORE_BENCH_BUILD_TYPE
#define FEEDCORE_BENCH_BUILD_TYPE "unknown"
#endif

namespace feedcore::bench {
namespace {

// Three significant digits, with thousands separators for large numbers:
// enough to compare, few enough to read.
std::string Number(double value) {
  if (value >= 100000) {
    std::string digits = absl::StrFormat("%.0f", value);
    std::string grouped;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i != 0 && (digits.size() - i) % 3 == 0) grouped += ',';
      grouped += digits[i];
    }
    return grouped;
  }
  if (value >= 100) return absl::StrFormat("%.0f", value);
  if (value >= 10) return absl::StrFormat("%.1f", value);
  return absl::StrFormat("%.2f", value);
}

std::string RatioText(double value) {
  return absl::StrCat(value >= 10 ? absl::StrFormat("%.0f", value)
                                  : absl::StrFormat("%.2f", value),
                      "x");
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

const Ratio* FindRatio(const std::vector<Ratio>& ratios,
                       std::string_view scenario, std::string_view metric,
                       std::string_view base, std::string_view other) {
  for (const Ratio& ratio : ratios) {
    if (ratio.scenario == scenario && ratio.metric == metric &&
        ratio.base == base && ratio.other == other) {
      return &ratio;
    }
  }
  return nullptr;
}

// feedcore's ratio to `figure`'s system: the "feedcore is" column.
const Ratio* FindRatio(const std::vector<Ratio>& ratios, const Figure& figure) {
  return FindRatio(ratios, figure.scenario, figure.metric, kFeedcore,
                   figure.system);
}

bool IsHeadline(const Ratio& ratio) {
  return ratio.base == kFeedcore && ratio.other == kRedis;
}

// A ratio asked for with Report::Compare.
bool IsComparison(const Ratio& ratio) {
  return ratio.base != kFeedcore && ratio.base != kFeedcoreCluster;
}

const Figure* FindFigure(const std::vector<Figure>& figures,
                         std::string_view scenario, std::string_view metric,
                         std::string_view system) {
  for (const Figure& figure : figures) {
    if (figure.scenario == scenario && figure.metric == metric &&
        figure.system == system) {
      return &figure;
    }
  }
  return nullptr;
}

// One metric that feedcore on Redis Cluster ran, with the in-process
// engine and Redis beside it (null when they did not run).
struct ClusterRow {
  const Figure* cluster = nullptr;
  const Figure* in_process = nullptr;
  const Figure* redis = nullptr;
  const Ratio* in_process_vs_cluster = nullptr;
  const Ratio* cluster_vs_redis = nullptr;
};

std::vector<ClusterRow> ClusterRows(const std::vector<Figure>& figures,
                                    const std::vector<Ratio>& ratios) {
  std::vector<ClusterRow> rows;
  for (const Figure& figure : figures) {
    if (figure.system != kFeedcoreCluster) continue;
    ClusterRow row;
    row.cluster = &figure;
    row.in_process =
        FindFigure(figures, figure.scenario, figure.metric, kFeedcore);
    row.redis = FindFigure(figures, figure.scenario, figure.metric, kRedis);
    row.in_process_vs_cluster = FindRatio(
        ratios, figure.scenario, figure.metric, kFeedcore, kFeedcoreCluster);
    row.cluster_vs_redis = FindRatio(ratios, figure.scenario, figure.metric,
                                     kFeedcoreCluster, kRedis);
    rows.push_back(row);
  }
  return rows;
}

std::string MedianText(const Figure* figure) {
  return figure == nullptr ? "-" : Number(figure->summary.median);
}

std::string P99Text(const Figure* figure) {
  return figure == nullptr || figure->higher_is_better
             ? "-"
             : Number(figure->summary.p99);
}

std::string RatioOrDash(const Ratio* ratio) {
  return ratio == nullptr ? "-" : RatioText(ratio->value);
}

std::string TargetText(const Ratio& ratio) {
  if (!ratio.target.has_value()) return "-";
  return absl::StrCat(">= ", RatioText(*ratio.target), ": ",
                      ratio.met() ? "met" : "MISSED");
}

// "median / p99" of one figure, the median alone for a throughput, "-"
// when the system has no such figure.
std::string Cell(const Figure* figure) {
  if (figure == nullptr) return "-";
  if (figure->higher_is_better) return Number(figure->summary.median);
  return absl::StrCat(Number(figure->summary.median), " / ",
                      Number(figure->summary.p99));
}

// The scenarios, metrics and systems of `figures`, each in the order of
// its first figure (feedcore first among a scenario's systems).
std::vector<std::string> Scenarios(const std::vector<Figure>& figures) {
  std::vector<std::string> out;
  for (const Figure& figure : figures) {
    if (std::find(out.begin(), out.end(), figure.scenario) == out.end()) {
      out.push_back(figure.scenario);
    }
  }
  return out;
}

std::vector<std::string> MetricsOf(const std::vector<Figure>& figures,
                                   std::string_view scenario) {
  std::vector<std::string> out;
  for (const Figure& figure : figures) {
    if (figure.scenario == scenario &&
        std::find(out.begin(), out.end(), figure.metric) == out.end()) {
      out.push_back(figure.metric);
    }
  }
  return out;
}

std::vector<std::string> SystemsOf(const std::vector<Figure>& figures,
                                   std::string_view scenario) {
  std::vector<std::string> out;
  for (const Figure& figure : figures) {
    if (figure.scenario == scenario &&
        std::find(out.begin(), out.end(), figure.system) == out.end()) {
      out.push_back(figure.system);
    }
  }
  std::stable_partition(out.begin(), out.end(), [](const std::string& name) {
    return name == kFeedcore;
  });
  return out;
}

// The driver's flags that shape the figures: its command line without the
// program's path and the flags that only name output files.
std::string SizeFlags(const std::string& command) {
  std::string flags;
  bool program = true;
  for (absl::string_view arg :
       absl::StrSplit(command, ' ', absl::SkipEmpty())) {
    if (program) {
      program = false;
      continue;
    }
    if (absl::StartsWith(arg, "--commit=") ||
        absl::StartsWith(arg, "--json=") ||
        absl::StartsWith(arg, "--markdown=") ||
        absl::StartsWith(arg, "--chart_data=")) {
      continue;
    }
    absl::StrAppend(&flags, flags.empty() ? "" : " ", arg);
  }
  return flags.empty() ? "default sizes" : absl::StrCat("`", flags, "`");
}

std::string ReadCpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

}  // namespace

void Report::ComputeRatios() {
  ratios_.clear();
  auto add = [&](const Figure& mine, const Figure& other) {
    Ratio ratio;
    ratio.scenario = mine.scenario;
    ratio.metric = mine.metric;
    ratio.base = mine.system;
    ratio.other = other.system;
    const double numerator =
        mine.higher_is_better ? mine.summary.median : other.summary.median;
    const double denominator =
        mine.higher_is_better ? other.summary.median : mine.summary.median;
    ratio.value = denominator > 0 ? numerator / denominator : 0;
    if (mine.system == kFeedcore && other.system == kRedis) {
      ratio.target = mine.redis_target;
    }
    ratios_.push_back(std::move(ratio));
  };
  for (const Figure& mine : figures_) {
    if (mine.system != kFeedcore) continue;
    for (const Figure& other : figures_) {
      if (other.system == kFeedcore || other.scenario != mine.scenario ||
          other.metric != mine.metric) {
        continue;
      }
      add(mine, other);
    }
  }
  // The cluster backend against plain Redis: the same loopback network
  // path, so what is left is the backend's own work per entry.
  for (const Figure& mine : figures_) {
    if (mine.system != kFeedcoreCluster) continue;
    if (const Figure* redis =
            FindFigure(figures_, mine.scenario, mine.metric, kRedis)) {
      add(mine, *redis);
    }
  }
  for (const Ratio& wanted : comparisons_) {
    const Figure* base =
        FindFigure(figures_, wanted.scenario, wanted.metric, wanted.base);
    const Figure* other =
        FindFigure(figures_, wanted.scenario, wanted.metric, wanted.other);
    if (base == nullptr || other == nullptr) continue;
    add(*base, *other);
    ratios_.back().target = wanted.target;
  }
}

void Report::PrintTable(std::FILE* out, const MachineInfo& machine) const {
  absl::FPrintF(out, "\nfeedcore-bench on %s (%u cores), %s, %s build\n",
                machine.cpu_model, machine.cores, machine.compiler,
                machine.build_type);
  if (!machine.redis_version.empty()) {
    absl::FPrintF(out, "redis-server %s\n", machine.redis_version);
  }
  if (!machine.redis_cluster.empty()) {
    absl::FPrintF(out, "Redis Cluster: %s\n", machine.redis_cluster);
  }
  absl::FPrintF(out, "\n%-15s %-46s %-22s %12s %12s %-6s %10s\n", "scenario",
                "metric", "system", "median", "p99", "unit", "feedcore is");
  for (const Figure& figure : figures_) {
    const Ratio* ratio = FindRatio(ratios_, figure);
    absl::FPrintF(out, "%-15s %-46s %-22s %12s %12s %-6s %10s\n",
                  figure.scenario, figure.metric, figure.system,
                  Number(figure.summary.median),
                  figure.higher_is_better ? "-" : Number(figure.summary.p99),
                  figure.unit, ratio == nullptr ? "" : RatioText(ratio->value));
  }
  absl::FPrintF(out, "\nHeadline: feedcore vs Redis (times better, medians)\n");
  bool any = false;
  for (const Ratio& ratio : ratios_) {
    if (!IsHeadline(ratio)) continue;
    any = true;
    absl::FPrintF(out, "  %-15s %-46s %8s   target %s\n", ratio.scenario,
                  ratio.metric, RatioText(ratio.value), TargetText(ratio));
  }
  if (!any) absl::FPrintF(out, "  (Redis did not run)\n");
  bool compared = false;
  for (const Ratio& ratio : ratios_) {
    if (!IsComparison(ratio)) continue;
    if (!compared) {
      absl::FPrintF(out, "\nSystems compared with each other (medians)\n");
      compared = true;
    }
    absl::FPrintF(out, "  %-15s %-30s %-18s vs %-18s %8s   target %s\n",
                  ratio.scenario, ratio.metric, ratio.base, ratio.other,
                  RatioText(ratio.value), TargetText(ratio));
  }
  const std::vector<ClusterRow> rows = ClusterRows(figures_, ratios_);
  if (!rows.empty()) {
    absl::FPrintF(out,
                  "\nfeedcore in-process vs feedcore on Redis Cluster "
                  "(medians and p99; times better)\n");
    absl::FPrintF(out, "  %-15s %-30s %-4s %19s %19s %19s %18s %16s\n",
                  "scenario", "metric", "unit", "in-process", "on cluster",
                  "redis", "in-proc vs cluster", "cluster vs redis");
    for (const ClusterRow& row : rows) {
      auto pair = [](const Figure* figure) {
        return absl::StrCat(MedianText(figure), " / ", P99Text(figure));
      };
      absl::FPrintF(out, "  %-15s %-30s %-4s %19s %19s %19s %18s %16s\n",
                    row.cluster->scenario, row.cluster->metric,
                    row.cluster->unit, pair(row.in_process), pair(row.cluster),
                    pair(row.redis), RatioOrDash(row.in_process_vs_cluster),
                    RatioOrDash(row.cluster_vs_redis));
    }
  }
  for (const std::string& note : notes_) absl::FPrintF(out, "note: %s\n", note);
}

absl::Status Report::WriteJson(const std::string& path,
                               const MachineInfo& machine,
                               bool answers_ok) const {
  std::ostringstream json;
  json << "{\n  \"machine\": {\"cpu_model\": " << JsonString(machine.cpu_model)
       << ", \"cores\": " << machine.cores
       << ", \"compiler\": " << JsonString(machine.compiler)
       << ", \"build_type\": " << JsonString(machine.build_type)
       << ", \"redis_version\": " << JsonString(machine.redis_version)
       << ", \"redis_cluster\": " << JsonString(machine.redis_cluster)
       << ", \"commit\": " << JsonString(machine.commit)
       << ", \"command\": " << JsonString(machine.command)
       << ", \"date\": " << JsonString(machine.date) << "},\n";
  json << "  \"answers_match\": " << (answers_ok ? "true" : "false") << ",\n";
  json << "  \"figures\": [";
  for (size_t i = 0; i < figures_.size(); ++i) {
    const Figure& f = figures_[i];
    json << (i == 0 ? "\n" : ",\n")
         << "    {\"scenario\": " << JsonString(f.scenario)
         << ", \"metric\": " << JsonString(f.metric)
         << ", \"system\": " << JsonString(f.system)
         << ", \"unit\": " << JsonString(f.unit) << ", \"higher_is_better\": "
         << (f.higher_is_better ? "true" : "false")
         << ", \"count\": " << f.summary.count
         << absl::StrFormat(
                ", \"median\": %.6g, \"p99\": %.6g, \"min\": %.6g, "
                "\"max\": %.6g, \"mean\": %.6g}",
                f.summary.median, f.summary.p99, f.summary.min, f.summary.max,
                f.summary.mean);
  }
  json << "\n  ],\n  \"ratios\": [";
  for (size_t i = 0; i < ratios_.size(); ++i) {
    const Ratio& r = ratios_[i];
    json << (i == 0 ? "\n" : ",\n")
         << "    {\"scenario\": " << JsonString(r.scenario)
         << ", \"metric\": " << JsonString(r.metric)
         << ", \"system\": " << JsonString(r.base)
         << ", \"vs\": " << JsonString(r.other);
    if (r.base == kFeedcore) {
      json << ", \"feedcore_vs\": " << JsonString(r.other);
    }
    json << absl::StrFormat(", \"ratio\": %.4g", r.value);
    if (r.target.has_value()) {
      json << absl::StrFormat(", \"target\": %.4g, \"met\": %s", *r.target,
                              r.met() ? "true" : "false");
    }
    json << "}";
  }
  json << "\n  ],\n  \"notes\": [";
  for (size_t i = 0; i < notes_.size(); ++i) {
    json << (i == 0 ? "\n    " : ",\n    ") << JsonString(notes_[i]);
  }
  json << "\n  ]\n}\n";
  std::ofstream file(path);
  file << json.str();
  file.close();
  if (!file) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status Report::WriteMarkdown(const std::string& path,
                                   const MachineInfo& machine) const {
  std::ostringstream md;
  md << "# Benchmark results\n\n"
        "Generated by `make bench` (`feedcore-bench --markdown`) from one "
        "run; do not edit: the next run rewrites this file. What each figure "
        "measures and how to read it: [benchmarks.md](benchmarks.md).\n\n";
  md << "| machine | |\n|---|---|\n";
  md << "| CPU | " << machine.cpu_model << " |\n";
  md << "| cores | " << machine.cores << " |\n";
  md << "| compiler | " << machine.compiler << " |\n";
  md << "| build type | " << machine.build_type << " |\n";
  md << "| Redis | "
     << (machine.redis_version.empty()
             ? "did not run"
             : "redis-server " + machine.redis_version)
     << " |\n";
  md << "| Redis Cluster | "
     << (machine.redis_cluster.empty() ? "did not run" : machine.redis_cluster)
     << " |\n";
  md << "| flags | " << SizeFlags(machine.command) << " |\n\n";

  md << "## feedcore vs Redis\n\n"
        "Times better: Redis's median over feedcore's, both of this run.\n\n";
  md << "| scenario | figure | feedcore vs Redis | target |\n"
        "|---|---|---:|---|\n";
  bool headline = false;
  for (const Ratio& ratio : ratios_) {
    if (!IsHeadline(ratio)) continue;
    headline = true;
    md << "| " << ratio.scenario << " | " << ratio.metric << " | **"
       << RatioText(ratio.value) << "** | " << TargetText(ratio) << " |\n";
  }
  if (headline) {
    md << "\n![feedcore vs Redis](benchmarks-vs-redis.png)\n\n";
  } else {
    md << "| - | Redis did not run | - | - |\n\n";
  }

  bool compared = false;
  for (const Ratio& ratio : ratios_) {
    if (!IsComparison(ratio)) continue;
    if (!compared) {
      md << "## Systems compared with each other\n\n"
            "| scenario | figure | system | vs | times better | target |\n"
            "|---|---|---|---|---:|---|\n";
      compared = true;
    }
    md << "| " << ratio.scenario << " | " << ratio.metric << " | " << ratio.base
       << " | " << ratio.other << " | **" << RatioText(ratio.value) << "** | "
       << TargetText(ratio) << " |\n";
  }
  if (compared) md << "\n";

  const std::vector<ClusterRow> rows = ClusterRows(figures_, ratios_);
  if (!rows.empty()) {
    md << "## feedcore in process vs on Redis Cluster\n\n"
          "Median / p99; times better: in process vs the cluster backend, "
          "the cluster backend vs Redis.\n\n";
    md << "| scenario | figure | unit | in process | on Redis Cluster | Redis "
          "| in process vs cluster | cluster vs Redis |\n"
          "|---|---|---|---:|---:|---:|---:|---:|\n";
    for (const ClusterRow& row : rows) {
      md << "| " << row.cluster->scenario << " | " << row.cluster->metric
         << " | " << row.cluster->unit << " | " << Cell(row.in_process) << " | "
         << Cell(row.cluster) << " | " << Cell(row.redis) << " | **"
         << RatioOrDash(row.in_process_vs_cluster) << "** | "
         << RatioOrDash(row.cluster_vs_redis) << " |\n";
    }
    md << "\n";
  }

  // What the cluster table shows whole is not repeated below.
  absl::flat_hash_set<const Figure*> shown;
  for (const ClusterRow& row : rows) {
    shown.insert({row.cluster, row.in_process, row.redis});
  }
  md << "## All figures\n\n"
        "The rest, one table per scenario, named in its first column. "
        "Median / p99 (throughputs: the median); in brackets, how many times "
        "better feedcore's median is.\n";
  for (const std::string& scenario : Scenarios(figures_)) {
    const std::vector<std::string> all_systems = SystemsOf(figures_, scenario);
    std::vector<std::string> metrics;
    std::vector<std::string> systems;
    for (const std::string& metric : MetricsOf(figures_, scenario)) {
      bool new_figure = false;
      for (const std::string& system : all_systems) {
        const Figure* figure = FindFigure(figures_, scenario, metric, system);
        new_figure =
            new_figure || (figure != nullptr && !shown.contains(figure));
      }
      if (new_figure) metrics.push_back(metric);
    }
    for (const std::string& system : all_systems) {
      for (const std::string& metric : metrics) {
        if (FindFigure(figures_, scenario, metric, system) != nullptr) {
          systems.push_back(system);
          break;
        }
      }
    }
    if (metrics.empty()) continue;
    md << "\n| " << scenario << " | unit |";
    for (const std::string& system : systems) md << " " << system << " |";
    md << "\n|---|---|";
    for (size_t i = 0; i < systems.size(); ++i) md << "---:|";
    md << "\n";
    for (const std::string& metric : metrics) {
      const Figure* any = nullptr;
      for (const std::string& system : systems) {
        if (any == nullptr)
          any = FindFigure(figures_, scenario, metric, system);
      }
      md << "| " << metric << " | " << any->unit << " |";
      for (const std::string& system : systems) {
        const Figure* figure = FindFigure(figures_, scenario, metric, system);
        md << " " << Cell(figure);
        if (figure != nullptr) {
          if (const Ratio* ratio = FindRatio(ratios_, *figure)) {
            md << " (" << RatioText(ratio->value) << ")";
          }
        }
        md << " |";
      }
      md << "\n";
    }
  }
  if (!notes_.empty()) {
    md << "\n## Notes\n\n";
    // One line per run of notes that begin with the same scenario name.
    std::string open_scenario;
    for (const std::string& note : notes_) {
      const size_t colon = note.find(": ");
      const std::string scenario =
          colon == std::string::npos ? "" : note.substr(0, colon);
      if (!scenario.empty() && scenario == open_scenario) {
        md << "; " << note.substr(colon + 2);
        continue;
      }
      if (&note != &notes_.front()) md << "\n";
      md << "* " << note;
      open_scenario = scenario;
    }
    md << "\n";
  }

  std::ofstream out(path);
  out << md.str();
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status Report::WriteChartData(const std::string& path) const {
  std::ofstream out(path);
  out << "# label\tfeedcore/redis\ttarget\n";
  for (const Ratio& ratio : ratios_) {
    if (!IsHeadline(ratio)) continue;
    out << '"' << ratio.scenario << ": " << ratio.metric << "\"\t"
        << absl::StrFormat("%.4g", ratio.value) << "\t"
        << absl::StrFormat("%.4g", ratio.target.value_or(0)) << "\n";
  }
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

MachineInfo CollectMachineInfo() {
  MachineInfo info;
  info.cpu_model = ReadCpuModel();
  info.cores = std::thread::hardware_concurrency();
#if defined(__clang__)
  info.compiler = absl::StrCat("clang ", __clang_version__);
#elif defined(__GNUC__)
  info.compiler = absl::StrCat("g++ ", __VERSION__);
#else
  info.compiler = "unknown";
#endif
  info.build_type = FEEDCORE_BENCH_BUILD_TYPE;
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", &utc);
  info.date = date;
  return info;
}

}  // namespace feedcore::bench
