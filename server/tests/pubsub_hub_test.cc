// Unit and stress tests of feedcore-server's publish/subscribe
// (server/pubsub_hub.h): what PUBLISH reaches, patterns, the feed channels
// fed by a real engine's delivery hooks, subscriptions ending with their
// session, and threads subscribing, publishing and delivering at once
// (meant to run under ThreadSanitizer too).
#include "pubsub_hub.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "command_dispatcher.h"
#include "feedcore/feedcore.h"

namespace feedcore::server {
namespace {

// Keeps every push as RESP2 bytes.
class RecordingSink : public PushSink {
 public:
  bool Push(size_t elements, absl::string_view body) override {
    std::lock_guard lock(mutex_);
    if (refuse_) return false;
    pushes_.push_back(absl::StrCat("*", elements, "\r\n", body));
    return true;
  }
  std::vector<std::string> pushes() const {
    std::lock_guard lock(mutex_);
    return pushes_;
  }
  void Refuse() {
    std::lock_guard lock(mutex_);
    refuse_ = true;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> pushes_;
  bool refuse_ = false;
};

std::string Message(absl::string_view channel, absl::string_view data) {
  return absl::StrCat("*3\r\n$7\r\nmessage\r\n$", channel.size(), "\r\n",
                      channel, "\r\n$", data.size(), "\r\n", data, "\r\n");
}

TEST_CASE("publish reaches a channel's subscribers and matching patterns") {
  PubSubHub hub;
  auto a = std::make_shared<RecordingSink>();
  auto b = std::make_shared<RecordingSink>();
  CHECK(*hub.Subscribe(a, "news", std::nullopt));
  CHECK_FALSE(*hub.Subscribe(a, "news", std::nullopt));
  CHECK(*hub.Subscribe(b, "news", std::nullopt));
  CHECK(hub.SubscribePattern(b, "n*"));
  CHECK(hub.Publish("news", "hi") == 3);
  CHECK(hub.Publish("nope", "x") == 1);
  CHECK(hub.Publish("other", "x") == 0);
  CHECK(a->pushes() == std::vector<std::string>{Message("news", "hi")});
  CHECK(b->pushes().size() == 3);
  CHECK(b->pushes()[1] ==
        "*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
  CHECK(hub.Subscribers("news") == 2);
  CHECK(hub.Patterns() == 1);
  CHECK(hub.Channels(std::nullopt) == std::vector<std::string>{"news"});
  CHECK(hub.Channels("x*").empty());

  // A sink that refuses (its client over the limit) is not counted.
  b->Refuse();
  CHECK(hub.Publish("news", "again") == 1);
  CHECK(hub.Unsubscribe(a.get(), "news"));
  CHECK_FALSE(hub.Unsubscribe(a.get(), "news"));
  CHECK(hub.Unsubscribe(b.get(), "news"));
  CHECK(hub.UnsubscribePattern(b.get(), "n*"));
  CHECK(hub.Channels(std::nullopt).empty());
  CHECK(hub.Patterns() == 0);
}

TEST_CASE("a session's subscriptions end with it") {
  PubSubHub hub;
  auto sink = std::make_shared<RecordingSink>();
  {
    PubSubMembership membership(&hub, sink);
    CHECK(*membership.Subscribe("a", std::nullopt));
    CHECK(*membership.Subscribe("b", std::nullopt));
    CHECK(membership.SubscribePattern("c*"));
    CHECK(membership.count() == 3);
    PubSubMembership moved = std::move(membership);
    CHECK(moved.count() == 3);
    CHECK(hub.Subscribers("a") == 1);
  }
  CHECK(hub.Subscribers("a") == 0);
  CHECK(hub.Patterns() == 0);
  CHECK(hub.Publish("a", "x") == 0);
}

// An engine whose deliveries feed `hub`, as feedcore-server wires it;
// with `background` false its callbacks run in DispatchDeliveries.
std::unique_ptr<InProcessFeedEngine> EngineFeeding(
    PubSubHub& hub, bool background, size_t hybrid_threshold = 0) {
  EngineOptions options;
  options.sweep_interval = 0;
  options.fanout_threads = 0;
  options.background_deliveries = background;
  options.hybrid_fanout_threshold = hybrid_threshold;
  auto engine = FeedEngine::Create(options).value();
  REQUIRE(hub.AttachFeeds(engine.get(), nullptr).ok());
  return engine;
}

// Activity 77 of actor 2 at ts 1000, saying "hello".
Activity Hello() {
  Activity activity;
  activity.id = 77;
  activity.actor = 2;
  activity.ts = 1000;
  activity.payload = "hello";
  return activity;
}

TEST_CASE("feed channels carry a followee's entries and notification counts") {
  PubSubHub hub;
  std::unique_ptr<InProcessFeedEngine> engine = EngineFeeding(hub, false);
  auto sink = std::make_shared<RecordingSink>();
  REQUIRE(engine->Follow(1, 2, {}).ok());
  REQUIRE(engine->Follow(3, 2, {}).ok());
  REQUIRE(*hub.Subscribe(sink, "timeline:1",
                         FeedChannel{FeedChannel::Kind::kTimeline, 1}));
  REQUIRE(*hub.Subscribe(sink, "notifications:1",
                         FeedChannel{FeedChannel::Kind::kNotifications, 1}));
  Activity activity = Hello();
  PublishOptions publish;
  publish.notify = {1};
  REQUIRE(engine->Publish(activity, publish).ok());
  CHECK(sink->pushes().empty());  // pushed from the delivery callbacks
  CHECK(*engine->DispatchDeliveries() == 2);
  const std::vector<std::string> pushes = sink->pushes();
  REQUIRE(pushes.size() == 2);
  // The entry as FEED.READ gives it: id, actor, ts, expiry, payload.
  const std::string prefix =
      "*3\r\n$7\r\nmessage\r\n$10\r\ntimeline:1\r\n"
      "*5\r\n$2\r\n77\r\n$1\r\n2\r\n:1000\r\n:";
  CHECK(std::count_if(pushes.begin(), pushes.end(), [&](const std::string& p) {
          return absl::StartsWith(p, prefix) &&
                 absl::EndsWith(p, "\r\n$5\r\nhello\r\n");
        }) == 1);
  CHECK(std::count(pushes.begin(), pushes.end(),
                   "*3\r\n$7\r\nmessage\r\n$15\r\nnotifications:1\r\n"
                   "*3\r\n:1\r\n:1\r\n:1\r\n") == 1);
  // After the last subscriber leaves, nothing more is pushed.
  hub.Unsubscribe(sink.get(), "timeline:1");
  hub.Unsubscribe(sink.get(), "notifications:1");
  activity.id = 78;
  REQUIRE(engine->Publish(activity, publish).ok());
  CHECK(*engine->DispatchDeliveries() == 0);
  CHECK(sink->pushes().size() == 2);
}

TEST_CASE("a timeline channel carries the entries of a merged-at-read actor") {
  PubSubHub hub;
  std::unique_ptr<InProcessFeedEngine> engine =
      EngineFeeding(hub, false, /*hybrid_threshold=*/1);
  REQUIRE(engine->Follow(1, 2, {}).ok());
  REQUIRE(engine->Follow(3, 2, {}).ok());  // 2 is merged at read from here
  auto sink = std::make_shared<RecordingSink>();
  REQUIRE(*hub.Subscribe(sink, "timeline:1",
                         FeedChannel{FeedChannel::Kind::kTimeline, 1}));
  REQUIRE(*hub.Subscribe(sink, "timeline:3",
                         FeedChannel{FeedChannel::Kind::kTimeline, 3}));
  Activity activity = Hello();
  const PublishResult published = *engine->Publish(activity, {});
  REQUIRE(published.merged_at_read);
  CHECK(*engine->DispatchDeliveries() == 2);
  const std::vector<std::string> pushes = sink->pushes();
  REQUIRE(pushes.size() == 2);
  for (const absl::string_view channel : {"timeline:1", "timeline:3"}) {
    const std::string prefix =
        absl::StrCat("*3\r\n$7\r\nmessage\r\n$10\r\n", channel,
                     "\r\n*5\r\n$2\r\n77\r\n$1\r\n2\r\n:1000\r\n:");
    CHECK(
        std::count_if(pushes.begin(), pushes.end(), [&](const std::string& p) {
          return absl::StartsWith(p, prefix) &&
                 absl::EndsWith(p, "\r\n$5\r\nhello\r\n");
        }) == 1);
  }
  CHECK(hub.missed_deliveries() == 0);
}

TEST_CASE("a RESP2 subscriber's session takes only the subscribing commands") {
  EngineOptions options;
  options.sweep_interval = 0;
  std::unique_ptr<InProcessFeedEngine> engine =
      FeedEngine::Create(options).value();
  auto boards = LeaderboardStore::Create(LeaderboardOptions{}).value();
  auto dispatcher =
      CommandDispatcher::Create(engine.get(), boards.get()).value();
  auto sink = std::make_shared<RecordingSink>();
  SessionState session = dispatcher->NewSession(sink);
  SessionState no_sink = dispatcher->NewSession();
  auto run = [&](SessionState& s, std::vector<std::string> args) {
    std::string out;
    dispatcher->Execute(args, s, out);
    return out;
  };
  CHECK(run(no_sink, {"SUBSCRIBE", "a"}) ==
        "-ERR this session has no connection to push to\r\n");
  CHECK(run(session, {"SUBSCRIBE", "a", "timeline:"}) ==
        "-ERR channel entity must be a decimal id or a name: a name must not "
        "be empty\r\n");
  CHECK(run(session, {"PUBLISH", "a", "x"}) == ":0\r\n");
  CHECK(run(session, {"SUBSCRIBE", "a"}) ==
        "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n");
  CHECK(run(no_sink, {"PUBLISH", "a", "x"}) == ":1\r\n");
  CHECK(sink->pushes() == std::vector<std::string>{Message("a", "x")});
  CHECK(run(session, {"ZCARD", "k"}) ==
        "-ERR Can't execute 'zcard': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE "
        "/ PING / QUIT / RESET are allowed in this context\r\n");
  CHECK(run(session, {"PING"}) == "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
  CHECK(run(session, {"RESET"}) == "+RESET\r\n");
  CHECK(run(no_sink, {"PUBLISH", "a", "x"}) == ":0\r\n");
  CHECK(run(session, {"HELLO", "3"}).rfind("%", 0) == 0);
  CHECK(run(session, {"SUBSCRIBE", "b"}) ==
        ">3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:1\r\n");
  CHECK(run(session, {"ZCARD", "k"}) == ":0\r\n");  // RESP3 takes any
}

TEST_CASE("threads subscribing, publishing and delivering at once") {
  constexpr int kSubscribers = 3;
  constexpr int kRounds = 300;
  PubSubHub hub;
  std::unique_ptr<InProcessFeedEngine> engine = EngineFeeding(hub, true);
  for (EntityId reader = 1; reader <= 4; ++reader) {
    REQUIRE(engine->Follow(reader, 100, {}).ok());
  }
  std::atomic<bool> done{false};
  std::atomic<int> refused{0};
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  std::vector<std::thread> threads;
  for (int t = 0; t < kSubscribers; ++t) {
    sinks.push_back(std::make_shared<RecordingSink>());
  }
  for (int t = 0; t < kSubscribers; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        PubSubMembership membership(&hub, sinks[t]);
        const EntityId reader = 1 + (t + round) % 4;
        refused +=
            !membership
                 .Subscribe(absl::StrCat("timeline:", reader),
                            FeedChannel{FeedChannel::Kind::kTimeline, reader})
                 .ok();
        refused += !membership.Subscribe("chat", std::nullopt).ok();
        membership.SubscribePattern("c*");
        if (round % 2 == 0) membership.Unsubscribe("chat");
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; !done.load(); ++i) hub.Publish("chat", "hi");
  });
  threads.emplace_back([&] {
    Activity activity;
    activity.actor = 100;
    activity.payload = "p";
    for (ActivityId id = 1; !done.load(); ++id) {
      activity.id = id;
      activity.ts = static_cast<Micros>(id);
      REQUIRE(engine->Publish(activity, {}).ok());
    }
  });
  for (int t = 0; t < kSubscribers; ++t) threads[t].join();
  done = true;
  for (size_t t = kSubscribers; t < threads.size(); ++t) threads[t].join();
  CHECK(refused.load() == 0);
  // Every subscription ended with its membership.
  CHECK(hub.Channels(std::nullopt).empty());
  CHECK(hub.Patterns() == 0);
  for (const auto& sink : sinks) {
    for (const std::string& push : sink->pushes()) {
      const bool known = push.rfind("*3\r\n$7\r\nmessage\r\n", 0) == 0 ||
                         push.rfind("*4\r\n$8\r\npmessage\r\n", 0) == 0;
      CHECK(known);
    }
  }
}

}  // namespace
}  // namespace feedcore::server
