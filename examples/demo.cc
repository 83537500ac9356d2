// feedcore in one short program: the one to read first.
//
// You follow two friends and a streamer with many followers. Everyone
// posts; you read your home timeline a page at a time with cursors, and a
// badge counts what is new since you looked. Fans like the streamer's clip
// and the likes reach the streamer's notification bell as one group. A
// short-lived story expires and its memory is reclaimed. Last, a
// leaderboard ranks everyone by points.
//
// examples/game_backend.cc goes further into leaderboards and seasons,
// examples/chat_backend.cc into channels and read markers.
//
// Time comes from a ManualClock, so the output is the same on every run.
// Exits with status 1 if a call fails or gives an unexpected answer.

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

using feedcore::EntityId;
using feedcore::Micros;

// 2024-01-01T00:00:00Z; times are printed relative to it.
constexpr Micros kStart = 1'704'067'200LL * feedcore::kMicrosPerSecond;
constexpr Micros kSecond = feedcore::kMicrosPerSecond;

// Ids are the program's own: users and the streamer are all just entities.
constexpr EntityId kYou = 1, kAna = 2, kBo = 3, kStreamer = 100;
constexpr EntityId kFans[] = {11, 12, 13, 14};

const char* Name(EntityId id) {
  if (id == kYou) return "you";
  if (id == kAna) return "ana";
  if (id == kBo) return "bo";
  return id == kStreamer ? "streamer" : "a fan";
}

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "error: %s\n", what.c_str());
  std::exit(1);
}

void Check(const absl::Status& status, const char* what) {
  if (!status.ok()) Fail(std::string(what) + ": " + status.ToString());
}

template <typename T>
T Check(absl::StatusOr<T> result, const char* what) {
  Check(result.status(), what);
  return *std::move(result);
}

// For answers that are not errors but would be wrong.
void Expect(bool holds, const char* what) {
  if (!holds) Fail(std::string("unexpected result: ") + what);
}

void PrintEntries(const feedcore::Page& page) {
  for (const feedcore::StoredEntry& e : page.entries) {
    const std::string at =
        "t+" + std::to_string((e.ts - kStart) / kSecond) + "s";
    std::printf("    %-6s %-9s %s\n", at.c_str(), Name(e.actor),
                e.payload.c_str());
  }
}

void PrintBoard(const char* title,
                const std::vector<feedcore::LeaderboardEntry>& entries) {
  std::printf("  %s\n", title);
  for (const feedcore::LeaderboardEntry& e : entries) {
    std::printf("    #%llu %-9s %lld\n",
                static_cast<unsigned long long>(e.rank + 1), Name(e.member),
                static_cast<long long>(e.score));
  }
}

}  // namespace

int main() {
  std::printf("feedcore demo: activity feeds and a leaderboard in memory\n\n");

  // --- An engine ------------------------------------------------------------
  // The clock is injected: a ManualClock moves only when told to, as in a
  // test. sweep_interval = 0 starts no background thread, so this program
  // reclaims expired entries itself (EvictExpired, below).
  auto clock = std::make_shared<feedcore::ManualClock>(kStart);
  feedcore::EngineOptions options;
  options.clock = clock;
  options.sweep_interval = 0;
  // Hybrid fan-out for actors with more than 3 followers (see Publishing).
  // A real program sets it in the thousands.
  options.hybrid_fanout_threshold = 3;
  std::unique_ptr<feedcore::InProcessFeedEngine> engine =
      Check(feedcore::FeedEngine::Create(options), "FeedEngine::Create");
  feedcore::InProcessFeedEngine& feeds = *engine;

  // --- A follow graph -------------------------------------------------------
  for (EntityId followee : {kAna, kBo, kStreamer}) {
    Check(feeds.Follow(kYou, followee), "Follow");
  }
  for (EntityId fan : kFans) Check(feeds.Follow(fan, kStreamer), "Follow");
  std::printf("You follow %zu accounts; the streamer has %zu followers.\n",
              Check(feeds.FollowingCount(kYou), "FollowingCount"),
              Check(feeds.FollowerCount(kStreamer), "FollowerCount"));
  // An error changes nothing and says why; here it is the expected answer.
  const absl::Status self = feeds.Follow(kYou, kYou).status();
  Expect(absl::IsInvalidArgument(self), "following oneself is refused");
  std::printf("Following yourself is refused: %s\n\n", self.ToString().c_str());

  // --- Publishing -----------------------------------------------------------
  // An activity is stored once and its key is copied into each follower's
  // timeline (fan-out on write), so a read is one ordered scan, not a merge
  // over everyone followed. Copying to millions of followers would make one
  // post cost millions of writes, so an actor past the hybrid threshold is
  // not copied: its followers' reads merge its own feed in, and show the
  // same pages copies would have.
  struct Post {
    Micros at;  // seconds after kStart
    feedcore::ActivityId id;
    EntityId actor;
    const char* text;
    Micros ttl;  // 0: the engine's default (30 days)
  };
  const Post posts[] = {
      {0, 1, kAna, "morning run, 10 km", 0},
      {10, 2, kStreamer, "going live at noon", 0},
      {20, 3, kBo, "a 5-minute story", 5 * feedcore::kMicrosPerMinute},
      {30, 4, kStreamer, "clip of yesterday's win", 0},
      {40, 5, kAna, "lunch, anyone?", 0},
  };
  std::printf("Publishing:\n");
  for (const Post& post : posts) {
    clock->Set(kStart + post.at * kSecond);
    const feedcore::PublishResult result =
        Check(feeds.Publish({.id = post.id,
                             .actor = post.actor,
                             .ts = clock->Now(),
                             .payload = post.text,
                             .ttl = post.ttl}),
              "Publish");
    std::printf("  %-8s %-24s -> ", Name(post.actor), post.text);
    if (result.merged_at_read) {
      std::printf("not copied: merged into its followers' reads\n");
    } else {
      std::printf("copied into %zu follower timeline%s\n", result.fanned_out,
                  result.fanned_out == 1 ? "" : "s");
    }
  }
  // A retried request publishes the same activity again: nothing changes.
  const feedcore::Activity retry = {
      .id = 1, .actor = kAna, .ts = kStart, .payload = posts[0].text};
  Expect(!Check(feeds.Publish(retry), "Publish").created,
         "a re-publish is a no-op");
  std::printf("Publishing ana's run again creates nothing (idempotent).\n\n");

  // --- Reading a home timeline, page by page --------------------------------
  // A cursor names the last entry returned (keyset paging), so a post that
  // arrives while you page causes neither a duplicate nor a skipped entry.
  std::printf("Your timeline, newest first, 2 per page:\n");
  feedcore::ReadOptions read;
  read.limit = 2;
  read.hydrate = true;  // bring each activity's payload along
  feedcore::EntryKey newest_seen;
  size_t seen = 0;
  for (int page_number = 1;; ++page_number) {
    const feedcore::Page page =
        Check(feeds.ReadTimeline(kYou, read), "ReadTimeline");
    if (page_number == 1) newest_seen = page.entries.front().key();
    seen += page.entries.size();
    std::printf("  page %d:\n", page_number);
    PrintEntries(page);
    if (page.next_cursor.empty()) break;  // the last page
    read.cursor = page.next_cursor;
  }
  Expect(seen == 5, "the timeline holds the 5 posts");

  // A "new since you looked" badge counts what is newer than the key
  // (ts, id) of the newest entry you saw, up to 99 (the badge shows 99+).
  clock->Set(kStart + 60 * kSecond);
  Check(feeds.Publish({.id = 6,
                       .actor = kStreamer,
                       .ts = clock->Now(),
                       .payload = "live now!"}),
        "Publish");
  const size_t fresh =
      Check(feeds.CountNewer(kYou, newest_seen, 99), "CountNewer");
  Expect(fresh == 1, "one post is new");
  std::printf("\nThe streamer goes live; your badge: %zu new post.\n", fresh);

  // --- A notification bell --------------------------------------------------
  // A like is an activity too; PublishOptions::notify also delivers it to
  // the bell of the clip's author, where activities with the same verb and
  // object ("liked", the clip) form one group.
  constexpr uint64_t kLiked = 1;  // a verb: the program picks the numbers
  feedcore::PublishOptions to_author;
  to_author.notify = {kStreamer};
  for (EntityId fan : {kFans[0], kFans[1], kFans[2]}) {
    Check(feeds.Publish({.id = 100 + fan,
                         .actor = fan,
                         .ts = clock->Now(),
                         .verb = kLiked,
                         .object = 4,
                         .payload = "liked your clip"},
                        to_author),
          "Publish");
  }
  const feedcore::GroupPage bell =
      Check(feeds.ReadNotifications(kStreamer, {}), "ReadNotifications");
  Expect(bell.groups.size() == 1, "the likes form one group");
  const feedcore::FeedGroup& likes = bell.groups.front();
  feedcore::NotificationCounts counts =
      Check(feeds.GetNotificationCounts(kStreamer), "GetNotificationCounts");
  std::printf(
      "The streamer's bell: \"%zu fans liked your clip\", %zu unread.\n",
      likes.actor_count, counts.unread);
  // Any entry of a group names it: its key marks the whole group read.
  counts =
      Check(feeds.MarkRead(kStreamer, likes.recent.front().key()), "MarkRead");
  Expect(counts.unread == 0, "the group is read");
  std::printf("After MarkRead: %zu unread.\n", counts.unread);

  // --- Expiry ---------------------------------------------------------------
  // Reads never return an expired entry; its memory comes back when
  // EvictExpired (or the sweeper) reclaims it, in time proportional to
  // what expired.
  clock->Set(kStart + 6 * feedcore::kMicrosPerMinute);
  read = {};
  read.hydrate = true;
  const feedcore::Page now =
      Check(feeds.ReadTimeline(kYou, read), "ReadTimeline");
  Expect(now.entries.size() == 5, "bo's story has expired");
  std::printf("\nSix minutes in, bo's story has expired. Your timeline:\n");
  PrintEntries(now);
  const size_t evicted = Check(feeds.EvictExpired(1000), "EvictExpired");
  Expect(evicted > 0, "eviction reclaims the story");
  std::printf("EvictExpired reclaimed %zu entries: every copy of the story.\n",
              evicted);

  // --- A leaderboard --------------------------------------------------------
  // Integer scores (sums are exact; overflow is an error) and exact ranks.
  auto board = Check(feedcore::Leaderboard::Create({}), "Leaderboard::Create");
  // IncrementMany applies a batch, say a game tick's points, in one call.
  const std::vector<feedcore::ScoreIncrement> tick = {
      {kYou, 120}, {kAna, 300}, {kBo, 80}, {kStreamer, 450}, {kYou, 60}};
  for (const auto& score : board->IncrementMany(tick)) {
    Check(score, "IncrementMany");
  }
  std::printf("\nLeaderboard:\n");
  PrintBoard("Top 3:", Check(board->TopK(3), "TopK"));
  PrintBoard("Around you, one above and one below:",
             Check(board->Around(kYou, 1, 1), "Around"));
  // A conditional write, atomic per member: kIfBetter keeps the best score
  // (ZADD GT), so a worse one is not applied, and that is not an error.
  const feedcore::WriteResult write =
      Check(board->Write({.member = kAna,
                          .value = 250,
                          .condition = feedcore::WriteCondition::kIfBetter}),
            "Write");
  Expect(write.outcome == feedcore::WriteOutcome::kNotApplied &&
             write.score == 300,
         "keep-best ignores a worse score");
  std::printf("ana scores 250 with kIfBetter: %s, her score stays %lld.\n",
              feedcore::WriteOutcomeName(write.outcome),
              static_cast<long long>(*write.score));

  std::printf("\nDone.\n");
  return 0;
}
