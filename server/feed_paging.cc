#include "feed_paging.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"

namespace feedcore::server {

std::string CursorArgument(const std::string& text) {
  return text == kStartCursor ? std::string() : text;
}

void WriteCursor(RespWriter& reply, const std::string& next_cursor) {
  reply.Bulk(next_cursor.empty() ? kStartCursor : next_cursor);
}

void WriteId(RespWriter& reply, uint64_t id) { reply.Bulk(absl::StrCat(id)); }

bool ParseListCall(CommandCall& call, EntityId* entity, ListOptions* options) {
  absl::StatusOr<uint64_t> id = ParseId(call.args[1], "entity");
  if (!id.ok()) {
    ReplyError(call, id.status());
    return false;
  }
  *entity = *id;
  for (size_t i = 2; i < call.args.size(); ++i) {
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
    } else {
      ReplySyntaxError(call, call.args[i]);
      return false;
    }
  }
  return true;
}

void WriteEntityPage(RespWriter& reply, const EntityPage& page) {
  reply.ArrayHeader(2);
  WriteCursor(reply, page.next_cursor);
  reply.ArrayHeader(page.ids.size());
  for (const EntityId id : page.ids) WriteId(reply, id);
}

}  // namespace feedcore::server
