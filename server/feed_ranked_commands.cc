#include "feed_ranked_commands.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "arguments.h"
#include "feed_paging.h"
#include "feedcore/options.h"
#include "feedcore/social.h"

namespace feedcore::server {
namespace {

void WriteCounters(RespWriter& reply, const ActivityCounters& counters) {
  reply.ArrayHeader(counters.size());
  for (const int64_t counter : counters) reply.Integer(counter);
}

// A double as text that reads back to the same value ("%.17g"): RESP2 has
// no double type, and RESP3 clients read this bulk string alike.
std::string DoubleText(double value) { return absl::StrFormat("%.17g", value); }

absl::StatusOr<double> ParseDouble(const std::string& text,
                                   absl::string_view what) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a number, not ", Quote(text)));
  }
  return value;
}

void ReplyCounters(CommandCall& call,
                   const absl::StatusOr<ActivityCounters>& counters) {
  if (!counters.ok()) return ReplyError(call, counters.status());
  WriteCounters(*call.reply, *counters);
}

// FEED.INCR activity counter delta
void FeedIncr(CommandCall& call) {
  absl::StatusOr<uint64_t> activity = ParseId(call.args[1], "activity");
  if (!activity.ok()) return ReplyError(call, activity.status());
  absl::StatusOr<uint64_t> counter = ParseId(call.args[2], "counter");
  if (!counter.ok()) return ReplyError(call, counter.status());
  absl::StatusOr<int64_t> delta = ParseInt64(call.args[3], "delta");
  if (!delta.ok()) return ReplyError(call, delta.status());
  ReplyCounters(call, call.server->feeds->IncrementCounter(
                          *activity, static_cast<size_t>(*counter), *delta));
}

// FEED.COUNTERS activity
void FeedCounters(CommandCall& call) {
  absl::StatusOr<uint64_t> activity = ParseId(call.args[1], "activity");
  if (!activity.ok()) return ReplyError(call, activity.status());
  ReplyCounters(call, call.server->feeds->GetCounters(*activity));
}

// [LIMIT n] [WINDOW n] [CURSOR c] [BASE b] [WEIGHTS w0 w1 w2 w3]
// [GRAVITY g] [OFFSET hours] [KINDS list] [EXCEPTKINDS list] [NAMES]
// [WITHEDITS] [WITHKINDS] from args[2...]. Range checks beyond "is a
// number" are the engine's.
absl::Status ParseRankedOptions(absl::Span<const std::string> args,
                                RankedReadOptions& options, bool& names,
                                EntryFields& fields) {
  options.hydrate = true;
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string& word = args[i];
    const bool has_value = i + 1 < args.size();
    if (IsKeyword(word, "NAMES")) {
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
    } else if (IsKeyword(word, "WINDOW") && has_value) {
      absl::StatusOr<int64_t> window =
          ParseInt64InRange(args[++i], "WINDOW", 1,
                            static_cast<int64_t>(kMaxTimelineLengthLimit));
      if (!window.ok()) return window.status();
      options.window = static_cast<size_t>(*window);
    } else if (IsKeyword(word, "CURSOR") && has_value) {
      options.cursor = CursorArgument(args[++i]);
    } else if (IsKeyword(word, "BASE") && has_value) {
      absl::StatusOr<double> base = ParseDouble(args[++i], "BASE");
      if (!base.ok()) return base.status();
      options.formula.base = *base;
    } else if (IsKeyword(word, "WEIGHTS") &&
               i + kActivityCounterCount < args.size()) {
      for (double& weight : options.formula.weights) {
        absl::StatusOr<double> w = ParseDouble(args[++i], "a weight");
        if (!w.ok()) return w.status();
        weight = *w;
      }
    } else if (IsKeyword(word, "GRAVITY") && has_value) {
      absl::StatusOr<double> gravity = ParseDouble(args[++i], "GRAVITY");
      if (!gravity.ok()) return gravity.status();
      options.formula.gravity = *gravity;
    } else if (IsKeyword(word, "OFFSET") && has_value) {
      absl::StatusOr<double> offset = ParseDouble(args[++i], "OFFSET");
      if (!offset.ok()) return offset.status();
      options.formula.age_offset_hours = *offset;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "syntax error: unexpected argument ", Quote(word),
          "; ranked read options are LIMIT n, WINDOW n, CURSOR c, BASE b, "
          "WEIGHTS w0 w1 w2 w3, GRAVITY g, OFFSET hours, KINDS list, "
          "EXCEPTKINDS list, NAMES, WITHEDITS, WITHKINDS"));
    }
  }
  return absl::OkStatus();
}

// FEED.RANKED user [options]
// Reply: [next_cursor, [[id, actor, ts, expires_at, payload, score,
//         [c0, c1, c2, c3]], ...]], with WITHEDITS edited_at and then with
// WITHKINDS the kind last in each entry (as in FEED.READ's, after every
// field a client already unpacks).
void FeedRanked(CommandCall& call) {
  absl::StatusOr<EntityArgument> user =
      EntityArgument::Parse(call.args[1], "user");
  if (!user.ok()) return ReplyError(call, user.status());
  RankedReadOptions options;
  bool names = false;
  EntryFields fields;
  if (absl::Status s = ParseRankedOptions(call.args, options, names, fields);
      !s.ok()) {
    return ReplyError(call, s);
  }
  absl::StatusOr<std::optional<EntityId>> id =
      user->Resolve(*call.server, EntityUse::kLookUp);
  if (!id.ok()) return ReplyError(call, id.status());
  if (!id->has_value()) return WriteEmptyPage(*call.reply);
  absl::StatusOr<RankedPage> page =
      call.server->feeds->ReadRanked(**id, options);
  if (!page.ok()) return ReplyPagingError(call, page.status());
  const NameRegistry* actor_names = ReplyNames(call, names);
  RespWriter& reply = *call.reply;
  reply.ArrayHeader(2);
  WriteCursor(reply, page->next_cursor);
  reply.ArrayHeader(page->entries.size());
  for (const RankedEntry& ranked : page->entries) {
    const StoredEntry& entry = ranked.entry;
    reply.ArrayHeader(EntryReplySize(fields) + 2);
    WriteId(reply, entry.activity_id);
    WriteEntity(reply, entry.actor, actor_names);
    reply.Integer(entry.ts);
    reply.Integer(entry.expires_at);
    reply.Bulk(entry.payload);
    reply.Bulk(DoubleText(ranked.score));
    WriteCounters(reply, ranked.counters);
    if (fields.edits) reply.Integer(entry.edited_at);
    if (fields.kinds) reply.Integer(entry.kind);
  }
}

}  // namespace

absl::Status AddFeedRankedCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"FEED.INCR", 4, {"write", "fast"}, 0, 0, 0, FeedIncr},
      {"FEED.COUNTERS", 2, {"readonly", "fast"}, 0, 0, 0, FeedCounters},
      {"FEED.RANKED", -2, {"readonly"}, 0, 0, 0, FeedRanked},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
