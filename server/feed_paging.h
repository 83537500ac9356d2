// The paging every FEED.* command that returns pages shares: cursors as
// the client sees them, ids as bulk strings, and the lists of entities
// (FEED.FOLLOWERS, FEED.FOLLOWING, FEED.BLOCKED, FEED.MUTED), whose
// arguments and replies have one form, by id or by name (feed_entities.h).
// docs/server.md describes them.
#ifndef FEEDCORE_SERVER_FEED_PAGING_H_
#define FEEDCORE_SERVER_FEED_PAGING_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "command_table.h"
#include "feed_entities.h"
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

// The fields an entry reply adds on request, after the five every client
// unpacks: edited_at for a read's WITHEDITS, then the activity kind for its
// WITHKINDS.
struct EntryFields {
  bool edits = false;
  bool kinds = false;
};

// One feed entry as [id, actor, ts, expires_at, payload] and the `fields`
// asked for, the actor by name when `names` is set.
void WriteStoredEntry(RespWriter& reply, const StoredEntry& entry,
                      const NameRegistry* names, EntryFields fields);
// The size of that array.
size_t EntryReplySize(EntryFields fields);

// Sets the field that `word` asks for (WITHEDITS, WITHKINDS) in `fields`;
// false for any other word.
bool ParseEntryField(const std::string& word, EntryFields& fields);

// For a read's `KINDS list` (only these kinds) or `EXCEPTKINDS list`
// (every kind but these) at args[i], a list of kinds 0..63 separated by
// commas: sets `kinds` (or `error`, InvalidArgument for a bad list), moves
// i to the list and returns true; false for any other word.
bool ParseKindsOption(absl::Span<const std::string> args, size_t& i,
                      KindFilter& kinds, absl::Status& error);
// The kinds of such a list as KindFilter::kinds bits, or InvalidArgument
// naming `what`.
absl::StatusOr<uint64_t> ParseKindList(absl::string_view list,
                                       absl::string_view what);

// Parses `[LIMIT n] [CURSOR c] [NAMES]` from args[first...]; on an error
// replies with it and returns false.
bool ParseListOptions(CommandCall& call, size_t first, ListOptions* options,
                      bool* names);

// A list command's arguments, `entity [LIMIT n] [CURSOR c] [NAMES]`.
struct ListCall {
  EntityArgument entity;
  ListOptions options;
  bool names = false;
};

// Parses a list command's arguments and looks its entity up. On an error
// replies with it and returns false; for a name without an id replies
// with an empty page (an entity with nothing) and returns false too.
bool ParseListCall(CommandCall& call, EntityId* entity, ListCall* list);

// The registry to name entities by in a reply: the server's when `names`
// (the NAMES option), else null (ids).
const NameRegistry* ReplyNames(const CommandCall& call, bool names);

// A list page as [cursor, [entity, ...]], ids or names (`names`).
void WriteEntityPage(RespWriter& reply, const EntityPage& page,
                     const NameRegistry* names);

// What a page of an entity with nothing is: ["0", []].
void WriteEmptyPage(RespWriter& reply);

// Replies with `status`, where the library's advice to pass an empty
// cursor for the first page names the server's first-page cursor, 0.
void ReplyPagingError(CommandCall& call, const absl::Status& status);

// Parses a feed read's [LIMIT n] [CURSOR c] [REV] [MINTS ts] [MAXTS ts]
// [KINDS list] [EXCEPTKINDS list] [NAMES] [WITHEDITS] [WITHKINDS] from
// args[first...], setting `options.hydrate`. Range checks beyond "is a
// number" are the engine's.
absl::Status ParseReadOptions(absl::Span<const std::string> args, size_t first,
                              ReadOptions& options, bool& names,
                              EntryFields& fields);

// [next_cursor, [[id, actor, ts, expires_at, payload], ...]], actors by
// name when `names` is set, each entry with the `fields` asked for.
void WritePage(RespWriter& reply, const Page& page, const NameRegistry* names,
               EntryFields fields);
// WritePage, or the paging error of a failed read.
void ReplyPage(CommandCall& call, const absl::StatusOr<Page>& page, bool names,
               EntryFields fields);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_FEED_PAGING_H_
