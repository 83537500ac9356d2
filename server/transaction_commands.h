// MULTI, EXEC, DISCARD, WATCH and UNWATCH, with Redis's semantics:
//
//   * After MULTI every command but EXEC, DISCARD, MULTI, WATCH, QUIT and
//     RESET is checked (known, arity, authenticated, within the size bound)
//     and queued, answering QUEUED. A command refused while queueing gets
//     its error and makes EXEC answer EXECABORT and run nothing.
//   * EXEC runs the queued commands while no other client's command runs
//     (CommandSpec::exclusive), so every other client sees all of them or
//     none; each gets its own reply in EXEC's array. As in Redis, a
//     command that fails while running (a wrong score, say) fails alone
//     and the others still apply: it is a transaction of isolation, not of
//     rollback.
//   * WATCH key... before MULTI makes EXEC answer a null array and run
//     nothing if any watched key was written since (WatchedKeys); EXEC,
//     DISCARD and UNWATCH unwatch everything.
//
// The queueing itself is the dispatcher's (CommandDispatcher::Execute);
// these are the commands' own handlers.
#ifndef FEEDCORE_SERVER_TRANSACTION_COMMANDS_H_
#define FEEDCORE_SERVER_TRANSACTION_COMMANDS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "command_table.h"

namespace feedcore::server {

absl::Status AddTransactionCommands(CommandTable& table);

// Whether `spec` runs at once inside MULTI rather than being queued.
bool RunsInsideMulti(const CommandSpec& spec);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_TRANSACTION_COMMANDS_H_
