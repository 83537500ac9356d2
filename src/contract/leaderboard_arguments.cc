#include "contract/leaderboard_arguments.h"

#include "absl/strings/str_cat.h"

namespace feedcore::internal {
namespace {

absl::Status OutOfRange(absl::string_view field, const absl::AlphaNum& value,
                        absl::string_view range) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, " is ", value, "; it must be ", range));
}

}  // namespace

absl::Status ValidateLeaderboardOptions(const LeaderboardOptions& options) {
  if (options.partitions == 0 ||
      options.partitions > kMaxLeaderboardPartitions) {
    return OutOfRange("LeaderboardOptions.partitions", options.partitions,
                      absl::StrCat("1..", kMaxLeaderboardPartitions));
  }
  if (options.tie_break != TieBreak::kEarlierUpdateFirst &&
      options.tie_break != TieBreak::kLowerMemberFirst) {
    return OutOfRange(
        "LeaderboardOptions.tie_break",
        static_cast<long long>(options.tie_break),
        "TieBreak::kEarlierUpdateFirst or TieBreak::kLowerMemberFirst");
  }
  if (options.max_page_size == 0 ||
      options.max_page_size > kMaxLeaderboardPageSizeLimit) {
    return OutOfRange("LeaderboardOptions.max_page_size", options.max_page_size,
                      absl::StrCat("1..", kMaxLeaderboardPageSizeLimit));
  }
  if (options.score_order != ScoreOrder::kHigherFirst &&
      options.score_order != ScoreOrder::kLowerFirst) {
    return OutOfRange("LeaderboardOptions.score_order",
                      static_cast<int>(options.score_order),
                      "ScoreOrder::kHigherFirst or ScoreOrder::kLowerFirst");
  }
  if (options.rank_style != RankStyle::kUnique &&
      options.rank_style != RankStyle::kCompetition &&
      options.rank_style != RankStyle::kDense) {
    return OutOfRange("LeaderboardOptions.rank_style",
                      static_cast<int>(options.rank_style),
                      "RankStyle::kUnique, kCompetition or kDense");
  }
  if (options.max_metadata_bytes > kMaxMemberMetadataLimit) {
    return OutOfRange("LeaderboardOptions.max_metadata_bytes",
                      options.max_metadata_bytes,
                      absl::StrCat("0..", kMaxMemberMetadataLimit));
  }
  return absl::OkStatus();
}

std::string DescribeLeaderboardOptions(const LeaderboardOptions& options) {
  return absl::StrCat(
      "{partitions=", options.partitions, ", tie_break=",
      options.tie_break == TieBreak::kEarlierUpdateFirst ? "kEarlierUpdateFirst"
                                                         : "kLowerMemberFirst",
      ", max_page_size=", options.max_page_size, ", score_order=",
      options.score_order == ScoreOrder::kHigherFirst ? "kHigherFirst"
                                                      : "kLowerFirst",
      ", rank_style=",
      options.rank_style == RankStyle::kUnique        ? "kUnique"
      : options.rank_style == RankStyle::kCompetition ? "kCompetition"
                                                      : "kDense",
      ", max_metadata_bytes=", options.max_metadata_bytes, "}");
}

absl::Status ValidateReadSize(absl::string_view what, size_t value, size_t min,
                              size_t max_page_size) {
  if (value < min || value > max_page_size) {
    return OutOfRange(what, value,
                      absl::StrCat(min, "..", max_page_size,
                                   " (LeaderboardOptions.max_page_size)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateLeaderboardName(absl::string_view name) {
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("leaderboard name is empty; it must be 1..",
                     kMaxLeaderboardNameLength, " bytes"));
  }
  if (name.size() > kMaxLeaderboardNameLength) {
    return OutOfRange("leaderboard name length", name.size(),
                      absl::StrCat("1..", kMaxLeaderboardNameLength, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace feedcore::internal

namespace feedcore {

const char* LeaderboardCapabilityName(LeaderboardCapability capability) {
  switch (capability) {
    case LeaderboardCapability::kEarlierUpdateFirst:
      return "kEarlierUpdateFirst";
    case LeaderboardCapability::kBoardSnapshotReads:
      return "kBoardSnapshotReads";
    case LeaderboardCapability::kDenseRanks:
      return "kDenseRanks";
  }
  return "an unknown capability";
}

}  // namespace feedcore
