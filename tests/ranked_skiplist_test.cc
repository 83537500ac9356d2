// Unit tests of RankedSkiplist: order, spans (ranks), bounds, backward
// links, in-place and moving updates, and a randomized comparison with a
// sorted std::set that checks every invariant after every step.
#include "ranked_skiplist.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <set>
#include <vector>

#include "node_arena.h"
#include "test_util.h"

namespace feedcore::internal {

inline std::ostream& operator<<(std::ostream& os, const RankKey& k) {
  return os << "{score=" << k.score << " seq=" << k.seq
            << " member=" << k.member << "}";
}

namespace {

constexpr uint64_t kSeed = 99;

struct ByRank {
  bool operator()(const RankKey& a, const RankKey& b) const {
    return RanksAbove(a, b);
  }
};
using Reference = std::set<RankKey, ByRank>;

std::vector<RankKey> Forward(const RankedSkiplist& list) {
  std::vector<RankKey> keys;
  for (const RankedSkiplist::Node* n = list.First(); n != nullptr;
       n = n->next()) {
    keys.push_back(n->key());
  }
  return keys;
}

std::vector<RankKey> Backward(const RankedSkiplist& list) {
  std::vector<RankKey> keys;
  for (const RankedSkiplist::Node* n = list.Last(); n != nullptr;
       n = n->prev()) {
    keys.push_back(n->key());
  }
  return keys;
}

// Compares everything the list answers with the reference, including
// bounds for `probes` keys that may or may not be present.
void CheckAgainst(const RankedSkiplist& list, const Reference& ref,
                  const std::vector<RankKey>& probes) {
  REQUIRE(list.CheckInvariants());
  REQUIRE(list.size() == ref.size());
  const std::vector<RankKey> expected(ref.begin(), ref.end());
  CHECK(Forward(list) == expected);
  CHECK(Backward(list) ==
        std::vector<RankKey>(expected.rbegin(), expected.rend()));
  for (const RankKey& probe : probes) {
    const auto lower = ref.lower_bound(probe);
    const auto upper = ref.upper_bound(probe);
    const size_t lower_index =
        static_cast<size_t>(std::distance(ref.begin(), lower));
    const size_t upper_index =
        static_cast<size_t>(std::distance(ref.begin(), upper));
    CHECK(list.CountAbove(probe) == lower_index);
    size_t index = 12345;
    const RankedSkiplist::Node* node = list.LowerBound(probe, &index);
    CHECK(index == lower_index);
    CHECK((node == nullptr) == (lower == ref.end()));
    if (node != nullptr && lower != ref.end()) CHECK(node->key() == *lower);
    index = 12345;
    node = list.UpperBound(probe, &index);
    CHECK(index == upper_index);
    CHECK((node == nullptr) == (upper == ref.end()));
    if (node != nullptr && upper != ref.end()) CHECK(node->key() == *upper);
  }
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

TEST_CASE("an empty list") {
  NodeArena arena;
  RankedSkiplist list(&arena, kSeed);
  CHECK(list.empty());
  CHECK(list.First() == nullptr);
  CHECK(list.Last() == nullptr);
  CHECK(list.level() == 1);
  CHECK(list.CountAbove({0, 0, 0}) == 0);
  size_t index = 7;
  CHECK(list.LowerBound({5, 0, 1}, &index) == nullptr);
  CHECK(index == 0);
  CHECK(list.UpperBound({5, 0, 1}, &index) == nullptr);
  CHECK(index == 0);
  CHECK(list.CheckInvariants());
}

TEST_CASE("inserts in any order come out ranked, with exact positions") {
  NodeArena arena;
  RankedSkiplist list(&arena, kSeed);
  Reference ref;
  constexpr uint64_t kRngSeed = 1;
  INFO("seed = " << kRngSeed);
  std::mt19937_64 rng(kRngSeed);
  std::vector<RankKey> probes;
  for (uint64_t member = 1; member <= 500; ++member) {
    // Few distinct scores, so that sequence and member break many ties.
    const RankKey key{static_cast<int64_t>(rng() % 21) - 10, rng() % 4, member};
    list.Insert(key);
    ref.insert(key);
    probes.push_back(key);
    probes.push_back({key.score, key.seq, 0});
    probes.push_back({key.score + 1, 0, 0});
  }
  CheckAgainst(list, ref, probes);
  CHECK(list.level() > 1);
  size_t position = 0;
  for (const RankedSkiplist::Node* n = list.First(); n != nullptr;
       n = n->next()) {
    CHECK(list.IndexOf(n) == position++);
  }
}

TEST_CASE("extreme scores and sequences") {
  NodeArena arena;
  RankedSkiplist list(&arena, kSeed);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr uint64_t kSeqMax = std::numeric_limits<uint64_t>::max();
  list.Insert({kMin, kSeqMax, 1});
  list.Insert({kMax, 0, 2});
  list.Insert({0, 7, 3});
  list.Insert({kMax, kSeqMax, kSeqMax});
  list.Insert({kMin, 0, 4});
  REQUIRE(list.CheckInvariants());
  const std::vector<RankKey> expected = {{kMax, 0, 2},
                                         {kMax, kSeqMax, kSeqMax},
                                         {0, 7, 3},
                                         {kMin, 0, 4},
                                         {kMin, kSeqMax, 1}};
  CHECK(Forward(list) == expected);
  CHECK(list.CountAbove({kMin, kSeqMax, kSeqMax}) == 5);
  CHECK(list.CountAbove({kMax, 0, 0}) == 0);
}

TEST_CASE("update in place keeps links, a move relinks the same node") {
  NodeArena arena;
  RankedSkiplist list(&arena, kSeed);
  RankedSkiplist::Node* a = list.Insert({100, 1, 1});
  RankedSkiplist::Node* b = list.Insert({50, 2, 2});
  RankedSkiplist::Node* c = list.Insert({10, 3, 3});
  REQUIRE(list.CheckInvariants());

  // 50 -> 60 stays between 100 and 10.
  list.Update(b, {60, 4, 2});
  CHECK(list.CheckInvariants());
  CHECK(b->key() == RankKey{60, 4, 2});
  CHECK(a->next() == b);
  CHECK(b->next() == c);

  // 10 -> 200 moves to the front; the node is the same object.
  list.Update(c, {200, 5, 3});
  CHECK(list.CheckInvariants());
  CHECK(list.First() == c);
  CHECK(list.Last() == b);
  CHECK(list.IndexOf(c) == 0);
  CHECK(list.IndexOf(a) == 1);
  CHECK(list.IndexOf(b) == 2);

  // An equal score with a later sequence goes behind the earlier one.
  list.Update(b, {100, 6, 2});
  CHECK(list.CheckInvariants());
  CHECK(Forward(list) ==
        std::vector<RankKey>{{200, 5, 3}, {100, 1, 1}, {100, 6, 2}});

  // Down to the end.
  list.Update(c, {-5, 7, 3});
  CHECK(list.CheckInvariants());
  CHECK(list.Last() == c);
  CHECK(c->prev() == b);
}

TEST_CASE("erase in random order down to empty") {
  NodeArena arena;
  RankedSkiplist list(&arena, kSeed);
  Reference ref;
  std::vector<RankedSkiplist::Node*> nodes;
  for (uint64_t member = 0; member < 300; ++member) {
    const RankKey key{static_cast<int64_t>(member % 17), member, member};
    nodes.push_back(list.Insert(key));
    ref.insert(key);
  }
  constexpr uint64_t kRngSeed = 2;
  INFO("seed = " << kRngSeed);
  std::mt19937_64 rng(kRngSeed);
  std::shuffle(nodes.begin(), nodes.end(), rng);
  for (RankedSkiplist::Node* node : nodes) {
    ref.erase(node->key());
    list.Erase(node);
    REQUIRE(list.CheckInvariants());
    REQUIRE(list.size() == ref.size());
  }
  CHECK(list.empty());
  CHECK(list.level() == 1);
  CHECK(list.First() == nullptr);
  CHECK(list.Last() == nullptr);
  // Usable again after emptying.
  list.Insert({1, 1, 1});
  CHECK(list.CheckInvariants());
  CHECK(list.size() == 1);
}

TEST_CASE("BoundMany gives what each list's bounds give") {
  // More lists than one group of interleaved descents, of varied sizes
  // (empty ones included).
  constexpr size_t kLists = 37;
  std::vector<std::unique_ptr<NodeArena>> arenas;
  std::vector<std::unique_ptr<RankedSkiplist>> lists;
  std::vector<const RankedSkiplist*> pointers;
  constexpr uint64_t kRngSeed = 3;
  INFO("seed = " << kRngSeed);
  std::mt19937_64 rng(kRngSeed);
  uint64_t member = 0;
  for (size_t l = 0; l < kLists; ++l) {
    arenas.push_back(std::make_unique<NodeArena>());
    lists.push_back(
        std::make_unique<RankedSkiplist>(arenas.back().get(), kSeed));
    const size_t size = l % 5 == 0 ? 0 : rng() % 400;
    for (size_t i = 0; i < size; ++i) {
      lists.back()->Insert(
          {static_cast<int64_t>(rng() % 50), rng() % 3, member++});
    }
    pointers.push_back(lists.back().get());
  }
  for (int probe = 0; probe < 200; ++probe) {
    const RankKey key{static_cast<int64_t>(rng() % 54) - 2, rng() % 4,
                      rng() % member};
    for (bool upper : {false, true}) {
      std::vector<RankedSkiplist::Node*> nodes(kLists);
      std::vector<size_t> indexes(kLists);
      RankedSkiplist::BoundMany(pointers.data(), kLists, key, upper,
                                nodes.data(), indexes.data());
      for (size_t l = 0; l < kLists; ++l) {
        size_t index = 0;
        RankedSkiplist::Node* node = upper ? lists[l]->UpperBound(key, &index)
                                           : lists[l]->LowerBound(key, &index);
        CHECK(nodes[l] == node);
        CHECK(indexes[l] == index);
      }
    }
  }
}

TEST_CASE("heights: deterministic, in range, about 3/4 of height 1") {
  size_t ones = 0;
  constexpr size_t kMembers = 100'000;
  int tallest = 0;
  for (uint64_t member = 0; member < kMembers; ++member) {
    const int h = RankedSkiplist::HeightFor(member, kSeed);
    REQUIRE(h >= 1);
    REQUIRE(h <= RankedSkiplist::kMaxHeight);
    REQUIRE(h == RankedSkiplist::HeightFor(member, kSeed));
    if (h == 1) ++ones;
    tallest = std::max(tallest, h);
  }
  // Binomial(100000, 0.75): the standard deviation is 137, so +-1500 is
  // more than 10 deviations.
  CHECK(ones > 75'000 - 1'500);
  CHECK(ones < 75'000 + 1'500);
  CHECK(tallest >= 6);
}

TEST_CASE("randomized operations match a sorted set at every step") {
  const uint64_t seed = testing::EnvU64("FEEDCORE_MODEL_SEED", 20240611);
  INFO("seed = " << seed << " (set FEEDCORE_MODEL_SEED to reproduce)");
  std::mt19937_64 rng(seed);
  NodeArena arena;
  RankedSkiplist list(&arena, kSeed);
  Reference ref;
  std::map<uint64_t, RankedSkiplist::Node*> by_member;
  uint64_t seq = 0;
  constexpr uint64_t kMembers = 64;
  for (int step = 0; step < 4000; ++step) {
    const uint64_t member = rng() % kMembers;
    const int64_t score = static_cast<int64_t>(rng() % 13) - 6;
    const int op = static_cast<int>(rng() % 10);
    auto it = by_member.find(member);
    if (it == by_member.end()) {
      const RankKey key{score, ++seq, member};
      by_member[member] = list.Insert(key);
      ref.insert(key);
    } else if (op < 3) {
      ref.erase(it->second->key());
      list.Erase(it->second);
      by_member.erase(it);
    } else {
      const RankKey key{score, op < 6 ? ++seq : it->second->key().seq, member};
      ref.erase(it->second->key());
      ref.insert(key);
      list.Update(it->second, key);
      REQUIRE(it->second->key() == key);
    }
    INFO("step " << step);
    CheckAgainst(list, ref,
                 {{score, seq, member}, {score, 0, 0}, {score, seq + 1, 0}});
  }
}

}  // namespace
}  // namespace feedcore::internal
