// Overload of the asynchronous fan-out queue: many threads publishing large
// fan-outs at once while the only worker is held, so the queue stays full.
// Publishes that may not wait must either go through completely or fail
// with ResourceExhausted having changed nothing; publishes that may wait
// must wait (not fail, not drop) and all arrive once the worker moves on.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::Async;
using testing::IdsOf;
using testing::MakeActivity;
using testing::Own;
using testing::Timeline;

constexpr EntityId kActor = 1'000'000;
constexpr EntityId kFollowers = 64;
constexpr size_t kQueueCapacity = 2;
constexpr int kPublishers = 4;
constexpr ActivityId kPerPublisher = 50;

// Holds every delivery until opened; a guard against a hang bounds it.
class Valve {
 public:
  void OnDelivery() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(120), [this] { return open_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Opens the valve when a test leaves early, before the engine (declared
// earlier) drains its queue on destruction.
struct OpenOnExit {
  std::shared_ptr<Valve> valve;
  ~OpenOnExit() { valve->Open(); }
};

EngineOptions QueueOptions(const std::shared_ptr<Valve>& valve) {
  EngineOptions o = testing::SocialFixture::Defaults();
  o.fanout_threads = 1;
  o.fanout_queue_capacity = kQueueCapacity;
  o.parallel_fanout_min_followers = 2;  // every publish of kActor queues
  o.on_delivery = [valve](absl::Span<const EntityId>, const TimelineEntry&) {
    valve->OnDelivery();
  };
  return o;
}

ActivityId IdOf(int publisher, ActivityId i) {
  return 1 + static_cast<ActivityId>(publisher) * kPerPublisher + i;
}

TEST_CASE("a full queue under concurrent publishers: all or nothing each") {
  auto valve = std::make_shared<Valve>();
  testing::SocialFixture f(QueueOptions(valve));
  const OpenOnExit open{valve};
  for (EntityId id = 1; id <= kFollowers; ++id) f.Fol(id, kActor);

  std::mutex mu;
  std::set<ActivityId> accepted, rejected;
  std::atomic<int> other_errors{0};
  std::vector<std::thread> publishers;
  for (int p = 0; p < kPublishers; ++p) {
    publishers.emplace_back([&, p] {
      for (ActivityId i = 0; i < kPerPublisher; ++i) {
        const ActivityId id = IdOf(p, i);
        const absl::StatusOr<PublishResult> r = f.engine->Publish(
            MakeActivity(id, kActor, static_cast<Micros>(id)), Async(false));
        std::lock_guard<std::mutex> lock(mu);
        if (r.ok() && r->created) {
          accepted.insert(id);
        } else if (absl::IsResourceExhausted(r.status())) {
          rejected.insert(id);
        } else {
          other_errors.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : publishers) t.join();
  CHECK(other_errors.load() == 0);
  CHECK(accepted.size() + rejected.size() == kPublishers * kPerPublisher);
  // The worker holds one fan-out and the queue has room for
  // kQueueCapacity more: everything else was turned away.
  CHECK(accepted.size() <= kQueueCapacity + 1);
  CHECK(rejected.size() >= kPublishers * kPerPublisher - kQueueCapacity - 1);
  // A rejected publish stored nothing: the actor's own feed holds exactly
  // the accepted ones already (it is written before the fan-out queues).
  const std::vector<ActivityId> own = IdsOf(Own(*f.engine, kActor));
  CHECK(std::set<ActivityId>(own.begin(), own.end()) == accepted);
  CHECK(f.engine->Stats().value().activities == accepted.size());

  valve->Open();
  f.engine->WaitForFanout();
  std::vector<ActivityId> want(accepted.rbegin(), accepted.rend());
  for (EntityId id = 1; id <= kFollowers; ++id) {
    INFO("follower " << id);
    CHECK(IdsOf(Timeline(*f.engine, id)) == want);
  }
  // A rejected id was never taken: publishing it again creates it.
  const ActivityId retry = *rejected.begin();
  CHECK(f.Pub(MakeActivity(retry, kActor, static_cast<Micros>(retry)),
              Async(false))
            .created);
}

// Publish calls begun and returned across threads, so that a test can wait
// until every publisher is inside a call that has not returned.
class PublishCalls {
 public:
  void Begin() {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
    cv_.notify_all();
  }
  void End() {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    ++returned_;
    cv_.notify_all();
  }
  // Waits until `threads` calls are in flight at once with at least
  // `min_returned` returned, or until `total` have returned; the timeout
  // only guards against a hang. Returns how many have returned.
  int WaitForStuck(int threads, int min_returned, int total) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(120), [&] {
      return (in_flight_ == threads && returned_ >= min_returned) ||
             returned_ == total;
    });
    return returned_;
  }
  int returned() {
    std::lock_guard<std::mutex> lock(mu_);
    return returned_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int in_flight_ = 0;
  int returned_ = 0;
};

TEST_CASE("a full queue makes waiting publishers wait, then delivers all") {
  auto valve = std::make_shared<Valve>();
  testing::SocialFixture f(QueueOptions(valve));
  const OpenOnExit open{valve};
  for (EntityId id = 1; id <= kFollowers; ++id) f.Fol(id, kActor);

  PublishCalls calls;
  std::atomic<int> failures{0};
  std::vector<std::thread> publishers;
  for (int p = 0; p < kPublishers; ++p) {
    publishers.emplace_back([&, p] {
      for (ActivityId i = 0; i < kPerPublisher; ++i) {
        const ActivityId id = IdOf(p, i);
        calls.Begin();
        const absl::StatusOr<PublishResult> r = f.engine->Publish(
            MakeActivity(id, kActor, static_cast<Micros>(id)), Async(true));
        if (!r.ok() || !r->created) failures.fetch_add(1);
        calls.End();
      }
    });
  }
  // One worker and one task per publish: the worker takes one fan-out and
  // is held in it, the queue accepts kQueueCapacity more, and then every
  // publisher is stuck in Publish waiting for room. Publishes that did not
  // wait would instead all return while the worker is still held.
  const int accepted_while_held =
      calls.WaitForStuck(kPublishers, static_cast<int>(kQueueCapacity) + 1,
                         kPublishers * kPerPublisher);
  CHECK(accepted_while_held == static_cast<int>(kQueueCapacity) + 1);
  CHECK(failures.load() == 0);

  valve->Open();
  for (std::thread& t : publishers) t.join();
  CHECK(failures.load() == 0);
  CHECK(calls.returned() == kPublishers * kPerPublisher);
  f.engine->WaitForFanout();
  for (EntityId id = 1; id <= kFollowers; id += 7) {
    INFO("follower " << id);
    CHECK(Timeline(*f.engine, id).size() == kPublishers * kPerPublisher);
  }
}

}  // namespace
}  // namespace feedcore
