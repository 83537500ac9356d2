// Fuzz target: LoadSnapshot on arbitrary bytes.
//
// The first byte of the input chooses whether the rest is loaded as it is
// or resealed first (every checksum recomputed, see snapshot_file.h), so
// that mutations get past the checksums into the parsing of sections. The
// bytes are written to a scratch file and loaded. Checked:
//   * a load fails only with InvalidArgument or DataLoss, as documented;
//   * a loaded engine is sound: its per-shard figures add up, its world feed
//     pages to the end in strictly descending key order, every board pages
//     to the end best first with ranks 0, 1, 2... and as many entries as
//     its Size();
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
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/snapshot.h"
#include "feedcore/stats.h"
#include "fuzz_check.h"
#include "snapshot_file.h"

namespace feedcore::fuzz {
namespace {

// The observable content that a save and reload must keep.
struct Content {
  size_t timelines = 0, entries = 0, activities = 0, retracted = 0,
         payload_bytes = 0, follow_edges = 0;
  std::vector<StoredEntry> world;
  std::vector<std::pair<std::string, std::vector<LeaderboardEntry>>> boards;
  bool operator==(const Content&) const = default;
};

std::vector<StoredEntry> WholeWorld(const FeedEngine& engine) {
  ReadOptions read;
  read.limit = engine.options().max_page_size;
  read.hydrate = true;
  std::vector<StoredEntry> out;
  for (;;) {
    const absl::StatusOr<Page> page = engine.ReadWorld(read);
    FUZZ_CHECK(page.ok());
    for (const StoredEntry& e : page->entries) {
      if (!out.empty()) {
        FUZZ_CHECK((std::pair{e.ts, e.activity_id} <
                    std::pair{out.back().ts, out.back().activity_id}));
      }
      out.push_back(e);
    }
    if (page->next_cursor.empty()) return out;
    read.cursor = page->next_cursor;
  }
}

std::vector<LeaderboardEntry> WholeBoard(const Leaderboard& board) {
  LeaderboardReadOptions read;
  read.limit = board.options().max_page_size;
  std::vector<LeaderboardEntry> out;
  for (;;) {
    const absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
    FUZZ_CHECK(page.ok());
    for (const LeaderboardEntry& e : page->entries) {
      FUZZ_CHECK(e.rank == out.size());
      out.push_back(e);
    }
    if (page->next_cursor.empty()) break;
    read.cursor = page->next_cursor;
  }
  FUZZ_CHECK(out.size() == board.Size().value());
  return out;
}

Content Describe(Replica& replica) {
  const FeedEngine& engine = replica.engine();
  const EngineStats stats = engine.Stats().value();
  size_t timelines = 0, entries = 0;
  for (const ShardStats& shard : stats.shards) {
    timelines += shard.timelines;
    entries += shard.entries;
  }
  FUZZ_CHECK(timelines == stats.timelines);
  FUZZ_CHECK(entries == stats.entries);
  Content content{stats.timelines,     stats.entries,
                  stats.activities,    stats.retracted_activities,
                  stats.payload_bytes, stats.follow_edges,
                  WholeWorld(engine),  {}};
  for (const std::string& name : replica.boards().Names()) {
    const absl::StatusOr<std::shared_ptr<Leaderboard>> board =
        replica.boards().Get(name);
    FUZZ_CHECK(board.ok());
    content.boards.emplace_back(name, WholeBoard(**board));
  }
  return content;
}

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
  const Content first = Describe(**loaded);

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
  FUZZ_CHECK(Describe(**reloaded) == first);
  return 0;
}
