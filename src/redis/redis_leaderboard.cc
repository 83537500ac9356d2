// The Leaderboard interface on a Redis Cluster (see redis_cluster.h).
//
// Keys. Partition p of N is one sorted set, `<prefix>:lb:{T}`, whose hash
// tag T is hex(name) "#" p "#" j for the first j = 0, 1, ... that puts the
// key in the p-th of N equal slot ranges. Nodes own contiguous slot ranges,
// so the partitions, and the writes they take, spread over the nodes as the
// slots do; the search is deterministic, so every process derives the same
// keys. The name is hex-encoded because a '}' in it would end the tag.
// `<prefix>:lbmeta:{hex(name)#meta}` holds N (followed by " lower-first"
// on a kLowerFirst board), written once (SET NX): a process opening the
// board with another N would place members in the wrong partitions, and
// with the other order would read every score with the wrong sign, so it
// is refused.
//
// Partition p's metadata is the hash `<prefix>:lbmd:{T}`, with the same
// tag T as its sorted set: one slot, so one script writes a score and its
// metadata, and Remove and Clear drop both, atomically.
//
// Order. A member is its id as 8 big-endian bytes. The stored score is the
// negated score on a ScoreOrder::kHigherFirst board and the score itself on
// a kLowerFirst one (leaderboard_codec.h), so on both a sorted set's
// ascending order (score, then member bytes; big-endian ids compare as
// bytes as they do as numbers) is the board's best-first order under
// TieBreak::kLowerMemberFirst, and set positions are partition-local ranks.
// The meta key records the order and the tie-break with the partition
// count, so a process opening the board otherwise is refused.
//
// Ties by update (TieBreak::kEarlierUpdateFirst). A set member is then the
// member's update sequence (8 big-endian bytes) followed by its id, so the
// set orders equal scores by sequence, then id: internal::RanksAbove's
// order, and the reads below work on it unchanged, their keys carrying the
// sequence. The sequences come from one counter per board (INCRBY before
// each write call, one range per batch), the only order that partitions on
// different nodes can share: the nodes' clocks disagree. A hash per
// partition maps each member to its sequence, so a member is found by id
// (leaderboard_scripts.h). A member's partition is
// XXH3_64bits of its 8 bytes modulo N, the same on every host.
//
// Scores are doubles in Redis, so the board keeps them within +-2^53, where
// every integer is exact. Increment adds in a script, in 32-bit halves
// because Lua numbers are doubles too: the sum is exact and a result out
// of range is refused without writing.
//
// IncrementMany runs that script once per element, in one ClusterClient
// call, so a batch costs a pipeline per node instead of a round trip per
// element, and each element keeps Increment's result and errors (RunEach:
// one failing element does not fail the others). Ordering the elements by
// member (Command::order) keeps a member's results running sums even
// across redirections and retries. One script per partition taking all of
// its elements would save the per-command overhead, but would repeat the
// increment script's arithmetic and hold the node for a whole batch.
//
// Reads. kLeaderboardReadScript locates a key in one partition atomically: how
// many entries rank above it, whether it is there, and the entries just above
// and just below it. Rank sums the counts; TopK, Around and ReadPage merge
// the partitions lazily as the in-process board does, fetching more of a
// partition by keyset (the entries past the last one seen, not by
// position), so entries moving inside a partition between two fetches
// cannot make a walk repeat or skip one. Each fetch is atomic in its
// partition; a read across partitions is not a snapshot of the board.
// Clear deletes the partitions one by one: atomic per partition only.
// Competition ranks come from the unique ranks of consecutive entries, plus
// one count of the better scores (ZCOUNT per partition) for the first
// entry of a read that does not start at the top. Dense ranks are refused.
#include "redis/redis_leaderboard.h"

#include "redis/redis_leaderboard_board.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "contract/leaderboard_arguments.h"
#include "contract/leaderboard_cursor.h"
#include "contract/rank_key.h"
#include "redis/cluster_client.h"
#include "redis/key_slot.h"
#include "redis/leaderboard_codec.h"
#include "redis/leaderboard_scripts.h"
#include "redis/reply.h"

namespace feedcore::redis {
namespace {

using internal::RankKey;
using internal::RanksAbove;

// Rank and Around read the member's score, then count around it. When the
// score changes in between they start again, this many times in all, and
// then answer for the score they read last.
constexpr int kLocateAttempts = 4;

// The first fetch from each partition of a merge: enough that a balanced
// board rarely needs a second round trip, without reading `want` entries
// from each of many partitions.
size_t InitialChunk(size_t want, size_t partitions) {
  if (partitions == 1) return want;
  const size_t share = (3 * want + 2 * partitions - 1) / (2 * partitions);
  return std::min(want, share + 4);
}

}  // namespace

RedisLeaderboard::RedisLeaderboard(std::unique_ptr<ClusterClient> client,
                                   const LeaderboardOptions& options,
                                   LeaderboardKeys keys,
                                   LeaderboardScripts scripts)
    : client_(std::move(client)),
      options_(options),
      keys_(std::move(keys)),
      board_id_(XXH3_64bits(keys_.meta.data(), keys_.meta.size())),
      scripts_(std::move(scripts)) {}

absl::Status RedisLeaderboard::Set(MemberId member, int64_t score) {
  if (!ScoreInRange(score)) {
    return absl::OutOfRangeError(absl::StrCat(
        "Set(member ", member, ", score ", score,
        "): a Redis Cluster leaderboard keeps scores within +-2^53 (",
        kMaxExactScore,
        "), which Redis stores exactly; the board is "
        "unchanged"));
  }
  const std::string& key = KeyOf(member);
  if (sequenced()) {
    // The write script, which keeps the member's sequence when the score
    // stays: a retry of a Set that was applied changes nothing.
    absl::StatusOr<uint64_t> seq = TakeSequences(1);
    if (!seq.ok()) return seq.status();
    absl::StatusOr<Reply> reply = client_->RunOne(
        WriteCommand(ScoreWrite{.member = member, .value = score}, *seq,
                     /*idempotent=*/true));
    if (!reply.ok()) return reply.status();
    absl::StatusOr<ScriptWrite> parsed =
        ParseWriteReply(*reply, member, NodeOf(key));
    if (!parsed.ok()) return parsed.status();
    if (parsed->status != ScriptWrite::Status::kApplied) {
      return Unexpected("the leaderboard write script",
                        "a Set within range was not applied");
    }
    return absl::OkStatus();
  }
  absl::StatusOr<Reply> reply = client_->RunOne(
      Command{{"ZADD", key, absl::StrCat(-RankScoreOf(score, order())),
               MemberBytes(member)},
              KeySlot(key)});
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return ErrorReply("ZADD", *reply, NodeOf(key));
  if (reply->type != Reply::Type::kInteger) {
    return Unexpected("ZADD", "not an integer");
  }
  return absl::OkStatus();
}

Command RedisLeaderboard::IncrementCommand(MemberId member, int64_t delta,
                                           uint64_t seq) const {
  // Arithmetic shift: hi is the floor of delta / 2^32, whatever the sign.
  const int64_t hi = delta >> 32;
  const uint64_t lo = static_cast<uint64_t>(delta) & 0xffffffffu;
  std::vector<std::string> args = {MemberBytes(member), absl::StrCat(hi),
                                   absl::StrCat(lo),
                                   StoredScoreFactor(order())};
  if (sequenced()) args.push_back(SequenceBytes(seq));
  return ClusterClient::ScriptCommand(
      scripts_.increment, ScriptKeys(PartitionOf(member), /*metadata=*/false),
      std::move(args), /*idempotent=*/false);
}

absl::StatusOr<int64_t> RedisLeaderboard::IncrementResult(
    MemberId member, int64_t delta, const Reply& reply) const {
  constexpr absl::string_view kWhat = "the leaderboard increment script";
  if (reply.is_error()) return ErrorReply(kWhat, reply, NodeOf(KeyOf(member)));
  if (reply.type != Reply::Type::kArray || reply.elements.size() != 2 ||
      reply.elements[0].type != Reply::Type::kString ||
      reply.elements[1].type != Reply::Type::kString) {
    return Unexpected(kWhat, "not {status, score}");
  }
  const std::string& status = reply.elements[0].str;
  const std::string& value = reply.elements[1].str;
  if (status == "bad") {
    return Unexpected(kWhat, absl::StrCat("member ", member, " has score '",
                                          absl::CHexEscape(value),
                                          "', which this board never writes"));
  }
  int64_t number = 0;
  if (!absl::SimpleAtoi(value, &number)) {
    return Unexpected(kWhat, absl::StrCat("score '", absl::CHexEscape(value),
                                          "' is not an integer"));
  }
  if (status == "range") {
    return absl::OutOfRangeError(absl::StrCat(
        "Increment(member ", member, ", delta ", delta,
        ") would take the score outside +-2^53 (", kMaxExactScore,
        "): ", number, " + ", delta,
        "; a Redis Cluster leaderboard keeps scores within that range, "
        "which Redis stores exactly; the score is unchanged"));
  }
  if (status != "ok") {
    return Unexpected(kWhat,
                      absl::StrCat("status '", absl::CHexEscape(status), "'"));
  }
  return number;
}

absl::StatusOr<int64_t> RedisLeaderboard::Increment(MemberId member,
                                                    int64_t delta) {
  uint64_t seq = 0;
  if (sequenced()) {
    absl::StatusOr<uint64_t> taken = TakeSequences(1);
    if (!taken.ok()) return taken.status();
    seq = *taken;
  }
  absl::StatusOr<Reply> reply =
      client_->RunOne(IncrementCommand(member, delta, seq));
  if (!reply.ok()) return reply.status();
  return IncrementResult(member, delta, *reply);
}

std::vector<absl::StatusOr<int64_t>> RedisLeaderboard::IncrementMany(
    absl::Span<const ScoreIncrement> increments) {
  // Numbered in the order given, in one round trip: elements that reach
  // equal scores rank in the order of their elements.
  uint64_t first_seq = 0;
  if (sequenced() && !increments.empty()) {
    absl::StatusOr<uint64_t> taken = TakeSequences(increments.size());
    if (!taken.ok()) {
      return std::vector<absl::StatusOr<int64_t>>(increments.size(),
                                                  taken.status());
    }
    first_seq = *taken;
  }
  std::vector<Command> commands;
  commands.reserve(increments.size());
  for (size_t i = 0; i < increments.size(); ++i) {
    const ScoreIncrement& increment = increments[i];
    commands.push_back(
        IncrementCommand(increment.member, increment.delta, first_seq + i));
    // A member's elements must apply in the order given (its results are
    // running sums, and whether one overflows depends on those before it).
    commands.back().order = increment.member;
  }
  std::vector<absl::StatusOr<Reply>> replies =
      client_->RunEach(std::move(commands));
  std::vector<absl::StatusOr<int64_t>> results;
  results.reserve(increments.size());
  for (size_t i = 0; i < increments.size(); ++i) {
    if (!replies[i].ok()) {
      results.push_back(replies[i].status());
    } else {
      results.push_back(IncrementResult(increments[i].member,
                                        increments[i].delta, *replies[i]));
    }
  }
  return results;
}

absl::Status RedisLeaderboard::Remove(MemberId member) {
  const size_t p = PartitionOf(member);
  constexpr absl::string_view kWhat = "the leaderboard remove script";
  absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
      scripts_.remove, ScriptKeys(p, /*metadata=*/true),
      {MemberBytes(member)}));
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) {
    return ErrorReply(kWhat, *reply, NodeOf(keys_.partitions[p]));
  }
  if (reply->type != Reply::Type::kInteger) {
    return Unexpected(kWhat, "not an integer");
  }
  if (reply->integer == 0) return MemberNotFound(member);
  return absl::OkStatus();
}

absl::Status RedisLeaderboard::Clear() {
  std::vector<Command> commands;
  commands.reserve(keys_.partitions.size());
  for (size_t p = 0; p < keys_.partitions.size(); ++p) {
    const std::string& key = keys_.partitions[p];
    commands.push_back(Command{{"DEL", key, keys_.metadata[p]}, KeySlot(key)});
    if (sequenced()) commands.back().args.push_back(keys_.sequences[p]);
  }
  // DEL converges, so the client has already retried it; what fails still
  // may have cleared other partitions, and a second Clear finishes it.
  absl::StatusOr<std::vector<Reply>> replies =
      client_->Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  for (size_t p = 0; p < replies->size(); ++p) {
    const Reply& reply = (*replies)[p];
    if (reply.is_error()) {
      return ErrorReply("DEL", reply, NodeOf(keys_.partitions[p]));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> RedisLeaderboard::Score(MemberId member) const {
  absl::StatusOr<RankKey> key = KeyOfMember(member);
  if (!key.ok()) return key.status();
  return ScoreOfRankScore(key->score, order());
}

absl::StatusOr<std::optional<int64_t>> RedisLeaderboard::ScoreIfPresent(
    MemberId member) const {
  absl::StatusOr<int64_t> score = Score(member);
  if (absl::IsNotFound(score.status())) return std::optional<int64_t>();
  if (!score.ok()) return score.status();
  return std::optional<int64_t>(*score);
}

absl::StatusOr<RankKey> RedisLeaderboard::KeyOfMember(MemberId member) const {
  if (sequenced()) {
    const size_t p = PartitionOf(member);
    constexpr absl::string_view kWhat = "the leaderboard lookup script";
    Command command = ClusterClient::ScriptCommand(
        scripts_.lookup, ScriptKeys(p, /*metadata=*/false),
        {MemberBytes(member)});
    command.write = false;
    absl::StatusOr<Reply> reply = client_->RunOne(std::move(command));
    if (!reply.ok()) return reply.status();
    if (reply->is_error()) {
      return ErrorReply(kWhat, *reply, NodeOf(keys_.partitions[p]));
    }
    if (reply->type != Reply::Type::kArray || reply->elements.size() != 2) {
      return Unexpected(kWhat, "not {sequence, score}");
    }
    if (reply->elements[1].is_nil()) return MemberNotFound(member);
    absl::StatusOr<uint64_t> seq = ParseSequence(reply->elements[0], kWhat);
    if (!seq.ok()) return seq.status();
    if (reply->elements[1].type != Reply::Type::kString) {
      return Unexpected(kWhat, "a score that is not a string");
    }
    absl::StatusOr<int64_t> score =
        ParseStoredScore(reply->elements[1].str, kWhat);
    if (!score.ok()) return score.status();
    return RankKey{*score, *seq, member};
  }
  const std::string& key = KeyOf(member);
  absl::StatusOr<Reply> reply = client_->RunOne(
      Command{{"ZSCORE", key, MemberBytes(member)}, KeySlot(key)});
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return ErrorReply("ZSCORE", *reply, NodeOf(key));
  if (reply->is_nil()) return MemberNotFound(member);
  if (reply->type != Reply::Type::kString) {
    return Unexpected("ZSCORE", "not a string");
  }
  absl::StatusOr<int64_t> score = ParseStoredScore(reply->str, "ZSCORE");
  if (!score.ok()) return score.status();
  return RankKey{*score, 0, member};
}

Command RedisLeaderboard::ReadCommand(size_t partition, Mode mode,
                                      const RankKey& key, size_t above,
                                      size_t below) const {
  std::vector<std::string> args;
  args.reserve(5);
  switch (mode) {
    case Mode::kKey:
      args.push_back("key");
      args.push_back(absl::StrCat(-key.score));
      args.push_back(SetMemberBytes(key, tie_break()));
      break;
    case Mode::kFirst:
      args.insert(args.end(), {"first", "", ""});
      break;
    case Mode::kLast:
      args.insert(args.end(), {"last", "", ""});
      break;
    // No set member is empty or 17 bytes long: these compare below and
    // above every member of the score, of either tie-break.
    case Mode::kBeforeScore:
      args.insert(args.end(), {"key", absl::StrCat(-key.score), ""});
      break;
    case Mode::kAfterScore:
      args.insert(args.end(),
                  {"key", absl::StrCat(-key.score), std::string(17, '\xff')});
      break;
  }
  args.push_back(absl::StrCat(above));
  args.push_back(absl::StrCat(below));
  Command command = ClusterClient::ScriptCommand(
      scripts_.read, ScriptKeys(partition, /*metadata=*/false),
      std::move(args));
  command.write = false;  // it only reads: never waits for replicas
  return command;
}

absl::StatusOr<std::vector<Located>> RedisLeaderboard::ReadAll(
    Mode mode, const RankKey& key, size_t above, size_t below) const {
  std::vector<Command> commands;
  commands.reserve(options_.partitions);
  for (size_t p = 0; p < options_.partitions; ++p) {
    commands.push_back(ReadCommand(p, mode, key, above, below));
  }
  absl::StatusOr<std::vector<Reply>> replies =
      client_->Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  std::vector<Located> located;
  located.reserve(replies->size());
  for (size_t p = 0; p < replies->size(); ++p) {
    absl::StatusOr<Located> one =
        ParseLocated((*replies)[p], NodeOf(keys_.partitions[p]));
    if (!one.ok()) return one.status();
    located.push_back(std::move(*one));
  }
  return located;
}

RedisLeaderboard::Walk RedisLeaderboard::WalkOf(size_t p, Located& located,
                                                bool best_first, size_t asked,
                                                const RankBounds& bounds) {
  Walk walk;
  walk.partition = p;
  walk.chunk = asked;
  walk.bounds = bounds;
  if (best_first) {
    walk.buffer = std::move(located.below);
  } else {
    walk.buffer = std::move(located.above);
    std::reverse(walk.buffer.begin(), walk.buffer.end());
  }
  walk.more = asked > 0 && walk.buffer.size() == asked;
  // Walk order is rank-score order, so the first entry outside the bounds
  // ends the walk.
  const auto outside = std::find_if(
      walk.buffer.begin(), walk.buffer.end(),
      [&bounds](const RankKey& key) { return !bounds.Contains(key.score); });
  if (outside != walk.buffer.end()) {
    walk.buffer.erase(outside, walk.buffer.end());
    walk.more = false;
  }
  return walk;
}

absl::Status RedisLeaderboard::Merge(
    std::vector<Walk>& walks, bool best_first, size_t want,
    std::optional<MemberId> skip,
    const std::function<void(const RankKey&)>& emit) const {
  // A binary heap whose top is the walk with the next entry in walk order.
  const auto after = [best_first](const Walk* a, const Walk* b) {
    const RankKey& x = a->buffer[a->next];
    const RankKey& y = b->buffer[b->next];
    return best_first ? RanksAbove(y, x) : RanksAbove(x, y);
  };
  std::vector<Walk*> heap;
  heap.reserve(walks.size());
  for (Walk& walk : walks) {
    if (walk.next < walk.buffer.size()) heap.push_back(&walk);
  }
  std::make_heap(heap.begin(), heap.end(), after);
  size_t emitted = 0;
  while (emitted < want && !heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    Walk* walk = heap.back();
    heap.pop_back();
    const RankKey key = walk->buffer[walk->next++];
    if (!skip.has_value() || key.member != *skip) {
      emit(key);
      ++emitted;
    }
    if (walk->next == walk->buffer.size()) {
      if (!walk->more || emitted == want) continue;
      // The next entries of this partition, after `key` in walk order.
      const size_t chunk =
          std::min(std::max<size_t>(2 * walk->chunk, 1),
                   want - emitted + (skip.has_value() ? 1 : 0));
      const std::string& partition_key = keys_.partitions[walk->partition];
      absl::StatusOr<Reply> reply = client_->RunOne(
          ReadCommand(walk->partition, Mode::kKey, key, best_first ? 0 : chunk,
                      best_first ? chunk : 0));
      if (!reply.ok()) return reply.status();
      absl::StatusOr<Located> located =
          ParseLocated(*reply, NodeOf(partition_key));
      if (!located.ok()) return located.status();
      *walk =
          WalkOf(walk->partition, *located, best_first, chunk, walk->bounds);
      if (walk->buffer.empty()) continue;
    }
    heap.push_back(walk);
    std::push_heap(heap.begin(), heap.end(), after);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Located>> RedisLeaderboard::LocateMember(
    MemberId member, size_t above, size_t below, RankKey* key,
    uint64_t* rank) const {
  const size_t home = LeaderboardPartitionOf(member, options_.partitions);
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<RankKey> found = KeyOfMember(member);
    if (!found.ok()) return found.status();
    *key = *found;
    absl::StatusOr<std::vector<Located>> located =
        ReadAll(Mode::kKey, *key, above, below);
    if (!located.ok()) return located;
    const Located& at_home = (*located)[home];
    // Removed between the two round trips: it is not on the board now.
    if (!at_home.current.has_value()) return MemberNotFound(member);
    if (!at_home.present && attempt < kLocateAttempts) continue;
    *rank = 0;
    for (const Located& one : *located) *rank += one.pos;
    // Still moving: answer for the score read, as if the member were there.
    // The home count then includes the member itself if it moved above.
    if (!at_home.present && *at_home.current > key->score) --*rank;
    return located;
  }
}

absl::StatusOr<uint64_t> RedisLeaderboard::Rank(MemberId member) const {
  if (options_.rank_style == RankStyle::kCompetition) {
    absl::StatusOr<RankKey> key = KeyOfMember(member);
    if (!key.ok()) return key.status();
    return CountBetter(key->score);
  }
  RankKey key;
  uint64_t rank = 0;
  absl::StatusOr<std::vector<Located>> located =
      LocateMember(member, 0, 0, &key, &rank);
  if (!located.ok()) return located.status();
  return rank;
}

absl::StatusOr<std::vector<LeaderboardEntry>> RedisLeaderboard::TopK(
    size_t k) const {
  if (absl::Status s =
          internal::ValidateReadSize("TopK k", k, 1, options_.max_page_size);
      !s.ok()) {
    return s;
  }
  const size_t chunk = InitialChunk(k, options_.partitions);
  absl::StatusOr<std::vector<Located>> located =
      ReadAll(Mode::kFirst, RankKey{}, 0, chunk);
  if (!located.ok()) return located.status();
  std::vector<Walk> walks;
  walks.reserve(located->size());
  for (size_t p = 0; p < located->size(); ++p) {
    walks.push_back(
        WalkOf(p, (*located)[p], /*best_first=*/true, chunk, RankBounds{}));
  }
  std::vector<LeaderboardEntry> out;
  if (absl::Status s = Merge(walks, /*best_first=*/true, k, std::nullopt,
                             [this, &out](const RankKey& key) {
                               out.push_back(Entry(key, out.size()));
                             });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ApplyRankStyle(out); !s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<LeaderboardEntry>> RedisLeaderboard::Around(
    MemberId member, size_t before, size_t after) const {
  if (absl::Status s = internal::ValidateReadSize("Around before", before, 0,
                                                  options_.max_page_size);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = internal::ValidateReadSize("Around after", after, 0,
                                                  options_.max_page_size);
      !s.ok()) {
    return s;
  }
  const size_t above_chunk = InitialChunk(before, options_.partitions);
  const size_t below_chunk = InitialChunk(after, options_.partitions);
  RankKey key;
  uint64_t rank = 0;
  absl::StatusOr<std::vector<Located>> located =
      LocateMember(member, above_chunk, below_chunk, &key, &rank);
  if (!located.ok()) return located.status();
  std::vector<Walk> above;
  std::vector<Walk> below;
  above.reserve(located->size());
  below.reserve(located->size());
  for (size_t p = 0; p < located->size(); ++p) {
    above.push_back(WalkOf(p, (*located)[p], /*best_first=*/false, above_chunk,
                           RankBounds{}));
    below.push_back(WalkOf(p, (*located)[p], /*best_first=*/true, below_chunk,
                           RankBounds{}));
  }
  std::vector<LeaderboardEntry> out;
  out.reserve(before + 1 + after);
  // The member is skipped in case it moved while being located.
  if (absl::Status s = Merge(above, /*best_first=*/false, before, member,
                             [this, &out, rank](const RankKey& at) {
                               out.push_back(Entry(at, rank - 1 - out.size()));
                             });
      !s.ok()) {
    return s;
  }
  std::reverse(out.begin(), out.end());
  out.push_back(Entry(key, rank));
  uint64_t next_rank = rank + 1;
  if (absl::Status s = Merge(below, /*best_first=*/true, after, member,
                             [this, &out, &next_rank](const RankKey& at) {
                               out.push_back(Entry(at, next_rank++));
                             });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ApplyRankStyle(out); !s.ok()) return s;
  return out;
}

absl::StatusOr<LeaderboardPage> RedisLeaderboard::ReadPage(
    const LeaderboardReadOptions& options) const {
  absl::StatusOr<std::optional<RankKey>> start =
      internal::ValidateReadPage(options, board_id_, options_.max_page_size);
  if (!start.ok()) return start.status();
  const std::optional<RankKey> cursor_key = *start;
  // Sequences start at 1 on a board ordered by update, and are 0 otherwise.
  if (cursor_key.has_value() && (!ScoreInRange(cursor_key->score) ||
                                 (cursor_key->seq != 0) != sequenced())) {
    return internal::ForeignLeaderboardCursor(
        "it names a position this board never returns");
  }
  if (options.with_metadata) {
    if (absl::Status s =
            ValidateMetadata("LeaderboardReadOptions.with_metadata", 0);
        !s.ok()) {
      return s;
    }
  }
  if (options.offset > 0) {
    return absl::UnimplementedError(absl::StrCat(
        "LeaderboardReadOptions.offset is ", options.offset,
        ": the Redis Cluster backend reads pages only from the start or a "
        "cursor; finding the entry at an offset across partitions would "
        "take a bisection of dozens of round trips to every node "
        "(docs/scale-out.md)"));
  }
  const bool best_first = options.order == LeaderboardOrder::kBestFirst;
  const std::optional<RankBounds> bounds = RankBoundsOf(options.range, order());
  if (!bounds.has_value()) return LeaderboardPage{};

  // Where the walk starts: after the cursor, or at the near end of the
  // range when the cursor lies before it (or there is none).
  Mode mode = best_first ? Mode::kFirst : Mode::kLast;
  RankKey from;
  if (best_first) {
    if (cursor_key.has_value() && cursor_key->score <= bounds->high) {
      mode = Mode::kKey;
      from = *cursor_key;
    } else if (bounds->high < kMaxExactScore) {
      mode = Mode::kBeforeScore;
      from.score = bounds->high;
    }
  } else {
    if (cursor_key.has_value() && cursor_key->score >= bounds->low) {
      mode = Mode::kKey;
      from = *cursor_key;
    } else if (bounds->low > -kMaxExactScore) {
      mode = Mode::kAfterScore;
      from.score = bounds->low;
    }
  }

  // One entry past the page tells whether another page follows.
  const size_t want = options.limit + 1;
  const size_t chunk = InitialChunk(want, options_.partitions);
  absl::StatusOr<std::vector<Located>> located =
      ReadAll(mode, from, best_first ? 0 : chunk, best_first ? chunk : 0);
  if (!located.ok()) return located.status();
  // Best-first: the rank of the next entry, the number of entries at or
  // above the start. Worst-first: one more than that rank, the number of
  // entries above the start.
  uint64_t rank = 0;
  std::vector<Walk> walks;
  walks.reserve(located->size());
  for (size_t p = 0; p < located->size(); ++p) {
    Located& one = (*located)[p];
    rank += one.pos + (best_first && one.present ? 1 : 0);
    walks.push_back(WalkOf(p, one, best_first, chunk, *bounds));
  }
  LeaderboardPage page;
  page.entries.reserve(want);
  std::vector<RankKey> keys;  // of the entries, for the cursor
  keys.reserve(want);
  if (absl::Status s = Merge(walks, best_first, want, std::nullopt,
                             [&](const RankKey& key) {
                               keys.push_back(key);
                               page.entries.push_back(
                                   Entry(key, best_first ? rank++ : --rank));
                             });
      !s.ok()) {
    return s;
  }
  if (page.entries.size() == want) {
    page.entries.pop_back();
    if (options.with_next_cursor) {
      page.next_cursor =
          internal::EncodeLeaderboardCursor(internal::LeaderboardCursor{
              board_id_, options.order, keys[want - 2]});
    }
  }
  if (!best_first) std::reverse(page.entries.begin(), page.entries.end());
  absl::Status styled = ApplyRankStyle(page.entries);
  if (!best_first) std::reverse(page.entries.begin(), page.entries.end());
  if (!styled.ok()) return styled;
  if (options.with_metadata) {
    if (absl::Status s = FillMetadata(page.entries); !s.ok()) return s;
  }
  return page;
}

absl::StatusOr<size_t> RedisLeaderboard::Size() const {
  std::vector<Command> commands;
  commands.reserve(keys_.partitions.size());
  for (const std::string& key : keys_.partitions) {
    commands.push_back(Command{{"ZCARD", key}, KeySlot(key)});
  }
  absl::StatusOr<std::vector<Reply>> replies =
      client_->Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  size_t size = 0;
  for (size_t p = 0; p < replies->size(); ++p) {
    const Reply& reply = (*replies)[p];
    if (reply.is_error()) {
      return ErrorReply("ZCARD", reply, NodeOf(keys_.partitions[p]));
    }
    if (reply.type != Reply::Type::kInteger || reply.integer < 0) {
      return Unexpected("ZCARD", "not a count");
    }
    size += static_cast<size_t>(reply.integer);
  }
  return size;
}

}  // namespace feedcore::redis
