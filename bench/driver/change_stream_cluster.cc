// change-stream-cluster: what the change stream (change_stream.h) would
// cost on the Redis Cluster backend if it were kept there as Redis Streams.
// The backend refuses EngineOptions::change_stream; this scenario measures
// the costs that decide it (docs/scale-out.md, "The change stream").
//
// Publish: feedcore on the driver's cluster publishes, four ways,
// interleaved round by round, for an ordinary account
// (--stream_small_followers, --stream_small_rounds: its followers fall in
// slots of their own, so a fan-out call is one delivery) and for a
// celebrity (--stream_followers, --stream_rounds: about 13 followers a
// slot):
//   * the publish alone;
//   * the publish and its records as the in-process engine makes them, one
//     per state change (the activity, the own feed, the world feed, and
//     one timeline put per fan-out script call, naming its owners), each
//     XADDed into a stream in the slot of the keys it changed (a stream
//     per slot: the only place a script could write it atomically);
//   * the same records XADDed into one stream key (one slot, one master:
//     a single order and sequence);
//   * one record per Publish call in one stream (the activity alone, no
//     owners: what an application can write itself).
// The records go out after the publish, pipelined per master, so the
// figures bound from above what the same XADDs would add inside the
// scripts (which would save their replies, not their work). The masters'
// CPU time is taken around each round, outside the timing.
//
// Throughput: --stream_xadds records of one timeline put each, per round,
// into one stream key against the same number spread over the per-slot
// streams of every master. Memory: MEMORY USAGE of the streams over their
// records.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/driver/cluster_feed.h"
#include "bench/driver/interleave.h"
#include "bench/driver/redis_client.h"
#include "bench/driver/report.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "change-stream-cluster";
constexpr char kSlotStreams[] = "cluster+records_in_slot_streams";
constexpr char kOneStream[] = "cluster+records_in_one_stream";
constexpr char kCallRecord[] = "cluster+one_record_per_call";
constexpr char kXaddOne[] = "xadd_one_stream";
constexpr char kXaddSlots[] = "xadd_slot_streams";
// The celebrity and its followers; an ordinary account and its followers.
constexpr EntityId kCelebrity = 1;
constexpr EntityId kFirstFollower = 1'000'000;
constexpr EntityId kOrdinary = 2;
constexpr EntityId kFirstOrdinaryFollower = 500'000;
constexpr size_t kSlots = 16384;
// The backend's fan-out puts at most this many timelines in a script call
// (docs/scale-out.md, "Fan-out on write").
constexpr size_t kTimelinesPerCall = 64;
constexpr size_t kSetupThreads = 8;
constexpr size_t kWarmupPosts = 2;

Activity Post(size_t number, EntityId actor) {
  Activity post;
  post.id = 100 + number;
  post.actor = actor;
  post.ts = kBenchStartTime + static_cast<Micros>(number) * kMicrosPerSecond;
  post.payload = "live now";
  return post;
}

std::string BigEndian(uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 7; i >= 0; --i) {
    bytes[static_cast<size_t>(i)] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  return bytes;
}

// The 40 bytes a timeline member holds (ts, activity id, actor, expiry,
// group), as a record would carry its entry.
std::string EntryBytes(const Activity& post) {
  return absl::StrCat(BigEndian(static_cast<uint64_t>(post.ts)),
                      BigEndian(post.id), BigEndian(post.actor), BigEndian(0),
                      BigEndian(0));
}

// One master of the cluster and the XADDs queued for it.
struct Master {
  std::string address;
  std::unique_ptr<RedisClient> client;
};

// The driver's own connections to every master, and which master serves
// each slot (CLUSTER SLOTS), so that records go where their key lives.
class Masters {
 public:
  static absl::StatusOr<Masters> Connect(
      const std::vector<std::string>& seeds) {
    if (seeds.empty()) return absl::InvalidArgumentError("no seed nodes");
    absl::StatusOr<std::unique_ptr<RedisClient>> seed = ConnectTo(seeds[0]);
    if (!seed.ok()) return seed.status();
    absl::StatusOr<RedisReply> slots = (*seed)->Command({"CLUSTER", "SLOTS"});
    if (!slots.ok()) return slots.status();
    Masters masters;
    masters.slot_master_.assign(kSlots, -1);
    std::map<std::string, int> index;
    for (const RedisReply& range : slots->elements) {
      if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) {
        continue;
      }
      const RedisReply& node = range.elements[2];
      const std::string address = absl::StrCat(
          // An empty host means "the node you asked".
          node.elements[0].text.empty()
              ? seeds[0].substr(0, seeds[0].rfind(':'))
              : node.elements[0].text,
          ":", node.elements[1].integer);
      auto [it, added] =
          index.emplace(address, static_cast<int>(masters.masters_.size()));
      if (added) {
        absl::StatusOr<std::unique_ptr<RedisClient>> client =
            ConnectTo(address);
        if (!client.ok()) return client.status();
        masters.masters_.push_back({address, *std::move(client)});
      }
      for (int64_t s = range.elements[0].integer;
           s <= range.elements[1].integer && s < static_cast<int64_t>(kSlots);
           ++s) {
        masters.slot_master_[static_cast<size_t>(s)] = it->second;
      }
    }
    for (int owner : masters.slot_master_) {
      if (owner < 0) return absl::UnavailableError("a slot has no master");
    }
    masters.seed_ = *std::move(seed);
    return masters;
  }

  // The slot of each key (CLUSTER KEYSLOT, pipelined).
  absl::StatusOr<std::vector<uint16_t>> Slots(
      const std::vector<std::string>& keys) {
    for (const std::string& key : keys)
      seed_->Append({"CLUSTER", "KEYSLOT", key});
    std::vector<RedisReply> replies;
    if (absl::Status s = seed_->Flush(&replies); !s.ok()) return s;
    std::vector<uint16_t> slots;
    for (const RedisReply& r : replies) {
      slots.push_back(static_cast<uint16_t>(r.integer));
    }
    return slots;
  }

  // Queues `args` for the master of `slot`.
  void Append(uint16_t slot, std::vector<std::string_view> args) {
    masters_[static_cast<size_t>(slot_master_[slot])].client->Append(args);
  }

  // Sends what is queued, every master at once, and waits for the replies.
  absl::Status FlushAll() {
    std::vector<absl::Status> results(masters_.size());
    std::vector<std::thread> threads;
    for (size_t m = 0; m < masters_.size(); ++m) {
      if (masters_[m].client->pending() == 0) continue;
      threads.emplace_back(
          [this, m, &results] { results[m] = masters_[m].client->Flush(); });
    }
    for (std::thread& t : threads) t.join();
    for (const absl::Status& s : results) {
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // The masters' CPU time so far, together (INFO cpu), in seconds.
  absl::StatusOr<double> CpuSeconds() {
    double total = 0;
    for (Master& m : masters_) {
      absl::StatusOr<double> s = RedisCpuSeconds(*m.client);
      if (!s.ok()) return s.status();
      total += *s;
    }
    return total;
  }

  // One command to the master of `slot`, one round trip.
  absl::StatusOr<RedisReply> Command(uint16_t slot,
                                     std::vector<std::string_view> args) {
    return masters_[static_cast<size_t>(slot_master_[slot])].client->Command(
        args);
  }

  size_t size() const { return masters_.size(); }

 private:
  static absl::StatusOr<std::unique_ptr<RedisClient>> ConnectTo(
      absl::string_view address) {
    const size_t colon = address.rfind(':');
    int port = 0;
    if (colon == absl::string_view::npos ||
        !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", address, "' is not host:port"));
    }
    return RedisClient::Connect(std::string(address.substr(0, colon)), port);
  }

  std::vector<Master> masters_;
  std::vector<int> slot_master_;
  std::unique_ptr<RedisClient> seed_;
};

// The per-slot streams: one key in each slot that has records.
struct SlotStreams {
  std::vector<std::string> by_slot = std::vector<std::string>(kSlots);
  std::vector<std::string> keys;
  std::vector<uint16_t> slots;

  // `tag` is a hash tag ("{...}") of `slot`.
  void Add(const std::string& prefix, uint16_t slot, const std::string& tag) {
    if (!by_slot[slot].empty()) return;
    by_slot[slot] = absl::StrCat(prefix, ":", tag, ":cs");
    keys.push_back(by_slot[slot]);
    slots.push_back(slot);
  }
};

// A record on its way to a stream: the stream's slot and key, and fields.
struct Record {
  uint16_t slot = 0;
  const std::string* key = nullptr;
  std::string kind;
  std::string body;  // entry, then owners (8 bytes each) or the payload
};

// The records of one publish as the in-process engine makes them: the
// activity (with its payload), the puts into the own and world feeds, one
// put per fan-out call (a slot's followers, at most kTimelinesPerCall).
struct PublishLayout {
  // The followers' positions grouped into calls, and each call's slot.
  std::vector<std::vector<size_t>> calls;
  std::vector<uint16_t> call_slots;
  uint16_t actor_slot = 0;
  uint16_t world_slot = 0;
};

std::vector<Record> PublishRecords(const PublishLayout& layout,
                                   const SlotStreams& streams,
                                   const std::vector<EntityId>& followers,
                                   const Activity& post,
                                   const std::string* one_stream) {
  const std::string entry = EntryBytes(post);
  auto key_of = [&](uint16_t slot) {
    return one_stream != nullptr ? one_stream : &streams.by_slot[slot];
  };
  std::vector<Record> records;
  records.reserve(layout.calls.size() + 3);
  records.push_back({layout.actor_slot, key_of(layout.actor_slot), "activity",
                     absl::StrCat(entry, post.payload)});
  records.push_back({layout.actor_slot, key_of(layout.actor_slot), "put-own",
                     absl::StrCat(entry, BigEndian(post.actor))});
  records.push_back({layout.world_slot, key_of(layout.world_slot), "put-world",
                     absl::StrCat(entry, BigEndian(0))});
  for (size_t c = 0; c < layout.calls.size(); ++c) {
    std::string body = entry;
    for (size_t i : layout.calls[c])
      absl::StrAppend(&body, BigEndian(followers[i]));
    const uint16_t slot = layout.call_slots[c];
    records.push_back({slot, key_of(slot), "put-home", std::move(body)});
  }
  return records;
}

absl::Status AddRecords(Masters& masters, const std::vector<Record>& records,
                        uint16_t one_stream_slot, bool one_stream) {
  for (const Record& r : records) {
    masters.Append(one_stream ? one_stream_slot : r.slot,
                   {"XADD", *r.key, "*", "k", r.kind, "r", r.body});
  }
  return masters.FlushAll();
}

// MEMORY USAGE (exact) over XLEN of `keys`, together.
absl::StatusOr<double> BytesPerRecord(Masters& masters,
                                      const std::vector<uint16_t>& slots,
                                      const std::vector<std::string>& keys) {
  int64_t bytes = 0;
  int64_t records = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    absl::StatusOr<RedisReply> usage =
        masters.Command(slots[i], {"MEMORY", "USAGE", keys[i], "SAMPLES", "0"});
    if (!usage.ok()) return usage.status();
    absl::StatusOr<RedisReply> length =
        masters.Command(slots[i], {"XLEN", keys[i]});
    if (!length.ok()) return length.status();
    bytes += usage->integer;
    records += length->integer;
  }
  if (records == 0) return absl::InternalError("no records in the streams");
  return static_cast<double>(bytes) / static_cast<double>(records);
}

}  // namespace

namespace {

// What the measurements of one run share.
struct Bench {
  RunContext& context;
  Masters& masters;
  FeedEngine& engine;
  const std::string& prefix;
  uint16_t one_slot;  // the slot of the single streams' tag
  SlotStreams streams;
  size_t published = 0;  // posts so far: the next one's number
};

void NoteBytes(Bench& bench, const std::string& what,
               absl::StatusOr<double> bytes) {
  if (!bytes.ok()) {
    bench.context.answers.Fail(kScenario, kOneStream, bytes.status());
    return;
  }
  bench.context.report.Note(absl::StrFormat(
      "%s: %.0f bytes of Redis memory per record %s", kScenario, *bytes, what));
}

// `count` followers (from `first_follower` on) follow `actor`, which then
// publishes `rounds` times in each of the four ways, interleaved.
void MeasurePublishes(Bench& bench, EntityId actor, EntityId first_follower,
                      size_t count, size_t rounds) {
  RunContext& context = bench.context;
  Masters& masters = bench.masters;
  std::vector<EntityId> followers(count);
  for (size_t i = 0; i < count; ++i) followers[i] = first_follower + i;
  FollowOptions no_backfill;
  no_backfill.backfill = 0;
  if (absl::Status s = RunConcurrently(
          context, kScenario, "following on Redis Cluster", count,
          kSetupThreads,
          [&](size_t i) {
            return bench.engine.Follow(followers[i], actor, no_backfill)
                .status();
          });
      !s.ok()) {
    context.answers.Fail(kScenario, kFeedcoreCluster, s);
    return;
  }

  // The fan-out's calls: followers by slot, at most kTimelinesPerCall a
  // call, as the backend groups them.
  std::vector<std::string> tags;
  tags.reserve(count + 2);
  for (EntityId f : followers) tags.push_back(absl::StrCat("{", f, "}"));
  tags.push_back(absl::StrCat("{", actor, "}"));
  tags.push_back("{world}");
  absl::StatusOr<std::vector<uint16_t>> slots = masters.Slots(tags);
  if (!slots.ok()) {
    context.answers.Fail(kScenario, kFeedcoreCluster, slots.status());
    return;
  }
  PublishLayout layout;
  layout.actor_slot = (*slots)[count];
  layout.world_slot = (*slots)[count + 1];
  bench.streams.Add(bench.prefix, layout.actor_slot, tags[count]);
  bench.streams.Add(bench.prefix, layout.world_slot, tags[count + 1]);
  std::vector<std::vector<size_t>> by_slot(kSlots);
  for (size_t i = 0; i < count; ++i) by_slot[(*slots)[i]].push_back(i);
  for (size_t s = 0; s < kSlots; ++s) {
    const std::vector<size_t>& members = by_slot[s];
    if (members.empty()) continue;
    bench.streams.Add(bench.prefix, static_cast<uint16_t>(s), tags[members[0]]);
    for (size_t at = 0; at < members.size(); at += kTimelinesPerCall) {
      const size_t end = std::min(members.size(), at + kTimelinesPerCall);
      layout.calls.emplace_back(members.begin() + static_cast<ptrdiff_t>(at),
                                members.begin() + static_cast<ptrdiff_t>(end));
      layout.call_slots.push_back(static_cast<uint16_t>(s));
    }
  }
  const size_t records_per_publish = layout.calls.size() + 3;
  // One stream for all the records, and one for a record per call: keys
  // of their own (per fan-out, so that each can be counted), one slot.
  const std::string one_stream =
      absl::StrCat(bench.prefix, ":{cs}:changes-", actor);
  const std::string call_stream =
      absl::StrCat(bench.prefix, ":{cs}:calls-", actor);

  for (size_t n = 0; n < kWarmupPosts; ++n) {
    if (absl::Status s =
            bench.engine.Publish(Post(bench.published++, actor)).status();
        !s.ok()) {
      context.answers.Fail(kScenario, kFeedcoreCluster, s);
      return;
    }
  }

  // Each variant publishes posts of its own and adds its records; the
  // masters' CPU time is summed per variant around each round, outside
  // the timing.
  enum class Records { kNone, kSlotStreams, kOneStream, kPerCall };
  std::map<std::string, double> cpu;
  auto publish = [&](std::string name, Records records) {
    return SystemUnderTest{
        name,
        [&, name, records](size_t,
                           std::vector<double>& samples) -> absl::Status {
          const Activity post = Post(bench.published++, actor);
          absl::StatusOr<double> before = masters.CpuSeconds();
          if (!before.ok()) return before.status();
          const auto start = Stopwatch::now();
          absl::StatusOr<PublishResult> result = bench.engine.Publish(post);
          if (!result.ok()) return result.status();
          absl::Status added = absl::OkStatus();
          if (records == Records::kSlotStreams ||
              records == Records::kOneStream) {
            const bool one = records == Records::kOneStream;
            added =
                AddRecords(masters,
                           PublishRecords(layout, bench.streams, followers,
                                          post, one ? &one_stream : nullptr),
                           bench.one_slot, one);
          } else if (records == Records::kPerCall) {
            masters.Append(bench.one_slot, {"XADD", call_stream, "*", "k",
                                            "publish", "r", EntryBytes(post)});
            added = masters.FlushAll();
          }
          samples.push_back(MicrosSince(start) / 1000.0);
          if (!added.ok()) return added;
          if (result->fanned_out != count) {
            return absl::InternalError(absl::StrCat(
                "fanned out to ", result->fanned_out, " of ", count));
          }
          absl::StatusOr<double> after = masters.CpuSeconds();
          if (!after.ok()) return after.status();
          cpu[name] += *after - *before;
          return absl::OkStatus();
        },
        {},
        false};
  };
  std::vector<SystemUnderTest> publishes;
  publishes.push_back(publish(kFeedcoreCluster, Records::kNone));
  publishes.push_back(publish(kSlotStreams, Records::kSlotStreams));
  publishes.push_back(publish(kOneStream, Records::kOneStream));
  publishes.push_back(publish(kCallRecord, Records::kPerCall));
  RunInterleaved(context, kScenario, "publishing", rounds, publishes);
  const std::string metric = absl::StrCat("publish to ", count, " followers");
  AddFigures(context, kScenario, metric, "ms", publishes);
  for (const SystemUnderTest& system : publishes) {
    if (system.failed) continue;
    if (system.name != kFeedcoreCluster) {
      context.report.Compare(kScenario, metric, kFeedcoreCluster, system.name,
                             std::nullopt);
    }
    context.report.Note(absl::StrFormat(
        "%s: %s: %s used %.2f ms of the masters' CPU per publish", kScenario,
        metric, system.name,
        cpu[system.name] * 1e3 / static_cast<double>(rounds)));
  }
  context.report.Note(absl::StrFormat(
      "%s: %s: %zu records a publish with a record per state change (%zu "
      "fan-out calls)",
      kScenario, metric, records_per_publish, layout.calls.size()));
  // Every record of the timed rounds is in the one stream: nothing lost.
  if (absl::StatusOr<RedisReply> length =
          masters.Command(bench.one_slot, {"XLEN", one_stream});
      length.ok()) {
    context.answers.Check(
        kScenario, absl::StrCat("records in the one stream, ", metric),
        kOneStream,
        std::vector<int64_t>{
            static_cast<int64_t>(rounds * records_per_publish)},
        std::vector<int64_t>{length->integer});
  } else {
    context.answers.Fail(kScenario, kOneStream, length.status());
  }
  NoteBytes(bench, absl::StrCat("in the one stream, ", metric),
            BytesPerRecord(masters, {bench.one_slot}, {one_stream}));
}

// --stream_xadds records of one timeline put each, per round, into one
// stream key, against the same spread over the per-slot streams.
void MeasureAppends(Bench& bench, size_t xadds, size_t rounds) {
  RunContext& context = bench.context;
  Masters& masters = bench.masters;
  const SlotStreams& streams = bench.streams;
  if (streams.keys.empty()) return;  // the publishes failed
  const std::string xadd_one = absl::StrCat(bench.prefix, ":{cs}:xadd");
  const std::string entry = EntryBytes(Post(0, kCelebrity));
  std::vector<std::string> bodies(xadds);
  for (size_t k = 0; k < xadds; ++k) {
    bodies[k] = absl::StrCat(entry, BigEndian(kFirstFollower + k));
  }
  std::map<std::string, double> cpu;
  auto xadd = [&](std::string name, bool one) {
    return SystemUnderTest{
        name,
        [&, name, one](size_t round,
                       std::vector<double>& samples) -> absl::Status {
          absl::StatusOr<double> before = masters.CpuSeconds();
          if (!before.ok()) return before.status();
          const size_t pipeline = context.options.redis_pipeline;
          const auto start = Stopwatch::now();
          for (size_t k = 0; k < xadds; ++k) {
            const size_t at = (round * xadds + k) % streams.keys.size();
            masters.Append(one ? bench.one_slot : streams.slots[at],
                           {"XADD", one ? xadd_one : streams.keys[at], "*", "k",
                            "put-home", "r", bodies[k]});
            if ((k + 1) % pipeline == 0 || k + 1 == xadds) {
              if (absl::Status s = masters.FlushAll(); !s.ok()) return s;
            }
          }
          samples.push_back(static_cast<double>(xadds) /
                            (MicrosSince(start) / 1e6));
          absl::StatusOr<double> after = masters.CpuSeconds();
          if (!after.ok()) return after.status();
          cpu[name] += *after - *before;
          return absl::OkStatus();
        },
        {},
        false};
  };
  std::vector<SystemUnderTest> appends;
  appends.push_back(xadd(kXaddOne, true));
  appends.push_back(xadd(kXaddSlots, false));
  RunInterleaved(context, kScenario, "appending", rounds, appends);
  const std::string metric = "XADD of a one-owner put";
  for (const SystemUnderTest& system : appends) {
    if (system.failed) continue;
    context.report.Add(Figure{kScenario, metric, system.name, "records/s", true,
                              Summarize(system.samples), std::nullopt});
    context.report.Note(absl::StrFormat(
        "%s: %s used %.2f us of the masters' CPU per record", kScenario,
        system.name,
        cpu[system.name] * 1e6 / static_cast<double>(rounds * xadds)));
  }
  context.report.Compare(kScenario, metric, kXaddSlots, kXaddOne, std::nullopt);
  NoteBytes(bench, "of a one-owner put in one long stream",
            BytesPerRecord(masters, {bench.one_slot}, {xadd_one}));
  NoteBytes(bench,
            absl::StrFormat("in the %zu per-slot streams, their keys included",
                            streams.keys.size()),
            BytesPerRecord(masters, streams.slots, streams.keys));
}

}  // namespace

void RunChangeStreamCluster(RunContext& context) {
  // Without the cluster comparison in this run (main noted why), nothing
  // to measure.
  if (!context.redis_cluster.has_value()) return;
  const DriverOptions& options = context.options;
  auto clock = std::make_shared<ManualClock>(kBenchStartTime);
  std::unique_ptr<ClusterFeed> cluster = OpenClusterFeed(
      context, kScenario, NewEngineOptions(clock, options.timeline_cap));
  if (cluster == nullptr) return;
  absl::StatusOr<Masters> masters =
      Masters::Connect(context.redis_cluster->seeds);
  if (!masters.ok()) {
    context.answers.Fail(kScenario, kFeedcoreCluster, masters.status());
    return;
  }
  absl::StatusOr<std::vector<uint16_t>> one_slot = masters->Slots({"{cs}"});
  if (!one_slot.ok()) {
    context.answers.Fail(kScenario, kFeedcoreCluster, one_slot.status());
    return;
  }
  Bench bench{context,
              *masters,
              cluster->engine(),
              cluster->key_prefix(),
              (*one_slot)[0],
              {},
              0};
  MeasurePublishes(bench, kOrdinary, kFirstOrdinaryFollower,
                   options.stream_small_followers, options.stream_small_rounds);
  MeasurePublishes(bench, kCelebrity, kFirstFollower, options.stream_followers,
                   options.stream_rounds);
  MeasureAppends(bench, options.stream_xadds, options.stream_rounds);
  context.report.Note(absl::StrFormat(
      "%s: %zu masters; records pipelined %zu commands per master", kScenario,
      masters->size(), options.redis_pipeline));
}

}  // namespace feedcore::bench
