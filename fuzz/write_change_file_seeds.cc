// Writes the seed corpus of change_file_fuzzer: real change files of an
// engine's and a leaderboard registry's records (every kind of record the
// calls below make), whole and with a torn last frame, each as written and
// marked for resealing (see change_file.h).
//
// The seeds are written by ChangeFileWriter itself, so they are in the
// format version this build writes (the reader rejects any other before
// decoding a record): run it again whenever the format changes.
//
//   write_change_file_seeds fuzz/corpus/change_file_fuzzer
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "feedcore/change_file.h"
#include "feedcore/change_stream.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "fuzz_check.h"
#include "seed_files.h"
#include "snapshot_file.h"

namespace feedcore::fuzz {
namespace {

std::vector<ChangeRecordPtr> Records() {
  auto clock = std::make_shared<ManualClock>(1'000'000);
  ChangeStreamOptions stream_options;
  stream_options.clock = clock;
  std::shared_ptr<ChangeStream> stream =
      ChangeStream::Create(stream_options).value();
  EngineOptions options;
  options.shards = 2;
  options.sweep_interval = 0;
  options.fanout_threads = 0;
  options.hybrid_fanout_threshold = 2;
  options.default_ttl = 100;
  options.inactive_after = 50;
  options.clock = clock;
  options.change_stream = stream;
  auto engine = FeedEngine::Create(options).value();
  for (EntityId follower = 2; follower <= 4; ++follower) {
    FUZZ_CHECK(engine->Follow(follower, 1).ok());
  }
  FUZZ_CHECK(engine->Follow(5, 2).ok());
  for (ActivityId id = 1; id <= 4; ++id) {
    Activity activity;
    activity.id = id;
    activity.actor = 1 + id % 2;
    activity.ts = static_cast<Micros>(id);
    activity.payload = "p" + std::to_string(id);
    FUZZ_CHECK(engine->Publish(activity).ok());
  }
  FUZZ_CHECK(engine->IncrementCounter(2, 1, 5).ok());
  FUZZ_CHECK(engine->SetReadMarker(4, MarkedFeed::Home(4), {2, 2}).ok());
  FUZZ_CHECK(engine->Retract(3).ok());
  FUZZ_CHECK(engine->Unfollow(5, 2).ok());
  const FollowPair pairs[] = {{6, 2}, {7, 2}};
  FUZZ_CHECK(engine->FollowMany(pairs).ok());
  FUZZ_CHECK(engine->UnfollowMany(pairs, {.keep_history = true}).ok());
  FUZZ_CHECK(engine->Mute(5, 1, {.notifications = true}).ok());
  FUZZ_CHECK(engine->Unmute(5, 1).ok());
  FUZZ_CHECK(engine->Block(6, 1).ok());
  FUZZ_CHECK(engine->Unblock(6, 1).ok());
  // Entity 8 copies actor 9 and, idle, is made dormant, then rebuilt.
  FUZZ_CHECK(engine->Follow(8, 9).ok());
  Activity copied;
  copied.id = 9;
  copied.actor = 9;
  copied.ts = 9;
  FUZZ_CHECK(engine->Publish(copied).ok());
  clock->Advance(60);
  FUZZ_CHECK(engine->ReleaseInactiveReaders(10).value() > 0);
  FUZZ_CHECK(engine->ReadTimeline(8, {}).ok());
  clock->Advance(200);
  engine->EvictExpired(1000).value();
  LeaderboardRegistry boards(stream);
  auto board = boards.GetOrCreate("season", {.partitions = 2}).value();
  FUZZ_CHECK(board->Set(1, 10).ok());
  FUZZ_CHECK(board->Increment(2, -3).ok());
  FUZZ_CHECK(board->Remove(1).ok());
  FUZZ_CHECK(board->Clear().ok());
  FUZZ_CHECK(boards.Drop("season").ok());
  auto reader = stream->NewReader(StreamPosition::TrimHorizon()).value();
  return reader->Read(100'000).value();
}

void Write(const std::filesystem::path& dir, const std::string& name,
           const std::string& bytes) {
  WriteSeedPair(dir, name, bytes, "as_written");
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
  const std::vector<ChangeRecordPtr> records = Records();
  const std::string scratch = ScratchSnapshotPath("seed.log");
  std::remove(scratch.c_str());
  {
    auto writer = ChangeFileWriter::Open(scratch).value();
    FUZZ_CHECK(writer->Append(records).ok());
  }
  std::ifstream in(scratch, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::remove(scratch.c_str());
  std::printf("%zu records\n", records.size());
  Write(dir, "all_kinds", bytes);
  Write(dir, "torn_tail", bytes.substr(0, bytes.size() - 5));
  Write(dir, "header_only", bytes.substr(0, 12));
  return 0;
}
