// The sorted-set range reads and ZRANGESTORE: ZRANGE (by rank, BYSCORE or
// BYLEX, REV, LIMIT, WITHSCORES), ZREVRANGE, ZRANGEBYSCORE,
// ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZCOUNT, ZLEXCOUNT and
// ZRANGESTORE, with Redis 7's syntax and order (sorted_set_range.h).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "arguments.h"
#include "feedcore/leaderboard.h"
#include "leaderboard_commands.h"
#include "leaderboard_store.h"
#include "sorted_set_order.h"
#include "sorted_set_range.h"

namespace feedcore::server {
namespace {

// Parses the bounds at args[2] and args[3] and the options after them,
// then replies with the range of the key args[1].
void ReplyRange(CommandCall& call, const RangeSyntax& syntax) {
  RangeQuery query;
  if (!ParseRangeQuery(call, 2, syntax, query)) return;
  std::shared_ptr<SortedSet> set = call.server->boards->Find(call.args[1]);
  ReplyRangeQuery(call, set.get(), query);
}

// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count]
// [WITHSCORES]
void Zrange(CommandCall& call) { ReplyRange(call, {.by_words = true}); }
// ZREVRANGE key start stop [WITHSCORES]
void Zrevrange(CommandCall& call) { ReplyRange(call, {.rev = true}); }
// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]
void Zrangebyscore(CommandCall& call) {
  ReplyRange(call, {.kind = RangeKind::kScore});
}
// ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]
void Zrevrangebyscore(CommandCall& call) {
  ReplyRange(call, {.kind = RangeKind::kScore, .rev = true});
}
// ZRANGEBYLEX key min max [LIMIT offset count]
void Zrangebylex(CommandCall& call) {
  ReplyRange(call, {.with_scores = false, .kind = RangeKind::kLex});
}
// ZREVRANGEBYLEX key max min [LIMIT offset count]
void Zrevrangebylex(CommandCall& call) {
  ReplyRange(call,
             {.with_scores = false, .kind = RangeKind::kLex, .rev = true});
}

// ZCOUNT key min max
void Zcount(CommandCall& call) {
  absl::StatusOr<ScoreBounds> bounds =
      ParseScoreBounds(call.args[2], call.args[3]);
  if (!bounds.ok()) return ReplyError(call, bounds.status());
  std::shared_ptr<SortedSet> set = call.server->boards->Find(call.args[1]);
  if (set == nullptr || bounds->empty) return call.reply->Integer(0);
  absl::StatusOr<uint64_t> count = set->board->CountInRange(bounds->range);
  if (!count.ok()) return ReplyError(call, count.status());
  call.reply->Integer(static_cast<int64_t>(*count));
}

// ZLEXCOUNT key min max
void Zlexcount(CommandCall& call) {
  RangeQuery query;
  if (!ParseRangeQuery(call, 2, {.with_scores = false, .kind = RangeKind::kLex},
                       query)) {
    return;
  }
  std::shared_ptr<SortedSet> set = call.server->boards->Find(call.args[1]);
  absl::StatusOr<std::vector<NamedEntry>> entries =
      RunRangeQuery(set.get(), query);
  if (!entries.ok()) return ReplyError(call, entries.status());
  call.reply->Integer(static_cast<int64_t>(entries->size()));
}

// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
void Zrangestore(CommandCall& call) {
  RangeQuery query;
  if (!ParseRangeQuery(call, 3, {.by_words = true, .with_scores = false},
                       query)) {
    return;
  }
  std::shared_ptr<SortedSet> source = call.server->boards->Find(call.args[2]);
  absl::StatusOr<std::vector<NamedEntry>> entries =
      RunRangeQuery(source.get(), query);
  if (!entries.ok()) return ReplyError(call, entries.status());
  std::vector<std::pair<std::string, int64_t>> members;
  members.reserve(entries->size());
  for (NamedEntry& entry : *entries) {
    members.emplace_back(std::move(entry.name), entry.score);
  }
  absl::StatusOr<size_t> stored =
      call.server->boards->Replace(call.args[1], std::move(members));
  if (!stored.ok()) return ReplyError(call, stored.status());
  call.reply->Integer(static_cast<int64_t>(*stored));
}

}  // namespace

absl::Status AddLeaderboardRangeCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"ZRANGE", -4, {"readonly"}, 1, 1, 1, Zrange},
      {"ZREVRANGE", -4, {"readonly"}, 1, 1, 1, Zrevrange},
      {"ZRANGEBYSCORE", -4, {"readonly"}, 1, 1, 1, Zrangebyscore},
      {"ZREVRANGEBYSCORE", -4, {"readonly"}, 1, 1, 1, Zrevrangebyscore},
      {"ZRANGEBYLEX", -4, {"readonly"}, 1, 1, 1, Zrangebylex},
      {"ZREVRANGEBYLEX", -4, {"readonly"}, 1, 1, 1, Zrevrangebylex},
      {"ZCOUNT", 4, {"readonly", "fast"}, 1, 1, 1, Zcount},
      {"ZLEXCOUNT", 4, {"readonly", "fast"}, 1, 1, 1, Zlexcount},
      {"ZRANGESTORE", -5, {"write", "denyoom"}, 1, 2, 1, Zrangestore},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
