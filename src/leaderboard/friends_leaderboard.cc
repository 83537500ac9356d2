#include "feedcore/friends_leaderboard.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace feedcore {

absl::StatusOr<std::vector<MemberId>> FollowedAndSelf(const FeedEngine& engine,
                                                      EntityId user,
                                                      size_t limit) {
  if (limit == 0 || limit > kMaxAmongMembers - 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("FollowedAndSelf limit is ", limit, "; it must be 1..",
                     kMaxAmongMembers - 1, " (kMaxAmongMembers - 1)"));
  }
  std::vector<MemberId> members = {user};
  ListOptions page_options;
  // One page more than the limit allows tells a list that is too long.
  page_options.limit = std::min(engine.options().max_page_size, limit + 1);
  do {
    absl::StatusOr<EntityPage> page = engine.Following(user, page_options);
    if (!page.ok()) return page.status();
    members.insert(members.end(), page->ids.begin(), page->ids.end());
    if (members.size() - 1 > limit) {
      return absl::InvalidArgumentError(
          absl::StrCat("FollowedAndSelf: entity ", user,
                       " follows more than limit ", limit, " entities"));
    }
    page_options.cursor = std::move(page->next_cursor);
  } while (!page_options.cursor.empty());
  return members;
}

}  // namespace feedcore
