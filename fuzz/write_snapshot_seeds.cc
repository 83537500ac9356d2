// Writes the seed corpus of snapshot_load_fuzzer: real snapshots of small
// engines (empty; timelines only; a social graph with published, retracted
// and expired activities, hybrid fan-out and notification feeds in every
// seen and read state, and read markers; the same with leaderboards),
// each twice: as saved, and marked for resealing (see snapshot_file.h).
//
//   write_snapshot_seeds fuzz/corpus/snapshot_load_fuzzer
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/snapshot.h"
#include "fuzz_check.h"
#include "seed_files.h"
#include "snapshot_file.h"

namespace feedcore::fuzz {
namespace {

// Earlier than the loader's clock, so that the short-lived activities are
// expired (but not reclaimed) when a seed is loaded.
constexpr Micros kSeedClockTime = kSnapshotClockTime - 100;
constexpr Micros kInactiveAfter = 20;

std::unique_ptr<InProcessFeedEngine> NewEngine(size_t shards, bool with_stream) {
  EngineOptions options = SnapshotEngineOptions();
  options.clock = std::make_shared<ManualClock>(kSeedClockTime);
  options.inactive_after = kInactiveAfter;
  options.shards = shards;
  options.hybrid_fanout_threshold = 3;
  options.default_ttl = 500;
  if (with_stream) options.change_stream = ChangeStream::Create({}).value();
  return FeedEngine::Create(options).value();
}

void Social(InProcessFeedEngine& engine) {
  for (EntityId follower = 2; follower <= 6; ++follower) {
    FUZZ_CHECK(engine.Follow(follower, 1).ok());
  }
  FUZZ_CHECK(engine.Follow(3, 2).ok());
  for (ActivityId id = 1; id <= 12; ++id) {
    Activity activity;
    activity.id = id;
    activity.actor = 1 + id % 3;
    activity.ts = static_cast<Micros>(10 * id - id % 2);
    activity.payload = "p" + std::to_string(id);
    activity.ttl = id % 4 == 0 ? 5 : 0;
    activity.verb = id % 2;
    activity.object = 7;
    PublishOptions options;
    if (id % 3 != 0) options.notify = {4, 5 + id % 2};
    FUZZ_CHECK(engine.Publish(activity, options).ok());
    if (id == 6) engine.MarkSeen(4).value();
  }
  FUZZ_CHECK(engine.MarkRead(5, {100, 10}).ok());
  engine.MarkAllRead(6).value();
  FUZZ_CHECK(engine.Retract(5).ok());
  FUZZ_CHECK(engine.Unfollow(3, 2).ok());
  // Read markers in the three kinds of feed; entity 9's node holds only
  // its marker.
  FUZZ_CHECK(engine.SetReadMarker(2, MarkedFeed::Home(2), {40, 4}).ok());
  FUZZ_CHECK(engine.SetReadMarker(3, MarkedFeed::Own(1), {30, 3}).ok());
  FUZZ_CHECK(engine.SetReadMarker(3, MarkedFeed::World(), {60, 6}).ok());
  FUZZ_CHECK(engine.SetReadMarker(9, MarkedFeed::World(), {70, 7}).ok());
  FUZZ_CHECK(engine.Mute(4, 2, {.notifications = true}).ok());
  FUZZ_CHECK(engine.Block(8, 3).ok());
  // Entity 7 copies actors 2 and 3 and, idle, is made dormant (everyone
  // else merges actor 1 or was read just before).
  FUZZ_CHECK(engine.Follow(7, 2).ok());
  FUZZ_CHECK(engine.Follow(7, 3).ok());
  for (EntityId reader = 2; reader <= 6; ++reader) {
    FUZZ_CHECK(engine.ReadTimeline(reader, {}).ok());
  }
  auto& clock = static_cast<ManualClock&>(*engine.options().clock);
  clock.Advance(kInactiveAfter + 1);
  FUZZ_CHECK(engine.ReleaseInactiveReaders(100).value() > 0);
}

void Write(const std::filesystem::path& dir, const std::string& name,
           const InProcessFeedEngine& engine, const LeaderboardRegistry* boards) {
  const std::string scratch = ScratchSnapshotPath("seed.snap");
  FUZZ_CHECK(SaveSnapshot(engine, scratch, boards).ok());
  std::ifstream in(scratch, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::remove(scratch.c_str());
  WriteSeedPair(dir, name, bytes, "as_saved");
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

  Write(dir, "empty", *NewEngine(1, false), nullptr);

  auto timelines = NewEngine(2, false);
  for (EntityId owner = 1; owner <= 3; ++owner) {
    for (ActivityId id = 1; id <= 20; ++id) {  // beyond the cap: trimmed
      FUZZ_CHECK(
          timelines->Insert(owner, {static_cast<Micros>(id), id, owner + 10})
              .ok());
    }
  }
  Write(dir, "timelines", *timelines, nullptr);

  auto social = NewEngine(2, false);
  Social(*social);
  Write(dir, "social", *social, nullptr);

  auto with_boards = NewEngine(2, true);
  Social(*with_boards);
  LeaderboardRegistry boards(with_boards->options().change_stream);
  auto season = boards.GetOrCreate("season", {.partitions = 2}).value();
  auto daily =
      boards
          .GetOrCreate("daily", {.partitions = 1,
                                 .tie_break = TieBreak::kLowerMemberFirst,
                                 .max_page_size = 10})
          .value();
  // Ties under shared ranks, the lower-first order and metadata.
  auto golf = boards
                  .GetOrCreate("golf", {.partitions = 2,
                                        .score_order = ScoreOrder::kLowerFirst,
                                        .rank_style = RankStyle::kDense,
                                        .max_metadata_bytes = 8})
                  .value();
  auto sprint =
      boards
          .GetOrCreate("sprint",
                       {.partitions = 3, .rank_style = RankStyle::kCompetition})
          .value();
  for (MemberId m = 1; m <= 9; ++m) {
    FUZZ_CHECK(season->Set(m, static_cast<int64_t>(m % 4) - 1).ok());
    FUZZ_CHECK(daily->Increment(m, static_cast<int64_t>(m * 3 % 5)).ok());
    FUZZ_CHECK(golf->Set(m, static_cast<int64_t>(m % 3) + 70).ok());
    FUZZ_CHECK(sprint->Set(m, static_cast<int64_t>(m / 3)).ok());
  }
  FUZZ_CHECK(golf->SetMetadata(2, "ann").ok());
  FUZZ_CHECK(season->Remove(4).ok());
  Write(dir, "social_and_boards", *with_boards, &boards);
  return 0;
}
