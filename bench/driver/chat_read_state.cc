// chat-read-state: what a chat client asks when it opens, the read state of
// every channel it is in, in one ListReadMarkers call.
//
// A user is in `chat_channels` channels (own feeds of as many actors). Each
// holds `chat_messages` messages, every fifth mentioning the user; the
// user's marker in each sits at the channel's `chat_read`-th message, so
// each channel has unread messages and mentions past it. Timed: one
// ListReadMarkers call of all the channels (one page), and beside it the
// same answers a call at a time (GetReadMarker per channel). The target:
// the whole read state in at most 50 us. On the Redis Cluster backend,
// when the run has one, the same without mentions (it refuses them).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/driver/cluster_feed.h"
#include "bench/driver/interleave.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/stats.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "chat-read-state";
constexpr EntityId kReader = 1;
constexpr EntityId kFirstChannel = 1'000;
constexpr ActivityId kIdsPerChannel = 1'000'000;
constexpr size_t kMentionEvery = 5;
constexpr double kTargetMicros = 50;
constexpr size_t kClusterSetupThreads = 8;

Activity Message(EntityId channel, size_t number) {
  Activity message;
  message.id = channel * kIdsPerChannel + number;
  message.actor = channel;
  message.ts = kBenchStartTime + static_cast<Micros>(number) * kMicrosPerSecond;
  message.payload = absl::StrCat("message ", number);
  return message;
}

// The channels, their messages and the reader's markers.
absl::Status Fill(RunContext& context, FeedEngine& engine, bool mentions,
                  bool on_cluster) {
  const DriverOptions& o = context.options;
  auto fill_channel = [&](size_t c) -> absl::Status {
    const EntityId channel = kFirstChannel + c;
    for (size_t m = 0; m < o.chat_messages; ++m) {
      PublishOptions options;
      if (mentions && m % kMentionEvery == 0) options.mentions = {kReader};
      absl::Status s = engine.Publish(Message(channel, m), options).status();
      if (!s.ok()) return s;
    }
    const Activity read = Message(channel, o.chat_read - 1);
    return engine.read_markers()
        ->SetReadMarker(kReader, MarkedFeed::Own(channel), {read.ts, read.id})
        .status();
  };
  if (on_cluster) {
    return RunConcurrently(context, kScenario,
                           "filling channels on Redis "
                           "Cluster",
                           o.chat_channels, kClusterSetupThreads, fill_channel);
  }
  for (size_t c = 0; c < o.chat_channels; ++c) {
    if (absl::Status s = fill_channel(c); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Channels listed, unread and mentions summed: the answer checked.
std::vector<int64_t> Totals(const std::vector<ReadMarker>& markers) {
  int64_t unread = 0, mentions = 0;
  for (const ReadMarker& m : markers) {
    unread += static_cast<int64_t>(m.unread);
    mentions += static_cast<int64_t>(m.mentions);
  }
  return {static_cast<int64_t>(markers.size()), unread, mentions};
}

void Run(RunContext& context, FeedEngine& engine, const std::string& system,
         bool on_cluster) {
  const DriverOptions& o = context.options;
  const bool mentions = !on_cluster;
  if (absl::Status s = Fill(context, engine, mentions, on_cluster); !s.ok()) {
    return context.answers.Fail(kScenario, system, s);
  }
  ReadMarkers& markers = *engine.read_markers();
  const size_t max_unread =
      std::min(o.chat_messages, engine.options().max_page_size);
  const size_t unread = std::min(o.chat_messages - o.chat_read, max_unread);
  const size_t unread_mentions = mentions
                                     ? (o.chat_messages - 1) / kMentionEvery -
                                           (o.chat_read - 1) / kMentionEvery
                                     : 0;
  const std::vector<int64_t> expected = {
      static_cast<int64_t>(o.chat_channels),
      static_cast<int64_t>(o.chat_channels * unread),
      static_cast<int64_t>(o.chat_channels * unread_mentions)};
  std::vector<ReadMarker> listed, one_by_one;
  const std::string bulk = absl::StrCat(system, ", ListReadMarkers");
  const std::string single = absl::StrCat(system, ", GetReadMarker each");
  SystemUnderTest list{
      bulk,
      [&](size_t, std::vector<double>& samples) -> absl::Status {
        ReadStateOptions options;
        options.limit = o.chat_channels;
        options.max_unread = max_unread;
        const auto start = Stopwatch::now();
        absl::StatusOr<ReadStatePage> page =
            markers.ListReadMarkers(kReader, options);
        samples.push_back(MicrosSince(start));
        if (!page.ok()) return page.status();
        listed.clear();
        for (const FeedReadState& state : page->feeds) {
          listed.push_back(state.marker);
        }
        return absl::OkStatus();
      },
      {},
      false};
  SystemUnderTest each{
      single,
      [&](size_t, std::vector<double>& samples) -> absl::Status {
        one_by_one.clear();
        const auto start = Stopwatch::now();
        for (size_t c = 0; c < o.chat_channels; ++c) {
          absl::StatusOr<ReadMarker> m = markers.GetReadMarker(
              kReader, MarkedFeed::Own(kFirstChannel + c), max_unread);
          if (!m.ok()) return m.status();
          one_by_one.push_back(*m);
        }
        samples.push_back(MicrosSince(start));
        return absl::OkStatus();
      },
      {},
      false};
  std::vector<SystemUnderTest> systems = {std::move(list), std::move(each)};
  RunInterleaved(context, kScenario, absl::StrCat("read state, ", system),
                 o.chat_rounds, systems);
  if (!systems[0].failed) {
    context.answers.Check(kScenario, "channels, unread, mentions", bulk,
                          expected, Totals(listed));
  }
  if (!systems[1].failed) {
    context.answers.Check(kScenario, "channels, unread, mentions", single,
                          expected, Totals(one_by_one));
  }
  const std::string metric =
      absl::StrCat("read state of ", o.chat_channels, " channels");
  AddFigures(context, kScenario, metric, "us", systems);
  context.report.Compare(kScenario, metric, bulk, single, std::nullopt);
  if (!on_cluster && !systems[0].failed) {
    const double median = Summarize(systems[0].samples).median;
    context.report.Note(absl::StrCat(
        kScenario, ": ", bulk, " median ", absl::StrFormat("%.1f", median),
        " us (target <= ", kTargetMicros,
        " us: ", median <= kTargetMicros ? "met" : "MISSED", ")"));
  }
}

}  // namespace

void RunChatReadState(RunContext& context) {
  const size_t cap = context.options.timeline_cap;
  if (absl::StatusOr<FeedSetup> feed = NewFeedSetup(cap); !feed.ok()) {
    context.answers.Fail(kScenario, kFeedcore, feed.status());
  } else {
    Run(context, *feed->engine, kFeedcore, /*on_cluster=*/false);
  }
  if (std::unique_ptr<ClusterFeed> cluster = OpenClusterFeed(
          context, kScenario,
          NewEngineOptions(std::make_shared<ManualClock>(kBenchStartTime),
                           cap))) {
    Run(context, cluster->engine(), kFeedcoreCluster, /*on_cluster=*/true);
  }
}

}  // namespace feedcore::bench
