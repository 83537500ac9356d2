#include "bench/driver/timeline_systems.h"

#include <charconv>
#include <random>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace feedcore::bench {

EngineOptions NewEngineOptions(std::shared_ptr<ManualClock> clock, size_t cap) {
  EngineOptions options;
  options.clock = std::move(clock);
  options.max_timeline_length = cap;
  options.default_backfill = 0;
  // Nothing expires during a run; a sweeper thread would only add noise.
  options.sweep_interval = 0;
  return options;
}

absl::StatusOr<FeedSetup> NewFeedSetup(size_t cap) {
  FeedSetup setup;
  setup.clock = std::make_shared<ManualClock>(kBenchStartTime);
  absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> engine =
      FeedEngine::Create(NewEngineOptions(setup.clock, cap));
  if (!engine.ok()) return engine.status();
  setup.engine = *std::move(engine);
  return setup;
}

BaselineOptions NewBaselineOptions(std::shared_ptr<ManualClock> clock,
                                   size_t cap) {
  BaselineOptions options;
  options.cap = cap;
  options.clock = std::move(clock);
  return options;
}

absl::Status PostRoundRobin(
    EntityId first_actor, size_t actors, size_t rounds, uint64_t seed,
    const std::function<absl::Status(const Activity&)>& post) {
  std::mt19937_64 rng(seed);
  Micros ts = kBenchStartTime;
  ActivityId id = 1;
  for (size_t round = 0; round < rounds; ++round) {
    for (size_t a = 0; a < actors; ++a) {
      ts += 1 + static_cast<Micros>(rng() % 1000);
      Activity activity;
      activity.id = id++;
      activity.actor = first_actor + static_cast<EntityId>(a);
      activity.ts = ts;
      if (absl::Status s = post(activity); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

std::vector<int64_t> PageIds(const Page& page) {
  std::vector<int64_t> ids;
  ids.reserve(page.entries.size());
  for (const StoredEntry& e : page.entries) {
    ids.push_back(static_cast<int64_t>(e.activity_id));
  }
  return ids;
}

std::vector<int64_t> PageIds(const BaselinePage& page) {
  std::vector<int64_t> ids;
  ids.reserve(page.entries.size());
  for (const StoredEntry& e : page.entries) {
    ids.push_back(static_cast<int64_t>(e.activity_id));
  }
  return ids;
}

RedisTimelines::RedisTimelines(RedisClient& client, size_t cap, size_t pipeline)
    : client_(client),
      trim_stop_(absl::StrCat("-", cap + 1)),
      pipeline_(pipeline == 0 ? 1 : pipeline) {}

absl::Status RedisTimelines::FlushIfFull() {
  if (client_.pending() < pipeline_) return absl::OkStatus();
  return client_.Flush();
}

absl::Status RedisTimelines::QueueDelivery(EntityId owner, Micros ts,
                                           ActivityId id) {
  const std::string key = absl::StrCat("tl:", owner);
  const std::string score = absl::StrCat(ts);
  const std::string member = absl::StrCat(id);
  client_.Append({"ZADD", key, score, member});
  // Keeps the newest `cap`: ranks 0..-(cap+1) are the oldest beyond it.
  client_.Append({"ZREMRANGEBYRANK", key, "0", trim_stop_});
  return FlushIfFull();
}

absl::Status RedisTimelines::Flush() { return client_.Flush(); }

absl::Status RedisTimelines::Publish(const Activity& activity,
                                     absl::Span<const EntityId> owners) {
  const std::string body = absl::StrCat(activity.actor, ":", activity.payload);
  client_.Append({"SET", absl::StrCat("act:", activity.id), body});
  for (const EntityId owner : owners) {
    if (absl::Status status = QueueDelivery(owner, activity.ts, activity.id);
        !status.ok()) {
      return status;
    }
  }
  return client_.Flush();
}

absl::StatusOr<std::vector<int64_t>> RedisTimelines::ReadPage(
    EntityId owner, std::optional<Micros> before_ts, size_t limit,
    std::optional<Micros>* next_before) {
  const std::string key = absl::StrCat("tl:", owner);
  // With REV the range runs from max to min; "(" makes the bound
  // exclusive: strictly older than the last entry of the previous page.
  const std::string max =
      before_ts.has_value() ? absl::StrCat("(", *before_ts) : "+inf";
  const std::string count = absl::StrCat(limit);
  absl::StatusOr<RedisReply> reply =
      client_.Command({"ZRANGE", key, max, "-inf", "BYSCORE", "REV", "LIMIT",
                       "0", count, "WITHSCORES"});
  if (!reply.ok()) return reply.status();
  std::vector<int64_t> ids;
  ids.reserve(reply->elements.size() / 2);
  Micros last_ts = 0;
  for (size_t i = 0; i + 1 < reply->elements.size(); i += 2) {
    int64_t id = 0;
    double score = 0;
    if (!absl::SimpleAtoi(reply->elements[i].text, &id) ||
        !absl::SimpleAtod(reply->elements[i + 1].text, &score)) {
      return absl::InternalError(
          absl::StrCat("unexpected ZRANGE reply for ", key));
    }
    ids.push_back(id);
    last_ts = static_cast<Micros>(score);
  }
  *next_before =
      ids.size() == limit ? std::optional<Micros>(last_ts) : std::nullopt;
  return ids;
}

FollowOutcome FollowActors(FeedEngine& engine, FeedEngine* cluster,
                           EntityId reader, EntityId first_actor,
                           size_t count) {
  FollowOutcome outcome;
  for (size_t a = 0; a < count; ++a) {
    const EntityId actor = first_actor + static_cast<EntityId>(a);
    outcome.in_process = engine.Follow(reader, actor).status();
    if (!outcome.in_process.ok()) return outcome;
    if (cluster != nullptr && outcome.cluster.ok()) {
      outcome.cluster = cluster->Follow(reader, actor).status();
    }
  }
  return outcome;
}

}  // namespace feedcore::bench
