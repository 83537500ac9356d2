// PubSubHub: Redis's publish/subscribe in feedcore-server, and the push of
// feed deliveries through it.
//
// Channels are byte strings, as in Redis: PUBLISH sends a message to the
// subscribers of its channel (SUBSCRIBE) and of every pattern that matches
// it (PSUBSCRIBE, Redis's glob patterns). Two kinds of channel also carry
// what the feed engine delivers, to their direct subscribers:
//   timeline:<entity>       each entry a publish brings into the entity's
//                           home timeline, those of merged-at-read actors
//                           and of a dormant reader included, as
//                           [activity id, actor, ts, expires_at, payload],
//                           one FEED.READ entry
//   notifications:<entity>  the entity's [unseen, unread, groups] after each
//                           notification delivered to it
// <entity> is a decimal id or a name, as the FEED.* commands take them.
// The hub holds one subscription of the engine's (FeedDeliveries) and
// watches the feeds that have a channel subscriber; its callback runs on
// the engine's delivery thread, never inside a fan-out.
//
// Each subscriber is a PushSink: a connection's, which queues pushes
// beside its replies without blocking and closes the connection when they
// pass its output buffer limit. So a slow client never holds up a publish
// or a fan-out.
//
// Thread-safe. One reader/writer lock guards the maps; a delivery holds it
// shared only to copy the sinks, and pushes after letting it go. Lock
// order: the hub's lock, then the engine's delivery lock (Watch, Unwatch);
// sinks are pushed to with no lock held.
#ifndef FEEDCORE_SERVER_PUBSUB_HUB_H_
#define FEEDCORE_SERVER_PUBSUB_HUB_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"
#include "feedcore/feed_engine.h"
#include "feedcore/feed_facets.h"
#include "feedcore/name_registry.h"
#include "feedcore/types.h"

namespace feedcore::server {

// Where one subscriber's pushes go.
class PushSink {
 public:
  virtual ~PushSink() = default;
  // Queues one push: an array of `elements` whose encoded elements are
  // `body`; the sink writes the array's header in its client's protocol
  // (`>` in RESP3, `*` in RESP2). Never blocks. False if the client is
  // gone or went past its output limit (and is being closed).
  virtual bool Push(size_t elements, absl::string_view body) = 0;
};

// Which feed a channel carries.
struct FeedChannel {
  enum class Kind { kTimeline, kNotifications };
  Kind kind = Kind::kTimeline;
  EntityId entity = 0;
};

// The channel prefixes of the feed channels.
inline constexpr absl::string_view kTimelineChannelPrefix = "timeline:";
inline constexpr absl::string_view kNotificationsChannelPrefix =
    "notifications:";

class PubSubHub {
 public:
  // Subscribes to the deliveries of `feeds` for the feed channels, whose
  // timeline messages carry payloads read back from `feeds` and actor
  // names from `names` (which may be null). Call once, before serving,
  // with an engine that outlives the hub's use of it. FailedPrecondition
  // for an engine without FeedDeliveries; the engine's error otherwise.
  absl::Status AttachFeeds(FeedEngine* feeds, const NameRegistry* names);

  // Subscribes `sink` to `channel` (a feed channel when `feed` is set).
  // Returns false if it was subscribed already. ResourceExhausted (nothing
  // changes) when the engine watches kMaxWatchedFeeds feeds already.
  absl::StatusOr<bool> Subscribe(const std::shared_ptr<PushSink>& sink,
                                 const std::string& channel,
                                 std::optional<FeedChannel> feed);
  // Returns false if `sink` was not subscribed to `channel`.
  bool Unsubscribe(const PushSink* sink, const std::string& channel);
  bool SubscribePattern(const std::shared_ptr<PushSink>& sink,
                        const std::string& pattern);
  bool UnsubscribePattern(const PushSink* sink, const std::string& pattern);

  // PUBLISH: pushes ["message", channel, message] to the channel's
  // subscribers and ["pmessage", pattern, channel, message] to each
  // matching pattern's. Returns how many pushes were queued. Cost: the
  // channel's subscribers, plus a glob match per pattern.
  size_t Publish(absl::string_view channel, absl::string_view message);

  // PUBSUB CHANNELS: the channels with a subscriber, matching `pattern`
  // when it is set.
  std::vector<std::string> Channels(
      std::optional<absl::string_view> pattern) const;
  // PUBSUB NUMSUB: the channel's subscribers.
  size_t Subscribers(absl::string_view channel) const;
  // PUBSUB NUMPAT: patterns with a subscriber.
  size_t Patterns() const;

  // Deliveries the engine dropped because the hub's queue was full (its
  // subscribers missed those pushes).
  uint64_t missed_deliveries() const;

 private:
  using Sinks = std::vector<std::shared_ptr<PushSink>>;
  struct Channel {
    Sinks sinks;
    std::optional<FeedChannel> feed;
  };
  using FeedIndex = absl::flat_hash_map<EntityId, std::vector<std::string>>;

  // The subscription's callback, on the engine's delivery thread.
  void Delivered(const Delivery& delivery);
  // The [id, actor, ts, expires_at, payload] body of a timeline push.
  std::string EntryBody(const TimelineEntry& entry) const;
  // Starts or stops the engine watching `feed`'s feed. REQUIRES: mu_ held.
  absl::Status WatchFeed(const FeedChannel& feed, bool watch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Pushes ["message", channel, data] (`data` already encoded) to `sinks`.
  static size_t PushMessage(const Sinks& sinks, absl::string_view channel,
                            absl::string_view data);
  FeedIndex& IndexOf(FeedChannel::Kind kind) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  FeedEngine* feeds_ = nullptr;           // set before serving
  FeedDeliveries* deliveries_ = nullptr;  // feeds_'s
  SubscriptionId subscription_ = 0;
  const NameRegistry* names_ = nullptr;  // set before serving; may be null
  // The last timeline body built, for the deliveries of one publish to
  // several timelines; touched only by Delivered, which the engine never
  // runs twice at once.
  ActivityId last_body_id_ = 0;
  std::string last_body_;
  mutable internal::SharedMutex mu_;
  absl::flat_hash_map<std::string, Channel> channels_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Sinks> patterns_ ABSL_GUARDED_BY(mu_);
  // The feed channels by entity: those a delivery to the entity goes to.
  FeedIndex timelines_ ABSL_GUARDED_BY(mu_);
  FeedIndex notifications_ ABSL_GUARDED_BY(mu_);
};

// One session's subscriptions; unsubscribes them all when destroyed (the
// connection closed). Move-only. Not thread-safe: its session's.
class PubSubMembership {
 public:
  PubSubMembership() = default;
  // A session that pushes to `sink` through `hub`.
  PubSubMembership(PubSubHub* hub, std::shared_ptr<PushSink> sink)
      : hub_(hub), sink_(std::move(sink)) {}
  ~PubSubMembership() { Clear(); }
  PubSubMembership(PubSubMembership&& other) noexcept;
  PubSubMembership& operator=(PubSubMembership&& other) noexcept;

  // Whether this session can subscribe (it has a sink).
  bool can_subscribe() const { return hub_ != nullptr && sink_ != nullptr; }
  const std::shared_ptr<PushSink>& sink() const { return sink_; }
  // Channels plus patterns: the count Redis's replies give.
  size_t count() const { return channels_.size() + patterns_.size(); }

  // Each returns whether the set changed. REQUIRES: can_subscribe().
  // Subscribe fails as PubSubHub::Subscribe does, changing nothing.
  absl::StatusOr<bool> Subscribe(const std::string& channel,
                                 std::optional<FeedChannel> feed);
  bool Unsubscribe(const std::string& channel);
  bool SubscribePattern(const std::string& pattern);
  bool UnsubscribePattern(const std::string& pattern);
  std::vector<std::string> channels() const;
  std::vector<std::string> patterns() const;
  // Unsubscribes every channel and pattern (RESET, closing).
  void Clear();

 private:
  PubSubHub* hub_ = nullptr;
  std::shared_ptr<PushSink> sink_;
  absl::flat_hash_set<std::string> channels_;
  absl::flat_hash_set<std::string> patterns_;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_PUBSUB_HUB_H_
