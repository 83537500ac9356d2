// Sorted-set commands with the semantics Redis users know (ZADD, ZINCRBY,
// ZSCORE, ZRANK, ZREVRANK, ZRANGE, ZREVRANGE, ZREM, ZCARD, DEL), served by
// feedcore's write-sharded leaderboards: one board per key. Differences
// from Redis: scores are int64 integers, ties are ordered by the board's
// tie-break (who reached the score first) instead of by member name, and
// ZRANGE takes ranks only (no BYSCORE / BYLEX). docs/server.md has the
// details.
#ifndef FEEDCORE_EXAMPLES_FEED_SERVER_LEADERBOARD_COMMANDS_H_
#define FEEDCORE_EXAMPLES_FEED_SERVER_LEADERBOARD_COMMANDS_H_

#include "absl/status/status.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddLeaderboardCommands(CommandTable& table);

}  // namespace feedcore::server

#endif  // FEEDCORE_EXAMPLES_FEED_SERVER_LEADERBOARD_COMMANDS_H_
