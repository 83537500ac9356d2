#include "feed_paging.h"

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "arguments.h"

namespace feedcore::server {

std::string CursorArgument(const std::string& text) {
  return text == kStartCursor ? std::string() : text;
}

void WriteCursor(RespWriter& reply, const std::string& next_cursor) {
  reply.Bulk(next_cursor.empty() ? kStartCursor : next_cursor);
}

void WriteId(RespWriter& reply, uint64_t id) { reply.Bulk(absl::StrCat(id)); }

size_t EntryReplySize(EntryFields fields) {
  return 5 + (fields.edits ? 1 : 0) + (fields.kinds ? 1 : 0);
}

void WriteStoredEntry(RespWriter& reply, const StoredEntry& entry,
                      const NameRegistry* names, EntryFields fields) {
  reply.ArrayHeader(EntryReplySize(fields));
  WriteId(reply, entry.activity_id);
  WriteEntity(reply, entry.actor, names);
  reply.Integer(entry.ts);
  reply.Integer(entry.expires_at);
  reply.Bulk(entry.payload);
  if (fields.edits) reply.Integer(entry.edited_at);
  if (fields.kinds) reply.Integer(entry.kind);
}

bool ParseEntryField(const std::string& word, EntryFields& fields) {
  if (IsKeyword(word, "WITHEDITS")) {
    fields.edits = true;
  } else if (IsKeyword(word, "WITHKINDS")) {
    fields.kinds = true;
  } else {
    return false;
  }
  return true;
}

bool ParseKindsOption(absl::Span<const std::string> args, size_t& i,
                      KindFilter& kinds, absl::Status& error) {
  const bool except = IsKeyword(args[i], "EXCEPTKINDS");
  if ((!except && !IsKeyword(args[i], "KINDS")) || i + 1 >= args.size()) {
    return false;
  }
  absl::StatusOr<uint64_t> bits =
      ParseKindList(args[++i], except ? "EXCEPTKINDS" : "KINDS");
  if (!bits.ok()) {
    error = bits.status();
    return true;
  }
  kinds.kinds = except ? ~*bits : *bits;
  error = absl::OkStatus();
  return true;
}

absl::StatusOr<uint64_t> ParseKindList(absl::string_view list,
                                       absl::string_view what) {
  uint64_t bits = 0;
  for (absl::string_view part : absl::StrSplit(list, ',')) {
    int kind = 0;
    // SimpleAtoi takes a sign and spaces; a list has digits only.
    if (part.empty() || !absl::ascii_isdigit(part.front()) ||
        !absl::ascii_isdigit(part.back()) || !absl::SimpleAtoi(part, &kind) ||
        kind > kMaxActivityKind) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " takes activity kinds 0..", kMaxActivityKind,
                       " separated by commas, e.g. 0,2; got ", Quote(list)));
    }
    bits |= uint64_t{1} << kind;
  }
  return bits;
}

bool ParseListOptions(CommandCall& call, size_t first, ListOptions* options,
                      bool* names) {
  for (size_t i = first; i < call.args.size(); ++i) {
    const bool has_value = i + 1 < call.args.size();
    if (IsKeyword(call.args[i], "LIMIT") && has_value) {
      absl::StatusOr<int64_t> limit = ParseInt64InRange(
          call.args[++i], "LIMIT", 1, static_cast<int64_t>(kMaxPageSizeLimit));
      if (!limit.ok()) {
        ReplyError(call, limit.status());
        return false;
      }
      options->limit = static_cast<size_t>(*limit);
    } else if (IsKeyword(call.args[i], "CURSOR") && has_value) {
      options->cursor = CursorArgument(call.args[++i]);
    } else if (IsKeyword(call.args[i], "NAMES")) {
      *names = true;
    } else {
      ReplySyntaxError(call, call.args[i]);
      return false;
    }
  }
  return true;
}

bool ParseListCall(CommandCall& call, EntityId* entity, ListCall* list) {
  absl::StatusOr<EntityArgument> argument =
      EntityArgument::Parse(call.args[1], "entity");
  if (!argument.ok()) {
    ReplyError(call, argument.status());
    return false;
  }
  list->entity = *std::move(argument);
  if (!ParseListOptions(call, 2, &list->options, &list->names)) return false;
  absl::StatusOr<std::optional<EntityId>> id =
      list->entity.Resolve(*call.server, EntityUse::kLookUp);
  if (!id.ok()) {
    ReplyError(call, id.status());
    return false;
  }
  if (!id->has_value()) {
    WriteEmptyPage(*call.reply);
    return false;
  }
  *entity = **id;
  return true;
}

const NameRegistry* ReplyNames(const CommandCall& call, bool names) {
  return names ? call.server->names : nullptr;
}

void WriteEntityPage(RespWriter& reply, const EntityPage& page,
                     const NameRegistry* names) {
  reply.ArrayHeader(2);
  WriteCursor(reply, page.next_cursor);
  reply.ArrayHeader(page.ids.size());
  for (const EntityId id : page.ids) WriteEntity(reply, id, names);
}

void WriteEmptyPage(RespWriter& reply) {
  reply.ArrayHeader(2);
  WriteCursor(reply, "");
  reply.ArrayHeader(0);
}

void ReplyPagingError(CommandCall& call, const absl::Status& status) {
  ReplyError(call, absl::Status(status.code(),
                                absl::StrReplaceAll(
                                    status.message(),
                                    {{"an empty cursor for the first page",
                                      "the cursor 0 for the first page"}})));
}

absl::Status ParseReadOptions(absl::Span<const std::string> args, size_t first,
                              ReadOptions& options, bool& names,
                              EntryFields& fields) {
  options.hydrate = true;
  for (size_t i = first; i < args.size(); ++i) {
    const std::string& word = args[i];
    const bool has_value = i + 1 < args.size();
    if (IsKeyword(word, "REV")) {
      options.order = ReadOrder::kOldestFirst;
    } else if (IsKeyword(word, "NAMES")) {
      names = true;
    } else if (ParseEntryField(word, fields)) {
    } else if (absl::Status bad;
               ParseKindsOption(args, i, options.kinds, bad)) {
      if (!bad.ok()) return bad;
    } else if (IsKeyword(word, "LIMIT") && has_value) {
      absl::StatusOr<int64_t> limit = ParseInt64InRange(
          args[++i], "LIMIT", 1, static_cast<int64_t>(kMaxPageSizeLimit));
      if (!limit.ok()) return limit.status();
      options.limit = static_cast<size_t>(*limit);
    } else if (IsKeyword(word, "CURSOR") && has_value) {
      options.cursor = CursorArgument(args[++i]);
    } else if (IsKeyword(word, "MINTS") && has_value) {
      absl::StatusOr<int64_t> ts = ParseInt64(args[++i], "MINTS");
      if (!ts.ok()) return ts.status();
      options.min_ts = *ts;
    } else if (IsKeyword(word, "MAXTS") && has_value) {
      absl::StatusOr<int64_t> ts = ParseInt64(args[++i], "MAXTS");
      if (!ts.ok()) return ts.status();
      options.max_ts = *ts;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "syntax error: unexpected argument ", Quote(word),
          "; read options are LIMIT n, CURSOR c, REV, MINTS ts, MAXTS ts, "
          "KINDS list, EXCEPTKINDS list, NAMES, WITHEDITS, WITHKINDS"));
    }
  }
  return absl::OkStatus();
}

void WritePage(RespWriter& reply, const Page& page, const NameRegistry* names,
               EntryFields fields) {
  reply.ArrayHeader(2);
  WriteCursor(reply, page.next_cursor);
  reply.ArrayHeader(page.entries.size());
  for (const StoredEntry& entry : page.entries) {
    WriteStoredEntry(reply, entry, names, fields);
  }
}

void ReplyPage(CommandCall& call, const absl::StatusOr<Page>& page, bool names,
               EntryFields fields) {
  if (!page.ok()) return ReplyPagingError(call, page.status());
  WritePage(*call.reply, *page, ReplyNames(call, names), fields);
}

}  // namespace feedcore::server
