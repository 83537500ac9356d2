// ServerData: what feedcore-server serves and saves. It owns the feed
// engine, the entity names (NameRegistry), the leaderboard registry and
// the sorted-set keys over it
// (LeaderboardStore), either new and empty or loaded from a snapshot, and
// saves them all as one unit (save_files.h): the library's snapshot
// (feeds, graph, activities, entity names and every board with its scores
// and tie order) to a file of its own, then the manifest at PATH that commits
// it with the keys' member names (member_names_file.h).
//
// Thread-safe: Save may run while connections use the engine and store.
#ifndef FEEDCORE_SERVER_SERVER_DATA_H_
#define FEEDCORE_SERVER_SERVER_DATA_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "append_only.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/name_registry.h"
#include "feedcore/options.h"
#include "feedcore/snapshot.h"
#include "leaderboard_store.h"

namespace feedcore::server {

class ServerData {
 public:
  // A new engine made with `engine_options` and an empty store whose new
  // keys get `board_options`. The options' own errors (InvalidArgument).
  static absl::StatusOr<std::unique_ptr<ServerData>> CreateEmpty(
      const EngineOptions& engine_options,
      const LeaderboardOptions& board_options);

  // Loads the save whose manifest is at `path` into a new engine made with
  // `engine_options` (LoadSnapshot's rules: shards 0 takes the
  // snapshot's). Loaded keys keep the options they were saved with; keys
  // created later get `board_options`. Fails, naming the file: NotFound
  // for a missing manifest; InvalidArgument for a file that is not a
  // manifest or of another version, and the library's load errors;
  // DataLoss for a damaged manifest, a snapshot file that is missing or
  // is not the one the manifest recorded, or boards and names that do not
  // match. Nothing is kept from a failed load.
  static absl::StatusOr<std::unique_ptr<ServerData>> Load(
      const std::string& path, const EngineOptions& engine_options,
      const LeaderboardOptions& board_options);

  // The engine and keys of an append-only directory (append_only.h),
  // recovered from what it holds. AppendOnlyFiles::Open's errors.
  static absl::StatusOr<std::unique_ptr<ServerData>> OpenAppendOnly(
      const AppendOnlyOptions& options, const EngineOptions& engine_options,
      const LeaderboardOptions& board_options);

  ~ServerData();

  InProcessFeedEngine& engine() { return *engine_; }
  LeaderboardStore& boards() { return *store_; }
  // Logged with the rest under --appendonly, saved in every snapshot.
  NameRegistry& names() { return *names_; }
  // Null unless opened with OpenAppendOnly.
  AppendOnlyFiles* append_only() { return append_only_.get(); }

  // Saves to `path` (see above); a crash or an error leaves the previous
  // save loadable. Errors carry the system's message. Without a
  // change stream, each engine shard and each board partition is copied
  // consistently, and the whole is one instant only if no writes run
  // meanwhile (see feedcore/snapshot.h).
  absl::Status Save(const std::string& path) const;

 private:
  ServerData() = default;

  // Exactly one of these owns the engine and the registry.
  std::unique_ptr<AppendOnlyFiles> append_only_;
  std::unique_ptr<Replica> replica_;
  std::unique_ptr<InProcessFeedEngine> own_engine_;
  std::unique_ptr<NameRegistry> own_names_;

  InProcessFeedEngine* engine_ = nullptr;
  NameRegistry* names_ = nullptr;
  // Declared last, so destroyed first: it refers to the replica's registry.
  std::unique_ptr<LeaderboardStore> store_;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SERVER_DATA_H_
