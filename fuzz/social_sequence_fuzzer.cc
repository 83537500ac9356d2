// Fuzz target: arbitrary sequences of the social calls of a FeedEngine,
// each answer compared with the reference model the social model test uses
// (tests/model/feed_model.h), where that test compares it
// (tests/feed/social_model_runner.cc).
//
// The input chooses the configuration (shards, hybrid threshold, default
// back-fill, page size, flat or grouped notifications, inactive_after, the
// repost window, number of entities)
// and then one call after another: Follow (any back-fill, the default
// included; refused between a blocking pair) and Unfollow, with or without
// keeping the history, FollowMany and UnfollowMany (batches of up to six
// pairs, repeats included; one self-pair refuses the whole batch), Publish
// (idempotent re-publishes, conflicting ids, reposts, notify and mention
// lists),
// Retract (known,
// retracted and unknown ids), paged reads of timelines, own feeds and the
// world feed in either order with windows and cursors kept across other
// calls, CountNewer, notification counts, clock advances, EvictExpired with
// any budget, SetReadMarker/GetReadMarker on home, own and world feeds
// (mention counts included) and ListReadMarkers paged,
// Block, Unblock and Unmute (with or without back-fill), Mute (of
// notifications too or not, with or without an expiry), the Blocked and
// Muted lists paged with cursors kept across other calls, IncrementCounter
// and GetCounters (zero deltas, overflows and unknown ids included), and
// ReadRanked walks with any formula and window, EditActivity, Pin, Unpin
// and ReadPinned, bursts of pins past the limit and edits read back
// hydrated, React, Unreact (notices included), GetOwnReactions and
// ReadReactors walks (social_relation_ops.h, social_ranked_ops.h,
// social_edit_ops.h, social_reaction_ops.h), lists of accounts
// (social_list_ops.h), and, when the input turns inactive
// readers on, ReleaseInactiveReaders (the reads that follow rebuild what it
// made dormant; without, it must be refused). Invalid arguments are part of the
// mix: a call that must fail must fail with the documented code and change
// nothing (the engine records every change in a change stream, and a failed
// call must append no record to it).
//
// A mute with an expiry of an actor merged at read is the one sequence in
// which a reader's timeline may differ from the model's (feed_engine.h,
// Mute): once it has expired, that reader's timeline reads are no longer
// compared (social_fuzz_context.h).
//
// Each call is one value of Op and one function; a call of a new feature
// joins as a new Op (before kOpCount) and one function. Adding an Op
// renumbers the ops after it, so committed seeds then drive other calls:
// they stay valid inputs, only their meaning shifts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feed_model_checks.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/social.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "model/feed_model.h"
#include "social_delivery_ops.h"
#include "social_edit_ops.h"
#include "social_fuzz_context.h"
#include "social_list_ops.h"
#include "social_ranked_ops.h"
#include "social_reaction_ops.h"
#include "social_relation_ops.h"

namespace feedcore::fuzz {
namespace {

using testing::Feed;
using Key = testing::FeedModel::Key;

constexpr size_t kEvictAll = size_t{1} << 40;

enum class Op : uint8_t {
  kFollow,
  kUnfollow,
  kPublish,
  kRetract,
  kRead,
  kContinue,
  kCountNewer,
  kAdvanceClock,
  kEvict,
  kSetMarker,
  kGetMarker,
  kNotificationCounts,
  kInvalid,
  kStats,
  kBlock,
  kUnblock,
  kMute,
  kUnmute,
  kRelationList,
  kFollowMany,
  kUnfollowMany,
  kUnfollowKeepingHistory,
  kIncrementCounter,
  kGetCounters,
  kReadRanked,
  kContinueRanked,
  kReleaseInactive,
  kEditActivity,
  kPin,
  kUnpin,
  kReadPinned,
  kPinMany,
  kEditAndRead,
  kListMarkers,
  kSubscribe,
  kUnsubscribe,
  kWatch,
  kUnwatch,
  kDispatch,
  kReact,
  kUnreact,
  kGetOwnReactions,
  kReadReactors,
  kListWrite,
  kListRead,
  kOpCount,  // not an op: the number of them
};

class Driver {
 public:
  explicit Driver(FuzzInput& in)
      : c_(in),
        relations_(c_),
        ranked_(c_),
        edits_(c_),
        deliveries_(c_),
        reactions_(c_),
        lists_(c_) {}

  void Run() {
    while (!c_.in.empty()) {
      Step(static_cast<Op>(c_.in.Below(static_cast<uint64_t>(Op::kOpCount))));
      for (const Key& key : c_.published) deliveries_.Published(key);
      c_.published.clear();
      c_.NoteExpiries();
    }
    deliveries_.Dispatch();
    CheckStats();
  }

 private:
  void Step(Op op) {
    switch (op) {
      case Op::kFollow:
        return Follow();
      case Op::kUnfollow:
        return Unfollow();
      case Op::kPublish:
        return Publish();
      case Op::kRetract:
        return Retract();
      case Op::kRead:
        return Read();
      case Op::kContinue:
        return Continue();
      case Op::kCountNewer:
        return CountNewer();
      case Op::kAdvanceClock:
        return c_.clock->Advance(static_cast<Micros>(c_.in.Below(120)));
      case Op::kEvict:
        return Evict();
      case Op::kSetMarker:
        return SetMarker();
      case Op::kGetMarker:
        return GetMarker();
      case Op::kNotificationCounts:
        return NotificationCounts();
      case Op::kInvalid:
        return Invalid();
      case Op::kBlock:
        return relations_.Block();
      case Op::kUnblock:
        return relations_.Unblock();
      case Op::kMute:
        return relations_.Mute();
      case Op::kUnmute:
        return relations_.Unmute();
      case Op::kRelationList:
        return relations_.ListPage();
      case Op::kFollowMany:
        return relations_.FollowMany();
      case Op::kUnfollowMany:
        return relations_.UnfollowMany();
      case Op::kUnfollowKeepingHistory:
        return relations_.UnfollowKeepingHistory();
      case Op::kIncrementCounter:
        return ranked_.IncrementCounter();
      case Op::kGetCounters:
        return ranked_.GetCounters();
      case Op::kReadRanked:
        return ranked_.ReadRanked();
      case Op::kContinueRanked:
        return ranked_.ContinueRanked();
      case Op::kReleaseInactive:
        return ReleaseInactive();
      case Op::kEditActivity:
        return edits_.EditActivity();
      case Op::kPin:
        return edits_.Pin();
      case Op::kUnpin:
        return edits_.Unpin();
      case Op::kReadPinned:
        return edits_.ReadPinned();
      case Op::kPinMany:
        return edits_.PinMany();
      case Op::kListMarkers:
        return ListMarkers();
      case Op::kSubscribe:
        return deliveries_.Subscribe();
      case Op::kUnsubscribe:
        return deliveries_.Unsubscribe();
      case Op::kWatch:
        return deliveries_.Watch();
      case Op::kUnwatch:
        return deliveries_.Unwatch();
      case Op::kDispatch:
        return deliveries_.Dispatch();
      case Op::kEditAndRead:
        return edits_.EditAndRead();
      case Op::kReact:
        return reactions_.React();
      case Op::kUnreact:
        return reactions_.Unreact();
      case Op::kGetOwnReactions:
        return reactions_.GetOwnReactions();
      case Op::kReadReactors:
        return reactions_.ReadReactors();
      case Op::kListWrite:
        return lists_.Write();
      case Op::kListRead:
        return lists_.Read();
      case Op::kStats:
      case Op::kOpCount:
        return CheckStats();
    }
  }

  void Follow() {
    const auto [follower, followee] = c_.Pair();
    FollowOptions options;
    const size_t backfill = c_.DrawBackfill(options);
    // Some follows deliver only some of the kinds drawn (0..2).
    std::optional<uint64_t> kinds;
    if (c_.in.Below(3) == 0) {
      kinds = 1 + c_.in.Below(7);
      options.kinds = KindFilter::Only({});
      options.kinds->kinds = *kinds;
    }
    const bool refused =
        c_.model.EitherBlocks(follower, followee) ||
        c_.model.FollowsWithOtherKinds(follower, followee, kinds);
    const uint64_t records = c_.Records();
    const FollowResult want =
        refused
            ? FollowResult{}
            : c_.model.Follow(follower, followee, backfill, c_.Now(), kinds);
    const absl::StatusOr<FollowResult> got =
        c_.engine->Follow(follower, followee, options);
    if (refused) {
      FUZZ_CHECK(absl::IsFailedPrecondition(got.status()));
      FUZZ_CHECK(c_.Records() == records);
      return;
    }
    FUZZ_CHECK(got.ok());
    FUZZ_CHECK(got->created == want.created);
    FUZZ_CHECK_DETAIL(got->backfilled == want.backfilled,
                      std::fprintf(stderr, "backfilled %zu, model %zu\n",
                                   got->backfilled, want.backfilled));
  }

  void Unfollow() {
    const auto [follower, followee] = c_.Pair();
    const UnfollowResult want = c_.model.Unfollow(follower, followee);
    const absl::StatusOr<UnfollowResult> got =
        c_.engine->Unfollow(follower, followee);
    FUZZ_CHECK(got.ok());
    FUZZ_CHECK(got->was_following == want.was_following);
    // Entries of a merged followee are merged, not copies to remove.
    if (!c_.MayMerge(followee)) FUZZ_CHECK(got->removed == want.removed);
  }

  Activity NewActivity() {
    c_.head += static_cast<Micros>(c_.in.Below(4));
    Activity a;
    a.id = ++c_.next_id;
    a.actor = c_.Entity();
    a.ts =
        c_.in.Below(4) != 0
            ? std::max<Micros>(0, c_.head - static_cast<Micros>(c_.in.Below(4)))
            : static_cast<Micros>(c_.in.Below(c_.HeadSpan()));
    a.payload = c_.in.Bytes(kMaxPayload);
    a.ttl = c_.in.Bool() ? 0 : 1 + static_cast<Micros>(c_.in.Below(400));
    a.verb = c_.in.Below(3);
    a.object = c_.in.Below(2);
    // Mostly kinds 0..2; now and then one above kMaxActivityKind, refused.
    a.kind = static_cast<ActivityKind>(
        c_.in.Below(16) == 0 ? kMaxActivityKind + 1 : c_.in.Below(3));
    // Now and then a repost of a recent id, of any kind: with a window,
    // one not of kind 1 (or of itself) is refused.
    if (c_.in.Below(3) == 0) {
      a.repost_of = a.id - c_.in.Below(std::min<ActivityId>(a.id, 6));
    }
    return a;
  }

  void Publish() {
    Activity a = NewActivity();
    switch (c_.in.Below(8)) {
      case 0:  // the same again: idempotent (or refused if retracted)
      case 1:  // another activity under a known id
        if (auto known = c_.Known()) {
          a.id = known->first;
          a.actor = known->second.actor;
          a.ts = known->second.ts;
          a.payload = known->second.payload;
          a.kind = known->second.kind;
          a.repost_of = known->second.repost_of;
          if (c_.in.Bool()) {
            a.payload = std::string(1, a.payload == "x" ? 'y' : 'x');
          }
          if (c_.in.Below(4) == 0) {
            a.kind = static_cast<ActivityKind>((a.kind + 1) % 3);
          }
        }
        break;
      default:
        break;
    }
    PublishOptions options;
    for (uint64_t n = c_.in.Below(4); n > 0; --n) {
      options.notify.push_back(c_.Entity());
    }
    for (uint64_t n = c_.in.Below(4); n > 0; --n) {
      options.mentions.push_back(c_.Entity());
    }
    const uint64_t records = c_.Records();
    const absl::StatusOr<PublishResult> want =
        c_.model.Publish(a, options, c_.Now());
    const absl::StatusOr<PublishResult> got = c_.engine->Publish(a, options);
    if (!c_.SameOutcome(got.status(), want.status(), records)) return;
    FUZZ_CHECK(got->created == want->created);
    // Dormant readers get no copies.
    FUZZ_CHECK(c_.options.inactive_after == 0
                   ? got->fanned_out == want->fanned_out
                   : got->fanned_out <= want->fanned_out);
    FUZZ_CHECK(got->merged_at_read == want->merged_at_read);
    FUZZ_CHECK(got->notified == want->notified);
    FUZZ_CHECK(!got->pending);
    if (a.id > c_.next_id) c_.next_id = a.id;
    if (!got->created) {
      FUZZ_CHECK(c_.Records() == records);
      return;
    }
    c_.published.push_back({a.ts, a.id});
    if (deliveries_.WatchingNotifications()) {
      for (const EntityId user :
           std::set<EntityId>(options.notify.begin(), options.notify.end())) {
        if (!c_.model.HidesInNotifications(user, a.actor, c_.Now())) {
          c_.model.ReclaimNotifications(user, c_.Now());
        }
      }
    }
  }

  void Retract() {
    ActivityId id = c_.next_id + 1 + c_.in.Below(3);  // unknown
    if (c_.in.Below(4) != 0) {
      if (auto known = c_.Known()) id = known->first;
    }
    const absl::StatusCode want = c_.model.Retract(id);
    FUZZ_CHECK(c_.engine->Retract(id).code() == want);
  }

  void Read() {
    Walk walk;
    const uint64_t kind = c_.in.Below(4);
    walk.feed = kind < 2    ? Feed::kTimeline
                : kind == 2 ? Feed::kOwn
                            : Feed::kWorld;
    walk.owner = walk.feed == Feed::kWorld ? 0 : c_.Entity();
    walk.order =
        c_.in.Bool() ? ReadOrder::kOldestFirst : ReadOrder::kNewestFirst;
    if (c_.in.Below(3) == 0) {
      const Micros a = static_cast<Micros>(c_.in.Below(c_.HeadSpan()));
      const Micros b = static_cast<Micros>(c_.in.Below(c_.HeadSpan()));
      if (c_.in.Bool()) walk.min_ts = std::min(a, b);
      if (c_.in.Bool()) walk.max_ts = std::max(a, b);
    }
    if (c_.in.Below(3) == 0) walk.kinds = 1 + c_.in.Below(7);  // of 0..2
    ReadAndCompare(std::move(walk), /*first=*/true);
  }

  void Continue() {
    if (walks_.empty()) return Read();
    ReadAndCompare(walks_.Take(c_.in.Below(walks_.size())), /*first=*/false);
  }

  // Reads the walk's next page (its first when `first`) and compares it
  // with the model; keeps the walk if another page follows.
  void ReadAndCompare(Walk walk, bool first) {
    ReadOptions r;
    r.limit = 1 + c_.in.Below(c_.options.max_page_size);
    r.hydrate = c_.in.Below(4) == 0;
    if (walk.feed == Feed::kTimeline && !c_.Comparable(walk.owner)) {
      r.cursor = first ? "" : walk.cursor;
      r.order = walk.order;
      r.min_ts = walk.min_ts;
      r.max_ts = walk.max_ts;
      r.kinds.kinds = walk.kinds;
      FUZZ_CHECK(c_.engine->ReadTimeline(walk.owner, r).ok());
      return;
    }
    walks_.ReadAndCompare(*c_.engine, c_.model, std::move(walk), r, first,
                          c_.Now());
  }

  void Evict() {
    const Micros now = c_.Now();
    const size_t budget = c_.in.Bool() ? 1 + c_.in.Below(8) : c_.in.U64();
    if (c_.HoldsAllCopies()) {
      if (!EvictAndCompare(*c_.engine, c_.model, budget, now)) return;
      // A budget spent on entries leaves expired activities in the store:
      // one unbounded call drops them, as the model's eviction does.
      FUZZ_CHECK(c_.engine->EvictExpired(kEvictAll).value() == 0);
    } else {
      // An engine holds no copies of what it merges at read: the counts
      // are not the model's.
      FUZZ_CHECK(c_.engine->EvictExpired(budget).value() <= budget);
      c_.engine->EvictExpired(kEvictAll).value();
    }
    c_.model.EvictExpired(now);
  }

  // A key of `feed` of `owner` as the model holds it, or anywhere.
  Key AnyKey(Feed feed, EntityId owner) {
    const testing::FeedModel::FeedMap& held = c_.model.feed(feed, owner);
    if (!held.empty() && c_.in.Below(4) != 0) {
      auto it = held.begin();
      std::advance(it, static_cast<long>(c_.in.Below(held.size())));
      return it->first;
    }
    return {static_cast<Micros>(c_.in.Below(c_.HeadSpan())),
            c_.in.Below(c_.next_id + 2)};
  }

  void CountNewer() {
    const EntityId reader = c_.Entity();
    const Key key = AnyKey(Feed::kTimeline, reader);
    const size_t max_count = 1 + c_.in.Below(c_.options.max_page_size);
    const absl::StatusOr<size_t> got =
        c_.engine->CountNewer(reader, {key.first, key.second}, max_count);
    FUZZ_CHECK(got.ok());
    if (!c_.Comparable(reader)) return;
    FUZZ_CHECK(*got == c_.model.CountNewer(reader, key, max_count, c_.Now()));
  }

  // A feed `user` may keep a marker in.
  MarkedFeed MarkableFeed(EntityId user) {
    switch (c_.in.Below(3)) {
      case 0:
        return MarkedFeed::Home(user);
      case 1:
        return MarkedFeed::Own(c_.Entity());
      default:
        return MarkedFeed::World();
    }
  }

  static Feed ModelFeed(const MarkedFeed& feed) {
    return feed.type == FeedType::kHome  ? Feed::kTimeline
           : feed.type == FeedType::kOwn ? Feed::kOwn
                                         : Feed::kWorld;
  }

  void SetMarker() {
    const EntityId user = c_.Entity();
    const MarkedFeed feed = MarkableFeed(user);
    const Key key = AnyKey(ModelFeed(feed), feed.owner);
    const bool force = c_.in.Below(4) == 0;
    const uint64_t records = c_.Records();
    const absl::StatusOr<bool> want =
        c_.model.SetReadMarker(user, feed, key, force);
    const absl::StatusOr<bool> got = c_.engine->SetReadMarker(
        user, feed, {key.first, key.second}, {.force = force});
    FUZZ_CHECK(got.ok() && want.ok());
    FUZZ_CHECK(*got == *want);
    FUZZ_CHECK(c_.Records() == records + (*got ? 1 : 0));
  }

  void GetMarker() {
    const EntityId user = c_.Entity();
    const MarkedFeed feed = MarkableFeed(user);
    const size_t max_unread = 1 + c_.in.Below(c_.options.max_page_size);
    const absl::StatusOr<ReadMarker> want =
        c_.model.GetReadMarker(user, feed, max_unread, c_.Now());
    const absl::StatusOr<ReadMarker> got =
        c_.engine->GetReadMarker(user, feed, max_unread);
    FUZZ_CHECK(got.ok() && want.ok());
    FUZZ_CHECK(got->key == want->key);
    if (feed.type == FeedType::kHome && !c_.Comparable(user)) return;
    FUZZ_CHECK_DETAIL(got->unread == want->unread,
                      std::fprintf(stderr, "unread %zu, model %zu\n",
                                   got->unread, want->unread));
    FUZZ_CHECK(got->more_unread == want->more_unread);
    FUZZ_CHECK_DETAIL(got->mentions == want->mentions,
                      std::fprintf(stderr, "mentions %zu, model %zu\n",
                                   got->mentions, want->mentions));
  }

  // All of a user's read states, a few feeds a page.
  void ListMarkers() {
    const EntityId user = c_.Entity();
    ReadStateOptions options;
    options.limit =
        1 + c_.in.Below(std::min<size_t>(4, c_.options.max_page_size));
    options.max_unread = 1 + c_.in.Below(c_.options.max_page_size);
    const std::vector<FeedReadState> want =
        c_.model.ReadStates(user, options.max_unread, c_.Now());
    std::vector<FeedReadState> got;
    for (size_t pages = 0;; ++pages) {
      FUZZ_CHECK(pages <= want.size());
      const absl::StatusOr<ReadStatePage> page =
          c_.engine->ListReadMarkers(user, options);
      FUZZ_CHECK(page.ok() && page->feeds.size() <= options.limit);
      got.insert(got.end(), page->feeds.begin(), page->feeds.end());
      if (page->next_cursor.empty()) break;
      options.cursor = page->next_cursor;
    }
    FUZZ_CHECK_DETAIL(got.size() == want.size(),
                      std::fprintf(stderr, "%zu feeds, model %zu\n", got.size(),
                                   want.size()));
    for (size_t i = 0; i < got.size(); ++i) {
      const ReadMarker& g = got[i].marker;
      const ReadMarker& w = want[i].marker;
      FUZZ_CHECK(got[i].feed == want[i].feed && g.key == w.key &&
                 g.mentions == w.mentions);
      if (got[i].feed.type == FeedType::kHome && !c_.Comparable(user)) {
        continue;
      }
      FUZZ_CHECK(g.unread == w.unread && g.more_unread == w.more_unread);
    }
  }

  void NotificationCounts() {
    const EntityId user = c_.Entity();
    c_.model.ReclaimNotifications(user, c_.Now());
    const feedcore::NotificationCounts want = c_.model.Counts(user);
    const absl::StatusOr<feedcore::NotificationCounts> got =
        c_.engine->GetNotificationCounts(user);
    FUZZ_CHECK(got.ok());
    FUZZ_CHECK(got->groups == want.groups);
    FUZZ_CHECK(got->unseen == want.unseen);
    FUZZ_CHECK(got->unread == want.unread);
  }

  // One call with a bad argument, picked by the input.
  void Invalid() {
    const uint64_t records = c_.Records();
    const auto [a, b] = c_.Pair();
    switch (c_.in.Below(16)) {
      case 0: {
        Activity bad = NewActivity();
        --c_.next_id;  // the id is not taken
        switch (c_.in.Below(3)) {
          case 0:
            bad.ts = -1 - static_cast<Micros>(c_.in.Below(4));
            break;
          case 1:
            bad.payload = std::string(kMaxPayload + 1, 'q');
            break;
          default:
            bad.ttl = c_.in.Bool() ? -1 : kMaxTtl + 1;
            break;
        }
        FUZZ_CHECK(!c_.model.Publish(bad, c_.Now()).ok());
        return c_.CheckRefused(c_.engine->Publish(bad).status(), records);
      }
      case 1: {
        Activity bad = NewActivity();
        --c_.next_id;
        PublishOptions options;
        if (c_.in.Bool()) {
          options.notify.assign(kMaxNotifyRecipients + 1, b);
        } else {
          options.mentions.assign(kMaxMentionRecipients + 1, b);
        }
        return c_.CheckRefused(c_.engine->Publish(bad, options).status(),
                               records);
      }
      case 2:
        return c_.CheckRefused(c_.engine->Follow(a, a).status(), records);
      case 3: {
        FollowOptions options;
        options.backfill = kMaxTimelineLengthLimit + 1 + c_.in.Below(4);
        return c_.CheckRefused(c_.engine->Follow(a, b, options).status(),
                               records);
      }
      case 4:
        return c_.CheckRefused(c_.engine->Unfollow(a, a).status(), records);
      case 5: {
        ReadOptions r;
        if (c_.in.Bool()) {
          r.limit = c_.in.Bool() ? 0 : c_.options.max_page_size + 1;
        } else {
          r.min_ts = 10;
          r.max_ts = 9;
        }
        return c_.CheckRefused(
            ReadFeed(*c_.engine, Feed::kTimeline, a, r).status(), records);
      }
      case 6: {
        // A walk's cursor on another feed, or junk.
        ReadOptions r;
        r.limit = 1;
        r.cursor = "not a cursor";
        Feed feed = Feed::kOwn;
        if (!walks_.empty()) {
          const Walk& walk = walks_.at(c_.in.Below(walks_.size()));
          r.cursor = walk.cursor;
          r.order = walk.order;
          feed = walk.feed == Feed::kTimeline ? Feed::kOwn : Feed::kTimeline;
        }
        return c_.CheckRefused(ReadFeed(*c_.engine, feed, a, r).status(),
                               records);
      }
      case 7:
        return c_.CheckRefused(
            c_.engine
                ->CountNewer(a, {-1 - static_cast<Micros>(c_.in.Below(4)), 0},
                             1)
                .status(),
            records);
      case 8:
        return c_.CheckRefused(
            c_.engine
                ->CountNewer(a, {0, 0},
                             c_.in.Bool() ? 0 : c_.options.max_page_size + 1)
                .status(),
            records);
      case 9: {
        // A marker that may not be set: below zero, in a notification
        // feed, in another user's home feed, or a world feed not owned by 0.
        MarkedFeed feed = MarkedFeed::Home(a);
        EntryKey key{static_cast<Micros>(c_.in.Below(c_.HeadSpan())), 0};
        switch (c_.in.Below(4)) {
          case 0:
            key.ts = -1 - static_cast<Micros>(c_.in.Below(4));
            break;
          case 1:
            feed = {FeedType::kNotification, a};
            break;
          case 2:
            feed = MarkedFeed::Home(b);
            break;
          default:
            feed = {FeedType::kWorld, b};
            break;
        }
        const bool force = c_.in.Bool();
        FUZZ_CHECK(
            !c_.model.SetReadMarker(a, feed, {key.ts, key.activity_id}, force)
                 .ok());
        return c_.CheckRefused(
            c_.engine->SetReadMarker(a, feed, key, {.force = force}).status(),
            records);
      }
      case 10: {
        MarkedFeed feed = MarkableFeed(a);
        size_t max_unread = 1;
        switch (c_.in.Below(3)) {
          case 0:
            max_unread = c_.in.Bool() ? 0 : c_.options.max_page_size + 1;
            break;
          case 1:
            feed = MarkedFeed::Home(b);
            break;
          default:
            feed = {FeedType::kNotification, a};
            break;
        }
        FUZZ_CHECK(!c_.model.GetReadMarker(a, feed, max_unread, c_.Now()).ok());
        return c_.CheckRefused(
            c_.engine->GetReadMarker(a, feed, max_unread).status(), records);
      }
      case 12:
        return relations_.Invalid();
      case 13:
        return ranked_.Invalid();
      case 14:
        return edits_.Invalid();
      case 15:
        return deliveries_.Invalid();
      default: {
        ReadOptions r;
        r.limit = 0;
        return c_.CheckRefused(ReadFeed(*c_.engine, Feed::kOwn, a, r).status(),
                               records);
      }
    }
  }

  // Idle readers made dormant: their later reads (which rebuild them)
  // must still match the model. Without inactive readers: refused.
  void ReleaseInactive() {
    const size_t budget = c_.in.Below(4);
    const uint64_t records = c_.Records();
    const absl::StatusOr<size_t> got =
        c_.engine->ReleaseInactiveReaders(budget);
    if (c_.options.inactive_after == 0) {
      FUZZ_CHECK(absl::IsFailedPrecondition(got.status()));
      FUZZ_CHECK(c_.Records() == records);
      return;
    }
    FUZZ_CHECK(got.ok());
    FUZZ_CHECK(*got <= budget);
  }

  void CheckStats() {
    const EngineStats stats = c_.engine->Stats().value();
    const testing::FeedModel::Totals want = c_.model.Expected();
    size_t notifications = 0;
    for (EntityId e = 1; e <= c_.entities; ++e) {
      notifications += c_.model.notifications(e).size();
    }
    // The model holds every copy a copy-mode engine would; an engine holds
    // none of what it merges at read, so it holds at most that many.
    // An inexact reader or a kept merged history may hold more.
    const size_t copy_mode_entries = want.entries + notifications;
    if (c_.AllComparable() && c_.copies_bounded) {
      FUZZ_CHECK_DETAIL(
          c_.HoldsAllCopies() ? stats.entries == copy_mode_entries
                              : stats.entries <= copy_mode_entries,
          std::fprintf(stderr, "entries %zu, model %zu + %zu\n", stats.entries,
                       want.entries, notifications));
    }
    FUZZ_CHECK(stats.activities == want.activities);
    FUZZ_CHECK(stats.retracted_activities == want.retracted);
    FUZZ_CHECK(stats.payload_bytes == want.payload_bytes);
    FUZZ_CHECK(stats.follow_edges == want.follow_edges);
    FUZZ_CHECK(stats.activities_evicted == want.activities_evicted);
  }

  SocialFuzzContext c_;
  RelationOps relations_;
  RankedOps ranked_;
  EditOps edits_;
  DeliveryOps deliveries_;
  ReactionOps reactions_;
  ListOps lists_;
  FeedWalks walks_;
};

}  // namespace
}  // namespace feedcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  feedcore::fuzz::FuzzInput in(data, size);
  feedcore::fuzz::Driver driver(in);
  driver.Run();
  return 0;
}
