#include "server_data.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "member_names_file.h"

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
  absl::StatusOr<std::unique_ptr<FeedEngine>> engine =
      FeedEngine::Create(engine_options);
  if (!engine.ok()) return engine.status();
  data->own_engine_ = *std::move(engine);
  data->engine_ = data->own_engine_.get();
  absl::StatusOr<std::unique_ptr<LeaderboardStore>> store =
      LeaderboardStore::Create(board_options);
  if (!store.ok()) return store.status();
  data->store_ = *std::move(store);
  return data;
}

absl::StatusOr<std::unique_ptr<ServerData>> ServerData::Load(
    const std::string& path, const EngineOptions& engine_options,
    const LeaderboardOptions& board_options) {
  const std::string error_prefix =
      absl::StrCat("cannot load snapshot ", path, ": ");
  std::unique_ptr<ServerData> data(new ServerData());
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      LoadSnapshot(path, engine_options);
  if (!replica.ok()) return Prefixed(replica.status(), error_prefix);
  data->replica_ = *std::move(replica);
  data->engine_ = &data->replica_->engine();

  const std::string names_path = MemberNamesPath(path);
  absl::StatusOr<MemberNamesFile> names = ReadMemberNamesFile(names_path);
  if (absl::IsNotFound(names.status())) {
    return absl::NotFoundError(absl::StrCat(
        error_prefix, "its member-names file ", names_path,
        " is missing (every save writes it next to the snapshot)"));
  }
  if (!names.ok()) return Prefixed(names.status(), error_prefix);
  // The snapshot was read once by LoadSnapshot and is read again here: the
  // library does not report its hash.
  absl::StatusOr<FileDigest> snapshot = DigestFile(path);
  if (!snapshot.ok()) return Prefixed(snapshot.status(), error_prefix);
  if (!(*snapshot == names->snapshot)) {
    return absl::DataLossError(absl::StrCat(
        error_prefix, names_path,
        " was written for another snapshot (the server may have stopped "
        "between writing the two files); restore both files of one save"));
  }
  absl::StatusOr<std::unique_ptr<LeaderboardStore>> store =
      LeaderboardStore::Restore(board_options, &data->replica_->boards(),
                                std::move(names->keys));
  if (!store.ok()) return Prefixed(store.status(), error_prefix);
  data->store_ = *std::move(store);
  return data;
}

absl::Status ServerData::Save(const std::string& path) const {
  absl::StatusOr<std::vector<KeyMemberNames>> names =
      store_->SaveKeys([&](const LeaderboardRegistry& registry) {
        return SaveSnapshot(*engine_, path, &registry).status();
      });
  if (!names.ok()) return names.status();
  MemberNamesFile file;
  file.keys = *std::move(names);
  absl::StatusOr<FileDigest> snapshot = DigestFile(path);
  if (!snapshot.ok()) return snapshot.status();
  file.snapshot = *snapshot;
  return WriteMemberNamesFile(MemberNamesPath(path), file);
}

}  // namespace feedcore::server
