// A narrated tour of feedcore: a social graph, publishing with fan-out on
// write, cursor paging, back-fill and removal, retraction, and expiry.
//
// A streamer with five followers goes live and posts; two friends post too.
// Every post is copied into each follower's timeline at publish time
// (fan-out on write). One follower pages through their timeline with
// cursors, reads it oldest-first and by time window; a new follower gets
// recent posts back-filled; an unfollow removes a friend's posts; a
// retracted post disappears everywhere; likes of a post reach its author's
// notification feed, grouped, with unseen and unread counts; time moves
// past some entries' expiry, and eviction reclaims their memory. Last, a
// racing game's lap-time boards: keep-best writes, shared places, pages
// from any rank, a friends' board and a daily board that resets. Time comes
// from a ManualClock, so the output is the same on every run.
//
// Exits with status 1 and the error if any call fails unexpectedly.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
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

void Check(const absl::Status& status, const char* what) {
  if (!status.ok()) Fail(what, status);
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
    case kReader:
      return "reader";
    default:
      return "?";
  }
}

void PrintEntries(const feedcore::Page& page) {
  if (page.entries.empty()) std::printf("    (no entries)\n");
  for (const feedcore::StoredEntry& e : page.entries) {
    std::string line = Rel(e.ts);
    line.resize(9, ' ');
    line += "activity " + std::to_string(e.activity_id) + " by " + Who(e.actor);
    line.resize(36, ' ');
    line += "expires " + Rel(e.expires_at);
    if (!e.payload.empty()) {
      line.resize(60, ' ');
      line += "\"" + e.payload + "\"";
    }
    std::printf("    %s\n", line.c_str());
  }
}

void PrintStats(const char* label, const feedcore::EngineStats& s) {
  std::printf(
      "  %-17s timelines=%zu entries=%zu activities=%zu bytes_used=%zu "
      "evicted=%llu\n",
      label, s.timelines, s.entries, s.activities, s.bytes_used,
      static_cast<unsigned long long>(s.evicted));
}

// Reads the reader's whole timeline newest-first, `limit` entries a page.
void PageThrough(const feedcore::FeedEngine& engine, size_t limit) {
  feedcore::ReadOptions read;
  read.limit = limit;
  read.hydrate = true;  // bring each activity's payload along
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

void PrintBoard(const char* label,
                const std::vector<feedcore::LeaderboardEntry>& entries) {
  std::printf("%s\n", label);
  for (const feedcore::LeaderboardEntry& e : entries) {
    std::printf("    #%llu  %-10s %lld\n",
                static_cast<unsigned long long>(e.rank + 1),
                e.metadata.empty() ? Who(e.member) : e.metadata.c_str(),
                static_cast<long long>(e.score));
  }
}

// Lap times of a racing game: lower is better, tied times share a place,
// only a driver's best lap counts, names ride along as metadata, and a
// daily board resets at midnight UTC and reports its winners.
void LeaderboardTour(const feedcore::FeedEngine& engine) {
  std::printf("\n--- Leaderboards for a racing game ---\n");
  feedcore::LeaderboardOptions laps;
  laps.score_order = feedcore::ScoreOrder::kLowerFirst;
  laps.rank_style = feedcore::RankStyle::kCompetition;
  laps.max_metadata_bytes = 16;
  auto board = Check(feedcore::Leaderboard::Create(laps), "Create");
  // Milliseconds per lap; kIfBetter keeps each driver's best.
  const std::vector<feedcore::ScoreWrite> results = {
      {.member = kReader, .value = 61'250, .metadata = "reader"},
      {.member = kFriendAna, .value = 59'800, .metadata = "ana"},
      {.member = kFriendBo, .value = 61'250, .metadata = "bo"},
      {.member = kStreamer, .value = 58'900, .metadata = "streamer"},
      {.member = kFriendAna,
       .value = 60'500,
       .condition = feedcore::WriteCondition::kIfBetter},
  };
  for (const auto& result : board->WriteMany(results)) {
    Check(result, "WriteMany");
  }
  std::printf(
      "Five laps written with WriteMany; ana's slower second lap was %s.\n",
      Check(board->Score(kFriendAna), "Score") == 59'800 ? "not kept" : "kept");
  feedcore::LeaderboardReadOptions page;
  page.limit = 10;
  page.with_metadata = true;
  PrintBoard("Fastest first (reader and bo tie, and share third place):",
             Check(board->ReadPage(page), "ReadPage").entries);
  page.offset = 2;
  page.limit = 1;
  PrintBoard("A page that starts at any rank (offset 2):",
             Check(board->ReadPage(page), "ReadPage").entries);
  std::printf("Laps under a minute: %llu; ana beats %.0f%% of drivers.\n",
              static_cast<unsigned long long>(
                  Check(board->CountInRange({.max = 59'999}), "CountInRange")),
              Check(board->Percentile(kFriendAna), "Percentile"));
  const std::vector<feedcore::MemberId> friends =
      Check(feedcore::FollowedAndSelf(engine, kReader), "FollowedAndSelf");
  PrintBoard("Among the drivers follower 1 follows:",
             Check(board->TopKAmong(friends, 3), "TopKAmong"));

  auto clock = std::make_shared<feedcore::ManualClock>(kStart);
  auto registry = std::make_shared<feedcore::LeaderboardRegistry>();
  feedcore::SeasonOptions daily;
  daily.schedule = feedcore::SeasonSchedule::Daily();
  daily.board = laps;
  daily.final_top_k = 1;
  daily.on_rollover = [](const feedcore::EndedPeriod& ended) {
    if (ended.top.empty()) return;
    std::printf("  rollover: day %lld ended; its winner is %s with %lld ms\n",
                static_cast<long long>(ended.period.id),
                Who(ended.top[0].member),
                static_cast<long long>(ended.top[0].score));
  };
  auto season = Check(feedcore::SeasonalLeaderboard::Create("laps-daily", daily,
                                                            registry, clock),
                      "SeasonalLeaderboard::Create");
  Check(Check(season->Current(), "Current")->Set(kFriendBo, 60'100), "Set");
  clock->Advance(24 * 60 * feedcore::kMicrosPerMinute);
  std::printf("A day later the daily board starts empty:\n");
  const size_t members =
      Check(Check(season->Current(), "Current")->Size(), "Size");
  std::printf("  today's board has %zu drivers; yesterday's is still %s.\n",
              members,
              season->Period(season->CurrentPeriod().id - 1).ok() ? "readable"
                                                                  : "gone");
}

int main() {
  std::printf("feedcore demo: activity feeds in memory\n\n");

  // --- Engine ---------------------------------------------------------------
  auto clock = std::make_shared<feedcore::ManualClock>(kStart);
  // Every change is recorded here; the last part of the demo restores a
  // copy of the engine from a snapshot and these records.
  std::shared_ptr<feedcore::ChangeStream> stream =
      Check(feedcore::ChangeStream::Create({}), "ChangeStream::Create");
  feedcore::EngineOptions options;
  options.clock = clock;
  options.sweep_interval = 0;  // no background thread; we call EvictExpired
  options.change_stream = stream;
  std::unique_ptr<feedcore::FeedEngine> engine =
      Check(feedcore::FeedEngine::Create(options), "FeedEngine::Create");
  std::printf(
      "Created an engine: %zu shards, default TTL %lld days, manual clock at "
      "t+0s,\nno background sweeper (sweep_interval = 0).\n\n",
      engine->options().shards,
      static_cast<long long>(engine->options().default_ttl /
                             feedcore::kMicrosPerDay));

  // --- The graph -------------------------------------------------------------
  std::printf(
      "Followers 1..5 follow the streamer (actor %llu); follower 1 also\n"
      "follows ana (%llu) and bo (%llu); follower 2 follows bo.\n",
      static_cast<unsigned long long>(kStreamer),
      static_cast<unsigned long long>(kFriendAna),
      static_cast<unsigned long long>(kFriendBo));
  for (EntityId follower = 1; follower <= 5; ++follower) {
    Check(engine->Follow(follower, kStreamer), "Follow");
  }
  Check(engine->Follow(kReader, kFriendAna), "Follow");
  Check(engine->Follow(kReader, kFriendBo), "Follow");
  Check(engine->Follow(2, kFriendBo), "Follow");
  std::printf("  streamer has %zu followers; follower 1 follows %zu.\n",
              engine->FollowerCount(kStreamer).value(),
              engine->FollowingCount(kReader).value());
  {
    const absl::StatusOr<feedcore::FollowResult> self =
        engine->Follow(kReader, kReader);
    std::printf("  following oneself is refused: %s\n\n",
                self.status().ToString().c_str());
    if (!absl::IsInvalidArgument(self.status())) {
      Fail("demo: expected InvalidArgument", self.status());
    }
  }

  // --- Publishing: fan-out on write
  // -------------------------------------------
  std::printf(
      "Fan-out on write: Publish stores each activity once and copies its key\n"
      "into every follower's timeline, so reading a timeline is one ordered\n"
      "scan, not a merge over everyone followed.\n\n");

  struct Post {
    Micros at;  // seconds after kStart
    ActivityId id;
    EntityId actor;
    Micros ttl;  // 0 = the engine's default TTL
    const char* what;
  };
  constexpr Micros kShortTtl = 5 * feedcore::kMicrosPerMinute;
  const std::vector<Post> posts = {
      {0, 101, kStreamer, 0, "streamer posts a clip"},
      {10, 102, kFriendAna, kShortTtl, "ana posts a 5-minute story"},
      {20, 103, kStreamer, kShortTtl,
       "streamer goes live (notice lasts 5 minutes)"},
      {30, 104, kFriendBo, 0, "bo posts a photo"},
      {40, 105, kStreamer, 0, "streamer posts a highlight"},
      {50, 106, kFriendAna, kShortTtl, "ana posts another story"},
      {60, 107, kStreamer, 0, "streamer posts a poll"},
      {60, 108, kFriendBo, 0, "bo posts at the same microsecond"},
  };

  std::printf("Publishing:\n");
  for (const Post& post : posts) {
    clock->Set(kStart + post.at * feedcore::kMicrosPerSecond);
    feedcore::Activity activity;
    activity.id = post.id;
    activity.actor = post.actor;
    activity.ts = clock->Now();
    activity.payload = post.what;
    activity.ttl = post.ttl;
    const feedcore::PublishResult result =
        Check(engine->Publish(activity), "Publish");
    std::printf("  %-8s %-46s -> %zu follower timeline%s\n",
                Rel(activity.ts).c_str(), post.what, result.fanned_out,
                result.fanned_out == 1 ? "" : "s");
  }

  // Re-publishing the same activity changes nothing.
  {
    feedcore::Activity again;
    again.id = 101;
    again.actor = kStreamer;
    again.ts = kStart;
    again.payload = posts[0].what;
    const feedcore::PublishResult result =
        Check(engine->Publish(again), "Publish (again)");
    std::printf(
        "\nActivity 101 is published again (say, a retried request): "
        "created=%s,\nno duplicate anywhere.\n\n",
        result.created ? "true" : "false");
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

  // --- Back-fill, unfollow, retract ----------------------------------------
  {
    const feedcore::FollowResult follow =
        Check(engine->Follow(6, kStreamer), "Follow");
    std::printf(
        "\nFollower 6 follows the streamer now: the streamer's %zu most "
        "recent\n"
        "posts are back-filled into their timeline.\n",
        follow.backfilled);
    const feedcore::UnfollowResult unfollow =
        Check(engine->Unfollow(kReader, kFriendBo), "Unfollow");
    std::printf(
        "Follower 1 unfollows bo: %zu of bo's posts leave their timeline.\n",
        unfollow.removed);
    if (!engine->Retract(105).ok()) Fail("Retract", absl::InternalError(""));
    std::printf(
        "The streamer retracts the highlight (105): it leaves every timeline\n"
        "at once. Follower 1 now reads:\n");
    PageThrough(*engine, 10);
  }

  // --- Notifications --------------------------------------------------------
  {
    // Three followers like the streamer's clip (activity 104): each like is
    // published as usual and notifies the clip's author.
    constexpr uint64_t kLike = 1;
    feedcore::PublishOptions notify_streamer;
    notify_streamer.notify = {kStreamer};
    for (EntityId fan : {2, 3, 4}) {
      feedcore::Activity like;
      like.id = 300 + fan;
      like.actor = fan;
      like.ts = clock->Now();
      like.verb = kLike;
      like.object = 104;
      like.payload = "liked your clip";
      Check(engine->Publish(like, notify_streamer), "Publish");
    }
    feedcore::NotificationCounts counts =
        engine->GetNotificationCounts(kStreamer).value();
    std::printf(
        "\nFollowers 2, 3 and 4 like the streamer's clip; each like notifies "
        "the\nstreamer, whose notification feed groups them: %zu group, %zu "
        "unseen, %zu unread.\n",
        counts.groups, counts.unseen, counts.unread);
    const feedcore::GroupPage bell =
        Check(engine->ReadNotifications(kStreamer, {}), "ReadNotifications");
    for (const feedcore::FeedGroup& g : bell.groups) {
      std::printf("  %zu likes by %zu followers, the latest by follower %llu\n",
                  g.activity_count, g.actor_count,
                  static_cast<unsigned long long>(g.recent_actors.front()));
    }
    counts = engine->MarkSeen(kStreamer).value();
    std::printf(
        "The streamer opens the bell (MarkSeen): %zu unseen, %zu unread;\n",
        counts.unseen, counts.unread);
    const feedcore::StoredEntry& newest = bell.groups.front().recent.front();
    counts = Check(engine->MarkRead(kStreamer, newest.ts, newest.activity_id),
                   "MarkRead");
    std::printf("then reads the group (MarkRead): %zu unseen, %zu unread.\n",
                counts.unseen, counts.unread);
    if (counts.groups != 1 || counts.unread != 0) {
      Fail("demo", absl::InternalError("unexpected notification counts"));
    }
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
  const feedcore::EngineStats before = engine->Stats().value();
  PrintStats("before eviction:", before);
  const size_t evicted = engine->EvictExpired(/*budget=*/1000).value();
  const feedcore::EngineStats after = engine->Stats().value();
  PrintStats("after eviction:", after);
  std::printf(
      "  EvictExpired reclaimed %zu timeline entries (copies of 102, 103 and\n"
      "  106 in followers' timelines, the own feeds and the world feed).\n",
      evicted);
  if (evicted == 0 || after.entries != before.entries - evicted) {
    Fail("demo", absl::InternalError("eviction did not reclaim the entries"));
  }

  // --- Errors ---------------------------------------------------------------
  {
    feedcore::ReadOptions read;
    read.limit = 1;
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

  // --- Change stream, snapshot, replica --------------------------------------
  {
    std::printf(
        "\nThe change stream recorded every change, in order (%llu records so "
        "far).\n",
        static_cast<unsigned long long>(stream->Stats().next_sequence - 1));
    const std::string path =
        "/tmp/feedcore-demo-" + std::to_string(::getpid()) + ".snap";
    const feedcore::SnapshotInfo info =
        Check(feedcore::SaveSnapshot(*engine, path), "SaveSnapshot");
    std::printf(
        "Saved a snapshot (%llu bytes, consistent with sequence %llu), then "
        "the\nstreamer posted once more.\n",
        static_cast<unsigned long long>(info.file_bytes),
        static_cast<unsigned long long>(info.sequence));
    feedcore::Activity late;
    late.id = 999;
    late.actor = kStreamer;
    late.ts = clock->Now();
    late.payload = "one more clip";
    Check(engine->Publish(late), "Publish");

    feedcore::EngineOptions replica_options = options;
    replica_options.change_stream = nullptr;
    std::unique_ptr<feedcore::Replica> replica =
        Check(feedcore::LoadSnapshot(path, replica_options), "LoadSnapshot");
    std::remove(path.c_str());
    std::unique_ptr<feedcore::ChangeReader> reader =
        Check(stream->NewReader(
                  feedcore::StreamPosition::AtSequence(replica->sequence())),
              "NewReader");
    for (;;) {
      const std::vector<feedcore::ChangeRecordPtr> batch =
          Check(reader->Read(100), "ChangeReader::Read");
      if (batch.empty()) break;
      for (const feedcore::ChangeRecordPtr& record : batch) {
        if (absl::Status s = replica->Apply(*record); !s.ok()) {
          Fail("Replica::Apply", s);
        }
      }
    }
    feedcore::ReadOptions read;
    read.limit = 100;
    read.hydrate = true;
    const feedcore::Page original =
        Check(engine->ReadTimeline(kReader, read), "ReadTimeline");
    const feedcore::Page restored =
        Check(replica->engine().ReadTimeline(kReader, read), "ReadTimeline");
    std::printf(
        "Loaded the snapshot into a new engine and applied the %llu records "
        "after it\n(%llu the snapshot already held were skipped). Follower "
        "1's timeline there:\n",
        static_cast<unsigned long long>(replica->applied()),
        static_cast<unsigned long long>(replica->skipped()));
    PrintEntries(restored);
    if (original.entries != restored.entries ||
        engine->Stats().value().entries !=
            replica->engine().Stats().value().entries ||
        engine->GetNotificationCounts(kStreamer).value() !=
            replica->engine().GetNotificationCounts(kStreamer).value()) {
      Fail("demo", absl::InternalError("the replica differs from the engine"));
    }
    std::printf("  -> the same %zu entries as the original engine.\n",
                restored.entries.size());
  }

  // --- Durability: a store that logs every change and recovers itself ---
  {
    std::printf("\n--- A durable store survives its process ---\n");
    const std::string directory =
        "/tmp/feedcore-demo-" + std::to_string(::getpid()) + ".store";
    feedcore::DurabilityOptions durability;
    durability.directory = directory;
    durability.fsync = feedcore::FsyncPolicy::kAlways;
    feedcore::EngineOptions options;
    options.sweep_interval = 0;
    options.clock = std::make_shared<feedcore::ManualClock>(
        kStart + 10 * feedcore::kMicrosPerMinute);
    {
      auto store = Check(feedcore::DurableStore::Open(durability, options),
                         "DurableStore::Open");
      Check(store->engine().Follow(kReader, kStreamer, {}), "Follow");
      feedcore::Activity post;
      post.id = 9001;
      post.actor = kStreamer;
      post.ts = kStart + 10 * feedcore::kMicrosPerMinute;
      post.payload = "saved before the process went away";
      Check(store->engine().Publish(post, {}), "Publish");
      auto arena = Check(store->boards().GetOrCreate("arena"), "GetOrCreate");
      Check(arena->Increment(/*member=*/7, 250), "Increment");
      std::printf(
          "Published one activity and scored 250 with fsync=%s; "
          "the store is closed.\n",
          feedcore::FsyncPolicyName(durability.fsync));
    }
    auto store = Check(feedcore::DurableStore::Open(durability, options),
                       "DurableStore::Open");
    const feedcore::DurabilityStats stats = store->Stats();
    feedcore::ReadOptions read;
    read.hydrate = true;
    const feedcore::Page timeline =
        Check(store->engine().ReadTimeline(kReader, read), "ReadTimeline");
    auto arena = Check(store->boards().Get("arena"), "Get");
    std::printf("Opened again: %llu log records replayed; follower 1 reads:\n",
                static_cast<unsigned long long>(stats.recovered_records));
    PrintEntries(timeline);
    std::printf("  and member 7 of \"arena\" has %lld points.\n",
                static_cast<long long>(Check(arena->Score(7), "Score")));
    if (timeline.entries.size() != 1 ||
        Check(arena->Score(7), "Score") != 250) {
      Fail("demo", absl::InternalError("the store lost a write"));
    }
    store.reset();
    std::error_code ignored;
    std::filesystem::remove_all(directory, ignored);
  }

  LeaderboardTour(*engine);

  std::printf("\nDone.\n");
  return 0;
}
