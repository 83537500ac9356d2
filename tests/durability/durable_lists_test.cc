// Lists of accounts and reposts in a DurableStore: what a reopened store
// recovers, from the log and then from a compaction's snapshot, equals
// what the store held: each list's settings and members, the home view an
// exclusive list and the repost window leave, and a list's feed.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "feedcore/durable_store.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"

namespace feedcore {
namespace {

using testing::IdsOf;
using testing::MakeActivity;

constexpr Micros kStart = 1'000'000'000;
constexpr ActivityKind kRepost = 1;

EngineOptions Options(std::shared_ptr<ManualClock> clock) {
  EngineOptions options;
  options.shards = 4;
  options.sweep_interval = 0;
  options.reposts.window = 3;
  options.reposts.kinds = KindFilter::Only({kRepost});
  options.clock = std::move(clock);
  return options;
}

std::unique_ptr<DurableStore> Open(const std::string& directory,
                                   std::shared_ptr<ManualClock> clock) {
  DurabilityOptions durability;
  durability.directory = directory;
  durability.fsync = FsyncPolicy::kAlways;
  durability.compact_after_bytes = 0;
  absl::StatusOr<std::unique_ptr<DurableStore>> store =
      DurableStore::Open(durability, Options(std::move(clock)));
  REQUIRE_MESSAGE(store.ok(), store.status());
  return *std::move(store);
}

// Lists, list feeds and home timelines of entities 1..3, as text.
std::vector<std::string> State(InProcessFeedEngine& engine) {
  std::vector<std::string> out;
  for (EntityId owner = 1; owner <= 3; ++owner) {
    const std::vector<AccountList> lists = engine.Lists(owner).value();
    for (const AccountList& list : lists) {
      out.push_back(absl::StrCat(
          owner, " list ", list.id, " ", list.settings.name, " ",
          list.settings.exclusive ? "exclusive" : "", " ", list.members));
      const Page page = engine.ReadList(owner, list.id, {}).value();
      for (const StoredEntry& e : page.entries) {
        out.push_back(absl::StrCat("  ", e.activity_id));
      }
    }
    for (const ActivityId id : IdsOf(testing::Timeline(engine, owner))) {
      out.push_back(absl::StrCat(owner, " home ", id));
    }
  }
  return out;
}

TEST_CASE("lists and reposts survive reopening, from the log and a snapshot") {
  testing::TempDir dir("durable-lists");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::vector<std::string> want;
  {
    std::unique_ptr<DurableStore> store = Open(dir.path(), clock);
    InProcessFeedEngine& engine = store->engine();
    REQUIRE(engine.Follow(1, 4).ok());
    REQUIRE(engine.Follow(1, 5).ok());
    REQUIRE(engine.Follow(2, 5).ok());
    REQUIRE(engine.Publish(MakeActivity(1, 4, kStart + 1)).ok());
    Activity repost = MakeActivity(2, 5, kStart + 2);
    repost.kind = kRepost;
    repost.repost_of = 1;
    REQUIRE(engine.Publish(repost).ok());
    REQUIRE(engine.Publish(MakeActivity(3, 5, kStart + 3)).ok());
    REQUIRE(engine.SetList(1, 9, {"news", true}).value());
    REQUIRE(engine.AddToList(1, 9, 5).value());
    REQUIRE(engine.SetList(2, 9, {"all", false}).value());
    REQUIRE(engine.AddToList(2, 9, 4).value());
    REQUIRE(engine.AddToList(2, 9, 5).value());
    want = State(engine);
    // 1's home leaves out 5 (exclusive); 2's leaves out the repost.
    CHECK(IdsOf(testing::Timeline(engine, 1)) == std::vector<ActivityId>{1});
    CHECK(IdsOf(testing::Timeline(engine, 2)) == std::vector<ActivityId>{3, 2});
  }
  {
    std::unique_ptr<DurableStore> store = Open(dir.path(), clock);
    CHECK(State(store->engine()) == want);
    REQUIRE(store->Compact().ok());
    REQUIRE(store->engine().RemoveFromList(2, 9, 4).value());
    want = State(store->engine());
  }
  std::unique_ptr<DurableStore> store = Open(dir.path(), clock);
  CHECK(State(store->engine()) == want);
}

}  // namespace
}  // namespace feedcore
