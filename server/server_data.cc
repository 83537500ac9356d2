#include "server_data.h"

#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "member_names_file.h"
#include "save_files.h"

namespace feedcore::server {
namespace {

absl::Status Prefixed(const absl::Status& status, absl::string_view prefix) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

}  // namespace

ServerData::~ServerData() = default;

absl::StatusOr<std::unique_ptr<ServerData>> ServerData::CreateEmpty(
    const EngineOptions& engine_options,
    const LeaderboardOptions& board_options) {
  std::unique_ptr<ServerData> data(new ServerData());
  absl::StatusOr<std::unique_ptr<InProcessFeedEngine>> engine =
      FeedEngine::Create(engine_options);
  if (!engine.ok()) return engine.status();
  data->own_engine_ = *std::move(engine);
  data->engine_ = data->own_engine_.get();
  data->own_names_ =
      std::make_unique<NameRegistry>(engine_options.change_stream);
  data->names_ = data->own_names_.get();
  absl::StatusOr<std::unique_ptr<LeaderboardStore>> store =
      LeaderboardStore::Create(board_options);
  if (!store.ok()) return store.status();
  data->store_ = *std::move(store);
  return data;
}

absl::StatusOr<std::unique_ptr<ServerData>> ServerData::OpenAppendOnly(
    const AppendOnlyOptions& options, const EngineOptions& engine_options,
    const LeaderboardOptions& board_options) {
  absl::StatusOr<AppendOnlyFiles::Opened> opened =
      AppendOnlyFiles::Open(options, engine_options, board_options);
  if (!opened.ok()) return opened.status();
  std::unique_ptr<ServerData> data(new ServerData());
  data->append_only_ = std::move(opened->files);
  data->engine_ = &data->append_only_->store().engine();
  data->names_ = &data->append_only_->store().names();
  data->store_ = std::move(opened->boards);
  return data;
}

absl::StatusOr<std::unique_ptr<ServerData>> ServerData::Load(
    const std::string& path, const EngineOptions& engine_options,
    const LeaderboardOptions& board_options) {
  const std::string error_prefix =
      absl::StrCat("cannot load snapshot ", path, ": ");
  // The manifest first: it says which snapshot file is this save's.
  absl::StatusOr<MemberNamesFile> names = ReadMemberNamesFile(path);
  if (!names.ok()) return Prefixed(names.status(), error_prefix);
  const std::string snapshot_path = SnapshotPathOf(path, names->generation);
  // Read once here and again by LoadSnapshot: the library does not report
  // the hash of what it loaded.
  absl::StatusOr<FileDigest> snapshot = DigestFile(snapshot_path);
  if (absl::IsNotFound(snapshot.status())) {
    return absl::DataLossError(absl::StrCat(error_prefix, "the snapshot file ",
                                            snapshot_path,
                                            " that the save names is missing"));
  }
  if (!snapshot.ok()) return Prefixed(snapshot.status(), error_prefix);
  if (!(*snapshot == names->snapshot)) {
    return absl::DataLossError(absl::StrCat(
        error_prefix, "the snapshot file ", snapshot_path, " has ",
        snapshot->bytes, " bytes and not the ", names->snapshot.bytes,
        " bytes with the hash the save recorded: it was damaged or "
        "replaced after the save"));
  }
  std::unique_ptr<ServerData> data(new ServerData());
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(snapshot_path, engine_options);
  if (!replica.ok()) return Prefixed(replica.status(), error_prefix);
  data->replica_ = *std::move(replica);
  data->engine_ = &data->replica_->engine();
  data->names_ = &data->replica_->names();
  absl::StatusOr<std::unique_ptr<LeaderboardStore>> store =
      LeaderboardStore::Restore(board_options, &data->replica_->boards(),
                                std::move(names->keys));
  if (!store.ok()) return Prefixed(store.status(), error_prefix);
  data->store_ = *std::move(store);
  return data;
}

absl::Status ServerData::Save(const std::string& path) const {
  // Snapshots that a save killed before its commit left behind: only the
  // committed one is kept, so a run of such crashes cannot fill the disk.
  // An unreadable manifest deletes nothing.
  if (absl::StatusOr<MemberNamesFile> committed = ReadMemberNamesFile(path);
      committed.ok()) {
    RemoveOtherSnapshots(path, committed->generation);
  }
  absl::StatusOr<uint64_t> generation = NextSnapshotGeneration(path);
  if (!generation.ok()) return generation.status();
  const std::string snapshot_path = SnapshotPathOf(path, *generation);
  MemberNamesFile manifest;
  manifest.generation = *generation;
  absl::StatusOr<std::vector<KeyMemberNames>> names =
      store_->SaveKeys([&](const LeaderboardRegistry& registry) {
        return SaveSnapshot(*engine_, snapshot_path, &registry, names_)
            .status();
      });
  if (!names.ok()) return names.status();
  manifest.keys = *std::move(names);
  absl::StatusOr<FileDigest> snapshot = DigestFile(snapshot_path);
  absl::Status status = snapshot.status();
  if (status.ok()) {
    manifest.snapshot = *snapshot;
    // The commit point: until this rename the previous manifest, and the
    // snapshot it names, stand.
    status = WriteMemberNamesFile(path, manifest);
  }
  if (!status.ok()) {
    // No manifest names it, so it is only in the way.
    std::remove(snapshot_path.c_str());
    return status;
  }
  RemoveOtherSnapshots(path, *generation);
  return absl::OkStatus();
}

}  // namespace feedcore::server
