#include "social_relation_ops.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "fuzz_check.h"

namespace feedcore::fuzz {

namespace {
constexpr size_t kMaxBatch = 6;
constexpr size_t kMaxListWalks = 4;

// A batch with a self-pair is refused whole; any other is answered pair by
// pair, and an empty one records nothing. Returns whether the pairs'
// results are there to compare.
template <typename Result>
bool CheckBatch(const SocialFuzzContext& c, bool self_pair,
                const absl::StatusOr<std::vector<Result>>& got, size_t pairs,
                uint64_t records) {
  if (self_pair) {
    c.CheckRefused(got.status(), records);
    return false;
  }
  FUZZ_CHECK(got.ok());
  FUZZ_CHECK(got->size() == pairs);
  if (pairs == 0) FUZZ_CHECK(c.Records() == records);
  return true;
}

}  // namespace

void RelationOps::CheckRelation(const absl::StatusOr<RelationResult>& got,
                                const RelationResult& want) const {
  FUZZ_CHECK_DETAIL(got.ok(), std::fprintf(stderr, "status: %s\n",
                                           got.status().ToString().c_str()));
  FUZZ_CHECK(got->changed == want.changed);
  // An engine holds no copies of what it merges at read, and `removed`
  // counts copies.
  if (c_.HoldsAllCopies()) {
    FUZZ_CHECK_DETAIL(got->removed == want.removed,
                      std::fprintf(stderr, "removed %zu, model %zu\n",
                                   got->removed, want.removed));
  }
  // No timeline reaches its cap, so a back-fill keeps what the model's
  // does (0 for a merged actor on both sides); a dormant reader's restore
  // moves its merge instead of copying.
  FUZZ_CHECK_DETAIL(c_.options.inactive_after == 0
                        ? got->backfilled == want.backfilled
                        : got->backfilled <= want.backfilled,
                    std::fprintf(stderr, "backfilled %zu, model %zu\n",
                                 got->backfilled, want.backfilled));
  FUZZ_CHECK(got->follows_ended == want.follows_ended);
}

void RelationOps::Block() {
  const auto [user, actor] = c_.Pair();
  const RelationResult want = c_.model.Block(user, actor);
  CheckRelation(c_.engine->Block(user, actor), want);
}

void RelationOps::Unblock() { Restore(/*unmute=*/false); }

void RelationOps::Mute() {
  const auto [user, actor] = c_.Pair();
  MuteOptions mute;
  mute.notifications = c_.in.Bool();
  if (c_.in.Below(3) == 0) {
    mute.expires_at = c_.Now() + 1 + static_cast<Micros>(c_.in.Below(300));
  }
  const RelationResult want = c_.model.Mute(user, actor, mute, c_.Now());
  CheckRelation(c_.engine->Mute(user, actor, mute), want);
  c_.NoteMute(user, actor, mute);
}

void RelationOps::Unmute() { Restore(/*unmute=*/true); }

void RelationOps::Restore(bool unmute) {
  const auto [user, actor] = c_.Pair();
  RestoreOptions restore;
  if (c_.in.Bool()) restore.backfill = c_.in.Below(kMaxBackfill + 1);
  const Micros now = c_.Now();
  const RelationResult want =
      unmute ? c_.model.Unmute(user, actor, restore.backfill, now)
             : c_.model.Unblock(user, actor, restore.backfill, now);
  CheckRelation(unmute ? c_.engine->Unmute(user, actor, restore)
                       : c_.engine->Unblock(user, actor, restore),
                want);
}

void RelationOps::ListPage() {
  if (!list_walks_.empty() && c_.in.Bool()) {
    const size_t i = c_.in.Below(list_walks_.size());
    ListWalk walk = std::move(list_walks_[i]);
    list_walks_.erase(list_walks_.begin() + static_cast<long>(i));
    return ReadListPage(std::move(walk), /*first=*/false);
  }
  ListWalk walk;
  walk.muted = c_.in.Bool();
  walk.user = c_.Entity();
  ReadListPage(std::move(walk), /*first=*/true);
}

void RelationOps::ReadListPage(ListWalk walk, bool first) {
  ListOptions list;
  list.limit = 1 + c_.in.Below(c_.options.max_page_size);
  list.cursor = first ? "" : walk.cursor;
  std::vector<MutedActor> want;
  if (walk.muted) {
    want = c_.model.MutedList(walk.user, c_.Now());
  } else {
    for (const EntityId id : c_.model.BlockedList(walk.user)) {
      want.push_back({id, false, std::nullopt});
    }
  }
  if (!first) {
    std::erase_if(want,
                  [&](const MutedActor& m) { return m.actor <= walk.last; });
  }
  std::vector<MutedActor> got;
  std::string next_cursor;
  if (walk.muted) {
    absl::StatusOr<MutedPage> page = c_.engine->Muted(walk.user, list);
    FUZZ_CHECK(page.ok());
    got = std::move(page->actors);
    next_cursor = std::move(page->next_cursor);
  } else {
    absl::StatusOr<EntityPage> page = c_.engine->Blocked(walk.user, list);
    FUZZ_CHECK(page.ok());
    for (const EntityId id : page->ids)
      got.push_back({id, false, std::nullopt});
    next_cursor = std::move(page->next_cursor);
  }
  const size_t n = std::min(list.limit, want.size());
  FUZZ_CHECK_DETAIL(
      got == std::vector<MutedActor>(want.begin(),
                                     want.begin() + static_cast<long>(n)),
      std::fprintf(stderr, "%s page of %zu, model %zu (of %zu)\n",
                   walk.muted ? "muted" : "blocked", got.size(), n,
                   want.size()));
  FUZZ_CHECK(next_cursor.empty() == (want.size() <= list.limit));
  if (next_cursor.empty()) return;
  walk.cursor = std::move(next_cursor);
  walk.last = got.back().actor;
  if (list_walks_.size() >= kMaxListWalks) {
    list_walks_.erase(list_walks_.begin());
  }
  list_walks_.push_back(std::move(walk));
}

std::vector<FollowPair> RelationOps::DrawPairs(bool self_pair) {
  std::vector<FollowPair> pairs;
  const size_t n = c_.in.Below(kMaxBatch + 1);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && c_.in.Below(4) == 0) {
      pairs.push_back(pairs[c_.in.Below(i)]);
      continue;
    }
    const auto [follower, followee] = c_.Pair();
    pairs.push_back({follower, followee});
  }
  if (self_pair) {
    const EntityId e = c_.Entity();
    pairs.insert(pairs.begin() + static_cast<long>(c_.in.Below(n + 1)),
                 FollowPair{e, e});
  }
  return pairs;
}

void RelationOps::FollowMany() {
  const bool self_pair = c_.in.Below(8) == 0;
  const std::vector<FollowPair> pairs = DrawPairs(self_pair);
  FollowOptions options;
  const size_t backfill = c_.DrawBackfill(options);
  const uint64_t records = c_.Records();
  const absl::StatusOr<std::vector<FollowResult>> got =
      c_.engine->FollowMany(pairs, options);
  if (!CheckBatch(c_, self_pair, got, pairs.size(), records)) return;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto [follower, followee] = pairs[i];
    const bool blocked = c_.model.EitherBlocks(follower, followee);
    const FollowResult want =
        c_.model.Follow(follower, followee, backfill, c_.Now());
    const FollowResult& pair = (*got)[i];
    FUZZ_CHECK(pair.blocked == blocked);
    FUZZ_CHECK(pair.created == want.created);
    FUZZ_CHECK_DETAIL(
        pair.backfilled == want.backfilled,
        std::fprintf(stderr, "pair %zu backfilled %zu, model %zu\n", i,
                     pair.backfilled, want.backfilled));
  }
}

void RelationOps::UnfollowMany() {
  const bool self_pair = c_.in.Below(8) == 0;
  const std::vector<FollowPair> pairs = DrawPairs(self_pair);
  UnfollowOptions options;
  options.keep_history = c_.in.Bool();
  const uint64_t records = c_.Records();
  const absl::StatusOr<std::vector<UnfollowResult>> got =
      c_.engine->UnfollowMany(pairs, options);
  if (!CheckBatch(c_, self_pair, got, pairs.size(), records)) return;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto [follower, followee] = pairs[i];
    const UnfollowResult want =
        c_.model.Unfollow(follower, followee, options.keep_history);
    if (options.keep_history) NoteHistoryKept(followee, want);
    FUZZ_CHECK((*got)[i].was_following == want.was_following);
    // Entries of a merged followee are merged, not copies to remove.
    if (!c_.MayMerge(followee)) {
      FUZZ_CHECK((*got)[i].removed == want.removed);
    }
  }
}

void RelationOps::UnfollowKeepingHistory() {
  const auto [follower, followee] = c_.Pair();
  const UnfollowResult want =
      c_.model.Unfollow(follower, followee, /*keep_history=*/true);
  NoteHistoryKept(followee, want);
  const absl::StatusOr<UnfollowResult> got =
      c_.engine->Unfollow(follower, followee, {.keep_history = true});
  FUZZ_CHECK(got.ok());
  FUZZ_CHECK(got->was_following == want.was_following);
  FUZZ_CHECK(got->removed == 0);
}

void RelationOps::NoteHistoryKept(EntityId followee,
                                  const UnfollowResult& result) {
  if (result.was_following && c_.MayMerge(followee)) {
    c_.copies_bounded = false;
  }
}

void RelationOps::Invalid() {
  const uint64_t records = c_.Records();
  const auto [a, b] = c_.Pair();
  RestoreOptions too_much;
  too_much.backfill = kMaxTimelineLengthLimit + 1 + c_.in.Below(4);
  switch (c_.in.Below(9)) {
    case 0:
      return c_.CheckRefused(c_.engine->Block(a, a).status(), records);
    case 1:
      return c_.CheckRefused((c_.in.Bool() ? c_.engine->Unblock(a, a)
                                           : c_.engine->Unblock(a, b, too_much))
                                 .status(),
                             records);
    case 2: {
      // Muting oneself, or an expiry not in (now, now + kMaxTtl].
      MuteOptions mute;
      mute.notifications = c_.in.Bool();
      EntityId muted = a;
      switch (c_.in.Below(3)) {
        case 0:
          break;
        case 1:
          muted = b;
          mute.expires_at = c_.Now() - static_cast<Micros>(c_.in.Below(3));
          break;
        default:
          muted = b;
          mute.expires_at =
              c_.Now() + kMaxTtl + 1 + static_cast<Micros>(c_.in.Below(3));
          break;
      }
      return c_.CheckRefused(c_.engine->Mute(a, muted, mute).status(), records);
    }
    case 3:
      return c_.CheckRefused((c_.in.Bool() ? c_.engine->Unmute(a, a)
                                           : c_.engine->Unmute(a, b, too_much))
                                 .status(),
                             records);
    case 4: {
      // A limit out of range, junk, or an open walk's cursor on the other
      // list or another entity's.
      ListOptions list;
      bool muted = c_.in.Bool();
      EntityId user = a;
      switch (c_.in.Below(3)) {
        case 0:
          list.limit = c_.in.Bool() ? 0 : c_.options.max_page_size + 1;
          break;
        case 1:
          list.cursor = "not a cursor";
          break;
        default:
          list.cursor = "not a cursor";
          if (!list_walks_.empty()) {
            const ListWalk& walk = list_walks_[c_.in.Below(list_walks_.size())];
            list.cursor = walk.cursor;
            muted = walk.muted;
            if (c_.in.Bool()) {
              muted = !walk.muted;
            } else {
              user = walk.user % c_.entities + 1;
            }
          }
          break;
      }
      return c_.CheckRefused(muted ? c_.engine->Muted(user, list).status()
                                   : c_.engine->Blocked(user, list).status(),
                             records);
    }
    case 5: {
      FollowOptions options;
      options.backfill = too_much.backfill;
      return c_.CheckRefused(
          c_.engine->FollowMany(DrawPairs(false), options).status(), records);
    }
    case 6: {
      // More pairs than a batch takes, each valid on its own.
      const std::vector<FollowPair> pairs(kMaxFollowBatch + 1,
                                          FollowPair{a, b});
      return c_.CheckRefused(
          (c_.in.Bool() ? c_.engine->FollowMany(pairs).status()
                        : c_.engine->UnfollowMany(pairs).status()),
          records);
    }
    case 7: {
      UnfollowOptions options;
      options.keep_history = c_.in.Bool();
      return c_.CheckRefused(
          c_.engine->UnfollowMany(DrawPairs(true), options).status(), records);
    }
    default:
      return c_.CheckRefused(
          c_.engine->Unfollow(a, a, {.keep_history = true}).status(), records);
  }
}

}  // namespace feedcore::fuzz
