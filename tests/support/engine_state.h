// The whole observable state of an engine as lines of text, for checking
// that two engines (a source and a replica restored from its snapshot and
// stream) hold exactly the same thing.
#ifndef FEEDCORE_TESTS_ENGINE_STATE_H_
#define FEEDCORE_TESTS_ENGINE_STATE_H_

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore::testing {

inline void AppendFeed(const std::vector<StoredEntry>& entries,
                       std::string* line) {
  for (const StoredEntry& e : entries) {
    absl::StrAppend(line, " ", e.ts, "/", e.activity_id, "/", e.actor, "/",
                    e.expires_at, "/", e.payload);
  }
}

// Every group of `user`'s notification feed, newest first, with its flags,
// counts and listed entries, then the feed's counts. Reclaims the feed's
// expired entries, as every notification call does.
inline std::string DescribeNotifications(InProcessFeedEngine& engine,
                                         EntityId user) {
  std::string line = absl::StrCat("notifications ", user, ":");
  GroupReadOptions read;
  read.limit = 100;
  read.hydrate = true;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 1'000'000);
    absl::StatusOr<GroupPage> page = engine.ReadNotifications(user, read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    for (const FeedGroup& g : page->groups) {
      absl::StrAppend(&line, " [", g.key, " seen=", g.seen, " read=", g.read,
                      " n=", g.activity_count, " actors=", g.actor_count);
      AppendFeed(g.recent, &line);
      absl::StrAppend(&line, "]");
    }
    if (page->next_cursor.empty()) break;
    read.cursor = page->next_cursor;
  }
  const NotificationCounts counts = engine.GetNotificationCounts(user).value();
  absl::StrAppend(&line, " unseen=", counts.unseen, " unread=", counts.unread,
                  " groups=", counts.groups);
  return line;
}

// Every entity's timeline, own feed (both hydrated), notification feed,
// followers and followees, the world feed, and the Stats() figures that
// describe content (not history or allocation). Not const: notification
// reads reclaim what expired in the feeds they read.
inline std::vector<std::string> DescribeEngine(
    InProcessFeedEngine& engine, absl::Span<const EntityId> entities) {
  ReadOptions hydrated;
  hydrated.limit = 100;
  hydrated.hydrate = true;
  std::vector<std::string> lines;
  for (const EntityId id : entities) {
    std::string line = absl::StrCat("timeline ", id, ":");
    AppendFeed(Timeline(engine, id, hydrated), &line);
    lines.push_back(std::move(line));
    line = absl::StrCat("own ", id, ":");
    AppendFeed(Own(engine, id, hydrated), &line);
    lines.push_back(std::move(line));
    lines.push_back(DescribeNotifications(engine, id));
    line = absl::StrCat("followers ", id, ":");
    for (EntityId f : WholeList(engine, true, id))
      absl::StrAppend(&line, " ", f);
    lines.push_back(std::move(line));
    line = absl::StrCat("following ", id, ":");
    for (EntityId f : WholeList(engine, false, id)) {
      absl::StrAppend(&line, " ", f);
    }
    lines.push_back(std::move(line));
  }
  // Every entity's read states (ListReadMarkers: its markers and the
  // channels that mention it, with their unread and mention counts).
  ReadStateOptions all_states;
  all_states.limit = 1000;
  all_states.max_unread = std::min<size_t>(100, engine.options().max_page_size);
  for (const EntityId user : entities) {
    std::string line = absl::StrCat("markers ", user, ":");
    for (all_states.cursor.clear();;) {
      const ReadStatePage page =
          engine.ListReadMarkers(user, all_states).value();
      for (const FeedReadState& state : page.feeds) {
        const ReadMarker& m = state.marker;
        absl::StrAppend(
            &line, " ", static_cast<int>(state.feed.type), "/",
            state.feed.owner, "@",
            m.key.has_value() ? absl::StrCat(m.key->ts, "/", m.key->activity_id)
                              : "none",
            "+", m.unread, m.more_unread ? "..." : "", "!", m.mentions);
      }
      if (page.next_cursor.empty()) break;
      all_states.cursor = page.next_cursor;
    }
    lines.push_back(std::move(line));
  }
  std::string world = "world:";
  AppendFeed(World(engine, hydrated), &world);
  lines.push_back(std::move(world));
  const EngineStats s = engine.Stats().value();
  lines.push_back(absl::StrCat(
      "stats: timelines=", s.timelines, " entries=", s.entries,
      " activities=", s.activities, " retracted=", s.retracted_activities,
      " payload_bytes=", s.payload_bytes, " follow_edges=", s.follow_edges));
  return lines;
}

// Every board of `registry` by name: its options and every entry, best
// first (member, score, rank, and metadata on a board that keeps it); equal
// scores show their tie order.
inline std::vector<std::string> DescribeBoards(
    const LeaderboardRegistry& registry) {
  std::vector<std::string> lines;
  for (const std::string& name : registry.Names()) {
    std::shared_ptr<Leaderboard> board = registry.Get(name).value();
    const LeaderboardOptions& o = board->options();
    std::string line =
        absl::StrCat("board ", name, " partitions=", o.partitions,
                     " tie_break=", static_cast<int>(o.tie_break),
                     " max_page_size=", o.max_page_size,
                     " score_order=", static_cast<int>(o.score_order),
                     " rank_style=", static_cast<int>(o.rank_style),
                     " max_metadata_bytes=", o.max_metadata_bytes, ":");
    LeaderboardReadOptions read;
    read.limit = std::min<size_t>(100, o.max_page_size);
    read.with_metadata = o.max_metadata_bytes > 0;
    for (int pages = 0;; ++pages) {
      REQUIRE(pages < 1'000'000);
      absl::StatusOr<LeaderboardPage> page = board->ReadPage(read);
      REQUIRE_MESSAGE(page.ok(), page.status());
      for (const LeaderboardEntry& e : page->entries) {
        absl::StrAppend(&line, " ", e.member, "=", e.score, "#", e.rank);
        if (!e.metadata.empty()) {
          absl::StrAppend(&line, "'", absl::CHexEscape(e.metadata), "'");
        }
      }
      if (page->next_cursor.empty()) break;
      read.cursor = page->next_cursor;
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

// Fails the test at the first line where the two registries differ.
inline void CheckSameBoards(const LeaderboardRegistry& expected,
                            const LeaderboardRegistry& actual) {
  const std::vector<std::string> want = DescribeBoards(expected);
  const std::vector<std::string> got = DescribeBoards(actual);
  CHECK(want.size() == got.size());
  for (size_t i = 0; i < std::min(want.size(), got.size()); ++i) {
    INFO("board line ", i);
    REQUIRE(want[i] == got[i]);
  }
}

// Fails the test at the first line where the two engines differ.
inline void CheckSameState(InProcessFeedEngine& expected,
                           InProcessFeedEngine& actual,
                           absl::Span<const EntityId> entities) {
  const std::vector<std::string> want = DescribeEngine(expected, entities);
  const std::vector<std::string> got = DescribeEngine(actual, entities);
  REQUIRE(want.size() == got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("line ", i);
    REQUIRE(want[i] == got[i]);
  }
}

}  // namespace feedcore::testing

#endif  // FEEDCORE_TESTS_ENGINE_STATE_H_
