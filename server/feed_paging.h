// The paging every FEED.* command that returns pages shares: cursors as
// the client sees them, ids as bulk strings, and the lists of entities
// (FEED.FOLLOWERS, FEED.FOLLOWING, FEED.BLOCKED, FEED.MUTED), whose
// arguments and replies have one form. docs/server.md describes them.
#ifndef FEEDCORE_SERVER_FEED_PAGING_H_
#define FEEDCORE_SERVER_FEED_PAGING_H_

#include <cstdint>
#include <string>

#include "command_table.h"
#include "feedcore/options.h"
#include "feedcore/types.h"
#include "resp_writer.h"

namespace feedcore::server {

// The cursor of the first page and the cursor that says "no more pages",
// as in SCAN. Engine cursors are web-safe base64 of fixed length, so they
// are never "0".
inline constexpr char kStartCursor[] = "0";

// The engine cursor a client's cursor argument names.
std::string CursorArgument(const std::string& text);
void WriteCursor(RespWriter& reply, const std::string& next_cursor);

// Ids are uint64, which RESP integers (int64) cannot all hold: they go out
// as decimal bulk strings, like the ids of Redis streams.
void WriteId(RespWriter& reply, uint64_t id);

// Parses the arguments of a list command, `entity [LIMIT n] [CURSOR c]`.
// On an error, replies with it and returns false.
bool ParseListCall(CommandCall& call, EntityId* entity, ListOptions* options);

// A list page as [cursor, [id, ...]].
void WriteEntityPage(RespWriter& reply, const EntityPage& page);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FEED_PAGING_H_
