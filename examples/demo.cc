// A narrated tour of feedcore's timeline engine.
//
// A streamer with five followers goes live and posts; two friends post too.
// Every post is copied into each follower's timeline at publish time
// (fan-out on write). One follower then pages through their timeline with
// cursors, reads it oldest-first and by time window; time moves past some
// entries' expiry, and eviction reclaims their memory. Time comes from a
// ManualClock, so the output is the same on every run.
//
// Exits with status 1 and the error if any call fails unexpectedly.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/feedcore.h"

namespace {

using feedcore::ActivityId;
using feedcore::EntityId;
using feedcore::Micros;

// 2024-01-01T00:00:00Z. Times below are printed relative to it.
constexpr Micros kStart = 1'704'067'200LL * feedcore::kMicrosPerSecond;

constexpr EntityId kStreamer = 1000;
constexpr EntityId kFriendAna = 2001;
constexpr EntityId kFriendBo = 2002;
constexpr EntityId kReader = 1;  // one of the streamer's followers

[[noreturn]] void Fail(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "error: %s: %s\n", what, status.ToString().c_str());
  std::exit(1);
}

template <typename T>
T Check(absl::StatusOr<T> result, const char* what) {
  if (!result.ok()) Fail(what, result.status());
  return *std::move(result);
}

// "t+40s", "t+6m00s" or "t+30d00h01m00s": a time relative to kStart.
std::string Rel(Micros t) {
  const long long total = (t - kStart) / feedcore::kMicrosPerSecond;
  const long long days = total / 86400;
  const long long hours = total % 86400 / 3600;
  const long long minutes = total % 3600 / 60;
  const long long seconds = total % 60;
  char buf[64];
  if (days > 0) {
    std::snprintf(buf, sizeof(buf), "t+%lldd%02lldh%02lldm%02llds", days, hours,
                  minutes, seconds);
  } else if (total >= 60) {
    std::snprintf(buf, sizeof(buf), "t+%lldm%02llds", total / 60, seconds);
  } else {
    std::snprintf(buf, sizeof(buf), "t+%llds", total);
  }
  return buf;
}

const char* Who(EntityId actor) {
  switch (actor) {
    case kStreamer:
      return "streamer";
    case kFriendAna:
      return "ana";
    case kFriendBo:
      return "bo";
    default:
      return "?";
  }
}

void PrintEntries(const feedcore::Page& page) {
  if (page.entries.empty()) std::printf("    (no entries)\n");
  for (const feedcore::StoredEntry& e : page.entries) {
    std::printf("    %-8s activity %-3llu by %-8s (actor %llu), expires %s\n",
                Rel(e.ts).c_str(),
                static_cast<unsigned long long>(e.activity_id), Who(e.actor),
                static_cast<unsigned long long>(e.actor),
                Rel(e.expires_at).c_str());
  }
}

void PrintStats(const char* label, const feedcore::EngineStats& s) {
  std::printf(
      "  %-17s timelines=%zu entries=%zu bytes_used=%zu bytes_reserved=%zu "
      "evicted=%llu\n",
      label, s.timelines, s.entries, s.bytes_used, s.bytes_reserved,
      static_cast<unsigned long long>(s.evicted));
}

// Reads the reader's whole timeline newest-first, `limit` entries a page.
void PageThrough(const feedcore::FeedEngine& engine, size_t limit) {
  feedcore::ReadOptions read;
  read.limit = limit;
  int page_number = 1;
  do {
    feedcore::Page page =
        Check(engine.ReadTimeline(kReader, read), "ReadTimeline");
    std::printf("  page %d (cursor in: %s)\n", page_number++,
                read.cursor.empty() ? "none" : "previous page's next_cursor");
    PrintEntries(page);
    read.cursor = page.next_cursor;
  } while (!read.cursor.empty());
  std::printf("  next_cursor is empty: end of timeline\n");
}

}  // namespace

int main() {
  std::printf("feedcore demo: activity feeds in memory\n\n");

  // --- Engine ---------------------------------------------------------------
  auto clock = std::make_shared<feedcore::ManualClock>(kStart);
  feedcore::EngineOptions options;
  options.clock = clock;
  options.sweep_interval = 0;  // no background thread; we call EvictExpired
  std::unique_ptr<feedcore::FeedEngine> engine =
      Check(feedcore::FeedEngine::Create(options), "FeedEngine::Create");
  std::printf(
      "Created an engine: %zu shards, default TTL %lld days, manual clock at "
      "t+0s,\nno background sweeper (sweep_interval = 0).\n\n",
      engine->options().shards,
      static_cast<long long>(engine->options().default_ttl /
                             feedcore::kMicrosPerDay));

  // --- Publishing: fan-out on write ------------------------------------------
  const std::vector<EntityId> followers = {1, 2, 3, 4, 5};
  std::printf(
      "The streamer (actor %llu) has %zu followers: 1 2 3 4 5.\n"
      "Fan-out on write: each of the streamer's posts is copied into every\n"
      "follower's timeline when it is published (InsertFanout), so reading a\n"
      "timeline is one ordered scan, not a merge over everyone followed.\n\n",
      static_cast<unsigned long long>(kStreamer), followers.size());

  struct Post {
    Micros at;  // seconds after kStart
    ActivityId id;
    EntityId actor;
    std::vector<EntityId> audience;
    Micros ttl;  // 0 = the engine's default TTL
    const char* what;
  };
  constexpr Micros kShortTtl = 5 * feedcore::kMicrosPerMinute;
  const std::vector<Post> posts = {
      {0, 101, kStreamer, followers, 0, "streamer posts a clip"},
      {10, 102, kFriendAna, {kReader}, kShortTtl, "ana posts a 5-minute story"},
      {20, 103, kStreamer, followers, kShortTtl,
       "streamer goes live (notice lasts 5 minutes)"},
      {30, 104, kFriendBo, {1, 2}, 0, "bo posts to followers 1 and 2"},
      {40, 105, kStreamer, followers, 0, "streamer posts a highlight"},
      {50, 106, kFriendAna, {kReader}, kShortTtl, "ana posts another story"},
      {60, 107, kStreamer, followers, 0, "streamer posts a poll"},
      {60,
       108,
       kFriendBo,
       {1, 2},
       0,
       "bo posts at the same microsecond (key is (ts, activity_id))"},
  };

  std::printf("Publishing:\n");
  for (const Post& post : posts) {
    clock->Set(kStart + post.at * feedcore::kMicrosPerSecond);
    const feedcore::TimelineEntry entry{
        .ts = clock->Now(), .activity_id = post.id, .actor = post.actor};
    feedcore::InsertOptions insert;
    insert.ttl = post.ttl;
    const feedcore::InsertResult result = Check(
        engine->InsertFanout(post.audience, entry, insert), "InsertFanout");
    std::printf("  %-8s %-62s -> %zu timeline%s\n", Rel(entry.ts).c_str(),
                post.what, result.inserted, result.inserted == 1 ? "" : "s");
  }

  // Re-publishing the same activity overwrites; it never duplicates.
  {
    const feedcore::TimelineEntry again{
        .ts = kStart, .activity_id = 101, .actor = kStreamer};
    const feedcore::InsertResult result =
        Check(engine->InsertFanout(followers, again), "InsertFanout (again)");
    std::printf(
        "\nAt %s activity 101 is published again (say, a retried request).\n"
        "Its key (ts, activity_id) already exists, so the entries are\n"
        "overwritten, not duplicated, and their expiry now counts from %s:\n"
        "  inserted=%zu replaced=%zu\n\n",
        Rel(clock->Now()).c_str(), Rel(clock->Now()).c_str(), result.inserted,
        result.replaced);
  }

  // --- Reading --------------------------------------------------------------
  std::printf(
      "Follower %llu pages through their timeline, newest first, 3 per page,\n"
      "passing each page's next_cursor back for the next page:\n",
      static_cast<unsigned long long>(kReader));
  PageThrough(*engine, 3);

  {
    feedcore::ReadOptions read;
    read.limit = 3;
    read.order = feedcore::ReadOrder::kOldestFirst;
    std::printf("\nThe 3 oldest entries (ReadOrder::kOldestFirst):\n");
    PrintEntries(Check(engine->ReadTimeline(kReader, read), "ReadTimeline"));
  }

  {
    feedcore::ReadOptions read;
    read.min_ts = kStart + 20 * feedcore::kMicrosPerSecond;
    read.max_ts = kStart + 50 * feedcore::kMicrosPerSecond;
    std::printf("\nTime window t+20s..t+50s (inclusive), newest first:\n");
    PrintEntries(Check(engine->ReadTimeline(kReader, read), "ReadTimeline"));
  }

  // --- Expiry and eviction --------------------------------------------------
  clock->Set(kStart + 6 * feedcore::kMicrosPerMinute);
  std::printf(
      "\nThe clock moves to %s: the 5-minute entries (activities 102, 103 and "
      "106)\nhave expired. Reads never return expired entries, even before "
      "eviction\nreclaims them:\n",
      Rel(clock->Now()).c_str());
  PageThrough(*engine, 3);

  std::printf(
      "\nStats still count the expired entries until EvictExpired reclaims "
      "them:\n");
  PrintStats("before eviction:", engine->Stats());
  const size_t evicted = engine->EvictExpired(/*budget=*/1000);
  PrintStats("after eviction:", engine->Stats());
  std::printf(
      "  EvictExpired returned %zu: activity 103 in 5 timelines, 102 and 106 "
      "in one each.\n",
      evicted);
  if (evicted != 7) {
    Fail("demo", absl::InternalError("expected EvictExpired to reclaim 7"));
  }

  // --- Errors ---------------------------------------------------------------
  {
    feedcore::ReadOptions read;
    read.limit = 2;
    const feedcore::Page first =
        Check(engine->ReadTimeline(kReader, read), "ReadTimeline");
    if (first.next_cursor.empty()) {
      Fail("demo", absl::InternalError("expected a second page"));
    }
    std::string tampered = first.next_cursor;
    char& c = tampered[tampered.size() / 2];
    c = (c == 'A') ? 'B' : 'A';
    read.cursor = tampered;
    const absl::StatusOr<feedcore::Page> bad =
        engine->ReadTimeline(kReader, read);
    std::printf("\nA hand-edited cursor is rejected, and nothing is read:\n");
    std::printf("  cursor    %s\n  tampered  %s\n", first.next_cursor.c_str(),
                tampered.c_str());
    if (bad.ok()) {
      Fail("demo", absl::InternalError("a tampered cursor was accepted"));
    }
    if (!absl::IsInvalidArgument(bad.status())) {
      Fail("demo: expected InvalidArgument", bad.status());
    }
    std::printf("  -> %s\n", bad.status().ToString().c_str());
  }

  std::printf("\nDone.\n");
  return 0;
}
