// The whole observable state of an engine as lines of text, for checking
// that two engines (a source and a replica restored from its snapshot and
// stream) hold exactly the same thing.
#ifndef FEEDCORE_TESTS_ENGINE_STATE_H_
#define FEEDCORE_TESTS_ENGINE_STATE_H_

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "feedcore/feed_engine.h"
#include "social_test_util.h"
#include "test_util.h"

namespace feedcore::testing {

inline void AppendFeed(const std::vector<StoredEntry>& entries,
                       std::string* line) {
  for (const StoredEntry& e : entries) {
    absl::StrAppend(line, " ", e.ts, "/", e.activity_id, "/", e.actor, "/",
                    e.expires_at, "/", e.payload);
  }
}

// Every entity's timeline, own feed (both hydrated), followers and
// followees, the world feed, and the Stats() figures that describe
// content (not history or allocation).
inline std::vector<std::string> DescribeEngine(
    const FeedEngine& engine, absl::Span<const EntityId> entities) {
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
  std::string world = "world:";
  AppendFeed(World(engine, hydrated), &world);
  lines.push_back(std::move(world));
  const EngineStats s = engine.Stats();
  lines.push_back(absl::StrCat(
      "stats: timelines=", s.timelines, " entries=", s.entries,
      " activities=", s.activities, " retracted=", s.retracted_activities,
      " payload_bytes=", s.payload_bytes, " follow_edges=", s.follow_edges));
  return lines;
}

// Fails the test at the first line where the two engines differ.
inline void CheckSameState(const FeedEngine& expected, const FeedEngine& actual,
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
