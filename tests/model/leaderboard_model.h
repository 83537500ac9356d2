// The reference model of a Leaderboard: member -> (score, sequence of its
// last score change), sorted in full for every question. Plain containers
// and no cleverness, so that it is obviously right.
//
// Shared by the model-based test (tests/leaderboard/leaderboard_model_test.cc),
// the conformance model test (tests/conformance/
// leaderboard_conformance_model_test.cc) and the API-sequence fuzz target
// (fuzz/api_sequence_fuzzer.cc), so all of them hold every backend to the same
// reference. Uses RankKey and RanksAbove from src/ (the board's own order,
// which the unit tests of the ranked B+tree check), and no test framework.
//
// With TieBreak::kLowerMemberFirst every key's sequence is 0, so ties rank by
// member alone, as on the Redis Cluster backend.
//
// Keys hold rank scores, as the board's trees do (src/leaderboard/
// score_order.h): the score on a kHigherFirst board, ~score on a kLowerFirst
// one, so that RanksAbove sorts both orders and a model key is what a cursor
// carries. Score() and the Model* functions given the order turn them back.
#ifndef FEEDCORE_TESTS_LEADERBOARD_MODEL_H_
#define FEEDCORE_TESTS_LEADERBOARD_MODEL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "contract/score_order.h"
#include "feedcore/leaderboard.h"
#include "leaderboard/ranked_btree.h"

namespace feedcore::testing {

class LeaderboardModel {
 public:
  explicit LeaderboardModel(TieBreak tie_break)
      : LeaderboardModel(LeaderboardOptions{.tie_break = tie_break}) {}
  // Uses the options' tie_break, score_order and max_metadata_bytes.
  explicit LeaderboardModel(const LeaderboardOptions& options)
      : tie_break_(options.tie_break),
        order_(options.score_order),
        max_metadata_bytes_(options.max_metadata_bytes) {}

  ScoreOrder order() const { return order_; }

  void Set(MemberId member, int64_t score) {
    auto it = members_.find(member);
    if (it == members_.end()) {
      members_[member] = KeyOf(member, score);
    } else if (ScoreOf(it->second) != score) {
      it->second = KeyOf(member, score);
    }
  }

  // The new score, or nullopt when it overflows or leaves [low, high]
  // (nothing changes then). The bounds are the backend's score range.
  std::optional<int64_t> Increment(
      MemberId member, int64_t delta,
      int64_t low = std::numeric_limits<int64_t>::min(),
      int64_t high = std::numeric_limits<int64_t>::max()) {
    auto it = members_.find(member);
    const int64_t old = it == members_.end() ? 0 : ScoreOf(it->second);
    int64_t sum = 0;
    if (__builtin_add_overflow(old, delta, &sum) || sum < low || sum > high) {
      return std::nullopt;
    }
    if (it == members_.end()) {
      members_[member] = KeyOf(member, sum);
    } else if (delta != 0) {
      it->second = KeyOf(member, sum);
    }
    return sum;
  }

  // Leaderboard::Write, spelled out case by case. Errors carry the code
  // only.
  // Write on a board whose backend keeps scores in [low, high] (the
  // Redis backend: +-2^53): a kSet outside it, or an increment that leaves
  // it, is OutOfRange, decided as the overflow of an increment is.
  absl::StatusOr<WriteResult> Write(
      const ScoreWrite& write,
      int64_t low = std::numeric_limits<int64_t>::min(),
      int64_t high = std::numeric_limits<int64_t>::max()) {
    if (static_cast<uint8_t>(write.op) >
            static_cast<uint8_t>(WriteOp::kIncrement) ||
        static_cast<uint8_t>(write.condition) >
            static_cast<uint8_t>(WriteCondition::kIfPresentAndWorse)) {
      return absl::InvalidArgumentError("op or condition");
    }
    if (write.metadata && !MetadataFits(*write.metadata)) {
      return absl::InvalidArgumentError("metadata");
    }
    if (write.op == WriteOp::kSet &&
        (write.value < low || write.value > high)) {
      return absl::OutOfRangeError("score outside the backend's range");
    }
    const std::optional<int64_t> old = Score(write.member);
    const WriteResult not_applied{WriteOutcome::kNotApplied, old};
    const WriteCondition c = write.condition;
    const bool needs_present = c == WriteCondition::kIfPresent ||
                               c == WriteCondition::kIfPresentAndBetter ||
                               c == WriteCondition::kIfPresentAndWorse;
    if (old ? c == WriteCondition::kIfAbsent : needs_present) {
      return not_applied;
    }
    int64_t score = write.value;
    if (write.op == WriteOp::kIncrement &&
        (__builtin_add_overflow(old.value_or(0), write.value, &score) ||
         score < low || score > high)) {
      return absl::OutOfRangeError("overflow");
    }
    const bool better = old && internal::BetterScore(score, *old, order_);
    const bool worse = old && internal::BetterScore(*old, score, order_);
    if (old &&
        (c == WriteCondition::kIfBetter ||
         c == WriteCondition::kIfPresentAndBetter) &&
        !better) {
      return not_applied;
    }
    if (old &&
        (c == WriteCondition::kIfWorse ||
         c == WriteCondition::kIfPresentAndWorse) &&
        !worse) {
      return not_applied;
    }
    WriteOutcome outcome = WriteOutcome::kUnchanged;
    if (!old) {
      outcome = WriteOutcome::kAdded;
      members_[write.member] = KeyOf(write.member, score);
    } else if (*old != score) {
      outcome = WriteOutcome::kChanged;
      members_[write.member] = KeyOf(write.member, score);
    }
    if (write.metadata) StoreMetadata(write.member, *write.metadata);
    return WriteResult{outcome, score};
  }

  absl::Status SetMetadata(MemberId member, const std::string& bytes) {
    if (!MetadataFits(bytes)) return absl::InvalidArgumentError("metadata");
    if (!members_.contains(member)) return absl::NotFoundError("member");
    StoreMetadata(member, bytes);
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Metadata(MemberId member) const {
    if (max_metadata_bytes_ == 0) {
      return absl::InvalidArgumentError("no metadata");
    }
    if (!members_.contains(member)) return absl::NotFoundError("member");
    auto it = metadata_.find(member);
    return it == metadata_.end() ? std::string() : it->second;
  }

  // Fills the metadata of `entries`, as a read with_metadata does.
  void FillMetadata(std::vector<LeaderboardEntry>& entries) const {
    for (LeaderboardEntry& entry : entries) {
      auto it = metadata_.find(entry.member);
      entry.metadata = it == metadata_.end() ? std::string() : it->second;
    }
  }

  bool Remove(MemberId member) {
    metadata_.erase(member);
    return members_.erase(member) == 1;
  }
  void Clear() {
    members_.clear();
    metadata_.clear();
  }

  std::optional<int64_t> Score(MemberId member) const {
    auto it = members_.find(member);
    if (it == members_.end()) return std::nullopt;
    return ScoreOf(it->second);
  }

  // The member's key, its score a rank score (see the file comment).
  std::optional<internal::RankKey> Find(MemberId member) const {
    auto it = members_.find(member);
    if (it == members_.end()) return std::nullopt;
    return it->second;
  }

  // Every member's key, best first.
  std::vector<internal::RankKey> Sorted() const {
    std::vector<internal::RankKey> keys;
    keys.reserve(members_.size());
    for (const auto& [member, key] : members_) keys.push_back(key);
    std::sort(keys.begin(), keys.end(), internal::RanksAbove);
    return keys;
  }

  size_t size() const { return members_.size(); }

  // The members whose score is in `range`.
  uint64_t CountInRange(const ScoreRange& range) const;

  // `member`'s percentile (nullopt when absent): the percentage of members
  // ranked below it, where a tied member counts as below only for kUnique.
  std::optional<double> Percentile(MemberId member,
                                   RankStyle style = RankStyle::kUnique) const;

 private:
  uint64_t NextSeq() {
    ++changes_;
    return tie_break_ == TieBreak::kEarlierUpdateFirst ? changes_ : 0;
  }
  internal::RankKey KeyOf(MemberId member, int64_t score) {
    return {internal::RankScoreOf(score, order_), NextSeq(), member};
  }
  int64_t ScoreOf(const internal::RankKey& key) const {
    return internal::ScoreOfRankScore(key.score, order_);
  }
  bool MetadataFits(const std::string& bytes) const {
    return max_metadata_bytes_ != 0 && bytes.size() <= max_metadata_bytes_;
  }
  void StoreMetadata(MemberId member, const std::string& bytes) {
    if (bytes.empty()) {
      metadata_.erase(member);
    } else {
      metadata_[member] = bytes;
    }
  }

  const TieBreak tie_break_;
  const ScoreOrder order_;
  const size_t max_metadata_bytes_;
  uint64_t changes_ = 0;
  std::map<MemberId, internal::RankKey> members_;
  std::map<MemberId, std::string> metadata_;
};

// The entry of `key` at `rank` on a board of `order`.
inline LeaderboardEntry ModelEntry(const internal::RankKey& key, size_t rank,
                                   ScoreOrder order) {
  return {key.member, internal::ScoreOfRankScore(key.score, order), rank};
}

// The entries at ranks [from, to) of `sorted` (best first).
inline std::vector<LeaderboardEntry> ModelEntries(
    const std::vector<internal::RankKey>& sorted, size_t from, size_t to,
    ScoreOrder order = ScoreOrder::kHigherFirst) {
  std::vector<LeaderboardEntry> out;
  for (size_t i = from; i < to && i < sorted.size(); ++i) {
    out.push_back(ModelEntry(sorted[i], i, order));
  }
  return out;
}

// The rank `key` has (or would have) in `sorted`.
inline size_t ModelRank(const std::vector<internal::RankKey>& sorted,
                        const internal::RankKey& key) {
  return static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), key,
                                              internal::RanksAbove) -
                             sorted.begin());
}

// The page the model expects after `after` (nullopt: the first page).
// `*more` says whether entries follow; `*last` is the key of the last one.
inline std::vector<LeaderboardEntry> ModelPage(
    const std::vector<internal::RankKey>& sorted, LeaderboardOrder order,
    const std::optional<internal::RankKey>& after, size_t limit, bool* more,
    internal::RankKey* last,
    ScoreOrder score_order = ScoreOrder::kHigherFirst) {
  std::vector<LeaderboardEntry> out;
  if (order == LeaderboardOrder::kBestFirst) {
    size_t i = 0;
    if (after) {
      i = static_cast<size_t>(std::upper_bound(sorted.begin(), sorted.end(),
                                               *after, internal::RanksAbove) -
                              sorted.begin());
    }
    for (; i < sorted.size() && out.size() < limit; ++i) {
      out.push_back(ModelEntry(sorted[i], i, score_order));
      *last = sorted[i];
    }
    *more = i < sorted.size();
  } else {
    size_t end = sorted.size();  // entries [0, end) are still ahead
    if (after) end = ModelRank(sorted, *after);
    while (end > 0 && out.size() < limit) {
      --end;
      out.push_back(ModelEntry(sorted[end], end, score_order));
      *last = sorted[end];
    }
    *more = end > 0;
  }
  return out;
}

// Whether `score` lies in `range`, read as the header defines it.
inline bool ModelInRange(int64_t score, const ScoreRange& range) {
  const bool above_min =
      range.min_exclusive ? score > range.min : score >= range.min;
  const bool below_max =
      range.max_exclusive ? score < range.max : score <= range.max;
  return above_min && below_max;
}

inline uint64_t LeaderboardModel::CountInRange(const ScoreRange& range) const {
  uint64_t count = 0;
  for (const auto& [member, key] : members_) {
    if (ModelInRange(internal::ScoreOfRankScore(key.score, order_), range)) {
      ++count;
    }
  }
  return count;
}

inline std::optional<double> LeaderboardModel::Percentile(
    MemberId member, RankStyle style) const {
  const std::optional<internal::RankKey> key = Find(member);
  if (!key) return std::nullopt;
  uint64_t below = 0;
  for (const auto& [other, other_key] : members_) {
    // Keys hold rank scores: the higher one ranks first on either order.
    const bool counts = style == RankStyle::kUnique
                            ? internal::RanksAbove(*key, other_key)
                            : other_key.score < key->score;
    if (counts) ++below;
  }
  return 100.0 * static_cast<double>(below) / static_cast<double>(size());
}

// The page ReadPage returns for `read` (its order, range, offset and limit;
// not its cursor) after `after` (nullopt: from the start). `*more` says
// whether entries of the range follow; `*last` is the key of the last one.
inline std::vector<LeaderboardEntry> ModelRangePage(
    const std::vector<internal::RankKey>& sorted,
    const LeaderboardReadOptions& read,
    const std::optional<internal::RankKey>& after, bool* more,
    internal::RankKey* last,
    ScoreOrder score_order = ScoreOrder::kHigherFirst) {
  // The ranks of the entries still ahead of the reader, in read order.
  std::vector<size_t> ahead;
  const bool best_first = read.order == LeaderboardOrder::kBestFirst;
  for (size_t n = 0; n < sorted.size(); ++n) {
    const size_t i = best_first ? n : sorted.size() - 1 - n;
    const bool past_cursor =
        !after || (best_first ? internal::RanksAbove(*after, sorted[i])
                              : internal::RanksAbove(sorted[i], *after));
    if (past_cursor &&
        ModelInRange(internal::ScoreOfRankScore(sorted[i].score, score_order),
                     read.range)) {
      ahead.push_back(i);
    }
  }
  std::vector<LeaderboardEntry> out;
  for (uint64_t j = read.offset; j < ahead.size() && out.size() < read.limit;
       ++j) {
    const size_t i = ahead[j];
    out.push_back(ModelEntry(sorted[i], i, score_order));
    *last = sorted[i];
  }
  *more = read.offset < ahead.size() && ahead.size() - read.offset > out.size();
  return out;
}

// --- Rank styles and friends' boards ---

// The rank of each of `sorted` (best first) in `style`: element i is the
// rank of sorted[i] (i itself for kUnique).
inline std::vector<uint64_t> ModelStyledRanks(
    const std::vector<internal::RankKey>& sorted, RankStyle style) {
  std::vector<uint64_t> ranks(sorted.size());
  uint64_t rank = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (style == RankStyle::kUnique) {
      rank = i;
    } else if (i > 0 && sorted[i].score != sorted[i - 1].score) {
      rank = style == RankStyle::kCompetition ? i : rank + 1;
    }
    ranks[i] = rank;
  }
  return ranks;
}

// Gives `entries`, whose ranks are unique ranks in `sorted` (as
// ModelEntries and ModelPage make them), the ranks of `style`.
inline std::vector<LeaderboardEntry> ModelRestyled(
    const std::vector<internal::RankKey>& sorted, RankStyle style,
    std::vector<LeaderboardEntry> entries) {
  const std::vector<uint64_t> ranks = ModelStyledRanks(sorted, style);
  for (LeaderboardEntry& entry : entries) entry.rank = ranks[entry.rank];
  return entries;
}

// The friends' board of `members` and `also` (if given): those of them on
// the board, each once, best first, ranked among themselves in `style`.
inline std::vector<LeaderboardEntry> ModelAmong(
    const LeaderboardModel& model, const std::vector<MemberId>& members,
    std::optional<MemberId> also, RankStyle style) {
  std::map<MemberId, internal::RankKey> found;
  for (MemberId member : members) {
    if (auto key = model.Find(member)) found[member] = *key;
  }
  if (also.has_value()) {
    if (auto key = model.Find(*also)) found[*also] = *key;
  }
  std::vector<internal::RankKey> keys;
  for (const auto& [member, key] : found) keys.push_back(key);
  std::sort(keys.begin(), keys.end(), internal::RanksAbove);
  return ModelRestyled(keys, style,
                       ModelEntries(keys, 0, keys.size(), model.order()));
}

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_LEADERBOARD_MODEL_H_
