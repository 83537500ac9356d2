// The keys of a Redis Cluster leaderboard and the partition of each member,
// derived the same way by every process (see redis_leaderboard.h).
#include <cassert>
#include <cstdint>
#include <string>

#include "redis/redis_leaderboard.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "redis/key_slot.h"
#include "redis/leaderboard_codec.h"

namespace feedcore::redis {
namespace {

// Tag searches that go on this long (never, for CRC16 and N <= 1024) take
// whatever slot they are on, so the search always ends.
constexpr uint64_t kMaxTagSearch = uint64_t{1} << 20;

}  // namespace

LeaderboardKeys MakeLeaderboardKeys(absl::string_view key_prefix,
                                    absl::string_view name, size_t partitions) {
  const std::string hex_name = absl::BytesToHexString(name);
  const uint16_t name_crc = Crc16Continue(0, absl::StrCat(hex_name, "#"));
  LeaderboardKeys keys;
  keys.partitions.reserve(partitions);
  keys.metadata.reserve(partitions);
  keys.sequences.reserve(partitions);
  for (size_t p = 0; p < partitions; ++p) {
    const size_t low = p * kSlotCount / partitions;
    const size_t high = (p + 1) * kSlotCount / partitions;
    const uint16_t partition_crc =
        Crc16Continue(name_crc, absl::StrCat(p, "#"));
    uint64_t j = 0;
    size_t slot = 0;
    for (;; ++j) {
      slot = Crc16Continue(partition_crc, absl::StrCat(j)) % kSlotCount;
      if ((slot >= low && slot < high) || j == kMaxTagSearch) break;
    }
    const std::string tag = absl::StrCat("{", hex_name, "#", p, "#", j, "}");
    keys.partitions.push_back(absl::StrCat(key_prefix, ":lb:", tag));
    keys.metadata.push_back(absl::StrCat(key_prefix, ":lbmd:", tag));
    keys.sequences.push_back(absl::StrCat(key_prefix, ":lbseq:", tag));
    assert(KeySlot(keys.partitions.back()) == slot);
  }
  keys.meta = absl::StrCat(key_prefix, ":lbmeta:{", hex_name, "#meta}");
  keys.counter = absl::StrCat(key_prefix, ":lbseqn:{", hex_name, "#meta}");
  return keys;
}

size_t LeaderboardPartitionOf(MemberId member, size_t partitions) {
  if (partitions == 1) return 0;
  const std::string bytes = MemberBytes(member);
  return XXH3_64bits(bytes.data(), bytes.size()) % partitions;
}

}  // namespace feedcore::redis
