// Unit tests of RankedBtree: order, counts (ranks), bounds, leaf links in
// both directions, in-place and moving updates, splits and merges on trees
// of several levels, and randomized comparisons with a sorted std::set that
// check every invariant along the way.
#include "leaderboard/ranked_btree.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <vector>

#include "support/test_util.h"

namespace feedcore::internal {

inline std::ostream& operator<<(std::ostream& os, const RankKey& k) {
  return os << "{score=" << k.score << " seq=" << k.seq
            << " member=" << k.member << "}";
}

namespace {

using Position = RankedBtree::Position;

struct ByRank {
  bool operator()(const RankKey& a, const RankKey& b) const {
    return RanksAbove(a, b);
  }
};
using Reference = std::set<RankKey, ByRank>;

std::vector<RankKey> Forward(const RankedBtree& tree) {
  std::vector<RankKey> keys;
  for (Position at = tree.First(); at.valid(); at = at.next()) {
    keys.push_back(at.key());
  }
  return keys;
}

std::vector<RankKey> Backward(const RankedBtree& tree) {
  std::vector<RankKey> keys;
  for (Position at = tree.Last(); at.valid(); at = at.prev()) {
    keys.push_back(at.key());
  }
  return keys;
}

// Checks the bounds of `probes` keys (present or not) against the reference.
void CheckBounds(const RankedBtree& tree, const Reference& ref,
                 const std::vector<RankKey>& probes) {
  for (const RankKey& probe : probes) {
    const auto lower = ref.lower_bound(probe);
    const auto upper = ref.upper_bound(probe);
    const size_t lower_index =
        static_cast<size_t>(std::distance(ref.begin(), lower));
    const size_t upper_index =
        static_cast<size_t>(std::distance(ref.begin(), upper));
    INFO("probe " << probe);
    CHECK(tree.CountAbove(probe) == lower_index);
    size_t index = 12345;
    Position at = tree.LowerBound(probe, &index);
    CHECK(index == lower_index);
    CHECK(at.valid() == (lower != ref.end()));
    if (at.valid() && lower != ref.end()) CHECK(at.key() == *lower);
    index = 12345;
    at = tree.UpperBound(probe, &index);
    CHECK(index == upper_index);
    CHECK(at.valid() == (upper != ref.end()));
    if (at.valid() && upper != ref.end()) CHECK(at.key() == *upper);
  }
}

// Select(i) is the entry at position i of `expected` (the tree's keys
// best first), and its LowerBound index is i again; none past the end.
void CheckSelect(const RankedBtree& tree,
                 const std::vector<RankKey>& expected) {
  for (size_t i = 0; i < expected.size(); ++i) {
    const Position at = tree.Select(i);
    REQUIRE(at.valid());
    CHECK(at.key() == expected[i]);
    size_t index = 0;
    CHECK(tree.LowerBound(at.key(), &index) == at);
    CHECK(index == i);
  }
  CHECK_FALSE(tree.Select(expected.size()).valid());
  CHECK_FALSE(tree.Select(~size_t{0}).valid());
}

// Compares everything the tree answers with the reference.
void CheckAgainst(const RankedBtree& tree, const Reference& ref,
                  const std::vector<RankKey>& probes) {
  REQUIRE(tree.CheckInvariants());
  REQUIRE(tree.size() == ref.size());
  const std::vector<RankKey> expected(ref.begin(), ref.end());
  CHECK(Forward(tree) == expected);
  CHECK(Backward(tree) ==
        std::vector<RankKey>(expected.rbegin(), expected.rend()));
  CheckBounds(tree, ref, probes);
  CheckSelect(tree, expected);
}

TEST_CASE("RanksAbove: score, then sequence, then member") {
  CHECK(RanksAbove({10, 5, 5}, {9, 1, 1}));
  CHECK_FALSE(RanksAbove({9, 1, 1}, {10, 5, 5}));
  CHECK(RanksAbove({10, 1, 9}, {10, 2, 1}));
  CHECK(RanksAbove({10, 1, 1}, {10, 1, 2}));
  CHECK_FALSE(RanksAbove({10, 1, 1}, {10, 1, 1}));
  CHECK(RanksAbove({-1, 0, 0}, {std::numeric_limits<int64_t>::min(), 0, 0}));
  CHECK(RanksAbove({std::numeric_limits<int64_t>::max(), 0, 0}, {0, 0, 0}));
}

TEST_CASE("an empty tree") {
  RankedBtree tree;
  CHECK(tree.empty());
  CHECK_FALSE(tree.First().valid());
  CHECK_FALSE(tree.Last().valid());
  CHECK(tree.inner_levels() == 0);
  CHECK(tree.bytes_used() == 0);
  CHECK(tree.CountAbove({0, 0, 0}) == 0);
  size_t index = 7;
  CHECK_FALSE(tree.LowerBound({5, 0, 1}, &index).valid());
  CHECK(index == 0);
  index = 7;
  CHECK_FALSE(tree.UpperBound({5, 0, 1}, &index).valid());
  CHECK(index == 0);
  CHECK_FALSE(tree.Select(0).valid());
  CHECK(tree.CheckInvariants());
}

TEST_CASE("inserts in any order come out ranked, with exact positions") {
  // 500 entries fit in a few leaves under one root; 20,000 take two inner
  // levels.
  for (const uint64_t count : {uint64_t{500}, uint64_t{20'000}}) {
    RankedBtree tree;
    Reference ref;
    constexpr uint64_t kRngSeed = 1;
    INFO("seed = " << kRngSeed << ", count = " << count);
    std::mt19937_64 rng(kRngSeed);
    std::vector<RankKey> probes;
    for (uint64_t member = 1; member <= count; ++member) {
      // Few distinct scores, so that sequence and member break many ties.
      const RankKey key{static_cast<int64_t>(rng() % 21) - 10, rng() % 4,
                        member};
      tree.Insert(key);
      ref.insert(key);
      if (member % (count / 100) == 0) {
        probes.push_back(key);
        probes.push_back({key.score, key.seq, 0});
        probes.push_back({key.score + 1, 0, 0});
      }
    }
    CheckAgainst(tree, ref, probes);
    CHECK(tree.inner_levels() >= (count > 10'000 ? 2 : 1));
    size_t position = 0;
    for (Position at = tree.First(); at.valid(); at = at.next()) {
      REQUIRE(tree.CountAbove(at.key()) == position++);
    }
  }
}

TEST_CASE("extreme scores and sequences") {
  RankedBtree tree;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr uint64_t kSeqMax = std::numeric_limits<uint64_t>::max();
  tree.Insert({kMin, kSeqMax, 1});
  tree.Insert({kMax, 0, 2});
  tree.Insert({0, 7, 3});
  tree.Insert({kMax, kSeqMax, kSeqMax});
  tree.Insert({kMin, 0, 4});
  REQUIRE(tree.CheckInvariants());
  const std::vector<RankKey> expected = {{kMax, 0, 2},
                                         {kMax, kSeqMax, kSeqMax},
                                         {0, 7, 3},
                                         {kMin, 0, 4},
                                         {kMin, kSeqMax, 1}};
  CHECK(Forward(tree) == expected);
  CHECK(tree.CountAbove({kMin, kSeqMax, kSeqMax}) == 5);
  CHECK(tree.CountAbove({kMax, 0, 0}) == 0);
}

TEST_CASE("updates: within a leaf, to the ends, across leaves") {
  RankedBtree tree;
  tree.Insert({100, 1, 1});
  tree.Insert({50, 2, 2});
  tree.Insert({10, 3, 3});
  REQUIRE(tree.CheckInvariants());

  // 50 -> 60 stays between 100 and 10.
  tree.Update({50, 2, 2}, {60, 4, 2});
  CHECK(tree.CheckInvariants());
  CHECK(Forward(tree) ==
        std::vector<RankKey>{{100, 1, 1}, {60, 4, 2}, {10, 3, 3}});

  // 10 -> 200 moves to the front.
  tree.Update({10, 3, 3}, {200, 5, 3});
  CHECK(tree.CheckInvariants());
  CHECK(tree.First().key() == RankKey{200, 5, 3});
  CHECK(tree.Last().key() == RankKey{60, 4, 2});

  // An equal score with a later sequence goes behind the earlier one.
  tree.Update({60, 4, 2}, {100, 6, 2});
  CHECK(tree.CheckInvariants());
  CHECK(Forward(tree) ==
        std::vector<RankKey>{{200, 5, 3}, {100, 1, 1}, {100, 6, 2}});

  // Down to the end.
  tree.Update({200, 5, 3}, {-5, 7, 3});
  CHECK(tree.CheckInvariants());
  CHECK(tree.Last().key() == RankKey{-5, 7, 3});
  CHECK(tree.Last().prev().key() == RankKey{100, 6, 2});

  // The same key again changes nothing.
  tree.Update({-5, 7, 3}, {-5, 7, 3});
  CHECK(tree.CheckInvariants());
  CHECK(tree.size() == 3);

  // On a tree of many leaves: small moves (mostly within a leaf), and
  // moves from one end to the other, keep every count exact.
  RankedBtree big;
  Reference ref;
  std::vector<RankKey> keys;
  for (uint64_t member = 0; member < 10'000; ++member) {
    keys.push_back({static_cast<int64_t>(member * 10), 0, member});
    big.Insert(keys.back());
    ref.insert(keys.back());
  }
  REQUIRE(big.inner_levels() >= 1);
  const size_t bytes = big.bytes_used();
  std::mt19937_64 rng(5);
  for (int step = 0; step < 2'000; ++step) {
    RankKey& key = keys[rng() % keys.size()];
    RankKey moved = key;
    moved.score += static_cast<int64_t>(rng() % 41) - 20;
    moved.seq = static_cast<uint64_t>(step) + 1;
    ref.erase(key);
    ref.insert(moved);
    big.Update(key, moved);
    key = moved;
  }
  // Small moves keep the shape: no node was added or freed overall by
  // more than a few splits.
  CHECK(big.bytes_used() <= bytes + 4 * 2'624);
  CheckAgainst(big, ref, {keys[0], keys[5'000], {0, 0, 0}, {50'000, 0, 0}});
  for (int step = 0; step < 200; ++step) {
    RankKey& key = keys[rng() % keys.size()];
    RankKey moved = key;
    moved.score = step % 2 == 0 ? 1'000'000 + step : -1'000'000 - step;
    ref.erase(key);
    ref.insert(moved);
    big.Update(key, moved);
    key = moved;
  }
  CheckAgainst(big, ref, {keys[1], keys[9'999], {0, 0, 0}, {999'999, 0, 0}});
}

TEST_CASE("erase in random order down to empty, through every level") {
  RankedBtree tree;
  Reference ref;
  std::vector<RankKey> keys;
  constexpr uint64_t kCount = 60'000;
  for (uint64_t member = 0; member < kCount; ++member) {
    const RankKey key{static_cast<int64_t>(member % 1'717), member, member};
    keys.push_back(key);
    tree.Insert(key);
    ref.insert(key);
  }
  REQUIRE(tree.CheckInvariants());
  CHECK(tree.inner_levels() >= 2);
  constexpr uint64_t kRngSeed = 2;
  INFO("seed = " << kRngSeed);
  std::mt19937_64 rng(kRngSeed);
  std::shuffle(keys.begin(), keys.end(), rng);
  for (size_t i = 0; i < keys.size(); ++i) {
    ref.erase(keys[i]);
    tree.Erase(keys[i]);
    if (i % 997 == 0 || ref.size() < 200) {
      INFO("erased " << i + 1);
      REQUIRE(tree.CheckInvariants());
      REQUIRE(tree.size() == ref.size());
    }
    if (i % 9'973 == 0) CheckAgainst(tree, ref, {keys[i], {800, 0, 0}});
  }
  CHECK(tree.empty());
  CHECK(tree.inner_levels() == 0);
  CHECK(tree.bytes_used() == 0);
  CHECK_FALSE(tree.First().valid());
  CHECK_FALSE(tree.Last().valid());
  // Usable again after emptying.
  tree.Insert({1, 1, 1});
  CHECK(tree.CheckInvariants());
  CHECK(tree.size() == 1);
}

TEST_CASE("erasing keeps leaves at least a quarter full") {
  RankedBtree tree;
  std::vector<RankKey> keys;
  for (uint64_t member = 0; member < 30'000; ++member) {
    keys.push_back({static_cast<int64_t>(member), 0, member});
    tree.Insert(keys.back());
  }
  std::mt19937_64 rng(11);
  std::shuffle(keys.begin(), keys.end(), rng);
  // Erase 90%: the survivors must not be left in near-empty leaves.
  for (size_t i = 0; i < 27'000; ++i) tree.Erase(keys[i]);
  REQUIRE(tree.CheckInvariants());
  const size_t leaves_upper_bound =
      tree.size() / (RankedBtree::kLeafCapacity / 4) + 1;
  CHECK(tree.bytes_used() <
        leaves_upper_bound * sizeof(RankedBtree::Leaf) * 3 / 2);
}

TEST_CASE("a sorted load fills its leaves") {
  RankedBtree tree;
  constexpr uint64_t kCount = 100'000;
  // Best first: every insert lands at the end.
  for (uint64_t member = 0; member < kCount; ++member) {
    tree.Insert({static_cast<int64_t>(kCount - member), 0, member});
  }
  REQUIRE(tree.CheckInvariants());
  const size_t full_leaves =
      (kCount + RankedBtree::kLeafCapacity - 1) / RankedBtree::kLeafCapacity;
  // Leaves plus a few percent of inner nodes.
  CHECK(tree.bytes_used() < full_leaves * sizeof(RankedBtree::Leaf) * 21 / 20);
  size_t position = 0;
  for (Position at = tree.First(); at.valid(); at = at.next(), ++position) {
    REQUIRE(at.key().member == position);
  }
  CHECK(position == kCount);
}

TEST_CASE("many equal scores: ties ordered by sequence and member") {
  RankedBtree tree;
  Reference ref;
  std::mt19937_64 rng(7);
  for (uint64_t member = 0; member < 10'000; ++member) {
    // Everyone at score 0, as after a season reset; a few sequence values.
    const RankKey key{0, rng() % 3, member};
    tree.Insert(key);
    ref.insert(key);
  }
  CheckAgainst(
      tree, ref,
      {{0, 0, 0}, {0, 1, 5'000}, {0, 2, 10'000}, {1, 0, 0}, {-1, 0, 0}});
  // Moving one of them up by a point puts it first.
  const RankKey some = *std::next(ref.begin(), 4'321);
  const RankKey up{1, 9, some.member};
  tree.Update(some, up);
  ref.erase(some);
  ref.insert(up);
  CHECK(tree.First().key() == up);
  CheckAgainst(tree, ref, {some, up});
}

TEST_CASE("BoundMany gives what each tree's bounds give") {
  // More trees than one group of interleaved descents, of varied sizes
  // and heights (empty ones included).
  constexpr size_t kTrees = 37;
  std::vector<std::unique_ptr<RankedBtree>> trees;
  std::vector<const RankedBtree*> pointers;
  constexpr uint64_t kRngSeed = 3;
  INFO("seed = " << kRngSeed);
  std::mt19937_64 rng(kRngSeed);
  uint64_t member = 0;
  for (size_t t = 0; t < kTrees; ++t) {
    trees.push_back(std::make_unique<RankedBtree>());
    const size_t size = t % 5 == 0 ? 0 : t % 7 == 0 ? 20'000 : rng() % 400;
    for (size_t i = 0; i < size; ++i) {
      trees.back()->Insert(
          {static_cast<int64_t>(rng() % 50), rng() % 3, member++});
    }
    pointers.push_back(trees.back().get());
  }
  for (int probe = 0; probe < 200; ++probe) {
    const RankKey key{static_cast<int64_t>(rng() % 54) - 2, rng() % 4,
                      rng() % member};
    for (bool upper : {false, true}) {
      std::vector<Position> positions(kTrees);
      std::vector<size_t> indexes(kTrees);
      RankedBtree::BoundMany(pointers.data(), kTrees, key, upper,
                             positions.data(), indexes.data());
      std::vector<size_t> counts_only(kTrees);
      RankedBtree::BoundMany(pointers.data(), kTrees, key, upper, nullptr,
                             counts_only.data());
      for (size_t t = 0; t < kTrees; ++t) {
        size_t index = 0;
        const Position at = upper ? trees[t]->UpperBound(key, &index)
                                  : trees[t]->LowerBound(key, &index);
        CHECK(positions[t] == at);
        CHECK(indexes[t] == index);
        CHECK(counts_only[t] == index);
      }
    }
  }
}

TEST_CASE("write hints: run to the leaf, or stop once nodes are freed") {
  RankedBtree empty;
  RankedBtree::WriteHint hint;
  empty.StartWriteHint({5, 0, 5}, 6, hint);
  CHECK(hint.done());
  CHECK_FALSE(hint.fetched());

  // Enough entries for two inner levels.
  RankedBtree tree;
  constexpr int64_t kEntries = 64 * 64 * 2;
  for (int64_t i = 0; i < kEntries; ++i) {
    tree.Insert({i, 0, static_cast<uint64_t>(i)});
  }
  REQUIRE(tree.inner_levels() == 2);
  const RankKey key{100, 0, 100};
  // Two phases per inner level, one in the leaf.
  const int phases = 2 * tree.inner_levels() + 1;
  tree.StartWriteHint(key, 150, hint);
  for (int i = 0; i < phases; ++i) {
    CHECK_FALSE(hint.done());
    tree.AdvanceWriteHint(hint);
  }
  CHECK(hint.done());
  CHECK(hint.fetched());
  tree.AdvanceWriteHint(hint);  // nothing left to do
  CHECK(hint.fetched());

  // A hint that reached the leaf, then the leaf and its neighbours are
  // emptied and merged away: the hint must stop without reading them
  // (AddressSanitizer would catch a read of the freed leaf).
  tree.StartWriteHint(key, 150, hint);
  for (int i = 0; i + 1 < phases; ++i) tree.AdvanceWriteHint(hint);
  REQUIRE_FALSE(hint.done());
  for (int64_t i = 0; i < 1000; ++i) {
    if (i != key.score) tree.Erase({i, 0, static_cast<uint64_t>(i)});
  }
  REQUIRE(tree.CheckInvariants());
  tree.AdvanceWriteHint(hint);
  CHECK(hint.done());
  CHECK_FALSE(hint.fetched());

  // Hints change nothing, and hinted writes write the same.
  const std::vector<RankKey> before = Forward(tree);
  for (int64_t i = 1000; i < 1100; ++i) {
    tree.StartWriteHint({i, 0, static_cast<uint64_t>(i)}, i + 5000, hint);
    while (!hint.done()) tree.AdvanceWriteHint(hint);
  }
  CHECK(Forward(tree) == before);
  // The last hint went to another key: the update descends on its own.
  tree.Update({1000, 0, 1000}, {6000, 0, 1000}, &hint);
  tree.Insert({-7, 0, kEntries + 1}, /*hinted=*/true);
  CHECK(tree.Last().key() == RankKey{-7, 0, kEntries + 1});
  CHECK(tree.First().key() == RankKey{kEntries - 1, 0, kEntries - 1});
  CHECK(tree.CheckInvariants());
}

TEST_CASE("a hint's leaf serves its own key while the shape stays") {
  RankedBtree tree;
  constexpr int64_t kEntries = 64 * 64 * 2;
  for (int64_t i = 0; i < kEntries; ++i) {
    tree.Insert({i * 10, 0, static_cast<uint64_t>(i)});
  }
  RankedBtree::WriteHint hint;
  const auto run = [&](const RankKey& key, int64_t new_score) {
    tree.StartWriteHint(key, new_score, hint);
    while (!hint.done()) tree.AdvanceWriteHint(hint);
    REQUIRE(hint.fetched());
  };

  // Unchanged shape: within the leaf, then out of it.
  run({5000, 0, 500}, 5003);
  tree.Update({5000, 0, 500}, {5003, 0, 500}, &hint);
  run({5003, 0, 500}, 90'000);
  tree.Update({5003, 0, 500}, {90'000, 0, 500}, &hint);
  CHECK(tree.CheckInvariants());

  // The key's leaf fills up with better entries and splits after the
  // hint: the entry moves on to another leaf, so the hint's leaf must not
  // be used.
  const RankKey key{20'000, 0, 2000};
  run(key, 20'001);
  for (uint64_t m = 0; m < 200; ++m) {
    tree.Insert({20'000 + 5, 0, kEntries + m});
  }
  tree.Update(key, {20'001, 0, 2000}, &hint);
  CHECK(tree.CheckInvariants());
  size_t index = 0;
  CHECK(tree.LowerBound({20'001, 0, 2000}, &index).key() ==
        RankKey{20'001, 0, 2000});

  // Its leaf merges away after the hint (erases around it).
  const RankKey far{30'000, 0, 3000};
  run(far, 30'002);
  for (int64_t i = 2900; i < 3100; ++i) {
    if (i != 3000) tree.Erase({i * 10, 0, static_cast<uint64_t>(i)});
  }
  tree.Update(far, {30'002, 0, 3000}, &hint);
  CHECK(tree.CheckInvariants());
  CHECK(tree.LowerBound({30'002, 0, 3000}, &index).key() ==
        RankKey{30'002, 0, 3000});
}

TEST_CASE("Select walks the counts to any position, at every depth") {
  // One leaf; a root over leaves; three inner levels. Scores repeat, so
  // that the positions of ties come from sequences and members.
  for (const uint64_t count :
       {uint64_t{1}, uint64_t{64}, uint64_t{3'000}, uint64_t{300'000}}) {
    INFO("count = " << count);
    RankedBtree tree;
    std::mt19937_64 rng(count);
    std::vector<RankKey> keys;
    for (uint64_t m = 0; m < count; ++m) {
      keys.push_back({static_cast<int64_t>(rng() % 1000) - 500, rng() % 3, m});
      tree.Insert(keys.back());
    }
    std::sort(keys.begin(), keys.end(), RanksAbove);
    REQUIRE(tree.CheckInvariants());
    if (count == 300'000) CHECK(tree.inner_levels() >= 2);
    // Every position of the small trees; the ends, the block edges of the
    // root and a random sample of the large one.
    if (count <= 3'000) {
      CheckSelect(tree, keys);
    } else {
      std::vector<size_t> picks = {0, 1, 63, 64, 65, count - 2, count - 1};
      for (int i = 0; i < 2000; ++i) picks.push_back(rng() % count);
      for (const size_t i : picks) {
        INFO("index " << i);
        REQUIRE(tree.Select(i).valid());
        CHECK(tree.Select(i).key() == keys[i]);
      }
      CHECK_FALSE(tree.Select(count).valid());
    }
    // Erase every other entry: counts and leaves shrink, and positions
    // close up.
    std::vector<RankKey> kept;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (i % 2 == 0) {
        tree.Erase(keys[i]);
      } else {
        kept.push_back(keys[i]);
      }
    }
    REQUIRE(tree.CheckInvariants());
    if (kept.size() <= 3'000) {
      CheckSelect(tree, kept);
    } else {
      for (int i = 0; i < 2000; ++i) {
        const size_t at = rng() % kept.size();
        CHECK(tree.Select(at).key() == kept[at]);
      }
    }
  }
}

TEST_CASE("randomized operations match a sorted set at every step") {
  const uint64_t seed = testing::EnvU64("FEEDCORE_MODEL_SEED", 20240611);
  INFO("seed = " << seed << " (set FEEDCORE_MODEL_SEED to reproduce)");
  // A small board checked in full after every step, then a large one
  // (several levels, splits and merges of inner nodes) checked often.
  struct Config {
    uint64_t members;
    int steps;
    int check_every;
    int64_t scores;
  };
  // Leaves from operator new, then from a pool that maps chunks past its
  // first 64 KiB, as a leaderboard's does past 2 MiB.
  for (const bool pooled : {false, true}) {
    for (const Config config :
         {Config{64, 4'000, 1, 13}, Config{300, 6'000, 1, 200},
          Config{40'000, 150'000, 5'000, 100'000}}) {
      INFO("members = " << config.members << (pooled ? ", pooled" : ""));
      std::mt19937_64 rng(seed);
      HugePagePool pool(sizeof(RankedBtree::Leaf), 64 * 1024);
      std::optional<RankedBtree> holder;
      holder.emplace(pooled ? &pool : nullptr);
      RankedBtree& tree = *holder;
      Reference ref;
      std::map<uint64_t, RankKey> by_member;
      uint64_t seq = 0;
      // A hint started towards some member's key, advanced one phase a
      // step while other writes go on, and passed to that member's next
      // update.
      RankedBtree::WriteHint hint;
      uint64_t hinted_member = config.members;  // none
      for (int step = 0; step < config.steps; ++step) {
        tree.AdvanceWriteHint(hint);
        const uint64_t member = rng() % config.members;
        const int64_t score =
            static_cast<int64_t>(rng() % static_cast<uint64_t>(config.scores)) -
            config.scores / 2;
        const int op = static_cast<int>(rng() % 10);
        auto it = by_member.find(member);
        if (it == by_member.end()) {
          const RankKey key{score, ++seq, member};
          by_member[member] = key;
          tree.Insert(key);
          ref.insert(key);
        } else if (op < 3) {
          ref.erase(it->second);
          tree.Erase(it->second);
          by_member.erase(it);
        } else {
          // Near the old score (mostly within its leaf) or anywhere.
          const int64_t target = op < 6 ? it->second.score + score % 8 : score;
          const RankKey key{target, op < 8 ? ++seq : it->second.seq, member};
          ref.erase(it->second);
          ref.insert(key);
          tree.Update(it->second, key,
                      hinted_member == member ? &hint : nullptr);
          it->second = key;
        }
        if (step % 3 == 0 && !by_member.empty()) {
          const auto pick = by_member.lower_bound(rng() % config.members);
          if (pick != by_member.end()) {
            hinted_member = pick->first;
            tree.StartWriteHint(pick->second, pick->second.score + 3, hint);
          }
        }
        if (step % config.check_every == 0 || step + 1 == config.steps) {
          INFO("step " << step);
          CheckAgainst(
              tree, ref,
              {{score, seq, member}, {score, 0, 0}, {score, seq + 1, 0}});
          CHECK(pool.live_slots() == (pooled ? tree.leaves() : 0));
        }
      }
      holder.reset();
      CHECK(pool.live_slots() == 0);
    }
  }
}

}  // namespace
}  // namespace feedcore::internal
