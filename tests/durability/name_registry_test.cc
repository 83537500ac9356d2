// Tests of NameRegistry: names get ids from kFirstNamedEntityId up, once
// each, bad names change nothing, concurrent resolvers agree, and with a
// DurableStore or a snapshot every assignment comes back with its id.
#include "feedcore/name_registry.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "feedcore/change_stream.h"
#include "feedcore/durable_store.h"
#include "feedcore/snapshot.h"
#include "support/file_test_util.h"

namespace feedcore {
namespace {

using testing::TempDir;

DurabilityOptions Durability(const std::string& directory) {
  DurabilityOptions options;
  options.directory = directory;
  options.fsync = FsyncPolicy::kAlways;
  options.segment_bytes = kMinLogSegmentBytes;
  options.compact_after_bytes = 0;
  return options;
}

EngineOptions Options() {
  EngineOptions options;
  options.shards = 2;
  options.sweep_interval = 0;
  return options;
}

std::unique_ptr<DurableStore> Open(const std::string& directory) {
  absl::StatusOr<std::unique_ptr<DurableStore>> store =
      DurableStore::Open(Durability(directory), Options());
  REQUIRE_MESSAGE(store.ok(), store.status());
  return *std::move(store);
}

TEST_CASE("names get ids in order, once each") {
  NameRegistry names;
  CHECK(names.Resolve("user:alice").value() == kFirstNamedEntityId);
  CHECK(names.Resolve("user:bob").value() == kFirstNamedEntityId + 1);
  CHECK(names.Resolve("user:alice").value() == kFirstNamedEntityId);
  CHECK(names.size() == 2);
  CHECK(names.Find("user:bob").value() == kFirstNamedEntityId + 1);
  CHECK(names.NameOf(kFirstNamedEntityId).value() == "user:alice");
  // Binary-safe: a NUL inside a name is part of it.
  const std::string with_nul("a\0b", 3);
  CHECK(names.Resolve(with_nul).value() == kFirstNamedEntityId + 2);
  CHECK(names.NameOf(kFirstNamedEntityId + 2).value() == with_nul);
  CHECK(names.Find("a").status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("unknown names and ids are NotFound") {
  NameRegistry names;
  absl::StatusOr<EntityId> missing = names.Find("nobody");
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(missing.status().message()) ==
        "no id has the name \"nobody\"");
  CHECK(names.NameOf(7).status().code() == absl::StatusCode::kNotFound);
  CHECK(names.NameOf(kFirstNamedEntityId).status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(names.size() == 0);
}

TEST_CASE("bad names are refused and change nothing") {
  NameRegistry names;
  absl::StatusOr<EntityId> empty = names.Resolve("");
  CHECK(empty.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(empty.status().message()) == "a name must not be empty");
  const std::string too_long(kMaxEntityNameBytes + 1, 'x');
  absl::StatusOr<EntityId> long_name = names.Resolve(too_long);
  CHECK(long_name.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(long_name.status().message()) ==
        absl::StrCat("a name is at most ", kMaxEntityNameBytes,
                     " bytes; this one has ", kMaxEntityNameBytes + 1));
  CHECK(names.Find("").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(names.size() == 0);
  // The longest name is taken, and the first id is still the first.
  CHECK(names.Resolve(std::string(kMaxEntityNameBytes, 'x')).value() ==
        kFirstNamedEntityId);
}

TEST_CASE("concurrent resolvers agree on every id") {
  NameRegistry names;
  constexpr int kThreads = 4;
  constexpr int kNames = 500;
  std::vector<std::vector<EntityId>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&names, &seen, t] {
      for (int i = 0; i < kNames; ++i) {
        // Each thread walks the names in its own order.
        const int n = (i * (2 * t + 1)) % kNames;
        seen[t].push_back(names.Resolve(absl::StrCat("n", n)).value());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(names.size() == kNames);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kNames; ++i) {
      const int n = (i * (2 * t + 1)) % kNames;
      CHECK(names.Find(absl::StrCat("n", n)).value() == seen[t][i]);
    }
  }
  for (int i = 0; i < kNames; ++i) {
    const EntityId id = kFirstNamedEntityId + i;
    const std::string name = names.NameOf(id).value();
    CHECK(names.Find(name).value() == id);
  }
}

TEST_CASE("a registry with a stream records each new name once") {
  std::shared_ptr<ChangeStream> stream = ChangeStream::Create({}).value();
  NameRegistry names(stream);
  auto reader = stream->NewReader(StreamPosition::TrimHorizon()).value();
  REQUIRE(names.Resolve("alice").ok());
  REQUIRE(names.Resolve("alice").ok());
  REQUIRE(names.Resolve("bob").ok());
  std::vector<ChangeRecordPtr> records = reader->Read(10).value();
  REQUIRE(records.size() == 2);
  CHECK(records[0]->kind == ChangeKind::kNameAssign);
  CHECK(records[0]->entity == kFirstNamedEntityId);
  CHECK(records[0]->name == "alice");
  CHECK(records[1]->name == "bob");
}

TEST_CASE("a snapshot holds the names, and a replica catches up") {
  TempDir dir("names-snapshot");
  std::shared_ptr<ChangeStream> stream = ChangeStream::Create({}).value();
  EngineOptions options = Options();
  options.change_stream = stream;
  auto engine = FeedEngine::Create(options).value();
  NameRegistry names(stream);
  REQUIRE(names.Resolve("alice").ok());
  REQUIRE(names.Resolve("bob").ok());
  const std::string path = dir.File("snap");
  SnapshotInfo info = SaveSnapshot(*engine, path, nullptr, &names).value();
  REQUIRE(names.Resolve("carol").ok());

  std::unique_ptr<Replica> replica = LoadSnapshot(path, Options()).value();
  CHECK(replica->names().size() == 2);
  CHECK(replica->names().Find("bob").value() == kFirstNamedEntityId + 1);
  CHECK(replica->names().Find("carol").status().code() ==
        absl::StatusCode::kNotFound);
  auto reader =
      stream->NewReader(StreamPosition::AtSequence(info.sequence)).value();
  const std::vector<ChangeRecordPtr> records = reader->Read(100).value();
  for (const ChangeRecordPtr& record : records) {
    REQUIRE(replica->Apply(*record).ok());
  }
  CHECK(replica->names().Find("carol").value() == kFirstNamedEntityId + 2);
  // The replica goes on numbering after the source's ids.
  CHECK(replica->names().Resolve("dave").value() == kFirstNamedEntityId + 3);

  // A registry of another stream does not go into the engine's snapshot.
  NameRegistry other;
  absl::StatusOr<SnapshotInfo> mixed =
      SaveSnapshot(*engine, dir.File("mixed"), nullptr, &other);
  CHECK(mixed.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("a replica refuses a record giving a name a second id") {
  TempDir dir("names-conflict");
  std::shared_ptr<ChangeStream> stream = ChangeStream::Create({}).value();
  EngineOptions options = Options();
  options.change_stream = stream;
  auto engine = FeedEngine::Create(options).value();
  NameRegistry names(stream);
  REQUIRE(names.Resolve("alice").ok());
  const std::string path = dir.File("snap");
  SnapshotInfo info = SaveSnapshot(*engine, path, nullptr, &names).value();
  std::unique_ptr<Replica> replica = LoadSnapshot(path, Options()).value();
  ChangeRecord record;
  record.sequence = info.sequence;
  record.kind = ChangeKind::kNameAssign;
  record.entity = kFirstNamedEntityId + 5;
  record.name = "alice";
  absl::Status status = replica->Apply(record);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(replica->names().Find("alice").value() == kFirstNamedEntityId);
}

TEST_CASE("a durable store's names survive reopening and compaction") {
  TempDir dir("names-durable");
  {
    std::unique_ptr<DurableStore> store = Open(dir.path());
    CHECK(store->names().Resolve("alice").value() == kFirstNamedEntityId);
    CHECK(store->names().Resolve("bob").value() == kFirstNamedEntityId + 1);
  }
  {
    // From the log.
    std::unique_ptr<DurableStore> store = Open(dir.path());
    CHECK(store->names().size() == 2);
    CHECK(store->names().Find("bob").value() == kFirstNamedEntityId + 1);
    CHECK(store->names().Resolve("carol").value() == kFirstNamedEntityId + 2);
    REQUIRE(store->Compact().ok());
    CHECK(store->names().Resolve("dave").value() == kFirstNamedEntityId + 3);
  }
  {
    // From the snapshot and the log after it.
    std::unique_ptr<DurableStore> store = Open(dir.path());
    CHECK(store->names().size() == 4);
    CHECK(store->names().NameOf(kFirstNamedEntityId + 2).value() == "carol");
    CHECK(store->names().Find("dave").value() == kFirstNamedEntityId + 3);
    // Ids are never handed out twice.
    CHECK(store->names().Resolve("erin").value() == kFirstNamedEntityId + 4);
  }
}

}  // namespace
}  // namespace feedcore
