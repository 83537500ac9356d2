// LeaderboardImpl's friends' boards: TopKAmong, RankAmong, AroundAmong.
//
// The board restricted to a set of members. The set's keys are looked up
// in their partitions' maps under one snapshot of the board (so the set is
// ranked as it stood at one instant); the ranking among them needs nothing
// else from the board, so it runs after the locks are released: a sort of
// the found keys by RanksAbove, and ranks among them in the board's style.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "contract/leaderboard_arguments.h"
#include "leaderboard/leaderboard_snapshot.h"

namespace feedcore::internal {
namespace {

absl::Status ValidateAmongMembers(const char* call,
                                  absl::Span<const MemberId> members) {
  if (members.size() > kMaxAmongMembers) {
    return absl::InvalidArgumentError(
        absl::StrCat(call, " members has ", members.size(), " ids; at most ",
                     kMaxAmongMembers, " (kMaxAmongMembers)"));
  }
  return absl::OkStatus();
}

// Sets the rank of entries[i], the i-th of a set sorted best first, to its
// rank among the set in `style`.
void RankAmongSorted(RankStyle style, absl::Span<LeaderboardEntry> entries) {
  uint64_t rank = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0 && entries[i].score != entries[i - 1].score) {
      rank = style == RankStyle::kDense ? rank + 1 : i;
    } else if (style == RankStyle::kUnique) {
      rank = i;
    }
    entries[i].rank = rank;
  }
}

}  // namespace

std::vector<RankKey> LeaderboardImpl::KeysAmong(
    absl::Span<const MemberId> members, std::optional<MemberId> also) const {
  // Distinct ids, sorted: duplicates count once, and a partition's lookups
  // come together.
  std::vector<MemberId> ids(members.begin(), members.end());
  if (also.has_value()) ids.push_back(*also);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<uint32_t> partition_of(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    partition_of[i] = static_cast<uint32_t>(PartitionOf(ids[i]));
  }
  std::vector<RankKey> keys;
  keys.reserve(ids.size());
  // How far ahead a lookup's slot is fetched, so that the misses of
  // several lookups overlap while the locks are held.
  constexpr size_t kAhead = 8;
  SharedSnapshot snapshot(*this);
  for (size_t i = 0; i < std::min(ids.size(), kAhead); ++i) {
    snapshot.data(partition_of[i]).members.prefetch(ids[i]);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i + kAhead < ids.size()) {
      snapshot.data(partition_of[i + kAhead]).members.prefetch(ids[i + kAhead]);
    }
    const auto& map = snapshot.data(partition_of[i]).members;
    auto it = map.find(ids[i]);
    if (it != map.end()) {
      keys.push_back(RankKey{it->second.score, it->second.seq, ids[i]});
    }
  }
  return keys;
}

absl::StatusOr<std::vector<LeaderboardEntry>> LeaderboardImpl::TopKAmong(
    absl::Span<const MemberId> members, size_t k) const {
  if (absl::Status s =
          ValidateReadSize("TopKAmong k", k, 1, options_.max_page_size);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateAmongMembers("TopKAmong", members); !s.ok()) {
    return s;
  }
  std::vector<RankKey> keys = KeysAmong(members, std::nullopt);
  const size_t keep = std::min(k, keys.size());
  // Ties in the last kept place are decided by the key, so a partial sort
  // keeps exactly the set's best `keep`; their ranks need only the scores
  // of those above them.
  std::partial_sort(keys.begin(), keys.begin() + keep, keys.end(), RanksAbove);
  std::vector<LeaderboardEntry> out;
  out.reserve(keep);
  for (size_t i = 0; i < keep; ++i) out.push_back(EntryOf(keys[i], i));
  RankAmongSorted(options_.rank_style, absl::MakeSpan(out));
  return out;
}

absl::StatusOr<uint64_t> LeaderboardImpl::RankAmong(
    MemberId member, absl::Span<const MemberId> members) const {
  if (absl::Status s = ValidateAmongMembers("RankAmong", members); !s.ok()) {
    return s;
  }
  const std::vector<RankKey> keys = KeysAmong(members, member);
  auto self =
      std::find_if(keys.begin(), keys.end(),
                   [member](const RankKey& k) { return k.member == member; });
  if (self == keys.end()) return MemberNotFound(member);
  const RankKey key = *self;
  switch (options_.rank_style) {
    case RankStyle::kUnique:
      return static_cast<uint64_t>(std::count_if(
          keys.begin(), keys.end(),
          [&key](const RankKey& k) { return RanksAbove(k, key); }));
    case RankStyle::kCompetition:
      return static_cast<uint64_t>(std::count_if(
          keys.begin(), keys.end(),
          [&key](const RankKey& k) { return k.score > key.score; }));
    case RankStyle::kDense: {
      std::vector<int64_t> better;
      for (const RankKey& k : keys) {
        if (k.score > key.score) better.push_back(k.score);
      }
      std::sort(better.begin(), better.end());
      return static_cast<uint64_t>(std::unique(better.begin(), better.end()) -
                                   better.begin());
    }
  }
  return absl::InternalError("unknown rank style");
}

absl::StatusOr<std::vector<LeaderboardEntry>> LeaderboardImpl::AroundAmong(
    MemberId member, absl::Span<const MemberId> members, size_t before,
    size_t after) const {
  if (absl::Status s = ValidateReadSize("AroundAmong before", before, 0,
                                        options_.max_page_size);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateReadSize("AroundAmong after", after, 0,
                                        options_.max_page_size);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateAmongMembers("AroundAmong", members); !s.ok()) {
    return s;
  }
  std::vector<RankKey> keys = KeysAmong(members, member);
  std::sort(keys.begin(), keys.end(), RanksAbove);
  auto self =
      std::find_if(keys.begin(), keys.end(),
                   [member](const RankKey& k) { return k.member == member; });
  if (self == keys.end()) return MemberNotFound(member);
  const size_t at = static_cast<size_t>(self - keys.begin());
  // Shared ranks depend on every entry above, so the whole set is ranked.
  std::vector<LeaderboardEntry> ranked;
  ranked.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i)
    ranked.push_back(EntryOf(keys[i], i));
  RankAmongSorted(options_.rank_style, absl::MakeSpan(ranked));
  const size_t from = at - std::min(at, before);
  const size_t to = at + 1 + std::min(after, keys.size() - at - 1);
  return std::vector<LeaderboardEntry>(ranked.begin() + from,
                                       ranked.begin() + to);
}

}  // namespace feedcore::internal
