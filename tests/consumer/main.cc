// Smallest program that embeds feedcore through its installed (or
// add_subdirectory) package: create an engine, insert, read back, check.
// Exits 0 on success and prints what went wrong otherwise.

#include <cstdio>
#include <memory>

#include "feedcore/feedcore.h"

int main() {
  auto clock = std::make_shared<feedcore::ManualClock>(1'000'000);
  feedcore::EngineOptions options;
  options.clock = clock;
  options.sweep_interval = 0;
  auto engine = feedcore::FeedEngine::Create(options);
  if (!engine.ok()) {
    std::fprintf(stderr, "Create: %s\n", engine.status().ToString().c_str());
    return 1;
  }

  const feedcore::EntityId owners[] = {1, 2};
  auto inserted =
      (*engine)->InsertFanout(owners, {.ts = 10, .activity_id = 7, .actor = 9});
  if (!inserted.ok()) {
    std::fprintf(stderr, "InsertFanout: %s\n",
                 inserted.status().ToString().c_str());
    return 1;
  }
  if (inserted->inserted != 2) {
    std::fprintf(stderr, "InsertFanout inserted %zu entries, expected 2\n",
                 inserted->inserted);
    return 1;
  }

  auto page = (*engine)->ReadTimeline(2, feedcore::ReadOptions{});
  if (!page.ok()) {
    std::fprintf(stderr, "ReadTimeline: %s\n",
                 page.status().ToString().c_str());
    return 1;
  }
  if (page->entries.size() != 1 || page->entries[0].activity_id != 7 ||
      page->entries[0].actor != 9 || !page->next_cursor.empty()) {
    std::fprintf(stderr, "ReadTimeline returned unexpected entries\n");
    return 1;
  }

  std::printf("feedcore consumer: ok\n");
  return 0;
}
