// Mute and block through the change stream and snapshots: a replica fed by
// the stream, and an engine loaded from a snapshot taken with mutes and
// blocks in force, hold the same lists and behave the same afterwards
// (a publish of a muted actor skips the muter in both, Follow across a
// block fails in both, an expiring mute ends at the same time in both).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "feedcore/change_stream.h"
#include "feedcore/snapshot.h"
#include "support/engine_state.h"
#include "support/file_test_util.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using testing::CheckSameState;
using testing::MakeActivity;
using testing::NewManualEngine;
using testing::TempPath;

constexpr Micros kStart = 1'000'000'000;
constexpr EntityId kEntities = 24;

EngineOptions Options(std::shared_ptr<ChangeStream> stream) {
  EngineOptions o;
  o.shards = 4;
  o.hybrid_fanout_threshold = 5;
  o.fanout_threads = 0;
  o.change_stream = std::move(stream);
  return o;
}

std::vector<EntityId> Universe() {
  std::vector<EntityId> ids;
  for (EntityId id = 1; id <= kEntities; ++id) ids.push_back(id);
  return ids;
}

// Every entity's blocked and muted lists, one line each.
std::vector<std::string> DescribeRelations(const InProcessFeedEngine& engine) {
  std::vector<std::string> lines;
  ListOptions list;
  list.limit = 100;
  for (const EntityId id : Universe()) {
    std::string line = absl::StrCat("blocked ", id, ":");
    const absl::StatusOr<EntityPage> blocked = engine.Blocked(id, list);
    REQUIRE_MESSAGE(blocked.ok(), blocked.status());
    for (const EntityId b : blocked->ids) absl::StrAppend(&line, " ", b);
    absl::StrAppend(&line, " muted:");
    const absl::StatusOr<MutedPage> muted = engine.Muted(id, list);
    REQUIRE_MESSAGE(muted.ok(), muted.status());
    for (const MutedActor& m : muted->actors) {
      absl::StrAppend(&line, " ", m.actor, "/", m.notifications, "/",
                      m.expires_at.value_or(0));
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

void CheckSame(InProcessFeedEngine& source, InProcessFeedEngine& copy) {
  CheckSameState(source, copy, Universe());
  CHECK(DescribeRelations(source) == DescribeRelations(copy));
}

// Follows (actor 1 merged at read), publishes with notifications, and
// every relation call: mutes on both sides of a shard boundary and within
// one shard, with and without notifications and expiry, blocks, and their
// undoing (of a merged actor too).
void Populate(InProcessFeedEngine& e, ManualClock& clock) {
  for (EntityId f = 2; f <= 12; ++f) REQUIRE(e.Follow(f, 1).ok());
  for (EntityId f = 3; f <= 9; ++f) REQUIRE(e.Follow(f, 13).ok());
  for (EntityId f = 13; f <= 16; ++f) REQUIRE(e.Follow(f, 2).ok());
  ActivityId id = 1;
  auto publish = [&](EntityId actor) {
    PublishOptions notify;
    notify.notify = {3, 4, 14};
    REQUIRE(e.Publish(MakeActivity(id, actor, kStart + id), notify).ok());
    ++id;
  };
  for (int round = 0; round < 5; ++round) {
    for (EntityId actor : {1, 2, 13}) publish(actor);
  }
  MuteOptions notifications;
  notifications.notifications = true;
  MuteOptions expiring;
  expiring.expires_at = clock.Now() + 100;
  for (EntityId muter = 3; muter <= 9; ++muter) {
    REQUIRE(e.Mute(muter, 13, muter % 2 == 0 ? notifications : expiring).ok());
  }
  REQUIRE(e.Mute(4, 1, notifications).ok());
  REQUIRE(e.Mute(14, 2).ok());
  REQUIRE(e.Mute(15, 2).ok());
  REQUIRE(e.Unmute(15, 2).ok());
  REQUIRE(e.Block(3, 1).ok());
  REQUIRE(e.Block(14, 2).ok());
  REQUIRE(e.Block(16, 2).ok());
  REQUIRE(e.Unblock(16, 2).ok());
  REQUIRE(e.Block(2, 20).ok());
  for (int round = 0; round < 3; ++round) {
    for (EntityId actor : {1, 2, 13}) publish(actor);
  }
  // Unmuting merged actor 1 moves entity 5's merge boundary (kMergeAdd).
  REQUIRE(e.Mute(5, 1).ok());
  publish(1);
  RestoreOptions restore;
  restore.backfill = 2;
  REQUIRE(e.Unmute(5, 1, restore).ok());
}

// What happens after the copy was made, each step on both engines (they
// share the clock).
void Continue(InProcessFeedEngine& source, InProcessFeedEngine& copy, ManualClock& clock) {
  for (InProcessFeedEngine* e : {&source, &copy}) {
    REQUIRE(e->Publish(MakeActivity(900, 13, kStart + 900)).ok());
    CHECK(absl::IsFailedPrecondition(e->Follow(1, 3).status()));
    CHECK(absl::IsFailedPrecondition(e->Follow(20, 2).status()));
  }
  clock.Advance(100);  // the expiring mutes end
  RestoreOptions restore;
  restore.backfill = 3;
  for (InProcessFeedEngine* e : {&source, &copy}) {
    REQUIRE(e->Publish(MakeActivity(901, 13, kStart + 901)).ok());
    REQUIRE(e->Unmute(4, 13, restore).ok());
    REQUIRE(e->Unblock(3, 1).ok());
    REQUIRE(e->Follow(3, 1).ok());
  }
}

TEST_CASE("a replica fed by the stream holds the same mutes and blocks") {
  auto clock = std::make_shared<ManualClock>(kStart);
  std::shared_ptr<ChangeStream> stream = testing::NewManualStream(clock);
  std::unique_ptr<InProcessFeedEngine> source = NewManualEngine(clock, Options(stream));
  TempPath empty("relations-empty");
  REQUIRE(SaveSnapshot(*source, empty.path).ok());
  Populate(*source, *clock);

  EngineOptions options = Options(nullptr);
  options.clock = clock;
  options.sweep_interval = 0;
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(empty.path, options);
  REQUIRE_MESSAGE(replica.ok(), replica.status());
  auto reader = stream->NewReader(StreamPosition::TrimHorizon()).value();
  size_t relation_records = 0;
  for (;;) {
    const std::vector<ChangeRecordPtr> batch = reader->Read(1000).value();
    if (batch.empty()) break;
    for (const ChangeRecordPtr& record : batch) {
      relation_records += record->kind >= ChangeKind::kBlockAdd &&
                          record->kind <= ChangeKind::kMuteRemove;
      const absl::Status status = (*replica)->Apply(*record);
      REQUIRE_MESSAGE(status.ok(), status);
    }
  }
  CHECK(relation_records > 0);
  InProcessFeedEngine& copy = (*replica)->engine();
  CheckSame(*source, copy);
  Continue(*source, copy, *clock);
  CheckSame(*source, copy);
}

TEST_CASE("a snapshot keeps mutes and blocks, both sides of each mute") {
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> source = NewManualEngine(clock, Options(nullptr));
  Populate(*source, *clock);
  TempPath file("relations");
  REQUIRE(SaveSnapshot(*source, file.path).ok());
  EngineOptions options = Options(nullptr);
  options.clock = clock;
  options.sweep_interval = 0;
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(file.path, options);
  REQUIRE_MESSAGE(replica.ok(), replica.status());
  InProcessFeedEngine& copy = (*replica)->engine();
  CheckSame(*source, copy);
  Continue(*source, copy, *clock);
  CheckSame(*source, copy);
}

TEST_CASE("malformed relation records are refused") {
  auto clock = std::make_shared<ManualClock>(kStart);
  std::unique_ptr<InProcessFeedEngine> source =
      NewManualEngine(clock, Options(testing::NewManualStream(clock)));
  TempPath file("relations-malformed");
  REQUIRE(SaveSnapshot(*source, file.path).ok());
  // Each record is offered to a fresh replica, first in its sequence.
  auto apply = [&](ChangeRecord record) {
    EngineOptions options = Options(nullptr);
    options.clock = clock;
    options.sweep_interval = 0;
    std::unique_ptr<Replica> replica = LoadSnapshot(file.path, options).value();
    record.sequence = replica->sequence();
    return replica->Apply(record);
  };
  ChangeRecord block;
  block.kind = ChangeKind::kBlockAdd;
  block.entity = 5;
  block.other = 6;
  // A block lives on the blocker's side only: one domain of the four.
  size_t accepted = 0;
  for (uint32_t domain = 0; domain < 4; ++domain) {
    block.domain = domain;
    const absl::Status status = apply(block);
    if (status.ok()) {
      ++accepted;
    } else {
      CHECK_MESSAGE(absl::IsInvalidArgument(status), status);
    }
  }
  CHECK(accepted == 1);
  ChangeRecord self = block;
  self.other = 5;
  for (uint32_t domain = 0; domain < 4; ++domain) {
    self.domain = domain;
    CHECK(absl::IsInvalidArgument(apply(self)));
  }
  ChangeRecord expiring_block = block;
  expiring_block.entry.expires_at = 7;
  for (uint32_t domain = 0; domain < 4; ++domain) {
    expiring_block.domain = domain;
    CHECK(absl::IsInvalidArgument(apply(expiring_block)));
  }
}

}  // namespace
}  // namespace feedcore
