// Tests of FeedEngine::Create's validation of EngineOptions: every field
// just outside its documented range is rejected with InvalidArgument naming
// the field, every documented extreme is accepted, and "pick for me" values
// are resolved.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

constexpr size_t kSizeMax = std::numeric_limits<size_t>::max();
constexpr Micros kMicrosMax = std::numeric_limits<Micros>::max();
constexpr Micros kMicrosMin = std::numeric_limits<Micros>::min();

// Options that are valid and start no thread, with one field changed.
EngineOptions With(const std::function<void(EngineOptions&)>& change) {
  EngineOptions o;
  o.shards = 4;
  o.sweep_interval = 0;
  o.clock = std::make_shared<ManualClock>(1000);
  change(o);
  return o;
}

void CheckRejected(const EngineOptions& options, const std::string& field) {
  const absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> engine =
      FeedEngine::Create(options);
  INFO("field " << field << ": " << engine.status());
  REQUIRE(absl::IsInvalidArgument(engine.status()));
  CHECK(std::string(engine.status().message()).find(field) !=
        std::string::npos);
}

const InProcessFeedEngine& CheckAccepted(const EngineOptions& options,
                                std::unique_ptr<InProcessFeedEngine>* holder) {
  absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> engine =
      FeedEngine::Create(options);
  REQUIRE_MESSAGE(engine.ok(), engine.status());
  *holder = *std::move(engine);
  return **holder;
}

TEST_CASE("shards: 1..kMaxShards, or 0 for automatic") {
  CheckRejected(With([](EngineOptions& o) { o.shards = kMaxShards + 1; }),
                "shards");
  CheckRejected(With([](EngineOptions& o) { o.shards = kSizeMax; }), "shards");
  for (const size_t shards : {size_t{1}, size_t{3}, size_t{7}, kMaxShards}) {
    std::unique_ptr<InProcessFeedEngine> holder;
    const InProcessFeedEngine& engine = CheckAccepted(
        With([&](EngineOptions& o) { o.shards = shards; }), &holder);
    CHECK(engine.options().shards == shards);
    CHECK(engine.Stats().value().shards.size() == shards);
  }
}

TEST_CASE("shards = 0 resolves to the smallest power of two >= 4 x threads") {
  std::unique_ptr<InProcessFeedEngine> holder;
  const InProcessFeedEngine& engine =
      CheckAccepted(With([](EngineOptions& o) { o.shards = 0; }), &holder);
  const size_t shards = engine.options().shards;
  CHECK(shards >= 1);
  CHECK(shards <= kMaxShards);
  CHECK((shards & (shards - 1)) == 0);
  const size_t threads = std::thread::hardware_concurrency();
  if (threads > 0) {
    CHECK(shards >= 4 * threads);
    CHECK(shards / 2 < 4 * threads);  // the smallest such power of two
  }
  CHECK(engine.Stats().value().shards.size() == shards);
}

TEST_CASE("default_ttl: 1..kMaxTtl") {
  for (const Micros ttl :
       {Micros{0}, Micros{-1}, kMicrosMin, kMaxTtl + 1, kMicrosMax}) {
    CheckRejected(With([&](EngineOptions& o) { o.default_ttl = ttl; }),
                  "default_ttl");
  }
  for (const Micros ttl : {Micros{1}, kMaxTtl}) {
    std::unique_ptr<InProcessFeedEngine> holder;
    const InProcessFeedEngine& engine = CheckAccepted(
        With([&](EngineOptions& o) { o.default_ttl = ttl; }), &holder);
    CHECK(engine.options().default_ttl == ttl);
  }
}

TEST_CASE("max_timeline_length: 1..kMaxTimelineLengthLimit") {
  for (const size_t n : {size_t{0}, kMaxTimelineLengthLimit + 1, kSizeMax}) {
    CheckRejected(With([&](EngineOptions& o) { o.max_timeline_length = n; }),
                  "max_timeline_length");
  }
  for (const size_t n : {size_t{1}, kMaxTimelineLengthLimit}) {
    std::unique_ptr<InProcessFeedEngine> holder;
    const InProcessFeedEngine& engine = CheckAccepted(
        With([&](EngineOptions& o) { o.max_timeline_length = n; }), &holder);
    CHECK(engine.options().max_timeline_length == n);
  }
}

TEST_CASE("max_page_size: 1..kMaxPageSizeLimit") {
  for (const size_t n : {size_t{0}, kMaxPageSizeLimit + 1, kSizeMax}) {
    CheckRejected(With([&](EngineOptions& o) { o.max_page_size = n; }),
                  "max_page_size");
  }
  for (const size_t n : {size_t{1}, kMaxPageSizeLimit}) {
    std::unique_ptr<InProcessFeedEngine> holder;
    const InProcessFeedEngine& engine = CheckAccepted(
        With([&](EngineOptions& o) { o.max_page_size = n; }), &holder);
    CHECK(engine.options().max_page_size == n);
  }
}

TEST_CASE("sweep_interval: 0 or 1 ms..1 day") {
  for (const Micros interval :
       {Micros{-1}, kMicrosMin, Micros{1}, kMicrosPerMillisecond - 1,
        kMicrosPerDay + 1, kMicrosMax}) {
    CheckRejected(With([&](EngineOptions& o) { o.sweep_interval = interval; }),
                  "sweep_interval");
  }
  // Each accepted value other than 0 starts a sweeper, which destruction
  // must stop and join promptly even with a one-day interval.
  for (const Micros interval :
       {Micros{0}, kMicrosPerMillisecond, kMicrosPerDay}) {
    std::unique_ptr<InProcessFeedEngine> holder;
    const InProcessFeedEngine& engine = CheckAccepted(
        With([&](EngineOptions& o) { o.sweep_interval = interval; }), &holder);
    CHECK(engine.options().sweep_interval == interval);
  }
}

TEST_CASE("sweep_budget: 1..2^32") {
  constexpr size_t kMaxBudget = size_t{1} << 32;
  for (const size_t n : {size_t{0}, kMaxBudget + 1, kSizeMax}) {
    CheckRejected(With([&](EngineOptions& o) { o.sweep_budget = n; }),
                  "sweep_budget");
  }
  for (const size_t n : {size_t{1}, kMaxBudget}) {
    std::unique_ptr<InProcessFeedEngine> holder;
    const InProcessFeedEngine& engine = CheckAccepted(
        With([&](EngineOptions& o) { o.sweep_budget = n; }), &holder);
    CHECK(engine.options().sweep_budget == n);
  }
}

TEST_CASE("the defaults are valid and a null clock becomes a SystemClock") {
  EngineOptions o;
  o.sweep_interval = 0;
  std::unique_ptr<InProcessFeedEngine> holder;
  const InProcessFeedEngine& engine = CheckAccepted(o, &holder);
  REQUIRE(engine.options().clock != nullptr);
  CHECK(dynamic_cast<const SystemClock*>(engine.options().clock.get()) !=
        nullptr);
  const Micros system_now =
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  // Same epoch and unit as the system clock (a generous tolerance: this
  // checks the scale, not timing).
  const Micros engine_now = engine.options().clock->Now();
  CHECK(engine_now > system_now - kMicrosPerHour);
  CHECK(engine_now < system_now + kMicrosPerHour);

  CHECK(engine.options().default_ttl == 30 * kMicrosPerDay);
  CHECK(engine.options().max_timeline_length == 1000);
  CHECK(engine.options().max_page_size == 1000);
  CHECK(engine.options().sweep_budget == 100'000);

  // The default options (background sweeper included) are accepted as is.
  std::unique_ptr<InProcessFeedEngine> with_sweeper;
  CheckAccepted(EngineOptions{}, &with_sweeper);
  CHECK(with_sweeper->options().sweep_interval == kMicrosPerSecond);
}

TEST_CASE("a given clock is used as is") {
  auto clock = std::make_shared<ManualClock>(777);
  std::unique_ptr<InProcessFeedEngine> holder;
  const InProcessFeedEngine& engine =
      CheckAccepted(With([&](EngineOptions& o) { o.clock = clock; }), &holder);
  CHECK(engine.options().clock == clock);
  CHECK(engine.options().clock->Now() == 777);
}

}  // namespace
}  // namespace feedcore
