// A Leaderboard that forwards every call to another board and counts the
// calls by name, so that a test can assert which calls an operation made
// on a board (and, for TopK, how many entries it asked for).
#ifndef FEEDCORE_TESTS_SUPPORT_COUNTING_LEADERBOARD_H_
#define FEEDCORE_TESTS_SUPPORT_COUNTING_LEADERBOARD_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "feedcore/leaderboard.h"

namespace feedcore::testing {

class CountingLeaderboard final : public Leaderboard {
 public:
  explicit CountingLeaderboard(std::shared_ptr<Leaderboard> inner)
      : inner_(std::move(inner)) {}

  // Calls made so far, by method name.
  std::map<std::string, int> Calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  // The largest k any TopK call asked for.
  size_t LargestTopK() const {
    std::lock_guard<std::mutex> lock(mu_);
    return largest_top_k_;
  }
  Leaderboard& inner() { return *inner_; }

  bool Supports(LeaderboardCapability capability) const override {
    Count("Supports");
    return inner_->Supports(capability);
  }
  absl::Status Set(MemberId member, int64_t score) override {
    Count("Set");
    return inner_->Set(member, score);
  }
  absl::StatusOr<int64_t> Increment(MemberId member, int64_t delta) override {
    Count("Increment");
    return inner_->Increment(member, delta);
  }
  std::vector<absl::StatusOr<int64_t>> IncrementMany(
      absl::Span<const ScoreIncrement> increments) override {
    Count("IncrementMany");
    return inner_->IncrementMany(increments);
  }
  absl::StatusOr<WriteResult> Write(const ScoreWrite& write) override {
    Count("Write");
    return inner_->Write(write);
  }
  std::vector<absl::StatusOr<WriteResult>> WriteMany(
      absl::Span<const ScoreWrite> writes) override {
    Count("WriteMany");
    return inner_->WriteMany(writes);
  }
  absl::Status SetMetadata(MemberId member,
                           absl::string_view metadata) override {
    Count("SetMetadata");
    return inner_->SetMetadata(member, metadata);
  }
  absl::StatusOr<std::string> Metadata(MemberId member) const override {
    Count("Metadata");
    return inner_->Metadata(member);
  }
  absl::Status Remove(MemberId member) override {
    Count("Remove");
    return inner_->Remove(member);
  }
  absl::Status Clear() override {
    Count("Clear");
    return inner_->Clear();
  }
  absl::StatusOr<int64_t> Score(MemberId member) const override {
    Count("Score");
    return inner_->Score(member);
  }
  absl::StatusOr<std::optional<int64_t>> ScoreIfPresent(
      MemberId member) const override {
    Count("ScoreIfPresent");
    return inner_->ScoreIfPresent(member);
  }
  absl::StatusOr<uint64_t> Rank(MemberId member) const override {
    Count("Rank");
    return inner_->Rank(member);
  }
  absl::StatusOr<std::vector<LeaderboardEntry>> TopK(size_t k) const override {
    Count("TopK");
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (k > largest_top_k_) largest_top_k_ = k;
    }
    return inner_->TopK(k);
  }
  absl::StatusOr<std::vector<LeaderboardEntry>> Around(
      MemberId member, size_t before, size_t after) const override {
    Count("Around");
    return inner_->Around(member, before, after);
  }
  absl::StatusOr<LeaderboardPage> ReadPage(
      const LeaderboardReadOptions& options) const override {
    Count("ReadPage");
    return inner_->ReadPage(options);
  }
  absl::StatusOr<uint64_t> CountInRange(
      const ScoreRange& range) const override {
    Count("CountInRange");
    return inner_->CountInRange(range);
  }
  absl::StatusOr<double> Percentile(MemberId member) const override {
    Count("Percentile");
    return inner_->Percentile(member);
  }
  absl::StatusOr<std::vector<LeaderboardEntry>> TopKAmong(
      absl::Span<const MemberId> members, size_t k) const override {
    Count("TopKAmong");
    return inner_->TopKAmong(members, k);
  }
  absl::StatusOr<uint64_t> RankAmong(
      MemberId member, absl::Span<const MemberId> members) const override {
    Count("RankAmong");
    return inner_->RankAmong(member, members);
  }
  absl::StatusOr<std::vector<LeaderboardEntry>> AroundAmong(
      MemberId member, absl::Span<const MemberId> members, size_t before,
      size_t after) const override {
    Count("AroundAmong");
    return inner_->AroundAmong(member, members, before, after);
  }
  absl::StatusOr<size_t> Size() const override {
    Count("Size");
    return inner_->Size();
  }
  const LeaderboardOptions& options() const override {
    return inner_->options();
  }

 private:
  void Count(const char* name) const {
    std::lock_guard<std::mutex> lock(mu_);
    ++calls_[name];
  }

  const std::shared_ptr<Leaderboard> inner_;
  mutable std::mutex mu_;
  mutable std::map<std::string, int> calls_;
  mutable size_t largest_top_k_ = 0;
};

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_SUPPORT_COUNTING_LEADERBOARD_H_
