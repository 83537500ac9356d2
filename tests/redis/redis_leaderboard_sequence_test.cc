// The update sequences of a Redis Cluster board ordered
// TieBreak::kEarlierUpdateFirst, at the level a client retry works on: the
// write script run again with the number it was first sent with (what the
// client does with a Set after an unclear failure, and what any write
// numbered early but arriving late looks like), and the layout the
// scripts keep (set member = sequence bytes + member bytes, the sequence
// hash in step with the sorted set). Runs on the shared cluster under a
// key prefix of its own.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "doctest/doctest.h"
#include "feedcore/leaderboard.h"
#include "feedcore/redis_cluster.h"
#include "redis/cluster_client.h"
#include "redis/key_slot.h"
#include "redis/leaderboard_codec.h"
#include "redis/leaderboard_scripts.h"
#include "redis/redis_cluster_seeds.h"
#include "redis/redis_leaderboard.h"

namespace feedcore::redis {
namespace {

using Entries = std::vector<LeaderboardEntry>;

constexpr char kName[] = "ordered";

struct Fixture {
  Fixture() {
    options.seed_nodes = testing::RedisClusterSeeds();
    options.key_prefix = testing::UniqueKeyPrefix("lb-sequence");
    auto created = CreateRedisClusterLeaderboard(
        options, kName,
        {.partitions = 3, .tie_break = TieBreak::kEarlierUpdateFirst});
    REQUIRE_MESSAGE(created.ok(), created.status());
    board = *std::move(created);
    auto connected = ClusterClient::Connect(options);
    REQUIRE_MESSAGE(connected.ok(), connected.status());
    client = *std::move(connected);
    auto loaded = client->LoadScript(kLeaderboardWriteScript);
    REQUIRE_MESSAGE(loaded.ok(), loaded.status());
    write = *loaded;
    keys = MakeLeaderboardKeys(options.key_prefix, kName, 3);
  }

  Reply Run(std::vector<std::string> args, uint16_t slot) {
    absl::StatusOr<Reply> reply =
        client->RunOne(Command{std::move(args), slot});
    REQUIRE_MESSAGE(reply.ok(), reply.status());
    REQUIRE_MESSAGE(!reply->is_error(), reply->str);
    return *reply;
  }

  // The member's update sequence as the sequence hash holds it; 0 if none.
  uint64_t SequenceOf(MemberId member) {
    const std::string& hash = keys.sequences[LeaderboardPartitionOf(member, 3)];
    const Reply reply = Run({"HGET", hash, MemberBytes(member)}, KeySlot(hash));
    if (reply.is_nil()) return 0;
    absl::StatusOr<uint64_t> seq = ParseSequence(reply, "HGET");
    REQUIRE_MESSAGE(seq.ok(), seq.status());
    return *seq;
  }

  // What the client sends for Set(member, score) numbered `seq`, sent
  // once more: the outcome the script reports.
  std::string SendSet(MemberId member, int64_t score, uint64_t seq) {
    const size_t p = LeaderboardPartitionOf(member, 3);
    absl::StatusOr<Reply> reply = client->RunOne(ClusterClient::ScriptCommand(
        write, {keys.partitions[p], keys.metadata[p], keys.sequences[p]},
        {MemberBytes(member), "-1", "set", absl::StrCat(score >> 32),
         absl::StrCat(score & 0xffffffff), "always", "keep", "",
         SequenceBytes(seq)}));
    REQUIRE_MESSAGE(reply.ok(), reply.status());
    REQUIRE_MESSAGE(!reply->is_error(), reply->str);
    REQUIRE(reply->type == Reply::Type::kArray);
    return reply->elements[0].str;
  }

  Entries All() {
    LeaderboardReadOptions read;
    read.limit = 100;
    absl::StatusOr<LeaderboardPage> page = board->ReadPage(read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    return page->entries;
  }

  RedisClusterOptions options;
  std::unique_ptr<Leaderboard> board;
  std::unique_ptr<ClusterClient> client;
  Script write;
  LeaderboardKeys keys;
};

TEST_CASE("a Set sent again with its number changes nothing, its place kept") {
  Fixture f;
  REQUIRE(f.board->Set(10, 5).ok());
  REQUIRE(f.board->Set(20, 5).ok());
  const uint64_t first = f.SequenceOf(10);
  REQUIRE(first > 0);
  REQUIRE(f.SequenceOf(20) > first);
  CHECK(f.All() == Entries{{10, 5, 0}, {20, 5, 1}});
  // The reply of the first run was lost; the client sends it again.
  CHECK(f.SendSet(10, 5, first) == "unchanged");
  CHECK(f.SequenceOf(10) == first);
  CHECK(f.All() == Entries{{10, 5, 0}, {20, 5, 1}});
  CHECK(f.board->Rank(10).value() == 0);
}

TEST_CASE(
    "a write numbered early but arriving late never moves a member back") {
  Fixture f;
  // A write takes its number, then is delayed...
  const Reply taken =
      f.Run({"INCRBY", f.keys.counter, "1"}, KeySlot(f.keys.counter));
  REQUIRE(taken.type == Reply::Type::kInteger);
  const uint64_t early = static_cast<uint64_t>(taken.integer);
  // ...while member 10 is written with a later number, and 20 after it.
  REQUIRE(f.board->Set(10, 3).ok());
  REQUIRE(f.board->Set(20, 8).ok());
  const uint64_t own = f.SequenceOf(10);
  REQUIRE(own > early);
  // The delayed write lands: it changes 10's score, and 10 keeps its own
  // (later) number, so it reaches 8 as of its last change, not earlier.
  CHECK(f.SendSet(10, 8, early) == "changed");
  CHECK(f.SequenceOf(10) == own);
  CHECK(f.All() == Entries{{10, 8, 0}, {20, 8, 1}});
  CHECK(f.board->Score(10).value() == 8);
}

TEST_CASE(
    "the sequence hash follows the member: same score, metadata-free "
    "writes, removal") {
  Fixture f;
  REQUIRE(f.board->Set(1, 7).ok());
  REQUIRE(f.board->Set(2, 7).ok());
  const uint64_t one = f.SequenceOf(1);
  // Same score, increment by 0: the member keeps its number and place.
  REQUIRE(f.board->Set(1, 7).ok());
  REQUIRE(f.board->Increment(1, 0).value() == 7);
  CHECK(f.SequenceOf(1) == one);
  CHECK(f.All() == Entries{{1, 7, 0}, {2, 7, 1}});
  // A change away and back goes behind 2.
  REQUIRE(f.board->Increment(1, 1).value() == 8);
  REQUIRE(f.board->Increment(1, -1).value() == 7);
  CHECK(f.SequenceOf(1) > f.SequenceOf(2));
  CHECK(f.All() == Entries{{2, 7, 0}, {1, 7, 1}});
  // Removal drops the number with the member; the set holds only 2.
  REQUIRE(f.board->Remove(1).ok());
  CHECK(f.SequenceOf(1) == 0);
  CHECK(f.board->Size().value() == 1);
  CHECK(absl::IsNotFound(f.board->Score(1).status()));
  // Clear drops the hashes too.
  REQUIRE(f.board->Clear().ok());
  CHECK(f.SequenceOf(2) == 0);
}

TEST_CASE("a board cannot be opened with the other tie-break") {
  Fixture f;
  auto other = CreateRedisClusterLeaderboard(
      f.options, kName,
      {.partitions = 3, .tie_break = TieBreak::kLowerMemberFirst});
  REQUIRE_FALSE(other.ok());
  CHECK(absl::IsFailedPrecondition(other.status()));
  CHECK_MESSAGE(
      std::string(other.status().message())
              .find("LeaderboardOptions.tie_break") != std::string::npos,
      other.status());
}

}  // namespace
}  // namespace feedcore::redis
