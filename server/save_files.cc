#include "save_files.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace feedcore::server {
namespace {

constexpr absl::string_view kSuffix = ".fcsnap";
constexpr absl::string_view kTemporarySuffix = ".tmp";

std::filesystem::path DirectoryOf(const std::string& manifest_path) {
  std::filesystem::path dir =
      std::filesystem::path(manifest_path).parent_path();
  return dir.empty() ? std::filesystem::path(".") : dir;
}

// The generation of `file_name` if it is `<manifest name>.<digits>.fcsnap`
// (with `.tmp` after it when `temporary`), and nullopt otherwise: nothing
// else in the directory is ever touched.
std::optional<uint64_t> GenerationOf(absl::string_view file_name,
                                     absl::string_view manifest_name,
                                     bool temporary) {
  if (!absl::ConsumePrefix(&file_name, manifest_name) ||
      !absl::ConsumePrefix(&file_name, ".")) {
    return std::nullopt;
  }
  if (temporary && !absl::ConsumeSuffix(&file_name, kTemporarySuffix)) {
    return std::nullopt;
  }
  if (!absl::ConsumeSuffix(&file_name, kSuffix) || file_name.empty() ||
      !std::all_of(file_name.begin(), file_name.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  uint64_t generation = 0;
  if (!absl::SimpleAtoi(file_name, &generation)) return std::nullopt;
  return generation;
}

}  // namespace

std::string SnapshotPathOf(const std::string& manifest_path,
                           uint64_t generation) {
  return absl::StrCat(manifest_path, ".", generation, kSuffix);
}

absl::StatusOr<uint64_t> NextSnapshotGeneration(
    const std::string& manifest_path) {
  const std::filesystem::path dir = DirectoryOf(manifest_path);
  const std::string manifest_name =
      std::filesystem::path(manifest_path).filename().string();
  uint64_t highest = 0;
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  for (; !error && it != std::filesystem::directory_iterator();
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (std::optional<uint64_t> generation =
            GenerationOf(name, manifest_name, /*temporary=*/false)) {
      highest = std::max(highest, *generation);
    }
  }
  if (error) {
    const std::string message = absl::StrCat(
        "cannot list the directory of ", manifest_path, ": ", error.message());
    return error == std::errc::no_such_file_or_directory
               ? absl::NotFoundError(message)
               : absl::UnavailableError(message);
  }
  return highest + 1;
}

void RemoveOtherSnapshots(const std::string& manifest_path, uint64_t keep) {
  const std::filesystem::path dir = DirectoryOf(manifest_path);
  const std::string manifest_name =
      std::filesystem::path(manifest_path).filename().string();
  // Listed first and deleted after: deleting while listing may skip or
  // repeat entries.
  std::vector<std::filesystem::path> stale;
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  for (; !error && it != std::filesystem::directory_iterator();
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::optional<uint64_t> generation =
        GenerationOf(name, manifest_name, /*temporary=*/false);
    if (generation.has_value()
            ? *generation != keep
            : GenerationOf(name, manifest_name, /*temporary=*/true)
                  .has_value()) {
      stale.push_back(it->path());
    }
  }
  for (const std::filesystem::path& file : stale) {
    std::error_code ignored;
    std::filesystem::remove(file, ignored);
  }
}

}  // namespace feedcore::server
