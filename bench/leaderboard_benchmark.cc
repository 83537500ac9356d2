// Micro-benchmarks of feedcore's leaderboard (docs/benchmarks.md says how
// to read them, docs/benchmark-results.md has the results):
//
//   BM_Increment/<keys>/<scores>/<tie>/partitions:<N>/threads:<T>
//       Increment(member, delta) with a delta of 1..100 on a board of
//       1,000,000 members, on 1 and 2 threads, with 1 and 16 partitions.
//       <keys> is `uniform` (every member equally likely) or `zipf` (Zipf,
//       theta 0.99: a few hot members get most updates, as in YCSB).
//       <scores> is how the board was filled: `dense` (scores drawn from
//       [0, 1,000,000): neighbours are about one point apart, so nearly
//       every increment passes dozens of members of the board, a few of
//       its own partition) or `spread` (scores drawn from [0, 10^12): an
//       increment almost never passes anyone). <tie> is
//       `update_order` (the default tie-break: every change takes a number
//       from one board-wide counter) or `member_id` (no shared counter).
//       items_per_second is the total rate of all threads (wall time).
//   BM_Increment/uniform/dense/update_order/partitions:16/ranks:dense
//       the same Increment on a RankStyle::kDense board, whose index of
//       distinct scores every score change also updates (one or two more
//       locked O(log n) updates): its cost next to the kUnique board above.
//   BM_TopKAmong/members:10000/k:10  TopKAmong of 10,000 random members of
//       the dense board in 16 partitions (a friends' board): one score
//       lookup per member under the snapshot, then a partial sort.
//   BM_TopK/<path>/k:100         top 100 of the dense board in 16
//       partitions: `cached` (Leaderboard::TopK, which returns its copy of
//       the board's best entries while no partition's best entries
//       changed), `lazy_merge` (the merge under every partition's lock,
//       reading k + N - 1 entries), `read_k_per_partition` (copy the best
//       k of every partition, sort N x k, keep k), and `std_set_mutex`
//       (feedcore-bench's baseline, a std::set under one mutex, with the
//       same scores), in the same run. `cached_after_top_write` and
//       `lazy_merge_after_top_write` precede every read with an Increment
//       of the leader, so that the cache never holds: the write plus the
//       merge (plus, cached, the copy it publishes). entries_read is per
//       call.
//   BM_Rank/partitions:<N>       Rank of a random member, N = 16, 4, 1.
//   BM_Around/partitions:16      Around(member, 10, 10) of a random member.
//   BM_ReadPage/partitions:16    a 50-entry best-first page from a cursor
//       at a random position.
//   BM_Score/partitions:16       Score of a random member.
//   BM_ReadPageAtOffset/<order>/partitions:16/offset:<K>
//       a 10-entry page that starts K entries into the board (K up to
//       999,990: the last page), found by selection among the partitions;
//       entries_read and descents are per call.
//   BM_CountInRange/partitions:16  entries with a score in a random range
//       10,000 points wide.
//   BM_Percentile/partitions:16  Percentile of a random member.
//   BM_CreateBoard/partitions:16 LeaderboardRegistry::GetOrCreate of a new
//       name: the cost of one more board.
//
// Every Increment configuration starts from a freshly filled board (member
// ids 0..999,999); the read benchmarks share one dense board per partition
// count. Keys, deltas, scores and probes come from fixed-seed generators and
// are drawn before the timed loops. By default each benchmark runs 5
// repetitions and reports only the aggregates (mean, median, stddev, cv);
// `--benchmark_*` flags on the command line override that.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bench/benchmark_main.h"
#include "bench/driver/leaderboard_baseline.h"
#include "feedcore/feedcore.h"
#include "leaderboard/leaderboard_impl.h"

namespace feedcore::bench {
namespace {

constexpr size_t kMembers = 1'000'000;
// Scores of a filled board are drawn from [0, range).
constexpr int64_t kDenseRange = 1'000'000;
constexpr int64_t kSpreadRange = 1'000'000'000'000;
constexpr uint64_t kFillSeed = 20240612;
// Pre-drawn keys per distribution (a power of two), shared by the threads,
// which start at different offsets.
constexpr size_t kDrawn = size_t{1} << 22;
constexpr uint64_t kKeySeed = 777;
constexpr int64_t kIncrementsPerThread = 1'000'000;
constexpr double kZipfTheta = 0.99;

// Zipf-distributed ranks 0..n-1 (0 the most frequent), by the method of
// Gray et al., "Quickly generating billion-record synthetic databases"
// (the generator YCSB uses).
class Zipf {
 public:
  Zipf(size_t n, double theta) : n_(static_cast<double>(n)), theta_(theta) {
    double zeta_n = 0;
    for (size_t i = 1; i <= n; ++i) {
      zeta_n += 1.0 / std::pow(static_cast<double>(i), theta);
    }
    const double zeta_2 = 1.0 + 1.0 / std::pow(2.0, theta);
    zeta_n_ = zeta_n;
    alpha_ = 1.0 / (1.0 - theta);
    eta_ = (1.0 - std::pow(2.0 / n_, 1.0 - theta)) / (1.0 - zeta_2 / zeta_n);
  }

  template <typename Rng>
  uint64_t operator()(Rng& rng) {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    const double uz = u * zeta_n_;
    if (uz < 1.0) return 0;
    if (uz < 1.0 + std::pow(0.5, theta_)) return 1;
    const double rank = n_ * std::pow(eta_ * u - eta_ + 1.0, alpha_);
    return std::min(static_cast<uint64_t>(rank), static_cast<uint64_t>(n_) - 1);
  }

 private:
  double n_, theta_, zeta_n_ = 0, alpha_ = 0, eta_ = 0;
};

enum class Keys { kUniform, kZipf };

struct Draws {
  std::vector<uint32_t> members;  // kDrawn member ids
  std::vector<int8_t> deltas;     // kDrawn deltas, 1..100
};

const Draws& DrawsFor(Keys keys) {
  static const Draws* const draws[2] = {
      [] {
        auto* d = new Draws;
        std::mt19937_64 rng(kKeySeed);
        for (size_t i = 0; i < kDrawn; ++i) {
          d->members.push_back(static_cast<uint32_t>(rng() % kMembers));
          d->deltas.push_back(static_cast<int8_t>(1 + rng() % 100));
        }
        return d;
      }(),
      [] {
        auto* d = new Draws;
        std::mt19937_64 rng(kKeySeed + 1);
        Zipf zipf(kMembers, kZipfTheta);
        for (size_t i = 0; i < kDrawn; ++i) {
          d->members.push_back(static_cast<uint32_t>(zipf(rng)));
          d->deltas.push_back(static_cast<int8_t>(1 + rng() % 100));
        }
        return d;
      }(),
  };
  return *draws[keys == Keys::kUniform ? 0 : 1];
}

std::unique_ptr<internal::LeaderboardImpl> FilledBoard(size_t partitions,
                                                       TieBreak tie_break,
                                                       int64_t range,
                                                       RankStyle rank_style) {
  auto board = std::make_unique<internal::LeaderboardImpl>(
      LeaderboardOptions{.partitions = partitions,
                         .tie_break = tie_break,
                         .rank_style = rank_style});
  std::mt19937_64 rng(kFillSeed);
  for (MemberId m = 0; m < kMembers; ++m) {
    if (!board->Set(m, static_cast<int64_t>(rng() % range)).ok()) {
      Die("fill failed");
    }
  }
  return board;
}

// The board every thread of the running benchmark uses. Increment
// benchmarks get a fresh one per configuration (a new `name`); the read
// benchmarks share one per partition count.
struct SharedBoard {
  std::mutex mu;
  std::string name;                                  // guarded by mu
  std::unique_ptr<internal::LeaderboardImpl> board;  // guarded by mu
};

SharedBoard& Shared() {
  static SharedBoard* const shared = new SharedBoard;
  return *shared;
}

internal::LeaderboardImpl* AcquireBoard(
    const std::string& name, size_t partitions, TieBreak tie_break,
    int64_t range, RankStyle rank_style = RankStyle::kUnique) {
  SharedBoard& shared = Shared();
  std::lock_guard<std::mutex> lock(shared.mu);
  if (shared.name != name) {
    shared.board.reset();  // at most one filled board in memory
    shared.board = FilledBoard(partitions, tie_break, range, rank_style);
    shared.name = name;
  }
  return shared.board.get();
}

void BM_Increment(benchmark::State& state, Keys keys, int64_t range,
                  TieBreak tie_break, size_t partitions, RankStyle rank_style,
                  const std::string& name) {
  const Draws& draws = DrawsFor(keys);
  internal::LeaderboardImpl* const board =
      AcquireBoard(name, partitions, tie_break, range, rank_style);
  size_t pos =
      (static_cast<size_t>(state.thread_index()) * 1'048'573) & (kDrawn - 1);
  for (auto _ : state) {
    absl::StatusOr<int64_t> score =
        board->Increment(draws.members[pos], draws.deltas[pos]);
    benchmark::DoNotOptimize(score);
    pos = (pos + 1) & (kDrawn - 1);
  }
  state.SetItemsProcessed(state.iterations());
}

// The same increments as BM_Increment, `kBatch` per IncrementMany call
// (as many as the Redis comparison pipelines per round trip).
constexpr size_t kBatch = 1000;

void BM_IncrementMany(benchmark::State& state, Keys keys, int64_t range,
                      TieBreak tie_break, size_t partitions,
                      RankStyle rank_style, const std::string& name) {
  const Draws& draws = DrawsFor(keys);
  internal::LeaderboardImpl* const board =
      AcquireBoard(name, partitions, tie_break, range, rank_style);
  // Pre-built calls over the drawn keys, so that the timed loop only calls.
  std::vector<ScoreIncrement> increments(kDrawn);
  for (size_t i = 0; i < kDrawn; ++i) {
    increments[i] = {draws.members[i], draws.deltas[i]};
  }
  size_t pos =
      (static_cast<size_t>(state.thread_index()) * 1'048'000) & (kDrawn - 1);
  for (auto _ : state) {
    std::vector<absl::StatusOr<int64_t>> scores = board->IncrementMany(
        absl::MakeConstSpan(increments).subspan(pos, kBatch));
    benchmark::DoNotOptimize(scores);
    pos = (pos + kBatch) % (kDrawn - kBatch);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kBatch));
}

// Members to probe in the read benchmarks, drawn uniformly.
const std::vector<MemberId>& Probes() {
  static const std::vector<MemberId>* const probes = [] {
    auto* p = new std::vector<MemberId>;
    std::mt19937_64 rng(kKeySeed + 2);
    for (size_t i = 0; i < (size_t{1} << 16); ++i)
      p->push_back(rng() % kMembers);
    return p;
  }();
  return *probes;
}

internal::LeaderboardImpl* ReadBoard(size_t partitions) {
  return AcquireBoard("read/" + std::to_string(partitions), partitions,
                      TieBreak::kEarlierUpdateFirst, kDenseRange);
}

// How BM_TopK reads the top.
enum class TopKPath {
  kCached,             // Leaderboard::TopK
  kLazyMerge,          // the merge under the snapshot (TopKCounted)
  kReadKPerPartition,  // TopKReadingKPerPartition
};

void BM_TopK(benchmark::State& state, TopKPath path, bool write_first) {
  internal::LeaderboardImpl* const board = ReadBoard(16);
  const size_t k = static_cast<size_t>(state.range(0));
  size_t entries_read = 0;
  // With `write_first`, every call follows an Increment of the leader by
  // +1 then -1 in turn, which changes its partition's best entries.
  const MemberId leader = board->TopK(1).value()[0].member;
  int64_t delta = 1;
  for (auto _ : state) {
    if (write_first) {
      if (!board->Increment(leader, delta).ok()) {
        state.SkipWithError("Increment failed");
        break;
      }
      delta = -delta;
    }
    auto top = path == TopKPath::kCached ? board->TopK(k)
               : path == TopKPath::kLazyMerge
                   ? board->TopKCounted(k, &entries_read)
                   : board->TopKReadingKPerPartition(k, &entries_read);
    if (!top.ok() || top->size() != k) {
      state.SkipWithError("TopK failed");
      break;
    }
    benchmark::DoNotOptimize(top);
  }
  state.SetItemsProcessed(state.iterations());
  if (path != TopKPath::kCached) {
    state.counters["entries_read"] = static_cast<double>(entries_read) /
                                     static_cast<double>(state.iterations());
  }
}

// The same top read from feedcore-bench's baseline, a std::set under one
// mutex, filled with the read board's scores.
void BM_TopKStdSet(benchmark::State& state) {
  static StdMapLeaderboard* const baseline = [] {
    auto* b = new StdMapLeaderboard;
    std::mt19937_64 rng(kFillSeed);
    for (MemberId m = 0; m < kMembers; ++m) {
      b->Increment(m, static_cast<int64_t>(rng() % kDenseRange));
    }
    return b;
  }();
  const size_t k = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    auto top = baseline->TopK(k);
    benchmark::DoNotOptimize(top);
  }
  state.SetItemsProcessed(state.iterations());
}

// Sets of distinct random members for TopKAmong, drawn once.
constexpr size_t kAmongMembers = 10'000;
const std::vector<std::vector<MemberId>>& AmongSets() {
  static const std::vector<std::vector<MemberId>>* const sets = [] {
    auto* s = new std::vector<std::vector<MemberId>>(8);
    std::mt19937_64 rng(kKeySeed + 3);
    for (std::vector<MemberId>& set : *s) {
      while (set.size() < kAmongMembers) set.push_back(rng() % kMembers);
      std::sort(set.begin(), set.end());
      set.erase(std::unique(set.begin(), set.end()), set.end());
    }
    return s;
  }();
  return *sets;
}

void BM_TopKAmong(benchmark::State& state) {
  internal::LeaderboardImpl* const board = ReadBoard(16);
  const std::vector<std::vector<MemberId>>& sets = AmongSets();
  const size_t k = static_cast<size_t>(state.range(0));
  size_t i = 0;
  for (auto _ : state) {
    auto top = board->TopKAmong(sets[i++ % sets.size()], k);
    if (!top.ok() || top->size() != k) {
      state.SkipWithError("TopKAmong failed");
      break;
    }
    benchmark::DoNotOptimize(top);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Rank(benchmark::State& state) {
  internal::LeaderboardImpl* const board =
      ReadBoard(static_cast<size_t>(state.range(0)));
  const std::vector<MemberId>& probes = Probes();
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<uint64_t> rank =
        board->Rank(probes[i++ & (probes.size() - 1)]);
    benchmark::DoNotOptimize(rank);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Around(benchmark::State& state) {
  internal::LeaderboardImpl* const board =
      ReadBoard(static_cast<size_t>(state.range(0)));
  const std::vector<MemberId>& probes = Probes();
  size_t i = 0;
  for (auto _ : state) {
    auto around = board->Around(probes[i++ & (probes.size() - 1)], 10, 10);
    benchmark::DoNotOptimize(around);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Score(benchmark::State& state) {
  internal::LeaderboardImpl* const board =
      ReadBoard(static_cast<size_t>(state.range(0)));
  const std::vector<MemberId>& probes = Probes();
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<int64_t> score =
        board->Score(probes[i++ & (probes.size() - 1)]);
    benchmark::DoNotOptimize(score);
  }
  state.SetItemsProcessed(state.iterations());
}

// Cursors at every 1000th rank of `board`, in a shuffled order, collected
// by paging through it once with the largest page. Kept for the last board
// asked about.
const std::vector<std::string>& PageCursors(
    const internal::LeaderboardImpl& board) {
  static uint64_t board_id = 0;
  static std::vector<std::string>* const cursors = new std::vector<std::string>;
  if (board_id != board.board_id()) {
    cursors->clear();
    LeaderboardReadOptions read;
    read.limit = board.options().max_page_size;
    do {
      auto page = board.ReadPage(read);
      if (!page.ok()) Die(page.status().ToString());
      read.cursor = std::move(page->next_cursor);
      if (!read.cursor.empty()) cursors->push_back(read.cursor);
    } while (!read.cursor.empty());
    std::shuffle(cursors->begin(), cursors->end(),
                 std::mt19937_64(kKeySeed + 3));
    board_id = board.board_id();
  }
  return *cursors;
}

void BM_ReadPage(benchmark::State& state) {
  internal::LeaderboardImpl* const board =
      ReadBoard(static_cast<size_t>(state.range(0)));
  const std::vector<std::string>& cursors = PageCursors(*board);
  LeaderboardReadOptions read;
  read.limit = 50;
  size_t i = 0;
  for (auto _ : state) {
    read.cursor = cursors[i++ % cursors.size()];
    auto page = board->ReadPage(read);
    if (!page.ok() || page->entries.size() != read.limit) {
      state.SkipWithError("ReadPage failed");
      break;
    }
    benchmark::DoNotOptimize(page);
  }
  state.SetItemsProcessed(state.iterations());
}

// A page of 10 starting `offset` entries into the board, in either order:
// the selection among partitions finds its first entry without walking
// (one partition: a single descent, as a server's ZRANGE of one key).
// entries_read and descents are per call.
void BM_ReadPageAtOffset(benchmark::State& state, LeaderboardOrder order,
                         size_t partitions) {
  internal::LeaderboardImpl* const board = ReadBoard(partitions);
  LeaderboardReadOptions read;
  read.limit = 10;
  read.order = order;
  read.offset = static_cast<uint64_t>(state.range(0));
  internal::ReadWork work;
  for (auto _ : state) {
    auto page = board->ReadPageCounted(read, &work);
    if (!page.ok() || page->entries.size() != read.limit) {
      state.SkipWithError("ReadPage failed");
      break;
    }
    benchmark::DoNotOptimize(page);
  }
  state.SetItemsProcessed(state.iterations());
  const auto per_call = [&state](size_t total) {
    return static_cast<double>(total) / static_cast<double>(state.iterations());
  };
  state.counters["entries_read"] = per_call(work.entries_read);
  state.counters["descents"] = per_call(work.descents);
}

// CountInRange of a range 10,000 points wide (about 10,000 members of the
// dense board) at a random place.
void BM_CountInRange(benchmark::State& state) {
  internal::LeaderboardImpl* const board =
      ReadBoard(static_cast<size_t>(state.range(0)));
  const std::vector<MemberId>& probes = Probes();
  size_t i = 0;
  for (auto _ : state) {
    const auto min = static_cast<int64_t>(probes[i++ & (probes.size() - 1)]);
    absl::StatusOr<uint64_t> count =
        board->CountInRange({min, min + 10'000, false, false});
    benchmark::DoNotOptimize(count);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Percentile(benchmark::State& state) {
  internal::LeaderboardImpl* const board =
      ReadBoard(static_cast<size_t>(state.range(0)));
  const std::vector<MemberId>& probes = Probes();
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<double> percentile =
        board->Percentile(probes[i++ & (probes.size() - 1)]);
    benchmark::DoNotOptimize(percentile);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_CreateBoard(benchmark::State& state) {
  LeaderboardRegistry registry;
  const LeaderboardOptions options{.partitions =
                                       static_cast<size_t>(state.range(0))};
  uint64_t next = 0;
  for (auto _ : state) {
    auto board =
        registry.GetOrCreate("board-" + std::to_string(next++), options);
    benchmark::DoNotOptimize(board);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["boards"] = static_cast<double>(registry.size());
}

void RegisterIncrement(Keys keys, int64_t range, TieBreak tie_break,
                       size_t partitions,
                       RankStyle rank_style = RankStyle::kUnique) {
  const std::string name =
      std::string("BM_Increment/") +
      (keys == Keys::kUniform ? "uniform" : "zipf") + "/" +
      (range == kDenseRange ? "dense" : "spread") + "/" +
      (tie_break == TieBreak::kEarlierUpdateFirst ? "update_order"
                                                  : "member_id") +
      "/partitions:" + std::to_string(partitions) +
      (rank_style == RankStyle::kDense ? "/ranks:dense" : "");
  benchmark::RegisterBenchmark(name.c_str(),
                               [=](benchmark::State& state) {
                                 BM_Increment(state, keys, range, tie_break,
                                              partitions, rank_style, name);
                               })
      ->Iterations(kIncrementsPerThread)
      ->Threads(1)
      ->Threads(2)
      // Wall time, so that items_per_second is the total rate of all
      // threads rather than the rate per thread.
      ->UseRealTime();
  const std::string many_name = "BM_IncrementMany" + name.substr(12);
  benchmark::RegisterBenchmark(many_name.c_str(),
                               [=](benchmark::State& state) {
                                 BM_IncrementMany(state, keys, range, tie_break,
                                                  partitions, rank_style,
                                                  many_name);
                               })
      ->Iterations(kIncrementsPerThread / static_cast<int64_t>(kBatch))
      ->Threads(1)
      ->Threads(2)
      ->UseRealTime();
}

void RegisterReads(size_t partitions) {
  if (partitions == 16) {
    const struct {
      const char* name;
      TopKPath path;
      bool write_first;
    } top_k_runs[] = {
        {"BM_TopK/cached", TopKPath::kCached, false},
        {"BM_TopK/lazy_merge", TopKPath::kLazyMerge, false},
        {"BM_TopK/read_k_per_partition", TopKPath::kReadKPerPartition, false},
        {"BM_TopK/cached_after_top_write", TopKPath::kCached, true},
        {"BM_TopK/lazy_merge_after_top_write", TopKPath::kLazyMerge, true},
    };
    for (const auto& run : top_k_runs) {
      benchmark::RegisterBenchmark(
          run.name, [path = run.path, write = run.write_first](
                        benchmark::State& s) { BM_TopK(s, path, write); })
          ->ArgName("k")
          ->Arg(100);
    }
    benchmark::RegisterBenchmark("BM_TopK/std_set_mutex", BM_TopKStdSet)
        ->ArgName("k")
        ->Arg(100);
  }
  if (partitions == 16) {
    benchmark::RegisterBenchmark("BM_TopKAmong/members:10000", BM_TopKAmong)
        ->ArgName("k")
        ->Arg(10);
  }
  const auto n = static_cast<int64_t>(partitions);
  benchmark::RegisterBenchmark("BM_Rank", BM_Rank)
      ->ArgName("partitions")
      ->Arg(n);
  if (partitions == 16) {
    benchmark::RegisterBenchmark("BM_Around", BM_Around)
        ->ArgName("partitions")
        ->Arg(n);
    benchmark::RegisterBenchmark("BM_ReadPage", BM_ReadPage)
        ->ArgName("partitions")
        ->Arg(n);
    benchmark::RegisterBenchmark("BM_Score", BM_Score)
        ->ArgName("partitions")
        ->Arg(n);
    benchmark::RegisterBenchmark("BM_ReadPageAtOffset/best_first/partitions:16",
                                 [](benchmark::State& s) {
                                   BM_ReadPageAtOffset(
                                       s, LeaderboardOrder::kBestFirst, 16);
                                 })
        ->ArgName("offset")
        ->Arg(0)
        ->Arg(500'000)
        ->Arg(999'990);
    benchmark::RegisterBenchmark(
        "BM_ReadPageAtOffset/worst_first/partitions:16",
        [](benchmark::State& s) {
          BM_ReadPageAtOffset(s, LeaderboardOrder::kWorstFirst, 16);
        })
        ->ArgName("offset")
        ->Arg(999'990);
    benchmark::RegisterBenchmark("BM_ReadPageAtOffset/best_first/partitions:1",
                                 [](benchmark::State& s) {
                                   BM_ReadPageAtOffset(
                                       s, LeaderboardOrder::kBestFirst, 1);
                                 })
        ->ArgName("offset")
        ->Arg(999'990);
    benchmark::RegisterBenchmark("BM_CountInRange", BM_CountInRange)
        ->ArgName("partitions")
        ->Arg(n);
    benchmark::RegisterBenchmark("BM_Percentile", BM_Percentile)
        ->ArgName("partitions")
        ->Arg(n);
  }
}

void RegisterAll() {
  for (Keys keys : {Keys::kUniform, Keys::kZipf}) {
    for (int64_t range : {kDenseRange, kSpreadRange}) {
      for (size_t partitions : {1, 16}) {
        RegisterIncrement(keys, range, TieBreak::kEarlierUpdateFirst,
                          partitions);
      }
    }
  }
  RegisterIncrement(Keys::kUniform, kSpreadRange, TieBreak::kLowerMemberFirst,
                    16);
  // The cost of dense ranks' index, next to the same board above.
  RegisterIncrement(Keys::kUniform, kDenseRange, TieBreak::kEarlierUpdateFirst,
                    16, RankStyle::kDense);
  // The board of feedcore-bench's leaderboard scenario.
  RegisterIncrement(Keys::kUniform, kDenseRange, TieBreak::kLowerMemberFirst,
                    16);
  // Grouped by partition count, so that each read board is filled once.
  for (size_t partitions : {16, 4, 1}) RegisterReads(partitions);
  benchmark::RegisterBenchmark("BM_CreateBoard", BM_CreateBoard)
      ->ArgName("partitions")
      ->Arg(16);
}

}  // namespace
}  // namespace feedcore::bench

int main(int argc, char** argv) {
  if (!feedcore::bench::InitializeWithDefaults(argc, argv)) return 1;
  benchmark::AddCustomContext("leaderboard_members",
                              std::to_string(feedcore::bench::kMembers));
  benchmark::AddCustomContext("leaderboard_dense_range",
                              std::to_string(feedcore::bench::kDenseRange));
  benchmark::AddCustomContext("leaderboard_spread_range",
                              std::to_string(feedcore::bench::kSpreadRange));
  // Draw the keys before any benchmark runs.
  feedcore::bench::DrawsFor(feedcore::bench::Keys::kUniform);
  feedcore::bench::DrawsFor(feedcore::bench::Keys::kZipf);
  feedcore::bench::Probes();

  feedcore::bench::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
