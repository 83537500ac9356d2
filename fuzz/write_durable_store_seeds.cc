// Writes the seed corpus of durable_store_open_fuzzer: directories of real
// stores (durable_directory.h) that logged LoggedWorkload on top of the
// empty store's snapshot or the small store's, with the log whole, split
// into two segments as a roll leaves it, with a torn last frame, without
// a log, and without the snapshot it needs; each as written and marked for
// resealing (see change_file.h).
//
// The fuzz target makes the same snapshots when it starts, so run this
// again whenever what a store writes changes.
//
//   write_durable_store_seeds fuzz/corpus/durable_store_open_fuzzer
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "durable_directory.h"
#include "feedcore/durable_store.h"
#include "fuzz_check.h"
#include "seed_files.h"
#include "snapshot_file.h"

namespace feedcore::fuzz {
namespace {

constexpr size_t kFileHeader = 12, kFrameHeader = 12;

// The segment `segment` cut into two at the frame boundary nearest its
// middle, named as the log names them: each after its first record's
// sequence.
std::vector<NamedFile> Split(const NamedFile& segment, uint64_t first) {
  const std::string& bytes = segment.bytes;
  size_t at = kFileHeader;
  uint64_t sequence = first;
  while (at < bytes.size() / 2) {
    uint32_t length = 0;
    for (int i = 3; i >= 0; --i) {
      length = (length << 8) | static_cast<uint8_t>(bytes[at + i]);
    }
    at += kFrameHeader + length;
    ++sequence;
  }
  FUZZ_CHECK(at < bytes.size());
  const std::string header = bytes.substr(0, kFileHeader);
  return {{segment.name, bytes.substr(0, at)},
          {"log-" + std::to_string(sequence) + ".fclog",
           header + bytes.substr(at)}};
}

uint64_t FirstSequence(const NamedFile& segment) {
  return std::stoull(segment.name.substr(4, segment.name.size() - 4 - 6));
}

void Write(const std::filesystem::path& dir, const std::string& name,
           uint8_t snapshots, const std::vector<NamedFile>& segments) {
  WriteSeedPair(dir, name, EncodeDirectory(snapshots, segments), "as_written");
}

}  // namespace
}  // namespace feedcore::fuzz

int main(int argc, char** argv) {
  using namespace feedcore;
  using namespace feedcore::fuzz;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus directory>\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir(argv[1]);
  std::filesystem::create_directories(dir);
  const std::string scratch = ScratchSnapshotPath("seed-store");
  const BaseSnapshots base = MakeBaseSnapshots(scratch);

  // On the empty store's snapshot.
  std::filesystem::remove_all(scratch);
  {
    std::unique_ptr<DurableStore> store = OpenOrDie(scratch);
    LoggedWorkload(*store);
  }
  // The same calls made the same snapshot, but only by name: its bytes may
  // list a table's entries in another order.
  FUZZ_CHECK(OnlySnapshot(scratch).name == base.empty.name);
  const std::vector<NamedFile> on_empty = FilesIn(scratch, "log-");
  FUZZ_CHECK(on_empty.size() == 1);
  Write(dir, "empty_snapshot_log", 1, on_empty);
  Write(dir, "empty_snapshot_two_segments", 1,
        Split(on_empty[0], FirstSequence(on_empty[0])));
  Write(dir, "log_without_snapshot", 0, on_empty);

  // On the small store's snapshot.
  {
    std::unique_ptr<DurableStore> store = OpenSmallStore(scratch);
    LoggedWorkload(*store);
  }
  FUZZ_CHECK(OnlySnapshot(scratch).name == base.small.name);
  std::vector<NamedFile> on_small = FilesIn(scratch, "log-");
  FUZZ_CHECK(on_small.size() == 1);
  std::filesystem::remove_all(scratch);
  Write(dir, "small_snapshot_log", 2, on_small);
  Write(dir, "small_snapshot_only", 2, {});
  on_small[0].bytes.resize(on_small[0].bytes.size() - 5);
  Write(dir, "both_snapshots_torn_tail", 3, on_small);
  return 0;
}
