// The files of one save at PATH (SAVE, BGSAVE, --snapshot_on_exit):
//
//   PATH                  the manifest (member_names_file.h): the member
//                         names and the generation, length and hash of
//   PATH.<gen>.fcsnap     the library snapshot it commits
//
// A save writes the snapshot of a new generation (the library writes it
// to a temporary name, syncs it and renames it), then replaces the
// manifest atomically (temporary file, fsync, rename, directory fsync),
// and only then deletes the snapshots of older generations (a save also
// starts by deleting those its manifest does not name: what an earlier
// save killed before its commit left). Until the
// manifest's rename the old manifest names the old snapshot, which is
// still there; after it the new one names the new snapshot, which was
// durable before the manifest was written. So a crash at any moment
// leaves a manifest and the snapshot it names: the previous save or the
// new one, never a mix.
//
// Thread-compatible: callers run one save per PATH at a time
// (SnapshotSaver).
#ifndef FEEDCORE_SERVER_SAVE_FILES_H_
#define FEEDCORE_SERVER_SAVE_FILES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace feedcore::server {

// `manifest_path` + "." + generation + ".fcsnap".
std::string SnapshotPathOf(const std::string& manifest_path,
                           uint64_t generation);

// One more than the highest generation of a snapshot file beside
// `manifest_path` (1 if there is none), so a new save never overwrites a
// file an existing manifest may name. Unavailable if the directory cannot
// be listed (NotFound if it does not exist).
absl::StatusOr<uint64_t> NextSnapshotGeneration(
    const std::string& manifest_path);

// Deletes every snapshot file of `manifest_path` (and a temporary one left
// by a crash) except generation `keep`. Best effort: a file that cannot be
// deleted is left for the next save to try again.
void RemoveOtherSnapshots(const std::string& manifest_path, uint64_t keep);

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_SAVE_FILES_H_
