// Fuzz target: DurableStore::Open on a directory whose log segments are
// arbitrary bytes (a store's directory damaged on disk, or files that were
// never a store's), next to none, one or both of two real snapshots.
//
// The input encodes the directory (see durable_directory.h): which
// snapshots it holds, then up to two segments, each a name's first
// sequence and the file's bytes. The mode byte chooses whether the
// segments are written as they are or resealed first (every frame checksum
// recomputed, see change_file.h), so that mutations reach the decoding of
// records and their replay into the engine and the boards. Checked:
//   * Open fails only with DataLoss or InvalidArgument, as recovery
//     documents for damage (durable_store.h);
//   * a store that opens is sound (engine_content.h), accepts a write,
//     and once closed reopens to the same content.
// The seeds (fuzz/corpus/durable_store_open_fuzzer) hold real segments
// written by stores, by fuzz/write_durable_store_seeds.cc.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "change_file.h"
#include "durable_directory.h"
#include "engine_content.h"
#include "feedcore/durable_store.h"
#include "feedcore/leaderboard.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "snapshot_file.h"

namespace feedcore::fuzz {
namespace {

// Writes the directory `input` describes into `directory`, empty before.
void WriteDirectory(FuzzInput& input, bool reseal, const BaseSnapshots& base,
                    const std::filesystem::path& directory) {
  const uint8_t snapshots = input.U8() % 4;
  if (snapshots == 1 || snapshots == 3) {
    WriteFileBytes(directory / base.empty.name, base.empty.bytes);
  }
  if (snapshots >= 2) {
    WriteFileBytes(directory / base.small.name, base.small.bytes);
  }
  const uint8_t segments = input.U8() % 3;
  for (uint8_t i = 0; i < segments; ++i) {
    const uint32_t first_sequence = input.U32();
    const uint32_t length = input.U32();
    std::string bytes = i + 1 == segments ? input.Rest() : input.Take(length);
    if (reseal) ResealChangeFile(bytes);
    // Two segments with one name: the second replaces the first, as a
    // directory cannot hold both.
    WriteFileBytes(
        directory / ("log-" + std::to_string(first_sequence) + ".fclog"),
        bytes);
  }
}

// Sets one score on a board of the store's: a write no recovered state can
// refuse (any member, any score; a board made if missing).
void Write(DurableStore& store) {
  absl::StatusOr<std::shared_ptr<Leaderboard>> board =
      store.boards().Get("fuzz-written");
  if (!board.ok()) board = store.boards().GetOrCreate("fuzz-written");
  FUZZ_CHECK_DETAIL(
      board.ok(),
      std::fprintf(stderr, "%s\n", board.status().ToString().c_str()));
  const absl::Status set = (*board)->Set(1, 42);
  FUZZ_CHECK_DETAIL(set.ok(),
                    std::fprintf(stderr, "%s\n", set.ToString().c_str()));
}

}  // namespace
}  // namespace feedcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace feedcore;
  using namespace feedcore::fuzz;
  static const std::string* const directory =
      new std::string(ScratchSnapshotPath("store"));
  static const BaseSnapshots* const base =
      new BaseSnapshots(MakeBaseSnapshots(*directory));
  if (size == 0) return 0;
  FuzzInput input(data, size);
  const bool reseal = input.Bool();
  std::filesystem::remove_all(*directory);
  std::filesystem::create_directory(*directory);
  WriteDirectory(input, reseal, *base, *directory);

  absl::StatusOr<std::unique_ptr<DurableStore>> store = DurableStore::Open(
      DirectoryDurability(*directory), DirectoryEngineOptions());
  if (!store.ok()) {
    FUZZ_CHECK_DETAIL(
        absl::IsDataLoss(store.status()) ||
            absl::IsInvalidArgument(store.status()),
        std::fprintf(stderr, "%s\n", store.status().ToString().c_str()));
    std::filesystem::remove_all(*directory);
    return 0;
  }
  Describe((*store)->engine(), (*store)->boards());
  const uint64_t appended = (*store)->Stats().appended_sequence;
  Write(**store);
  FUZZ_CHECK((*store)->Stats().appended_sequence > appended);
  const Content written = Describe((*store)->engine(), (*store)->boards());
  store->reset();

  absl::StatusOr<std::unique_ptr<DurableStore>> reopened = DurableStore::Open(
      DirectoryDurability(*directory), DirectoryEngineOptions());
  FUZZ_CHECK_DETAIL(
      reopened.ok(),
      std::fprintf(stderr, "%s\n", reopened.status().ToString().c_str()));
  FUZZ_CHECK(Describe((*reopened)->engine(), (*reopened)->boards()) == written);
  reopened->reset();
  std::filesystem::remove_all(*directory);
  return 0;
}
