#include "sorted_set_order.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace feedcore::server {
namespace {

// The board's order that lists scores as Redis's (reversed when `rev`).
LeaderboardOrder BoardOrder(const Leaderboard& board, bool rev) {
  const bool ascending_is_worst =
      board.options().score_order == ScoreOrder::kHigherFirst;
  return (ascending_is_worst != rev) ? LeaderboardOrder::kWorstFirst
                                     : LeaderboardOrder::kBestFirst;
}

// Up to `count` entries of `range` in `order`, after skipping `offset`:
// pages of up to max_page_size entries, each one snapshot of the board.
absl::StatusOr<std::vector<LeaderboardEntry>> ReadEntries(
    const Leaderboard& board, LeaderboardOrder order, const ScoreRange& range,
    uint64_t offset, std::optional<uint64_t> count) {
  std::vector<LeaderboardEntry> entries;
  uint64_t remaining = count.value_or(std::numeric_limits<uint64_t>::max());
  const size_t page_size = board.options().max_page_size;
  LeaderboardReadOptions read;
  read.order = order;
  read.range = range;
  read.offset = offset;
  while (remaining > 0) {
    read.limit = static_cast<size_t>(std::min<uint64_t>(page_size, remaining));
    // The last page wanted needs no cursor after it.
    read.with_next_cursor = remaining > read.limit;
    absl::StatusOr<LeaderboardPage> page = board.ReadPage(read);
    if (!page.ok()) return page.status();
    remaining -= std::min<uint64_t>(remaining, page->entries.size());
    if (entries.empty()) {
      entries = std::move(page->entries);
    } else {
      entries.insert(entries.end(), page->entries.begin(), page->entries.end());
    }
    if (page->next_cursor.empty()) break;
    read.cursor = std::move(page->next_cursor);
    read.offset = 0;
  }
  return entries;
}

// The entries with their names; members removed since the read (no name
// any more) are left out.
std::vector<NamedEntry> Named(const SortedSet& set,
                              absl::Span<const LeaderboardEntry> entries) {
  const std::vector<std::optional<std::string>> names =
      set.members.NamesOf(entries);
  std::vector<NamedEntry> named;
  named.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!names[i].has_value()) continue;
    named.push_back(
        {*std::move(names[i]), entries[i].score, entries[i].member});
  }
  return named;
}

int CompareNames(absl::string_view a, absl::string_view b) {
  const int c = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
  if (c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

void SortByName(std::vector<NamedEntry>::iterator begin,
                std::vector<NamedEntry>::iterator end, bool rev) {
  if (end - begin < 2) return;
  std::sort(begin, end, [rev](const NamedEntry& a, const NamedEntry& b) {
    const int c = CompareNames(a.name, b.name);
    return rev ? c > 0 : c < 0;
  });
}

// The scores of `range` that come before `score` in the order.
ScoreRange Before(const ScoreRange& range, int64_t score, bool rev) {
  ScoreRange before = range;
  if (rev) {
    before.min = score;
    before.min_exclusive = true;
  } else {
    before.max = score;
    before.max_exclusive = true;
  }
  return before;
}

ScoreRange Only(int64_t score) { return ScoreRange{score, score}; }

// The members of the tie group `score` at positions [first, last] of the
// order within `range`, in Redis's order.
absl::StatusOr<std::vector<NamedEntry>> GroupSlice(const SortedSet& set,
                                                   const ScoreRange& range,
                                                   int64_t score, bool rev,
                                                   uint64_t first,
                                                   uint64_t last) {
  const Leaderboard& board = *set.board;
  absl::StatusOr<uint64_t> group_start =
      board.CountInRange(Before(range, score, rev));
  if (!group_start.ok()) return group_start.status();
  absl::StatusOr<std::vector<LeaderboardEntry>> group =
      ReadEntries(board, BoardOrder(board, rev), Only(score), 0, std::nullopt);
  if (!group.ok()) return group.status();
  // Positions [first, last] of the order, as positions within the group.
  if (last < *group_start) return std::vector<NamedEntry>();
  const uint64_t begin = first > *group_start ? first - *group_start : 0;
  const uint64_t end = last - *group_start + 1;
  std::vector<NamedEntry> slice;
  for (auto& [index, name] : set.members.NameOrderSlice(
           *group, rev,
           static_cast<size_t>(
               std::min<uint64_t>(begin, std::numeric_limits<size_t>::max())),
           static_cast<size_t>(
               std::min<uint64_t>(end, std::numeric_limits<size_t>::max())))) {
    const LeaderboardEntry& entry = (*group)[index];
    slice.push_back({std::move(name), entry.score, entry.member});
  }
  return slice;
}

// The board's entries at positions [start, start + count) of the order
// within `range`, and whether a tie group reaches past the first or last.
struct BoardSlice {
  std::vector<LeaderboardEntry> entries;
  bool cut_front = false;
  bool cut_back = false;
};

absl::StatusOr<BoardSlice> ReadSlice(const SortedSet& set,
                                     const ScoreRange& range, bool rev,
                                     uint64_t start,
                                     std::optional<uint64_t> count) {
  if (count.has_value() && *count == 0) return BoardSlice();
  const Leaderboard& board = *set.board;
  // One neighbour on each side tells whether a boundary group is cut.
  const uint64_t before = start > 0 ? 1 : 0;
  std::optional<uint64_t> read_count;
  if (count.has_value()) {
    read_count = *count > std::numeric_limits<uint64_t>::max() - 2
                     ? std::numeric_limits<uint64_t>::max()
                     : *count + before + 1;
  }
  absl::StatusOr<std::vector<LeaderboardEntry>> read = ReadEntries(
      board, BoardOrder(board, rev), range, start - before, read_count);
  if (!read.ok()) return read.status();
  BoardSlice slice;
  std::vector<LeaderboardEntry>& entries = *read;
  if (entries.size() <= before) return slice;
  std::optional<int64_t> score_before;
  if (before == 1) score_before = entries.front().score;
  std::optional<int64_t> score_after;
  if (count.has_value() && entries.size() > before + *count) {
    score_after = entries.back().score;
    entries.pop_back();
  }
  entries.erase(entries.begin(), entries.begin() + before);
  slice.cut_front = score_before == entries.front().score;
  slice.cut_back = score_after == entries.back().score;
  slice.entries = *std::move(read);
  return slice;
}

// The slice's members in Redis's order: ties sorted by name, cut groups
// read whole.
absl::StatusOr<std::vector<NamedEntry>> InRedisOrder(const SortedSet& set,
                                                     BoardSlice slice,
                                                     const ScoreRange& range,
                                                     bool rev, uint64_t start,
                                                     Naming naming) {
  const std::vector<LeaderboardEntry>& entries = slice.entries;
  const uint64_t last = start + entries.size() - 1;
  const int64_t first_score = entries.front().score;
  const int64_t last_score = entries.back().score;
  const bool cut_front = slice.cut_front;
  const bool cut_back = slice.cut_back;

  std::vector<NamedEntry> out;
  if ((cut_front || cut_back) && first_score == last_score) {
    return GroupSlice(set, range, first_score, rev, start, last);
  }
  // The entries between the cut groups, named and sorted group by group.
  size_t inner_begin = 0;
  size_t inner_end = entries.size();
  if (cut_front) {
    absl::StatusOr<std::vector<NamedEntry>> front =
        GroupSlice(set, range, first_score, rev, start, last);
    if (!front.ok()) return front.status();
    out = *std::move(front);
    while (inner_begin < inner_end &&
           entries[inner_begin].score == first_score) {
      ++inner_begin;
    }
  }
  if (cut_back) {
    while (inner_end > inner_begin &&
           entries[inner_end - 1].score == last_score) {
      --inner_end;
    }
  }
  const absl::Span<const LeaderboardEntry> inner =
      absl::MakeConstSpan(entries).subspan(inner_begin,
                                           inner_end - inner_begin);
  std::vector<NamedEntry> named;
  if (naming == Naming::kCutGroupsOnly) {
    named.reserve(inner.size());
    for (const LeaderboardEntry& e : inner) {
      named.push_back({std::string(), e.score, e.member});
    }
  } else {
    named = Named(set, inner);
  }
  for (auto run = named.begin();
       naming == Naming::kAll && run != named.end();) {
    auto run_end = run;
    while (run_end != named.end() && run_end->score == run->score) ++run_end;
    SortByName(run, run_end, rev);
    run = run_end;
  }
  if (!cut_front && !cut_back) return named;
  out.insert(out.end(), std::make_move_iterator(named.begin()),
             std::make_move_iterator(named.end()));
  if (cut_back) {
    absl::StatusOr<std::vector<NamedEntry>> back =
        GroupSlice(set, range, last_score, rev, start, last);
    if (!back.ok()) return back.status();
    out.insert(out.end(), std::make_move_iterator(back->begin()),
               std::make_move_iterator(back->end()));
  }
  return out;
}

}  // namespace

bool RedisOrderLess(const NamedEntry& a, const NamedEntry& b, bool rev) {
  if (a.score != b.score) return rev ? a.score > b.score : a.score < b.score;
  const int c = CompareNames(a.name, b.name);
  return rev ? c > 0 : c < 0;
}

absl::StatusOr<std::vector<NamedEntry>> ReadOrdered(
    const SortedSet& set, const ScoreRange& range, bool rev, uint64_t start,
    std::optional<uint64_t> count, Naming naming) {
  absl::StatusOr<BoardSlice> slice = ReadSlice(set, range, rev, start, count);
  if (!slice.ok()) return slice.status();
  if (slice->entries.empty()) return std::vector<NamedEntry>();
  return InRedisOrder(set, *std::move(slice), range, rev, start, naming);
}

absl::Status VisitOrdered(
    const SortedSet& set, const ScoreRange& range, bool rev, uint64_t start,
    std::optional<uint64_t> count, absl::FunctionRef<void(size_t)> on_count,
    absl::FunctionRef<void(absl::string_view, int64_t)> visit) {
  absl::StatusOr<BoardSlice> slice = ReadSlice(set, range, rev, start, count);
  if (!slice.ok()) return slice.status();
  const std::vector<LeaderboardEntry>& entries = slice->entries;
  if (!slice->cut_front && !slice->cut_back) {
    // Every tie group is whole: the board's order with each group sorted
    // by name is Redis's, and the names are written straight from the
    // dictionary, sorted in place.
    set.members.WithNames(
        entries, [&](absl::Span<MemberDictionary::IndexedName> named) {
          for (size_t run = 0; run < named.size();) {
            const int64_t score = entries[named[run].first].score;
            size_t end = run + 1;
            while (end < named.size() &&
                   entries[named[end].first].score == score) {
              ++end;
            }
            if (end - run > 1) {
              std::sort(named.begin() + run, named.begin() + end,
                        [rev](const MemberDictionary::IndexedName& a,
                              const MemberDictionary::IndexedName& b) {
                          const int c = CompareNames(a.second, b.second);
                          return rev ? c > 0 : c < 0;
                        });
            }
            run = end;
          }
          on_count(named.size());
          for (const auto& [index, name] : named) {
            visit(name, entries[index].score);
          }
        });
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<NamedEntry>> ordered =
      InRedisOrder(set, *std::move(slice), range, rev, start, Naming::kAll);
  if (!ordered.ok()) return ordered.status();
  on_count(ordered->size());
  for (const NamedEntry& entry : *ordered) visit(entry.name, entry.score);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<NamedEntry>> ReadAllOrdered(const SortedSet& set,
                                                       bool rev) {
  return ReadOrdered(set, ScoreRange{}, rev, 0, std::nullopt);
}

absl::StatusOr<std::shared_ptr<const std::vector<NamedEntry>>> OrderedCopy(
    const SortedSet& set) {
  // Read before the set: a write that the read below misses bumps the
  // version after it, so the copy is then never taken for current.
  const uint64_t version = set.version.load(std::memory_order_acquire);
  const SortedSet& cache = set;
  {
    internal::WriterLock lock(&cache.ordered_copy_mutex);
    if (cache.ordered_copy != nullptr &&
        cache.ordered_copy_version == version) {
      return cache.ordered_copy;
    }
  }
  absl::StatusOr<std::vector<NamedEntry>> all = ReadAllOrdered(set, false);
  if (!all.ok()) return all.status();
  auto copy = std::make_shared<const std::vector<NamedEntry>>(*std::move(all));
  if (copy->size() <= kMaxOrderedCopyMembers) {
    internal::WriterLock lock(&cache.ordered_copy_mutex);
    cache.ordered_copy = copy;
    cache.ordered_copy_version = version;
  }
  return copy;
}

absl::StatusOr<std::vector<NamedEntry>> ReadAllUnordered(const SortedSet& set) {
  absl::StatusOr<std::vector<LeaderboardEntry>> entries = ReadEntries(
      *set.board, LeaderboardOrder::kBestFirst, ScoreRange{}, 0, std::nullopt);
  if (!entries.ok()) return entries.status();
  return Named(set, *entries);
}

absl::StatusOr<std::optional<RankedMember>> RedisRank(const SortedSet& set,
                                                      absl::string_view name,
                                                      bool rev) {
  std::optional<MemberId> id = set.members.Find(name);
  if (!id.has_value()) return std::optional<RankedMember>();
  const Leaderboard& board = *set.board;
  absl::StatusOr<int64_t> score = board.Score(*id);
  if (absl::IsNotFound(score.status())) return std::optional<RankedMember>();
  if (!score.ok()) return score.status();
  absl::StatusOr<uint64_t> better =
      board.CountInRange(Before(ScoreRange{}, *score, rev));
  if (!better.ok()) return better.status();
  absl::StatusOr<uint64_t> tied = board.CountInRange(Only(*score));
  if (!tied.ok()) return tied.status();
  RankedMember ranked{*better, *score};
  if (*tied > 1) {
    absl::StatusOr<std::vector<LeaderboardEntry>> group = ReadEntries(
        board, BoardOrder(board, rev), Only(*score), 0, std::nullopt);
    if (!group.ok()) return group.status();
    for (const NamedEntry& other : Named(set, *group)) {
      const int c = CompareNames(other.name, name);
      if (rev ? c > 0 : c < 0) ++ranked.rank;
    }
  }
  return std::optional<RankedMember>(ranked);
}

namespace {

// Positions [start, start + count) of Redis's order for ranks
// [start, stop] under Redis's index rules; count 0 when empty.
struct RankWindow {
  uint64_t start = 0;
  uint64_t count = 0;
};
absl::StatusOr<RankWindow> WindowOf(const SortedSet& set, int64_t start,
                                    int64_t stop) {
  // Only negative indices need the size; the end of the board clamps the
  // others by itself.
  if (start < 0 || stop < 0) {
    absl::StatusOr<size_t> size = set.board->Size();
    if (!size.ok()) return size.status();
    if (start < 0) start += static_cast<int64_t>(*size);
    if (stop < 0) stop += static_cast<int64_t>(*size);
  }
  start = std::max<int64_t>(start, 0);
  if (start > stop) return RankWindow();
  return RankWindow{
      static_cast<uint64_t>(start),
      static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) + 1};
}

}  // namespace

absl::StatusOr<std::vector<NamedEntry>> ReadRankRange(const SortedSet& set,
                                                      int64_t start,
                                                      int64_t stop, bool rev,
                                                      Naming naming) {
  absl::StatusOr<RankWindow> window = WindowOf(set, start, stop);
  if (!window.ok()) return window.status();
  if (window->count == 0) return std::vector<NamedEntry>();
  return ReadOrdered(set, ScoreRange{}, rev, window->start, window->count,
                     naming);
}

absl::Status VisitRankRange(
    const SortedSet& set, int64_t start, int64_t stop, bool rev,
    absl::FunctionRef<void(size_t)> on_count,
    absl::FunctionRef<void(absl::string_view, int64_t)> visit) {
  absl::StatusOr<RankWindow> window = WindowOf(set, start, stop);
  if (!window.ok()) return window.status();
  return VisitOrdered(set, ScoreRange{}, rev, window->start, window->count,
                      on_count, visit);
}

}  // namespace feedcore::server
