// Activity counters through the change stream, change files and snapshots:
// a replica restored from a snapshot taken midway and the source's stream
// holds the same counters and the same change times (ranked walks leave
// out the same entries), and kCountersSet records survive a change file.

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "feedcore/change_file.h"
#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "feedcore/snapshot.h"
#include "feedcore/social.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::MakeActivity;
using testing::NewManualEngine;
using testing::TempPath;

constexpr Micros kStart = 1'000'000'000;
constexpr ActivityId kActivities = 12;

EngineOptions Options(std::shared_ptr<ManualClock> clock) {
  EngineOptions o;
  o.shards = 4;
  o.fanout_threads = 0;
  o.sweep_interval = 0;
  o.clock = std::move(clock);
  return o;
}

std::vector<ChangeRecordPtr> AllRecords(ChangeStream& stream) {
  return stream.NewReader(StreamPosition::TrimHorizon())
      .value()
      ->Read(100000)
      .value();
}

// Every activity's counters (or the error's code), and two pages of one
// ranked walk of reader 1: the second leaves out what changed at or after
// the walk's start.
std::vector<std::string> Describe(InProcessFeedEngine& engine,
                                  const std::string& walk) {
  std::vector<std::string> lines;
  for (ActivityId id = 1; id <= kActivities; ++id) {
    const absl::StatusOr<ActivityCounters> c = engine.GetCounters(id);
    std::string line = absl::StrCat(id, ":");
    if (!c.ok()) {
      absl::StrAppend(&line, absl::StatusCodeToString(c.status().code()));
    } else {
      for (int64_t v : *c) absl::StrAppend(&line, " ", v);
    }
    lines.push_back(line);
  }
  RankedReadOptions read;
  read.limit = 3;
  read.cursor = walk;
  const RankedPage page = engine.ReadRanked(1, read).value();
  std::string line = "ranked:";
  for (const RankedEntry& e : page.entries) {
    absl::StrAppend(&line, " ", e.entry.activity_id);
  }
  absl::StrAppend(&line, page.next_cursor.empty() ? " end" : " more");
  lines.push_back(line);
  return lines;
}

TEST_CASE("counters and their change times reach a replica and a file") {
  TempPath snapshot("ranked-snapshot");
  TempPath changes("ranked-changes");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::shared_ptr<ChangeStream> stream = ChangeStream::Create({}).value();
  EngineOptions options = Options(clock);
  options.change_stream = stream;
  std::unique_ptr<InProcessFeedEngine> source = NewManualEngine(clock, options);
  REQUIRE(source->Follow(1, 2).ok());
  for (ActivityId id = 1; id <= kActivities; ++id) {
    REQUIRE(source->Publish(MakeActivity(id, 2, kStart - 100 * id)).ok());
    REQUIRE(source->IncrementCounter(id, id % 4, 10 * id).ok());
  }
  clock->Advance(5);
  REQUIRE(source->IncrementCounter(3, 1, -7).ok());
  REQUIRE(source->Retract(4).ok());
  const absl::StatusOr<SnapshotInfo> info =
      SaveSnapshot(*source, snapshot.path);
  REQUIRE_MESSAGE(info.ok(), info.status());
  clock->Advance(5);
  REQUIRE(source->IncrementCounter(5, 0, 1000).ok());
  clock->Advance(5);
  // The walk starts now; the changes at this same time come after its
  // first page and are left out of its second, on the source and on any
  // faithful copy.
  RankedReadOptions first;
  first.limit = 3;
  const std::string walk = source->ReadRanked(1, first).value().next_cursor;
  REQUIRE(!walk.empty());
  REQUIRE(source->IncrementCounter(1, 2, 1).ok());
  REQUIRE(source->IncrementCounter(11, 3, -5).ok());

  const std::vector<ChangeRecordPtr> records = AllRecords(*stream);
  size_t counter_records = 0;
  for (const ChangeRecordPtr& r : records) {
    if (r->kind != ChangeKind::kCountersSet) continue;
    ++counter_records;
    CHECK(r->counters.size() == kActivityCounterCount);
  }
  CHECK(counter_records == kActivities + 4);

  const std::vector<std::string> want = Describe(*source, walk);
  CHECK(want.back() != "ranked: end");  // the walk goes on

  SUBCASE("a replica from the snapshot and the stream") {
    absl::StatusOr<std::unique_ptr<Replica>> replica =
        LoadSnapshot(snapshot.path, Options(clock));
    REQUIRE_MESSAGE(replica.ok(), replica.status());
    for (const ChangeRecordPtr& r : records) {
      const absl::Status applied = (*replica)->Apply(*r);
      REQUIRE_MESSAGE(applied.ok(), applied);
    }
    CHECK((*replica)->skipped() > 0);
    CHECK(Describe((*replica)->engine(), walk) == want);
  }
  SUBCASE("the records survive a change file") {
    testing::CheckChangeFileRoundTrip(changes.path, records);
  }
  SUBCASE("a snapshot alone keeps counters and change times") {
    TempPath later("ranked-later");
    REQUIRE(SaveSnapshot(*source, later.path).ok());
    absl::StatusOr<std::unique_ptr<Replica>> replica =
        LoadSnapshot(later.path, Options(clock));
    REQUIRE(replica.ok());
    CHECK(Describe((*replica)->engine(), walk) == want);
  }
}

TEST_CASE("a malformed counters record is refused and changes nothing") {
  TempPath snapshot("ranked-malformed");
  auto clock = std::make_shared<ManualClock>(kStart);
  std::shared_ptr<ChangeStream> stream = ChangeStream::Create({}).value();
  EngineOptions options = Options(clock);
  options.change_stream = stream;
  std::unique_ptr<InProcessFeedEngine> source = NewManualEngine(clock, options);
  REQUIRE(SaveSnapshot(*source, snapshot.path).ok());
  REQUIRE(source->Publish(MakeActivity(1, 2, kStart)).ok());
  REQUIRE(source->IncrementCounter(1, 0, 4).ok());
  const std::vector<ChangeRecordPtr> records = AllRecords(*stream);
  REQUIRE(records.back()->kind == ChangeKind::kCountersSet);
  CHECK(records.back()->entry.ts == kStart);  // the engine clock's time

  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(snapshot.path, Options(clock));
  REQUIRE(replica.ok());
  for (size_t i = 0; i + 1 < records.size(); ++i) {
    REQUIRE((*replica)->Apply(*records[i]).ok());
  }
  ChangeRecord short_list = *records.back();
  short_list.counters.pop_back();
  CHECK((*replica)->Apply(short_list).code() ==
        absl::StatusCode::kInvalidArgument);
  ChangeRecord wrong_shard = *records.back();
  wrong_shard.domain = wrong_shard.domain == 4 ? 5 : 4;
  CHECK((*replica)->Apply(wrong_shard).code() ==
        absl::StatusCode::kInvalidArgument);
  ChangeRecord engine_shard = *records.back();
  engine_shard.domain = 0;
  CHECK((*replica)->Apply(engine_shard).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK((*replica)->engine().GetCounters(1).value() == ActivityCounters{});
  REQUIRE((*replica)->Apply(*records.back()).ok());
  CHECK((*replica)->engine().GetCounters(1).value() ==
        ActivityCounters{4, 0, 0, 0});
}

}  // namespace
}  // namespace feedcore
