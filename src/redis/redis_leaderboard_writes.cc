// Conditional writes and metadata of the Redis Cluster leaderboard.
//
// Write runs kLeaderboardWriteScript on the member's node: the condition is
// checked, the score written and the metadata with it, in one atomic step,
// with Increment's exact arithmetic in 32-bit halves. The metadata of
// partition p lives in a hash with partition p's hash tag, so the script
// writes both keys of one slot. WriteMany sends one script per element in
// one RunEach, as IncrementMany does: pipelined per node, a member's
// elements in the order given.
//
// Update sequences (TieBreak::kEarlierUpdateFirst). Every write call first
// takes its numbers from the board's counter: one INCRBY for the call, a
// number per element, in the order given. The script gives the number to
// the member only when the write changes its score (or adds it), and never
// a number below the member's own. A Set is sent again after an unclear
// failure with the same number: if it was applied, the member already has
// its score and the second run changes nothing, its place included.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "redis/leaderboard_codec.h"
#include "redis/redis_leaderboard_board.h"

namespace feedcore::redis {
namespace {

const char* ConditionName(WriteCondition condition) {
  switch (condition) {
    case WriteCondition::kAlways:
      return "always";
    case WriteCondition::kIfAbsent:
      return "absent";
    case WriteCondition::kIfPresent:
      return "present";
    case WriteCondition::kIfBetter:
      return "better";
    case WriteCondition::kIfWorse:
      return "worse";
    case WriteCondition::kIfPresentAndBetter:
      return "present_better";
    case WriteCondition::kIfPresentAndWorse:
      return "present_worse";
  }
  return nullptr;
}

}  // namespace

absl::Status RedisLeaderboard::ValidateMetadata(absl::string_view what,
                                                size_t size) const {
  if (options_.max_metadata_bytes == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what,
                     ": the board keeps no metadata "
                     "(LeaderboardOptions.max_metadata_bytes is 0)"));
  }
  if (size > options_.max_metadata_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is ", size, " bytes; LeaderboardOptions.max_metadata_bytes is ",
        options_.max_metadata_bytes));
  }
  return absl::OkStatus();
}

absl::Status RedisLeaderboard::ValidateWrite(const ScoreWrite& write) const {
  if (write.op != WriteOp::kSet && write.op != WriteOp::kIncrement) {
    return absl::InvalidArgumentError(
        absl::StrCat("ScoreWrite.op is ", static_cast<int>(write.op),
                     "; it must be WriteOp::kSet or WriteOp::kIncrement"));
  }
  if (ConditionName(write.condition) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ScoreWrite.condition is ", static_cast<int>(write.condition),
        "; it must be a WriteCondition, kAlways..kIfPresentAndWorse"));
  }
  if (write.metadata.has_value()) {
    if (absl::Status s =
            ValidateMetadata("ScoreWrite.metadata", write.metadata->size());
        !s.ok()) {
      return s;
    }
  }
  if (write.op == WriteOp::kSet && !ScoreInRange(write.value)) {
    return absl::OutOfRangeError(absl::StrCat(
        "Write(member ", write.member, ", set ", write.value,
        "): a Redis Cluster leaderboard keeps scores within +-2^53 (",
        kMaxExactScore,
        "), which Redis stores exactly; the board is "
        "unchanged"));
  }
  return absl::OkStatus();
}

std::vector<std::string> RedisLeaderboard::ScriptKeys(size_t p,
                                                      bool metadata) const {
  std::vector<std::string> keys = {keys_.partitions[p]};
  if (metadata) keys.push_back(keys_.metadata[p]);
  if (sequenced()) keys.push_back(keys_.sequences[p]);
  return keys;
}

absl::StatusOr<uint64_t> RedisLeaderboard::TakeSequences(size_t count) const {
  const uint16_t slot = KeySlot(keys_.counter);
  // Idempotent for the client's retries: a number taken twice is a gap.
  absl::StatusOr<Reply> reply = client_->RunOne(
      Command{{"INCRBY", keys_.counter, absl::StrCat(count)}, slot});
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) {
    return ErrorReply("INCRBY", *reply, client_->NodeOf(slot));
  }
  if (reply->type != Reply::Type::kInteger ||
      reply->integer < static_cast<int64_t>(count)) {
    return Unexpected("INCRBY", "not the board's update counter");
  }
  return static_cast<uint64_t>(reply->integer) - count + 1;
}

Command RedisLeaderboard::WriteCommand(const ScoreWrite& write, uint64_t seq,
                                       bool idempotent) const {
  const size_t p = PartitionOf(write.member);
  // Arithmetic shift: hi is the floor of value / 2^32, whatever the sign.
  const int64_t hi = write.value >> 32;
  const uint64_t lo = static_cast<uint64_t>(write.value) & 0xffffffffu;
  const char* metadata_action = !write.metadata.has_value() ? "keep"
                                : write.metadata->empty()   ? "del"
                                                            : "set";
  std::vector<std::string> args = {MemberBytes(write.member),
                                   StoredScoreFactor(order()),
                                   write.op == WriteOp::kSet ? "set" : "incr",
                                   absl::StrCat(hi),
                                   absl::StrCat(lo),
                                   ConditionName(write.condition),
                                   metadata_action,
                                   write.metadata.value_or("")};
  if (sequenced()) args.push_back(SequenceBytes(seq));
  // Not idempotent in general: a second run would report a different
  // outcome, and an increment would apply twice.
  return ClusterClient::ScriptCommand(scripts_.write,
                                      ScriptKeys(p, /*metadata=*/true),
                                      std::move(args), idempotent);
}

absl::StatusOr<WriteResult> RedisLeaderboard::WriteResultOf(
    const ScoreWrite& write, const Reply& reply) const {
  absl::StatusOr<ScriptWrite> parsed =
      ParseWriteReply(reply, write.member, NodeOf(KeyOf(write.member)));
  if (!parsed.ok()) return parsed.status();
  if (parsed->status == ScriptWrite::Status::kOutOfRange) {
    return absl::OutOfRangeError(absl::StrCat(
        "Write(member ", write.member, ", increment ", write.value,
        ") would take the score outside +-2^53 (", kMaxExactScore,
        "): ", *parsed->score, " + ", write.value,
        "; a Redis Cluster leaderboard keeps scores within that range, "
        "which Redis stores exactly; the board is unchanged"));
  }
  return WriteResult{parsed->outcome, parsed->score};
}

absl::StatusOr<WriteResult> RedisLeaderboard::Write(const ScoreWrite& write) {
  if (absl::Status s = ValidateWrite(write); !s.ok()) return s;
  uint64_t seq = 0;
  if (sequenced()) {
    absl::StatusOr<uint64_t> taken = TakeSequences(1);
    if (!taken.ok()) return taken.status();
    seq = *taken;
  }
  absl::StatusOr<Reply> reply = client_->RunOne(WriteCommand(write, seq));
  if (!reply.ok()) return reply.status();
  return WriteResultOf(write, *reply);
}

std::vector<absl::StatusOr<WriteResult>> RedisLeaderboard::WriteMany(
    absl::Span<const ScoreWrite> writes) {
  std::vector<absl::StatusOr<WriteResult>> results(
      writes.size(), absl::StatusOr<WriteResult>(WriteResult{}));
  // Bad elements fail before any number is taken or anything sent.
  std::vector<size_t> sent;  // the element of each command
  sent.reserve(writes.size());
  for (size_t i = 0; i < writes.size(); ++i) {
    if (absl::Status s = ValidateWrite(writes[i]); !s.ok()) {
      results[i] = s;
    } else {
      sent.push_back(i);
    }
  }
  // Element i's number is first_seq + i: the order given.
  uint64_t first_seq = 0;
  if (sequenced() && !sent.empty()) {
    absl::StatusOr<uint64_t> taken = TakeSequences(writes.size());
    if (!taken.ok()) {
      for (size_t i : sent) results[i] = taken.status();
      return results;
    }
    first_seq = *taken;
  }
  std::vector<Command> commands;
  commands.reserve(sent.size());
  for (size_t i : sent) {
    commands.push_back(WriteCommand(writes[i], first_seq + i));
    // A member's elements apply in the order given: each one's condition
    // and result depend on those before it.
    commands.back().order = writes[i].member;
  }
  std::vector<absl::StatusOr<Reply>> replies =
      client_->RunEach(std::move(commands));
  for (size_t j = 0; j < sent.size(); ++j) {
    const size_t i = sent[j];
    if (!replies[j].ok()) {
      results[i] = replies[j].status();
    } else {
      results[i] = WriteResultOf(writes[i], *replies[j]);
    }
  }
  return results;
}

absl::Status RedisLeaderboard::SetMetadata(MemberId member,
                                           absl::string_view metadata) {
  if (absl::Status s =
          ValidateMetadata("SetMetadata metadata", metadata.size());
      !s.ok()) {
    return s;
  }
  const size_t p = PartitionOf(member);
  constexpr absl::string_view kWhat = "the leaderboard metadata script";
  absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
      scripts_.metadata, ScriptKeys(p, /*metadata=*/true),
      {MemberBytes(member), metadata.empty() ? "del" : "set",
       std::string(metadata)}));
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) {
    return ErrorReply(kWhat, *reply, NodeOf(keys_.partitions[p]));
  }
  if (reply->type != Reply::Type::kArray || reply->elements.empty() ||
      reply->elements[0].type != Reply::Type::kInteger) {
    return Unexpected(kWhat, "not {present}");
  }
  if (reply->elements[0].integer == 0) return MemberNotFound(member);
  return absl::OkStatus();
}

absl::StatusOr<std::string> RedisLeaderboard::Metadata(MemberId member) const {
  if (options_.max_metadata_bytes == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Metadata(member ", member,
                     "): the board keeps no metadata "
                     "(LeaderboardOptions.max_metadata_bytes is 0)"));
  }
  const size_t p = PartitionOf(member);
  constexpr absl::string_view kWhat = "the leaderboard metadata script";
  absl::StatusOr<Reply> reply = client_->RunOne(ClusterClient::ScriptCommand(
      scripts_.metadata, ScriptKeys(p, /*metadata=*/true),
      {MemberBytes(member), "get", ""}));
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) {
    return ErrorReply(kWhat, *reply, NodeOf(keys_.partitions[p]));
  }
  if (reply->type != Reply::Type::kArray || reply->elements.empty() ||
      reply->elements[0].type != Reply::Type::kInteger) {
    return Unexpected(kWhat, "not {present, metadata}");
  }
  if (reply->elements[0].integer == 0) return MemberNotFound(member);
  if (reply->elements.size() != 2) {
    return Unexpected(kWhat, "not {present, metadata}");
  }
  return ParseMetadataValue(reply->elements[1], kWhat);
}

}  // namespace feedcore::redis
