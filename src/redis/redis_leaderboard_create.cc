// Opening a Redis Cluster leaderboard (redis_cluster.h): the options are
// checked, the board's partition count, score order and tie-break are
// recorded under its meta key on first use and compared on every later
// open, and the scripts are loaded. The layout is described in
// redis_leaderboard.cc.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "contract/leaderboard_arguments.h"
#include "feedcore/redis_cluster.h"
#include "redis/cluster_client.h"
#include "redis/key_slot.h"
#include "redis/leaderboard_scripts.h"
#include "redis/redis_leaderboard.h"
#include "redis/redis_leaderboard_board.h"
#include "redis/reply.h"

namespace feedcore {

absl::StatusOr<std::unique_ptr<Leaderboard>> CreateRedisClusterLeaderboard(
    const RedisClusterOptions& cluster, absl::string_view name,
    const LeaderboardOptions& options) {
  using redis::ClusterClient;
  using redis::Command;
  using redis::Reply;
  if (absl::Status s = internal::ValidateLeaderboardName(name); !s.ok()) {
    return s;
  }
  if (absl::Status s = internal::ValidateLeaderboardOptions(options); !s.ok()) {
    return s;
  }
  if (options.rank_style == RankStyle::kDense) {
    return absl::UnimplementedError(
        "LeaderboardOptions.rank_style is RankStyle::kDense: the Redis "
        "Cluster backend has no LeaderboardCapability::kDenseRanks: a dense "
        "rank counts the distinct scores above a member over every "
        "partition, which no partition's sorted set can count without "
        "reading them all; use RankStyle::kCompetition or kUnique");
  }
  absl::StatusOr<std::unique_ptr<ClusterClient>> client =
      ClusterClient::Connect(cluster);
  if (!client.ok()) return client.status();
  redis::LeaderboardKeys keys =
      redis::MakeLeaderboardKeys(cluster.key_prefix, name, options.partitions);

  // Record the partition count, score order and tie-break unless another
  // process did first, and read back what is recorded; both go to the same
  // node, in this order. A higher-first board ordered by member id records
  // the count alone.
  const uint16_t meta_slot = redis::KeySlot(keys.meta);
  constexpr absl::string_view kLowerFirstTag = " lower-first";
  constexpr absl::string_view kByUpdateTag = " earlier-update-first";
  const bool by_update = options.tie_break == TieBreak::kEarlierUpdateFirst;
  const std::string record = absl::StrCat(
      options.partitions,
      options.score_order == ScoreOrder::kLowerFirst ? kLowerFirstTag : "",
      by_update ? kByUpdateTag : "");
  std::vector<Command> meta;
  meta.push_back(Command{{"SET", keys.meta, record, "NX"}, meta_slot});
  meta.push_back(Command{{"GET", keys.meta}, meta_slot});
  absl::StatusOr<std::vector<Reply>> replies = (*client)->Run(std::move(meta));
  if (!replies.ok()) return replies.status();
  const Reply& recorded = (*replies)[1];
  for (const Reply& reply : *replies) {
    if (reply.is_error()) {
      return absl::InternalError(absl::StrCat(
          "redis node ", (*client)->NodeOf(meta_slot),
          " refused to record the leaderboard's partition count: ", reply.str));
    }
  }
  size_t stored = 0;
  absl::string_view recorded_count = recorded.str;
  const bool recorded_by_update =
      absl::ConsumeSuffix(&recorded_count, kByUpdateTag);
  const bool recorded_lower_first =
      absl::ConsumeSuffix(&recorded_count, kLowerFirstTag);
  if (recorded.type != Reply::Type::kString ||
      !absl::SimpleAtoi(recorded_count, &stored)) {
    return absl::InternalError(
        absl::StrCat("redis leaderboard: the partition count recorded under ",
                     keys.meta, " is not a number"));
  }
  if (stored != options.partitions) {
    return absl::FailedPreconditionError(
        absl::StrCat("leaderboard '", absl::CHexEscape(name),
                     "' was created in the redis "
                     "cluster with ",
                     stored,
                     " partitions (LeaderboardOptions.partitions); "
                     "it cannot be opened with ",
                     options.partitions,
                     ": members would be looked for in the wrong partitions"));
  }
  if (recorded_lower_first !=
      (options.score_order == ScoreOrder::kLowerFirst)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "leaderboard '", absl::CHexEscape(name),
        "' was created in the redis cluster with "
        "LeaderboardOptions.score_order ",
        recorded_lower_first ? "ScoreOrder::kLowerFirst" : "kHigherFirst",
        "; it cannot be opened with the other order: its stored scores "
        "would be read with the wrong sign"));
  }

  if (recorded_by_update != by_update) {
    return absl::FailedPreconditionError(absl::StrCat(
        "leaderboard '", absl::CHexEscape(name),
        "' was created in the redis cluster with "
        "LeaderboardOptions.tie_break ",
        recorded_by_update ? "TieBreak::kEarlierUpdateFirst"
                           : "TieBreak::kLowerMemberFirst",
        "; it cannot be opened with the other tie-break: its sorted sets "
        "name members differently"));
  }

  redis::LeaderboardScripts scripts;
  const std::pair<const char*, redis::Script*> bodies[] = {
      {redis::kLeaderboardReadScript, &scripts.read},
      {redis::kLeaderboardIncrementScript, &scripts.increment},
      {redis::kLeaderboardWriteScript, &scripts.write},
      {redis::kLeaderboardRemoveScript, &scripts.remove},
      {redis::kLeaderboardMetadataScript, &scripts.metadata},
      {redis::kLeaderboardLookupScript, &scripts.lookup}};
  for (const auto& [body, script] : bodies) {
    absl::StatusOr<redis::Script> loaded = (*client)->LoadScript(body);
    if (!loaded.ok()) return loaded.status();
    *script = std::move(*loaded);
  }
  return std::make_unique<redis::RedisLeaderboard>(
      std::move(*client), options, std::move(keys), std::move(scripts));
}

}  // namespace feedcore
