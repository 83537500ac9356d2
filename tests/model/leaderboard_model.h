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
#ifndef FEEDCORE_TESTS_LEADERBOARD_MODEL_H_
#define FEEDCORE_TESTS_LEADERBOARD_MODEL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/leaderboard.h"
#include "leaderboard/ranked_btree.h"

namespace feedcore::testing {

class LeaderboardModel {
 public:
  explicit LeaderboardModel(TieBreak tie_break) : tie_break_(tie_break) {}

  void Set(MemberId member, int64_t score) {
    auto it = members_.find(member);
    if (it == members_.end()) {
      members_[member] = {score, NextSeq(), member};
    } else if (it->second.score != score) {
      it->second = {score, NextSeq(), member};
    }
  }

  // The new score, or nullopt when it overflows or leaves [low, high]
  // (nothing changes then). The bounds are the backend's score range.
  std::optional<int64_t> Increment(
      MemberId member, int64_t delta,
      int64_t low = std::numeric_limits<int64_t>::min(),
      int64_t high = std::numeric_limits<int64_t>::max()) {
    auto it = members_.find(member);
    const int64_t old = it == members_.end() ? 0 : it->second.score;
    int64_t sum = 0;
    if (__builtin_add_overflow(old, delta, &sum) || sum < low || sum > high) {
      return std::nullopt;
    }
    if (it == members_.end()) {
      members_[member] = {sum, NextSeq(), member};
    } else if (delta != 0) {
      it->second = {sum, NextSeq(), member};
    }
    return sum;
  }

  bool Remove(MemberId member) { return members_.erase(member) == 1; }
  void Clear() { members_.clear(); }

  std::optional<int64_t> Score(MemberId member) const {
    auto it = members_.find(member);
    if (it == members_.end()) return std::nullopt;
    return it->second.score;
  }

  std::optional<internal::RankKey> Find(MemberId member) const {
    auto it = members_.find(member);
    if (it == members_.end()) return std::nullopt;
    return it->second;
  }

  // Every member, best first.
  std::vector<internal::RankKey> Sorted() const {
    std::vector<internal::RankKey> keys;
    keys.reserve(members_.size());
    for (const auto& [member, key] : members_) keys.push_back(key);
    std::sort(keys.begin(), keys.end(), internal::RanksAbove);
    return keys;
  }

  size_t size() const { return members_.size(); }

 private:
  uint64_t NextSeq() {
    ++changes_;
    return tie_break_ == TieBreak::kEarlierUpdateFirst ? changes_ : 0;
  }

  const TieBreak tie_break_;
  uint64_t changes_ = 0;
  std::map<MemberId, internal::RankKey> members_;
};

// The entries at ranks [from, to) of `sorted` (best first).
inline std::vector<LeaderboardEntry> ModelEntries(
    const std::vector<internal::RankKey>& sorted, size_t from, size_t to) {
  std::vector<LeaderboardEntry> out;
  for (size_t i = from; i < to && i < sorted.size(); ++i) {
    out.push_back({sorted[i].member, sorted[i].score, i});
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
    internal::RankKey* last) {
  std::vector<LeaderboardEntry> out;
  if (order == LeaderboardOrder::kBestFirst) {
    size_t i = 0;
    if (after) {
      i = static_cast<size_t>(std::upper_bound(sorted.begin(), sorted.end(),
                                               *after, internal::RanksAbove) -
                              sorted.begin());
    }
    for (; i < sorted.size() && out.size() < limit; ++i) {
      out.push_back({sorted[i].member, sorted[i].score, i});
      *last = sorted[i];
    }
    *more = i < sorted.size();
  } else {
    size_t end = sorted.size();  // entries [0, end) are still ahead
    if (after) end = ModelRank(sorted, *after);
    while (end > 0 && out.size() < limit) {
      --end;
      out.push_back({sorted[end].member, sorted[end].score, end});
      *last = sorted[end];
    }
    *more = end > 0;
  }
  return out;
}

// What Leaderboard::Write(`write`) does to the model of a board of `order`
// whose scores lie in [low, high] (the backend's range): applies it and
// returns the result, or nullopt for OutOfRange (nothing changes then).
// Only the model's public calls are used. A kSet outside the range is
// refused first; conditions on presence alone are decided before the
// arithmetic of an increment, "better" and "worse" after it. Metadata is
// not modelled.
inline std::optional<WriteResult> ModelWrite(
    LeaderboardModel& model, const ScoreWrite& write, ScoreOrder order,
    int64_t low = std::numeric_limits<int64_t>::min(),
    int64_t high = std::numeric_limits<int64_t>::max()) {
  if (write.op == WriteOp::kSet && (write.value < low || write.value > high)) {
    return std::nullopt;
  }
  const std::optional<int64_t> old = model.Score(write.member);
  const WriteCondition c = write.condition;
  if (old.has_value() && c == WriteCondition::kIfAbsent) {
    return WriteResult{WriteOutcome::kNotApplied, old};
  }
  if (!old.has_value() && (c == WriteCondition::kIfPresent ||
                           c == WriteCondition::kIfPresentAndBetter ||
                           c == WriteCondition::kIfPresentAndWorse)) {
    return WriteResult{WriteOutcome::kNotApplied, std::nullopt};
  }
  int64_t next = write.value;
  if (write.op == WriteOp::kIncrement &&
      (__builtin_add_overflow(old.value_or(0), write.value, &next) ||
       next < low || next > high)) {
    return std::nullopt;
  }
  if (old.has_value()) {
    const bool better =
        order == ScoreOrder::kHigherFirst ? next > *old : next < *old;
    const bool worse =
        order == ScoreOrder::kHigherFirst ? next < *old : next > *old;
    if (((c == WriteCondition::kIfBetter ||
          c == WriteCondition::kIfPresentAndBetter) &&
         !better) ||
        ((c == WriteCondition::kIfWorse ||
          c == WriteCondition::kIfPresentAndWorse) &&
         !worse)) {
      return WriteResult{WriteOutcome::kNotApplied, old};
    }
  }
  const WriteOutcome outcome = !old.has_value() ? WriteOutcome::kAdded
                               : next != *old   ? WriteOutcome::kChanged
                                                : WriteOutcome::kUnchanged;
  model.Set(write.member, next);
  return WriteResult{outcome, next};
}

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_LEADERBOARD_MODEL_H_
