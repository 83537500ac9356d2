// LeaderboardImpl's reads: Score, Rank, TopK, Around, ReadPage. Each
// computes unique ranks and, before it lets go of its snapshot, turns them
// into the board's rank style (leaderboard_rank_style.cc).
#include <algorithm>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "contract/leaderboard_arguments.h"
#include "contract/leaderboard_cursor.h"
#include "leaderboard/leaderboard_snapshot.h"

namespace feedcore::internal {

absl::StatusOr<int64_t> LeaderboardImpl::Score(MemberId member) const {
  absl::StatusOr<std::optional<int64_t>> score = ScoreIfPresent(member);
  if (!score->has_value()) return MemberNotFound(member);
  return **score;
}

absl::StatusOr<std::optional<int64_t>> LeaderboardImpl::ScoreIfPresent(
    MemberId member) const {
  const Partition& partition = partitions_[PartitionOf(member)];
  ReaderLock lock(&partition.mu);
  const PartitionData& data = *partition.data;
  auto it = data.members.find(member);
  if (it == data.members.end()) return std::optional<int64_t>();
  return std::optional<int64_t>(ToScore(it->second.score));
}

absl::StatusOr<uint64_t> LeaderboardImpl::Rank(MemberId member) const {
  const size_t home = PartitionOf(member);
  SharedSnapshot snapshot(*this);
  const std::optional<RankKey> found = snapshot.KeyOf(member, home);
  if (!found.has_value()) return MemberNotFound(member);
  const RankKey key = *found;
  // A shared rank needs its own descent, not the unique rank's.
  if (options_.rank_style != RankStyle::kUnique) {
    return StyledRank(snapshot, key, /*unique_rank=*/0);
  }
  PerPartition<size_t> counts(snapshot.partitions());
  snapshot.Bounds(key, /*upper=*/false, nullptr, counts.data(), home);
  uint64_t rank = 0;
  for (size_t p = 0; p < counts.size(); ++p) rank += counts[p];
  return rank;
}

absl::StatusOr<std::vector<LeaderboardEntry>> LeaderboardImpl::TopK(
    size_t k) const {
  if (absl::Status s = ValidateReadSize("TopK k", k, 1, options_.max_page_size);
      !s.ok()) {
    return s;
  }
  std::vector<LeaderboardEntry> out;
  if (TopKFromCopy(k, &out)) return out;
  size_t entries_read = 0;
  uint64_t version_sum = 0;
  size_t members = 0;
  {
    SharedSnapshot snapshot(*this);
    version_sum = TopVersionSum();
    members = snapshot.members();
    out = MergeTop(snapshot, k, &entries_read);
  }
  // After letting go of the locks; a later TopK of up to k finds it.
  top_cache_.Publish(version_sum, out, /*whole_board=*/out.size() == members);
  return out;
}

bool LeaderboardImpl::TopKFromCopy(size_t k,
                                   std::vector<LeaderboardEntry>* out) const {
  return top_cache_.TryRead(
      k, [this] { return TopVersionSum(); }, out);
}

absl::StatusOr<std::vector<LeaderboardEntry>> LeaderboardImpl::TopKCounted(
    size_t k, size_t* entries_read) const {
  if (absl::Status s = ValidateReadSize("TopK k", k, 1, options_.max_page_size);
      !s.ok()) {
    return s;
  }
  SharedSnapshot snapshot(*this);
  return MergeTop(snapshot, k, entries_read);
}

std::vector<LeaderboardEntry> LeaderboardImpl::MergeTop(
    const SharedSnapshot& snapshot, size_t k, size_t* entries_read) const {
  std::vector<LeaderboardEntry> out;
  PerPartition<Position> runs(snapshot.partitions());
  size_t size = 0;
  for (size_t p = 0; p < snapshot.partitions(); ++p) {
    runs[p] = snapshot.data(p).tree.First();
    size += snapshot.data(p).tree.size();
  }
  out.reserve(std::min(k, size));
  Merge(runs.span(), /*best_first=*/true, k, /*probe=*/false, entries_read,
        [this, &out](const RankKey& key) {
          out.push_back(EntryOf(key, out.size()));
        });
  StyleRanks(snapshot, absl::MakeSpan(out), /*best_first=*/true);
  return out;
}

uint64_t LeaderboardImpl::TopVersionSum() const {
  uint64_t sum = 0;
  for (size_t p = 0; p < options_.partitions; ++p) {
    sum += partitions_[p].top_version.load(std::memory_order_acquire);
  }
  return sum;
}

absl::StatusOr<std::vector<LeaderboardEntry>>
LeaderboardImpl::TopKReadingKPerPartition(size_t k,
                                          size_t* entries_read) const {
  if (absl::Status s = ValidateReadSize("TopK k", k, 1, options_.max_page_size);
      !s.ok()) {
    return s;
  }
  std::vector<RankKey> gathered;
  SharedSnapshot snapshot(*this);
  gathered.reserve(k * snapshot.partitions());
  for (size_t p = 0; p < snapshot.partitions(); ++p) {
    size_t taken = 0;
    for (Position at = snapshot.data(p).tree.First(); at.valid() && taken < k;
         at = at.next(), ++taken) {
      gathered.push_back(at.key());
    }
    *entries_read += taken;
  }
  const size_t keep = std::min(k, gathered.size());
  std::partial_sort(gathered.begin(), gathered.begin() + keep, gathered.end(),
                    RanksAbove);
  std::vector<LeaderboardEntry> out;
  out.reserve(keep);
  for (size_t i = 0; i < keep; ++i) out.push_back(EntryOf(gathered[i], i));
  StyleRanks(snapshot, absl::MakeSpan(out), /*best_first=*/true);
  return out;
}

absl::StatusOr<std::vector<LeaderboardEntry>> LeaderboardImpl::Around(
    MemberId member, size_t before, size_t after) const {
  if (absl::Status s =
          ValidateReadSize("Around before", before, 0, options_.max_page_size);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ValidateReadSize("Around after", after, 0, options_.max_page_size);
      !s.ok()) {
    return s;
  }
  const size_t home = PartitionOf(member);
  const size_t partitions = options_.partitions;
  PerPartition<Position> above(partitions);  // runs towards the leader
  PerPartition<Position> below(partitions);  // runs away from it
  std::vector<LeaderboardEntry> out;
  SharedSnapshot snapshot(*this);
  const std::optional<RankKey> found = snapshot.KeyOf(member, home);
  if (!found.has_value()) return MemberNotFound(member);
  const RankKey key = *found;
  PerPartition<size_t> counts(partitions);
  snapshot.Bounds(key, /*upper=*/false, below.data(), counts.data(), home);
  uint64_t rank = 0;
  for (size_t p = 0; p < partitions; ++p) {
    rank += counts[p];
    // below[p] is the first entry not above `key`; the run towards the
    // leader starts just before it.
    above[p] =
        below[p].valid() ? below[p].prev() : snapshot.data(p).tree.Last();
  }
  // In the member's own partition that first entry is the member.
  below[home] = below[home].next();
  out.reserve(std::min<uint64_t>(before, rank) + 1 + after);
  size_t entries_read = 0;
  Merge(above.span(), /*best_first=*/false, before, /*probe=*/false,
        &entries_read, [this, &out, rank](const RankKey& at) {
          out.push_back(EntryOf(at, rank - 1 - out.size()));
        });
  std::reverse(out.begin(), out.end());
  out.push_back(EntryOf(key, rank));
  uint64_t next_rank = rank + 1;
  Merge(below.span(), /*best_first=*/true, after, /*probe=*/false,
        &entries_read, [this, &out, &next_rank](const RankKey& at) {
          out.push_back(EntryOf(at, next_rank++));
        });
  StyleRanks(snapshot, absl::MakeSpan(out), /*best_first=*/true);
  return out;
}

absl::StatusOr<LeaderboardPage> LeaderboardImpl::ReadPage(
    const LeaderboardReadOptions& options) const {
  ReadWork work;
  return ReadPageCounted(options, &work);
}

absl::StatusOr<LeaderboardPage> LeaderboardImpl::ReadPageCounted(
    const LeaderboardReadOptions& options, ReadWork* work) const {
  absl::StatusOr<std::optional<RankKey>> start =
      ValidateReadPage(options, board_id_, options_.max_page_size);
  if (!start.ok()) return start.status();
  if (options.with_metadata && options_.max_metadata_bytes == 0) {
    return absl::InvalidArgumentError(
        "LeaderboardReadOptions.with_metadata is set, but "
        "LeaderboardOptions.max_metadata_bytes is 0: the board keeps no "
        "metadata");
  }
  const std::optional<RankKey> after = *start;
  const bool best_first = options.order == LeaderboardOrder::kBestFirst;

  LeaderboardPage page;
  PerPartition<Position> runs(options_.partitions);
  {
    SharedSnapshot snapshot(*this);
    // The range, the cursor and the offset decide where the runs start and
    // how many entries remain (leaderboard_range_reads.cc). Best-first:
    // `rank` is the rank of the next entry to return. Worst-first: it is
    // one more than that rank.
    const PageStart page_start =
        StartPage(snapshot, options, after, runs.data(), work);
    uint64_t rank = page_start.rank;
    const size_t want = static_cast<size_t>(
        std::min<uint64_t>(options.limit, page_start.remaining));
    page.entries.reserve(want);
    RankKey last;
    Merge(runs.span(), best_first, want, /*probe=*/false, &work->entries_read,
          [this, &page, &rank, &last, best_first](const RankKey& key) {
            last = key;
            page.entries.push_back(EntryOf(last, best_first ? rank++ : --rank));
          });
    StyleRanks(snapshot, absl::MakeSpan(page.entries), best_first);
    if (page_start.remaining > want && options.with_next_cursor) {
      page.next_cursor = EncodeLeaderboardCursor(
          LeaderboardCursor{board_id_, options.order, last});
    }
    if (options.with_metadata)
      snapshot.FillMetadata(absl::MakeSpan(page.entries));
  }
  return page;
}

}  // namespace feedcore::internal
