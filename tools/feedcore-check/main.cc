// feedcore-check: checks (and with --fix repairs) the directory of a
// DurableStore or of feedcore-server's `--appendonly yes`, as
// redis-check-aof does for Redis's append-only file.
//
//   feedcore-check DIR         report every file; change nothing
//   feedcore-check --fix DIR   also cut each damaged file back to what
//                              precedes its first damaged frame
//
// Exit status: 0 clean (or, with --fix, repaired), 1 damaged (with --fix:
// damage that cannot be repaired, or a repair that failed), 2 usage errors
// and directories that cannot be checked (missing, unreadable, in use).
// What each file's report means and what a repair drops:
// directory_check.h.
#include <cstdio>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "directory_check.h"

namespace {

using feedcore::check::DirectoryReport;
using feedcore::check::FileKind;
using feedcore::check::FileReport;
using feedcore::check::Repair;

constexpr int kExitClean = 0;
constexpr int kExitDamaged = 1;
constexpr int kExitUsage = 2;

constexpr char kUsage[] =
    "usage: feedcore-check [--fix] DIR\n"
    "Checks every file of a feedcore store directory (DurableStore, or\n"
    "feedcore-server --appendonly yes --dir DIR) without changing it.\n"
    "  --fix   keep what precedes each damaged file's first damaged frame\n"
    "          and drop the rest, saying what was dropped\n"
    "Exit status: 0 clean or repaired, 1 damaged, 2 usage error or a\n"
    "directory that cannot be checked.\n";

std::string Records(uint64_t n, const char* unit) {
  return absl::StrCat(n, " ", unit, n == 1 ? "" : "s");
}

std::string Summary(const FileReport& file) {
  switch (file.kind) {
    case FileKind::kSnapshot:
      return absl::StrCat(Records(file.frames, "section"),
                          ", replay from sequence ", file.first_sequence);
    case FileKind::kLogSegment:
      if (file.frames == 0) return "0 records";
      return absl::StrCat(Records(file.frames, "record"), " (sequences ",
                          file.first_sequence, "..", file.last_sequence, ")");
    case FileKind::kNamesJournal:
      return Records(file.frames, "record");
  }
  return "";
}

void PrintFile(const FileReport& file) {
  if (!file.damaged && file.repair == Repair::kNone) {
    std::printf("%s: OK, %s\n", file.path.c_str(), Summary(file).c_str());
    return;
  }
  if (file.damaged) {
    std::string where = file.damage_offset.has_value()
                            ? absl::StrCat(" at byte ", *file.damage_offset)
                            : std::string();
    std::printf("%s: DAMAGED%s: %s\n", file.path.c_str(), where.c_str(),
                file.problem.c_str());
    if (file.damage_offset.has_value()) {
      std::printf(
          "  %s; %s follow from byte %llu (at least %s after the damaged "
          "frame)\n",
          absl::StrCat(Summary(file), " whole before it").c_str(),
          Records(file.bytes_after, "byte").c_str(),
          static_cast<unsigned long long>(*file.damage_offset),
          Records(file.records_after, "whole record").c_str());
    }
    if (file.open_repairs_it) {
      std::printf(
          "  (a torn tail, as a crash leaves it: Open cuts it off "
          "by itself)\n");
    }
  } else {
    std::printf("%s: %s\n", file.path.c_str(), Summary(file).c_str());
  }
  switch (file.repair) {
    case Repair::kNone:
      break;
    case Repair::kTruncate:
      std::printf(
          "  repair: truncate to %llu bytes, dropping %s: the damaged frame "
          "and %s\n",
          static_cast<unsigned long long>(file.keep_bytes),
          Records(file.dropped_bytes, "byte").c_str(),
          Records(file.dropped_records, "whole record").c_str());
      break;
    case Repair::kMoveAside:
      std::printf("  repair: move aside to %s%s (%s), dropping %s: %s\n",
                  file.path.c_str(), feedcore::check::kDamagedSuffix,
                  file.repair_reason.c_str(),
                  Records(file.dropped_bytes, "byte").c_str(),
                  Records(file.dropped_records, "whole record").c_str());
      break;
    case Repair::kCannot:
      std::printf("  cannot be repaired: %s\n", file.repair_reason.c_str());
      break;
  }
}

void PrintReport(const DirectoryReport& report) {
  for (const FileReport& file : report.files) PrintFile(file);
  for (const std::string& path : report.leftovers) {
    std::printf(
        "%s: not read (Open deletes what an interrupted save or "
        "segment creation left, and ignores other names)\n",
        path.c_str());
  }
  for (const std::string& problem : report.unrepairable) {
    std::printf(
        "DAMAGED: %s\n  cannot be repaired: restore the directory "
        "from a copy\n",
        problem.c_str());
  }
}

void PrintDropped(const DirectoryReport& report) {
  for (const FileReport& file : report.files) {
    if (file.repair == Repair::kTruncate) {
      std::printf(
          "dropped: %s from byte %llu: %s, the damaged frame and %s "
          "(truncated)\n",
          file.path.c_str(), static_cast<unsigned long long>(file.keep_bytes),
          Records(file.dropped_bytes, "byte").c_str(),
          Records(file.dropped_records, "whole record").c_str());
    } else if (file.repair == Repair::kMoveAside) {
      std::printf("dropped: %s from byte 0: %s, %s (moved to %s%s)\n",
                  file.path.c_str(),
                  Records(file.dropped_bytes, "byte").c_str(),
                  Records(file.dropped_records, "whole record").c_str(),
                  file.path.c_str(), feedcore::check::kDamagedSuffix);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool fix = false;
  std::string directory;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return kExitClean;
    }
    if (arg == "--fix") {
      fix = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "feedcore-check: unknown option %s\n%s", argv[i],
                   kUsage);
      return kExitUsage;
    } else if (directory.empty()) {
      directory = std::string(arg);
    } else {
      std::fprintf(stderr, "feedcore-check: one directory only (got %s)\n%s",
                   argv[i], kUsage);
      return kExitUsage;
    }
  }
  if (directory.empty()) {
    std::fprintf(stderr, "feedcore-check: no directory given\n%s", kUsage);
    return kExitUsage;
  }
  while (directory.size() > 1 && directory.back() == '/') directory.pop_back();

  absl::StatusOr<feedcore::check::DirectoryLock> lock =
      feedcore::check::DirectoryLock::Acquire(directory, fix);
  if (!lock.ok()) {
    std::fprintf(stderr, "feedcore-check: %s\n",
                 std::string(lock.status().message()).c_str());
    return kExitUsage;
  }
  absl::StatusOr<DirectoryReport> report =
      feedcore::check::CheckDirectory(directory);
  if (!report.ok()) {
    std::fprintf(stderr, "feedcore-check: %s\n",
                 std::string(report.status().message()).c_str());
    return kExitUsage;
  }
  PrintReport(*report);
  if (!report->Damaged()) {
    std::printf("%s: clean\n", directory.c_str());
    return kExitClean;
  }
  if (!fix) {
    std::printf("%s: damaged%s\n", directory.c_str(),
                report->Repairable()
                    ? "; feedcore-check --fix drops what is listed above"
                    : "; --fix cannot repair all of it");
    return kExitDamaged;
  }
  if (!report->Repairable()) {
    std::printf("%s: damaged and not repairable; nothing was changed\n",
                directory.c_str());
    return kExitDamaged;
  }
  std::fflush(stdout);
  if (absl::Status s = feedcore::check::RepairDirectory(*report); !s.ok()) {
    std::fprintf(stderr, "feedcore-check: repair failed: %s\n",
                 std::string(s.message()).c_str());
    return kExitDamaged;
  }
  PrintDropped(*report);
  std::printf("%s: repaired\n", directory.c_str());
  return kExitClean;
}
