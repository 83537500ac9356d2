// Fuzz target: LoadSnapshot on arbitrary bytes.
//
// The first byte of the input chooses whether the rest is loaded as it is
// or resealed first (every checksum recomputed, see snapshot_file.h), so
// that mutations get past the checksums into the parsing of sections. The
// bytes are written to a scratch file and loaded. Checked:
//   * a load fails only with InvalidArgument or DataLoss, as documented;
//   * a loaded engine is sound: its per-shard figures add up, its world feed
//     pages to the end in strictly descending key order, every board pages
//     to the end best first with the ranks of its RankStyle and as many
//     entries as its Size();
//   * what loaded saves and loads again to the same figures, world feed and
//     boards.
// The seeds (fuzz/corpus/snapshot_load_fuzzer) are real snapshots written
// by fuzz/write_snapshot_seeds.cc.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine_content.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/snapshot.h"
#include "feedcore/stats.h"
#include "fuzz_check.h"
#include "snapshot_file.h"

namespace feedcore::fuzz {
namespace {

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  FUZZ_CHECK(out.good());
}

}  // namespace
}  // namespace feedcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace feedcore;
  using namespace feedcore::fuzz;
  static const std::string* const path =
      new std::string(ScratchSnapshotPath("load.snap"));
  static const std::string* const again_path =
      new std::string(ScratchSnapshotPath("again.snap"));
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) != 0) ResealSnapshot(bytes);
  WriteFile(*path, bytes);

  absl::StatusOr<std::unique_ptr<Replica>> loaded =
      LoadSnapshot(*path, SnapshotEngineOptions());
  std::remove(path->c_str());
  if (!loaded.ok()) {
    FUZZ_CHECK_DETAIL(
        absl::IsInvalidArgument(loaded.status()) ||
            absl::IsDataLoss(loaded.status()),
        std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str()));
    return 0;
  }
  const Content first = Describe((*loaded)->engine(), (*loaded)->boards());

  const absl::StatusOr<SnapshotInfo> saved =
      SaveSnapshot((*loaded)->engine(), *again_path, &(*loaded)->boards());
  FUZZ_CHECK_DETAIL(
      saved.ok(),
      std::fprintf(stderr, "%s\n", saved.status().ToString().c_str()));
  absl::StatusOr<std::unique_ptr<Replica>> reloaded =
      LoadSnapshot(*again_path, SnapshotEngineOptions());
  std::remove(again_path->c_str());
  FUZZ_CHECK_DETAIL(
      reloaded.ok(),
      std::fprintf(stderr, "%s\n", reloaded.status().ToString().c_str()));
  FUZZ_CHECK(Describe((*reloaded)->engine(), (*reloaded)->boards()) == first);
  return 0;
}
