// A minimal game backend: a weekly season of points that rewards its top
// players when it ends, an all-time high-score board that keeps each
// player's best, and a friends' board from the follow graph, all kept on
// disk by a DurableStore so that a restart finds every score again.
//
// Time comes from a ManualClock, so a week passes in one line and the
// output is the same on every run. Exits with status 1 on any error or
// unexpected result.

#include <stdlib.h>  // mkdtemp

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/clock.h"
#include "feedcore/durable_store.h"
#include "feedcore/friends_leaderboard.h"
#include "feedcore/leaderboard.h"
#include "feedcore/seasonal_leaderboard.h"

namespace {

using feedcore::LeaderboardEntry;
using feedcore::MemberId;
using feedcore::WriteCondition;
using feedcore::WriteOp;
using feedcore::WriteOutcome;

// Thursday 2024-01-04T12:00:00Z; the season resets on Mondays at 00:00.
constexpr feedcore::Micros kThursday =
    1'704'369'600LL * feedcore::kMicrosPerSecond;

constexpr MemberId kAda = 1, kBo = 2, kCy = 3, kDee = 4, kEli = 5;

const char* Name(MemberId player) {
  static const char* const kNames[] = {"?", "ada", "bo", "cy", "dee", "eli"};
  return player <= kEli ? kNames[player] : "?";
}

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "error: %s\n", what.c_str());
  std::exit(1);
}

void Check(const absl::Status& status, const char* what) {
  if (!status.ok()) Fail(std::string(what) + ": " + status.ToString());
}

template <typename T>
T Check(absl::StatusOr<T> result, const char* what) {
  Check(result.status(), what);
  return *std::move(result);
}

// For results that are not errors but would be wrong.
void Expect(bool holds, const char* what) {
  if (!holds) Fail(std::string("unexpected result: ") + what);
}

void PrintBoard(const char* title, const std::vector<LeaderboardEntry>& top) {
  std::printf("  %s\n", title);
  for (const LeaderboardEntry& e : top) {
    std::printf("    #%llu %-4s %lld\n",
                static_cast<unsigned long long>(e.rank + 1), Name(e.member),
                static_cast<long long>(e.score));
  }
}

// Players the season rewarded, in the order on_rollover named them.
std::vector<MemberId> rewarded;

// A restart must ask for the same options: GetOrCreate refuses a board
// that exists with others, rather than silently use them.
feedcore::SeasonOptions WeeklySeason() {
  feedcore::SeasonOptions season;
  season.schedule = feedcore::SeasonSchedule::Weekly(/*weekday=*/1);
  season.keep_periods = 1;  // last week stays readable
  season.final_top_k = 2;   // the two players who get a reward
  // Runs on the thread whose call saw the week end, with no lock held:
  // a real backend would queue the rewards here.
  season.on_rollover = [](const feedcore::EndedPeriod& ended) {
    Check(ended.top_status, "final standings");
    for (const LeaderboardEntry& e : ended.top) {
      std::printf("  reward for %s, #%llu of the week that ended\n",
                  Name(e.member), static_cast<unsigned long long>(e.rank + 1));
      rewarded.push_back(e.member);
    }
  };
  return season;
}

struct Backend {
  std::shared_ptr<feedcore::DurableStore> store;
  std::unique_ptr<feedcore::SeasonalLeaderboard> season;
  std::shared_ptr<feedcore::Leaderboard> high_scores;
};

// Opens (or recovers) everything the game keeps in `directory`.
Backend Open(const std::string& directory,
             std::shared_ptr<feedcore::ManualClock> clock) {
  feedcore::DurabilityOptions durability;
  durability.directory = directory;
  // A score the game has shown a player is on disk: kAlways syncs before
  // each call returns (concurrent callers share one sync).
  durability.fsync = feedcore::FsyncPolicy::kAlways;
  feedcore::EngineOptions engine;
  engine.clock = clock;  // the season's weeks and the engine agree on time
  Backend backend;
  backend.store = Check(feedcore::DurableStore::Open(durability, engine),
                        "DurableStore::Open");
  // The season's boards live in the store's registry, so they are logged
  // too; the aliasing pointer keeps the store alive while the season is.
  std::shared_ptr<feedcore::LeaderboardRegistry> boards(
      backend.store, &backend.store->boards());
  backend.season = Check(feedcore::SeasonalLeaderboard::Create(
                             "arena-weekly", WeeklySeason(), boards, clock),
                         "SeasonalLeaderboard::Create");
  backend.high_scores =
      Check(boards->GetOrCreate("high-scores"), "GetOrCreate high-scores");
  return backend;
}

// Handles first, the store last: the store must outlive every call on its
// engine and boards.
void Close(Backend& backend) {
  backend.high_scores.reset();
  backend.season.reset();
  backend.store.reset();
}

// A player joins this week's season with an entry bonus. kIfAbsent adds a
// member once: a second join (a retried request) changes nothing.
WriteOutcome Join(feedcore::Leaderboard& week, MemberId player) {
  return Check(week.Write({.member = player,
                           .op = WriteOp::kSet,
                           .value = 10,
                           .condition = WriteCondition::kIfAbsent}),
               "join")
      .outcome;
}

// A finished match: season points for players who joined (kIfPresent
// refuses the others without adding them) and the score on the all-time
// board, where kIfBetter keeps each player's best.
void Match(Backend& game, MemberId player, int64_t points, int64_t score) {
  auto week = Check(game.season->Current(), "Current");
  const feedcore::WriteResult season =
      Check(week->Write({.member = player,
                         .op = WriteOp::kIncrement,
                         .value = points,
                         .condition = WriteCondition::kIfPresent}),
            "season points");
  const feedcore::WriteResult best =
      Check(game.high_scores->Write({.member = player,
                                     .value = score,
                                     .condition = WriteCondition::kIfBetter}),
            "high score");
  std::printf(
      "  %-4s +%lld points (%s), score %lld (%s)\n", Name(player),
      static_cast<long long>(points),
      season.outcome == WriteOutcome::kNotApplied ? "not in season" : "counted",
      static_cast<long long>(score),
      best.outcome == WriteOutcome::kNotApplied ? "not a best" : "new best");
}

// Joins, matches and the boards a game shows in the first week, then the
// rollover and a match of the second. Returns the first week's period id.
feedcore::PeriodId PlayTwoWeeks(Backend& game, feedcore::ManualClock& clock) {
  std::printf("Thursday: ada, bo, cy and dee join the weekly season.\n");
  auto week = Check(game.season->Current(), "Current");
  const feedcore::PeriodId first_week = game.season->CurrentPeriod().id;
  for (MemberId player : {kAda, kBo, kCy, kDee}) {
    Expect(Join(*week, player) == WriteOutcome::kAdded, "a first join adds");
  }
  Expect(Join(*week, kAda) == WriteOutcome::kNotApplied,
         "a second join changes nothing");
  std::printf("  ada's retried join changed nothing.\n");

  std::printf("Matches (eli never joined the season):\n");
  Match(game, kAda, 30, 4200);
  Match(game, kBo, 50, 3900);
  Match(game, kCy, 20, 5100);
  Match(game, kDee, 40, 2500);
  Match(game, kAda, 25, 3100);  // lower than her 4200: the best stays
  Match(game, kEli, 60, 6000);
  Expect(Check(game.high_scores->Score(kAda), "Score") == 4200,
         "the high-score board keeps a player's best");
  Expect(absl::IsNotFound(week->Score(kEli).status()),
         "kIfPresent did not add eli");

  // TopK for the front page, Around for "you and the players near you".
  const auto top = Check(week->TopK(3), "TopK");
  PrintBoard("This week's top 3:", top);
  Expect(top.size() == 3 && top[0].member == kAda && top[0].score == 65,
         "ada leads with 10 + 30 + 25 points");
  PrintBoard("Around dee (one above, one below):",
             Check(week->Around(kDee, 1, 1), "Around"));
  Expect(Check(week->Rank(kCy), "Rank") == 3, "cy is fourth");

  // A friends' board: the follow graph of the store's engine, joined with
  // the board. FollowedAndSelf puts the player first, then whom it follows.
  feedcore::InProcessFeedEngine& social = game.store->engine();
  for (MemberId friend_id : {kCy, kDee}) {
    Check(social.Follow(kBo, friend_id).status(), "Follow");
  }
  const std::vector<MemberId> friends =
      Check(feedcore::FollowedAndSelf(social, kBo), "FollowedAndSelf");
  PrintBoard("bo among the players bo follows:",
             Check(week->TopKAmong(friends, 10), "TopKAmong"));
  Expect(Check(week->RankAmong(kBo, friends), "RankAmong") == 0,
         "bo leads the friends' board");

  std::printf("Monday: the week ends; the first call after it rolls over.\n");
  clock.Set(kThursday + 4 * feedcore::kMicrosPerDay);
  week = Check(game.season->Current(), "Current");
  Expect(rewarded == std::vector<MemberId>{kAda, kBo},
         "the two best players of last week are rewarded");
  Expect(Check(week->Size(), "Size") == 0, "the new week starts empty");
  auto last_week = Check(game.season->Period(first_week), "Period");
  Expect(Check(last_week->Score(kAda), "Score") == 65,
         "last week stays readable");
  Expect(Join(*week, kEli) == WriteOutcome::kAdded, "eli joins this week");
  Match(game, kEli, 15, 1200);
  return first_week;
}

// What a restart finds: both weeks and the all-time board, from the log.
void CheckRecovered(Backend& game, feedcore::PeriodId first_week) {
  auto week = Check(game.season->Current(), "Current");
  Expect(Check(week->Score(kEli), "Score") == 25,
         "this week's points come back");
  Expect(Check(game.high_scores->Score(kEli), "Score") == 6000,
         "eli's best survives a lower score and the restart");
  auto last_week = Check(game.season->Period(first_week), "Period");
  PrintBoard("Recovered all-time top 3:",
             Check(game.high_scores->TopK(3), "TopK"));
  PrintBoard("Recovered last week's top 2:", Check(last_week->TopK(2), "TopK"));
  Expect(Check(last_week->Rank(kBo), "Rank") == 1, "bo was second");
  std::printf(
      "  recovered %llu logged changes\n",
      static_cast<unsigned long long>(game.store->Stats().recovered_records));
}

}  // namespace

int main() {
  char pattern[] = "/tmp/feedcore-game-XXXXXX";
  if (mkdtemp(pattern) == nullptr) Fail("cannot create a directory in /tmp");
  const std::string directory = pattern;
  auto clock = std::make_shared<feedcore::ManualClock>(kThursday);

  Backend game = Open(directory, clock);
  const feedcore::PeriodId first_week = PlayTwoWeeks(game, *clock);
  std::printf("Restart: the store is closed and opened again.\n");
  Close(game);  // every score was synced when its call returned
  game = Open(directory, clock);
  CheckRecovered(game, first_week);
  Close(game);

  std::filesystem::remove_all(directory);
  std::printf("ok\n");
  return 0;
}
