// The leaderboard a program without feedcore writes first: a std::map of
// member -> score and a std::set ordered by (higher score, lower member),
// under one mutex. Increments and top-k are cheap; a rank walks the set
// from the top, O(rank).
#ifndef FEEDCORE_BENCH_DRIVER_LEADERBOARD_BASELINE_H_
#define FEEDCORE_BENCH_DRIVER_LEADERBOARD_BASELINE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "feedcore/leaderboard.h"

namespace feedcore::bench {

class StdMapLeaderboard {
 public:
  int64_t Increment(MemberId member, int64_t delta) {
    std::lock_guard<std::mutex> lock(mu_);
    return IncrementLocked(member, delta);
  }

  // The new scores, in the order given. The whole batch takes the mutex
  // once, as a program without feedcore would apply a batch of score
  // changes: the counterpart of Leaderboard::IncrementMany and of one
  // pipelined Redis round trip.
  std::vector<int64_t> IncrementMany(
      absl::Span<const ScoreIncrement> increments) {
    std::vector<int64_t> scores;
    scores.reserve(increments.size());
    std::lock_guard<std::mutex> lock(mu_);
    for (const ScoreIncrement& increment : increments) {
      scores.push_back(IncrementLocked(increment.member, increment.delta));
    }
    return scores;
  }

  // (member, score) pairs, best first.
  std::vector<std::pair<MemberId, int64_t>> TopK(size_t k) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::pair<MemberId, int64_t>> top;
    for (auto it = order_.begin(); it != order_.end() && top.size() < k; ++it) {
      top.emplace_back(it->second, -it->first);
    }
    return top;
  }

  // Keep-best writes under one lock: a new score replaces the old one only
  // when it is higher (or the member is new).
  void KeepBestMany(absl::Span<const ScoreWrite> writes) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const ScoreWrite& write : writes) {
      auto it = scores_.find(write.member);
      if (it == scores_.end()) {
        IncrementLocked(write.member, write.value);
      } else if (write.value > it->second) {
        IncrementLocked(write.member, write.value - it->second);
      }
    }
  }

  // Up to `limit` (member, score) pairs from rank `offset`, walking the
  // set from the top: O(offset).
  std::vector<std::pair<MemberId, int64_t>> Page(uint64_t offset,
                                                 size_t limit) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::pair<MemberId, int64_t>> page;
    auto it = order_.begin();
    for (uint64_t i = 0; i < offset && it != order_.end(); ++i) ++it;
    for (; it != order_.end() && page.size() < limit; ++it) {
      page.emplace_back(it->second, -it->first);
    }
    return page;
  }

  // The best `k` of `members` (absent ones skipped, duplicates once).
  std::vector<std::pair<MemberId, int64_t>> TopAmong(
      absl::Span<const MemberId> members, size_t k) const {
    std::vector<std::pair<int64_t, MemberId>> found;  // (-score, member)
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (MemberId member : members) {
        auto it = scores_.find(member);
        if (it != scores_.end()) found.emplace_back(-it->second, member);
      }
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    std::vector<std::pair<MemberId, int64_t>> top;
    for (size_t i = 0; i < found.size() && i < k; ++i) {
      top.emplace_back(found[i].second, -found[i].first);
    }
    return top;
  }

  std::optional<uint64_t> Rank(MemberId member) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = scores_.find(member);
    if (it == scores_.end()) return std::nullopt;
    return static_cast<uint64_t>(
        std::distance(order_.begin(), order_.find({-it->second, member})));
  }

 private:
  int64_t IncrementLocked(MemberId member, int64_t delta) {
    auto [it, inserted] = scores_.try_emplace(member, 0);
    if (!inserted) order_.erase({-it->second, member});
    it->second += delta;
    order_.insert({-it->second, member});
    return it->second;
  }

  mutable std::mutex mu_;
  std::map<MemberId, int64_t> scores_;            // guarded by mu_
  std::set<std::pair<int64_t, MemberId>> order_;  // (-score, member); mu_
};

}  // namespace feedcore::bench

#endif  // FEEDCORE_BENCH_DRIVER_LEADERBOARD_BASELINE_H_
