// feedcore_soak: minutes of steady traffic with a short TTL, to show that
// memory levels off (TTL eviction keeps up with publishing) and that tail
// latency stays flat over time. Not a benchmark of peak speed: every load
// runs at a fixed rate.
//
//   * a publisher publishes activities of random authors at --publish_rate,
//     each fanned out to the author's followers (--follows_per_user per
//     user, uniform), all expiring after --ttl_seconds;
//   * a reader pages random users' timelines (up to three pages of 20,
//     following cursors) at --read_rate pages a second;
//   * a leaderboard writer increments random members of a board of
//     --board_members at --board_rate, with a TopK(100) every 100th call;
//   * the background sweeper evicts expired entries.
// Every --interval_seconds the main thread samples resident memory
// (/proc/self/statm), the engine's entry count and the p50/p99 latencies of
// the interval, prints them and appends them to --csv. bench/soak/plot.gp
// turns the CSV into the chart in docs/ (make soak does both).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "bench/driver/stats.h"
#include "bench/soak/latency_window.h"
#include "bench/soak/resident_memory.h"
#include "feedcore/feedcore.h"

ABSL_FLAG(int, seconds, 300, "how long to run");
ABSL_FLAG(int, interval_seconds, 5, "sampling interval");
ABSL_FLAG(int, ttl_seconds, 15, "time-to-live of every activity");
ABSL_FLAG(uint64_t, users, 50'000, "users (each also an author)");
ABSL_FLAG(int, follows_per_user, 20, "authors each user follows");
ABSL_FLAG(int, publish_rate, 4'000, "publishes per second");
ABSL_FLAG(int, read_rate, 2'000, "timeline pages read per second");
ABSL_FLAG(int, board_rate, 20'000, "leaderboard calls per second");
ABSL_FLAG(uint64_t, board_members, 1'000'000, "leaderboard member ids");
ABSL_FLAG(std::string, csv, "soak.csv", "where to write the samples");

namespace feedcore::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Calls `step` `rate` times a second until `stop`, on a fixed schedule; a
// step that overruns delays the next ones but never makes a burst of more
// than a second's worth.
template <typename Step>
void RunAtRate(int rate, const std::atomic<bool>& stop, Step step) {
  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / rate));
  auto next = Clock::now();
  while (!stop.load(std::memory_order_relaxed)) {
    step();
    next += period;
    const auto now = Clock::now();
    if (next > now) {
      std::this_thread::sleep_until(next);
    } else if (now - next > std::chrono::seconds(1)) {
      next = now;
    }
  }
}

void Publisher(InProcessFeedEngine& engine, const std::atomic<bool>& stop,
               LatencyWindow& latency) {
  std::mt19937_64 rng(1);
  const uint64_t users = absl::GetFlag(FLAGS_users);
  const std::string payload(64, 'p');
  ActivityId next_id = 1;
  RunAtRate(absl::GetFlag(FLAGS_publish_rate), stop, [&] {
    Activity activity;
    activity.id = next_id++;
    activity.actor = 1 + rng() % users;
    activity.ts = engine.options().clock->Now();
    activity.payload = payload;
    const auto start = Stopwatch::now();
    const absl::StatusOr<PublishResult> r = engine.Publish(activity);
    latency.Add(MicrosSince(start));
    if (!r.ok()) {
      std::fprintf(stderr, "publish: %s\n", r.status().ToString().c_str());
      std::abort();
    }
  });
}

void Reader(const InProcessFeedEngine& engine, const std::atomic<bool>& stop,
            LatencyWindow& latency) {
  std::mt19937_64 rng(2);
  const uint64_t users = absl::GetFlag(FLAGS_users);
  ReadOptions read;
  read.limit = 20;
  int pages_left = 0;
  EntityId user = 0;
  RunAtRate(absl::GetFlag(FLAGS_read_rate), stop, [&] {
    if (pages_left == 0) {
      user = 1 + rng() % users;
      read.cursor.clear();
      pages_left = 3;
    }
    const auto start = Stopwatch::now();
    const absl::StatusOr<Page> page = engine.ReadTimeline(user, read);
    latency.Add(MicrosSince(start));
    if (!page.ok()) {
      std::fprintf(stderr, "read: %s\n", page.status().ToString().c_str());
      std::abort();
    }
    read.cursor = page->next_cursor;
    pages_left = read.cursor.empty() ? 0 : pages_left - 1;
  });
}

void BoardWriter(Leaderboard& board, const std::atomic<bool>& stop,
                 LatencyWindow& latency) {
  std::mt19937_64 rng(3);
  const uint64_t members = absl::GetFlag(FLAGS_board_members);
  uint64_t calls = 0;
  RunAtRate(absl::GetFlag(FLAGS_board_rate), stop, [&] {
    const auto start = Stopwatch::now();
    const bool ok = ++calls % 100 == 0
                        ? board.TopK(100).ok()
                        : board.Increment(rng() % members, 1 + rng() % 10).ok();
    latency.Add(MicrosSince(start));
    if (!ok) std::abort();
  });
}

int Run() {
  const uint64_t users = absl::GetFlag(FLAGS_users);
  EngineOptions options;
  options.default_ttl = absl::GetFlag(FLAGS_ttl_seconds) * kMicrosPerSecond;
  options.sweep_interval = 100 * kMicrosPerMillisecond;
  options.fanout_threads = 0;  // fan-out on the publisher's thread
  std::unique_ptr<InProcessFeedEngine> engine = FeedEngine::Create(options).value();
  std::unique_ptr<Leaderboard> board = Leaderboard::Create({}).value();

  std::mt19937_64 rng(0);
  FollowOptions no_backfill;
  no_backfill.backfill = 0;
  const int follows = absl::GetFlag(FLAGS_follows_per_user);
  for (EntityId user = 1; user <= users; ++user) {
    for (int i = 0; i < follows; ++i) {
      const EntityId author = 1 + rng() % users;
      if (author != user) {
        engine->Follow(user, author, no_backfill).IgnoreError();
      }
    }
  }
  std::printf("graph: %llu users, %zu follow edges; rss %.1f MB\n",
              static_cast<unsigned long long>(users),
              engine->Stats().value().follow_edges, ResidentBytes() / 1e6);

  std::ofstream csv(absl::GetFlag(FLAGS_csv));
  csv << "seconds,rss_mb,entries,activities,publishes_per_s,publish_p50_us,"
         "publish_p99_us,read_p50_us,read_p99_us,board_p50_us,board_p99_us\n";
  std::printf("%8s %9s %10s %10s %9s %9s %9s %9s %9s %9s\n", "seconds",
              "rss_mb", "entries", "activities", "pub/s", "pub_p99", "read_p50",
              "read_p99", "board_p50", "board_p99");

  std::atomic<bool> stop{false};
  LatencyWindow publish_latency, read_latency, board_latency;
  std::thread publisher([&] { Publisher(*engine, stop, publish_latency); });
  std::thread reader([&] { Reader(*engine, stop, read_latency); });
  std::thread board_writer([&] { BoardWriter(*board, stop, board_latency); });

  const auto start = Clock::now();
  const int interval = absl::GetFlag(FLAGS_interval_seconds);
  const int seconds = absl::GetFlag(FLAGS_seconds);
  for (int t = interval; t <= seconds; t += interval) {
    std::this_thread::sleep_until(start + std::chrono::seconds(t));
    const Summary publish = Summarize(publish_latency.Take());
    const Summary read = Summarize(read_latency.Take());
    const Summary board_calls = Summarize(board_latency.Take());
    const EngineStats stats = engine->Stats().value();
    const double rss_mb = ResidentBytes() / 1e6;
    const double publishes_per_s =
        static_cast<double>(publish.count) / interval;
    csv << t << ',' << rss_mb << ',' << stats.entries << ',' << stats.activities
        << ',' << publishes_per_s << ',' << publish.median << ',' << publish.p99
        << ',' << read.median << ',' << read.p99 << ',' << board_calls.median
        << ',' << board_calls.p99 << '\n';
    csv.flush();
    std::printf("%8d %9.1f %10zu %10zu %9.0f %9.1f %9.1f %9.1f %9.1f %9.1f\n",
                t, rss_mb, stats.entries, stats.activities, publishes_per_s,
                publish.p99, read.median, read.p99, board_calls.median,
                board_calls.p99);
    std::fflush(stdout);
  }
  stop.store(true);
  publisher.join();
  reader.join();
  board_writer.join();
  return csv.good() ? 0 : 1;
}

}  // namespace
}  // namespace feedcore::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return feedcore::bench::Run();
}
