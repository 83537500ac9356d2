#include "leaderboard_commands.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "arguments.h"
#include "feedcore/leaderboard.h"
#include "leaderboard_store.h"
#include "member_dictionary.h"
#include "sorted_set_order.h"

namespace feedcore::server {
namespace {

// A score in any syntax Redis reads one in ("2", "2.0", "+5", "1e3",
// "-0"), taken when its value is an integer within int64: clients that
// type scores as floats send "1.0". Decimal integers are read exactly,
// also beyond the 2^53 a double holds.
}  // namespace

absl::StatusOr<int64_t> ParseScore(absl::string_view text,
                                   absl::string_view what) {
  if (absl::StatusOr<int64_t> exact = ParseInt64(text, what); exact.ok()) {
    return exact;
  }
  absl::string_view number = text;
  // strtod's leading '+', which from_chars does not take.
  const bool plus = absl::ConsumePrefix(&number, "+");
  double value = 0;
  const char* const end = number.data() + number.size();
  const std::from_chars_result parsed =
      std::from_chars(number.data(), end, value);
  // 2^63, the first double above every int64.
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (number.empty() || (plus && number[0] == '-') ||
      parsed.ec != std::errc() || parsed.ptr != end || !std::isfinite(value) ||
      std::trunc(value) != value || value < -kTwoTo63 || value >= kTwoTo63) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be an integer from ", INT64_MIN, " to ", INT64_MAX,
        ", got ", Quote(text), " (feedcore leaderboards hold int64 scores)"));
  }
  return static_cast<int64_t>(value);
}

namespace {

std::shared_ptr<SortedSet> FindSet(CommandCall& call) {
  return call.server->boards->Find(call.args[1]);
}

// The key's set, created if absent; replies with the error and returns null
// if the key is not acceptable.
std::shared_ptr<SortedSet> GetOrCreateSet(CommandCall& call) {
  absl::StatusOr<std::shared_ptr<SortedSet>> set =
      call.server->boards->GetOrCreate(call.args[1]);
  if (!set.ok()) {
    ReplyError(call, set.status());
    return nullptr;
  }
  return *set;
}

// The names a command pinned (MemberDictionary, "Pins"), unpinned when it
// is done, on every path, after its board writes.
class PinnedNames {
 public:
  explicit PinnedNames(MemberDictionary& members) : members_(members) {}
  ~PinnedNames() {
    for (const Pin& pin : pins_) members_.Unpin(pin.id, pin.maybe_absent);
  }
  PinnedNames(const PinnedNames&) = delete;
  PinnedNames& operator=(const PinnedNames&) = delete;

  void Add(MemberId id) { pins_.push_back({id, /*maybe_absent=*/true}); }
  // The write with pin `i` reported its member on the board afterwards, so
  // unpinning it needs no check of the board.
  void SawOnBoard(size_t i) { pins_[i].maybe_absent = false; }

 private:
  struct Pin {
    MemberId id;
    bool maybe_absent;
  };
  MemberDictionary& members_;
  // Most commands pin a few names: no allocation for them.
  absl::InlinedVector<Pin, 4> pins_;
};

// Unpins on the board when the write reported the member on it.
void NoteOutcome(const absl::StatusOr<WriteResult>& result, size_t pin,
                 PinnedNames& pins) {
  if (result.ok() && result->score.has_value()) pins.SawOnBoard(pin);
}

// The error of an increment the int64 range cannot hold, naming the member
// and, when it can still be read, the sum.
void ReplyOverflow(CommandCall& call, const Leaderboard& board, MemberId id,
                   absl::string_view name, int64_t delta) {
  std::string sum;
  if (absl::StatusOr<int64_t> current = board.Score(id); current.ok()) {
    sum = absl::StrCat(" (", *current, " + ", delta, ")");
  }
  call.reply->Error(absl::StrCat(
      "ERR increment would overflow the int64 score of ", Quote(name), sum));
}

struct ZaddFlags {
  bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
};

// The board's condition for ZADD's flags. GT and LT compare numbers, and
// "better" follows the board's order, so on a lower-first board GT is
// "worse".
WriteCondition ConditionOf(const ZaddFlags& flags, ScoreOrder order) {
  if (flags.nx) return WriteCondition::kIfAbsent;
  if (flags.gt || flags.lt) {
    const bool better = flags.gt == (order == ScoreOrder::kHigherFirst);
    if (flags.xx) {
      return better ? WriteCondition::kIfPresentAndBetter
                    : WriteCondition::kIfPresentAndWorse;
    }
    return better ? WriteCondition::kIfBetter : WriteCondition::kIfWorse;
  }
  return flags.xx ? WriteCondition::kIfPresent : WriteCondition::kAlways;
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
void Zadd(CommandCall& call) {
  ZaddFlags flags;
  size_t i = 2;
  for (; i < call.args.size(); ++i) {
    const std::string& word = call.args[i];
    if (IsKeyword(word, "NX")) {
      flags.nx = true;
    } else if (IsKeyword(word, "XX")) {
      flags.xx = true;
    } else if (IsKeyword(word, "GT")) {
      flags.gt = true;
    } else if (IsKeyword(word, "LT")) {
      flags.lt = true;
    } else if (IsKeyword(word, "CH")) {
      flags.ch = true;
    } else if (IsKeyword(word, "INCR")) {
      flags.incr = true;
    } else {
      break;
    }
  }
  const size_t pairs_start = i;
  const size_t rest = call.args.size() - pairs_start;
  if (rest == 0 || rest % 2 != 0) {
    call.reply->Error(
        "ERR syntax error: ZADD needs score member pairs after its options");
    return;
  }
  if (flags.nx && flags.xx) {
    call.reply->Error(
        "ERR XX and NX options at the same time are not compatible");
    return;
  }
  if ((flags.gt && flags.lt) || (flags.gt && flags.nx) ||
      (flags.lt && flags.nx)) {
    call.reply->Error(
        "ERR GT, LT, and/or NX options at the same time are not compatible");
    return;
  }
  if (flags.incr && rest != 2) {
    call.reply->Error(
        "ERR INCR option supports a single increment-element pair");
    return;
  }
  // Every score is checked before anything changes.
  std::vector<int64_t> scores;
  scores.reserve(rest / 2);
  for (size_t p = pairs_start; p < call.args.size(); p += 2) {
    absl::StatusOr<int64_t> score = ParseScore(call.args[p], "score");
    if (!score.ok()) return ReplyError(call, score.status());
    scores.push_back(*score);
  }
  // XX never adds, so on a missing key it changes nothing and, as in
  // Redis, creates no key.
  if (flags.xx && FindSet(call) == nullptr) {
    call.changed_nothing = true;
    if (flags.incr) return call.reply->Null();
    return call.reply->Integer(0);
  }
  std::shared_ptr<SortedSet> set = GetOrCreateSet(call);
  if (set == nullptr) return;
  Leaderboard& board = *set->board;
  const WriteCondition condition =
      ConditionOf(flags, board.options().score_order);

  internal::ReaderLock write_lock(&set->choose_and_remove_mutex);
  // Every name is pinned before the board is written, so a name that
  // cannot be given (a journal error) fails the command with nothing
  // written.
  PinnedNames pins(set->members);
  std::vector<ScoreWrite> writes;
  std::vector<size_t> pair_of_write;  // index into `scores`
  writes.reserve(scores.size());
  for (size_t n = 0; n < scores.size(); ++n) {
    const std::string& name = call.args[pairs_start + 2 * n + 1];
    std::optional<MemberId> id;
    if (flags.xx) {
      // XX never adds, so it must not grow the dictionary either.
      id = set->members.PinIfPresent(name);
      if (!id.has_value()) continue;  // no such member: nothing to write
    } else {
      // Synced once for all names below.
      absl::StatusOr<MemberId> interned = set->members.InternUnsynced(name);
      if (!interned.ok()) return ReplyError(call, interned.status());
      id = *interned;
    }
    pins.Add(*id);
    ScoreWrite& write = writes.emplace_back();
    write.member = *id;
    write.op = flags.incr ? WriteOp::kIncrement : WriteOp::kSet;
    write.value = scores[n];
    write.condition = condition;
    pair_of_write.push_back(n);
  }
  // The names' journal records are stable before the board write that
  // uses them: one sync for every pair (with fsync always, one fdatasync).
  if (!flags.xx) {
    if (absl::Status s = set->members.SyncJournal(); !s.ok()) {
      return ReplyError(call, s);
    }
  }
  std::vector<absl::StatusOr<WriteResult>> results;
  if (writes.size() == 1) {
    results.push_back(board.Write(writes[0]));
  } else if (!writes.empty()) {
    results = board.WriteMany(writes);
  }
  for (size_t w = 0; w < results.size(); ++w) NoteOutcome(results[w], w, pins);
  set->version.fetch_add(1, std::memory_order_release);

  int64_t added = 0;
  int64_t changed = 0;
  for (size_t w = 0; w < results.size(); ++w) {
    const absl::StatusOr<WriteResult>& result = results[w];
    if (!result.ok()) {
      if (absl::IsOutOfRange(result.status())) {
        return ReplyOverflow(call, board, writes[w].member,
                             call.args[pairs_start + 2 * pair_of_write[w] + 1],
                             writes[w].value);
      }
      return ReplyError(call, result.status());
    }
    if (result->outcome == WriteOutcome::kAdded) ++added;
    if (result->outcome == WriteOutcome::kChanged) ++changed;
  }
  // As in Redis, a ZADD that added and changed nothing leaves WATCHes be.
  call.changed_nothing = added == 0 && changed == 0;
  if (flags.incr) {
    // NX/XX/GT/LT stopped the increment: null, as in Redis.
    if (results.empty() || results[0]->outcome == WriteOutcome::kNotApplied ||
        !results[0]->score.has_value()) {
      return call.reply->Null();
    }
    return call.reply->Score(*results[0]->score);
  }
  call.reply->Integer(flags.ch ? added + changed : added);
}

// ZINCRBY key increment member
void Zincrby(CommandCall& call) {
  absl::StatusOr<int64_t> delta = ParseScore(call.args[2], "increment");
  if (!delta.ok()) return ReplyError(call, delta.status());
  std::shared_ptr<SortedSet> set = GetOrCreateSet(call);
  if (set == nullptr) return;
  const std::string& name = call.args[3];
  internal::ReaderLock write_lock(&set->choose_and_remove_mutex);
  PinnedNames pins(set->members);
  absl::StatusOr<MemberId> id = set->members.Intern(name);
  if (!id.ok()) return ReplyError(call, id.status());
  pins.Add(*id);
  ScoreWrite write;
  write.member = *id;
  write.op = WriteOp::kIncrement;
  write.value = *delta;
  const absl::StatusOr<WriteResult> result = set->board->Write(write);
  set->version.fetch_add(1, std::memory_order_release);
  NoteOutcome(result, 0, pins);
  call.changed_nothing = result.ok() &&
                         result->outcome != WriteOutcome::kAdded &&
                         result->outcome != WriteOutcome::kChanged;
  if (!result.ok()) {
    if (absl::IsOutOfRange(result.status())) {
      return ReplyOverflow(call, *set->board, *id, name, *delta);
    }
    return ReplyError(call, result.status());
  }
  if (!result->score.has_value()) {  // kAlways always leaves a score
    return ReplyError(
        call, absl::InternalError("the board reported no score after ZINCRBY"));
  }
  call.reply->Score(*result->score);
}

// The id of the member named args[2] of the key args[1], if both exist.
std::optional<MemberId> FindMember(const SortedSet* set,
                                   const std::string& name) {
  if (set == nullptr) return std::nullopt;
  return set->members.Find(name);
}

// ZSCORE key member
void Zscore(CommandCall& call) {
  std::shared_ptr<SortedSet> set = FindSet(call);
  std::optional<MemberId> id = FindMember(set.get(), call.args[2]);
  if (!id.has_value()) return call.reply->Null();
  absl::StatusOr<int64_t> score = set->board->Score(*id);
  if (!score.ok()) return call.reply->Null();
  call.reply->Score(*score);
}

// ZRANK key member [WITHSCORE] and ZREVRANK: the member's position in
// Redis's order (sorted_set_order.h), with its score after WITHSCORE
// (Redis 7.2's syntax).
void RankCommand(CommandCall& call, bool rev) {
  bool with_score = false;
  if (call.args.size() == 4) {
    if (!IsKeyword(call.args[3], "WITHSCORE")) {
      return ReplySyntaxError(call, call.args[3]);
    }
    with_score = true;
  } else if (call.args.size() > 4) {
    return ReplySyntaxError(call, call.args[4]);
  }
  std::shared_ptr<SortedSet> set = FindSet(call);
  if (set == nullptr) {
    return with_score ? call.reply->NullArray() : call.reply->Null();
  }
  absl::StatusOr<std::optional<RankedMember>> ranked =
      RedisRank(*set, call.args[2], rev);
  if (!ranked.ok()) return ReplyError(call, ranked.status());
  if (!ranked->has_value()) {
    return with_score ? call.reply->NullArray() : call.reply->Null();
  }
  if (!with_score) {
    return call.reply->Integer(static_cast<int64_t>((*ranked)->rank));
  }
  call.reply->ArrayHeader(2);
  call.reply->Integer(static_cast<int64_t>((*ranked)->rank));
  call.reply->Score((*ranked)->score);
}

void Zrank(CommandCall& call) { RankCommand(call, /*rev=*/false); }
void Zrevrank(CommandCall& call) { RankCommand(call, /*rev=*/true); }

// ZREM key member [member ...]
void Zrem(CommandCall& call) {
  std::shared_ptr<SortedSet> set = FindSet(call);
  if (set == nullptr) return call.reply->Integer(0);
  std::vector<absl::string_view> names(call.args.begin() + 2, call.args.end());
  const size_t removed = RemoveMembers(*set, names).size();
  call.changed_nothing = removed == 0;
  call.reply->Integer(static_cast<int64_t>(removed));
}

// ZCARD key
void Zcard(CommandCall& call) {
  std::shared_ptr<SortedSet> set = FindSet(call);
  if (set == nullptr) return call.reply->Integer(0);
  absl::StatusOr<size_t> size = set->board->Size();
  if (!size.ok()) return ReplyError(call, size.status());
  call.reply->Integer(static_cast<int64_t>(*size));
}

// ZMSCORE key member [member ...]: each member's score, or null.
void Zmscore(CommandCall& call) {
  std::shared_ptr<SortedSet> set = FindSet(call);
  call.reply->ArrayHeader(call.args.size() - 2);
  for (size_t i = 2; i < call.args.size(); ++i) {
    std::optional<MemberId> id = FindMember(set.get(), call.args[i]);
    absl::StatusOr<int64_t> score =
        id.has_value() ? set->board->Score(*id)
                       : absl::StatusOr<int64_t>(absl::NotFoundError(""));
    if (score.ok()) {
      call.reply->Score(*score);
    } else {
      call.reply->Null();
    }
  }
}

}  // namespace

namespace {

// Removes members 0..count-1 of a caller's list, pinned by `pin(i)`.
template <typename Pin>
std::vector<size_t> RemovePinned(SortedSet& set, size_t count, Pin pin) {
  PinnedNames pins(set.members);
  std::vector<size_t> removed;
  for (size_t i = 0; i < count; ++i) {
    std::optional<MemberId> id = pin(i);
    if (!id.has_value()) continue;
    // Unpinned as possibly absent: the last pin of the name frees it once
    // its member is off the board.
    pins.Add(*id);
    if (set.board->Remove(*id).ok()) removed.push_back(i);
  }
  if (!removed.empty()) set.version.fetch_add(1, std::memory_order_release);
  return removed;
}

}  // namespace

std::vector<size_t> RemoveMembers(SortedSet& set,
                                  absl::Span<const absl::string_view> names) {
  internal::ReaderLock write_lock(&set.choose_and_remove_mutex);
  return RemovePinned(set, names.size(), [&](size_t i) {
    return set.members.PinIfPresent(names[i]);
  });
}

std::vector<size_t> RemoveEntries(SortedSet& set,
                                  absl::Span<const NamedEntry> entries) {
  return RemovePinned(set, entries.size(), [&](size_t i) {
    return set.members.PinIfLive(entries[i].id);
  });
}

absl::Status AddLeaderboardCommands(CommandTable& table) {
  const std::vector<CommandSpec> specs = {
      {"ZADD", -4, {"write", "denyoom", "fast"}, 1, 1, 1, Zadd},
      {"ZINCRBY", 4, {"write", "denyoom", "fast"}, 1, 1, 1, Zincrby},
      {"ZSCORE", 3, {"readonly", "fast"}, 1, 1, 1, Zscore},
      {"ZRANK", -3, {"readonly", "fast"}, 1, 1, 1, Zrank},
      {"ZREVRANK", -3, {"readonly", "fast"}, 1, 1, 1, Zrevrank},
      {"ZMSCORE", -3, {"readonly", "fast"}, 1, 1, 1, Zmscore},
      {"ZREM", -3, {"write", "fast"}, 1, 1, 1, Zrem},
      {"ZCARD", 2, {"readonly", "fast"}, 1, 1, 1, Zcard},
  };
  for (const CommandSpec& spec : specs) {
    if (absl::Status status = table.Add(spec); !status.ok()) return status;
  }
  if (absl::Status status = AddLeaderboardRangeCommands(table); !status.ok()) {
    return status;
  }
  if (absl::Status status = AddSortedSetRemovalCommands(table); !status.ok()) {
    return status;
  }
  return AddSortedSetAlgebraCommands(table);
}

}  // namespace feedcore::server
