// RegistryAccess: what snapshots and replicas need from a
// LeaderboardRegistry beyond its public calls: the boards with their
// generations, listed consistently with the change log, and boards
// installed or dropped by generation when replaying.
//
// A board's generation is the registry's count of boards created when it
// was made; it tells a board from an earlier one of the same name, so that
// records of a dropped board never touch its successor.
#ifndef FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_REGISTRY_ACCESS_H_
#define FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_REGISTRY_ACCESS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "feedcore/leaderboard.h"
#include "leaderboard/leaderboard_impl.h"
#include "stream/change_log.h"

namespace feedcore::internal {

class RegistryAccess {
 public:
  struct BoardRef {
    std::string name;
    uint64_t generation = 0;
    std::shared_ptr<LeaderboardImpl> board;
  };

  // The registry's change log, or null.
  static ChangeLog* log(const LeaderboardRegistry& registry);

  // Every board, by name, listed under the registry's lock; returns the
  // log's next sequence read under that lock (0 without a log).
  static uint64_t List(const LeaderboardRegistry& registry,
                       std::vector<BoardRef>* boards);

  // The board `name` if it has `generation`, else null.
  static std::shared_ptr<LeaderboardImpl> Find(
      const LeaderboardRegistry& registry, const std::string& name,
      uint64_t generation);

  // Puts a new board `name` with `generation` in the registry (replacing
  // any board of that name) and, with `record`, records its creation.
  // REQUIRES: options valid.
  static std::shared_ptr<LeaderboardImpl> Install(
      LeaderboardRegistry& registry, const std::string& name,
      const LeaderboardOptions& options, uint64_t generation, bool record);

  // Drops `name` if it has `generation`, recording the drop.
  static void Drop(LeaderboardRegistry& registry, const std::string& name,
                   uint64_t generation);

  // Renames `from` to `to` if it has `generation`, as
  // LeaderboardRegistry::Rename does, recording it. REQUIRES: `to` valid.
  static void Rename(LeaderboardRegistry& registry, const std::string& from,
                     uint64_t generation, const std::string& to);

  // Makes the next generation the registry hands out at least `next`.
  static void ReserveGenerations(LeaderboardRegistry& registry, uint64_t next);
  static uint64_t NextGeneration(const LeaderboardRegistry& registry);
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_LEADERBOARD_LEADERBOARD_REGISTRY_ACCESS_H_
