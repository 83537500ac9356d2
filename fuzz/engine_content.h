// The observable content of an engine and its boards, as the fuzz targets
// compare it: what a save and reload (snapshot_load_fuzzer) or a close and
// reopen (durable_store_open_fuzzer) must keep. Describing also checks that
// the content is sound: per-shard figures add up, the world feed pages to
// the end in strictly descending key order, every board pages to the end
// best first with the ranks of its RankStyle (0, 1, 2... when unique) and
// as many entries as its Size().
#ifndef FEEDCORE_FUZZ_ENGINE_CONTENT_H_
#define FEEDCORE_FUZZ_ENGINE_CONTENT_H_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/stats.h"
#include "fuzz_check.h"

namespace feedcore::fuzz {

// The figures, world feed and boards that are compared.
struct Content {
  size_t timelines = 0, entries = 0, activities = 0, retracted = 0,
         payload_bytes = 0, follow_edges = 0;
  std::vector<StoredEntry> world;
  std::vector<std::pair<std::string, std::vector<LeaderboardEntry>>> boards;
  bool operator==(const Content&) const = default;
};

inline std::vector<StoredEntry> WholeWorld(const InProcessFeedEngine& engine) {
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

// The rank `next` must have when it follows `before` (the board so far)
// in `board`'s order and rank style.
inline uint64_t ExpectedRank(const LeaderboardOptions& board,
                             const std::vector<LeaderboardEntry>& before,
                             const LeaderboardEntry& next) {
  if (before.empty()) return 0;
  const LeaderboardEntry& last = before.back();
  const bool tied = next.score == last.score;
  switch (board.rank_style) {
    case RankStyle::kUnique:
      return before.size();
    case RankStyle::kCompetition:
      return tied ? last.rank : before.size();
    case RankStyle::kDense:
      return tied ? last.rank : last.rank + 1;
  }
  return before.size();
}

inline std::vector<LeaderboardEntry> WholeBoard(const Leaderboard& board) {
  const bool higher_first =
      board.options().score_order == ScoreOrder::kHigherFirst;
  LeaderboardReadOptions read;
  read.limit = board.options().max_page_size;
  std::vector<LeaderboardEntry> out;
  for (;;) {
    const absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
    FUZZ_CHECK(page.ok());
    for (const LeaderboardEntry& e : page->entries) {
      if (!out.empty()) {
        FUZZ_CHECK(higher_first ? e.score <= out.back().score
                                : e.score >= out.back().score);
      }
      FUZZ_CHECK(e.rank == ExpectedRank(board.options(), out, e));
      out.push_back(e);
    }
    if (page->next_cursor.empty()) break;
    read.cursor = page->next_cursor;
  }
  FUZZ_CHECK(out.size() == board.Size().value());
  return out;
}

inline Content Describe(const InProcessFeedEngine& engine,
                        const LeaderboardRegistry& boards) {
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
  for (const std::string& name : boards.Names()) {
    const absl::StatusOr<std::shared_ptr<Leaderboard>> board = boards.Get(name);
    FUZZ_CHECK(board.ok());
    content.boards.emplace_back(name, WholeBoard(**board));
  }
  return content;
}

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_ENGINE_CONTENT_H_
