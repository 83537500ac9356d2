// Sorted-set commands with the semantics Redis users know (ZADD, ZINCRBY,
// ZSCORE, ZMSCORE, ZRANK, ZREVRANK, ZREM, ZCARD, DEL here; ZRANGE,
// ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE and ZCOUNT in
// leaderboard_range_commands.cc), served by feedcore's write-sharded
// leaderboards: one board per key. Differences from Redis: scores are
// int64 integers, ties are ordered by the board's tie-break (who reached
// the score first) instead of by member name, and ZRANGE has no BYLEX.
// docs/server.md has the details.
#ifndef FEEDCORE_SERVER_LEADERBOARD_COMMANDS_H_
#define FEEDCORE_SERVER_LEADERBOARD_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

// Adds every sorted-set command, the range reads included.
absl::Status AddLeaderboardCommands(CommandTable& table);

// The range reads alone (leaderboard_range_commands.cc).
absl::Status AddLeaderboardRangeCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_LEADERBOARD_COMMANDS_H_
