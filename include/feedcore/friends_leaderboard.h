// Friends' boards from the follow graph: "your rank among the people you
// follow", joining a FeedEngine's follow list with a Leaderboard.
//
//   auto friends = feedcore::FollowedAndSelf(*engine, player).value();
//   board->TopKAmong(friends, 10);       // the best 10 of them
//   board->RankAmong(player, friends);   // 0: best of its friends
//
// The set is read first, then the board: a follow that happens between the
// two is or is not in the set, as if it came before or after the read.
//
// Thread safety: as the FeedEngine and Leaderboard calls it makes.
#ifndef FEEDCORE_FRIENDS_LEADERBOARD_H_
#define FEEDCORE_FRIENDS_LEADERBOARD_H_

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"
#include "feedcore/export.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"

namespace feedcore {

// `user` followed by every entity it follows, in ascending id after
// `user`, read page by page from engine.Following. `InvalidArgument` if it
// follows more than `limit` entities, or for a `limit` outside
// 1..kMaxAmongMembers - 1 (the set, `user` included, must fit a ...Among
// read); the engine's errors otherwise. O(following).
FEEDCORE_EXPORT absl::StatusOr<std::vector<MemberId>> FollowedAndSelf(
    const FeedEngine& engine, EntityId user,
    size_t limit = kMaxAmongMembers - 1);

}  // namespace feedcore

#endif  // FEEDCORE_FRIENDS_LEADERBOARD_H_
