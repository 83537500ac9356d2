// Sorted-set commands with Redis 7's replies and errors, served by
// feedcore's write-sharded leaderboards: one board per key, its member
// names in a MemberDictionary (leaderboard_store.h). Replies follow
// Redis's order, ties by name (sorted_set_order.h). Scores are int64
// integers. docs/server.md lists the commands:
//   leaderboard_commands.cc        ZADD, ZINCRBY, ZSCORE, ZMSCORE, ZRANK,
//                                  ZREVRANK, ZREM, ZCARD
//   leaderboard_range_commands.cc  ZRANGE and relatives, ZCOUNT,
//                                  ZLEXCOUNT, ZRANGESTORE
//   sorted_set_removal_commands.cc ZPOPMIN/MAX, ZMPOP, ZREMRANGEBY...,
//                                  ZRANDMEMBER, ZSCAN
//   sorted_set_algebra_commands.cc ZUNION, ZINTER, ZDIFF and their STOREs
#ifndef FEEDCORE_SERVER_LEADERBOARD_COMMANDS_H_
#define FEEDCORE_SERVER_LEADERBOARD_COMMANDS_H_

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "command_table.h"
#include "leaderboard_store.h"

namespace feedcore::server {

// Adds every sorted-set command, the range reads included.
absl::Status AddLeaderboardCommands(CommandTable& table);

// The parts AddLeaderboardCommands adds, one per file.
absl::Status AddLeaderboardRangeCommands(CommandTable& table);
absl::Status AddSortedSetRemovalCommands(CommandTable& table);
absl::Status AddSortedSetAlgebraCommands(CommandTable& table);

// A score in any syntax Redis reads one in ("2", "2.0", "+5", "1e3"),
// taken when its value is an integer within int64; InvalidArgument naming
// `what` otherwise.
absl::StatusOr<int64_t> ParseScore(absl::string_view text,
                                   absl::string_view what);

// Removes the members named `names` from `set`, freeing their names
// through the dictionary's pins (member_dictionary.h, "Pins"). Returns
// the indexes in `names` of the members this call removed. Holds the
// set's choose_and_remove_mutex shared.
std::vector<size_t> RemoveMembers(SortedSet& set,
                                  absl::Span<const absl::string_view> names);

// As RemoveMembers, for entries just read from the set: each is found by
// its id alone (their names may be empty), which spares a lookup by name
// per member. The caller chose them holding choose_and_remove_mutex
// exclusively, and still does, so none of their ids was freed and given
// again since.
std::vector<size_t> RemoveEntries(SortedSet& set,
                                  absl::Span<const NamedEntry> entries)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(set.choose_and_remove_mutex);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_LEADERBOARD_COMMANDS_H_
