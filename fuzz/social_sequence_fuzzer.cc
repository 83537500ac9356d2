// Fuzz target: arbitrary sequences of the social calls of a FeedEngine,
// each answer compared with the reference model the social model test uses
// (tests/model/feed_model.h).
//
// The input chooses the configuration (shards, hybrid threshold, default
// back-fill, page size, number of entities, flat or grouped notifications)
// and then one call after another: Follow (any back-fill, the default
// included) and Unfollow, Publish (idempotent re-publishes, conflicting ids,
// notify lists), Retract (known, retracted and unknown ids), paged reads of
// timelines, own feeds and the world feed in either order with windows and
// cursors kept across other calls, CountNewer, notification counts, clock
// advances, EvictExpired with any budget, and SetReadMarker/GetReadMarker on
// home, own and world feeds. Invalid arguments are part of the mix: a call
// that must fail must fail with the documented code and change nothing
// (the engine records every change in a change stream, and a failed call
// must append no record to it).
//
// Each call is one value of Op and one function of Driver; a call of a new
// feature joins as a new Op (before kOpCount) and one function. Adding an Op
// renumbers the ops after it, so committed seeds then drive other calls:
// they stay valid inputs, only their meaning shifts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/change_stream.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "model/feed_model.h"

namespace feedcore::fuzz {
namespace {

using testing::Feed;
using Key = testing::FeedModel::Key;

constexpr Micros kDefaultTtl = 300;
constexpr size_t kNeverReached = 100'000;
constexpr size_t kMaxPayload = 6;
constexpr size_t kMaxBackfill = 8;
constexpr size_t kEvictAll = size_t{1} << 40;

// Notifications with the same verb (and object) group when the feed
// aggregates; verb 0 stays ungrouped.
GroupKey GroupKeyOf(const Activity& a) {
  return a.verb == 0 ? 0 : a.verb * 4 + a.object;
}

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
  kOpCount,  // not an op: the number of them
};

// A paging walk kept open across other calls.
struct Walk {
  Feed feed = Feed::kTimeline;
  EntityId owner = 0;
  ReadOrder order = ReadOrder::kNewestFirst;
  std::optional<Micros> min_ts, max_ts;
  std::string cursor;
  Key last;
};

class Driver {
 public:
  explicit Driver(FuzzInput& in)
      : in_(in),
        clock_(std::make_shared<ManualClock>(1'000'000)),
        stream_(ChangeStream::Create({}).value()),
        options_(OptionsFrom(in)),
        entities_(2 + in.Below(7)),
        model_(options_) {
    EngineOptions options = options_;
    options.sweep_interval = 0;
    options.fanout_threads = 0;
    options.clock = clock_;
    options.change_stream = stream_;
    engine_ = FeedEngine::Create(options).value();
  }

  void Run() {
    while (!in_.empty()) {
      Step(static_cast<Op>(in_.Below(static_cast<uint64_t>(Op::kOpCount))));
    }
    CheckStats();
  }

 private:
  static EngineOptions OptionsFrom(FuzzInput& in) {
    EngineOptions o;
    o.shards = 1 + in.Below(4);
    const uint64_t threshold = in.Below(5);  // 0: never merged at read
    o.hybrid_fanout_threshold = threshold;
    o.default_backfill = in.Below(kMaxBackfill + 1);
    o.max_page_size = 1 + in.Below(8);
    o.default_ttl = kDefaultTtl;
    o.max_timeline_length = kNeverReached;
    o.world_timeline_length = kNeverReached;
    o.max_payload_bytes = kMaxPayload;
    o.aggregation.group_key = GroupKeyOf;
    o.notifications.aggregated = in.Bool();
    o.notifications.max_length = 1 + in.Below(6);
    return o;
  }

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
        return clock_->Advance(static_cast<Micros>(in_.Below(120)));
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
      case Op::kStats:
      case Op::kOpCount:
        return CheckStats();
    }
  }

  EntityId Entity() { return 1 + in_.Below(entities_); }
  // Two distinct entities.
  std::pair<EntityId, EntityId> Pair() {
    const EntityId a = Entity();
    EntityId b = Entity();
    if (b == a) b = a % entities_ + 1;
    return {a, b};
  }
  Micros Now() const { return clock_->Now(); }
  // Timestamps a call may name: 0..head_ + 1.
  uint64_t HeadSpan() const { return static_cast<uint64_t>(head_) + 2; }
  uint64_t Records() const { return stream_->Stats().next_sequence; }

  // A failed call: InvalidArgument, and no change recorded.
  void CheckRefused(const absl::Status& status, uint64_t records_before) {
    FUZZ_CHECK_DETAIL(
        absl::IsInvalidArgument(status),
        std::fprintf(stderr, "status: %s\n", status.ToString().c_str()));
    FUZZ_CHECK(Records() == records_before);
  }

  void Follow() {
    const auto [follower, followee] = Pair();
    FollowOptions options;
    size_t backfill = options_.default_backfill;
    if (in_.Bool()) {
      backfill = in_.Below(kMaxBackfill + 1);
      options.backfill = backfill;
    }
    const FollowResult want =
        model_.Follow(follower, followee, backfill, Now());
    const absl::StatusOr<FollowResult> got =
        engine_->Follow(follower, followee, options);
    FUZZ_CHECK(got.ok());
    FUZZ_CHECK(got->created == want.created);
    FUZZ_CHECK_DETAIL(got->backfilled == want.backfilled,
                      std::fprintf(stderr, "backfilled %zu, model %zu\n",
                                   got->backfilled, want.backfilled));
  }

  void Unfollow() {
    const auto [follower, followee] = Pair();
    const UnfollowResult want = model_.Unfollow(follower, followee);
    const absl::StatusOr<UnfollowResult> got =
        engine_->Unfollow(follower, followee);
    FUZZ_CHECK(got.ok());
    FUZZ_CHECK(got->was_following == want.was_following);
    // Entries of a merged followee are merged, not copies to remove.
    if (!model_.merged(followee)) FUZZ_CHECK(got->removed == want.removed);
  }

  Activity NewActivity() {
    head_ += static_cast<Micros>(in_.Below(4));
    Activity a;
    a.id = ++next_id_;
    a.actor = Entity();
    a.ts = in_.Below(4) != 0
               ? std::max<Micros>(0, head_ - static_cast<Micros>(in_.Below(4)))
               : static_cast<Micros>(in_.Below(HeadSpan()));
    a.payload = in_.Bytes(kMaxPayload);
    a.ttl = in_.Bool() ? 0 : 1 + static_cast<Micros>(in_.Below(400));
    a.verb = in_.Below(3);
    a.object = in_.Below(2);
    return a;
  }

  // An activity the model knows (stored or retracted), if any.
  std::optional<std::pair<ActivityId, testing::FeedModel::Activity>> Known() {
    const auto& activities = model_.activities();
    if (activities.empty()) return std::nullopt;
    auto it = activities.begin();
    std::advance(it, static_cast<long>(in_.Below(activities.size())));
    return *it;
  }

  void Publish() {
    Activity a = NewActivity();
    switch (in_.Below(8)) {
      case 0:  // the same again: idempotent (or refused if retracted)
      case 1:  // another activity under a known id
        if (auto known = Known()) {
          a.id = known->first;
          a.actor = known->second.actor;
          a.ts = known->second.ts;
          a.payload = known->second.payload;
          if (in_.Bool()) {
            a.payload = std::string(1, a.payload == "x" ? 'y' : 'x');
          }
        }
        break;
      default:
        break;
    }
    PublishOptions options;
    for (uint64_t n = in_.Below(4); n > 0; --n) {
      options.notify.push_back(Entity());
    }
    const uint64_t records = Records();
    const absl::StatusOr<PublishResult> want =
        model_.Publish(a, options, Now());
    const absl::StatusOr<PublishResult> got = engine_->Publish(a, options);
    FUZZ_CHECK_DETAIL(got.status().code() == want.status().code(),
                      std::fprintf(stderr, "got %s, model %s\n",
                                   got.status().ToString().c_str(),
                                   want.status().ToString().c_str()));
    if (!want.ok()) {
      FUZZ_CHECK(Records() == records);
      return;
    }
    FUZZ_CHECK(got->created == want->created);
    FUZZ_CHECK(got->fanned_out == want->fanned_out);
    FUZZ_CHECK(got->merged_at_read == want->merged_at_read);
    FUZZ_CHECK(got->notified == want->notified);
    FUZZ_CHECK(!got->pending);
    if (!got->created) FUZZ_CHECK(Records() == records);
    if (a.id > next_id_) next_id_ = a.id;
  }

  void Retract() {
    ActivityId id = next_id_ + 1 + in_.Below(3);  // unknown
    if (in_.Below(4) != 0) {
      if (auto known = Known()) id = known->first;
    }
    const absl::StatusCode want = model_.Retract(id);
    FUZZ_CHECK(engine_->Retract(id).code() == want);
  }

  absl::StatusOr<Page> EngineRead(Feed feed, EntityId owner,
                                  const ReadOptions& r) const {
    switch (feed) {
      case Feed::kTimeline:
        return engine_->ReadTimeline(owner, r);
      case Feed::kOwn:
        return engine_->ReadOwn(owner, r);
      case Feed::kWorld:
        return engine_->ReadWorld(r);
    }
    return absl::InternalError("unknown feed");
  }

  // Reads the walk's next page (its first when `first`) and compares it
  // with the model; keeps the walk if another page follows.
  void ReadAndCompare(Walk walk, bool first) {
    ReadOptions r;
    r.limit = 1 + in_.Below(options_.max_page_size);
    r.order = walk.order;
    r.min_ts = walk.min_ts;
    r.max_ts = walk.max_ts;
    r.hydrate = in_.Below(4) == 0;
    r.cursor = first ? "" : walk.cursor;
    const std::vector<StoredEntry> visible = model_.Read(
        walk.feed, walk.owner, walk.order, walk.min_ts, walk.max_ts,
        first ? std::nullopt : std::optional<Key>(walk.last), Now(), r.hydrate);
    const absl::StatusOr<Page> page = EngineRead(walk.feed, walk.owner, r);
    FUZZ_CHECK(page.ok());
    const size_t n = std::min<size_t>(r.limit, visible.size());
    FUZZ_CHECK_DETAIL(
        page->entries ==
            std::vector<StoredEntry>(visible.begin(),
                                     visible.begin() + static_cast<long>(n)),
        std::fprintf(stderr, "page of %zu entries, model %zu (of %zu)\n",
                     page->entries.size(), n, visible.size()));
    FUZZ_CHECK(page->next_cursor.empty() == (visible.size() <= r.limit));
    if (page->next_cursor.empty()) return;
    walk.cursor = page->next_cursor;
    walk.last = {page->entries.back().ts, page->entries.back().activity_id};
    if (walks_.size() >= 4) walks_.erase(walks_.begin());
    walks_.push_back(std::move(walk));
  }

  void Read() {
    Walk walk;
    const uint64_t kind = in_.Below(4);
    walk.feed = kind < 2    ? Feed::kTimeline
                : kind == 2 ? Feed::kOwn
                            : Feed::kWorld;
    walk.owner = walk.feed == Feed::kWorld ? 0 : Entity();
    walk.order = in_.Bool() ? ReadOrder::kOldestFirst : ReadOrder::kNewestFirst;
    if (in_.Below(3) == 0) {
      const Micros a = static_cast<Micros>(in_.Below(HeadSpan()));
      const Micros b = static_cast<Micros>(in_.Below(HeadSpan()));
      if (in_.Bool()) walk.min_ts = std::min(a, b);
      if (in_.Bool()) walk.max_ts = std::max(a, b);
    }
    ReadAndCompare(std::move(walk), /*first=*/true);
  }

  void Continue() {
    if (walks_.empty()) return Read();
    const size_t i = in_.Below(walks_.size());
    Walk walk = std::move(walks_[i]);
    walks_.erase(walks_.begin() + static_cast<long>(i));
    ReadAndCompare(std::move(walk), /*first=*/false);
  }

  // A key of `feed` of `owner` as the model holds it, or anywhere.
  Key AnyKey(Feed feed, EntityId owner) {
    const testing::FeedModel::FeedMap& held = model_.feed(feed, owner);
    if (!held.empty() && in_.Below(4) != 0) {
      auto it = held.begin();
      std::advance(it, static_cast<long>(in_.Below(held.size())));
      return it->first;
    }
    return {static_cast<Micros>(in_.Below(HeadSpan())),
            in_.Below(next_id_ + 2)};
  }

  void CountNewer() {
    const EntityId reader = Entity();
    const Key key = AnyKey(Feed::kTimeline, reader);
    const size_t max_count = 1 + in_.Below(options_.max_page_size);
    const absl::StatusOr<size_t> got =
        engine_->CountNewer(reader, key.first, key.second, max_count);
    FUZZ_CHECK(got.ok());
    FUZZ_CHECK(*got == model_.CountNewer(reader, key, max_count, Now()));
  }

  void Evict() {
    const Micros now = Now();
    const size_t expired = model_.CountExpired(now);
    const size_t budget = in_.Bool() ? 1 + in_.Below(8) : in_.U64();
    if (budget == 0) {
      FUZZ_CHECK(engine_->EvictExpired(0).value() == 0);
      return;
    }
    size_t total = 0;
    for (;;) {
      const size_t n = engine_->EvictExpired(budget).value();
      FUZZ_CHECK(n == std::min(budget, expired - total));
      total += n;
      if (n < budget) break;
    }
    // A budget spent on entries leaves expired activities in the store:
    // one unbounded call drops them, as the model's eviction does.
    FUZZ_CHECK(engine_->EvictExpired(kEvictAll).value() == 0);
    model_.EvictExpired(now);
  }

  // A feed `user` may keep a marker in.
  MarkedFeed MarkableFeed(EntityId user) {
    switch (in_.Below(3)) {
      case 0:
        return MarkedFeed::Home(user);
      case 1:
        return MarkedFeed::Own(Entity());
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
    const EntityId user = Entity();
    const MarkedFeed feed = MarkableFeed(user);
    const Key key = AnyKey(ModelFeed(feed), feed.owner);
    const bool force = in_.Below(4) == 0;
    const uint64_t records = Records();
    const absl::StatusOr<bool> want =
        model_.SetReadMarker(user, feed, key, force);
    const absl::StatusOr<bool> got = engine_->SetReadMarker(
        user, feed, {key.first, key.second}, {.force = force});
    FUZZ_CHECK(got.ok() && want.ok());
    FUZZ_CHECK(*got == *want);
    FUZZ_CHECK(Records() == records + (*got ? 1 : 0));
  }

  void GetMarker() {
    const EntityId user = Entity();
    const MarkedFeed feed = MarkableFeed(user);
    const size_t max_unread = 1 + in_.Below(options_.max_page_size);
    const absl::StatusOr<ReadMarker> want =
        model_.GetReadMarker(user, feed, max_unread, Now());
    const absl::StatusOr<ReadMarker> got =
        engine_->GetReadMarker(user, feed, max_unread);
    FUZZ_CHECK(got.ok() && want.ok());
    FUZZ_CHECK(got->key == want->key);
    FUZZ_CHECK_DETAIL(got->unread == want->unread,
                      std::fprintf(stderr, "unread %zu, model %zu\n",
                                   got->unread, want->unread));
    FUZZ_CHECK(got->more_unread == want->more_unread);
  }

  void NotificationCounts() {
    const EntityId user = Entity();
    model_.ReclaimNotifications(user, Now());
    const feedcore::NotificationCounts want = model_.Counts(user);
    const absl::StatusOr<feedcore::NotificationCounts> got =
        engine_->GetNotificationCounts(user);
    FUZZ_CHECK(got.ok());
    FUZZ_CHECK(got->groups == want.groups);
    FUZZ_CHECK(got->unseen == want.unseen);
    FUZZ_CHECK(got->unread == want.unread);
  }

  // One call with a bad argument, picked by the input.
  void Invalid() {
    const uint64_t records = Records();
    const auto [a, b] = Pair();
    switch (in_.Below(12)) {
      case 0: {
        Activity bad = NewActivity();
        --next_id_;  // the id is not taken
        switch (in_.Below(3)) {
          case 0:
            bad.ts = -1 - static_cast<Micros>(in_.Below(4));
            break;
          case 1:
            bad.payload = std::string(kMaxPayload + 1, 'q');
            break;
          default:
            bad.ttl = in_.Bool() ? -1 : kMaxTtl + 1;
            break;
        }
        FUZZ_CHECK(!model_.Publish(bad, Now()).ok());
        return CheckRefused(engine_->Publish(bad).status(), records);
      }
      case 1: {
        Activity bad = NewActivity();
        --next_id_;
        PublishOptions options;
        options.notify.assign(kMaxNotifyRecipients + 1, b);
        return CheckRefused(engine_->Publish(bad, options).status(), records);
      }
      case 2:
        return CheckRefused(engine_->Follow(a, a).status(), records);
      case 3: {
        FollowOptions options;
        options.backfill = kMaxTimelineLengthLimit + 1 + in_.Below(4);
        return CheckRefused(engine_->Follow(a, b, options).status(), records);
      }
      case 4:
        return CheckRefused(engine_->Unfollow(a, a).status(), records);
      case 5: {
        ReadOptions r;
        if (in_.Bool()) {
          r.limit = in_.Bool() ? 0 : options_.max_page_size + 1;
        } else {
          r.min_ts = 10;
          r.max_ts = 9;
        }
        return CheckRefused(EngineRead(Feed::kTimeline, a, r).status(),
                            records);
      }
      case 6: {
        // A walk's cursor on another feed, or junk.
        ReadOptions r;
        r.limit = 1;
        r.cursor = "not a cursor";
        Feed feed = Feed::kOwn;
        if (!walks_.empty()) {
          const Walk& walk = walks_[in_.Below(walks_.size())];
          r.cursor = walk.cursor;
          r.order = walk.order;
          feed = walk.feed == Feed::kTimeline ? Feed::kOwn : Feed::kTimeline;
        }
        return CheckRefused(EngineRead(feed, a, r).status(), records);
      }
      case 7:
        return CheckRefused(
            engine_->CountNewer(a, -1 - static_cast<Micros>(in_.Below(4)), 0, 1)
                .status(),
            records);
      case 8:
        return CheckRefused(
            engine_
                ->CountNewer(a, 0, 0,
                             in_.Bool() ? 0 : options_.max_page_size + 1)
                .status(),
            records);
      case 9: {
        // A marker that may not be set: below zero, in a notification
        // feed, in another user's home feed, or a world feed not owned by 0.
        MarkedFeed feed = MarkedFeed::Home(a);
        EntryKey key{static_cast<Micros>(in_.Below(HeadSpan())), 0};
        switch (in_.Below(4)) {
          case 0:
            key.ts = -1 - static_cast<Micros>(in_.Below(4));
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
        const bool force = in_.Bool();
        FUZZ_CHECK(
            !model_.SetReadMarker(a, feed, {key.ts, key.activity_id}, force)
                 .ok());
        return CheckRefused(
            engine_->SetReadMarker(a, feed, key, {.force = force}).status(),
            records);
      }
      case 10: {
        MarkedFeed feed = MarkableFeed(a);
        size_t max_unread = 1;
        switch (in_.Below(3)) {
          case 0:
            max_unread = in_.Bool() ? 0 : options_.max_page_size + 1;
            break;
          case 1:
            feed = MarkedFeed::Home(b);
            break;
          default:
            feed = {FeedType::kNotification, a};
            break;
        }
        FUZZ_CHECK(!model_.GetReadMarker(a, feed, max_unread, Now()).ok());
        return CheckRefused(
            engine_->GetReadMarker(a, feed, max_unread).status(), records);
      }
      default: {
        ReadOptions r;
        r.limit = 0;
        return CheckRefused(EngineRead(Feed::kOwn, a, r).status(), records);
      }
    }
  }

  void CheckStats() {
    const EngineStats stats = engine_->Stats().value();
    const testing::FeedModel::Totals want = model_.Expected();
    size_t notifications = 0;
    for (EntityId e = 1; e <= entities_; ++e) {
      notifications += model_.notifications(e).size();
    }
    // The model holds every copy a copy-mode engine would; an engine holds
    // none of what it merges at read, so it holds at most that many.
    const size_t copy_mode_entries = want.entries + notifications;
    FUZZ_CHECK_DETAIL(model_.merged_count() == 0
                          ? stats.entries == copy_mode_entries
                          : stats.entries <= copy_mode_entries,
                      std::fprintf(stderr, "entries %zu, model %zu + %zu\n",
                                   stats.entries, want.entries, notifications));
    FUZZ_CHECK(stats.activities == want.activities);
    FUZZ_CHECK(stats.retracted_activities == want.retracted);
    FUZZ_CHECK(stats.payload_bytes == want.payload_bytes);
    FUZZ_CHECK(stats.follow_edges == want.follow_edges);
    FUZZ_CHECK(stats.activities_evicted == want.activities_evicted);
  }

  FuzzInput& in_;
  std::shared_ptr<ManualClock> clock_;
  std::shared_ptr<ChangeStream> stream_;
  const EngineOptions options_;
  const EntityId entities_;
  testing::FeedModel model_;
  std::unique_ptr<FeedEngine> engine_;
  std::vector<Walk> walks_;
  ActivityId next_id_ = 0;
  Micros head_ = 50;
};

}  // namespace
}  // namespace feedcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  feedcore::fuzz::FuzzInput in(data, size);
  feedcore::fuzz::Driver driver(in);
  driver.Run();
  return 0;
}
