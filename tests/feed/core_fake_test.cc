// The core interface is small enough to fake: a program's test double
// implements FeedEngine's pure virtuals only, has no facets, and the
// library's code written against FeedEngine (Insert, FollowedAndSelf)
// runs on it.

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "feedcore/feed_engine.h"
#include "feedcore/friends_leaderboard.h"
#include "feedcore/options.h"
#include "feedcore/types.h"

namespace feedcore {
namespace {

// A follow graph held in a map, with pages of `options().max_page_size`
// ids and the last id as the cursor; timelines are a count of inserts.
class FixedGraphEngine final : public FeedEngine {
 public:
  explicit FixedGraphEngine(size_t page_size) {
    options_.max_page_size = page_size;
  }

  absl::StatusOr<InsertResult> InsertFanout(absl::Span<const EntityId> owners,
                                            const TimelineEntry&,
                                            const InsertOptions&) override {
    for (EntityId owner : owners) ++inserted_[owner];
    return InsertResult{.inserted = owners.size()};
  }
  absl::StatusOr<InsertResult> InsertBatch(absl::Span<const OwnedEntry>,
                                           const InsertOptions&) override {
    return Refused("InsertBatch");
  }
  absl::Status Remove(EntityId, const EntryKey&) override {
    return Refused("Remove");
  }
  absl::StatusOr<Page> ReadTimeline(EntityId,
                                    const ReadOptions&) const override {
    return Refused("ReadTimeline");
  }
  absl::StatusOr<Page> ReadOwn(EntityId, const ReadOptions&) const override {
    return Refused("ReadOwn");
  }
  absl::StatusOr<Page> ReadWorld(const ReadOptions&) const override {
    return Refused("ReadWorld");
  }
  absl::StatusOr<size_t> CountNewer(EntityId, const EntryKey&,
                                    size_t) const override {
    return Refused("CountNewer");
  }
  absl::StatusOr<GroupPage> ReadGroups(EntityId,
                                       const GroupReadOptions&) const override {
    return Refused("ReadGroups");
  }
  absl::StatusOr<FollowResult> Follow(EntityId follower, EntityId followee,
                                      const FollowOptions&) override {
    return FollowResult{.created =
                            following_[follower].insert(followee).second};
  }
  absl::StatusOr<UnfollowResult> Unfollow(EntityId follower, EntityId followee,
                                          const UnfollowOptions&) override {
    return UnfollowResult{.was_following =
                              following_[follower].erase(followee) == 1};
  }
  absl::StatusOr<std::vector<FollowResult>> FollowMany(
      absl::Span<const FollowPair>, const FollowOptions&) override {
    return Refused("FollowMany");
  }
  absl::StatusOr<std::vector<UnfollowResult>> UnfollowMany(
      absl::Span<const FollowPair>, const UnfollowOptions&) override {
    return Refused("UnfollowMany");
  }
  absl::StatusOr<EntityPage> Followers(EntityId,
                                       const ListOptions&) const override {
    return Refused("Followers");
  }
  absl::StatusOr<EntityPage> Following(
      EntityId entity, const ListOptions& options) const override {
    ++following_pages_;
    EntityId after = 0;
    if (!options.cursor.empty() && !absl::SimpleAtoi(options.cursor, &after)) {
      return absl::InvalidArgumentError("bad cursor");
    }
    EntityPage page;
    const auto it = following_.find(entity);
    if (it == following_.end()) return page;
    for (auto id = it->second.upper_bound(after);
         id != it->second.end() && page.ids.size() < options.limit; ++id) {
      page.ids.push_back(*id);
    }
    if (page.ids.size() == options.limit &&
        it->second.upper_bound(page.ids.back()) != it->second.end()) {
      page.next_cursor = absl::StrCat(page.ids.back());
    }
    return page;
  }
  absl::StatusOr<size_t> FollowerCount(EntityId) const override {
    return Refused("FollowerCount");
  }
  absl::StatusOr<size_t> FollowingCount(EntityId entity) const override {
    const auto it = following_.find(entity);
    return it == following_.end() ? 0 : it->second.size();
  }
  absl::StatusOr<PublishResult> Publish(const Activity&,
                                        const PublishOptions&) override {
    return Refused("Publish");
  }
  void WaitForFanout() override {}
  absl::Status Retract(ActivityId) override { return Refused("Retract"); }
  const EngineOptions& options() const override { return options_; }

  size_t inserted(EntityId owner) const {
    const auto it = inserted_.find(owner);
    return it == inserted_.end() ? 0 : it->second;
  }
  size_t following_pages() const { return following_pages_; }

 private:
  static absl::Status Refused(const char* call) {
    return absl::UnimplementedError(absl::StrCat(call, ": not faked"));
  }

  EngineOptions options_;
  std::map<EntityId, std::set<EntityId>> following_;
  std::map<EntityId, size_t> inserted_;
  mutable size_t following_pages_ = 0;
};

TEST_CASE("a fake of the core has no facets") {
  FixedGraphEngine fake(10);
  FeedEngine& engine = fake;
  CHECK(engine.notifications() == nullptr);
  CHECK(engine.relations() == nullptr);
  CHECK(engine.read_markers() == nullptr);
  CHECK(engine.ranked() == nullptr);
  CHECK(engine.maintenance() == nullptr);
}

TEST_CASE("Insert is InsertFanout of one owner") {
  FixedGraphEngine fake(10);
  FeedEngine& engine = fake;
  const absl::StatusOr<InsertResult> r = engine.Insert(4, {1, 1, 9});
  REQUIRE_MESSAGE(r.ok(), r.status());
  CHECK(r->inserted == 1);
  CHECK(fake.inserted(4) == 1);
  CHECK(fake.inserted(9) == 0);
}

TEST_CASE("FollowedAndSelf pages a fake's Following") {
  FixedGraphEngine fake(3);
  for (EntityId followee : {30, 10, 20, 50, 40, 60, 70}) {
    REQUIRE(fake.Follow(1, followee, {}).ok());
  }
  const absl::StatusOr<std::vector<MemberId>> friends =
      FollowedAndSelf(fake, 1);
  REQUIRE_MESSAGE(friends.ok(), friends.status());
  CHECK(*friends == std::vector<MemberId>{1, 10, 20, 30, 40, 50, 60, 70});
  CHECK(fake.following_pages() == 3);  // pages of at most 3 ids
  // The limit is checked against what the fake returns.
  CHECK(absl::IsInvalidArgument(FollowedAndSelf(fake, 1, 6).status()));
}

}  // namespace
}  // namespace feedcore
