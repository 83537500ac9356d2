#include "bench/driver/report.h"

#include <sys/utsname.h>

#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#ifndef FEEDCORE_BENCH_BUILD_TYPE
#define FEEDCORE_BENCH_BUILD_TYPE "unknown"
#endif

namespace feedcore::bench {
namespace {

constexpr char kBeginMarker[] = "<!-- feedcore-bench:begin -->";
constexpr char kEndMarker[] = "<!-- feedcore-bench:end -->";

// Three significant digits, with thousands separators for large numbers:
// enough to compare, few enough to read.
std::string Number(double value) {
  if (value >= 100000) {
    std::string digits = absl::StrFormat("%.0f", value);
    std::string grouped;
    const size_t lead = digits.size() % 3;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i != 0 && (i - lead) % 3 == 0) grouped += ',';
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

const Ratio* FindRatio(const std::vector<Ratio>& ratios, const Figure& figure) {
  for (const Ratio& ratio : ratios) {
    if (ratio.scenario == figure.scenario && ratio.metric == figure.metric &&
        ratio.other == figure.system) {
      return &ratio;
    }
  }
  return nullptr;
}

std::string TargetText(const Ratio& ratio) {
  if (!ratio.target.has_value()) return "-";
  return absl::StrCat(">= ", RatioText(*ratio.target), ": ",
                      ratio.met() ? "met" : "MISSED");
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
  for (const Figure& mine : figures_) {
    if (mine.system != kFeedcore) continue;
    for (const Figure& other : figures_) {
      if (other.system == kFeedcore || other.scenario != mine.scenario ||
          other.metric != mine.metric) {
        continue;
      }
      Ratio ratio;
      ratio.scenario = mine.scenario;
      ratio.metric = mine.metric;
      ratio.other = other.system;
      const double numerator =
          mine.higher_is_better ? mine.summary.median : other.summary.median;
      const double denominator =
          mine.higher_is_better ? other.summary.median : mine.summary.median;
      ratio.value = denominator > 0 ? numerator / denominator : 0;
      if (other.system == kRedis) ratio.target = mine.redis_target;
      ratios_.push_back(std::move(ratio));
    }
  }
}

void Report::PrintTable(std::FILE* out, const MachineInfo& machine) const {
  absl::FPrintF(out, "\nfeedcore-bench on %s (%u cores), %s, %s build\n",
                machine.cpu_model, machine.cores, machine.compiler,
                machine.build_type);
  if (!machine.redis_version.empty()) {
    absl::FPrintF(out, "redis-server %s\n", machine.redis_version);
  }
  absl::FPrintF(out, "\n%-15s %-46s %-14s %12s %12s %-6s %10s\n", "scenario",
                "metric", "system", "median", "p99", "unit", "feedcore is");
  for (const Figure& figure : figures_) {
    const Ratio* ratio = FindRatio(ratios_, figure);
    absl::FPrintF(out, "%-15s %-46s %-14s %12s %12s %-6s %10s\n",
                  figure.scenario, figure.metric, figure.system,
                  Number(figure.summary.median),
                  figure.higher_is_better ? "-" : Number(figure.summary.p99),
                  figure.unit, ratio == nullptr ? "" : RatioText(ratio->value));
  }
  absl::FPrintF(out, "\nHeadline: feedcore vs Redis (times better, medians)\n");
  bool any = false;
  for (const Ratio& ratio : ratios_) {
    if (ratio.other != kRedis) continue;
    any = true;
    absl::FPrintF(out, "  %-15s %-46s %8s   target %s\n", ratio.scenario,
                  ratio.metric, RatioText(ratio.value), TargetText(ratio));
  }
  if (!any) absl::FPrintF(out, "  (Redis did not run)\n");
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
         << ", \"feedcore_vs\": " << JsonString(r.other)
         << absl::StrFormat(", \"ratio\": %.4g", r.value);
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

absl::Status Report::WriteMarkdownSection(const std::string& path,
                                          const MachineInfo& machine) const {
  std::string existing;
  {
    std::ifstream in(path);
    if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    existing = buffer.str();
  }
  std::ostringstream md;
  md << kBeginMarker << "\n";
  md << "<!-- Generated by feedcore-bench (make bench); edits between these "
        "markers are overwritten. -->\n\n";
  md << "Run of " << machine.date << " at commit `" << machine.commit
     << "`:\n\n```sh\n"
     << machine.command << "\n```\n\n";
  md << "| machine | |\n|---|---|\n";
  md << "| CPU | " << machine.cpu_model << " |\n";
  md << "| cores | " << machine.cores << " |\n";
  md << "| compiler | " << machine.compiler << " |\n";
  md << "| build type | " << machine.build_type << " |\n";
  md << "| Redis | "
     << (machine.redis_version.empty()
             ? "did not run"
             : "redis-server " + machine.redis_version)
     << " |\n\n";

  md << "**Headline: feedcore vs Redis** (times better, ratio of medians "
        "measured in the same run):\n\n";
  md << "| scenario | figure | feedcore vs Redis | target |\n|---|---|---|---|"
        "\n";
  for (const Ratio& ratio : ratios_) {
    if (ratio.other != kRedis) continue;
    md << "| " << ratio.scenario << " | " << ratio.metric << " | **"
       << RatioText(ratio.value) << "** | " << TargetText(ratio) << " |\n";
  }
  md << "\n![feedcore vs Redis](benchmarks-vs-redis.png)\n\n";

  md << "All figures (ratio: how many times better feedcore's median is than "
        "that system's):\n\n";
  md << "| scenario | figure | system | median | p99 | unit | feedcore is |\n"
        "|---|---|---|---:|---:|---|---:|\n";
  for (const Figure& figure : figures_) {
    const Ratio* ratio = FindRatio(ratios_, figure);
    md << "| " << figure.scenario << " | " << figure.metric << " | "
       << figure.system << " | " << Number(figure.summary.median) << " | "
       << (figure.higher_is_better ? "-" : Number(figure.summary.p99)) << " | "
       << figure.unit << " | "
       << (ratio == nullptr ? "" : RatioText(ratio->value)) << " |\n";
  }
  if (!notes_.empty()) {
    md << "\nNotes of this run:\n\n";
    for (const std::string& note : notes_) md << "* " << note << "\n";
  }
  md << "\n" << kEndMarker;

  const size_t begin = existing.find(kBeginMarker);
  const size_t end = existing.find(kEndMarker);
  std::string updated;
  if (begin != std::string::npos && end != std::string::npos && begin < end) {
    updated = existing.substr(0, begin) + md.str() +
              existing.substr(end + sizeof(kEndMarker) - 1);
  } else {
    updated = existing + "\n" + md.str() + "\n";
  }
  std::ofstream out(path);
  out << updated;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status Report::WriteChartData(const std::string& path) const {
  std::ofstream out(path);
  out << "# label\tfeedcore/redis\ttarget\n";
  for (const Ratio& ratio : ratios_) {
    if (ratio.other != kRedis) continue;
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
