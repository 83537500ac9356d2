// The Redis Cluster leaderboard's reads by score and among given members:
// CountInRange, Percentile, TopKAmong, RankAmong, AroundAmong, and the
// competition ranks and metadata of the other reads.
//
// Each is a fixed number of pipelined rounds, one command per partition
// (or per partition holding a member asked about), whatever the board's
// size: ZCOUNT and ZCARD count scores in a partition in O(log n), ZMSCORE
// reads many members' scores at once, HMGET many members' metadata. Every
// stored score is an integer within +-2^53, so a range of board scores
// becomes an inclusive range of integers there, exact as a double: no
// exclusive bounds or infinities are sent.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "contract/leaderboard_arguments.h"
#include "redis/leaderboard_codec.h"
#include "redis/redis_leaderboard_board.h"

namespace feedcore::redis {
namespace {

using internal::RankKey;
using internal::RanksAbove;

// Sums the counts (ZCOUNT or ZCARD) of replies from, from + step, ...: one
// per partition, in partition order; `node_of` names a partition's node.
absl::StatusOr<uint64_t> SumCounts(
    const std::vector<Reply>& replies, size_t from, size_t step,
    absl::string_view what,
    absl::FunctionRef<std::string(size_t partition)> node_of) {
  uint64_t sum = 0;
  for (size_t i = from; i < replies.size(); i += step) {
    const Reply& reply = replies[i];
    if (reply.is_error()) return ErrorReply(what, reply, node_of(i / step));
    if (reply.type != Reply::Type::kInteger || reply.integer < 0) {
      return Unexpected(what, "not a count");
    }
    sum += static_cast<uint64_t>(reply.integer);
  }
  return sum;
}

}  // namespace

std::optional<RankBounds> RankBoundsOf(const ScoreRange& range,
                                       ScoreOrder order) {
  int64_t low = range.min;
  int64_t high = range.max;
  if (range.min_exclusive) {
    if (low == std::numeric_limits<int64_t>::max()) return std::nullopt;
    ++low;
  }
  if (range.max_exclusive) {
    if (high == std::numeric_limits<int64_t>::min()) return std::nullopt;
    --high;
  }
  low = std::max(low, -kMaxExactScore);
  high = std::min(high, kMaxExactScore);
  if (low > high) return std::nullopt;
  if (order == ScoreOrder::kHigherFirst) return RankBounds{low, high};
  return RankBounds{-high, -low};
}

absl::StatusOr<uint64_t> RedisLeaderboard::CountBetter(
    int64_t rank_score) const {
  // A better score is a higher rank score, a lower stored one.
  const std::string below = absl::StrCat("(", -rank_score);
  std::vector<Command> commands;
  commands.reserve(keys_.partitions.size());
  for (const std::string& key : keys_.partitions) {
    commands.push_back(Command{{"ZCOUNT", key, "-inf", below}, KeySlot(key)});
  }
  absl::StatusOr<std::vector<Reply>> replies =
      client_->Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  return SumCounts(*replies, 0, 1, "ZCOUNT",
                   [this](size_t p) { return NodeOf(keys_.partitions[p]); });
}

absl::Status RedisLeaderboard::ApplyRankStyle(
    std::vector<LeaderboardEntry>& entries) const {
  if (options_.rank_style != RankStyle::kCompetition || entries.empty()) {
    return absl::OkStatus();
  }
  // The first entry of each score after the first has as many entries
  // above it as better scores: its unique rank is its competition rank.
  // Only the first score's rank must be counted, unless it leads.
  if (entries.front().rank > 0) {
    absl::StatusOr<uint64_t> better =
        CountBetter(RankScoreOf(entries.front().score, order()));
    if (!better.ok()) return better.status();
    // Never above the unique rank: the board may have moved meanwhile.
    entries.front().rank = std::min(entries.front().rank, *better);
  }
  for (size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].score == entries[i - 1].score) {
      entries[i].rank = entries[i - 1].rank;
    }
  }
  return absl::OkStatus();
}

absl::Status RedisLeaderboard::FillMetadata(
    std::vector<LeaderboardEntry>& entries) const {
  // Entries of each partition, in the order their HMGET names them.
  std::vector<std::vector<size_t>> of_partition(options_.partitions);
  for (size_t i = 0; i < entries.size(); ++i) {
    of_partition[PartitionOf(entries[i].member)].push_back(i);
  }
  std::vector<Command> commands;
  std::vector<size_t> partitions;
  for (size_t p = 0; p < of_partition.size(); ++p) {
    if (of_partition[p].empty()) continue;
    Command command{{"HMGET", keys_.metadata[p]}, KeySlot(keys_.metadata[p])};
    for (size_t i : of_partition[p]) {
      command.args.push_back(MemberBytes(entries[i].member));
    }
    commands.push_back(std::move(command));
    partitions.push_back(p);
  }
  if (commands.empty()) return absl::OkStatus();
  absl::StatusOr<std::vector<Reply>> replies =
      client_->Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  for (size_t j = 0; j < partitions.size(); ++j) {
    const Reply& reply = (*replies)[j];
    const std::vector<size_t>& members = of_partition[partitions[j]];
    if (reply.is_error()) {
      return ErrorReply("HMGET", reply, NodeOf(keys_.metadata[partitions[j]]));
    }
    if (reply.type != Reply::Type::kArray ||
        reply.elements.size() != members.size()) {
      return Unexpected("HMGET", "not one value per member");
    }
    for (size_t k = 0; k < members.size(); ++k) {
      absl::StatusOr<std::string> value =
          ParseMetadataValue(reply.elements[k], "HMGET");
      if (!value.ok()) return value.status();
      entries[members[k]].metadata = std::move(*value);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> RedisLeaderboard::CountInRange(
    const ScoreRange& range) const {
  const std::optional<RankBounds> bounds = RankBoundsOf(range, order());
  if (!bounds.has_value()) return 0;
  const std::string min = absl::StrCat(-bounds->high);
  const std::string max = absl::StrCat(-bounds->low);
  std::vector<Command> commands;
  commands.reserve(keys_.partitions.size());
  for (const std::string& key : keys_.partitions) {
    commands.push_back(Command{{"ZCOUNT", key, min, max}, KeySlot(key)});
  }
  absl::StatusOr<std::vector<Reply>> replies =
      client_->Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  return SumCounts(*replies, 0, 1, "ZCOUNT",
                   [this](size_t p) { return NodeOf(keys_.partitions[p]); });
}

absl::StatusOr<double> RedisLeaderboard::Percentile(MemberId member) const {
  absl::StatusOr<RankKey> key_of = KeyOfMember(member);
  if (!key_of.ok()) return key_of.status();
  const int64_t rank_score = key_of->score;
  // Per partition, in one round: the members at or above the member
  // (kCompetition: every member of its score; kUnique: those ranked above
  // it, and itself) and the partition's size.
  const bool competition = options_.rank_style == RankStyle::kCompetition;
  const size_t home = PartitionOf(member);
  std::vector<Command> commands;
  commands.reserve(2 * keys_.partitions.size());
  for (size_t p = 0; p < keys_.partitions.size(); ++p) {
    const std::string& key = keys_.partitions[p];
    if (competition) {
      commands.push_back(Command{
          {"ZCOUNT", key, "-inf", absl::StrCat(-rank_score)}, KeySlot(key)});
    } else {
      commands.push_back(ReadCommand(p, Mode::kKey, *key_of, 0, 0));
    }
    commands.push_back(Command{{"ZCARD", key}, KeySlot(key)});
  }
  absl::StatusOr<std::vector<Reply>> replies =
      client_->Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  absl::StatusOr<uint64_t> size =
      SumCounts(*replies, 1, 2, "ZCARD",
                [this](size_t p) { return NodeOf(keys_.partitions[p]); });
  if (!size.ok()) return size.status();
  uint64_t at_or_above = 0;
  if (competition) {
    absl::StatusOr<uint64_t> counted =
        SumCounts(*replies, 0, 2, "ZCOUNT",
                  [this](size_t p) { return NodeOf(keys_.partitions[p]); });
    if (!counted.ok()) return counted.status();
    at_or_above = *counted;
  } else {
    for (size_t p = 0; p < keys_.partitions.size(); ++p) {
      absl::StatusOr<Located> located =
          ParseLocated((*replies)[2 * p], NodeOf(keys_.partitions[p]));
      if (!located.ok()) return located.status();
      at_or_above += located->pos;
      if (p == home && !located->current.has_value()) {
        return MemberNotFound(member);
      }
    }
    ++at_or_above;  // the member itself
  }
  // The member moved or others left between the rounds: clamp.
  if (*size == 0) return 0.0;
  const uint64_t below = *size > at_or_above ? *size - at_or_above : 0;
  return 100.0 * static_cast<double>(below) / static_cast<double>(*size);
}

absl::Status RedisLeaderboard::ValidateAmong(
    absl::string_view call, absl::Span<const MemberId> members) {
  if (members.size() > kMaxAmongMembers) {
    return absl::InvalidArgumentError(
        absl::StrCat(call, " members has ", members.size(),
                     " ids; it must have at most kMaxAmongMembers (",
                     kMaxAmongMembers, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<RankKey>> RedisLeaderboard::KeysAmong(
    absl::Span<const MemberId> members, std::optional<MemberId> also) const {
  std::vector<MemberId> distinct(members.begin(), members.end());
  if (also.has_value()) distinct.push_back(*also);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<std::vector<MemberId>> of_partition(options_.partitions);
  for (MemberId member : distinct) {
    of_partition[PartitionOf(member)].push_back(member);
  }
  // A board ordered by update looks its members' keys up with a script
  // (sequence hash, then score), answering {sequence, score} per member.
  const absl::string_view what =
      sequenced() ? "the leaderboard lookup script" : "ZMSCORE";
  const size_t per_member = sequenced() ? 2 : 1;
  std::vector<Command> commands;
  std::vector<size_t> partitions;
  for (size_t p = 0; p < of_partition.size(); ++p) {
    if (of_partition[p].empty()) continue;
    const std::string& key = keys_.partitions[p];
    std::vector<std::string> members;
    members.reserve(of_partition[p].size());
    for (MemberId member : of_partition[p]) {
      members.push_back(MemberBytes(member));
    }
    if (sequenced()) {
      commands.push_back(ClusterClient::ScriptCommand(
          scripts_.lookup, ScriptKeys(p, /*metadata=*/false),
          std::move(members)));
      commands.back().write = false;
    } else {
      Command command{{"ZMSCORE", key}, KeySlot(key)};
      command.args.insert(command.args.end(),
                          std::make_move_iterator(members.begin()),
                          std::make_move_iterator(members.end()));
      commands.push_back(std::move(command));
    }
    partitions.push_back(p);
  }
  std::vector<RankKey> keys;
  if (commands.empty()) return keys;
  absl::StatusOr<std::vector<Reply>> replies =
      client_->Run(std::move(commands));
  if (!replies.ok()) return replies.status();
  for (size_t j = 0; j < partitions.size(); ++j) {
    const Reply& reply = (*replies)[j];
    const std::vector<MemberId>& asked = of_partition[partitions[j]];
    if (reply.is_error()) {
      return ErrorReply(what, reply, NodeOf(keys_.partitions[partitions[j]]));
    }
    if (reply.type != Reply::Type::kArray ||
        reply.elements.size() != per_member * asked.size()) {
      return Unexpected(what, "not one score per member");
    }
    for (size_t k = 0; k < asked.size(); ++k) {
      const Reply& score = reply.elements[per_member * k + per_member - 1];
      if (score.is_nil()) continue;  // not on the board: skipped
      if (score.type != Reply::Type::kString) {
        return Unexpected(what, "a score that is not a string");
      }
      absl::StatusOr<int64_t> rank_score = ParseStoredScore(score.str, what);
      if (!rank_score.ok()) return rank_score.status();
      uint64_t seq = 0;
      if (sequenced()) {
        absl::StatusOr<uint64_t> parsed =
            ParseSequence(reply.elements[per_member * k], what);
        if (!parsed.ok()) return parsed.status();
        seq = *parsed;
      }
      keys.push_back(RankKey{*rank_score, seq, asked[k]});
    }
  }
  std::sort(keys.begin(), keys.end(), RanksAbove);
  return keys;
}

std::vector<LeaderboardEntry> RedisLeaderboard::EntriesAmong(
    const std::vector<RankKey>& sorted, size_t from, size_t to) const {
  std::vector<LeaderboardEntry> out;
  to = std::min(to, sorted.size());
  if (from >= to) return out;
  out.reserve(to - from);
  // The competition rank of `from`: the index of the first of its score.
  uint64_t tied_rank = from;
  if (options_.rank_style == RankStyle::kCompetition) {
    while (tied_rank > 0 && sorted[tied_rank - 1].score == sorted[from].score) {
      --tied_rank;
    }
  }
  for (size_t i = from; i < to; ++i) {
    if (i > from && sorted[i].score != sorted[i - 1].score) tied_rank = i;
    out.push_back(Entry(
        sorted[i], options_.rank_style == RankStyle::kUnique ? i : tied_rank));
  }
  return out;
}

absl::StatusOr<std::vector<LeaderboardEntry>> RedisLeaderboard::TopKAmong(
    absl::Span<const MemberId> members, size_t k) const {
  if (absl::Status s = internal::ValidateReadSize("TopKAmong k", k, 1,
                                                  options_.max_page_size);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateAmong("TopKAmong", members); !s.ok()) return s;
  absl::StatusOr<std::vector<RankKey>> sorted =
      KeysAmong(members, std::nullopt);
  if (!sorted.ok()) return sorted.status();
  return EntriesAmong(*sorted, 0, k);
}

absl::StatusOr<uint64_t> RedisLeaderboard::RankAmong(
    MemberId member, absl::Span<const MemberId> members) const {
  if (absl::Status s = ValidateAmong("RankAmong", members); !s.ok()) return s;
  absl::StatusOr<std::vector<RankKey>> sorted = KeysAmong(members, member);
  if (!sorted.ok()) return sorted.status();
  for (size_t i = 0; i < sorted->size(); ++i) {
    if ((*sorted)[i].member == member) {
      return EntriesAmong(*sorted, i, i + 1).front().rank;
    }
  }
  return MemberNotFound(member);
}

absl::StatusOr<std::vector<LeaderboardEntry>> RedisLeaderboard::AroundAmong(
    MemberId member, absl::Span<const MemberId> members, size_t before,
    size_t after) const {
  if (absl::Status s = internal::ValidateReadSize("AroundAmong before", before,
                                                  0, options_.max_page_size);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = internal::ValidateReadSize("AroundAmong after", after, 0,
                                                  options_.max_page_size);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateAmong("AroundAmong", members); !s.ok()) return s;
  absl::StatusOr<std::vector<RankKey>> sorted = KeysAmong(members, member);
  if (!sorted.ok()) return sorted.status();
  for (size_t i = 0; i < sorted->size(); ++i) {
    if ((*sorted)[i].member == member) {
      return EntriesAmong(*sorted, i - std::min(i, before), i + 1 + after);
    }
  }
  return MemberNotFound(member);
}

}  // namespace feedcore::redis
