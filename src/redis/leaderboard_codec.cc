#include "redis/leaderboard_codec.h"

#include <cmath>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace feedcore::redis {
namespace {

using internal::RankKey;

absl::Status ParseEntries(const Reply& reply, absl::string_view what,
                          std::vector<RankKey>* out) {
  if (reply.type != Reply::Type::kArray || reply.elements.size() % 2 != 0) {
    return Unexpected(what, "entries are not (member, score) pairs");
  }
  out->reserve(reply.elements.size() / 2);
  for (size_t i = 0; i < reply.elements.size(); i += 2) {
    RankKey key;
    if (absl::Status s = ParseSetMember(reply.elements[i], what, &key);
        !s.ok()) {
      return s;
    }
    const Reply& score = reply.elements[i + 1];
    if (score.type != Reply::Type::kString) {
      return Unexpected(what, "a score that is not a string");
    }
    absl::StatusOr<int64_t> parsed = ParseStoredScore(score.str, what);
    if (!parsed.ok()) return parsed.status();
    key.score = *parsed;
    out->push_back(key);
  }
  return absl::OkStatus();
}

}  // namespace

std::string MemberBytes(MemberId member) {
  std::string bytes(8, '\0');
  for (int i = 7; i >= 0; --i) {
    bytes[i] = static_cast<char>(member & 0xff);
    member >>= 8;
  }
  return bytes;
}

std::string SequenceBytes(uint64_t seq) { return MemberBytes(seq); }

std::string SetMemberBytes(const RankKey& key, TieBreak tie_break) {
  if (tie_break == TieBreak::kLowerMemberFirst) return MemberBytes(key.member);
  return absl::StrCat(SequenceBytes(key.seq), MemberBytes(key.member));
}

bool ScoreInRange(int64_t score) {
  return score >= -kMaxExactScore && score <= kMaxExactScore;
}

absl::Status MemberNotFound(MemberId member) {
  return absl::NotFoundError(
      absl::StrCat("member ", member, " is not on the leaderboard"));
}

LeaderboardEntry EntryOf(const RankKey& key, uint64_t rank, ScoreOrder order) {
  return LeaderboardEntry{key.member, ScoreOfRankScore(key.score, order), rank};
}

absl::Status Unexpected(absl::string_view what, absl::string_view detail) {
  return absl::InternalError(absl::StrCat(
      "redis leaderboard: unexpected reply to ", what, ": ", detail));
}

absl::Status ErrorReply(absl::string_view what, const Reply& reply,
                        absl::string_view node) {
  const std::string message =
      absl::StrCat("redis node ", node, " refused ", what, ": ", reply.str);
  const absl::string_view code =
      absl::string_view(reply.str).substr(0, reply.str.find(' '));
  if (code == "OOM") return absl::ResourceExhaustedError(message);
  if (code == "BUSY" || code == "READONLY") {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

absl::StatusOr<int64_t> ParseStoredScore(absl::string_view text,
                                         absl::string_view what) {
  int64_t stored = 0;
  if (!absl::SimpleAtoi(text, &stored)) {
    double value = 0;
    if (!absl::SimpleAtod(text, &value) || std::isnan(value) ||
        value < -static_cast<double>(kMaxExactScore) ||
        value > static_cast<double>(kMaxExactScore) ||
        value != static_cast<double>(static_cast<int64_t>(value))) {
      return Unexpected(what, absl::StrCat("score '", absl::CHexEscape(text),
                                           "' is not an integer within "
                                           "+-2^53"));
    }
    stored = static_cast<int64_t>(value);
  }
  if (!ScoreInRange(stored)) {
    return Unexpected(what,
                      absl::StrCat("score ", stored, " is outside +-2^53"));
  }
  return -stored;
}

absl::StatusOr<uint64_t> ParseSequence(const Reply& reply,
                                       absl::string_view what) {
  if (reply.type != Reply::Type::kString || reply.str.size() != 8) {
    return Unexpected(what, "an update sequence that is not 8 bytes");
  }
  uint64_t seq = 0;
  for (unsigned char c : reply.str) seq = (seq << 8) | c;
  return seq;
}

absl::Status ParseSetMember(const Reply& reply, absl::string_view what,
                            RankKey* key) {
  if (reply.type != Reply::Type::kString ||
      (reply.str.size() != 8 && reply.str.size() != 16)) {
    return Unexpected(what, "a member that is neither 8 nor 16 bytes");
  }
  uint64_t words[2] = {0, 0};
  for (size_t i = 0; i < reply.str.size(); ++i) {
    words[i / 8] =
        (words[i / 8] << 8) | static_cast<unsigned char>(reply.str[i]);
  }
  key->seq = reply.str.size() == 16 ? words[0] : 0;
  key->member = reply.str.size() == 16 ? words[1] : words[0];
  return absl::OkStatus();
}

absl::StatusOr<Located> ParseLocated(const Reply& reply,
                                     absl::string_view node) {
  constexpr absl::string_view kWhat = "the leaderboard read script";
  if (reply.is_error()) return ErrorReply(kWhat, reply, node);
  if (reply.type != Reply::Type::kArray || reply.elements.size() != 5 ||
      reply.elements[0].type != Reply::Type::kInteger ||
      reply.elements[0].integer < 0 ||
      reply.elements[1].type != Reply::Type::kInteger ||
      (reply.elements[2].type != Reply::Type::kNil &&
       reply.elements[2].type != Reply::Type::kString)) {
    return Unexpected(kWhat, "not {pos, present, score, above, below}");
  }
  Located located;
  located.pos = static_cast<uint64_t>(reply.elements[0].integer);
  located.present = reply.elements[1].integer != 0;
  if (!reply.elements[2].is_nil()) {
    absl::StatusOr<int64_t> current =
        ParseStoredScore(reply.elements[2].str, kWhat);
    if (!current.ok()) return current.status();
    located.current = *current;
  }
  if (absl::Status s = ParseEntries(reply.elements[3], kWhat, &located.above);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ParseEntries(reply.elements[4], kWhat, &located.below);
      !s.ok()) {
    return s;
  }
  return located;
}

absl::StatusOr<ScriptWrite> ParseWriteReply(const Reply& reply, MemberId member,
                                            absl::string_view node) {
  constexpr absl::string_view kWhat = "the leaderboard write script";
  if (reply.is_error()) return ErrorReply(kWhat, reply, node);
  if (reply.type != Reply::Type::kArray || reply.elements.size() != 2 ||
      reply.elements[0].type != Reply::Type::kString ||
      (reply.elements[1].type != Reply::Type::kString &&
       reply.elements[1].type != Reply::Type::kNil)) {
    return Unexpected(kWhat, "not {outcome, score}");
  }
  const std::string& status = reply.elements[0].str;
  const Reply& value = reply.elements[1];
  if (status == "bad") {
    return Unexpected(kWhat, absl::StrCat("member ", member, " has score '",
                                          absl::CHexEscape(value.str),
                                          "', which this board never writes"));
  }
  ScriptWrite write;
  if (!value.is_nil()) {
    int64_t number = 0;
    if (!absl::SimpleAtoi(value.str, &number) || !ScoreInRange(number)) {
      return Unexpected(kWhat,
                        absl::StrCat("score '", absl::CHexEscape(value.str),
                                     "' is not an integer within "
                                     "+-2^53"));
    }
    write.score = number;
  }
  if (status == "range") {
    write.status = ScriptWrite::Status::kOutOfRange;
  } else if (status == "not") {
    write.status = ScriptWrite::Status::kNotApplied;
    write.outcome = WriteOutcome::kNotApplied;
  } else {
    write.status = ScriptWrite::Status::kApplied;
    if (status == "added") {
      write.outcome = WriteOutcome::kAdded;
    } else if (status == "changed") {
      write.outcome = WriteOutcome::kChanged;
    } else if (status == "unchanged") {
      write.outcome = WriteOutcome::kUnchanged;
    } else {
      return Unexpected(
          kWhat, absl::StrCat("outcome '", absl::CHexEscape(status), "'"));
    }
  }
  if (write.status != ScriptWrite::Status::kNotApplied &&
      !write.score.has_value()) {
    return Unexpected(kWhat, "no score");
  }
  return write;
}

absl::StatusOr<std::string> ParseMetadataValue(const Reply& reply,
                                               absl::string_view what) {
  if (reply.is_nil()) return std::string();
  if (reply.type != Reply::Type::kString) {
    return Unexpected(what, "metadata that is not a string");
  }
  return reply.str;
}

}  // namespace feedcore::redis
