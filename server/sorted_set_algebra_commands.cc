// ZUNION, ZINTER, ZDIFF and ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE, with
// Redis 7's syntax: numkeys, the keys, then WEIGHTS (integers, as scores
// are: a weight that is not an integer is refused as a score is),
// AGGREGATE SUM|MIN|MAX and, without STORE, WITHSCORES. A missing key is
// an empty set.
//
// Scores are combined exactly: each weighted score and their sum are
// computed in 128 bits, and a member whose result does not fit int64 is an
// error naming it (nothing is stored then), never a wrapped or rounded
// score.
//
// STORE: every source is read before the destination is replaced, as one
// step (LeaderboardStore::Replace), so a destination that is also a source
// works and readers never see a half-built set; an empty result deletes
// the destination, as in Redis.
//
// Cost: ZUNION reads every source whole; ZINTER reads the smallest and
// looks its members up in the others; ZDIFF reads the first and looks its
// members up in the others. The reply is sorted in Redis's order.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "leaderboard_commands.h"
#include "leaderboard_store.h"
#include "sorted_set_order.h"
#include "sorted_set_range.h"

namespace feedcore::server {
namespace {

__extension__ typedef __int128 Wide;

enum class SetOperation { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

struct AlgebraRequest {
  SetOperation operation = SetOperation::kUnion;
  std::vector<std::string> keys;
  std::vector<int64_t> weights;  // one per key
  Aggregate aggregate = Aggregate::kSum;
  bool with_scores = false;
};

const char* CommandName(SetOperation operation, bool store) {
  switch (operation) {
    case SetOperation::kUnion:
      return store ? "zunionstore" : "zunion";
    case SetOperation::kInter:
      return store ? "zinterstore" : "zinter";
    case SetOperation::kDiff:
      return store ? "zdiffstore" : "zdiff";
  }
  return "";
}

// Parses args[first] (numkeys) and what follows. Replies with the error
// and returns false if the arguments are invalid.
bool ParseAlgebra(CommandCall& call, size_t first, bool store,
                  AlgebraRequest& request) {
  absl::StatusOr<int64_t> numkeys = ParseInt64(call.args[first], "numkeys");
  if (!numkeys.ok()) {
    ReplyError(call, numkeys.status());
    return false;
  }
  if (*numkeys < 1) {
    call.reply->Error(absl::StrCat("ERR at least 1 input key is needed for '",
                                   CommandName(request.operation, store),
                                   "' command"));
    return false;
  }
  const size_t available = call.args.size() - first - 1;
  if (static_cast<uint64_t>(*numkeys) > available) {
    call.reply->Error(absl::StrCat("ERR syntax error: numkeys is ", *numkeys,
                                   " but ", available, " arguments follow it"));
    return false;
  }
  const size_t n = static_cast<size_t>(*numkeys);
  request.keys.assign(call.args.begin() + first + 1,
                      call.args.begin() + first + 1 + n);
  request.weights.assign(n, 1);
  const bool combines = request.operation != SetOperation::kDiff;
  for (size_t i = first + 1 + n; i < call.args.size(); ++i) {
    const size_t remaining = call.args.size() - i - 1;
    const std::string& word = call.args[i];
    if (combines && IsKeyword(word, "WEIGHTS") && remaining >= n) {
      for (size_t k = 0; k < n; ++k) {
        absl::StatusOr<int64_t> weight =
            ParseScore(call.args[i + 1 + k], "weight");
        if (!weight.ok()) {
          ReplyError(call, weight.status());
          return false;
        }
        request.weights[k] = *weight;
      }
      i += n;
    } else if (combines && IsKeyword(word, "AGGREGATE") && remaining >= 1) {
      const std::string& how = call.args[i + 1];
      if (IsKeyword(how, "SUM")) {
        request.aggregate = Aggregate::kSum;
      } else if (IsKeyword(how, "MIN")) {
        request.aggregate = Aggregate::kMin;
      } else if (IsKeyword(how, "MAX")) {
        request.aggregate = Aggregate::kMax;
      } else {
        ReplySyntaxError(call, how);
        return false;
      }
      ++i;
    } else if (!store && IsKeyword(word, "WITHSCORES")) {
      request.with_scores = true;
    } else {
      ReplySyntaxError(call, word);
      return false;
    }
  }
  return true;
}

// One member's combined score so far.
struct Combined {
  Wide value = 0;
  size_t sources = 0;       // how many sources hold the member
  bool overflowed = false;  // a sum beyond even 128 bits
};

void Combine(Combined& into, Wide weighted, Aggregate aggregate) {
  if (into.sources++ == 0) {
    into.value = weighted;
    return;
  }
  switch (aggregate) {
    case Aggregate::kSum:
      if (__builtin_add_overflow(into.value, weighted, &into.value)) {
        into.overflowed = true;
      }
      return;
    case Aggregate::kMin:
      into.value = std::min(into.value, weighted);
      return;
    case Aggregate::kMax:
      into.value = std::max(into.value, weighted);
      return;
  }
}

absl::StatusOr<int64_t> Narrow(const Combined& combined,
                               absl::string_view name) {
  if (combined.overflowed || combined.value > Wide{INT64_MAX} ||
      combined.value < Wide{INT64_MIN}) {
    return absl::OutOfRangeError(absl::StrCat(
        "the combined score of member ", Quote(name),
        " does not fit the int64 scores of feedcore leaderboards"));
  }
  return static_cast<int64_t>(combined.value);
}

// The weighted score of `id` in `set`, if it is in it.
std::optional<Wide> WeightedScore(const SortedSet* set, absl::string_view name,
                                  int64_t weight) {
  if (set == nullptr) return std::nullopt;
  std::optional<MemberId> id = set->members.Find(name);
  if (!id.has_value()) return std::nullopt;
  absl::StatusOr<int64_t> score = set->board->Score(*id);
  if (!score.ok()) return std::nullopt;
  return Wide{*score} * weight;
}

absl::StatusOr<std::vector<NamedEntry>> Evaluate(
    const LeaderboardStore& store, const AlgebraRequest& request) {
  std::vector<std::shared_ptr<SortedSet>> sets;
  sets.reserve(request.keys.size());
  for (const std::string& key : request.keys) sets.push_back(store.Find(key));
  std::vector<NamedEntry> out;

  if (request.operation == SetOperation::kUnion) {
    std::vector<std::vector<NamedEntry>> read(sets.size());
    size_t total = 0;
    for (size_t k = 0; k < sets.size(); ++k) {
      if (sets[k] == nullptr) continue;
      absl::StatusOr<std::vector<NamedEntry>> all = ReadAllUnordered(*sets[k]);
      if (!all.ok()) return all.status();
      read[k] = *std::move(all);
      total += read[k].size();
    }
    // Keyed by views of the names in `read`, which outlive the map.
    absl::flat_hash_map<absl::string_view, Combined> combined;
    combined.reserve(total);
    for (size_t k = 0; k < read.size(); ++k) {
      for (const NamedEntry& entry : read[k]) {
        Combine(combined[entry.name], Wide{entry.score} * request.weights[k],
                request.aggregate);
      }
    }
    out.reserve(combined.size());
    for (const auto& [name, value] : combined) {
      absl::StatusOr<int64_t> score = Narrow(value, name);
      if (!score.ok()) return score.status();
      out.push_back({std::string(name), *score, 0});
    }
    return out;
  }

  // ZINTER walks the smallest source, ZDIFF the first.
  size_t walked = 0;
  if (request.operation == SetOperation::kInter) {
    size_t smallest = SIZE_MAX;
    for (size_t k = 0; k < sets.size(); ++k) {
      if (sets[k] == nullptr) return out;  // an empty source: empty result
      absl::StatusOr<size_t> size = sets[k]->board->Size();
      if (!size.ok()) return size.status();
      if (*size < smallest) {
        smallest = *size;
        walked = k;
      }
    }
  }
  if (sets[walked] == nullptr) return out;
  absl::StatusOr<std::vector<NamedEntry>> base =
      ReadAllUnordered(*sets[walked]);
  if (!base.ok()) return base.status();
  for (NamedEntry& entry : *base) {
    if (request.operation == SetOperation::kDiff) {
      bool elsewhere = false;
      for (size_t k = 1; k < sets.size() && !elsewhere; ++k) {
        elsewhere = WeightedScore(sets[k].get(), entry.name, 1).has_value();
      }
      if (!elsewhere) out.push_back(std::move(entry));
      continue;
    }
    Combined combined;
    bool everywhere = true;
    // In key order, as the weights are given.
    for (size_t k = 0; k < sets.size() && everywhere; ++k) {
      std::optional<Wide> weighted =
          k == walked
              ? std::optional<Wide>(Wide{entry.score} * request.weights[k])
              : WeightedScore(sets[k].get(), entry.name, request.weights[k]);
      if (!weighted.has_value()) {
        everywhere = false;
      } else {
        Combine(combined, *weighted, request.aggregate);
      }
    }
    if (!everywhere) continue;
    absl::StatusOr<int64_t> score = Narrow(combined, entry.name);
    if (!score.ok()) return score.status();
    entry.score = *score;
    out.push_back(std::move(entry));
  }
  return out;
}

// ZUNION numkeys key [key ...] [WEIGHTS ...] [AGGREGATE ...] [WITHSCORES]
// and ZINTER, ZDIFF.
void ReadCommand(CommandCall& call, SetOperation operation) {
  AlgebraRequest request;
  request.operation = operation;
  if (!ParseAlgebra(call, 1, /*store=*/false, request)) return;
  absl::StatusOr<std::vector<NamedEntry>> result =
      Evaluate(*call.server->boards, request);
  if (!result.ok()) return ReplyError(call, result.status());
  std::sort(result->begin(), result->end(),
            [](const NamedEntry& a, const NamedEntry& b) {
              return RedisOrderLess(a, b, /*rev=*/false);
            });
  ReplyEntries(call, *result, request.with_scores);
}

// ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS ...]
// [AGGREGATE ...] and ZINTERSTORE, ZDIFFSTORE.
void StoreCommand(CommandCall& call, SetOperation operation) {
  AlgebraRequest request;
  request.operation = operation;
  if (!ParseAlgebra(call, 2, /*store=*/true, request)) return;
  absl::StatusOr<std::vector<NamedEntry>> result =
      Evaluate(*call.server->boards, request);
  if (!result.ok()) return ReplyError(call, result.status());
  std::vector<std::pair<std::string, int64_t>> members;
  members.reserve(result->size());
  for (NamedEntry& entry : *result) {
    members.emplace_back(std::move(entry.name), entry.score);
  }
  absl::StatusOr<size_t> stored =
      call.server->boards->Replace(call.args[1], std::move(members));
  if (!stored.ok()) return ReplyError(call, stored.status());
  call.reply->Integer(static_cast<int64_t>(*stored));
}

void Zunion(CommandCall& call) { ReadCommand(call, SetOperation::kUnion); }
void Zinter(CommandCall& call) { ReadCommand(call, SetOperation::kInter); }
void Zdiff(CommandCall& call) { ReadCommand(call, SetOperation::kDiff); }
void Zunionstore(CommandCall& call) {
  StoreCommand(call, SetOperation::kUnion);
}
void Zinterstore(CommandCall& call) {
  StoreCommand(call, SetOperation::kInter);
}
void Zdiffstore(CommandCall& call) { StoreCommand(call, SetOperation::kDiff); }

}  // namespace

absl::Status AddSortedSetAlgebraCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"ZUNION", -3, {"readonly", "movablekeys"}, 0, 0, 0, Zunion},
      {"ZINTER", -3, {"readonly", "movablekeys"}, 0, 0, 0, Zinter},
      {"ZDIFF", -3, {"readonly", "movablekeys"}, 0, 0, 0, Zdiff},
      {"ZUNIONSTORE",
       -4,
       {"write", "denyoom", "movablekeys"},
       1,
       1,
       1,
       Zunionstore},
      {"ZINTERSTORE",
       -4,
       {"write", "denyoom", "movablekeys"},
       1,
       1,
       1,
       Zinterstore},
      {"ZDIFFSTORE",
       -4,
       {"write", "denyoom", "movablekeys"},
       1,
       1,
       1,
       Zdiffstore},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace feedcore::server
